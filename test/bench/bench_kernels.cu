// bench_kernels: every kernel of kernels/vramkit_kernels.h as a fraction of the device-to-device
// copy bandwidth measured in the same run (cudaMemcpyAsync of 2^28 fp32 elements, bytes read +
// bytes written over time), on one large tensor (2^28 elements) and on GPT-2 small's 148 parameter tensors (124,439,808 elements,
// the list a training step unscales and clips). Bytes are counted per operation as what it must
// read and write (each line's "r" and "w": the norm reads every element once; clipping that is
// needed also reads and writes every element; clipping that is not needed writes nothing here).
// Times are medians of `reps` runs, each timed alone with CUDA events after two warm-up runs.
// bench_torch_kernels.py runs this with --json and times PyTorch's equivalents on the same
// shapes.
// Variants (vram_k_set_variant) and the multi-tensor calls are timed beside the default on the
// same data in the same run, as "case@variant" lines: @list1 (metadata of 32 KiB: GPT-2's 148
// tensors in one launch), @fold (the norm's last block adds the partials), @rowwide (the
// gather's variant 1: a group as wide as the row, no index prefetch; the default since the
// first GPU run is the former @v1), @store16 (the widening casts' whole-sector stores),
// @bits (the quantisation's absmax from the magnitude bits), @half4 (the fp16 norm's loads
// apart from the unaligned path, 4 in flight), @many (vram_k_cast_many /
// vram_k_quant_int8_rows_many: one call for the whole list). ci/gpu-summary.py sets them
// against their case.
// Usage: bench_kernels [--json] [--quick] [reps]   (default 20 reps; exit 77 without a GPU)
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <initializer_list>
#include <utility>
#include <vector>

#include <vramkit/dtype.h>
#include <vramkit_kernels.h>

