// hw_train_step.cu — the end-to-end mixed-precision training step (issue 7): a two-layer MLP
// (64 -> 128 relu -> 16) learns a fixed random teacher network of the same shape's outputs
// (a learnable synthetic regression task) with cuBLAS (cublasGemmEx: fp16 or bf16 inputs,
// fp32 accumulation; fp32 master weights and gradients), the loss scaler on the device,
// gradient accumulation over 4 micro-batches and clipping to a global norm of 3.
//
// A step, all enqueued on one stream with no host synchronisation:
//   pick this step's sample indices (a device step counter) -> gather the micro-batches
//   (vram_k_gather_rows) -> cast the master weights to fp16/bf16 (vram_k_cast) -> per
//   micro-batch: forward, loss and its gradient times the device-held scale, backward
//   accumulating into the fp32 gradients (beta 1) -> fp16: vram_k_unscale, then
//   vram_k_clip_grad_norm (policy REPORT); bf16: vram_k_clip_grad_norm with the unscale folded
//   in (policy SKIP) -> SGD, skipped on the device when the overflow flag is up ->
//   vram_k_scaler_update (scaler.h on the GPU) -> record the step.
// The same step runs enqueued directly and captured once into a CUDA graph and replayed (a
// capture fails on any host synchronisation, so that run proves there is none).
//
// Checked: the loss falls (mean of the last 10 steps < 20% of the first 10; a CPU
// simulation of this setup in fp32 goes from ~29 to ~1.1); an inf injected into step 120's
// loss gradient skips exactly that step (the weights are bit for bit unchanged by it, every
// other step is applied) and, in fp16, backs the scale off; the device's scale, after every
// step, equals scaler.h's on the host for that overflow sequence (growth every 100 clean
// steps, so growths are checked too); clipping was active.
#include <cublas_v2.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <type_traits>
#include <vector>

#include "hw_common.h"
#include <vramkit/kref.h>
#include <vramkit/scaler.h>
#include <vramkit_kernels.h>

namespace {

constexpr int kD = 64, kH = 128, kC = 16, kTeacherH = 32;
constexpr int kB = 128, kM = 4, kN = 16384, kSteps = 300, kInject = 120;
constexpr float kLr = 0.3f, kMaxNorm = 3.0f;

void blas_ok(cublasStatus_t s, const char *what) { cr_assert_eq(s, CUBLAS_STATUS_SUCCESS, "%s: cuBLAS status %d", what, (int)s); }
#define BLAS_OK(call) blas_ok((call), #call)

struct rng {
    uint64_t x;
    uint64_t next() { return vram_hw_rng_next(&x); }
    double sym(double a) { return (2.0 * ((double)(next() >> 11) * 0x1p-53) - 1.0) * a; }
};

// What the step records for the host to read at the end.
struct step_record {
    vram_k_step_info info; // after the scaler update
    float norm;            // global gradient norm before clipping
    float coef;            // clip coefficient
};

template <typename T> __device__ T from_f(float v);
template <> __device__ __half from_f<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __nv_bfloat16 from_f<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

// This step's kB * kM sample indices, from the precomputed sequence.
__global__ void pick_indices(const uint64_t *all, const int *step, uint64_t *cur) {
    for (int i = threadIdx.x; i < kB * kM; i += blockDim.x) cur[i] = all[(size_t)*step * kB * kM + i];
}

template <typename T> __global__ void relu_fwd(const float *z, T *a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = from_f<T>(z[i] > 0.0f ? z[i] : 0.0f);
}

template <typename T> __global__ void relu_bwd(const T *da, const float *z, T *dz, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dz[i] = z[i] > 0.0f ? da[i] : from_f<T>(0.0f);
}

// Loss 0.5 * sum (yhat - y)^2 / (kB * kM) added to losses[step] (one block, fixed order), and
// its gradient times the loss scale in T. Micro-batch 0 of step `inject` gets an inf.
template <typename T>
__global__ void loss_grad(const float *yhat, const float *y, const vram_k_step_info *info, const int *step,
                          float *losses, T *dy, int micro, int inject) {
    __shared__ float part[256];
    const float inv_bm = 1.0f / (float)(kB * kM), scale = info->scale;
    float acc = 0.0f;
    for (int i = threadIdx.x; i < kB * kC; i += 256) {
        float e = yhat[i] - y[i];
        acc += 0.5f * e * e;
        dy[i] = from_f<T>(e * inv_bm * scale);
    }
    part[threadIdx.x] = acc;
    __syncthreads();
    for (int s = 128; s > 0; s >>= 1) {
        if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        losses[*step] += part[0] * inv_bm;
        if (*step == inject && micro == 0) dy[0] = from_f<T>(INFINITY);
    }
}

// Plain SGD on the fp32 master weights, skipped on the device when the step overflowed.
__global__ void sgd(float *w, const float *g, int n, float lr, const float *found_inf) {
    if (*found_inf != 0.0f) return;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) w[i] -= lr * g[i];
}

