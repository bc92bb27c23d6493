/* bench_try.c — what isolation costs: one attempt through the isolation library
 * (vram_isolate_run: pipes, process group, pidfd, poll loop, 2 x 64 KiB rings, environment
 * copy, reaping) against posix_spawn + waitpid of the same command, with its output sent to
 * /dev/null. Runs both N times, interleaved, and prints the medians and their ratio.
 * Usage: bench_try [N] [PROGRAM [ARGS...]]   (default 200 runs of /bin/true) */
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "isolate/isolate.h"

extern char **environ;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static double direct(char *const *argv) {
    posix_spawn_file_actions_t fa;
    pid_t pid;
    int status;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    double t0 = now_s();
    if (posix_spawn(&pid, argv[0], &fa, NULL, argv, environ) != 0) {
        fprintf(stderr, "bench_try: cannot start %s\n", argv[0]);
        exit(1);
    }
    waitpid(pid, &status, 0);
    double t = now_s() - t0;
    posix_spawn_file_actions_destroy(&fa);
    return t;
}

static double isolated(char *const *argv, int no_pidfd) {
    vram_isolate_opts o;
    vram_isolate_result r;
    memset(&o, 0, sizeof o);
    o.argv = (const char *const *)argv;
    o.timeout_s = 60;
    o.no_pidfd = no_pidfd;
    double t0 = now_s();
    if (vram_isolate_run(&o, &r) != VRAM_OK || r.how != VRAM_ATTEMPT_EXITED) {
        fprintf(stderr, "bench_try: the isolated run of %s failed\n", argv[0]);
        exit(1);
    }
    double t = now_s() - t0;
    vram_isolate_result_free(&r);
    return t;
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 200;
    char *def[] = {"/bin/true", NULL};
    char *const *cmd = argc > 2 ? argv + 2 : def;
    if (n < 1) n = 1;
    double *d = malloc(sizeof *d * (size_t)n), *iso = malloc(sizeof *iso * (size_t)n),
           *poll_only = malloc(sizeof *poll_only * (size_t)n);
    if (!d || !iso || !poll_only) return 1;
    for (int w = 0; w < 10; w++) { /* warm the page cache and the allocator */
        direct(cmd);
        isolated(cmd, 0);
    }
    for (int i = 0; i < n; i++) {
        d[i] = direct(cmd);
        iso[i] = isolated(cmd, 0);
        poll_only[i] = isolated(cmd, 1);
    }
    double md = median(d, n), mi = median(iso, n), mp = median(poll_only, n);
    printf("bench_try: %d runs of %s (medians)\n", n, cmd[0]);
    printf("  posix_spawn + waitpid            %8.3f ms\n", md * 1e3);
    printf("  vram_isolate_run (pidfd)         %8.3f ms  ratio %.2f  overhead %+.3f ms\n", mi * 1e3,
           mi / md, (mi - md) * 1e3);
    printf("  vram_isolate_run (polling)       %8.3f ms  ratio %.2f  overhead %+.3f ms\n", mp * 1e3,
           mp / md, (mp - md) * 1e3);
    free(d);
    free(iso);
    free(poll_only);
    return 0;
}
