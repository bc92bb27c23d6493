/* vramkit/comm.h (the table's check, the argument checks) and driver/comm: the single-process
 * backend, the timeout setting, and the steps across ranks over a world of one, which must be
 * exactly the one-process numerics (the scaler's end of step, clip_grad_norm_ from kref.h).
 * The same steps over 4 real ranks are test/mpi's. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <vramkit/kref.h>

#include "comm/comm_backends.h"
#if defined(VRAMKIT_HAVE_CUDA) && __has_include(<vramkit_kernels.h>)
#include <vramkit_kernels.h>
#endif

static vram_comm_ops single(void) {
    vram_comm_ops c;
    cr_assert_eq(vram_comm_single(&c), VRAM_OK);
    return c;
}

/* ---- the table's check ---------------------------------------------------------------- */

Test(comm, check_accepts_the_single_table) {
    vram_comm_ops c = single();
    cr_assert_eq(vram_comm_ops_check(&c), VRAM_OK);
    cr_assert_str_eq(c.backend, "single");
    cr_assert_eq(c.flags, VRAM_COMM_HOST_BUFFERS);
    cr_assert_eq(c.rank, 0);
    cr_assert_eq(c.world, 1);
    cr_assert_str_empty(c.last_error(c.ctx));
    c.destroy(c.ctx);
}

Test(comm, check_refuses_every_defect) {
    vram_comm_ops c = single(), b;
    cr_assert_eq(vram_comm_ops_check(NULL), VRAM_E_INVALID);
    b = c, b.api_version = VRAM_COMM_API_VERSION + 1;
    cr_assert_eq(vram_comm_ops_check(&b), VRAM_E_VERSION);
    b = c, b.size = (uint32_t)sizeof b - 1;
    cr_assert_eq(vram_comm_ops_check(&b), VRAM_E_VERSION);
    b = c, b.flags = 0;
    cr_assert_eq(vram_comm_ops_check(&b), VRAM_E_INVALID, "no buffer kind");
    b = c, b.flags = VRAM_COMM_HOST_BUFFERS | VRAM_COMM_DEVICE_BUFFERS;
    cr_assert_eq(vram_comm_ops_check(&b), VRAM_E_INVALID, "both buffer kinds");
    b = c, b.flags = VRAM_COMM_HOST_BUFFERS | 0x80u;
    cr_assert_eq(vram_comm_ops_check(&b), VRAM_E_INVALID, "an unknown flag");
    b = c, b.backend = NULL;
    cr_assert_eq(vram_comm_ops_check(&b), VRAM_E_INVALID);
    b = c, b.all_reduce = NULL;
    cr_assert_eq(vram_comm_ops_check(&b), VRAM_E_INVALID);
    b = c, b.broadcast = NULL;
    cr_assert_eq(vram_comm_ops_check(&b), VRAM_E_INVALID);
    b = c, b.barrier = NULL;
    cr_assert_eq(vram_comm_ops_check(&b), VRAM_E_INVALID);
    b = c, b.wait = NULL;
    cr_assert_eq(vram_comm_ops_check(&b), VRAM_E_INVALID);
    b = c, b.last_error = NULL;
    cr_assert_eq(vram_comm_ops_check(&b), VRAM_E_INVALID);
    b = c, b.destroy = NULL;
    cr_assert_eq(vram_comm_ops_check(&b), VRAM_E_INVALID);
    b = c, b.world = 0;
    cr_assert_eq(vram_comm_ops_check(&b), VRAM_E_INVALID);
    b = c, b.rank = 1;
    cr_assert_eq(vram_comm_ops_check(&b), VRAM_E_INVALID, "rank not below world");
    b = c, b.rank = -1;
    cr_assert_eq(vram_comm_ops_check(&b), VRAM_E_INVALID);
    cr_assert_eq(vram_comm_single(NULL), VRAM_E_INVALID);
}

/* ---- argument checks -------------------------------------------------------------------- */

