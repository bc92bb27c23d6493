/* comm_nccl_order.c (test_comm_nccl_order) — the NCCL backend's stream order, shown on the CPU:
 * driver/comm/comm_nccl.c is linked here against a recording stand-in for the CUDA runtime and
 * NCCL (this file; no libcudart, no libnccl, no GPU), which logs every call with its stream.
 * The barrier's all-reduce reads a device float; whatever wrote that float last must be ordered
 * before the read on the caller's stream. A cudaMemset (the legacy stream) is not: a stream made
 * with cudaStreamNonBlocking does not wait for the legacy stream, so the all-reduce could read
 * the float before the zero lands. Built where nccl.h is (CUDA builds); label unit. */
#include <criterion/criterion.h>
#include <cuda_runtime.h>
#include <nccl.h>
#include <stdint.h>
#include <string.h>

#include "comm/comm_backends.h"

/* ---- the recording stand-in ----------------------------------------------------------------- */

enum op { OP_MALLOC, OP_FREE, OP_MEMSET_LEGACY, OP_MEMSET_ASYNC, OP_ALL_REDUCE, OP_BROADCAST, OP_QUERY };
typedef struct call {
    enum op op;
    const void *ptr;    /* the device memory written (memset) or read and written (collectives) */
    cudaStream_t stream;
} call;
static call g_log[256];
static int g_calls;
static float g_device_float[4];           /* what cudaMalloc hands out */
static cudaError_t g_memset_async_result; /* what cudaMemsetAsync answers */

static void record(enum op op, const void *ptr, cudaStream_t s) {
    cr_assert_lt(g_calls, 256);
    g_log[g_calls++] = (call){op, ptr, s};
}

cudaError_t cudaSetDevice(int device) {
    (void)device;
    return cudaSuccess;
}
cudaError_t cudaMalloc(void **p, size_t bytes) {
    cr_assert_leq(bytes, sizeof g_device_float);
    *p = g_device_float;
    record(OP_MALLOC, *p, NULL);
    return cudaSuccess;
}
cudaError_t cudaFree(void *p) {
    record(OP_FREE, p, NULL);
    return cudaSuccess;
}
cudaError_t cudaMemset(void *p, int v, size_t bytes) {
    memset(p, v, bytes);
    record(OP_MEMSET_LEGACY, p, NULL);
    return cudaSuccess;
}
cudaError_t cudaMemsetAsync(void *p, int v, size_t bytes, cudaStream_t s) {
    if (g_memset_async_result != cudaSuccess) return g_memset_async_result;
    memset(p, v, bytes);
    record(OP_MEMSET_ASYNC, p, s);
    return cudaSuccess;
}
cudaError_t cudaStreamQuery(cudaStream_t s) {
    record(OP_QUERY, NULL, s);
    return cudaSuccess;
}
const char *cudaGetErrorString(cudaError_t e) { return e == cudaSuccess ? "no error" : "a recorded failure"; }

static int g_comm_object;
ncclResult_t ncclGetUniqueId(ncclUniqueId *id) {
    memset(id, 7, sizeof *id);
    return ncclSuccess;
}
ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank, ncclConfig_t *config) {
    (void)nranks, (void)id, (void)rank;
    cr_assert_eq(config->blocking, 0, "the backend asks for a non-blocking communicator");
    *comm = (ncclComm_t)&g_comm_object;
    return ncclSuccess;
}
ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *e) {
    (void)comm;
    *e = ncclSuccess;
    return ncclSuccess;
}
const char *ncclGetErrorString(ncclResult_t r) { return r == ncclSuccess ? "no error" : "an NCCL error"; }
ncclResult_t ncclAllReduce(const void *send, void *recv, size_t count, ncclDataType_t t, ncclRedOp_t op,
                           ncclComm_t comm, cudaStream_t s) {
    (void)count, (void)t, (void)op, (void)comm;
    cr_assert_eq(send, recv);
    record(OP_ALL_REDUCE, recv, s);
    return ncclSuccess;
}
ncclResult_t ncclBroadcast(const void *send, void *recv, size_t count, ncclDataType_t t, int root, ncclComm_t comm,
                           cudaStream_t s) {
    (void)send, (void)count, (void)t, (void)root, (void)comm;
    record(OP_BROADCAST, recv, s);
    return ncclSuccess;
}
ncclResult_t ncclCommAbort(ncclComm_t comm) {
    (void)comm;
    return ncclSuccess;
}
ncclResult_t ncclCommFinalize(ncclComm_t comm) {
    (void)comm;
    return ncclSuccess;
}
ncclResult_t ncclCommDestroy(ncclComm_t comm) {
    (void)comm;
    return ncclSuccess;
}

/* comm_single.c's setting, which this program does not link (it brings the driver with it) */
uint32_t vram_comm_timeout_ms(const vram_comm_config *cfg) {
    (void)cfg;
    return 1000u;
}

/* ---- a host table of one rank to boot from -------------------------------------------------- */

