/* driver/comm/comm_nccl.c — the communication table over NCCL, device buffers, work queued
 * on the caller's stream. The communicator is non-blocking (ncclConfig_t.blocking = 0), so no
 * NCCL call waits for another rank inside the library: calls that are still in progress are
 * polled with ncclCommGetAsyncError until done or the timeout, and a failure or a timeout
 * aborts the communicator (ncclCommAbort), which also frees the kernels stuck waiting for a
 * dead peer. Built with CUDA when nccl.h and libnccl are found (VRAMKIT_HAVE_NCCL). */
#include <cuda_runtime.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "comm/comm_backends.h"
#include "util/clock.h"

typedef struct nccl_ctx {
    ncclComm_t comm;
    int device, rank, world;
    uint32_t timeout_ms;
    float *scratch; /* one float on the device, for the barrier: zeroed on the barrier's stream */
    vram_status sticky;
    int aborted;
    char err[512];
} nccl_ctx;

static void nap(long *ns) {
    struct timespec t = {0, *ns};
    nanosleep(&t, NULL);
    if (*ns < 1000000) *ns *= 2;
}

static vram_status fail(nccl_ctx *n, vram_status st, const char *call, const char *why) {
    if (st == VRAM_E_TIMEOUT)
        snprintf(n->err, sizeof n->err,
                 "rank %d of %d (cuda:%d): NCCL %s did not finish within %u ms: another rank died "
                 "or hangs; the communicator was aborted",
                 n->rank, n->world, n->device, call, n->timeout_ms);
    else
        snprintf(n->err, sizeof n->err, "rank %d of %d (cuda:%d): NCCL %s failed: %s", n->rank,
                 n->world, n->device, call, why);
    if (st == VRAM_E_COMM || st == VRAM_E_TIMEOUT) {
        n->sticky = st;
        if (!n->aborted && n->comm != NULL) {
            ncclCommAbort(n->comm); /* frees the kernels that wait for the lost rank */
            n->aborted = 1;
        }
    }
    return st;
}

/* Until the communicator has no call in progress (non-blocking mode), within the deadline. */
static vram_status settle(nccl_ctx *n, ncclResult_t r, const char *call, double deadline) {
    long ns = 1000;
    while (r == ncclInProgress) {
        if (vram_now_s() > deadline) return fail(n, VRAM_E_TIMEOUT, call, NULL);
        nap(&ns);
        if (ncclCommGetAsyncError(n->comm, &r) != ncclSuccess) r = ncclInternalError;
    }
    if (r != ncclSuccess) return fail(n, VRAM_E_COMM, call, ncclGetErrorString(r));
    return VRAM_OK;
}

static double deadline_of(const nccl_ctx *n) { return vram_now_s() + (double)n->timeout_ms / 1000.0; }

static ncclDataType_t nccl_type(vram_comm_dtype t) {
    return t == VRAM_COMM_U32 ? ncclUint32 : t == VRAM_COMM_F64 ? ncclFloat64 : ncclFloat32;
}

static vram_status nccl_all_reduce(void *ctx, const void *send, void *recv, uint64_t count,
                                   vram_comm_dtype dtype, vram_comm_op op, vram_stream stream) {
    nccl_ctx *n = (nccl_ctx *)ctx;
    uint64_t bytes = 0;
    vram_status st;
    if (n->sticky != VRAM_OK) return n->sticky;
    if ((st = vram_comm_reduce_args(send, recv, count, (int)dtype, (int)op, &bytes)) != VRAM_OK) return st;
    ncclRedOp_t o = op == VRAM_COMM_MAX ? ncclMax : op == VRAM_COMM_AVG ? ncclAvg : ncclSum;
    ncclResult_t r = ncclAllReduce(send, recv, (size_t)count, nccl_type(dtype), o, n->comm,
                                   (cudaStream_t)stream);
    return settle(n, r, "all-reduce", deadline_of(n));
}

static vram_status nccl_broadcast(void *ctx, void *buf, uint64_t count, vram_comm_dtype dtype,
                                  int root, vram_stream stream) {
    nccl_ctx *n = (nccl_ctx *)ctx;
    uint64_t bytes = 0;
    vram_status st;
    if (n->sticky != VRAM_OK) return n->sticky;
    if ((st = vram_comm_bcast_args(buf, count, (int)dtype, root, n->world, &bytes)) != VRAM_OK) return st;
    ncclResult_t r = ncclBroadcast(buf, buf, (size_t)count, nccl_type(dtype), root, n->comm,
                                   (cudaStream_t)stream);
    return settle(n, r, "broadcast", deadline_of(n));
}