Test(comm, reduce_args) {
    float f[2];
    uint64_t bytes = 77;
    cr_assert_eq(vram_comm_dtype_bytes(VRAM_COMM_F32), 4u);
    cr_assert_eq(vram_comm_dtype_bytes(VRAM_COMM_U32), 4u);
    cr_assert_eq(vram_comm_dtype_bytes(VRAM_COMM_F64), 8u);
    cr_assert_eq(vram_comm_dtype_bytes(0), 0u);
    cr_assert_eq(vram_comm_dtype_bytes(4), 0u);
    cr_assert_eq(vram_comm_reduce_args(f, f, 2, VRAM_COMM_F32, VRAM_COMM_SUM, &bytes), VRAM_OK);
    cr_assert_eq(bytes, 8u);
    cr_assert_eq(vram_comm_reduce_args(f, f, VRAM_COMM_MAX_COUNT, VRAM_COMM_F64, VRAM_COMM_MAX, &bytes), VRAM_OK);
    cr_assert_eq(bytes, 8ull * VRAM_COMM_MAX_COUNT);
    cr_assert_eq(vram_comm_reduce_args(NULL, NULL, 0, VRAM_COMM_U32, VRAM_COMM_SUM, &bytes), VRAM_OK);
    cr_assert_eq(bytes, 0u);
    bytes = 77;
    cr_assert_eq(vram_comm_reduce_args(f, f, (uint64_t)VRAM_COMM_MAX_COUNT + 1, VRAM_COMM_F32, VRAM_COMM_SUM, &bytes),
                 VRAM_E_INVALID, "a count MPI and NCCL cannot take");
    cr_assert_eq(vram_comm_reduce_args(f, f, UINT64_MAX, VRAM_COMM_F64, VRAM_COMM_SUM, &bytes), VRAM_E_INVALID);
    cr_assert_eq(vram_comm_reduce_args(NULL, f, 1, VRAM_COMM_F32, VRAM_COMM_SUM, &bytes), VRAM_E_INVALID);
    cr_assert_eq(vram_comm_reduce_args(f, NULL, 1, VRAM_COMM_F32, VRAM_COMM_SUM, &bytes), VRAM_E_INVALID);
    cr_assert_eq(vram_comm_reduce_args(f, f, 1, 9, VRAM_COMM_SUM, &bytes), VRAM_E_INVALID);
    cr_assert_eq(vram_comm_reduce_args(f, f, 1, VRAM_COMM_F32, 0, &bytes), VRAM_E_INVALID);
    cr_assert_eq(vram_comm_reduce_args(f, f, 1, VRAM_COMM_U32, VRAM_COMM_AVG, &bytes), VRAM_E_INVALID,
                 "no average of integers");
    cr_assert_eq(bytes, 77u, "untouched on errors");
    cr_assert_eq(vram_comm_bcast_args(f, 2, VRAM_COMM_F32, 0, 1, &bytes), VRAM_OK);
    cr_assert_eq(bytes, 8u);
    cr_assert_eq(vram_comm_bcast_args(f, 2, VRAM_COMM_F32, 1, 1, &bytes), VRAM_E_INVALID, "root not a rank");
    cr_assert_eq(vram_comm_bcast_args(f, 2, VRAM_COMM_F32, -1, 4, &bytes), VRAM_E_INVALID);
}

/* ---- the single backend ----------------------------------------------------------------- */

