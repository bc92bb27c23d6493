/* mpi_check.h — what the programs under mpirun share: checks that name the rank, and the
 * communication table over MPI. Each program returns 0 when every check held on its rank;
 * mpirun's exit status is then 0 only when every rank's was. */
#ifndef VRAMKIT_TEST_MPI_CHECK_H
#define VRAMKIT_TEST_MPI_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#include "comm/comm_backends.h"

static int check_failures = 0;
static int check_rank = -1;

#define CHECK(cond, ...)                                                             \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "rank %d: %s:%d: check failed: %s: ", check_rank,        \
                    __FILE__, __LINE__, #cond);                                      \
            fprintf(stderr, __VA_ARGS__);                                            \
            fprintf(stderr, "\n");                                                   \
            check_failures++;                                                        \
        }                                                                            \
    } while (0)

/* The MPI table, or exit 1 naming why. */
static inline vram_comm_ops check_comm(void) {
    vram_comm_ops c;
    vram_status st = vram_comm_mpi(NULL, &c);
    if (st != VRAM_OK || vram_comm_ops_check(&c) != VRAM_OK) {
        fprintf(stderr, "vram_comm_mpi: %s\n", vram_status_str(st));
        exit(1);
    }
    check_rank = c.rank;
    return c;
}

/* Every rank's failures summed, so each rank reports the job's verdict; then the table is
 * destroyed (MPI finalised). Returns main's status. */
static inline int check_finish(vram_comm_ops *c) {
    uint32_t f = (uint32_t)check_failures;
    vram_status st = c->all_reduce(c->ctx, &f, &f, 1, VRAM_COMM_U32, VRAM_COMM_SUM, NULL);
    if (st != VRAM_OK) {
        fprintf(stderr, "rank %d: the final all-reduce: %s\n", c->rank, c->last_error(c->ctx));
        return 1;
    }
    if (c->rank == 0) fprintf(stderr, "%u failed check%s over %d ranks\n", f, f == 1 ? "" : "s", c->world);
    c->destroy(c->ctx);
    return f == 0 ? 0 : 1;
}

#endif
