/* test_kernels_nogpu.c — the kernels library's one checking path where no kernel can run (no
 * driver or no GPU: this machine, CI): arguments are refused before any CUDA call and record
 * nothing; a launch that fails returns the classified status, records the code, its class,
 * the launch by name and 0 enqueued launches. Where a GPU is usable every test here skips
 * (a launch there would run on these host pointers); test/hw covers that side. */
#include <criterion/criterion.h>
#include <cuda_runtime_api.h>
#include <string.h>

#include <vramkit/cudaerr.h>
#include <vramkit_kernels.h>

static void no_gpu_or_skip(void) {
    int n = 0;
    if (cudaGetDeviceCount(&n) == cudaSuccess && n > 0) cr_skip_test("a GPU is usable here: see test/hw");
}

TestSuite(kernels_nogpu, .init = no_gpu_or_skip);

Test(kernels_nogpu, refused_arguments_record_nothing) {
    vram_k_error e;
    float host[8] = {0};
    vram_k_tensor bad = {host, 8, VRAM_DTYPE_I32};
    cr_assert_eq(vram_k_unscale(&bad, 1, NULL, host, NULL), VRAM_E_INVALID);
    cr_assert_eq(vram_k_cast(host, VRAM_DTYPE_F32, host + 4, VRAM_DTYPE_U8, 4, NULL), VRAM_E_INVALID);
    cr_assert_eq(vram_k_cast(host, VRAM_DTYPE_F32, host + 4, VRAM_DTYPE_F16, 0, NULL), VRAM_OK);
    cr_assert_eq(vram_k_last_error(&e), VRAM_OK);
    cr_assert_eq(e.cuda_error, 0, "no CUDA call was made, none failed");
    cr_assert_eq(e.call, NULL);
}

Test(kernels_nogpu, a_failed_launch_is_classified_recorded_and_enqueued_nothing) {
    float host[8] = {1, 2, 3, 4, 5, 6, 7, 8}, flag = 0.0f;
    vram_k_tensor t = {host, 8, VRAM_DTYPE_F32};
    vram_status st = vram_k_unscale(&t, 1, NULL, &flag, NULL);
    vram_k_error e;
    cr_assert_eq(vram_k_last_error(&e), VRAM_OK);
    cr_assert_neq(st, VRAM_OK);
    cr_assert_neq(e.cuda_error, 0);
    cr_assert_eq(e.status, st);
    cr_assert_eq(st, vram_cuda_verdict_of(e.cuda_error).status, "the core's verdict decides the status");
    cr_assert_eq(e.cuda_class, (int)vram_cuda_error_class(e.cuda_error));
    cr_assert_str_eq(e.call, "launch vram__k_unscale_kernel");
    cr_assert_eq(e.enqueued, 0u);
    cr_assert_not_null(strstr(e.file, "amp.cu"));
    cr_assert_eq(host[0], 1.0f, "nothing ran");
    /* a grid-stride kernel asks for the device first; that failure is recorded the same way */
    st = vram_k_cast(host, VRAM_DTYPE_F32, host + 4, VRAM_DTYPE_F16, 2, NULL);
    cr_assert_eq(vram_k_last_error(&e), VRAM_OK);
    cr_assert_neq(st, VRAM_OK);
    cr_assert_eq(e.status, st);
    cr_assert_eq(e.enqueued, 0u);
    cr_assert_str_eq(e.call, "launch vram__k_cast_kernel");
}