Test(comm, single_backend_is_the_identity) {
    vram_comm_ops c = single();
    float a[3] = {1.0f, -2.0f, NAN}, b[3] = {0};
    cr_assert_eq(c.all_reduce(c.ctx, a, b, 3, VRAM_COMM_F32, VRAM_COMM_SUM, NULL), VRAM_OK);
    cr_assert_eq(b[0], 1.0f);
    cr_assert_eq(b[1], -2.0f);
    cr_assert(isnan(b[2]));
    uint32_t u[2] = {5, 7};
    cr_assert_eq(c.all_reduce(c.ctx, u, u, 2, VRAM_COMM_U32, VRAM_COMM_MAX, NULL), VRAM_OK);
    cr_assert_eq(u[0], 5u);
    cr_assert_eq(u[1], 7u);
    cr_assert_eq(c.all_reduce(c.ctx, u, u, 2, VRAM_COMM_U32, VRAM_COMM_AVG, NULL), VRAM_E_INVALID);
    cr_assert_eq(c.broadcast(c.ctx, a, 3, VRAM_COMM_F32, 0, NULL), VRAM_OK);
    cr_assert_eq(c.broadcast(c.ctx, a, 3, VRAM_COMM_F32, 1, NULL), VRAM_E_INVALID);
    cr_assert_eq(c.barrier(c.ctx, NULL), VRAM_OK);
    cr_assert_eq(c.wait(c.ctx, NULL), VRAM_OK);
}

Test(comm, timeout_setting) {
    vram_comm_config cfg = {0};
    unsetenv("VRAMKIT_COMM_TIMEOUT_MS");
    cr_assert_eq(vram_comm_timeout_ms(NULL), VRAM_COMM_DEFAULT_TIMEOUT_MS);
    cr_assert_eq(vram_comm_timeout_ms(&cfg), VRAM_COMM_DEFAULT_TIMEOUT_MS);
    setenv("VRAMKIT_COMM_TIMEOUT_MS", "2500", 1);
    cr_assert_eq(vram_comm_timeout_ms(&cfg), 2500u);
    cfg.timeout_ms = 10;
    cr_assert_eq(vram_comm_timeout_ms(&cfg), 10u, "the config wins");
    setenv("VRAMKIT_COMM_TIMEOUT_MS", "0", 1);
    cr_assert_eq(vram_comm_timeout_ms(NULL), VRAM_COMM_DEFAULT_TIMEOUT_MS, "0 is not a timeout");
    setenv("VRAMKIT_COMM_TIMEOUT_MS", "5s", 1);
    cr_assert_eq(vram_comm_timeout_ms(NULL), VRAM_COMM_DEFAULT_TIMEOUT_MS, "not a number");
    unsetenv("VRAMKIT_COMM_TIMEOUT_MS");
}

/* ---- the steps over a world of one: the one-process numerics -------------------------- */

Test(comm, scaler_step_of_one_rank_is_the_scalers) {
    vram_comm_ops c = single();
    vram_scaler a, b;
    vram_scaler_cfg cfg = {0};
    cfg.growth_interval = 3;
    cr_assert_eq(vram_scaler_init(&a, &cfg), VRAM_OK);
    cr_assert_eq(vram_scaler_init(&b, &cfg), VRAM_OK);
    for (int t = 0; t < 40; t++) {
        float f1[2] = {t % 7 == 2 ? 1.0f : 0.0f, t == 11 ? NAN : 0.0f};
        float f2[2] = {f1[0], f1[1]};
        vram_scaler_report r1, r2;
        cr_assert_eq(vram_comm_scaler_end_step(&c, &a, f1, 2, VRAM_SCALER_FLAGS_STEP, &r1), VRAM_OK);
        cr_assert_eq(vram_scaler_end_step(&b, f2, 2, VRAM_SCALER_FLAGS_STEP, &r2), VRAM_OK);
        cr_assert_eq(r1.skip_mask, r2.skip_mask, "step %d", t);
        cr_assert_eq(a.scale, b.scale, "step %d", t);
        if (t == 11) cr_assert_eq(f1[1], 1.0f, "a NaN flag is made 1 before the reduction");
    }
    float f[1] = {0};
    vram_scaler_report rep;
    cr_assert_eq(vram_comm_scaler_end_step(NULL, &a, f, 1, 0, &rep), VRAM_E_INVALID);
    cr_assert_eq(vram_comm_scaler_end_step(&c, &a, f, 0, 0, &rep), VRAM_E_INVALID);
    cr_assert_eq(vram_comm_scaler_end_step(&c, &a, f, VRAM_SCALER_MAX_OPTIMIZERS + 1, 0, &rep), VRAM_E_INVALID);
    cr_assert_eq(vram_comm_scaler_end_step(&c, NULL, f, 1, 0, &rep), VRAM_E_INVALID);
    vram_comm_ops dev = c;
    dev.flags = VRAM_COMM_DEVICE_BUFFERS;
    cr_assert_eq(vram_comm_scaler_end_step(&dev, &a, f, 1, 0, &rep), VRAM_E_INVALID, "host buffers only");
}