__global__ void record(step_record *hist, int *step, const vram_k_step_info *info, const float *norm,
                       const float *coef) {
    step_record r;
    r.info = *info;
    r.norm = *norm;
    r.coef = *coef;
    hist[*step] = r;
    *step += 1;
}

// C[MxN] = op(A)[MxK] op(B)[KxN] + beta C, all row-major (cuBLAS sees the transposes).
void gemm_rm(cublasHandle_t h, bool ta, bool tb, int m, int n, int k, const void *a, cudaDataType at, int lda,
             const void *b, cudaDataType bt, int ldb, float beta, void *c, cudaDataType ct, int ldc) {
    const float alpha = 1.0f;
    BLAS_OK(cublasGemmEx(h, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k, &alpha, b, bt,
                         ldb, a, at, lda, &beta, c, ct, ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

template <typename T> struct trainer {
    const int32_t dtype = std::is_same<T, __half>::value ? VRAM_DTYPE_F16 : VRAM_DTYPE_BF16;
    const cudaDataType ct = std::is_same<T, __half>::value ? CUDA_R_16F : CUDA_R_16BF;
    cudaStream_t s = nullptr;
    cublasHandle_t blas = nullptr;
    void *blas_ws = nullptr;
    // data
    T *xs = nullptr;          // kN x kD inputs
    float *ys = nullptr;      // kN x kC targets
    uint64_t *all_idx = nullptr, *cur_idx = nullptr;
    T *xb = nullptr;          // kM*kB x kD gathered inputs
    float *yb = nullptr;      // kM*kB x kC gathered targets
    int *bad_index = nullptr;
    // model
    float *w1 = nullptr, *w2 = nullptr, *g1 = nullptr, *g2 = nullptr; // fp32 master weights, gradients
    T *w1h = nullptr, *w2h = nullptr;
    float *z1 = nullptr, *yhat = nullptr;
    T *a1 = nullptr, *dy = nullptr, *da1 = nullptr, *dz1 = nullptr;
    // numerics
    vram_scaler *state = nullptr;
    vram_k_step_info *info = nullptr;
    float *found_inf = nullptr, *norm = nullptr, *coef = nullptr, *partials = nullptr;
    uint64_t partials_count = 0;
    int *step = nullptr;
    float *losses = nullptr;
    step_record *hist = nullptr;
    vram_k_tensor grads[2];
    vram_scaler host_start;

    // Zeroed on the step's own stream: a cudaMemset would run on the legacy default stream,
    // which a non-blocking stream does not wait for, so the first step could read the buffer
    // before the zeros land (or the zeros land on top of a later upload).
    template <typename P> void alloc(P **p, size_t n) {
        VRAM_HW_CUDA(cudaMalloc((void **)p, n * sizeof(P)));
        VRAM_HW_CUDA(cudaMemsetAsync(*p, 0, n * sizeof(P), s));
    }
    // Host to device, in the stream's order too (the host buffer must live until the next
    // synchronisation of s: setup ends with one).
    void upload(void *dst, const void *src, size_t bytes) {
        VRAM_HW_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s));
    }

    void setup(const vram_scaler_cfg &cfg) {
        VRAM_HW_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        BLAS_OK(cublasCreate(&blas));
        BLAS_OK(cublasSetStream(blas, s));
        VRAM_HW_CUDA(cudaMalloc(&blas_ws, 32u << 20));
        BLAS_OK(cublasSetWorkspace(blas, blas_ws, 32u << 20)); // no allocation inside a capture

        // the task: x uniform in [-1, 1]^64 (rounded to T, so the teacher sees what the
        // student sees), y = teacher(x), a fixed random 64 -> 32 relu -> 16 network
        rng g = {0x7e57};
        std::vector<float> t1(kTeacherH * kD), t2(kC * kTeacherH), x(kN * kD), y(kN * kC);
        for (float &v : t1) v = (float)g.sym(3.0 / sqrt((double)kD));
        for (float &v : t2) v = (float)g.sym(sqrt(18.0 / kTeacherH));
        for (size_t i = 0; i < x.size(); i++) {
            float v = (float)g.sym(1.0);
            x[i] = dtype == VRAM_DTYPE_F16 ? vram_kref_f16_to_f32(vram_kref_f32_to_f16(v))
                                           : vram_kref_bf16_to_f32(vram_kref_f32_to_bf16(v));
        }
        for (int n = 0; n < kN; n++) {
            double h[kTeacherH];
            for (int i = 0; i < kTeacherH; i++) {
                double z = 0;
                for (int j = 0; j < kD; j++) z += (double)t1[i * kD + j] * x[n * kD + j];
                h[i] = z > 0 ? z : 0;
            }
            for (int c = 0; c < kC; c++) {
                double v = 0;
                for (int i = 0; i < kTeacherH; i++) v += (double)t2[c * kTeacherH + i] * h[i];
                y[n * kC + c] = (float)v;
            }
        }
        std::vector<uint64_t> idx((size_t)kSteps * kB * kM);
        for (uint64_t &v : idx) v = g.next() % kN;
        std::vector<float> hw1(kH * kD), hw2(kC * kH);
        for (float &v : hw1) v = (float)g.sym(sqrt(6.0 / kD));
        for (float &v : hw2) v = (float)g.sym(sqrt(3.0 / kH));

        float *xs32 = nullptr;
        alloc(&xs32, x.size());
        upload(xs32, x.data(), x.size() * 4);
        alloc(&xs, x.size());
        VRAM_HW_OK(vram_k_cast(xs32, VRAM_DTYPE_F32, xs, dtype, x.size(), s)); // exact: x is already in T
        VRAM_HW_CUDA(cudaStreamSynchronize(s));
        VRAM_HW_CUDA(cudaFree(xs32));
        alloc(&ys, y.size());
        upload(ys, y.data(), y.size() * 4);
        alloc(&all_idx, idx.size());
        upload(all_idx, idx.data(), idx.size() * 8);
        alloc(&cur_idx, kB * kM);
        alloc(&xb, kB * kM * kD);
        alloc(&yb, kB * kM * kC);
        alloc(&bad_index, 1);

        alloc(&w1, kH * kD);
        alloc(&w2, kC * kH);
        upload(w1, hw1.data(), hw1.size() * 4);
        upload(w2, hw2.data(), hw2.size() * 4);
        alloc(&g1, kH * kD);
        alloc(&g2, kC * kH);
        alloc(&w1h, kH * kD);
        alloc(&w2h, kC * kH);
        alloc(&z1, kB * kH);
        alloc(&yhat, kB * kC);
        alloc(&a1, kB * kH);
        alloc(&dy, kB * kC);
        alloc(&da1, kB * kH);
        alloc(&dz1, kB * kH);

        grads[0] = {g1, (uint64_t)kH * kD, VRAM_DTYPE_F32};
        grads[1] = {g2, (uint64_t)kC * kH, VRAM_DTYPE_F32};
        VRAM_HW_OK(vram_k_norm_workspace(grads, 2, &partials_count));
        alloc(&partials, partials_count);
        cr_assert_eq(vram_scaler_init(&host_start, &cfg), VRAM_OK);
        alloc(&state, 1);
        upload(state, &host_start, sizeof host_start);
        alloc(&info, 1);
        alloc(&found_inf, 1);
        alloc(&norm, 1);
        alloc(&coef, 1);
        alloc(&step, 1);
        alloc(&losses, kSteps);
        alloc(&hist, kSteps);
        VRAM_HW_OK(vram_k_scaler_publish(state, info, s));
        VRAM_HW_CUDA(cudaStreamSynchronize(s)); // the uploads' host buffers go out of scope next
    }

    // One optimizer step, enqueued (or captured): no host synchronisation inside.
    void enqueue_step() {
        const cudaDataType f32 = CUDA_R_32F;
        pick_indices<<<1, 256, 0, s>>>(all_idx, step, cur_idx);
        VRAM_HW_CUDA(cudaGetLastError());
        VRAM_HW_OK(vram_k_gather_rows(xb, xs, kN, cur_idx, kB * kM, kD * sizeof(T), bad_index, s));
        VRAM_HW_OK(vram_k_gather_rows(yb, ys, kN, cur_idx, kB * kM, kC * sizeof(float), bad_index, s));
        VRAM_HW_OK(vram_k_cast(w1, VRAM_DTYPE_F32, w1h, dtype, kH * kD, s));
        VRAM_HW_OK(vram_k_cast(w2, VRAM_DTYPE_F32, w2h, dtype, kC * kH, s));
        for (int m = 0; m < kM; m++) {
            const T *x = xb + (size_t)m * kB * kD;
            const float *y = yb + (size_t)m * kB * kC;
            const float beta = m == 0 ? 0.0f : 1.0f; // accumulate the micro-batches' gradients
            gemm_rm(blas, false, true, kB, kH, kD, x, ct, kD, w1h, ct, kD, 0.0f, z1, f32, kH);
            relu_fwd<T><<<(kB * kH + 255) / 256, 256, 0, s>>>(z1, a1, kB * kH);
            gemm_rm(blas, false, true, kB, kC, kH, a1, ct, kH, w2h, ct, kH, 0.0f, yhat, f32, kC);
            loss_grad<T><<<1, 256, 0, s>>>(yhat, y, info, step, losses, dy, m, kInject);
            gemm_rm(blas, true, false, kC, kH, kB, dy, ct, kC, a1, ct, kH, beta, g2, f32, kH);
            gemm_rm(blas, false, false, kB, kH, kC, dy, ct, kC, w2h, ct, kH, 0.0f, da1, ct, kH);
            relu_bwd<T><<<(kB * kH + 255) / 256, 256, 0, s>>>(da1, z1, dz1, kB * kH);
            gemm_rm(blas, true, false, kH, kD, kB, dz1, ct, kH, x, ct, kD, beta, g1, f32, kD);
            VRAM_HW_CUDA(cudaGetLastError());
        }
        if (dtype == VRAM_DTYPE_F16) { // unscale and check, then clip the unscaled gradients
            VRAM_HW_OK(vram_k_unscale(grads, 2, &info->inv_scale, found_inf, s));
            VRAM_HW_OK(vram_k_clip_grad_norm(grads, 2, nullptr, kMaxNorm, VRAM_K_NONFINITE_REPORT, partials, partials_count,
                                        norm, coef, found_inf, s));
        } else { // bf16: the unscale (by 1) folded into the norm; a non-finite norm skips
            VRAM_HW_OK(vram_k_clip_grad_norm(grads, 2, &info->inv_scale, kMaxNorm, VRAM_K_NONFINITE_SKIP, partials,
                                        partials_count, norm, coef, found_inf, s));
        }
        sgd<<<(kH * kD + 255) / 256, 256, 0, s>>>(w1, g1, kH * kD, kLr, found_inf);
        sgd<<<(kC * kH + 255) / 256, 256, 0, s>>>(w2, g2, kC * kH, kLr, found_inf);
        VRAM_HW_OK(vram_k_scaler_update(state, found_inf, 1, info, s));
        record<<<1, 1, 0, s>>>(hist, step, info, norm, coef);
        VRAM_HW_CUDA(cudaGetLastError());
    }

    void run(bool graph, const vram_scaler_cfg &cfg, bool expect_backoff) {
        setup(cfg);
        std::vector<float> before(kH * kD + kC * kH), after(before.size()), snap(before.size() * 2);
        float *d_snap = nullptr;
        alloc(&d_snap, snap.size());
        cudaGraphExec_t exec = nullptr;
        if (graph) {
            cudaGraph_t g = nullptr;
            VRAM_HW_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
            enqueue_step();
            VRAM_HW_CUDA(cudaStreamEndCapture(s, &g));
            VRAM_HW_CUDA(cudaGraphInstantiate(&exec, g, 0));
            VRAM_HW_CUDA(cudaGraphDestroy(g));
        }
        for (int k = 0; k < kSteps; k++) {
            // the injected step's weights, before and after (copies in stream order)
            if (k == kInject || k == kInject + 1) {
                float *dst = d_snap + (k == kInject ? 0 : before.size());
                VRAM_HW_CUDA(cudaMemcpyAsync(dst, w1, kH * kD * 4, cudaMemcpyDeviceToDevice, s));
                VRAM_HW_CUDA(cudaMemcpyAsync(dst + kH * kD, w2, kC * kH * 4, cudaMemcpyDeviceToDevice, s));
            }
            if (graph) VRAM_HW_CUDA(cudaGraphLaunch(exec, s));
            else enqueue_step();
        }
        // the only synchronisation: the user asks for the numbers
        VRAM_HW_CUDA(cudaStreamSynchronize(s));
        std::vector<float> loss(kSteps);
        std::vector<step_record> h(kSteps);
        VRAM_HW_CUDA(cudaMemcpy(loss.data(), losses, kSteps * 4, cudaMemcpyDeviceToHost));
        VRAM_HW_CUDA(cudaMemcpy(h.data(), hist, kSteps * sizeof(step_record), cudaMemcpyDeviceToHost));
        VRAM_HW_CUDA(cudaMemcpy(snap.data(), d_snap, snap.size() * 4, cudaMemcpyDeviceToHost));
        int nsteps = 0, bad = 0;
        VRAM_HW_CUDA(cudaMemcpy(&nsteps, step, 4, cudaMemcpyDeviceToHost));
        VRAM_HW_CUDA(cudaMemcpy(&bad, bad_index, 4, cudaMemcpyDeviceToHost));
        cr_assert_eq(nsteps, kSteps);
        cr_assert_eq(bad, 0);

        // the loss falls
        double first = 0, last = 0;
        for (int k = 0; k < 10; k++) {
            first += loss[k] / 10;
            last += loss[kSteps - 10 + k] / 10;
        }
        for (int k = 0; k < kSteps; k++) cr_assert(isfinite(loss[k]), "loss of step %d: %g", k, (double)loss[k]);
        cr_log_info("%s %s: loss %.4f (first 10 steps) -> %.4f (last 10)", dtype == VRAM_DTYPE_F16 ? "fp16" : "bf16",
                    graph ? "graph" : "direct", first, last);
        cr_assert(last < 0.2 * first, "the loss did not fall: %.4f -> %.4f", first, last);

        // exactly the injected step was skipped, and it changed no weight
        vram_scaler hs = host_start;
        int clipped = 0;
        for (int k = 0; k < kSteps; k++) {
            const step_record &r = h[k];
            vram_scaler_result hr;
            int skip = 0;
            cr_assert_eq(vram_scaler_step(&hs, 0, k == kInject ? 1.0f : 0.0f, &skip), VRAM_OK);
            cr_assert_eq(vram_scaler_update(&hs, &hr), VRAM_OK);
            cr_assert_eq(r.info.status, VRAM_OK, "step %d", k);
            cr_assert_eq(r.info.result.skipped, k == kInject ? 1 : 0, "step %d skipped %d", k, r.info.result.skipped);
            cr_assert_eq(r.info.skip_mask, k == kInject ? 1u : 0u, "step %d", k);
            cr_assert_eq(vram_kref_f32_bits(r.info.scale), vram_kref_f32_bits(vram_scaler_scale(&hs)),
                         "step %d: device scale %g, scaler.h %g", k, (double)r.info.scale,
                         (double)vram_scaler_scale(&hs));
            cr_assert(memcmp(&r.info.result, &hr, sizeof hr) == 0, "step %d: result differs from scaler.h", k);
            if (k == kInject) cr_assert(!isfinite(r.norm), "the injected step's norm is %g", (double)r.norm);
            else cr_assert(isfinite(r.norm) && r.norm > 0.0f, "step %d norm %g", k, (double)r.norm);
            clipped += r.coef < 1.0f;
        }
        if (expect_backoff) {
            cr_assert(h[kInject].info.result.backed_off, "fp16: the overflow backs the scale off");
            cr_assert_eq(h[kInject].info.result.scale_after, h[kInject].info.result.scale_before * 0.5f);
            cr_assert(h[98].info.result.grew == 0 && h[99].info.result.grew == 1,
                      "the scale grew after 100 clean steps");
        } else {
            cr_assert_eq(h[kInject].info.result.why, VRAM_SCALER_SKIP_AT_MIN, "bf16: scale 1 is the minimum");
            cr_assert_eq(h[kInject].info.scale, 1.0f);
        }
        cr_assert(memcmp(snap.data(), snap.data() + before.size(), before.size() * 4) == 0,
                  "the skipped step changed the weights");
        cr_assert(clipped > 0, "clipping never engaged");
        cr_log_info("clipped %d of %d steps; final scale %g", clipped, kSteps, (double)h[kSteps - 1].info.scale);

        if (exec) VRAM_HW_CUDA(cudaGraphExecDestroy(exec));
        VRAM_HW_CUDA(cudaFree(d_snap));
        cublasDestroy(blas);
        VRAM_HW_CUDA(cudaStreamDestroy(s));
        // the rest goes with the process (each Criterion test runs in its own)
    }
};

vram_scaler_cfg fp16_cfg() {
    vram_scaler_cfg c;
    memset(&c, 0, sizeof c); // vramkit defaults: x2 / x0.5, min 1, max 2^24
    c.init_scale = 1024.0f;
    c.growth_interval = 100;
    c = vram_scaler_defaults(&c);
    cr_assert_eq(vram_scaler_validate(&c), VRAM_OK);
    return c;
}

vram_scaler_cfg bf16_cfg() {
    vram_scaler_cfg c;
    memset(&c, 0, sizeof c); // bf16 needs no scaling: scale 1 for good, the check and skip stay
    c.init_scale = 1.0f;
    c.growth_factor = 1.0;
    c = vram_scaler_defaults(&c);
    cr_assert_eq(vram_scaler_validate(&c), VRAM_OK);
    return c;
}

} // namespace

Test(hw_train_step, fp16_direct) { trainer<__half>().run(false, fp16_cfg(), true); }
Test(hw_train_step, fp16_graph_captured) { trainer<__half>().run(true, fp16_cfg(), true); }
Test(hw_train_step, bf16_direct) { trainer<__nv_bfloat16>().run(false, bf16_cfg(), false); }
Test(hw_train_step, bf16_graph_captured) { trainer<__nv_bfloat16>().run(true, bf16_cfg(), false); }

VRAM_HW_MAIN()
