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
int kat_kex_main(const api_t *a, const char *mode, unsigned long long records);
/* The KAT jobs' unseen seed (docs/method.md#unseen-seeds): 64 bytes that replace the generator's
 * published seed when the job carries a field `unseen=HEX`; kat_unseen is 0 without one. */
#define KAT_UNSEEN_BYTES 64
extern unsigned char kat_unseen_seed[KAT_UNSEEN_BYTES];
extern int kat_unseen;
#endif
