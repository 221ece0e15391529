#!/usr/bin/env python3
"""An independent model of the ICCS hash KAT generator (KAT_CryptHash.c with its drng.c) for SM3.

Written apart from this repository's C code. The DRNG is the SP 800-90A Hash_DRBG with SM3 and
seedlen 440 (instantiate with the 64-byte seed; generate any bit count, ceil(bits/8) bytes whose
unused low bits are zero, one state update per call), as the ICCS drng.c describes it. The generator
below follows the official KAT_CryptHash.c function by function (gen_KAT_2_12, gen_KAT_2_23,
gen_KAT_Loop, fprint_message_full, fprint_message_partial, fprint_digest), statement by statement:
the order of DRNG calls, the buffer zeroing, the seed printed, the rotate-and-XOR. Digests:
OpenSSL's SM3 (hashlib) for whole bytes, and a bit-string SM3 from GB/T 32905 here for partial
bytes.

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


# ---- The generator: KAT_CryptHash.c's functions, one Python function each, statement by statement ----
SEED_LEN_BYTES = 64
MSG_LEN_BITS_2_12 = 4096
MSG_LEN_BITS_2_13 = 8192
MSG_LEN_BITS_2_23 = 8388608
DIGEST_LEN_BITS = 256  # SM3


def file_seed(filename: str) -> bytes:
    # for (i = 0; i < sizeof(seed) / 8; i++) memcpy(seed + 8 * i, filename, 8);
    return filename.encode()[:8] * (SEED_LEN_BYTES // 8)


def hexu(b: bytes) -> str:
    return b.hex().upper()


def high_n_bit_mask(n: int) -> int:
    return (0xFF << (8 - n)) & 0xFF


def fprint_message_full(fp: list, msg: bytes, msg_len_bits: int) -> None:
    line = "Msg = " + hexu(msg[: msg_len_bits // 8])
    if msg_len_bits % 8:
        line += f"{high_n_bit_mask(msg_len_bits % 8) & msg[msg_len_bits // 8]:02X}"
    fp += [f"Msg_Len = {msg_len_bits}", line]


def fprint_message_partial(fp: list, msg: bytes, msg_len_bits: int, seed) -> None:
    fp.append(f"Msg_Len = {msg_len_bits}")
    fp.append("Msg_Seed = " + (hexu(seed[:SEED_LEN_BYTES]) if seed is not None else ""))
    n = msg_len_bits // 8
    fp.append(f"Msg_Exp = {hexu(msg[:8])} .... {hexu(msg[n - 8 : n])}")


def fprint_digest(fp: list, digest_: bytes, digest_len_bits: int) -> None:
    fp += [f"Dst_Len = {digest_len_bits}", "Dst = " + hexu(digest_[: digest_len_bits // 8])]


def gen_kat_2_12(limit: int) -> list:
    fp: list = []
    seed = file_seed("KAT_2_12_")
    drng = HashDrbg(seed)  # init_random_number(&drng_msg_2_12, seed, sizeof(seed))
    for msg_len_bits in range(limit or MSG_LEN_BITS_2_12 + 1):
        # memset(msg, 0, 512); get_random_number(&drng, msg, msg_len_bits)
        msg = drng.bits(msg_len_bits) + bytes(MSG_LEN_BITS_2_12 // 8)
        fprint_message_full(fp, msg, msg_len_bits)
        fprint_digest(fp, digest(msg, msg_len_bits), DIGEST_LEN_BITS)
        fp.append("")
    return fp


def gen_kat_long(prefix: str, msg_len_bits: int) -> list:
    """gen_KAT_2_23 (and gen_KAT_2_33, the same with its own name and length)."""
    fp: list = []
    seed = file_seed(prefix)
    drng = HashDrbg(seed)  # init_random_number(&drng, seed, sizeof(seed)), before the first message
    n = msg_len_bits // 8
    # All 0, then all 1: Msg_Seed printed from NULL
    for fill in (0x00, 0xFF):
        msg = bytes([fill]) * n
        fprint_message_partial(fp, msg, msg_len_bits, None)
        fprint_digest(fp, sm3(msg), DIGEST_LEN_BITS)
        fp.append("")
    # Random: get_random_number(&drng, msg, msg_len_bits), the DRNG's first draw; the seed printed is the file's
    msg = drng.bits(msg_len_bits)
    fprint_message_partial(fp, msg, msg_len_bits, seed)
    fprint_digest(fp, sm3(msg), DIGEST_LEN_BITS)
    fp.append("")
    return fp


def gen_kat_loop(limit: int) -> list:
    fp: list = []
    seed = file_seed("KAT_Loop_")
    drng = HashDrbg(seed)
    msg = bytearray(drng.bits(MSG_LEN_BITS_2_13))
    fprint_message_full(fp, bytes(msg), MSG_LEN_BITS_2_13)
    dl = DIGEST_LEN_BITS // 8
    h = sm3(bytes(msg))
    for _ in range(limit or 1000000):
        buffer = msg[:dl]  # memcpy(buffer, msg, dl)
        msg[: len(msg) - dl] = msg[dl:]  # memmove(msg, msg + dl, (msg_len_bits - digest_len_bits) / 8)
        msg[len(msg) - dl :] = buffer  # memcpy(msg + (msg_len_bits - digest_len_bits) / 8, buffer, dl)
        for j in range(dl):
            msg[j] ^= h[j]
        h = sm3(bytes(msg))
    fprint_digest(fp, h, DIGEST_LEN_BITS)
    fp.append("")
    return fp


def text_of(kind: str, limit: int) -> str:
    lines = {
        "KAT_2_12": lambda: gen_kat_2_12(limit),
        "KAT_2_23": lambda: gen_kat_long("KAT_2_23_", MSG_LEN_BITS_2_23),
        "KAT_Loop": lambda: gen_kat_loop(limit),
    }[kind]()
    return "\n".join(lines) + "\n"


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
