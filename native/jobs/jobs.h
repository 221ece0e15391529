/* The jobs of ngcc_driver (native/bin/driver.c), one file each in native/jobs/. Each takes the
 * fields job_fields() gives (LIB, the job's name, then its own) and returns the exit code; failures
 * exit in fail(). */
#ifndef NGCC_JOBS_H
#define NGCC_JOBS_H
#include "core/harness.h"
int kat_main(int n, char **fields);
int time_main(int n, char **fields);
int replay_main(int n, char **fields);
int inputs_main(int n, char **fields);
int keys_main(int n, char **fields);
int prof_main(int n, char **fields);
/* The kat job's variants, called by kat_main (native/jobs/kat.c): type hash:BITS
 * (native/jobs/kat_hash.c), and type kex with the loaded library (native/jobs/kat_kex.c). */
int kat_hash_main(int n, char **fields);
int kat_kex_main(const api_t *a, const char *mode);
/* The KAT jobs' unseen seed (docs/method.md#unseen-seeds): 64 bytes that replace the generator's
 * published seed when the job carries a field `unseen=HEX`; kat_unseen is 0 without one. */
#define KAT_UNSEEN_BYTES 64
extern unsigned char kat_unseen_seed[KAT_UNSEEN_BYTES];
extern int kat_unseen;
/* The records a KAT job computes (docs/method.md#kat-in-pieces): [kat_from, kat_to), the whole KAT
 * unless the job carries a field `piece=FROM:TO`. Every record before kat_from still draws from the
 * generators as a serial run does, so each computed record starts from the same generator state; the
 * file's header belongs to the piece that starts at 0; the fresh-seed checks run where kat_fresh is
 * set: a whole KAT, or the one piece marked `:fresh`. */
extern unsigned long long kat_from, kat_to;
extern int kat_piece, kat_fresh;
/* Sets [kat_from, kat_to) for a KAT of `records` records: fails USAGE when the piece asked for is
 * not inside it. */
void kat_piece_range(unsigned long long records);
/* At the start of fresh record `f`: in a piece of the fresh checks alone, the first one's end is the
 * `kat-record` mark a record would give, which the piece's timeout follows. */
void kat_fresh_started(int f);
#endif
