/* vramkit/comm.h — the one seam between vramkit and the other ranks of a job.
 * A table of function pointers (all-reduce, broadcast, barrier) filled by NCCL (device
 * buffers), MPI (host buffers) or a single process, as device.h is for a GPU; the core only
 * defines the table and checks calls before they reach a backend. */
#ifndef VRAMKIT_COMM_H
#define VRAMKIT_COMM_H

#include "base.h"
#include "device.h"

/* Bumped whenever a slot is added or changes meaning (see VRAM_DEVICE_API_VERSION). */
#define VRAM_COMM_API_VERSION 1u

/* Bits of vram_comm_ops.flags: where the buffers of a call live. */
#define VRAM_COMM_DEVICE_BUFFERS 0x1u /* device memory, work queued on the call's stream (NCCL) */
#define VRAM_COMM_HOST_BUFFERS 0x2u   /* host memory, done when the call returns (MPI, single) */
#define VRAM_COMM_FLAGS_KNOWN (VRAM_COMM_DEVICE_BUFFERS | VRAM_COMM_HOST_BUFFERS)

/* Element types and reductions every backend provides. */
typedef enum vram_comm_dtype {
    VRAM_COMM_F32 = 1, /* float */
    VRAM_COMM_U32 = 2, /* uint32_t: flags, counts */
    VRAM_COMM_F64 = 3  /* double: sums of squares on the host */
} vram_comm_dtype;

typedef enum vram_comm_op {
    VRAM_COMM_SUM = 1,
    VRAM_COMM_MAX = 2, /* of floats: NaN handling is the backend's (MPI's, NCCL's); the found-inf
                          flags vramkit reduces are 0 or 1 */
    VRAM_COMM_AVG = 3  /* the sum divided by the world (F32, F64 only): gradient averaging */
} vram_comm_op;

/* The largest element count of one call: NCCL and MPI take counts as size_t / int. */
#define VRAM_COMM_MAX_COUNT 2147483647u
/* Default for a backend's timeout (0 in its config): a rank that has not joined a collective
 * after this long is reported as VRAM_E_TIMEOUT, never waited for forever. */
#define VRAM_COMM_DEFAULT_TIMEOUT_MS 300000u

/* The ops table. Every slot returns a vram_status; the backend keeps a one-line description
 * of the last failure (which rank, which call, the library's words), readable through
 * last_error. A failure of the job (a rank died, the network failed: VRAM_E_COMM; a rank did
 * not answer in time: VRAM_E_TIMEOUT) is sticky: the table refuses every later call with the
 * same status, since the ranks no longer agree on what was reduced. `stream` is the device
 * stream for a backend with VRAM_COMM_DEVICE_BUFFERS, ignored by the others. */
typedef struct vram_comm_ops {
    uint32_t api_version; /* VRAM_COMM_API_VERSION the table was written for */
    uint32_t size;        /* sizeof(vram_comm_ops) as the backend saw it */
    uint32_t flags;       /* VRAM_COMM_* bits: exactly one of DEVICE_BUFFERS, HOST_BUFFERS */
    const char *backend;  /* "nccl", "mpi", "single": for reports, never for decisions */
    void *ctx;
    int rank;  /* this process, 0 <= rank < world */
    int world; /* ranks in the job, >= 1 */

    /* recv[i] = op over the ranks of send[i], i < count, on every rank; send == recv is
     * in place */
    vram_status (*all_reduce)(void *ctx, const void *send, void *recv, uint64_t count,
                              vram_comm_dtype dtype, vram_comm_op op, vram_stream stream);
    /* buf on every rank = buf on root */
    vram_status (*broadcast)(void *ctx, void *buf, uint64_t count, vram_comm_dtype dtype, int root,
                             vram_stream stream);
    /* returns when every rank has called it (device backends: when the stream's work so far
     * is done on every rank) */
    vram_status (*barrier)(void *ctx, vram_stream stream);
    /* waits, within the timeout, for the communication queued on stream; reports a failure
     * of the job found meanwhile. Host backends: checks the sticky status only. */
    vram_status (*wait)(void *ctx, vram_stream stream);
    /* the description of the last failure ("" when none); static until the next call */
    const char *(*last_error)(void *ctx);
    /* frees the backend (not the library: MPI_Finalize is the program's) */
    void (*destroy)(void *ctx);
} vram_comm_ops;

/* ---- functions, in the order a caller uses them --------------------------------------- */

/* Is this table usable by this build? Requires: nothing (NULL is reported). Guarantees:
 * VRAM_OK when the version matches, every slot is set, exactly one buffer flag is set and
 * 0 <= rank < world; VRAM_E_VERSION for another API version or a smaller table;
 * VRAM_E_INVALID otherwise. */
/*@ requires ops == \null || \valid_read(ops);
    assigns \nothing;
    ensures \result == VRAM_OK || \result == VRAM_E_VERSION || \result == VRAM_E_INVALID;
    ensures \result == VRAM_OK ==> 0 <= ops->rank < ops->world; */
