/* vendor_check.c — stands for a user's file outside the repository: it includes the whole
 * core with nothing but `-I include` and must compile warning-free as C11 (gcc, clang) and
 * as C++17 (g++). ctest compiles it (tests vendor_*); it is never linked or run. */
#include <vramkit/vramkit.h>

int vendor_check(void);
int vendor_check(void) {
    uint64_t bytes = 0;
    vram_status s = vram__mul_u64(1u << 20, 64u, &bytes);
    int failed = s != VRAM_OK || vram_status_str(s)[0] == '\0';
    failed |= vram_cuda_error_class(700) != VRAM_CUDA_STICKY;
    failed |= vram_device_ops_check(NULL) != VRAM_E_INVALID;
    return failed;
}
