/* hw_nccl.c — the NCCL backend of the communication table on real GPUs (label hw; exits 77
 * without a GPU). A world of one on GPU 0: every reduction, the broadcast, the barrier and
 * wait on device buffers; the loss scaler's update across ranks on the device (found-inf
 * all-reduced, then the scaler kernel) captured into a CUDA graph, which fails if anything in
 * it synchronises with the host, and equal to the host scaler. With two or more GPUs, one
 * process a GPU (this program started again with --child): a sum over the ranks, and an
 * overflow on rank 1 only that makes every rank skip and halve its scale, and clipping by the
 * global norm across the ranks. clip_grad_norm_ across ranks on the device: bit for bit the
 * one-process kernel for a world of one, captured into a graph. */
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <vramkit_kernels.h>

#include "comm/comm_backends.h"
#include "hw_common.h"

/* ---- a world of one ------------------------------------------------------------------- */

static vram_comm_ops open_one(void) {
    vram_comm_ops boot, c;
    VRAM_HW_OK(vram_comm_single(&boot));
    vram_status st = vram_comm_nccl(NULL, &boot, 0, &c);
    cr_assert_eq(st, VRAM_OK, "vram_comm_nccl: %s", vram_status_name(st));
    VRAM_HW_OK(vram_comm_ops_check(&c));
    cr_assert_eq(c.flags, VRAM_COMM_DEVICE_BUFFERS);
    cr_assert_eq(c.world, 1);
    cr_assert_eq(c.rank, 0);
    return c;
}

Test(nccl, world_of_one_reduces_on_the_device) {
    vram_comm_ops c = open_one();
    cudaStream_t s;
    VRAM_HW_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    float hf[4] = {1.5f, -2.0f, 0.0f, 3.25f}, out[4];
    uint32_t hu[3] = {7, 0, 4000000000u}, uo[3];
    double hd[2] = {1e300, -0.5}, dout[2];
    float *df, *df2;
    uint32_t *du;
    double *dd;
    VRAM_HW_CUDA(cudaMalloc((void **)&df, sizeof hf));
    VRAM_HW_CUDA(cudaMalloc((void **)&df2, sizeof hf));
    VRAM_HW_CUDA(cudaMalloc((void **)&du, sizeof hu));
    VRAM_HW_CUDA(cudaMalloc((void **)&dd, sizeof hd));
    VRAM_HW_CUDA(cudaMemcpy(df, hf, sizeof hf, cudaMemcpyHostToDevice));
    VRAM_HW_CUDA(cudaMemcpy(du, hu, sizeof hu, cudaMemcpyHostToDevice));
    VRAM_HW_CUDA(cudaMemcpy(dd, hd, sizeof hd, cudaMemcpyHostToDevice));
    VRAM_HW_OK(c.all_reduce(c.ctx, df, df2, 4, VRAM_COMM_F32, VRAM_COMM_SUM, s));  /* out of place */
    VRAM_HW_OK(c.all_reduce(c.ctx, df2, df2, 4, VRAM_COMM_F32, VRAM_COMM_MAX, s)); /* in place */
    VRAM_HW_OK(c.all_reduce(c.ctx, df2, df2, 4, VRAM_COMM_F32, VRAM_COMM_AVG, s));
    VRAM_HW_OK(c.all_reduce(c.ctx, du, du, 3, VRAM_COMM_U32, VRAM_COMM_SUM, s));
    VRAM_HW_OK(c.all_reduce(c.ctx, dd, dd, 2, VRAM_COMM_F64, VRAM_COMM_SUM, s));
    VRAM_HW_OK(c.broadcast(c.ctx, df2, 4, VRAM_COMM_F32, 0, s));
    VRAM_HW_OK(c.wait(c.ctx, s));
    VRAM_HW_OK(c.barrier(c.ctx, s));
    VRAM_HW_CUDA(cudaMemcpy(out, df2, sizeof out, cudaMemcpyDeviceToHost));
    VRAM_HW_CUDA(cudaMemcpy(uo, du, sizeof uo, cudaMemcpyDeviceToHost));
    VRAM_HW_CUDA(cudaMemcpy(dout, dd, sizeof dout, cudaMemcpyDeviceToHost));
    cr_assert_arr_eq(out, hf, sizeof hf, "a world of one gives its own values back");
    cr_assert_arr_eq(uo, hu, sizeof hu);
    cr_assert_arr_eq(dout, hd, sizeof hd);
    /* the core's argument checks run before NCCL sees a call */
    cr_assert_eq(c.all_reduce(c.ctx, du, du, 3, VRAM_COMM_U32, VRAM_COMM_AVG, s), VRAM_E_INVALID);
    cr_assert_eq(c.all_reduce(c.ctx, NULL, df, 1, VRAM_COMM_F32, VRAM_COMM_SUM, s), VRAM_E_INVALID);
    cr_assert_eq(c.broadcast(c.ctx, df, 1, VRAM_COMM_F32, 1, s), VRAM_E_INVALID);
    cr_assert_str_empty(c.last_error(c.ctx));
    c.destroy(c.ctx);
    cudaFree(df);
    cudaFree(df2);
    cudaFree(du);
    cudaFree(dd);
    cudaStreamDestroy(s);
}

