/* driver/comm/comm_backends.h — the backends of the communication table (vramkit/comm.h):
 * one process, MPI over host buffers, NCCL over device buffers; and the training steps across
 * ranks built on any of them (comm_steps.c). */
#ifndef VRAMKIT_COMM_BACKENDS_H
#define VRAMKIT_COMM_BACKENDS_H

#include <stddef.h>

#include <vramkit/comm.h>
#include <vramkit/scaler.h>

/* Zero means default. */
typedef struct vram_comm_config {
    uint32_t timeout_ms; /* a collective not done after this long is VRAM_E_TIMEOUT
                            (default VRAM_COMM_DEFAULT_TIMEOUT_MS; $VRAMKIT_COMM_TIMEOUT_MS when 0) */
} vram_comm_config;

/* The timeout a config means: its own, else $VRAMKIT_COMM_TIMEOUT_MS (a whole number from 1),
 * else VRAM_COMM_DEFAULT_TIMEOUT_MS. */
uint32_t vram_comm_timeout_ms(const vram_comm_config *cfg);

/* One process: rank 0 of 1, host buffers; an all-reduce copies send to recv. */
VRAM_NODISCARD vram_status vram_comm_single(vram_comm_ops *out);

/* 1 when this build has the MPI backend (VRAMKIT_HAVE_MPI), the NCCL backend (VRAMKIT_HAVE_NCCL). */
int vram_comm_mpi_built(void);
int vram_comm_nccl_built(void);

/* MPI over MPI_COMM_WORLD (a duplicate of it, with errors returned, not fatal), host buffers.
 * Initialises MPI when the program has not (MPI_Init_thread, funneled) and then finalises it
 * in destroy, unless a collective failed (a finalise with a dead rank may never return: exit
 * instead). Every collective is non-blocking underneath and waited for within the timeout:
 * a rank that died is VRAM_E_COMM (the MPI error, when the library reports one) or
 * VRAM_E_TIMEOUT (when it does not), never a hang. VRAM_E_NOT_BUILT without MPI. */
VRAM_NODISCARD vram_status vram_comm_mpi(const vram_comm_config *cfg, vram_comm_ops *out);

/* NCCL over device buffers on `device` (this process's GPU: vram_ranks_gpu), its unique id
 * broadcast from rank 0 over `boot` (an MPI or single table with host buffers; its rank and
 * world are the job's). Work is queued on the call's stream (a cudaStream_t); errors are
 * NCCL's asynchronous ones: wait() polls ncclCommGetAsyncError and the stream until done or
 * the timeout, then aborts the communicator (ncclCommAbort) and reports VRAM_E_COMM or
 * VRAM_E_TIMEOUT. VRAM_E_NOT_BUILT without CUDA and NCCL. */
VRAM_NODISCARD vram_status vram_comm_nccl(const vram_comm_config *cfg, const vram_comm_ops *boot,
                                          int device, vram_comm_ops *out);

/* For the backends: writes the table out (a vram_comm_ops *) of a backend whose functions are
 * named after the slots they fill (single_all_reduce, mpi_wait, ...): the version and size, the
 * flags, name, ctx, rank and world given, and every function slot from prefix_<slot>. */
#define VRAM_COMM_OPS_FILL(out, prefix, flags_, name, ctx_, rank_, world_)                        \
    do {                                                                                          \
        (out)->api_version = VRAM_COMM_API_VERSION;                                               \
        (out)->size = (uint32_t)sizeof *(out);                                                    \
        (out)->flags = (flags_);                                                                  \
        (out)->backend = (name);                                                                  \
        (out)->ctx = (ctx_);                                                                      \
        (out)->rank = (rank_);                                                                    \
        (out)->world = (world_);                                                                  \
        (out)->all_reduce = prefix##_all_reduce;                                                  \
        (out)->broadcast = prefix##_broadcast;                                                    \
        (out)->barrier = prefix##_barrier;                                                        \
        (out)->wait = prefix##_wait;                                                              \
        (out)->last_error = prefix##_last_error;                                                  \
        (out)->destroy = prefix##_destroy;                                                        \
    } while (0)