Test(comm, clip_of_one_rank_is_clip_grad_norm) {
    vram_comm_ops c = single();
    float g0[5] = {3.0f, 4.0f, 0.0f, -12.0f, 0.5f}, g1[2] = {1e-3f, -2.0f};
    float *grads[2] = {g0, g1};
    uint64_t counts[2] = {5, 2};
    double sum = 0;
    for (int i = 0; i < 5; i++) sum += (double)g0[i] * g0[i];
    for (int i = 0; i < 2; i++) sum += (double)g1[i] * g1[i];
    float want_norm = (float)sqrt(sum), want_coef;
    cr_assert_eq(vram_kref_clip_coef(want_norm, 2.0f, &want_coef), 0);
    float norm = 0, coef = 0, inf = 0;
    float before = g0[3];
    cr_assert_eq(vram_comm_clip_grad_norm(&c, grads, counts, 2, 1.0f, 2.0f, &norm, &coef, &inf), VRAM_OK);
    cr_assert_eq(norm, want_norm);
    cr_assert_eq(coef, want_coef);
    cr_assert_lt(coef, 1.0f);
    cr_assert_eq(inf, 0.0f);
    cr_assert_eq(g0[3], before * want_coef, "scaled by the coefficient");
    /* no clipping: untouched */
    float h[2] = {0.1f, 0.2f};
    float *hg[1] = {h};
    uint64_t hc[1] = {2};
    cr_assert_eq(vram_comm_clip_grad_norm(&c, hg, hc, 1, 1.0f, 100.0f, &norm, &coef, NULL), VRAM_OK);
    cr_assert_eq(coef, 1.0f);
    cr_assert_eq(h[0], 0.1f);
    /* inf: reported, nothing scaled */
    h[1] = INFINITY;
    cr_assert_eq(vram_comm_clip_grad_norm(&c, hg, hc, 1, 1.0f, 1e-3f, &norm, &coef, &inf), VRAM_OK);
    cr_assert_eq(inf, 1.0f);
    cr_assert_eq(h[0], 0.1f);
    /* refusals */
    cr_assert_eq(vram_comm_clip_grad_norm(&c, hg, hc, 1, 1.0f, 0.0f, NULL, NULL, NULL), VRAM_E_INVALID);
    cr_assert_eq(vram_comm_clip_grad_norm(&c, hg, hc, 1, 1.0f, NAN, NULL, NULL, NULL), VRAM_E_INVALID);
    cr_assert_eq(vram_comm_clip_grad_norm(&c, NULL, hc, 1, 1.0f, 1.0f, NULL, NULL, NULL), VRAM_E_INVALID);
    cr_assert_eq(vram_comm_clip_grad_norm(NULL, hg, hc, 1, 1.0f, 1.0f, NULL, NULL, NULL), VRAM_E_INVALID);
}

Test(comm, average_of_one_rank_and_device_step_refusals) {
    vram_comm_ops c = single();
    float g[3] = {1.0f, 2.0f, 3.0f};
    cr_assert_eq(vram_comm_average(&c, g, 3), VRAM_OK);
    cr_assert_eq(g[2], 3.0f);
    cr_assert_eq(vram_comm_average(NULL, g, 3), VRAM_E_INVALID);
    vram_scaler s;
    float f = 0;
    cr_assert_eq(vram_scaler_init(&s, NULL), VRAM_OK);
    /* a host table cannot run the device step */
    cr_assert_eq(vram_comm_scaler_update_device(&c, &s, &f, 1, (struct vram_k_step_info *)&f, NULL),
                 VRAM_E_INVALID);
}