/* The scaler's update across ranks in a CUDA graph: capture refuses any host synchronisation
 * (a cudaStreamSynchronize or a blocking copy inside would end the capture with an error). */
Test(nccl, device_scaler_step_without_host_sync) {
    vram_comm_ops c = open_one();
    cudaStream_t s;
    VRAM_HW_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    vram_scaler host, *state;
    vram_scaler_cfg cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.growth_interval = 2;
    VRAM_HW_OK(vram_scaler_init(&host, &cfg));
    float *found;
    vram_k_step_info *info;
    VRAM_HW_CUDA(cudaMalloc((void **)&state, sizeof host));
    VRAM_HW_CUDA(cudaMalloc((void **)&found, sizeof(float)));
    VRAM_HW_CUDA(cudaMalloc((void **)&info, sizeof *info));
    VRAM_HW_CUDA(cudaMemcpy(state, &host, sizeof host, cudaMemcpyHostToDevice));
    /* steps: overflow, clean, clean (growth), overflow */
    const float flags[4] = {1.0f, 0.0f, 0.0f, 1.0f};
    for (int t = 0; t < 4; t++) {
        VRAM_HW_CUDA(cudaMemcpy(found, &flags[t], sizeof(float), cudaMemcpyHostToDevice));
        cudaGraph_t g;
        cudaGraphExec_t ge;
        VRAM_HW_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
        vram_status st = vram_comm_scaler_update_device(&c, state, found, 1, info, s);
        cudaError_t ce = cudaStreamEndCapture(s, &g);
        cr_assert_eq(st, VRAM_OK, "step %d: %s (%s)", t, vram_status_name(st), c.last_error(c.ctx));
        cr_assert_eq(ce, cudaSuccess, "step %d: the capture broke (a host sync?): %s", t,
                     cudaGetErrorString(ce));
        VRAM_HW_CUDA(cudaGraphInstantiate(&ge, g, 0));
        VRAM_HW_CUDA(cudaGraphLaunch(ge, s));
        VRAM_HW_OK(c.wait(c.ctx, s));
        vram_k_step_info done;
        VRAM_HW_CUDA(cudaMemcpy(&done, info, sizeof done, cudaMemcpyDeviceToHost));
        vram_scaler_report rep;
        float f = flags[t];
        VRAM_HW_OK(vram_scaler_end_step(&host, &f, 1, VRAM_SCALER_FLAGS_STEP, &rep));
        cr_assert_eq(done.scale, host.scale, "step %d: device scale %g, host %g", t,
                     (double)done.scale, (double)host.scale);
        float zero = -1.0f;
        VRAM_HW_CUDA(cudaMemcpy(&zero, found, sizeof zero, cudaMemcpyDeviceToHost));
        cr_assert_eq(zero, 0.0f, "the update zeroes the flag");
        cudaGraphExecDestroy(ge);
        cudaGraphDestroy(g);
    }
    c.destroy(c.ctx);
    cudaFree(state);
    cudaFree(found);
    cudaFree(info);
    cudaStreamDestroy(s);
}

/* fp32 gradients: (i * 0.37 - 50) times scale (the loss scale; a power of two, so the
 * host reference divides it out exactly) times rank_factor. */
static void fill_grads(float *h, size_t n, float scale, float rank_factor) {
    for (size_t i = 0; i < n; i++) h[i] = ((float)i * 0.37f - 50.0f) * scale * rank_factor;
}

/* clip_grad_norm_ across a world of one on the device equals vram_k_clip_grad_norm bit for
 * bit (the same sum of squares, the same rounded square root), and the whole chain
 * (sum of squares, NCCL all-reduce, root, coefficient, scale) is captured into a CUDA graph:
 * nothing in it waits on the host. */
