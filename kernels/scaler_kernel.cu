// scaler_kernel.cu — the loss scaler's update on the GPU: <vramkit/scaler.h> compiled as
// device code (VRAM_HD), so the state machine that moves the scale is the very source the host
// runs and gives the same results bit for bit; a training step needs no host synchronisation
// to learn whether it overflowed or what the next scale is.
#include <vramkit/scaler.h>

#include "vk_internal.cuh"

namespace {

enum vk_scaler_mode { VK_PUBLISH = 0, VK_UPDATE = 1, VK_ADVANCE = 2 };

// One thread: the state is read into registers, moved by scaler.h, written back.
__global__ void vk_scaler_kernel(vram_scaler *state, float *found_inf, unsigned optimizers,
                                 vram_k_step_info *info, int mode) {
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    vram_scaler s = *state;
    vram_scaler_result r;
    memset(&r, 0, sizeof r);
    vram_status st = VRAM_OK;
    uint32_t mask = 0;
    float combined = 0.0f;
    if (mode == VK_UPDATE) {
        for (unsigned k = 0; k < optimizers && st == VRAM_OK; k++) {
            int skip = 0;
            float f = found_inf[k];
            if (f != 0.0f) combined = 1.0f; // NaN included, as scaler.h counts it
            st = vram_scaler_step(&s, k, f, &skip);
            if (st == VRAM_OK && skip) mask |= 1u << k;
        }
        if (st == VRAM_OK) st = vram_scaler_update(&s, &r);
    } else if (mode == VK_ADVANCE) {
        float f = found_inf[0];
        if (f != 0.0f) combined = 1.0f;
        st = vram_scaler_advance(&s, f, &r);
        if (r.skipped) mask = 1u;
    }
    if (mode != VK_PUBLISH) {
        *state = s;
        for (unsigned k = 0; k < optimizers; k++) found_inf[k] = 0.0f;
    }
    vram_k_step_info out;
    memset(&out, 0, sizeof out);
    out.scale = vram_scaler_scale(&s);
    out.inv_scale = vram_scaler_inv_scale(&s);
    out.found_inf = combined;
    out.status = (int32_t)st;
    out.skip_mask = mask;
    out.steps = s.steps;
    out.result = r;
    *info = out;
}

vram_status vk_scaler_launch(vram_scaler *state, float *found_inf, unsigned optimizers, vram_k_step_info *info,
                             int mode, void *stream) {
    vk_scaler_kernel<<<1, 32, 0, static_cast<cudaStream_t>(stream)>>>(state, found_inf, optimizers, info, mode);
    VK_LAUNCHED("vk_scaler_kernel");
    return VRAM_OK;
}

} // namespace

extern "C" vram_status vram_k_scaler_publish(const vram_scaler *state, vram_k_step_info *info, void *stream) {
    if (state == nullptr || info == nullptr) return VRAM_E_INVALID;
    // the kernel reads the state only in this mode
    return vk_scaler_launch(const_cast<vram_scaler *>(state), nullptr, 0, info, VK_PUBLISH, stream);
}

extern "C" vram_status vram_k_scaler_update(vram_scaler *state, float *found_inf, unsigned optimizers,
                                            vram_k_step_info *info, void *stream) {
    if (state == nullptr || found_inf == nullptr || info == nullptr || optimizers == 0u ||
        optimizers > VRAM_SCALER_MAX_OPTIMIZERS)
        return VRAM_E_INVALID;
    return vk_scaler_launch(state, found_inf, optimizers, info, VK_UPDATE, stream);
}

extern "C" vram_status vram_k_scaler_advance(vram_scaler *state, float *found_inf, vram_k_step_info *info,
                                             void *stream) {
    if (state == nullptr || found_inf == nullptr || info == nullptr) return VRAM_E_INVALID;
    return vk_scaler_launch(state, found_inf, 1, info, VK_ADVANCE, stream);
}
