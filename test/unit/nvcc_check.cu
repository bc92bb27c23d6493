// nvcc_check.cu — the core compiles as CUDA device code: the loss scaler's state machine and
// its per-step protocol run inside a kernel, the way a fused training step uses them.
// Compiled, never run, by ctest vendor_nvcc_device (nvcc -Werror all-warnings).
#include <vramkit/scaler.h>

// One optimizer step on the device: record the non-finite check, step, update the scale.
__global__ void vram_check_scaler_kernel(vram_scaler *s, const float *found_inf, int *skip,
                                         vram_scaler_result *res, float *inv_scale, int *status) {
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    vram_status st = vram_scaler_unscale(s, 0, found_inf[0]);
    if (st == VRAM_OK) st = vram_scaler_step(s, 0, 0.0f, skip);
    if (st == VRAM_OK) st = vram_scaler_step(s, 1, found_inf[1], skip + 1);
    if (st == VRAM_OK) st = vram_scaler_update(s, res);
    if (st == VRAM_OK) st = vram_scaler_advance(s, found_inf[2], res);
    *inv_scale = vram_scaler_inv_scale(s) * vram_scaler_scale(s);
    *status = (int)st;
}

// Setting up and checkpointing on the device too.
__global__ void vram_check_scaler_setup_kernel(vram_scaler *s, vram_scaler_saved *saved, int *status) {
    vram_scaler_cfg c;
    int stage = 0;
    vram_status st = vram_scaler_preset(VRAM_SCALER_PRESET_MEGATRON, &c);
    if (st == VRAM_OK) st = vram_scaler_validate(&c);
    c = vram_scaler_defaults(&c);
    if (st == VRAM_OK) st = vram_scaler_init(s, &c);
    if (st == VRAM_OK) st = vram_scaler_save(s, saved);
    if (st == VRAM_OK) st = vram_scaler_restore(s, saved);
    if (st == VRAM_OK) st = vram_scaler_get_stage(s, 0, &stage);
    *status = (int)st + stage;
}

// The GPU's end of step (what kernels/scaler_kernel.cu runs): all or nothing.
__global__ void vram_check_scaler_end_kernel(vram_scaler *s, const float *found_inf, vram_scaler_report *rep,
                                             int *status) {
    *status = (int)vram_scaler_end_step(s, found_inf, 2, VRAM_SCALER_FLAGS_STEP, rep);
}
