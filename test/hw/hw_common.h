/* Shared by the hw tests: a Criterion main that exits 77 (ctest: skipped) when no CUDA
 * device can be used, so `ctest -L hw` on a machine without a GPU says "skipped", not
 * "passed". Use: put VRAM_HW_MAIN() once in each hw test file. */
#ifndef VRAMKIT_HW_COMMON_H
#define VRAMKIT_HW_COMMON_H
#include <criterion/criterion.h>
#include <cuda_runtime_api.h>
#include <stdio.h>

static inline int vram_hw_device_available(void) {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        fprintf(stderr, "hw: no usable CUDA device (%s): skipped\n",
                e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
        return 0;
    }
    return 1;
}

#define VRAM_HW_MAIN()                                           \
    int main(int argc, char *argv[]) {                           \
        if (!vram_hw_device_available()) return 77;              \
        struct criterion_test_set *tests = criterion_initialize(); \
        int result = 0;                                          \
        if (criterion_handle_args(argc, argv, true))             \
            result = !criterion_run_all_tests(tests);            \
        criterion_finalize(tests);                               \
        return result;                                           \
    }
#endif
