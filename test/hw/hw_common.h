/* Shared by the hw tests: a Criterion main that exits 77 (ctest: skipped) when no CUDA
 * device can be used, so `ctest -L hw` on a machine without a GPU says "skipped", not
 * "passed"; the test-side checks of CUDA and vram_status results (one place, not a copy per
 * file); a fixed random stream. Use: put VRAM_HW_MAIN() once in each hw test file. */
#ifndef VRAMKIT_HW_COMMON_H
#define VRAMKIT_HW_COMMON_H
#include <criterion/criterion.h>
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdio.h>

#include <vramkit/base.h>

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

/* A CUDA runtime call that must succeed: the test fails with the call's text and the error. */
#define VRAM_HW_CUDA(call)                                                                       \
    do {                                                                                         \
        cudaError_t vram_hw_e_ = (call);                                                         \
        cr_assert_eq(vram_hw_e_, cudaSuccess, "%s: %s (%d)", #call, cudaGetErrorString(vram_hw_e_), \
                     (int)vram_hw_e_);                                                           \
    } while (0)

/* A vramkit call that must return VRAM_OK. */
#define VRAM_HW_OK(call)                                                                        \
    do {                                                                                        \
        vram_status vram_hw_st_ = (call);                                                       \
        cr_assert_eq(vram_hw_st_, VRAM_OK, "%s: %s", #call, vram_status_name(vram_hw_st_));     \
    } while (0)

#ifdef __cplusplus
/* A device scalar holding v (the .cu tests), and a device scalar's value. */
template <typename T> T *vram_hw_dev_scalar(T v) {
    T *p = nullptr;
    VRAM_HW_CUDA(cudaMalloc(&p, sizeof(T)));
    VRAM_HW_CUDA(cudaMemcpy(p, &v, sizeof v, cudaMemcpyHostToDevice));
    return p;
}
template <typename T> T vram_hw_read_scalar(const T *p) {
    T v;
    VRAM_HW_CUDA(cudaMemcpy(&v, p, sizeof v, cudaMemcpyDeviceToHost));
    return v;
}
#endif

/* xorshift64*: a fixed stream, so a failure reproduces. */
static inline uint64_t vram_hw_rng_next(uint64_t *x) {
    *x ^= *x >> 12;
    *x ^= *x << 25;
    *x ^= *x >> 27;
    return *x * 0x2545F4914F6CDD1DULL;
}
#endif