Test(nccl, device_clip_across_ranks_without_host_sync) {
    vram_comm_ops c = open_one();
    cudaStream_t s;
    VRAM_HW_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    enum { N0 = 70000, N1 = 1234 };
    static float h[N0 + N1], a[N0 + N1], b[N0 + N1];
    fill_grads(h, N0 + N1, 1024.0f, 1.0f);
    float *g1, *g2, *part, *scal; /* scal: inv_scale, norm, coef, found (x2) */
    VRAM_HW_CUDA(cudaMalloc((void **)&g1, sizeof h));
    VRAM_HW_CUDA(cudaMalloc((void **)&g2, sizeof h));
    VRAM_HW_CUDA(cudaMalloc((void **)&scal, 8 * sizeof(float)));
    VRAM_HW_CUDA(cudaMemcpy(g1, h, sizeof h, cudaMemcpyHostToDevice));
    VRAM_HW_CUDA(cudaMemcpy(g2, h, sizeof h, cudaMemcpyHostToDevice));
    const float hs[8] = {1.0f / 1024.0f, 0, 0, 0, 1.0f / 1024.0f, 0, 0, 0};
    VRAM_HW_CUDA(cudaMemcpy(scal, hs, sizeof hs, cudaMemcpyHostToDevice));
    vram_k_tensor t1[2] = {{g1, N0, VRAM_DTYPE_F32}, {g1 + N0, N1, VRAM_DTYPE_F32}};
    vram_k_tensor t2[2] = {{g2, N0, VRAM_DTYPE_F32}, {g2 + N0, N1, VRAM_DTYPE_F32}};
    uint64_t need = 0;
    VRAM_HW_OK(vram_k_norm_workspace(t1, 2, &need));
    VRAM_HW_CUDA(cudaMalloc((void **)&part, need * sizeof(float)));
    /* the one-process reference */
    VRAM_HW_OK(vram_k_clip_grad_norm(t1, 2, scal, 1.0f, VRAM_K_NONFINITE_SKIP, part, need, scal + 1,
                                     scal + 2, scal + 3, s));
    VRAM_HW_CUDA(cudaStreamSynchronize(s));
    /* across ranks, captured */
    cudaGraph_t g;
    cudaGraphExec_t ge;
    VRAM_HW_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    vram_status st = vram_comm_clip_grad_norm_device(&c, t2, 2, scal + 4, 1.0f, VRAM_K_NONFINITE_SKIP,
                                                     part, need, scal + 5, scal + 6, scal + 7, s);
    cudaError_t ce = cudaStreamEndCapture(s, &g);
    cr_assert_eq(st, VRAM_OK, "%s (%s)", vram_status_name(st), c.last_error(c.ctx));
    cr_assert_eq(ce, cudaSuccess, "the capture broke (a host sync?): %s", cudaGetErrorString(ce));
    VRAM_HW_CUDA(cudaGraphInstantiate(&ge, g, 0));
    VRAM_HW_CUDA(cudaGraphLaunch(ge, s));
    VRAM_HW_OK(c.wait(c.ctx, s));
    float r[8];
    VRAM_HW_CUDA(cudaMemcpy(r, scal, sizeof r, cudaMemcpyDeviceToHost));
    VRAM_HW_CUDA(cudaMemcpy(a, g1, sizeof a, cudaMemcpyDeviceToHost));
    VRAM_HW_CUDA(cudaMemcpy(b, g2, sizeof b, cudaMemcpyDeviceToHost));
    cr_assert_eq(r[5], r[1], "norm across ranks %.9g, one process %.9g", (double)r[5], (double)r[1]);
    cr_assert_eq(r[6], r[2], "coefficient %.9g, one process %.9g", (double)r[6], (double)r[2]);
    cr_assert(r[6] < 1.0f, "the gradients were clipped (norm %g)", (double)r[5]);
    cr_assert_eq(r[7], 0.0f, "no overflow");
    cr_assert_eq(memcmp(a, b, sizeof a), 0, "the clipped gradients are identical");
    /* against the host's fp64 reference on the unscaled values */
    double sumsq = 0.0;
    for (size_t i = 0; i < N0 + N1; i++) sumsq += (double)(h[i] / 1024.0f) * (double)(h[i] / 1024.0f);
    cr_assert(fabs((double)r[5] - sqrt(sumsq)) <= 1e-5 * sqrt(sumsq), "norm %.9g, reference %.9g",
              (double)r[5], sqrt(sumsq));
    /* an inf gradient: the global norm is inf, found_inf set, the gradients left alone */
    const float inf = INFINITY;
    VRAM_HW_CUDA(cudaMemcpy(g2 + 7, &inf, sizeof inf, cudaMemcpyHostToDevice));
    VRAM_HW_OK(vram_comm_clip_grad_norm_device(&c, t2, 2, scal + 4, 1.0f, VRAM_K_NONFINITE_SKIP, part,
                                               need, scal + 5, scal + 6, scal + 7, s));
    VRAM_HW_OK(c.wait(c.ctx, s));
    VRAM_HW_CUDA(cudaMemcpy(r, scal, sizeof r, cudaMemcpyDeviceToHost));
    cr_assert_eq(r[7], 1.0f, "found_inf set by the non-finite global norm");
    cudaGraphExecDestroy(ge);
    cudaGraphDestroy(g);
    c.destroy(c.ctx);
    cudaFree(g1);
    cudaFree(g2);
    cudaFree(part);
    cudaFree(scal);
    cudaStreamDestroy(s);
}

