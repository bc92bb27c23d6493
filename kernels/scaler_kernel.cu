// scaler_kernel.cu — the loss scaler's update on the GPU: <vramkit/scaler.h> compiled as
// device code (VRAM_HD), so the state machine that moves the scale is the very source the host
// runs and gives the same results bit for bit; a training step needs no host synchronisation
// to learn whether it overflowed or what the next scale is.
#include <vramkit/scaler.h>

#include "vk_internal.cuh"

namespace {

enum vram__k_scaler_mode { VRAM__K_PUBLISH = 0, VRAM__K_UPDATE = 1, VRAM__K_ADVANCE = 2 };

// One thread: the state is read into registers and ended by scaler.h's vram_scaler_end_step,
// which moves it only when every step and the update succeed (on an error, VRAM_E_MIN_SCALE
// included, the state stays as it was, so the next update starts from it); the flags are
// consumed either way, so a refused step's overflow is not counted again by the next one.
__global__ void vram__k_scaler_kernel(vram_scaler *state, float *found_inf, unsigned optimizers,
                                      vram_k_step_info *info, int mode) {
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    vram_scaler s = *state;
    vram_scaler_report rep;
    memset(&rep, 0, sizeof rep);
    vram_status st = VRAM_OK;
    if (mode != VRAM__K_PUBLISH) {
        st = vram_scaler_end_step(&s, found_inf, optimizers,
                                  mode == VRAM__K_ADVANCE ? VRAM_SCALER_FLAGS_ADVANCE : VRAM_SCALER_FLAGS_STEP, &rep);
        if (st == VRAM_OK) *state = s;
        for (unsigned k = 0; k < optimizers; k++) found_inf[k] = 0.0f;
    }
    vram_k_step_info out;
    memset(&out, 0, sizeof out);
    out.scale = vram_scaler_scale(&s);
    out.inv_scale = vram_scaler_inv_scale(&s);
    out.found_inf = rep.found_inf;
    out.status = (int32_t)st;
    out.skip_mask = rep.skip_mask;
    out.steps = s.steps;
    out.result = rep.result;
    *info = out;
}

vram_status vram__k_scaler_launch(vram_scaler *state, float *found_inf, unsigned optimizers, vram_k_step_info *info,
                                  int mode, void *stream) {
    return VRAM__K_LAUNCH("vram__k_scaler_kernel", vram__k_scaler_kernel, dim3(1), dim3(32),
                          static_cast<cudaStream_t>(stream), state, found_inf, optimizers, info, mode);
}

} // namespace

extern "C" vram_status vram_k_scaler_publish(const vram_scaler *state, vram_k_step_info *info, void *stream) {
    vram__k_begin();
    if (state == nullptr || info == nullptr) return VRAM_E_INVALID;
    // the kernel reads the state only in this mode
    return vram__k_scaler_launch(const_cast<vram_scaler *>(state), nullptr, 0, info, VRAM__K_PUBLISH, stream);
}

extern "C" vram_status vram_k_scaler_update(vram_scaler *state, float *found_inf, unsigned optimizers,
                                            vram_k_step_info *info, void *stream) {
    vram__k_begin();
    if (state == nullptr || found_inf == nullptr || info == nullptr || optimizers == 0u ||
        optimizers > VRAM_SCALER_MAX_OPTIMIZERS)
        return VRAM_E_INVALID;
    return vram__k_scaler_launch(state, found_inf, optimizers, info, VRAM__K_UPDATE, stream);
}

extern "C" vram_status vram_k_scaler_advance(vram_scaler *state, float *found_inf, vram_k_step_info *info,
                                             void *stream) {
    vram__k_begin();
    if (state == nullptr || found_inf == nullptr || info == nullptr) return VRAM_E_INVALID;
    return vram__k_scaler_launch(state, found_inf, 1, info, VRAM__K_ADVANCE, stream);
}
