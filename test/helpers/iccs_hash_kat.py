#!/usr/bin/env python3
"""An independent model of the ICCS hash KAT generator (KAT_CryptHash.c with its drng.c) for SM3.

Written from the descriptions only, not from this repository's C code: the DRNG is the SP 800-90A
Hash_DRBG with SM3 and seedlen 440 (instantiate with the 64-byte seed; generate any bit count,
ceil(bits/8) bytes whose unused low bits are zero, one state update per call), seeded with the
file's 8-character name repeated 8 times; the files' layouts as docs/method.md#hash-functions gives
them. Digests: OpenSSL's SM3 (hashlib) for whole bytes, and a bit-string SM3 from GB/T 32905 here
for partial bytes.

  iccs_hash_kat.py KAT_2_12|KAT_2_23|KAT_Loop [LIMIT]   prints the file's text
  iccs_hash_kat.py digest FILE [LIMIT]                  prints its canonical strict SHA-256
"""
import hashlib
import sys

SEEDLEN_BITS = 440
MOD = 1 << SEEDLEN_BITS


def sm3(data: bytes) -> bytes:
    return hashlib.new("sm3", data).digest()


def hash_df(data: bytes, bits: int) -> bytes:
    out = b""
    counter = 1
    while len(out) * 8 < bits:
        out += sm3(bytes([counter]) + bits.to_bytes(4, "big") + data)
        counter += 1
    return out[: bits // 8]


class HashDrbg:
    def __init__(self, seed: bytes):
        self.v = int.from_bytes(hash_df(seed, SEEDLEN_BITS), "big")
        self.c = int.from_bytes(hash_df(b"\x00" + self.v.to_bytes(55, "big"), SEEDLEN_BITS), "big")
        self.counter = 1

    def bits(self, n: int) -> bytes:
        nbytes = (n + 7) // 8
        out = b""
        data = self.v
        while len(out) < nbytes:
            out += sm3(data.to_bytes(55, "big"))
            data = (data + 1) % MOD
        out = bytearray(out[:nbytes])
        if n % 8:
            out[-1] &= (0xFF << (8 - n % 8)) & 0xFF
        h = int.from_bytes(sm3(b"\x03" + self.v.to_bytes(55, "big")), "big")
        self.v = (self.v + h + self.c + self.counter) % MOD
        self.counter += 1
        return bytes(out)


# ---- SM3 of a bit string (GB/T 32905), for the partial-byte messages of KAT_2_12 ----
IV = [0x7380166F, 0x4914B2B9, 0x172442D7, 0xDA8A0600, 0xA96F30BC, 0x163138AA, 0xE38DEE4D, 0xB0FB0E4E]
M32 = 0xFFFFFFFF


def rotl(x, n):
    n %= 32
    return ((x << n) | (x >> (32 - n))) & M32


def compress(v, block):
    w = [int.from_bytes(block[4 * i : 4 * i + 4], "big") for i in range(16)]
    for j in range(16, 68):
        x = w[j - 16] ^ w[j - 9] ^ rotl(w[j - 3], 15)
        w.append((x ^ rotl(x, 15) ^ rotl(x, 23)) ^ rotl(w[j - 13], 7) ^ w[j - 6])
    a, b, c, d, e, f, g, h = v
    for j in range(64):
        t = 0x79CC4519 if j < 16 else 0x7A879D8A
        ss1 = rotl((rotl(a, 12) + e + rotl(t, j)) & M32, 7)
        ss2 = ss1 ^ rotl(a, 12)
        ff = a ^ b ^ c if j < 16 else (a & b) | (a & c) | (b & c)
        gg = e ^ f ^ g if j < 16 else (e & f) | (~e & g)
        tt1 = (ff + d + ss2 + (w[j] ^ w[j + 4])) & M32
        tt2 = (gg + h + ss1 + w[j]) & M32
        d, c, b, a = c, rotl(b, 9), a, tt1
        h, g, f, e = g, rotl(f, 19), e, tt2 ^ rotl(tt2, 9) ^ rotl(tt2, 17)
    return [x ^ y for x, y in zip(v, [a, b, c, d, e, f, g, h])]


def sm3_bits(msg: bytes, nbits: int) -> bytes:
    value = int.from_bytes(msg, "big") >> (len(msg) * 8 - nbits) if nbits else 0
    k = (448 - (nbits + 1)) % 512
    total = nbits + 1 + k + 64
    padded = ((((value << 1) | 1) << k) << 64 | nbits).to_bytes(total // 8, "big")
    v = IV
    for i in range(0, len(padded), 64):
        v = compress(v, padded[i : i + 64])
    return b"".join(x.to_bytes(4, "big") for x in v)


def digest(msg: bytes, nbits: int) -> bytes:
    return sm3(msg[: nbits // 8]) if nbits % 8 == 0 else sm3_bits(msg, nbits)


def drng_for(name: str) -> HashDrbg:
    return HashDrbg((name.encode() * 8)[:64])


def hexu(b: bytes) -> str:
    return b.hex().upper()


def kat_2_12(limit: int) -> str:
    d = drng_for("KAT_2_12")
    out = []
    for n in range(limit or 4097):
        m = d.bits(n)
        out += [f"Msg_Len = {n}", f"Msg = {hexu(m)}", "Dst_Len = 256", f"Dst = {hexu(digest(m, n))}", ""]
    return "\n".join(out) + "\n"


def kat_2_23() -> str:
    d = drng_for("KAT_2_23")
    nbits = 1 << 23
    out = []
    for k in range(3):
        seed = b""
        if k < 2:
            m = bytes([0x00 if k == 0 else 0xFF]) * (nbits // 8)
        else:
            seed = d.bits(512)
            m = HashDrbg(seed).bits(nbits)
        out += [f"Msg_Len = {nbits}", f"Msg_Seed = {hexu(seed)}", f"Msg_Exp = {hexu(m[:8])} .... {hexu(m[-8:])}"]
        out += ["Dst_Len = 256", f"Dst = {hexu(sm3(m))}", ""]
    return "\n".join(out) + "\n"


def kat_loop(limit: int) -> str:
    d = drng_for("KAT_Loop")
    m = d.bits(8192)
    out = ["Msg_Len = 8192", f"Msg = {hexu(m)}"]
    h = sm3(m)
    for _ in range(limit or 1000000):
        m = m[32:] + m[:32]
        m = bytes(x ^ y for x, y in zip(m[:32], h)) + m[32:]
        h = sm3(m)
    out += ["Dst_Len = 256", f"Dst = {hexu(h)}", ""]
    return "\n".join(out) + "\n"


def text_of(kind: str, limit: int) -> str:
    return {"KAT_2_12": lambda: kat_2_12(limit), "KAT_2_23": kat_2_23, "KAT_Loop": lambda: kat_loop(limit)}[kind]()


def canonical(text: str) -> str:
    h = hashlib.sha256()
    for line in text.split("\n"):
        line = line.rstrip("\r \t")
        if line and not line.startswith("#"):
            h.update((line + "\n").encode("latin1"))
    return h.hexdigest()


if __name__ == "__main__":
    if sys.argv[1] == "digest":
        print(canonical(text_of(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 0)))
    else:
        sys.stdout.write(text_of(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 0))
