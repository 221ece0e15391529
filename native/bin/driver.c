/* ngcc_driver: the one driver the KAT, timing and profiling processes run, with one command line,
 *   ngcc_driver LIB
 * and the job (kat | time | prof and its fields) on the result channel, so the library under test
 * sees the same argv, environment and sandbox whether it is being KAT-checked or timed
 * (docs/native-protocol.md#drivers). Run by hand, without a channel, the job follows LIB:
 *   ngcc_driver LIB kat TYPE iccs|nist RECORDS [NIST_PREFIX]
 *   ngcc_driver LIB time|prof TYPE OP N WARMUPS [CPU|-1] [RNG|auto] [SPOT_CHECKS]
 *   ngcc_driver LIB replay TYPE OP N WARMUPS CPU|-1 RNG|auto SPOT_CHECKS SEED SEGMENT [KEY]
 *   ngcc_driver LIB keys kem dec 1 0 CPU|-1 RNG|auto 0 DIR
 *   ngcc_driver LIB inputs kem dec N 0 CPU|-1 RNG|auto 0 SEED DIR PK */
#include "core/harness.h"
#include "jobs/jobs.h"
#include "core/trusted.h"
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    proto_open();
    char *fields[24];
    int n = job_fields(argc, argv, fields, 24);
    const char *job = n > 1 ? fields[1] : "";
    int code;
    if (strcmp(job, "kat") == 0) code = kat_main(n, fields);
    else if (strcmp(job, "time") == 0) {
        /* A trial's clock is kept by a half the library never shares (native/core/trusted.h). */
        trusted_split(n > 6 ? atoi(fields[6]) : -1);
        code = time_main(n, fields);
    } else if (strcmp(job, "replay") == 0) code = replay_main(n, fields);
    else if (strcmp(job, "inputs") == 0) code = inputs_main(n, fields);
    else if (strcmp(job, "keys") == 0) code = keys_main(n, fields);
    else if (strcmp(job, "prof") == 0) code = prof_main(n, fields);
    else {
        fprintf(stderr, "usage: ngcc_driver LIB kat|time|replay|keys|inputs|prof ... (native/bin/driver.c)\n");
        code = EXIT_USAGE;
    }
    return proto_end(code);
}
