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

/* The variant switches and the multi-tensor calls' argument checks need no GPU: refused before any
 * CUDA call, nothing recorded; a launch that fails names the multi-tensor kernel. */
Test(kernels_nogpu, variants_are_switched_and_range_checked) {
    cr_assert_eq(vram_k_variants(VRAM_K_VARIANT_GATHER), 2);
    cr_assert_eq(vram_k_variants(VRAM_K_VARIANT_LIST), 2);
    cr_assert_eq(vram_k_variants(VRAM_K_VARIANT_NORM), 2);
    cr_assert_eq(vram_k_variants(VRAM_K_VARIANT_CAST), 2);
    cr_assert_eq(vram_k_variants(VRAM_K_VARIANT_QUANT), 2);
    cr_assert_eq(vram_k_variants(VRAM_K_VARIANT_HALF), 2);
    cr_assert_eq(vram_k_variants(VRAM_K_VARIANT_KINDS), 0);
    cr_assert_eq(vram_k_variants(-1), 0);
    cr_assert_eq(vram_k_set_variant(-1, 0), VRAM_E_RANGE);
    cr_assert_eq(vram_k_set_variant(VRAM_K_VARIANT_KINDS, 0), VRAM_E_RANGE);
    cr_assert_eq(vram_k_set_variant(VRAM_K_VARIANT_NORM, 2), VRAM_E_RANGE);
    cr_assert_eq(vram_k_set_variant(VRAM_K_VARIANT_NORM, -1), VRAM_E_RANGE);
    cr_assert_eq(vram_k_set_variant(VRAM_K_VARIANT_NORM, 1), VRAM_OK);
    cr_assert_eq(vram_k_set_variant(VRAM_K_VARIANT_NORM, 0), VRAM_OK);
    for (int k = VRAM_K_VARIANT_CAST; k <= VRAM_K_VARIANT_HALF; k++) {
        cr_assert_eq(vram_k_set_variant(k, 2), VRAM_E_RANGE, "kind %d", k);
        cr_assert_eq(vram_k_set_variant(k, 1), VRAM_OK, "kind %d", k);
        cr_assert_eq(vram_k_set_variant(k, 0), VRAM_OK, "kind %d", k);
    }
    cr_assert_eq(vram_k_set_launch_limits(VRAM_K_MAX_TENSORS_PER_LAUNCH_LARGE + 1, 0), VRAM_E_RANGE);
    cr_assert_eq(vram_k_set_launch_limits(VRAM_K_MAX_TENSORS_PER_LAUNCH_LARGE, 0), VRAM_OK);
    cr_assert_eq(vram_k_set_launch_limits(0, 0), VRAM_OK);
}

/* A variant's launch fails and is recorded as the default's: the same kernel name, nothing enqueued. */
Test(kernels_nogpu, a_variant_launch_fails_like_the_default) {
    uint16_t half[8] = {0};
    float out[8];
    vram_k_error e;
    cr_assert_eq(vram_k_set_variant(VRAM_K_VARIANT_CAST, 1), VRAM_OK);
    vram_status st = vram_k_cast(half, VRAM_DTYPE_F16, out, VRAM_DTYPE_F32, 8, NULL);
    cr_assert_eq(vram_k_set_variant(VRAM_K_VARIANT_CAST, 0), VRAM_OK);
    cr_assert_neq(st, VRAM_OK);
    cr_assert_eq(vram_k_last_error(&e), VRAM_OK);
    cr_assert_eq(e.status, st);
    cr_assert_eq(e.enqueued, 0u);
    cr_assert_str_eq(e.call, "launch vram__k_cast_kernel");
    cr_assert_eq(vram_k_set_variant(VRAM_K_VARIANT_QUANT, 1), VRAM_OK);
    int8_t q[8];
    float scale;
    st = vram_k_quant_int8_rows(half, VRAM_DTYPE_F16, 1, 8, q, &scale, NULL, NULL);
    cr_assert_eq(vram_k_set_variant(VRAM_K_VARIANT_QUANT, 0), VRAM_OK);
    cr_assert_neq(st, VRAM_OK);
    cr_assert_eq(vram_k_last_error(&e), VRAM_OK);
    cr_assert_eq(e.status, st);
    cr_assert_str_eq(e.call, "launch vram__k_quant_kernel");
}

