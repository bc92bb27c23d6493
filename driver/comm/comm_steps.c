/* driver/comm/comm_steps.c — the numerics of a training step across ranks, over any
 * communication table: the loss scaler's found-inf flags reduced before the update, the
 * squared norms summed before the clip coefficient, gradients averaged. The host versions use
 * the core's references (kref.h) so one rank gives exactly the one-process result; the device
 * version chains NCCL and the kernels library on one stream. */
#include <math.h>
#include <string.h>

#include <vramkit/kref.h>

#include "comm/comm_backends.h"

#if defined(VRAMKIT_HAVE_CUDA) && defined(__has_include)
#if __has_include(<vramkit_kernels.h>)
#include <vramkit_kernels.h>
#define COMM_HAVE_KERNELS 1
#endif
#endif

static int host_table(const vram_comm_ops *c) {
    return vram_comm_ops_check(c) == VRAM_OK && (c->flags & VRAM_COMM_HOST_BUFFERS) != 0u;
}

vram_status vram_comm_scaler_end_step(const vram_comm_ops *c, vram_scaler *s, float *found_inf,
                                      unsigned n, int mode, vram_scaler_report *rep) {
    vram_status st;
    if (!host_table(c) || s == NULL || found_inf == NULL || rep == NULL || n < 1u ||
        n > VRAM_SCALER_MAX_OPTIMIZERS)
        return VRAM_E_INVALID;
    /* 0 or 1 before the MAX: a NaN flag means found, and MPI's MAX of a NaN is unspecified */
    for (unsigned k = 0; k < n; k++) found_inf[k] = found_inf[k] != 0.0f ? 1.0f : 0.0f;
    st = c->all_reduce(c->ctx, found_inf, found_inf, n, VRAM_COMM_F32, VRAM_COMM_MAX, NULL);
    if (st != VRAM_OK) return st;
    return vram_scaler_end_step(s, found_inf, n, mode, rep);
}

vram_status vram_comm_clip_grad_norm(const vram_comm_ops *c, float *const *grads, const uint64_t *counts,
                                     size_t n, float inv_scale, float max_norm, float *norm,
                                     float *coef, float *found_inf) {
    double sumsq = 0.0;
    float total, k;
    vram_status st;
    if (!host_table(c) || (n > 0u && (grads == NULL || counts == NULL)) || !(max_norm > 0.0f) ||
        !vram_kref_isfinite(max_norm) || !vram_kref_isfinite(inv_scale))
        return VRAM_E_INVALID;
    for (size_t i = 0; i < n; i++) {
        if ((st = vram_kref_sumsq_f64(grads[i], counts[i], VRAM_DTYPE_F32, inv_scale, &sumsq)) != VRAM_OK)
            return st;
    }
    st = c->all_reduce(c->ctx, &sumsq, &sumsq, 1, VRAM_COMM_F64, VRAM_COMM_SUM, NULL);
    if (st != VRAM_OK) return st;
    total = (float)sqrt(sumsq);
    if (vram_kref_clip_coef(total, max_norm, &k) != 0) {
        /* inf/NaN somewhere on some rank: every rank sees it in the sum and skips alike */
        if (found_inf != NULL) *found_inf = 1.0f;
    } else if (k != 1.0f || inv_scale != 1.0f) {
        for (size_t i = 0; i < n; i++)
            for (uint64_t e = 0; e < counts[i]; e++)
                grads[i][e] = vram_kref_scale_value(grads[i][e], inv_scale, k);
    }
    if (norm != NULL) *norm = total;
    if (coef != NULL) *coef = k;
    return VRAM_OK;
}

vram_status vram_comm_average(const vram_comm_ops *c, float *grads, uint64_t count) {
    if (!host_table(c)) return VRAM_E_INVALID;
    return c->all_reduce(c->ctx, grads, grads, count, VRAM_COMM_F32, VRAM_COMM_AVG, NULL);
}

vram_status vram_comm_scaler_update_device(const vram_comm_ops *c, vram_scaler *state, float *found_inf,
                                           unsigned n, struct vram_k_step_info *info, void *stream) {
    if (vram_comm_ops_check(c) != VRAM_OK || (c->flags & VRAM_COMM_DEVICE_BUFFERS) == 0u ||
        state == NULL || found_inf == NULL || info == NULL || n < 1u || n > VRAM_SCALER_MAX_OPTIMIZERS)
        return VRAM_E_INVALID;
#ifdef COMM_HAVE_KERNELS
    /* the flags of every rank, then the update: both queued on the stream, nothing waits */
    vram_status st = c->all_reduce(c->ctx, found_inf, found_inf, n, VRAM_COMM_F32, VRAM_COMM_MAX, stream);
    if (st != VRAM_OK) return st;
    return vram_k_scaler_update(state, found_inf, n, info, stream);
#else
    (void)stream;
    return VRAM_E_NOT_BUILT;
#endif
}

vram_status vram_comm_clip_grad_norm_device(const vram_comm_ops *c, const struct vram_k_tensor *tensors,
                                            size_t n, const float *inv_scale, float max_norm, int policy,
                                            float *partials, uint64_t partials_count, float *norm,
                                            float *coef, float *found_inf, void *stream) {
    if (vram_comm_ops_check(c) != VRAM_OK || (c->flags & VRAM_COMM_DEVICE_BUFFERS) == 0u ||
        norm == NULL || coef == NULL || partials == NULL || !(max_norm > 0.0f) || !isfinite(max_norm))
        return VRAM_E_INVALID;
#ifdef COMM_HAVE_KERNELS
    uint64_t need = 0;
    /* every argument checked before anything is queued: an error leaves nothing half done */
    if ((policy != VRAM_K_NONFINITE_SKIP && policy != VRAM_K_NONFINITE_REPORT) ||
        (policy == VRAM_K_NONFINITE_SKIP && found_inf == NULL) ||
        vram_k_norm_workspace(tensors, n, &need) != VRAM_OK || partials_count < need)
        return VRAM_E_INVALID;
    /* all queued on stream, in order: this rank's sum of squares, every rank's summed, the
       norm, the coefficient, the gradients; the host never waits */
    vram_status st = vram_k_sumsq(tensors, n, inv_scale, partials, partials_count, norm, stream);
    if (st != VRAM_OK) return st;
    st = c->all_reduce(c->ctx, norm, norm, 1, VRAM_COMM_F32, VRAM_COMM_SUM, stream);
    if (st != VRAM_OK) return st;
    if ((st = vram_k_norm_from_sumsq(norm, norm, stream)) != VRAM_OK) return st;
    if ((st = vram_k_clip_coef(norm, max_norm, policy, coef, found_inf, stream)) != VRAM_OK) return st;
    return vram_k_scale(tensors, n, inv_scale, coef, stream);
#else
    (void)tensors, (void)n, (void)inv_scale, (void)policy, (void)partials_count, (void)found_inf;
    (void)stream;
    return VRAM_E_NOT_BUILT;
#endif
}
