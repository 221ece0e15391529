/* The hash KAT job (native/hash_kat.c), called by kat_main for type hash:BITS. */
#ifndef NGCC_HASH_KAT_H
#define NGCC_HASH_KAT_H
int hash_kat_main(int n, char **fields);
#endif
