/*
 * ML-KEM-512 as PQClean's clean code computes it, one operation per stdin line, for the tests of the
 * example key exchange kex-80: linked against PQClean directly, never against the candidate's library
 * or the harness's drivers.
 *   keygen COINS(64)        -> PK SK
 *   encaps PK COINS(32)     -> CT K
 *   decaps CT SK            -> K
 * Hex in and out, one answer line per question.
 */
#include "kem.h"
#include "randombytes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PK PQCLEAN_MLKEM512_CLEAN_CRYPTO_PUBLICKEYBYTES
#define SK PQCLEAN_MLKEM512_CLEAN_CRYPTO_SECRETKEYBYTES
#define CT PQCLEAN_MLKEM512_CLEAN_CRYPTO_CIPHERTEXTBYTES
#define KB PQCLEAN_MLKEM512_CLEAN_CRYPTO_BYTES

/* Only the deterministic entry points are used: any other randomness is a bug in this program. */
int PQCLEAN_randombytes(uint8_t *output, size_t n) {
    (void)output, (void)n;
    fprintf(stderr, "randombytes called\n");
    exit(3);
}

static void unhex(const char *s, uint8_t *out, size_t n) {
    if (s == NULL || strlen(s) != 2 * n) {
        fprintf(stderr, "expected %zu hex bytes\n", n);
        exit(2);
    }
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        if (sscanf(s + 2 * i, "%2x", &v) != 1) exit(2);
        out[i] = (uint8_t)v;
    }
}

static void hex(const uint8_t *p, size_t n, char end) {
    for (size_t i = 0; i < n; i++) printf("%02X", p[i]);
    putchar(end);
}

int main(void) {
    char *line = NULL;
    size_t cap = 0;
    static uint8_t pk[PK], sk[SK], ct[CT], k[KB], coins[64];
    while (getline(&line, &cap, stdin) > 0) {
        line[strcspn(line, "\r\n")] = 0;
        char *op = strtok(line, " "), *a = strtok(NULL, " "), *b = strtok(NULL, " ");
        if (op == NULL) continue;
        if (strcmp(op, "keygen") == 0) {
            unhex(a, coins, 64);
            PQCLEAN_MLKEM512_CLEAN_crypto_kem_keypair_derand(pk, sk, coins);
            hex(pk, PK, ' ');
            hex(sk, SK, '\n');
        } else if (strcmp(op, "encaps") == 0) {
            unhex(a, pk, PK);
            unhex(b, coins, 32);
            PQCLEAN_MLKEM512_CLEAN_crypto_kem_enc_derand(ct, k, pk, coins);
            hex(ct, CT, ' ');
            hex(k, KB, '\n');
        } else if (strcmp(op, "decaps") == 0) {
            unhex(a, ct, CT);
            unhex(b, sk, SK);
            PQCLEAN_MLKEM512_CLEAN_crypto_kem_dec(k, ct, sk);
            hex(k, KB, '\n');
        } else {
            fprintf(stderr, "unknown operation %s\n", op);
            return 2;
        }
        fflush(stdout);
    }
    free(line);
    return 0;
}