static vram_status nccl_wait(void *ctx, vram_stream stream) {
    nccl_ctx *n = (nccl_ctx *)ctx;
    double deadline = deadline_of(n);
    long ns = 1000;
    if (n->sticky != VRAM_OK) return n->sticky;
    for (;;) {
        ncclResult_t r = ncclSuccess;
        cudaError_t q = cudaStreamQuery((cudaStream_t)stream);
        if (ncclCommGetAsyncError(n->comm, &r) != ncclSuccess) r = ncclInternalError;
        if (r != ncclSuccess && r != ncclInProgress)
            return fail(n, VRAM_E_COMM, "wait", ncclGetErrorString(r));
        if (q == cudaSuccess) return VRAM_OK;
        if (q != cudaErrorNotReady) {
            snprintf(n->err, sizeof n->err, "rank %d of %d (cuda:%d): the stream failed: %s", n->rank,
                     n->world, n->device, cudaGetErrorString(q));
            return VRAM_E_CUDA;
        }
        if (vram_now_s() > deadline) return fail(n, VRAM_E_TIMEOUT, "wait", NULL);
        nap(&ns);
    }
}

/* every rank's stream work so far, then a one-float all-reduce, waited for. The float is zeroed
 * first on the same stream: a zeroing anywhere else (cudaMemset at creation runs on the legacy
 * stream, which a non-blocking stream does not wait for) may land after the all-reduce reads it. */
static vram_status nccl_barrier(void *ctx, vram_stream stream) {
    nccl_ctx *n = (nccl_ctx *)ctx;
    vram_status st;
    cudaError_t e;
    if (n->sticky != VRAM_OK) return n->sticky;
    e = cudaMemsetAsync(n->scratch, 0, sizeof(float), (cudaStream_t)stream);
    if (e != cudaSuccess) {
        snprintf(n->err, sizeof n->err, "rank %d of %d (cuda:%d): barrier: cudaMemsetAsync failed: %s", n->rank,
                 n->world, n->device, cudaGetErrorString(e));
        return VRAM_E_CUDA;
    }
    st = nccl_all_reduce(ctx, n->scratch, n->scratch, 1, VRAM_COMM_F32, VRAM_COMM_SUM, stream);
    if (st != VRAM_OK) return st;
    return nccl_wait(ctx, stream);
}

static const char *nccl_last_error(void *ctx) { return ((nccl_ctx *)ctx)->err; }

static void nccl_destroy(void *ctx) {
    nccl_ctx *n = (nccl_ctx *)ctx;
    if (n == NULL) return;
    if (!n->aborted && n->comm != NULL) {
        /* flush, then free; a finalize that does not settle in time is aborted */
        ncclResult_t r = ncclCommFinalize(n->comm);
        if (settle(n, r, "finalize", deadline_of(n)) == VRAM_OK) ncclCommDestroy(n->comm);
    }
    if (n->scratch != NULL) cudaFree(n->scratch);
    free(n);
}

vram_status vram_comm_nccl(const vram_comm_config *cfg, const vram_comm_ops *boot, int device,
                           vram_comm_ops *out) {
    ncclUniqueId id;
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    nccl_ctx *n;
    vram_status st;
    if (out == NULL || vram_comm_ops_check(boot) != VRAM_OK || (boot->flags & VRAM_COMM_HOST_BUFFERS) == 0u ||
        device < 0)
        return VRAM_E_INVALID;
    memset(out, 0, sizeof *out);
    if (cudaSetDevice(device) != cudaSuccess) return VRAM_E_NO_DEVICE;
    n = (nccl_ctx *)calloc(1, sizeof *n);
    if (n == NULL) return VRAM_E_NOMEM;
    n->device = device;
    n->rank = boot->rank;
    n->world = boot->world;
    n->timeout_ms = vram_comm_timeout_ms(cfg);
    if (cudaMalloc((void **)&n->scratch, sizeof(float)) != cudaSuccess) {
        free(n);
        return VRAM_E_OOM;
    }
    memset(&id, 0, sizeof id);
    if (n->rank == 0 && ncclGetUniqueId(&id) != ncclSuccess) {
        st = VRAM_E_COMM;
        goto failed;
    }
    /* the id (128 bytes) from rank 0 to every rank over the host table */
    st = boot->broadcast(boot->ctx, &id, sizeof id / sizeof(uint32_t), VRAM_COMM_U32, 0, NULL);
    if (st != VRAM_OK) goto failed;
    config.blocking = 0;
    {
        ncclResult_t r = ncclCommInitRankConfig(&n->comm, n->world, id, n->rank, &config);
        if (r != ncclSuccess && r != ncclInProgress) {
            st = VRAM_E_COMM;
            goto failed;
        }
        if (r == ncclInProgress && (st = settle(n, r, "init", deadline_of(n))) != VRAM_OK) goto failed;
    }
    VRAM_COMM_OPS_FILL(out, nccl, VRAM_COMM_DEVICE_BUFFERS, "nccl", n, n->rank, n->world);
    return VRAM_OK;
failed:
    if (n->comm != NULL && !n->aborted) ncclCommAbort(n->comm);
    cudaFree(n->scratch);
    free(n);
    return st;
}