static vram_status boot_broadcast(void *ctx, void *buf, uint64_t count, vram_comm_dtype t, int root, vram_stream s) {
    (void)ctx, (void)buf, (void)count, (void)t, (void)root, (void)s;
    return VRAM_OK;
}
static vram_status boot_reduce(void *ctx, const void *a, void *b, uint64_t n, vram_comm_dtype t, vram_comm_op o,
                               vram_stream s) {
    (void)ctx, (void)a, (void)b, (void)n, (void)t, (void)o, (void)s;
    return VRAM_E_NOT_SUPPORTED;
}
static vram_status boot_nothing(void *ctx, vram_stream s) {
    (void)ctx, (void)s;
    return VRAM_OK;
}
static const char *boot_err(void *ctx) {
    (void)ctx;
    return "";
}
static void boot_destroy(void *ctx) { (void)ctx; }

static vram_comm_ops open_nccl(void) {
    const vram_comm_ops boot = {VRAM_COMM_API_VERSION, sizeof(vram_comm_ops), VRAM_COMM_HOST_BUFFERS, "boot", NULL, 0,
                                1, boot_reduce, boot_broadcast, boot_nothing, boot_nothing, boot_err, boot_destroy};
    vram_comm_ops c;
    g_calls = 0;
    g_memset_async_result = cudaSuccess;
    memset(g_device_float, 0xff, sizeof g_device_float); /* fresh device memory: anything (NaN here) */
    cr_assert_eq(vram_comm_nccl(NULL, &boot, 0, &c), VRAM_OK);
    return c;
}

/* The last write to `ptr` before call `upto`, or -1. */
static int last_write_before(const void *ptr, int upto) {
    for (int i = upto - 1; i >= 0; i--)
        if ((g_log[i].op == OP_MEMSET_LEGACY || g_log[i].op == OP_MEMSET_ASYNC || g_log[i].op == OP_ALL_REDUCE ||
             g_log[i].op == OP_BROADCAST) &&
            g_log[i].ptr == ptr)
            return i;
    return -1;
}

/* ---- tests -------------------------------------------------------------------------------------- */

Test(comm_nccl_order, the_barrier_zeroes_its_float_on_the_callers_stream_before_reducing_it) {
    vram_comm_ops c = open_nccl();
    cudaStream_t streams[2] = {(cudaStream_t)(uintptr_t)0x5151, (cudaStream_t)(uintptr_t)0x6262}; /* non-blocking */
    for (int round = 0; round < 4; round++) { /* every barrier, on whichever stream it is called */
        cudaStream_t s = streams[round % 2];
        int before = g_calls;
        cr_assert_eq(c.barrier(c.ctx, s), VRAM_OK, "%s", c.last_error(c.ctx));
        int ar = -1;
        for (int i = before; i < g_calls; i++)
            if (g_log[i].op == OP_ALL_REDUCE) ar = i;
        cr_assert_geq(ar, 0, "the barrier all-reduces a float");
        cr_assert_eq(g_log[ar].stream, s, "on the caller's stream");
        int w = last_write_before(g_log[ar].ptr, ar);
        cr_assert_geq(w, 0, "round %d: nothing ever wrote the float the barrier reduces", round);
        cr_assert_eq(g_log[w].op, OP_MEMSET_ASYNC,
                     "round %d: the float was last written by %s, which a non-blocking stream does not wait for",
                     round, g_log[w].op == OP_MEMSET_LEGACY ? "cudaMemset on the legacy stream" : "another call");
        cr_assert_eq(g_log[w].stream, s, "round %d: zeroed on stream %p, reduced on %p", round,
                     (void *)g_log[w].stream, (void *)s);
        cr_assert_eq(g_device_float[0], 0.0f, "the reduced float is 0");
    }
    for (int i = 0; i < g_calls; i++) cr_assert_neq(g_log[i].op, OP_MEMSET_LEGACY, "no call runs on the legacy stream");
    c.destroy(c.ctx);
}

Test(comm_nccl_order, a_failed_zeroing_is_reported_and_reduces_nothing) {
    vram_comm_ops c = open_nccl();
    g_memset_async_result = cudaErrorInvalidValue;
    int before = g_calls;
    cr_assert_eq(c.barrier(c.ctx, (cudaStream_t)(uintptr_t)0x5151), VRAM_E_CUDA);
    for (int i = before; i < g_calls; i++) cr_assert_neq(g_log[i].op, OP_ALL_REDUCE, "nothing reduced after the failure");
    cr_assert(strstr(c.last_error(c.ctx), "barrier: cudaMemsetAsync failed") != NULL, "%s", c.last_error(c.ctx));
    g_memset_async_result = cudaSuccess;
    cr_assert_eq(c.barrier(c.ctx, (cudaStream_t)(uintptr_t)0x5151), VRAM_OK, "not sticky: the next barrier works");
    c.destroy(c.ctx);
}