/* ---- two or more GPUs: one process each ------------------------------------------------ */

/* A host table for the unique id only: rank 0 writes it to a file, the others read it. */
typedef struct file_boot {
    const char *path;
    int rank;
} file_boot;

static vram_status fb_broadcast(void *ctx, void *buf, uint64_t count, vram_comm_dtype dtype, int root,
                                vram_stream stream) {
    file_boot *b = (file_boot *)ctx;
    size_t bytes = (size_t)count * vram_comm_dtype_bytes(dtype);
    char tmp[4200];
    (void)root;
    (void)stream;
    if (b->rank == 0) {
        snprintf(tmp, sizeof tmp, "%s.tmp", b->path);
        int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd < 0 || write(fd, buf, bytes) != (ssize_t)bytes) return VRAM_E_IO;
        close(fd);
        return rename(tmp, b->path) == 0 ? VRAM_OK : VRAM_E_IO;
    }
    for (int i = 0; i < 60000; i++) { /* a minute */
        int fd = open(b->path, O_RDONLY);
        if (fd >= 0) {
            ssize_t n = read(fd, buf, bytes);
            close(fd);
            if (n == (ssize_t)bytes) return VRAM_OK;
        }
        usleep(1000);
    }
    return VRAM_E_TIMEOUT;
}
static vram_status fb_nothing(void *ctx, vram_stream s) {
    (void)ctx;
    (void)s;
    return VRAM_OK;
}
static vram_status fb_reduce(void *ctx, const void *a, void *b, uint64_t n, vram_comm_dtype t,
                             vram_comm_op o, vram_stream s) {
    (void)ctx, (void)a, (void)b, (void)n, (void)t, (void)o, (void)s;
    return VRAM_E_NOT_SUPPORTED;
}
static const char *fb_err(void *ctx) {
    (void)ctx;
    return "";
}
static void fb_destroy(void *ctx) { (void)ctx; }

