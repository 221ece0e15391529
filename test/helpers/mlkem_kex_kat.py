#!/usr/bin/env python3
"""An independent generator and checker of the example key exchange kex-80's KAT_KEX file.

Written from the descriptions, not from the harness's C code or the candidate's: the ICCS KAT_KEX
layout (docs/method.md#key-exchange: a seed DRNG on "seed" x 16, each record's 64-byte seed re-seeding
the algorithm DRNG), the DRNG from iccs_hash_kat.py (its own model of the ICCS Hash_DRBG), the exchange
as examples/campaign/kex-80/README.md defines it, ML-KEM-512 from ORACLE (mlkem512_oracle.c, linked
against PQClean alone) and SHA3-256 from hashlib.

  mlkem_kex_kat.py generate ORACLE [RECORDS]   prints the KAT_KEX text
  mlkem_kex_kat.py digest ORACLE [RECORDS]     prints its canonical strict SHA-256
  mlkem_kex_kat.py check ORACLE FILE           checks FILE's sizes and secrets record by record
"""
import hashlib
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from iccs_hash_kat import HashDrbg, canonical, hexu  # noqa: E402

PK, SK, CT, K = 800, 1632, 768, 32


class Oracle:
    def __init__(self, path: str):
        self.p = subprocess.Popen([path], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def ask(self, *words: str) -> list:
        self.p.stdin.write(" ".join(words) + "\n")
        self.p.stdin.flush()
        return [bytes.fromhex(x) for x in self.p.stdout.readline().split()]

    def keygen(self, coins: bytes):
        return self.ask("keygen", coins.hex())

    def encaps(self, pk: bytes, coins: bytes):
        return self.ask("encaps", pk.hex(), coins.hex())

    def decaps(self, ct: bytes, sk: bytes) -> bytes:
        return self.ask("decaps", ct.hex(), sk.hex())[0]


def generate(oracle: Oracle, records: int) -> str:
    seeds = HashDrbg(b"seed" * 16)
    out = []

    def field(key: str, value: bytes):
        out.extend([f"{key}_Len = {len(value)}", f"{key} = {hexu(value)}"])

    for i in range(records):
        seed = seeds.bits(512)
        drng = HashDrbg(seed)
        out.extend([f"Count = {i}", "Seed_Len = 64", f"Seed = {hexu(seed)}", "Pass_Num = 2"])
        pka, ska = oracle.keygen(drng.bits(512))
        field("PKa", pka), field("SKa", ska), field("Init_Sta", b"")
        pkb, skb = oracle.keygen(drng.bits(512))
        field("PKb", pkb), field("SKb", skb), field("Init_Stb", b"")
        # Pass 1 (A): an ephemeral key pair, and an encapsulation to B's long-term key.
        ek, dk = oracle.keygen(drng.bits(512))
        c1, k1 = oracle.encaps(pkb, drng.bits(256))
        field("Pass1_Sta", dk + k1), field("M1", ek + c1)
        # Pass 2 (B): an encapsulation to A's ephemeral key; both secrets hashed together.
        c2, k2 = oracle.encaps(ek, drng.bits(256))
        ss = hashlib.sha3_256(k1 + k2).digest()
        field("Pass2_Stb", ss), field("M2", c2)
        field("SS", ss)
        out.append("")
    return "\n".join(out) + "\n"


def check(oracle: Oracle, text: str) -> int:
    """B's secret again from the file alone: decapsulations with the secret keys the file holds."""
    n = 0
    for block in text.strip().split("\n\n"):
        f = dict(line.split(" = ", 1) if " = " in line else (line.rstrip(" ="), "") for line in block.split("\n"))
        b = {k: bytes.fromhex(v) for k, v in f.items() if not k.endswith("_Len") and k not in ("Count", "Pass_Num")}
        sizes = {k: len(v) for k, v in b.items()}
        want = {"PKa": PK, "SKa": SK, "PKb": PK, "SKb": SK, "M1": PK + CT, "M2": CT, "Pass1_Sta": SK + K, "SS": K}
        for key, size in want.items():
            if sizes[key] != size or int(f[key + "_Len"]) != size:
                sys.exit(f"record {f['Count']}: {key} is {sizes[key]} bytes, ML-KEM-512 gives {size}")
        k1 = oracle.decaps(b["M1"][PK:], b["SKb"])
        k2 = oracle.decaps(b["M2"], b["Pass1_Sta"][:SK])
        if k1 != b["Pass1_Sta"][SK:]:
            sys.exit(f"record {f['Count']}: B decapsulates c1 to another K1 than A's state holds")
        if hashlib.sha3_256(k1 + k2).digest() != b["SS"]:
            sys.exit(f"record {f['Count']}: SS is not SHA3-256(K1 || K2) of the decapsulated secrets")
        n += 1
    return n


if __name__ == "__main__":
    what, oracle = sys.argv[1], Oracle(sys.argv[2])
    if what == "check":
        with open(sys.argv[3], encoding="latin1") as fh:
            print(f"{check(oracle, fh.read())} records checked")
    else:
        text = generate(oracle, int(sys.argv[3]) if len(sys.argv) > 3 else 10)
        sys.stdout.write(canonical(text) + "\n" if what == "digest" else text)