/* A device table that counts its all-reduces (and runs none): the device clip refuses
 * its bad arguments before queuing anything. */
static int device_reduces;
static vram_status counting_reduce(void *ctx, const void *send, void *recv, uint64_t count,
                                   vram_comm_dtype t, vram_comm_op op, vram_stream stream) {
    (void)ctx, (void)send, (void)recv, (void)count, (void)t, (void)op, (void)stream;
    device_reduces++;
    return VRAM_OK;
}

Test(comm, device_clip_refuses_before_queuing_anything) {
    vram_comm_ops host = single(), dev = single();
    float f[4] = {0};
    dev.flags = VRAM_COMM_DEVICE_BUFFERS;
    dev.all_reduce = counting_reduce;
    cr_assert_eq(vram_comm_ops_check(&dev), VRAM_OK);
    device_reduces = 0;
    /* a host table, no norm or coefficient, no partials, a max_norm that is not > 0 */
    cr_assert_eq(vram_comm_clip_grad_norm_device(&host, NULL, 0, NULL, 1.0f, 0, f, 1, f, f + 1, f + 2, NULL),
                 VRAM_E_INVALID);
    cr_assert_eq(vram_comm_clip_grad_norm_device(&dev, NULL, 0, NULL, 1.0f, 0, f, 1, NULL, f + 1, f + 2, NULL),
                 VRAM_E_INVALID);
    cr_assert_eq(vram_comm_clip_grad_norm_device(&dev, NULL, 0, NULL, 1.0f, 0, NULL, 1, f, f + 1, f + 2, NULL),
                 VRAM_E_INVALID);
    cr_assert_eq(vram_comm_clip_grad_norm_device(&dev, NULL, 0, NULL, 0.0f, 0, f, 1, f, f + 1, f + 2, NULL),
                 VRAM_E_INVALID);
    cr_assert_eq(vram_comm_clip_grad_norm_device(&dev, NULL, 0, NULL, INFINITY, 0, f, 1, f, f + 1, f + 2, NULL),
                 VRAM_E_INVALID);
#if defined(VRAMKIT_HAVE_CUDA) && __has_include(<vramkit_kernels.h>)
    /* a policy outside the list; SKIP without found_inf */
    cr_assert_eq(vram_comm_clip_grad_norm_device(&dev, NULL, 0, NULL, 1.0f, 99, f, 1, f, f + 1, f + 2, NULL),
                 VRAM_E_INVALID);
    cr_assert_eq(vram_comm_clip_grad_norm_device(&dev, NULL, 0, NULL, 1.0f, VRAM_K_NONFINITE_SKIP, f, 1, f,
                                                 f + 1, NULL, NULL),
                 VRAM_E_INVALID);
#endif
    cr_assert_eq(device_reduces, 0, "nothing was queued");
}

#ifdef VRAMKIT_HAVE_MPI
#define MPI_IN_BUILD 1
#else
#define MPI_IN_BUILD 0
#endif
#ifdef VRAMKIT_HAVE_NCCL
#define NCCL_IN_BUILD 1
#else
#define NCCL_IN_BUILD 0
#endif

Test(comm, backends_say_whether_they_are_built) {
    cr_assert_eq(vram_comm_mpi_built(), MPI_IN_BUILD);
    cr_assert_eq(vram_comm_nccl_built(), NCCL_IN_BUILD);
#if !MPI_IN_BUILD
    vram_comm_ops c;
    cr_assert_eq(vram_comm_mpi(NULL, &c), VRAM_E_NOT_BUILT);
#endif
#if !NCCL_IN_BUILD
    vram_comm_ops n, boot = single();
    cr_assert_eq(vram_comm_nccl(NULL, &boot, 0, &n), VRAM_E_NOT_BUILT);
#endif
}