/* One rank: returns 0 when its checks held. */
static int child(int rank, int world, const char *path) {
    file_boot fb = {path, rank};
    vram_comm_ops boot = {VRAM_COMM_API_VERSION, sizeof(vram_comm_ops), VRAM_COMM_HOST_BUFFERS, "file",
                          &fb, rank, world, fb_reduce, fb_broadcast, fb_nothing, fb_nothing, fb_err,
                          fb_destroy};
    vram_comm_ops c;
    vram_status st = vram_comm_nccl(NULL, &boot, rank, &c);
    if (st != VRAM_OK) {
        fprintf(stderr, "rank %d: vram_comm_nccl: %s\n", rank, vram_status_name(st));
        return 1;
    }
    cudaStream_t s;
    float v = (float)(rank + 1), *dv, one;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    cudaMalloc((void **)&dv, sizeof v);
    cudaMemcpy(dv, &v, sizeof v, cudaMemcpyHostToDevice);
    st = c.all_reduce(c.ctx, dv, dv, 1, VRAM_COMM_F32, VRAM_COMM_SUM, s);
    if (st == VRAM_OK) st = c.wait(c.ctx, s);
    cudaMemcpy(&one, dv, sizeof one, cudaMemcpyDeviceToHost);
    int bad = st != VRAM_OK || one != (float)(world * (world + 1) / 2);
    if (bad) fprintf(stderr, "rank %d: sum %g (%s)\n", rank, (double)one, c.last_error(c.ctx));
    /* the scaler: an overflow on rank 1 only */
    vram_scaler host, *state;
    vram_scaler_cfg cfg;
    memset(&cfg, 0, sizeof cfg);
    if (vram_scaler_init(&host, &cfg) != VRAM_OK) return 1;
    float f = rank == 1 ? 1.0f : 0.0f, *found;
    vram_k_step_info *info, done;
    cudaMalloc((void **)&state, sizeof host);
    cudaMalloc((void **)&found, sizeof f);
    cudaMalloc((void **)&info, sizeof *info);
    cudaMemcpy(state, &host, sizeof host, cudaMemcpyHostToDevice);
    cudaMemcpy(found, &f, sizeof f, cudaMemcpyHostToDevice);
    st = vram_comm_scaler_update_device(&c, state, found, 1, info, s);
    if (st == VRAM_OK) st = c.wait(c.ctx, s);
    cudaMemcpy(&done, info, sizeof done, cudaMemcpyDeviceToHost);
    if (st != VRAM_OK || done.scale != host.scale * 0.5f) {
        fprintf(stderr, "rank %d: scale %g after rank 1's overflow, want %g (%s)\n", rank,
                (double)done.scale, (double)(host.scale * 0.5f), vram_status_name(st));
        bad = 1;
    }
    /* clipping: rank r's gradients are r + 1 times the same values, so the global norm is
       the one-rank norm times sqrt(sum of (r + 1)^2); every rank gets the same norm */
    {
        enum { NG = 5000 };
        static float hg[NG];
        float *dg, *dp, *dn, got[2];
        uint64_t need = 0;
        double one = 0.0, k2 = 0.0;
        fill_grads(hg, NG, 1.0f, (float)(rank + 1));
        for (int i = 0; i < NG; i++) one += (double)(hg[i] / (float)(rank + 1)) * (hg[i] / (float)(rank + 1));
        for (int q = 1; q <= world; q++) k2 += (double)q * q;
        vram_k_tensor tg = {NULL, NG, VRAM_DTYPE_F32};
        cudaMalloc((void **)&dg, sizeof hg);
        cudaMemcpy(dg, hg, sizeof hg, cudaMemcpyHostToDevice);
        tg.data = dg;
        if (vram_k_norm_workspace(&tg, 1, &need) != VRAM_OK) return 1;
        cudaMalloc((void **)&dp, need * sizeof(float));
        cudaMalloc((void **)&dn, 3 * sizeof(float));
        cudaMemset(dn, 0, 3 * sizeof(float));
        st = vram_comm_clip_grad_norm_device(&c, &tg, 1, NULL, 1.0f, VRAM_K_NONFINITE_SKIP, dp, need, dn,
                                             dn + 1, dn + 2, s);
        if (st == VRAM_OK) st = c.wait(c.ctx, s);
        cudaMemcpy(got, dn, sizeof got, cudaMemcpyDeviceToHost);
        const double want = sqrt(one * k2);
        if (st != VRAM_OK || fabs((double)got[0] - want) > 1e-5 * want) {
            fprintf(stderr, "rank %d: global norm %.9g, want %.9g (%s)\n", rank, (double)got[0], want,
                    vram_status_name(st));
            bad = 1;
        }
    }
    c.destroy(c.ctx);
    return bad;
}

Test(nccl, two_or_more_gpus_one_process_each) {
    int n = 0;
    VRAM_HW_CUDA(cudaGetDeviceCount(&n));
    if (n < 2) cr_skip_test("one GPU: the test of two or more ranks needs two");
    int world = n > 4 ? 4 : n;
    char path[] = "/tmp/vramkit-nccl-id-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    unlink(path);
    pid_t pids[4];
    for (int r = 0; r < world; r++) {
        char rs[16], ws[16];
        snprintf(rs, sizeof rs, "%d", r);
        snprintf(ws, sizeof ws, "%d", world);
        pids[r] = fork();
        if (pids[r] == 0) {
            execl("/proc/self/exe", "hw_nccl", "--child", rs, ws, path, (char *)NULL);
            _exit(127);
        }
    }
    for (int r = 0; r < world; r++) {
        int status = 0, waited = 0;
        while (waitpid(pids[r], &status, WNOHANG) == 0 && waited < 120000) {
            usleep(10000);
            waited += 10;
        }
        if (waited >= 120000) {
            kill(pids[r], SIGKILL);
            waitpid(pids[r], &status, 0);
            cr_assert_fail("rank %d hung", r);
        }
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "rank %d failed (status %d)", r, status);
    }
    unlink(path);
}

int main(int argc, char *argv[]) {
    if (argc == 5 && strcmp(argv[1], "--child") == 0) return child(atoi(argv[2]), atoi(argv[3]), argv[4]);
    if (!vram_hw_device_available()) return 77;
    struct criterion_test_set *tests = criterion_initialize();
    int result = 0;
    if (criterion_handle_args(argc, argv, true)) result = !criterion_run_all_tests(tests);
    criterion_finalize(tests);
    return result;
}
