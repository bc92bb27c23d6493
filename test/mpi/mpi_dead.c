/* A rank that dies (kill) or hangs (hang): the last rank leaves after a first barrier; every
 * other rank's next all-reduce must fail within the timeout ($VRAMKIT_COMM_TIMEOUT_MS) with
 * VRAM_E_COMM or VRAM_E_TIMEOUT and a message naming the call, and every later call must fail
 * the same way at once (the table is sticky). Each survivor writes DIR/rank-R.txt with the
 * status and the seconds it took, which mpi_dead.sh checks.
 * usage: mpi_dead kill|hang DIR */
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mpi_check.h"

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    if (argc != 3 || (strcmp(argv[1], "kill") != 0 && strcmp(argv[1], "hang") != 0)) {
        fprintf(stderr, "usage: mpi_dead kill|hang DIR\n");
        return 2;
    }
    vram_comm_ops c = check_comm();
    float v = 1.0f;
    CHECK(c.barrier(c.ctx, NULL) == VRAM_OK, "the first barrier: %s", c.last_error(c.ctx));
    CHECK(c.all_reduce(c.ctx, &v, &v, 1, VRAM_COMM_F32, VRAM_COMM_SUM, NULL) == VRAM_OK, "sum");
    CHECK(v == (float)c.world, "sum of ones %g", (double)v);
    if (c.rank == c.world - 1) {
        if (strcmp(argv[1], "kill") == 0) raise(SIGKILL);
        for (;;) pause(); /* hangs until the job is torn down */
    }
    double t0 = now_s();
    vram_status st = c.all_reduce(c.ctx, &v, &v, 1, VRAM_COMM_F32, VRAM_COMM_SUM, NULL);
    double took = now_s() - t0;
    fprintf(stderr, "rank %d: all-reduce after a rank left: %s after %.1f s: %s\n", c.rank,
            vram_status_name(st), took, c.last_error(c.ctx));
    CHECK(st == VRAM_E_COMM || st == VRAM_E_TIMEOUT, "status %s", vram_status_name(st));
    CHECK(strstr(c.last_error(c.ctx), "all-reduce") != NULL, "the message names the call");
    /* sticky: at once, the same status */
    t0 = now_s();
    vram_status again = c.barrier(c.ctx, NULL);
    CHECK(again == st, "the next call: %s", vram_status_name(again));
    CHECK(now_s() - t0 < 1.0, "the next call waited");
    CHECK(c.wait(c.ctx, NULL) == st, "wait");
    /* the report, written whole (a temporary file renamed) */
    char path[4096], tmp[4200];
    snprintf(path, sizeof path, "%s/rank-%d.txt", argv[2], c.rank);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (f != NULL) {
        fprintf(f, "%s %.1f %d\n", vram_status_name(st), took, check_failures);
        fclose(f);
        rename(tmp, path);
    }
    /* the first survivor to leave makes mpirun end the job: wait (10 s at most) until every
     * survivor has written its report, through the files, as MPI is no longer usable */
    for (int waited = 0; waited < 1000; waited++) {
        int have = 0;
        for (int r = 0; r < c.world - 1; r++) {
            char p[4096];
            snprintf(p, sizeof p, "%s/rank-%d.txt", argv[2], r);
            have += access(p, F_OK) == 0;
        }
        if (have == c.world - 1) break;
        usleep(10000);
    }
    c.destroy(c.ctx); /* without MPI_Finalize: a rank is gone */
    /* leave without finalising: mpirun tears the job down (the hung rank included) */
    fflush(NULL);
    _exit(check_failures == 0 ? 0 : 1);
}
