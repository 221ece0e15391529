/*
 * sm3_check: reads all of stdin and prints a lowercase hex digest.
 *   sm3_check           sm3hash(256, stdin)
 *   sm3_check xof N     pseudoXOF(stdin) of N bytes
 *   sm3_check ph N      pseudohash(stdin) of N bits (512, 768 or 1024)
 * Exits 0 on success, 1 on an I/O or helper failure, 2 on a usage error.
 */
#include "auxfunc.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { MODE_SM3, MODE_XOF, MODE_PH } check_mode;

typedef struct {
    check_mode mode;
    unsigned long long out_bits;
} request;

static int usage(void) {
    fputs("usage: sm3_check [xof BYTES | ph BITS] < input\n", stderr);
    return 2;
}

static int parse_count(const char *text, unsigned long long *value) {
    char *end;

    if (text[0] < '0' || text[0] > '9') return -1;
    errno = 0;
    *value = strtoull(text, &end, 10);
    return (errno != 0 || *end != '\0') ? -1 : 0;
}

static int parse_args(int argc, char **argv, request *req) {
    unsigned long long n;

    req->mode = MODE_SM3;
    req->out_bits = 256;
    if (argc == 1) return 0;
    if (argc != 3 || parse_count(argv[2], &n) != 0) return -1;
    if (strcmp(argv[1], "xof") == 0 && n <= SIZE_MAX / 8u) {
        req->mode = MODE_XOF;
        req->out_bits = 8u * n;
        return 0;
    }
    if (strcmp(argv[1], "ph") == 0 && (n == 512 || n == 768 || n == 1024)) {
        req->mode = MODE_PH;
        req->out_bits = n;
        return 0;
    }
    return -1;
}

/* Reads the stream to EOF into a growing buffer; returns NULL on failure. */
static unsigned char *read_all(FILE *in, size_t *len) {
    size_t cap = 1 << 16, used = 0;
    unsigned char *buf = malloc(cap);

    while (buf != NULL) {
        unsigned char *grown;

        used += fread(buf + used, 1, cap - used, in);
        if (used < cap) break;
        grown = cap <= SIZE_MAX / 2 ? realloc(buf, cap * 2) : NULL;
        if (grown == NULL) free(buf);
        buf = grown;
        cap *= 2;
    }
    if (buf != NULL && ferror(in)) {
        free(buf);
        buf = NULL;
    }
    *len = used;
    return buf;
}

static int run(const request *req, const unsigned char *msg, size_t msg_len, unsigned char *out) {
    unsigned long long msg_bits = 8ull * msg_len;

    switch (req->mode) {
    case MODE_XOF: return pseudoXOF(req->out_bits, msg, msg_bits, out);
    case MODE_PH: return pseudohash((int)req->out_bits, msg, msg_bits, out);
    default: return sm3hash(256, msg, msg_bits, out);
    }
}

static void print_hex(const unsigned char *data, size_t len) {
    size_t i;

    for (i = 0; i < len; i++) printf("%02x", data[i]);
    putchar('\n');
}

int main(int argc, char **argv) {
    request req;
    unsigned char *msg, *out;
    size_t msg_len, out_len;
    int rc = 1;

    if (parse_args(argc, argv, &req) != 0) return usage();

    out_len = (size_t)(req.out_bits / 8u);
    msg = read_all(stdin, &msg_len);
    out = malloc(out_len > 0 ? out_len : 1);
    if (msg == NULL || out == NULL) fputs("sm3_check: out of memory or read error\n", stderr);
    else if (run(&req, msg, msg_len, out) != 0) fputs("sm3_check: helper rejected the arguments\n", stderr);
    else {
        print_hex(out, out_len);
        rc = 0;
    }
    free(msg);
    free(out);
    return rc;
}