VRAM_DEF VRAM_NODISCARD vram_status vram_comm_ops_check(const vram_comm_ops *ops) {
    uint32_t where;
    if (ops == NULL) return VRAM_E_INVALID;
    if (ops->api_version != VRAM_COMM_API_VERSION) return VRAM_E_VERSION;
    if (ops->size < (uint32_t)sizeof(vram_comm_ops)) return VRAM_E_VERSION;
    if ((ops->flags & ~(uint32_t)VRAM_COMM_FLAGS_KNOWN) != 0u) return VRAM_E_INVALID;
    where = ops->flags & VRAM_COMM_FLAGS_KNOWN;
    if (where != VRAM_COMM_DEVICE_BUFFERS && where != VRAM_COMM_HOST_BUFFERS) return VRAM_E_INVALID;
    if (ops->backend == NULL || !ops->all_reduce || !ops->broadcast || !ops->barrier || !ops->wait ||
        !ops->last_error || !ops->destroy)
        return VRAM_E_INVALID;
    if (ops->world < 1 || ops->rank < 0 || ops->rank >= ops->world) return VRAM_E_INVALID;
    return VRAM_OK;
}

/*@ logic integer vram_comm_elem(integer t) = t == 1 ? 4 : t == 2 ? 4 : t == 3 ? 8 : 0; */

/* Bytes of one element, 0 for a type outside the list. */
/*@ assigns \nothing;
    ensures \result == vram_comm_elem(dtype); */
VRAM_HD VRAM_DEF uint32_t vram_comm_dtype_bytes(int dtype) {
    switch (dtype) {
    case VRAM_COMM_F32: return 4u;
    case VRAM_COMM_U32: return 4u;
    case VRAM_COMM_F64: return 8u;
    default: return 0u;
    }
}

/* The arguments of an all-reduce (or, with op VRAM_COMM_SUM, a broadcast) before a backend
 * sees them, and the bytes of its buffers. Requires: bytes valid. Guarantees: VRAM_OK with
 * *bytes = count * element bytes, no buffer NULL unless count is 0; VRAM_E_INVALID for an
 * unknown type or reduction, an average of integers, a NULL buffer with count > 0, or count above
 * VRAM_COMM_MAX_COUNT; VRAM_E_OVERFLOW when count * element bytes would not fit 64 bits
 * (never a wrap; with the count bound it cannot happen, and the check stays for the proof).
 * *bytes is written only on VRAM_OK. */
/*@ requires \valid(bytes);
    assigns *bytes;
    ensures \result == VRAM_OK || \result == VRAM_E_INVALID || \result == VRAM_E_OVERFLOW;
    ensures \result == VRAM_OK ==> *bytes == count * vram_comm_elem(dtype) &&
                                   count <= VRAM_COMM_MAX_COUNT && vram_comm_elem(dtype) > 0;
    behavior bad_type:
      assumes dtype != VRAM_COMM_F32 && dtype != VRAM_COMM_U32 && dtype != VRAM_COMM_F64;
      assigns \nothing;
      ensures \result == VRAM_E_INVALID; */
VRAM_DEF VRAM_NODISCARD vram_status vram_comm_reduce_args(const void *send, const void *recv, uint64_t count,
                                                          int dtype, int op, uint64_t *bytes) {
    uint32_t each = vram_comm_dtype_bytes(dtype);
    uint64_t total = 0;
    if (each == 0u) return VRAM_E_INVALID;
    if (op != VRAM_COMM_SUM && op != VRAM_COMM_MAX && op != VRAM_COMM_AVG) return VRAM_E_INVALID;
    if (op == VRAM_COMM_AVG && dtype == VRAM_COMM_U32) return VRAM_E_INVALID;
    if (count > VRAM_COMM_MAX_COUNT) return VRAM_E_INVALID;
    if (count > 0u && (send == NULL || recv == NULL)) return VRAM_E_INVALID;
    if (vram__mul_u64(count, (uint64_t)each, &total) != VRAM_OK) return VRAM_E_OVERFLOW;
    *bytes = total;
    return VRAM_OK;
}

/* A broadcast's arguments: as vram_comm_reduce_args (buffer buf, op SUM), and root a rank
 * of the world. */
/*@ requires \valid(bytes);
    assigns *bytes;
    ensures \result == VRAM_OK || \result == VRAM_E_INVALID || \result == VRAM_E_OVERFLOW;
    ensures \result == VRAM_OK ==> 0 <= root < world; */
VRAM_DEF VRAM_NODISCARD vram_status vram_comm_bcast_args(const void *buf, uint64_t count, int dtype, int root,
                                                         int world, uint64_t *bytes) {
    if (root < 0 || root >= world) return VRAM_E_INVALID;
    return vram_comm_reduce_args(buf, buf, count, dtype, VRAM_COMM_SUM, bytes);
}

#endif /* VRAMKIT_COMM_H */
