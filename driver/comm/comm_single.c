/* driver/comm/comm_single.c — the communication table of a job of one process: what a
 * training loop uses when it is not launched across ranks, and what the steps across ranks
 * are tested against. Also the timeout setting every backend shares, and the answers of a
 * build without MPI or NCCL. */
#include <stdlib.h>
#include <string.h>

#include "comm/comm_backends.h"
#include "util/text.h"

uint32_t vram_comm_timeout_ms(const vram_comm_config *cfg) {
    uint64_t v = 0;
    const char *env;
    if (cfg != NULL && cfg->timeout_ms != 0u) return cfg->timeout_ms;
    env = getenv("VRAMKIT_COMM_TIMEOUT_MS");
    if (env != NULL && vram_parse_u64(env, UINT32_MAX, &v) == 0 && v > 0u) return (uint32_t)v;
    return VRAM_COMM_DEFAULT_TIMEOUT_MS;
}

static vram_status single_all_reduce(void *ctx, const void *send, void *recv, uint64_t count,
                                     vram_comm_dtype dtype, vram_comm_op op, vram_stream stream) {
    uint64_t bytes = 0;
    (void)ctx;
    (void)stream;
    vram_status st = vram_comm_reduce_args(send, recv, count, (int)dtype, (int)op, &bytes);
    if (st != VRAM_OK) return st;
    if (bytes > 0u && send != recv) memmove(recv, send, (size_t)bytes); /* sum, max, mean of one */
    return VRAM_OK;
}

static vram_status single_broadcast(void *ctx, void *buf, uint64_t count, vram_comm_dtype dtype,
                                    int root, vram_stream stream) {
    uint64_t bytes = 0;
    (void)ctx;
    (void)stream;
    return vram_comm_bcast_args(buf, count, (int)dtype, root, 1, &bytes);
}

static vram_status single_barrier(void *ctx, vram_stream stream) {
    (void)ctx;
    (void)stream;
    return VRAM_OK;
}

static const char *single_last_error(void *ctx) {
    (void)ctx;
    return "";
}

static void single_destroy(void *ctx) { (void)ctx; }
#define single_wait single_barrier /* nothing is ever queued: waiting is the barrier */

vram_status vram_comm_single(vram_comm_ops *out) {
    if (out == NULL) return VRAM_E_INVALID;
    memset(out, 0, sizeof *out);
    VRAM_COMM_OPS_FILL(out, single, VRAM_COMM_HOST_BUFFERS, "single", NULL, 0, 1);
    return VRAM_OK;
}

int vram_comm_mpi_built(void) {
#ifdef VRAMKIT_HAVE_MPI
    return 1;
#else
    return 0;
#endif
}

int vram_comm_nccl_built(void) {
#ifdef VRAMKIT_HAVE_NCCL
    return 1;
#else
    return 0;
#endif
}

#ifndef VRAMKIT_HAVE_MPI
vram_status vram_comm_mpi(const vram_comm_config *cfg, vram_comm_ops *out) {
    (void)cfg;
    (void)out;
    return VRAM_E_NOT_BUILT;
}
#endif

#ifndef VRAMKIT_HAVE_NCCL
vram_status vram_comm_nccl(const vram_comm_config *cfg, const vram_comm_ops *boot, int device,
                           vram_comm_ops *out) {
    (void)cfg;
    (void)boot;
    (void)device;
    (void)out;
    return VRAM_E_NOT_BUILT;
}
#endif
