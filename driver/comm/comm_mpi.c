/* driver/comm/comm_mpi.c — the communication table over MPI, host buffers (Open MPI, MPICH).
 * Errors come back as codes (MPI_ERRORS_RETURN on a duplicate of MPI_COMM_WORLD), and every
 * collective is the non-blocking one waited for with MPI_Test until a deadline, so a rank that
 * died or hangs gives the others an error naming the call, not a wait without end. Built only
 * when CMake finds MPI (VRAMKIT_HAVE_MPI). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "comm/comm_backends.h"
#include "util/clock.h"

typedef struct mpi_ctx {
    MPI_Comm comm;
    int rank, world;
    uint32_t timeout_ms;
    int we_initialised; /* MPI_Init was ours: finalise in destroy */
    vram_status sticky; /* a failure of the job: every later call returns it */
    char err[512];
} mpi_ctx;

static vram_status fail(mpi_ctx *m, vram_status st, const char *call, int code) {
    char text[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    if (code != MPI_SUCCESS && MPI_Error_string(code, text, &len) != MPI_SUCCESS) text[0] = '\0';
    if (st == VRAM_E_TIMEOUT)
        snprintf(m->err, sizeof m->err,
                 "rank %d of %d: MPI %s did not finish within %u ms: another rank died or hangs",
                 m->rank, m->world, call, m->timeout_ms);
    else
        snprintf(m->err, sizeof m->err, "rank %d of %d: MPI %s failed: %s", m->rank, m->world,
                 call, text[0] ? text : "error");
    if (st == VRAM_E_COMM || st == VRAM_E_TIMEOUT) m->sticky = st;
    return st;
}

/* Waits for req until the deadline, driving MPI's progress; sleeps a little between tests so a
 * long wait does not take a core from the ranks that still compute. */
static vram_status finish(mpi_ctx *m, MPI_Request *req, const char *call) {
    double deadline = vram_now_s() + (double)m->timeout_ms / 1000.0;
    long nap_ns = 1000;
    for (;;) {
        int done = 0;
        int rc = MPI_Test(req, &done, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) return fail(m, VRAM_E_COMM, call, rc);
        if (done) return VRAM_OK;
        if (vram_now_s() > deadline) return fail(m, VRAM_E_TIMEOUT, call, MPI_SUCCESS);
        struct timespec nap = {0, nap_ns};
        nanosleep(&nap, NULL);
        if (nap_ns < 1000000) nap_ns *= 2;
    }
}

static MPI_Datatype mpi_type(vram_comm_dtype t) {
    switch (t) {
    case VRAM_COMM_F32: return MPI_FLOAT;
    case VRAM_COMM_U32: return MPI_UINT32_T;
    case VRAM_COMM_F64: return MPI_DOUBLE;
    }
    return MPI_DATATYPE_NULL;
}

static vram_status mpi_all_reduce(void *ctx, const void *send, void *recv, uint64_t count,
                                  vram_comm_dtype dtype, vram_comm_op op, vram_stream stream) {
    mpi_ctx *m = (mpi_ctx *)ctx;
    uint64_t bytes = 0;
    MPI_Request req;
    vram_status st;
    (void)stream;
    if (m->sticky != VRAM_OK) return m->sticky;
    if ((st = vram_comm_reduce_args(send, recv, count, (int)dtype, (int)op, &bytes)) != VRAM_OK) return st;
    int rc = MPI_Iallreduce(send == recv ? MPI_IN_PLACE : send, recv, (int)count, mpi_type(dtype),
                            op == VRAM_COMM_MAX ? MPI_MAX : MPI_SUM, m->comm, &req);
    if (rc != MPI_SUCCESS) return fail(m, VRAM_E_COMM, "all-reduce", rc);
    if ((st = finish(m, &req, "all-reduce")) != VRAM_OK) return st;
    if (op == VRAM_COMM_AVG) { /* the sum over the world, divided as NCCL's ncclAvg does */
        if (dtype == VRAM_COMM_F32) {
            float *v = (float *)recv;
            for (uint64_t i = 0; i < count; i++) v[i] /= (float)m->world;
        } else {
            double *v = (double *)recv;
            for (uint64_t i = 0; i < count; i++) v[i] /= (double)m->world;
        }
    }
    return VRAM_OK;
}

static vram_status mpi_broadcast(void *ctx, void *buf, uint64_t count, vram_comm_dtype dtype,
                                 int root, vram_stream stream) {
    mpi_ctx *m = (mpi_ctx *)ctx;
    uint64_t bytes = 0;
    MPI_Request req;
    vram_status st;
    (void)stream;
    if (m->sticky != VRAM_OK) return m->sticky;
    if ((st = vram_comm_bcast_args(buf, count, (int)dtype, root, m->world, &bytes)) != VRAM_OK) return st;
    int rc = MPI_Ibcast(buf, (int)count, mpi_type(dtype), root, m->comm, &req);
    if (rc != MPI_SUCCESS) return fail(m, VRAM_E_COMM, "broadcast", rc);
    return finish(m, &req, "broadcast");
}

static vram_status mpi_barrier(void *ctx, vram_stream stream) {
    mpi_ctx *m = (mpi_ctx *)ctx;
    MPI_Request req;
    (void)stream;
    if (m->sticky != VRAM_OK) return m->sticky;
    int rc = MPI_Ibarrier(m->comm, &req);
    if (rc != MPI_SUCCESS) return fail(m, VRAM_E_COMM, "barrier", rc);
    return finish(m, &req, "barrier");
}

static vram_status mpi_wait(void *ctx, vram_stream stream) {
    (void)stream;
    return ((mpi_ctx *)ctx)->sticky;
}

static const char *mpi_last_error(void *ctx) { return ((mpi_ctx *)ctx)->err; }

static void mpi_destroy(void *ctx) {
    mpi_ctx *m = (mpi_ctx *)ctx;
    int finalized = 0;
    if (m == NULL) return;
    if (m->sticky == VRAM_OK) {
        MPI_Comm_free(&m->comm);
        if (m->we_initialised && MPI_Finalized(&finalized) == MPI_SUCCESS && !finalized) MPI_Finalize();
    }
    free(m);
}

vram_status vram_comm_mpi(const vram_comm_config *cfg, vram_comm_ops *out) {
    int inited = 0, provided = 0;
    mpi_ctx *m;
    if (out == NULL) return VRAM_E_INVALID;
    memset(out, 0, sizeof *out);
    m = (mpi_ctx *)calloc(1, sizeof *m);
    if (m == NULL) return VRAM_E_NOMEM;
    m->timeout_ms = vram_comm_timeout_ms(cfg);
    if (MPI_Initialized(&inited) != MPI_SUCCESS) goto fail_init;
    if (!inited) {
        if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) goto fail_init;
        m->we_initialised = 1;
    }
    /* errors as codes on our communicator: the default handler aborts the job */
    if (MPI_Comm_dup(MPI_COMM_WORLD, &m->comm) != MPI_SUCCESS) goto fail_init;
    MPI_Comm_set_errhandler(m->comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(m->comm, &m->rank);
    MPI_Comm_size(m->comm, &m->world);
    VRAM_COMM_OPS_FILL(out, mpi, VRAM_COMM_HOST_BUFFERS, "mpi", m, m->rank, m->world);
    return VRAM_OK;
fail_init:
    free(m);
    return VRAM_E_COMM;
}