namespace {

bool g_json = false;
int g_reps = 20;
double g_copy_gbps = 0.0;
bool g_first_json = true;

void die(const char *what, cudaError_t e) {
    fprintf(stderr, "bench_kernels: %s: %s\n", what, cudaGetErrorString(e));
    exit(3);
}
#define CU(call)                                       \
    do {                                               \
        cudaError_t e_ = (call);                       \
        if (e_ != cudaSuccess) die(#call, e_);         \
    } while (0)
#define VK(call)                                                                           \
    do {                                                                                   \
        vram_status s_ = (call);                                                           \
        if (s_ != VRAM_OK) {                                                               \
            fprintf(stderr, "bench_kernels: %s: %s\n", #call, vram_status_name(s_));       \
            exit(3);                                                                       \
        }                                                                                  \
    } while (0)

cudaStream_t g_stream;

// Median microseconds of f() on the stream.
template <typename F> double time_us(F f) {
    cudaEvent_t a, b;
    CU(cudaEventCreate(&a));
    CU(cudaEventCreate(&b));
    f();
    f();
    std::vector<double> t;
    for (int r = 0; r < g_reps; r++) {
        CU(cudaEventRecord(a, g_stream));
        f();
        CU(cudaEventRecord(b, g_stream));
        CU(cudaEventSynchronize(b));
        float ms = 0;
        CU(cudaEventElapsedTime(&ms, a, b));
        t.push_back(ms * 1000.0);
    }
    CU(cudaEventDestroy(a));
    CU(cudaEventDestroy(b));
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

// One result line: bytes the operation reads and writes per call, and the fraction of copy
// bandwidth that makes.
void report(const char *key, const char *what, double read, double written, double us) {
    const double bytes = read + written;
    double gbps = bytes / us / 1e3;
    double frac = g_copy_gbps > 0 ? gbps / g_copy_gbps : 1.0;
    if (g_json) {
        printf("%s\n  {\"key\": \"%s\", \"what\": \"%s\", \"read_bytes\": %.0f, \"write_bytes\": %.0f, "
               "\"bytes\": %.0f, \"us\": %.2f, \"gbps\": %.1f, \"copy_fraction\": %.3f}",
               g_first_json ? "[" : ",", key, what, read, written, bytes, us, gbps, frac);
        g_first_json = false;
    } else {
        printf("%-24s %-52s %9.1f MB r %9.1f MB w %9.1f us %8.1f GB/s %6.1f%% of copy\n", key, what, read / 1e6,
               written / 1e6, us, gbps, frac * 100.0);
    }
    fflush(stdout);
}

// Everything is enqueued on g_stream, which is non-blocking: a cudaMemset or cudaMemcpy would
// run on the legacy default stream, unordered with it.
void *dmalloc(size_t bytes) {
    void *p = nullptr;
    CU(cudaMalloc(&p, bytes));
    CU(cudaMemsetAsync(p, 0, bytes, g_stream));
    return p;
}

// Host to device on g_stream, done when it returns (the host buffer may go right after).
void h2d(void *dst, const void *src, size_t bytes) {
    CU(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, g_stream));
    CU(cudaStreamSynchronize(g_stream));
}

// Fill with finite values of a dtype (a cast of a ramp), so nothing overflows or flags.
void fill(void *p, int32_t dtype, uint64_t n) {
    std::vector<float> h(1u << 20);
    for (size_t i = 0; i < h.size(); i++) h[i] = (float)((i * 2654435761u) % 2001u) / 1000.0f - 1.0f;
    float *tmp = (float *)dmalloc(h.size() * 4);
    h2d(tmp, h.data(), h.size() * 4);
    uint32_t eb = dtype == VRAM_DTYPE_F32 ? 4 : 2;
    for (uint64_t off = 0; off < n; off += h.size()) {
        uint64_t k = std::min<uint64_t>(h.size(), n - off);
        VK(vram_k_cast(tmp, VRAM_DTYPE_F32, (char *)p + off * eb, dtype, k, g_stream));
    }
    CU(cudaStreamSynchronize(g_stream));
    CU(cudaFree(tmp));
}

// GPT-2 small (124M): the parameter shapes, in the order of its state dict.
struct shape {
    uint64_t rows, cols;
};
std::vector<shape> gpt2_shapes() {
    std::vector<shape> s = {{50257, 768}, {1024, 768}};
    for (int l = 0; l < 12; l++) {
        const shape layer[12] = {{1, 768},  {1, 768},    {768, 2304}, {1, 2304}, {768, 768},  {1, 768},
                                 {1, 768},  {1, 768},    {768, 3072}, {1, 3072}, {3072, 768}, {1, 768}};
        s.insert(s.end(), layer, layer + 12);
    }
    s.push_back({1, 768});
    s.push_back({1, 768});
    return s;
}

// The list carved out of one allocation, each tensor 256-byte aligned like separate cudaMallocs.
struct tlist {
    std::vector<vram_k_tensor> t;
    std::vector<shape> sh;
    void *arena = nullptr;
    uint64_t elems = 0, arena_elems = 0;
    int32_t dtype = VRAM_DTYPE_F32;
    // the values again (a run of unscales or clips shrinks them toward 0)
    void refill() { fill(arena, dtype, arena_elems); }
    void make(int32_t dt) {
        dtype = dt;
        sh = gpt2_shapes();
        uint32_t eb = dtype == VRAM_DTYPE_F32 ? 4 : 2;
        uint64_t bytes = 0;
        for (const shape &s : sh) bytes += (s.rows * s.cols * eb + 255) / 256 * 256;
        arena = dmalloc(bytes);
        uint64_t off = 0;
        for (const shape &s : sh) {
            uint64_t n = s.rows * s.cols;
            t.push_back({(char *)arena + off, n, dtype});
            off += (n * eb + 255) / 256 * 256;
            elems += n;
        }
        arena_elems = bytes / eb;
        refill();
    }
    void release() { CU(cudaFree(arena)); }
};

const char *dn(int32_t d) { return d == VRAM_DTYPE_F32 ? "f32" : d == VRAM_DTYPE_F16 ? "f16" : "bf16"; }

// f() with variants set (kind, variant pairs), then every kind back to its default.
template <typename F> void with_variants(const std::vector<std::pair<int, int>> &v, F f) {
    for (const auto &kv : v) VK(vram_k_set_variant(kv.first, kv.second));
    f();
    for (int k = 0; k < VRAM_K_VARIANT_KINDS; k++) VK(vram_k_set_variant(k, 0));
}

// "case@variant"
const char *vkey(const char *base, const char *variant) {
    static char k[96];
    snprintf(k, sizeof k, "%s@%s", base, variant);
    return k;
}

} // namespace

int main(int argc, char **argv) {
    bool quick = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) g_json = true;
        else if (strcmp(argv[i], "--quick") == 0) quick = true;
        else if (atoi(argv[i]) > 0) g_reps = atoi(argv[i]);
        else {
            fprintf(stderr, "usage: bench_kernels [--json] [--quick] [reps]\n");
            return 2;
        }
    }
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        fprintf(stderr, "bench_kernels: no usable CUDA device: skipped\n");
        return 77;
    }
    cudaDeviceProp prop;
    CU(cudaGetDeviceProperties(&prop, 0));
    CU(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking));
    const uint64_t big = quick ? (1ull << 24) : (1ull << 28); // elements of the large tensor
    if (!g_json) printf("bench_kernels on %s (%d SMs), large tensor %llu elements, %d reps\n", prop.name,
                        prop.multiProcessorCount, (unsigned long long)big, g_reps);

    // the ceiling: a device-to-device copy of the large fp32 tensor
    void *a = dmalloc(big * 4), *b = dmalloc(big * 4);
    {
        double us = time_us([&] { CU(cudaMemcpyAsync(b, a, big * 4, cudaMemcpyDeviceToDevice, g_stream)); });
        g_copy_gbps = 2.0 * big * 4 / us / 1e3;
        report("copy", "cudaMemcpyAsync device to device, large f32", 1.0 * big * 4, 1.0 * big * 4, us);
    }
    float *inv = (float *)dmalloc(4), *found = (float *)dmalloc(4), *norm = (float *)dmalloc(4),
          *coef = (float *)dmalloc(4);
    {
        const float h_inv = 1.0f / 1024.0f;
        h2d(inv, &h_inv, 4);
    }
    const int32_t dts[3] = {VRAM_DTYPE_F32, VRAM_DTYPE_F16, VRAM_DTYPE_BF16};
    char key[64], what[128];

    // ---- unscale, norm, clipping: one large tensor --------------------------------------
    for (int32_t d : dts) {
        uint32_t eb = d == VRAM_DTYPE_F32 ? 4 : 2;
        fill(a, d, big);
        vram_k_tensor t = {a, big, d};
        snprintf(key, sizeof key, "unscale:%s:large", dn(d));
        snprintf(what, sizeof what, "non-finite check + unscale, %s, 1 tensor", dn(d));
        report(key, what, 1.0 * big * eb, 1.0 * big * eb,
               time_us([&] { VK(vram_k_unscale(&t, 1, inv, found, g_stream)); }));
    }
    {
        fill(a, VRAM_DTYPE_F32, big);
        vram_k_tensor t = {a, big, VRAM_DTYPE_F32};
        uint64_t ws = 0;
        VK(vram_k_norm_workspace(&t, 1, &ws));
        float *partials = (float *)dmalloc(ws * 4);
        report("l2norm:f32:large", "global L2 norm, f32, 1 tensor (read only)", 1.0 * big * 4, 0.0,
               time_us([&] { VK(vram_k_l2norm(&t, 1, nullptr, partials, ws, norm, g_stream)); }));
        with_variants({{VRAM_K_VARIANT_NORM, 1}}, [&] {
            report(vkey("l2norm:f32:large", "fold"), "global L2 norm, f32, 1 tensor, finished by the last block",
                   1.0 * big * 4, 0.0, time_us([&] { VK(vram_k_l2norm(&t, 1, nullptr, partials, ws, norm, g_stream)); }));
        });
        CU(cudaFree(partials));
    }

    // ---- the same on GPT-2 small's parameter list ----------------------------------------
    for (int32_t d : {VRAM_DTYPE_F32, VRAM_DTYPE_F16}) {
        tlist L;
        L.make(d);
        uint32_t eb = d == VRAM_DTYPE_F32 ? 4 : 2;
        snprintf(key, sizeof key, "unscale:%s:gpt2", dn(d));
        snprintf(what, sizeof what, "non-finite check + unscale, %s, GPT-2 small's %zu tensors", dn(d), L.t.size());
        report(key, what, 1.0 * L.elems * eb, 1.0 * L.elems * eb,
               time_us([&] { VK(vram_k_unscale(L.t.data(), L.t.size(), inv, found, g_stream)); }));
        with_variants({{VRAM_K_VARIANT_LIST, 1}}, [&] {
            report(vkey(key, "list1"), what, 1.0 * L.elems * eb, 1.0 * L.elems * eb,
                   time_us([&] { VK(vram_k_unscale(L.t.data(), L.t.size(), inv, found, g_stream)); }));
        });
        uint64_t ws = 0;
        VK(vram_k_norm_workspace(L.t.data(), L.t.size(), &ws));
        float *partials = (float *)dmalloc(ws * 4);
        snprintf(key, sizeof key, "l2norm:%s:gpt2", dn(d));
        snprintf(what, sizeof what, "global L2 norm, %s, GPT-2 small (read only)", dn(d));
        report(key, what, 1.0 * L.elems * eb, 0.0, time_us([&] {
                   VK(vram_k_l2norm(L.t.data(), L.t.size(), nullptr, partials, ws, norm, g_stream));
               }));
        const std::vector<std::pair<const char *, std::vector<std::pair<int, int>>>> norm_variants = {
            {"list1", {{VRAM_K_VARIANT_LIST, 1}}},
            {"fold", {{VRAM_K_VARIANT_NORM, 1}}},
            {"list1+fold", {{VRAM_K_VARIANT_LIST, 1}, {VRAM_K_VARIANT_NORM, 1}}}};
        for (const auto &nv : norm_variants)
            with_variants(nv.second, [&] {
                report(vkey(key, nv.first), what, 1.0 * L.elems * eb, 0.0, time_us([&] {
                           VK(vram_k_l2norm(L.t.data(), L.t.size(), nullptr, partials, ws, norm, g_stream));
                       }));
            });
        if (d != VRAM_DTYPE_F32) // the 2-byte types' loads (fp32 has no such variant)
            with_variants({{VRAM_K_VARIANT_HALF, 1}}, [&] {
                report(vkey(key, "half4"), what, 1.0 * L.elems * eb, 0.0, time_us([&] {
                           VK(vram_k_l2norm(L.t.data(), L.t.size(), nullptr, partials, ws, norm, g_stream));
                       }));
            });
        L.refill(); // the unscales above took the values toward 0
        // clip_grad_norm_ when no clipping is needed (max_norm above the norm): the norm reads
        // every element; the coefficient is 1, so the scaling pass reads it and writes nothing
        // (PyTorch's clip_grad_norm_ multiplies every gradient by it all the same: its bytes are
        // counted so in bench_torch_kernels.py)
        snprintf(key, sizeof key, "clip:%s:gpt2", dn(d));
        snprintf(what, sizeof what, "clip_grad_norm, no clipping needed, %s, GPT-2 small", dn(d));
        report(key, what, 1.0 * L.elems * eb, 0.0, time_us([&] {
                   VK(vram_k_clip_grad_norm(L.t.data(), L.t.size(), nullptr, 1e30f, VRAM_K_NONFINITE_REPORT, partials,
                                            ws, norm, coef, found, g_stream));
               }));
        with_variants({{VRAM_K_VARIANT_LIST, 1}, {VRAM_K_VARIANT_NORM, 1}}, [&] {
            report(vkey(key, "list1+fold"), what, 1.0 * L.elems * eb, 0.0, time_us([&] {
                       VK(vram_k_clip_grad_norm(L.t.data(), L.t.size(), nullptr, 1e30f, VRAM_K_NONFINITE_REPORT,
                                                partials, ws, norm, coef, found, g_stream));
                   }));
        });
        if (d != VRAM_DTYPE_F32)
            with_variants({{VRAM_K_VARIANT_HALF, 1}}, [&] {
                report(vkey(key, "half4"), what, 1.0 * L.elems * eb, 0.0, time_us([&] {
                           VK(vram_k_clip_grad_norm(L.t.data(), L.t.size(), nullptr, 1e30f, VRAM_K_NONFINITE_REPORT,
                                                    partials, ws, norm, coef, found, g_stream));
                       }));
            });
        L.refill();
        // clipping needed (max_norm 1e-3, far below the norm of these data): the norm reads every
        // element, then the scaling pass reads and writes every element. Each repetition clips
        // the already clipped gradients again, to the same norm, so the values stay normal.
        snprintf(key, sizeof key, "clipact:%s:gpt2", dn(d));
        snprintf(what, sizeof what, "clip_grad_norm, clipping, %s, GPT-2 small", dn(d));
        report(key, what, 2.0 * L.elems * eb, 1.0 * L.elems * eb, time_us([&] {
                   VK(vram_k_clip_grad_norm(L.t.data(), L.t.size(), nullptr, 1e-3f, VRAM_K_NONFINITE_REPORT, partials,
                                            ws, norm, coef, found, g_stream));
               }));
        with_variants({{VRAM_K_VARIANT_LIST, 1}, {VRAM_K_VARIANT_NORM, 1}}, [&] {
            report(vkey(key, "list1+fold"), what, 2.0 * L.elems * eb, 1.0 * L.elems * eb, time_us([&] {
                       VK(vram_k_clip_grad_norm(L.t.data(), L.t.size(), nullptr, 1e-3f, VRAM_K_NONFINITE_REPORT,
                                                partials, ws, norm, coef, found, g_stream));
                   }));
        });
        CU(cudaFree(partials));
        L.release();
    }
    // the scaling pass alone, forced (coef 0.5 on the device; 22 halvings stay normal in fp32)
    {
        tlist L;
        L.make(VRAM_DTYPE_F32);
        const float half = 0.5f;
        h2d(coef, &half, 4);
        report("scale:f32:gpt2", "in-place scale by a device factor, f32, GPT-2 small", 1.0 * L.elems * 4,
               1.0 * L.elems * 4,
               time_us([&] { VK(vram_k_scale(L.t.data(), L.t.size(), nullptr, coef, g_stream)); }));
        L.refill();
        with_variants({{VRAM_K_VARIANT_LIST, 1}}, [&] {
            report(vkey("scale:f32:gpt2", "list1"), "in-place scale by a device factor, f32, GPT-2 small",
                   1.0 * L.elems * 4, 1.0 * L.elems * 4,
                   time_us([&] { VK(vram_k_scale(L.t.data(), L.t.size(), nullptr, coef, g_stream)); }));
        });
        L.release();
    }

    // ---- int8 per-row quantisation -------------------------------------------------------
    {
        const uint64_t cols = 4096, rows = big / cols;
        int8_t *q = (int8_t *)dmalloc(rows * cols);
        float *scales = (float *)dmalloc(rows * 4);
        for (int32_t d : {VRAM_DTYPE_F16, VRAM_DTYPE_F32}) {
            uint32_t eb = d == VRAM_DTYPE_F32 ? 4 : 2;
            fill(a, d, rows * cols);
            snprintf(key, sizeof key, "quant:%s:large", dn(d));
            snprintf(what, sizeof what, "int8 per-row absmax quantise, %s, %llu x %llu", dn(d),
                     (unsigned long long)rows, (unsigned long long)cols);
            report(key, what, (double)rows * cols * eb, (double)rows * cols + rows * 4.0, time_us([&] {
                       VK(vram_k_quant_int8_rows(a, d, rows, cols, q, scales, nullptr, g_stream));
                   }));
            with_variants({{VRAM_K_VARIANT_QUANT, 1}}, [&] {
                report(vkey(key, "bits"), what, (double)rows * cols * eb, (double)rows * cols + rows * 4.0, time_us([&] {
                           VK(vram_k_quant_int8_rows(a, d, rows, cols, q, scales, nullptr, g_stream));
                       }));
            });
            snprintf(key, sizeof key, "dequant:%s:large", dn(d));
            snprintf(what, sizeof what, "int8 per-row dequantise to %s, %llu x %llu", dn(d), (unsigned long long)rows,
                     (unsigned long long)cols);
            report(key, what, (double)rows * cols + rows * 4.0, (double)rows * cols * eb,
                   time_us([&] { VK(vram_k_dequant_int8_rows(q, scales, rows, cols, b, d, g_stream)); }));
        }
        CU(cudaFree(q));
        CU(cudaFree(scales));
    }
    {
        // GPT-2 small's 2-D weights in fp16, one call per matrix (as a loader would)
        tlist L;
        L.make(VRAM_DTYPE_F16);
        int8_t *q = (int8_t *)dmalloc(L.elems + 4096);
        float *scales = (float *)dmalloc(60000 * 4);
        double rd = 0, wr = 0;
        for (size_t i = 0; i < L.t.size(); i++)
            if (L.sh[i].rows > 1) {
                rd += L.sh[i].rows * L.sh[i].cols * 2.0;
                wr += L.sh[i].rows * L.sh[i].cols * 1.0 + L.sh[i].rows * 4.0;
            }
        report("quant:f16:gpt2", "int8 per-row quantise, f16, GPT-2 small's 2-D weights", rd, wr, time_us([&] {
                   for (size_t i = 0; i < L.t.size(); i++)
                       if (L.sh[i].rows > 1)
                           VK(vram_k_quant_int8_rows(L.t[i].data, VRAM_DTYPE_F16, L.sh[i].rows, L.sh[i].cols, q,
                                                     scales, nullptr, g_stream));
               }));
        // the same matrices in one call (each into its own codes and scales, as a loader keeps them)
        std::vector<vram_k_quant_item> items;
        int8_t *qs = (int8_t *)dmalloc(L.elems + 148 * 256);
        float *ss = (float *)dmalloc(200000 * 4);
        uint64_t qoff = 0, soff = 0;
        for (size_t i = 0; i < L.t.size(); i++)
            if (L.sh[i].rows > 1) {
                items.push_back({L.t[i].data, qs + qoff, ss + soff, L.sh[i].rows, L.sh[i].cols, VRAM_DTYPE_F16});
                qoff += (L.sh[i].rows * L.sh[i].cols + 255) / 256 * 256;
                soff += L.sh[i].rows;
            }
        report(vkey("quant:f16:gpt2", "many"), "int8 per-row quantise, f16, GPT-2 small's 2-D weights, one call", rd, wr,
               time_us([&] { VK(vram_k_quant_int8_rows_many(items.data(), items.size(), nullptr, g_stream)); }));
        with_variants({{VRAM_K_VARIANT_LIST, 1}}, [&] {
            report(vkey("quant:f16:gpt2", "many+list1"), "int8 per-row quantise, f16, GPT-2 small, one call, 32 KiB list",
                   rd, wr, time_us([&] { VK(vram_k_quant_int8_rows_many(items.data(), items.size(), nullptr, g_stream)); }));
        });
        with_variants({{VRAM_K_VARIANT_QUANT, 1}}, [&] {
            report(vkey("quant:f16:gpt2", "many+bits"), "int8 per-row quantise, f16, GPT-2 small, one call, absmax from bits",
                   rd, wr, time_us([&] { VK(vram_k_quant_int8_rows_many(items.data(), items.size(), nullptr, g_stream)); }));
        });
        CU(cudaFree(qs));
        CU(cudaFree(ss));
        CU(cudaFree(q));
        CU(cudaFree(scales));
        L.release();
    }

    // ---- casts -------------------------------------------------------------------------------
    {
        const int32_t pairs[4][2] = {{VRAM_DTYPE_F32, VRAM_DTYPE_F16},
                                     {VRAM_DTYPE_F32, VRAM_DTYPE_BF16},
                                     {VRAM_DTYPE_F16, VRAM_DTYPE_F32},
                                     {VRAM_DTYPE_BF16, VRAM_DTYPE_F32}};
        for (auto &p : pairs) {
            uint32_t sb = p[0] == VRAM_DTYPE_F32 ? 4 : 2, db = p[1] == VRAM_DTYPE_F32 ? 4 : 2;
            fill(a, p[0], big);
            snprintf(key, sizeof key, "cast:%s-%s:large", dn(p[0]), dn(p[1]));
            snprintf(what, sizeof what, "cast %s -> %s, 1 tensor", dn(p[0]), dn(p[1]));
            report(key, what, (double)big * sb, (double)big * db,
                   time_us([&] { VK(vram_k_cast(a, p[0], b, p[1], big, g_stream)); }));
            if (sb < db) // the widening casts' variant
                with_variants({{VRAM_K_VARIANT_CAST, 1}}, [&] {
                    report(vkey(key, "store16"), what, (double)big * sb, (double)big * db,
                           time_us([&] { VK(vram_k_cast(a, p[0], b, p[1], big, g_stream)); }));
                });
        }
        tlist L;
        L.make(VRAM_DTYPE_F32);
        void *out = dmalloc(L.elems * 2 + 148 * 256);
        report("cast:f32-f16:gpt2", "cast f32 -> f16, GPT-2 small, one call per tensor", L.elems * 4.0, L.elems * 2.0,
               time_us([&] {
                   uint64_t off = 0;
                   for (const vram_k_tensor &t : L.t) {
                       VK(vram_k_cast(t.data, VRAM_DTYPE_F32, (char *)out + off, VRAM_DTYPE_F16, t.count, g_stream));
                       off += (t.count * 2 + 255) / 256 * 256;
                   }
               }));
        std::vector<vram_k_cast_item> items;
        uint64_t off = 0;
        for (const vram_k_tensor &t : L.t) {
            items.push_back({t.data, (char *)out + off, t.count, VRAM_DTYPE_F32, VRAM_DTYPE_F16});
            off += (t.count * 2 + 255) / 256 * 256;
        }
        report(vkey("cast:f32-f16:gpt2", "many"), "cast f32 -> f16, GPT-2 small, one vram_k_cast_many call",
               L.elems * 4.0, L.elems * 2.0,
               time_us([&] { VK(vram_k_cast_many(items.data(), items.size(), g_stream)); }));
        with_variants({{VRAM_K_VARIANT_LIST, 1}}, [&] {
            report(vkey("cast:f32-f16:gpt2", "many+list1"), "cast f32 -> f16, GPT-2 small, one call, 32 KiB list",
                   L.elems * 4.0, L.elems * 2.0,
                   time_us([&] { VK(vram_k_cast_many(items.data(), items.size(), g_stream)); }));
        });
        CU(cudaFree(out));
        L.release();
    }

    // ---- gather --------------------------------------------------------------------------------
    {
        const uint64_t row_bytes = 1024, src_rows = big * 4 / row_bytes, rows = src_rows / 2;
        std::vector<uint64_t> idx(rows);
        uint64_t x = 88172645463325252ull;
        for (uint64_t &v : idx) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            v = x % src_rows;
        }
        uint64_t *d_idx = (uint64_t *)dmalloc(rows * 8);
        h2d(d_idx, idx.data(), rows * 8);
        snprintf(what, sizeof what, "gather %llu random rows of 1 KiB from %llu", (unsigned long long)rows,
                 (unsigned long long)src_rows);
        report("gather:1k:large", what, 1.0 * rows * row_bytes + rows * 8.0, 1.0 * rows * row_bytes, time_us([&] {
                   VK(vram_k_gather_rows(b, a, src_rows, d_idx, rows, row_bytes, nullptr, g_stream));
               }));
        with_variants({{VRAM_K_VARIANT_GATHER, 1}}, [&] {
            report(vkey("gather:1k:large", "rowwide"), what, 1.0 * rows * row_bytes + rows * 8.0, 1.0 * rows * row_bytes,
                   time_us([&] { VK(vram_k_gather_rows(b, a, src_rows, d_idx, rows, row_bytes, nullptr, g_stream)); }));
        });
        // an embedding lookup: 16384 token rows of GPT-2's wte (50257 x 768 f32, 3 KiB rows)
        const uint64_t wrow = 768 * 4, tokens = 16384, vocab = std::min<uint64_t>(50257, big * 4 / wrow);
        for (uint64_t i = 0; i < tokens; i++) idx[i] %= vocab;
        h2d(d_idx, idx.data(), tokens * 8);
        report("gather:wte:gpt2", "gather 16384 rows of GPT-2's wte (768 f32)", 1.0 * tokens * wrow + tokens * 8.0,
               1.0 * tokens * wrow,
               time_us([&] { VK(vram_k_gather_rows(b, a, vocab, d_idx, tokens, wrow, nullptr, g_stream)); }));
        with_variants({{VRAM_K_VARIANT_GATHER, 1}}, [&] {
            report(vkey("gather:wte:gpt2", "rowwide"), "gather 16384 rows of GPT-2's wte (768 f32)",
                   1.0 * tokens * wrow + tokens * 8.0, 1.0 * tokens * wrow,
                   time_us([&] { VK(vram_k_gather_rows(b, a, vocab, d_idx, tokens, wrow, nullptr, g_stream)); }));
        });
        CU(cudaFree(d_idx));
    }
    if (g_json) printf("\n]\n");
    CU(cudaFree(a));
    CU(cudaFree(b));
    return 0;
}