/* ---- training steps across ranks (host buffers) -------------------------------------------
 * Each needs a table with VRAM_COMM_HOST_BUFFERS (else VRAM_E_INVALID) and is called by every
 * rank in the same order. */

/* The loss scaler's end of step across ranks: the flags found_inf[0..n) (one per optimizer)
 * are made 0/1 (NaN counts as found) and all-reduced with MAX in place, then
 * vram_scaler_end_step(s, found_inf, n, mode, rep). So every rank skips the same steps and
 * keeps the same scale. Errors: the communication's, else vram_scaler_end_step's. */
VRAM_NODISCARD vram_status vram_comm_scaler_end_step(const vram_comm_ops *c, vram_scaler *s, float *found_inf,
                                                     unsigned n, int mode, vram_scaler_report *rep);

/* clip_grad_norm_ across ranks over fp32 gradients: each rank's sum of squares (in fp64, each
 * element first times inv_scale; pass 1 for none) all-reduced with SUM, norm = its square root,
 * coef = min(1, max_norm / (norm + 1e-6)), and every gradient times coef (and inv_scale).
 * A non-finite norm leaves the gradients as they are, sets *found_inf = 1 (when found_inf is
 * given: the scaler then skips the step on every rank) and returns VRAM_OK. The global norm is
 * the one process's on the concatenated gradients up to the order of the fp64 additions.
 * Requires: max_norm finite and > 0. norm, coef may be NULL. */
VRAM_NODISCARD vram_status vram_comm_clip_grad_norm(const vram_comm_ops *c, float *const *grads,
                                                    const uint64_t *counts, size_t n, float inv_scale,
                                                    float max_norm, float *norm, float *coef,
                                                    float *found_inf);

/* Gradient averaging for data parallelism: grads[i] = the mean over ranks, in place. */
VRAM_NODISCARD vram_status vram_comm_average(const vram_comm_ops *c, float *grads, uint64_t count);

/* ---- the same on the device, without a host synchronisation (CUDA builds) ---------------
 * Each needs a table with VRAM_COMM_DEVICE_BUFFERS (NCCL) and queues everything on stream. */
struct vram_k_step_info;
/* found_inf (device, n floats as vram_k_unscale leaves them: 0 or 1) all-reduced with MAX on
 * stream, then vram_k_scaler_update(state, found_inf, n, info, stream): the scaler's update
 * on the GPU with the flags of every rank. VRAM_E_NOT_BUILT without the kernels library. */
VRAM_NODISCARD vram_status vram_comm_scaler_update_device(const vram_comm_ops *c, vram_scaler *state,
                                                          float *found_inf, unsigned n,
                                                          struct vram_k_step_info *info, void *stream);

/* clip_grad_norm_ across ranks on the device (tensors as vram_k_clip_grad_norm's; a
 * struct vram_k_tensor list): each rank's squared norm (vram_k_sumsq, inv_scale folded in),
 * all-reduced with SUM into *norm on stream, its square root (vram_k_norm_from_sumsq), the
 * coefficient (vram_k_clip_coef with policy) and the gradients times inv_scale and coef
 * (vram_k_scale): every rank clips by the same global norm, and nothing waits on the host.
 * With one rank the results are vram_k_clip_grad_norm's bit for bit. A non-finite global
 * norm sets *found_inf on every rank under policy SKIP (the scaler then skips on all).
 * Requires: a table with VRAM_COMM_DEVICE_BUFFERS; partials (device) of
 * vram_k_norm_workspace floats; norm, coef (device) non-NULL; found_inf (device) for SKIP.
 * VRAM_E_NOT_BUILT without the kernels library. */
struct vram_k_tensor;
VRAM_NODISCARD vram_status vram_comm_clip_grad_norm_device(const vram_comm_ops *c,
                                                           const struct vram_k_tensor *tensors,
                                                           size_t n, const float *inv_scale,
                                                           float max_norm, int policy,
                                                           float *partials, uint64_t partials_count,
                                                           float *norm, float *coef,
                                                           float *found_inf, void *stream);

#endif /* VRAMKIT_COMM_BACKENDS_H */