Test(kernels_nogpu, norm_workspace_is_a_float_a_chunk_and_the_counter) {
    float host[4];
    vram_k_tensor t[2] = {{host, VRAM_K_CHUNK + 1, VRAM_DTYPE_F32}, {NULL, 0, VRAM_DTYPE_F16}};
    uint64_t ws = 0;
    cr_assert_eq(vram_k_norm_workspace(t, 2, &ws), VRAM_OK);
    cr_assert_eq(ws, 3u, "two chunks and the counter");
    cr_assert_eq(vram_k_norm_workspace(NULL, 0, &ws), VRAM_OK);
    cr_assert_eq(ws, 1u, "an empty list: the counter's float (and the final kernel's least)");
}

Test(kernels_nogpu, many_calls_refuse_bad_items_and_record_nothing) {
    float host[16] = {0};
    vram_k_error e;
    const vram_k_cast_item good = {host, host + 8, 4, VRAM_DTYPE_F32, VRAM_DTYPE_F16};
    vram_k_cast_item c[2] = {good, good};
    c[1].dst_dtype = VRAM_DTYPE_I8;
    cr_assert_eq(vram_k_cast_many(c, 2, NULL), VRAM_E_INVALID, "a bad second item refuses the whole call");
    c[1] = good;
    c[1].src = NULL;
    cr_assert_eq(vram_k_cast_many(c, 2, NULL), VRAM_E_INVALID, "NULL with elements");
    c[1] = good;
    c[1].dst = (unsigned char *)host + 1;
    cr_assert_eq(vram_k_cast_many(c, 2, NULL), VRAM_E_INVALID, "a misaligned fp16 buffer");
    c[1] = good;
    c[1].count = UINT64_MAX / 2;
    cr_assert_eq(vram_k_cast_many(c, 2, NULL), VRAM_E_OVERFLOW);
    cr_assert_eq(vram_k_cast_many(NULL, 1, NULL), VRAM_E_INVALID);
    cr_assert_eq(vram_k_cast_many(NULL, 0, NULL), VRAM_OK, "an empty list does nothing");
    const vram_k_quant_item qgood = {host, (int8_t *)(host + 8), host + 12, 2, 2, VRAM_DTYPE_F32};
    vram_k_quant_item q[2] = {qgood, qgood};
    q[1].dtype = VRAM_DTYPE_U8;
    cr_assert_eq(vram_k_quant_int8_rows_many(q, 2, NULL, NULL), VRAM_E_INVALID);
    q[1] = qgood;
    q[1].scales = NULL;
    cr_assert_eq(vram_k_quant_int8_rows_many(q, 2, NULL, NULL), VRAM_E_INVALID);
    q[1] = qgood;
    q[1].rows = UINT64_MAX;
    cr_assert_eq(vram_k_quant_int8_rows_many(q, 2, NULL, NULL), VRAM_E_OVERFLOW);
    q[1] = qgood;
    q[1].rows = 1ull << 32;
    q[1].cols = 1;
    cr_assert_eq(vram_k_quant_int8_rows_many(q, 2, NULL, NULL), VRAM_E_OVERFLOW, "2^32 rows");
    cr_assert_eq(vram_k_quant_int8_rows_many(NULL, 2, NULL, NULL), VRAM_E_INVALID);
    cr_assert_eq(vram_k_last_error(&e), VRAM_OK);
    cr_assert_eq(e.cuda_error, 0, "no CUDA call was made, none failed");
}

Test(kernels_nogpu, a_failed_many_launch_is_recorded_by_name) {
    float host[16] = {1, 2, 3, 4};
    vram_k_error e;
    const vram_k_cast_item c = {host, host + 8, 4, VRAM_DTYPE_F32, VRAM_DTYPE_F16};
    vram_status st = vram_k_cast_many(&c, 1, NULL);
    cr_assert_neq(st, VRAM_OK);
    cr_assert_eq(vram_k_last_error(&e), VRAM_OK);
    cr_assert_eq(e.status, st);
    cr_assert_str_eq(e.call, "launch vram__k_cast_many_kernel");
    cr_assert_eq(e.enqueued, 0u);
    const vram_k_quant_item q = {host, (int8_t *)(host + 8), host + 12, 2, 2, VRAM_DTYPE_F32};
    st = vram_k_quant_int8_rows_many(&q, 1, NULL, NULL);
    cr_assert_neq(st, VRAM_OK);
    cr_assert_eq(vram_k_last_error(&e), VRAM_OK);
    cr_assert_str_eq(e.call, "launch vram__k_quant_many_kernel");
    cr_assert_eq(e.enqueued, 0u);
    cr_assert_eq(host[0], 1.0f, "nothing ran");
}
