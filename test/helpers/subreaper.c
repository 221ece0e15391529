/* subreaper REPORT GRACE_MS COMMAND [ARG...]: runs COMMAND as this process's child, with this process
 * its descendants' subreaper (PR_SET_CHILD_SUBREAPER): whatever COMMAND starts and leaves behind,
 * however it names itself or whatever session it makes, is re-parented here when its parent ends
 * (a process in a PID namespace of its own goes to that namespace's init, which is one of ours).
 * Once COMMAND has exited and GRACE_MS have passed, each process still a child of this one is a
 * survivor: one line "pid<TAB>comm<TAB>cmdline" each in REPORT (empty when none), then all are
 * killed and reaped. Exits with COMMAND's code (128 + signal when a signal ended it). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static void read_small(const char *path, char *out, size_t cap) {
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(out, 1, cap - 1, f) : 0;
    if (f) fclose(f);
    out[n] = '\0';
    for (size_t i = 0; i + 1 < n; i++)
        if (out[i] == '\0') out[i] = ' ';
    if (n > 0 && (out[n - 1] == '\n' || out[n - 1] == '\0')) out[n - 1] = '\0';
}

/* The parent pid of `pid` from /proc/<pid>/stat (after the command name, which may hold spaces). */
static long parent_of(const char *pid) {
    char path[300], stat[1024];
    snprintf(path, sizeof path, "/proc/%s/stat", pid);
    read_small(path, stat, sizeof stat);
    char *close = strrchr(stat, ')');
    long ppid = -1;
    if (close && sscanf(close + 1, " %*c %ld", &ppid) != 1) ppid = -1;
    return ppid;
}

/* Writes the survivors to `report`, kills them; the count. */
static int survivors(FILE *report) {
    int found = 0;
    DIR *proc = opendir("/proc");
    struct dirent *e;
    while (proc && (e = readdir(proc))) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9' || parent_of(e->d_name) != (long)getpid()) continue;
        char path[300], comm[256], cmdline[4096];
        snprintf(path, sizeof path, "/proc/%s/comm", e->d_name);
        read_small(path, comm, sizeof comm);
        snprintf(path, sizeof path, "/proc/%s/cmdline", e->d_name);
        read_small(path, cmdline, sizeof cmdline);
        fprintf(report, "%s\t%s\t%s\n", e->d_name, comm, cmdline);
        kill((pid_t)atol(e->d_name), SIGKILL);
        found++;
    }
    if (proc) closedir(proc);
    return found;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: subreaper REPORT GRACE_MS COMMAND [ARG...]\n");
        return 2;
    }
    if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) {
        perror("subreaper: PR_SET_CHILD_SUBREAPER");
        return 2;
    }
    pid_t child = fork();
    if (child == 0) {
        execvp(argv[3], argv + 3);
        perror("subreaper: exec");
        _exit(127);
    }
    int status = 0;
    /* Orphans re-parented here while the command runs are reaped as they end; the command's status is kept. */
    for (;;) {
        pid_t done = wait(&status);
        if (done == child || (done < 0 && errno != EINTR)) break;
    }
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    usleep((useconds_t)atol(argv[2]) * 1000);
    FILE *report = fopen(argv[1], "w");
    if (!report) {
        perror("subreaper: report");
        return 2;
    }
    survivors(report);
    fclose(report);
    while (wait(NULL) > 0 || errno == EINTR) {
    }
    return code;
}
