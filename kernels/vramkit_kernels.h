/* vramkit_kernels.h — the CUDA kernels of mixed-precision training, as a plain C API.
 * Non-finite check + unscale over many tensors, the loss scaler's update on the GPU,
 * global L2 norm and clipping, int8 per-row quantisation, fp32/fp16/bf16 casts, row gather. */
#ifndef VRAMKIT_KERNELS_H
#define VRAMKIT_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include <vramkit/base.h>
#include <vramkit/dtype.h>
#include <vramkit/scaler.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Conventions for every function below.
 * - Pointers named "device" (and every tensor's data) are device memory; the others are
 *   host memory read before the function returns (the tensor list, for instance, may be
 *   freed right after the call).
 * - stream is a cudaStream_t (NULL: the legacy default stream). Every function only
 *   enqueues work on it and returns: nothing waits for the GPU, so a whole training step
 *   can be enqueued (or captured into a CUDA graph) without a host synchronisation.
 *   Device scalars (inv_scale, found_inf, norm, coef) are read and written by the kernels
 *   in stream order, never by the host.
 * - The result is VRAM_OK when the work was enqueued; VRAM_E_INVALID / VRAM_E_OVERFLOW for
 *   a bad argument (nothing enqueued). Otherwise a launch (cudaLaunchKernelEx, whose own
 *   return is checked: the runtime's last-error slot is never read, so an older error left
 *   there is never blamed on this call) or a CUDA call failed: the error is classified by
 *   <vramkit/cudaerr.h> (VRAM_E_CUDA_STICKY: the context is gone, end the process),
 *   recorded for vram_k_last_error and cleared from the runtime's slot. The launch that
 *   failed was not enqueued, nor anything after it; a function that takes one launch (every
 *   one but the multi-tensor kernels with long lists, vram_k_l2norm and
 *   vram_k_clip_grad_norm) therefore enqueued nothing, and for the others
 *   vram_k_error.enqueued counts the launches of the failed call that were enqueued (0:
 *   nothing; before retrying an in-place call, check it). Errors inside a kernel show up, as
 *   CUDA makes them, at a later call or synchronisation.
 * - Element types: VRAM_DTYPE_F32, VRAM_DTYPE_F16, VRAM_DTYPE_BF16 (of <vramkit/dtype.h>).
 *   Data must be aligned to its element size; any other alignment and any length work.
 *   The kernels move 16-byte packs (4 floats, 8 halves); data that is not 16-byte aligned
 *   (a view into a tensor, say) takes a slower element-by-element path with the same
 *   results.
 * - Arithmetic is IEEE fp32 (round to nearest-even, subnormals kept, no fused
 *   multiply-add where a reference exists): <vramkit/kref.h> is the CPU reference of each
 *   kernel, bit for bit except for the L2 norm's fp32 summation order; the per-element
 *   arithmetic is kref.h's own VRAM_HD functions, called by the kernels. */

/* Elements per chunk of the multi-tensor kernels (one thread block per chunk). */
#define VRAM_K_CHUNK 65536u
/* Tensors one launch of a multi-tensor kernel holds (its metadata block, passed by value,
 * stays under 4 KiB of kernel parameters); longer lists take several launches. */
#define VRAM_K_MAX_TENSORS_PER_LAUNCH 110u
/* The same with VRAM_K_VARIANT_LIST 1: a metadata block of 28.7 KB, under the 32 KiB of
 * kernel parameters CUDA 12.1 allows on sm_70 and later (GPT-2's 148 tensors in one launch). */
#define VRAM_K_MAX_TENSORS_PER_LAUNCH_LARGE 1024u
/* Chunks one launch covers by default; a longer tensor continues in the next launch. */
#define VRAM_K_MAX_CHUNKS_PER_LAUNCH 16384u

/* One tensor of a multi-tensor call: count elements of type dtype at data (device). */
typedef struct vram_k_tensor {
    void *data;      /* device; may be NULL when count is 0 */
    uint64_t count;  /* elements; 0 is allowed (the tensor is skipped) */
    int32_t dtype;   /* a vram_dtype: F32, F16 or BF16; one list may mix them */
} vram_k_tensor;

/* What a non-finite global norm does to the clipping (vram_k_clip_coef). In both the
 * coefficient is 1: the gradients are not multiplied by NaN or 0. */
typedef enum vram_k_nonfinite {
    VRAM_K_NONFINITE_SKIP = 0,  /* default: *found_inf = 1, so the step is skipped like an
                                   overflow (and the loss scaler backs off) */
    VRAM_K_NONFINITE_REPORT = 1 /* found_inf untouched: the norm (inf/NaN) is the report, the
                                   caller decides (torch's error_if_nonfinite, without raising) */
} vram_k_nonfinite;

/* The loss scaler's results, kept on the device by vram_k_scaler_update and read by the
 * kernels of the next step (and by the host when it asks). */
typedef struct vram_k_step_info {
    float scale;              /* multiply the next loss by this (vram_scaler_scale) */
    float inv_scale;          /* unscale the next gradients by this: pass &info->inv_scale */
    float found_inf;          /* the combined overflow flag the last update consumed */
    int32_t status;           /* vram_status of the last update (VRAM_E_MIN_SCALE: DeepSpeed's
                                 error at the minimum); on any error the state was left
                                 exactly as it was, so the next update starts from it */
    uint32_t skip_mask;       /* bit k: optimizer k's step was skipped (its flag was set) */
    uint32_t reserved;        /* 0 */
    uint64_t steps;           /* the scaler's update count after the last update */
    vram_scaler_result result; /* what the last update did (vram_scaler_update's *out) */
} vram_k_step_info;

/* The last failure of a vram_k_* call in this thread. */
typedef struct vram_k_error {
    int cuda_error;      /* the cudaError_t number (0: none recorded) */
    int cuda_class;      /* its vram_cuda_class */
    vram_status status;  /* what the call returned */
    const char *call;    /* the CUDA call that failed, as written (static) */
    const char *file;    /* where (static) */
    int line;
    unsigned enqueued;   /* launches the failed vram_k_* call had enqueued before the failure
                            (0: the call enqueued nothing) */
} vram_k_error;

/* ---- non-finite check + unscale -------------------------------------------------------- */

/* For every element x of every tensor: x = x * *inv_scale in fp32, rounded back to the
 * tensor's type (skipped when *inv_scale is 1; inv_scale NULL: check only, nothing is
 * written), and *found_inf = 1.0f when an input is inf/NaN or a stored result overflowed to
 * inf (the product, or its rounding to fp16/bf16). found_inf is only ever set: zero it once
 * per step (vram_k_scaler_update does). Chunks of VRAM_K_CHUNK elements, up to
 * VRAM_K_MAX_TENSORS_PER_LAUNCH tensors per launch. Reference: vram_kref_unscale.
 * Requires: tensors valid for n entries (NULL when n is 0); inv_scale (device, may be NULL)
 * the fp64 reciprocal of the scale rounded to fp32 (vram_k_step_info.inv_scale);
 * found_inf (device) non-NULL. */
VRAM_NODISCARD vram_status vram_k_unscale(const vram_k_tensor *tensors, size_t n, const float *inv_scale, float *found_inf,
                           void *stream);

/* ---- the loss scaler on the device ------------------------------------------------------ */

/* Publish a state's scale and reciprocal into *info (status VRAM_OK, nothing else done):
 * the first step's values. Requires: state, info (device) non-NULL; *state valid. */
VRAM_NODISCARD vram_status vram_k_scaler_publish(const vram_scaler *state, vram_k_step_info *info, void *stream);

/* End of the optimizer step on the GPU, by <vramkit/scaler.h>'s own code (the same source
 * the host runs, so the same results bit for bit): vram_scaler_end_step in mode STEP, that
 * is each optimizer k < optimizers takes its step with its flag found_inf[k] (unscaling
 * first when it is still READY, as vram_scaler_step), then vram_scaler_update combines them
 * and moves the scale; all or nothing: when a step or the update fails (info->status), the
 * state is left exactly as it was. *info gets the scale and reciprocal, the status, the skip
 * mask and the result; found_inf[0..) are then zeroed for the next step, also after an
 * error (the refused step's overflow is reported in *info, not carried into the next step).
 * One thread does it: it costs one small launch.
 * Requires: state (device) from vram_scaler_init/restore copied to the GPU; found_inf
 * (device) of `optimizers` floats; 1 <= optimizers <= VRAM_SCALER_MAX_OPTIMIZERS. */
VRAM_NODISCARD vram_status vram_k_scaler_update(vram_scaler *state, float *found_inf, unsigned optimizers,
                                 vram_k_step_info *info, void *stream);

/* The bare state machine (vram_scaler_advance, through vram_scaler_end_step in mode ADVANCE)
 * with one flag, for callers that run their own protocol; all or nothing as
 * vram_k_scaler_update; *found_inf is zeroed afterwards. Requires: as vram_k_scaler_update. */
VRAM_NODISCARD vram_status vram_k_scaler_advance(vram_scaler *state, float *found_inf, vram_k_step_info *info, void *stream);

/* ---- global L2 norm and clipping -------------------------------------------------------- */

/* Floats of workspace vram_k_l2norm asks for this list: one per chunk (the sum of
 * ceil(count / VRAM_K_CHUNK)) and one more (the counter of VRAM_K_VARIANT_NORM 1; a workspace
 * of one per chunk, and at least 1, is enough for the default). Requires: floats non-NULL;
 * tensors valid for n. Guarantees: VRAM_OK; VRAM_E_INVALID for a bad tensor; VRAM_E_OVERFLOW
 * past 2^32 chunks. */
VRAM_NODISCARD vram_status vram_k_norm_workspace(const vram_k_tensor *tensors, size_t n, uint64_t *floats);

/* *norm = sqrt(sum of (x * inv_scale)^2) over every element of every tensor (inv_scale NULL:
 * 1; with the scale's reciprocal this is the norm of the unscaled gradients without
 * unscaling them first). fp32 throughout, in a fixed order: each chunk's sum of squares
 * (the terms vram_kref_sq, added with separate fp32 additions) into partials[chunk]: thread
 * t adds, in index order, the 16-byte packs t, t + 512, ... of the chunk's elements and then
 * its share of the last partial pack, then a fixed tree over the threads; then one block
 * adds the partials in a fixed tree. The order is a function of element indices alone, so
 * the result depends only on the values and the list's chunking: never on scheduling, on
 * how the list is split into launches, or on where a tensor starts in memory (an unaligned
 * tensor is read element by element in the same order).
 * An inf/NaN element gives an inf/NaN norm; squares past fp32's range give inf.
 * Requires: partials (device) of partials_count >= vram_k_norm_workspace floats; norm
 * (device) non-NULL. Reference: vram_kref_sumsq_f64 (relative error of the norm <= 1e-5). */
VRAM_NODISCARD vram_status vram_k_l2norm(const vram_k_tensor *tensors, size_t n, const float *inv_scale, float *partials,
                          uint64_t partials_count, float *norm, void *stream);

/* The squared norm of vram_k_l2norm, before its square root: *sumsq = the same fp32 sum in
 * the same order (so sqrt of it is vram_k_l2norm's *norm bit for bit). For a norm across
 * ranks: each rank's *sumsq, summed by an all-reduce, then vram_k_norm_from_sumsq
 * (comm_steps.c's vram_comm_clip_grad_norm_device). Requires: as vram_k_l2norm. */
VRAM_NODISCARD vram_status vram_k_sumsq(const vram_k_tensor *tensors, size_t n, const float *inv_scale, float *partials,
                                        uint64_t partials_count, float *sumsq, void *stream);

/* *norm = sqrt(*sumsq) in fp32, rounded to nearest (sumsq and norm may be the same float).
 * Requires: sumsq, norm (device) non-NULL. */
VRAM_NODISCARD vram_status vram_k_norm_from_sumsq(const float *sumsq, float *norm, void *stream);

/* *coef = min(1, max_norm / (*norm + 1e-6)) in fp32 (torch.nn.utils.clip_grad_norm_'s
 * coefficient); a non-finite *norm gives *coef = 1 and the policy's action (see
 * vram_k_nonfinite). Reference: vram_kref_clip_coef. Requires: norm, coef (device)
 * non-NULL; max_norm finite and > 0; found_inf (device) non-NULL for SKIP, may be NULL for
 * REPORT; policy a vram_k_nonfinite. */
VRAM_NODISCARD vram_status vram_k_clip_coef(const float *norm, float max_norm, int policy, float *coef, float *found_inf,
                             void *stream);

/* In place: x = (x * *inv_scale) * *coef in fp32, rounded once to the tensor's type (either
 * factor may be NULL: absent; a factor equal to 1 is skipped). When every factor present is
 * 1 the kernel reads the factor and writes nothing. Reference: vram_kref_scale.
 * Requires: tensors as vram_k_unscale; inv_scale, coef device pointers or NULL. */
VRAM_NODISCARD vram_status vram_k_scale(const vram_k_tensor *tensors, size_t n, const float *inv_scale, const float *coef,
                         void *stream);

/* clip_grad_norm_ in three launches and no host synchronisation: vram_k_l2norm (inv_scale
 * folded in), vram_k_clip_coef, then vram_k_scale by inv_scale and coef: the gradients come
 * out unscaled and clipped, *norm holds the norm before clipping. With inv_scale non-NULL
 * this replaces vram_k_unscale: a non-finite element makes the norm non-finite, and policy
 * SKIP sets *found_inf. Requires: as the three functions. */
VRAM_NODISCARD vram_status vram_k_clip_grad_norm(const vram_k_tensor *tensors, size_t n, const float *inv_scale, float max_norm,
                                  int policy, float *partials, uint64_t partials_count, float *norm, float *coef,
                                  float *found_inf, void *stream);

/* ---- int8 per-row quantisation ---------------------------------------------------------- */

/* x (rows x cols, row-major, type dtype) -> q (rows x cols int8) and scales (rows fp32):
 * per row, scale = absmax / 127, q = clamp(round_half_even(x * (1 / scale)), -127, 127)
 * (fp32); a row with inf/NaN gets scale NaN, all-zero codes and sets *nonfinite (device int,
 * may be NULL); a row with absmax < 2^-119 gets scale 0 and zero codes. Reference:
 * vram_kref_quant_int8_row (bit for bit). Requires: x, q, scales (device) non-NULL when
 * rows * cols > 0; rows * cols * 4 < 2^64. */
VRAM_NODISCARD vram_status vram_k_quant_int8_rows(const void *x, int32_t dtype, uint64_t rows, uint64_t cols, int8_t *q,
                                   float *scales, int *nonfinite, void *stream);

/* y[r][c] = q[r][c] * scales[r] in fp32, rounded to dtype. Reference:
 * vram_kref_dequant_int8_row. Requires: as vram_k_quant_int8_rows. */
VRAM_NODISCARD vram_status vram_k_dequant_int8_rows(const int8_t *q, const float *scales, uint64_t rows, uint64_t cols, void *y,
                                     int32_t dtype, void *stream);

/* One matrix of vram_k_quant_int8_rows_many: as vram_k_quant_int8_rows's arguments. */
typedef struct vram_k_quant_item {
    const void *x;   /* device, rows x cols of dtype */
    int8_t *q;       /* device, rows x cols */
    float *scales;   /* device, rows */
    uint64_t rows;
    uint64_t cols;
    int32_t dtype;
} vram_k_quant_item;

/* Every item as vram_k_quant_int8_rows quantises it (the same bits), in a few launches for the
 * whole list instead of one per matrix: one per kind of row present (its dtype, its length's
 * group of threads, aligned or not; more when a launch's metadata is full); rows longer than
 * one pass holds (over 8192 fp16/bf16 or 4096 fp32 columns) take their own two-pass launch.
 * *nonfinite (device, may be NULL) is set when any row of any item holds inf/NaN. Requires:
 * items valid for n (NULL when n is 0); each item as vram_k_quant_int8_rows's arguments, rows
 * < 2^32. Guarantees: VRAM_OK; VRAM_E_INVALID / VRAM_E_OVERFLOW for a bad item (the first
 * found), nothing enqueued; a failed launch as above (vram_k_error.enqueued). */
VRAM_NODISCARD vram_status vram_k_quant_int8_rows_many(const vram_k_quant_item *items, size_t n, int *nonfinite,
                                                       void *stream);

/* ---- casts ------------------------------------------------------------------------------- */

/* dst[i] = src[i] from src_dtype to dst_dtype (fp32, fp16, bf16, any pair): widening exact,
 * narrowing round-to-nearest-even with subnormals, overflow to inf, NaN kept as a NaN.
 * Equal types copy. Reference: vram_kref_cast (bit for bit except NaN payloads). Requires:
 * src, dst (device) non-NULL when count > 0, not overlapping. */
VRAM_NODISCARD vram_status vram_k_cast(const void *src, int32_t src_dtype, void *dst, int32_t dst_dtype, uint64_t count,
                        void *stream);

/* One cast of vram_k_cast_many: count elements from src (src_dtype) into dst (dst_dtype). */
typedef struct vram_k_cast_item {
    const void *src;   /* device */
    void *dst;         /* device */
    uint64_t count;
    int32_t src_dtype;
    int32_t dst_dtype;
} vram_k_cast_item;

/* Every item as vram_k_cast casts it (the same bits), in a few launches for the whole list
 * instead of one per item: one per pair of types present (more when the list passes the list
 * variant's metadata or VRAM_K_MAX_CHUNKS_PER_LAUNCH chunks), a block per VRAM_K_CHUNK
 * elements; items of equal types are copied (cudaMemcpyAsync each, first). Requires: items
 * valid for n (NULL when n is 0); each item as vram_k_cast's arguments. Guarantees: VRAM_OK;
 * VRAM_E_INVALID / VRAM_E_OVERFLOW for a bad item (the first found) or 2^32 chunks in all,
 * with nothing enqueued; a failed launch as above (vram_k_error.enqueued). */
VRAM_NODISCARD vram_status vram_k_cast_many(const vram_k_cast_item *items, size_t n, void *stream);

/* ---- gather -------------------------------------------------------------------------------- */

/* dst[i] = src[index[i]] for i < rows, each row `row_bytes` bytes (any size, any
 * alignment the pointers allow); index values must be < src_rows (checked on device:
 * an out-of-range index sets *bad_index_flag (device int, may be NULL) and copies nothing
 * for that row). Reference: vram_kref_gather_rows. Requires: dst, src, index (device)
 * non-NULL when rows and row_bytes are nonzero (else nothing is done); rows * row_bytes and
 * src_rows * row_bytes < 2^64 (else VRAM_E_OVERFLOW). */
VRAM_NODISCARD vram_status vram_k_gather_rows(void *dst, const void *src, uint64_t src_rows,
                               const uint64_t *index /* device */, uint64_t rows,
                               uint64_t row_bytes, int *bad_index_flag, void *stream);

/* ---- errors and tuning -------------------------------------------------------------------- */

/* The last failed CUDA call of a vram_k_* function in this thread (cuda_error 0 when none).
 * Requires: out non-NULL. Guarantees: VRAM_OK, or VRAM_E_INVALID for NULL. */
VRAM_NODISCARD vram_status vram_k_last_error(vram_k_error *out);

/* Launch shapes of the multi-tensor kernels for this process: at most max_tensors
 * (1 .. VRAM_K_MAX_TENSORS_PER_LAUNCH_LARGE, and never more than the list variant's
 * metadata holds) tensors and max_chunks (>= 1) chunks per launch; 0 restores a default (all
 * the metadata holds; VRAM_K_MAX_CHUNKS_PER_LAUNCH). It changes how many launches a call
 * takes, never a result (the norm included): the hw tests split lists this way. Guarantees:
 * VRAM_OK, VRAM_E_RANGE (nothing changed) for max_tensors above the limit. */
VRAM_NODISCARD vram_status vram_k_set_launch_limits(unsigned max_tensors, unsigned max_chunks);

/* ---- variants (A/B) -------------------------------------------------------------------------- */

/* Kernels with more than one implementation. Every variant computes the same results (the hw
 * tests hold each to the CPU reference, and the norm's variants to each other bit for bit);
 * they differ in speed, which only a GPU can tell: bench_kernels times each against the
 * default on the same data in the same run. Variant 0 is the default. */
typedef enum vram_k_variant_kind {
    /* vram_k_gather_rows. 0: a group of threads per row a quarter as wide as the row's units
     * (up to 256; each thread holds 4 units of the row: no idle lanes for 3 KiB rows), and the
     * index of the thread's next row loaded before the current row is copied (measured 1.18x
     * and 1.24x variant 1 on an H200); 1 (the default before): a group as wide as the row's
     * units, 4 units in flight a thread when the row is longer, each index loaded when its
     * row is copied */
    VRAM_K_VARIANT_GATHER = 0,
    /* the multi-tensor calls (unscale, scale, norm, clipping, vram_k_cast_many,
     * vram_k_quant_int8_rows_many). 0: metadata of at most 4 KiB a launch
     * (VRAM_K_MAX_TENSORS_PER_LAUNCH tensors); 1: up to 32 KiB (..._LARGE) */
    VRAM_K_VARIANT_LIST = 1,
    /* vram_k_l2norm, vram_k_sumsq, vram_k_clip_grad_norm. 0: a final one-block kernel adds the
     * partials; 1: the chunk block that finishes last adds them, in the same order (one launch
     * fewer, the same bits; needs the workspace's extra float, zeroed on the stream first, and
     * falls back to 0 without it) */
    VRAM_K_VARIANT_NORM = 2,
    /* vram_k_cast and vram_k_cast_many from fp16/bf16 to fp32 (the other pairs: 0 always).
     * 0: 8 elements a unit (one 16-byte load, two 16-byte stores 32 bytes apart in a warp);
     * 1: 4 elements a unit (an 8-byte load, one 16-byte store: a warp's store covers 512
     * contiguous bytes, every 32-byte sector written whole by one instruction) */
    VRAM_K_VARIANT_CAST = 3,
    /* vram_k_quant_int8_rows and ..._many, 16-byte aligned rows of the one-pass kernel (up to
     * 8192 fp16/bf16 or 4096 fp32 columns; the others: 0 always). 0: the absmax from the
     * elements converted to fp32, all-zero codes selected element by element; 1: the absmax
     * as the unsigned maximum of the elements' magnitude bits (two fp16/bf16 an instruction;
     * inf and NaN are the largest: the row is non-finite when the maximum reaches the
     * exponent's all-ones), all-zero codes by one branch a row */
    VRAM_K_VARIANT_QUANT = 4,
    /* the norm (vram_k_l2norm, vram_k_sumsq, vram_k_clip_grad_norm's norm) on fp16/bf16
     * tensors (fp32 and unscale/scale: 0 always). 0: 2 16-byte packs a step, the aligned or
     * element-by-element load chosen pack by pack (compiled, it has one load in flight a
     * thread); 1: the aligned and unaligned loops apart, 4 packs in flight (64 bytes, as
     * fp32). Each thread adds its elements in the same order: the norm's bits are the
     * default's */
    VRAM_K_VARIANT_HALF = 5,
    VRAM_K_VARIANT_KINDS = 6
} vram_k_variant_kind;

/* This process's variant of a kernel (0 restores the default); for every thread. Guarantees:
 * VRAM_OK; VRAM_E_RANGE (nothing changed) for an unknown kind or variant. */
VRAM_NODISCARD vram_status vram_k_set_variant(int kind, int variant);

/* How many variants a kind has; 0 for an unknown kind. */
int vram_k_variants(int kind);

#ifdef __cplusplus
}
#endif

#endif /* VRAMKIT_KERNELS_H */
