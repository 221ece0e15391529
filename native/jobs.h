/* The jobs of ngcc_driver (native/ngcc_driver.c). Each takes the fields job_fields() gives
 * (LIB, the job's name, then its own) and returns the exit code; failures exit in fail(). */
#ifndef NGCC_JOBS_H
#define NGCC_JOBS_H
int kat_main(int n, char **fields);
int time_main(int n, char **fields);
int replay_main(int n, char **fields);
int inputs_main(int n, char **fields);
int keys_main(int n, char **fields);
int prof_main(int n, char **fields);
#endif
