/* vendor_check.c — stands for a user's file outside the repository: it includes the whole
 * core with nothing but `-I include` and must compile warning-free as C11 (gcc, clang) and
 * as C++17 (g++). ctest compiles it (tests vendor_*); it is never linked or run. */
#include <string.h>

#include <vramkit/vramkit.h>

int vendor_check(void);
int vendor_check(void) {
    uint64_t bytes = 0;
    vram_status s = vram__mul_u64(1u << 20, 64u, &bytes);
    int failed = s != VRAM_OK || vram_status_str(s)[0] == '\0';
    failed |= vram_cuda_error_class(700) != VRAM_CUDA_STICKY;
    failed |= vram_device_ops_check(NULL) != VRAM_E_INVALID;

    vram_chunks_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.samples = 51779;
    cfg.sample_bytes = 240624;
    cfg.batch = 128;
    cfg.free_bytes = 16ull << 30;
    vram_chunks_plan plan;
    failed |= vram_chunks_make(&cfg, &plan) != VRAM_OK;

    vram_scaler_cfg scfg;
    vram_scaler sc;
    vram_scaler_result res;
    failed |= vram_scaler_preset(VRAM_SCALER_PRESET_PYTORCH, &scfg) != VRAM_OK;
    failed |= vram_scaler_init(&sc, &scfg) != VRAM_OK;
    failed |= vram_scaler_advance(&sc, 1.0f, &res) != VRAM_OK;
    return failed;
}
