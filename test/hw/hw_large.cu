// hw_large.cu — the kernels past 32-bit sizes on a real GPU: one tensor of 2^31 + k elements
// and more than 4 GiB, where an element index or a byte offset kept in 32 bits would wrap, a
// chunk count would pass 2^15 and a list is split over several launches by its chunks alone.
// Every element is compared with the CPU reference of include/vramkit/kref.h, as in
// hw_kernels.cu (bit for bit; the norm to 1e-5 of an fp64 sum):
//   unscale_and_check_fp16   2^31 + 17 fp16 (4 GiB + 34 B): the check alone (nothing written)
//                            with and without a NaN planted past element 2^31, then the
//                            unscale; the reference is kref's unscale run on each of the 65536
//                            fp16 patterns, looked up per element
//   norm_and_clip_fp32       2^31 + 3 fp32 (8 GiB): the norm with the unscale folded in against
//                            an fp64 sum (and the same bits when its last block finishes it),
//                            then clip_grad_norm_'s scaling pass, every element
//   casts_fp32_bf16          2^31 + 5 elements: fp32 -> bf16 (8 GiB -> 4 GiB), then back
// Inputs differ at every index (a hash of the index, never periodic), so an index that wraps
// reads or writes a different value and shows. Needs about 12.5 GiB of free GPU memory and 17
// GiB of host memory; a smaller GPU skips with the amount (an H100 has 80 GiB). Host work is
// spread over the CPUs. Criterion main; exit 77 without a GPU. ci/gpu.sh runs it last.
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "hw_common.h"
#include <vramkit/kref.h>
#include <vramkit_kernels.h>

namespace {

constexpr uint64_t kTwo31 = 1ull << 31;

uint64_t mix(uint64_t x) { // splitmix64: a different value for every index
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

// f(begin, end, slot) over [0, n) on every CPU (at most 64 slots); returns the slot count.
template <typename F> unsigned par(uint64_t n, F f) {
    unsigned t = std::thread::hardware_concurrency();
    t = t == 0 ? 4 : (t > 64 ? 64 : t);
    std::vector<std::thread> th;
    const uint64_t per = (n + t - 1) / t;
    for (unsigned k = 0; k < t; k++) {
        const uint64_t a = (uint64_t)k * per, b = std::min<uint64_t>(n, a + per);
        if (a < b) th.emplace_back([=] { f(a, b, k); });
    }
    for (std::thread &x : th) x.join();
    return t;
}

// Mismatches counted per slot, and the first one's index.
struct misses {
    uint64_t count[64] = {};
    uint64_t first[64];
    misses() { std::fill(first, first + 64, UINT64_MAX); }
    void add(unsigned slot, uint64_t i) {
        if (count[slot]++ == 0) first[slot] = i;
    }
    uint64_t total() const {
        uint64_t s = 0;
        for (uint64_t c : count) s += c;
        return s;
    }
    uint64_t first_index() const { return *std::min_element(first, first + 64); }
};

// Skips the test unless the GPU has `bytes` free (and 1 GiB more).
void need_gpu_memory(uint64_t bytes) {
    size_t free_b = 0, total_b = 0;
    VRAM_HW_CUDA(cudaMemGetInfo(&free_b, &total_b));
    if ((uint64_t)free_b < bytes + (1ull << 30))
        cr_skip_test("needs %.1f GiB of free GPU memory; this GPU has %.1f GiB free of %.1f", bytes / 1073741824.0,
                     free_b / 1073741824.0, total_b / 1073741824.0);
}

// Host <-> device in pieces of 1 GiB (pageable memory; the runtime stages it).
void upload(void *d, const void *h, uint64_t bytes) {
    for (uint64_t off = 0; off < bytes; off += 1ull << 30)
        VRAM_HW_CUDA(cudaMemcpy((char *)d + off, (const char *)h + off, std::min<uint64_t>(1ull << 30, bytes - off),
                                cudaMemcpyHostToDevice));
}
void download(void *h, const void *d, uint64_t bytes) {
    for (uint64_t off = 0; off < bytes; off += 1ull << 30)
        VRAM_HW_CUDA(cudaMemcpy((char *)h + off, (const char *)d + off, std::min<uint64_t>(1ull << 30, bytes - off),
                                cudaMemcpyDeviceToHost));
}

// A finite fp16 pattern for index i (an all-ones exponent loses its top bit).
uint16_t f16_at(uint64_t i) {
    uint16_t b = (uint16_t)mix(i ^ 0xf16);
    return (b & 0x7c00u) == 0x7c00u ? (uint16_t)(b & 0xbfffu) : b;
}

// A gradient-like fp32 for index i: sign and 2^-6 .. 2^5 magnitudes, every mantissa bit used.
float f32_at(uint64_t i) {
    const uint64_t h = mix(i ^ 0xf32);
    const float m = 1.0f + (float)(h >> 41) * 0x1p-23f;
    return ldexpf((h & 1) ? -m : m, (int)((h >> 1) % 12) - 6);
}

bool bf16_nan(uint16_t b) { return (b & 0x7fffu) > 0x7f80u; }

} // namespace

Test(hw_large, unscale_and_check_fp16) {
    const uint64_t n = kTwo31 + 17, bytes = n * 2, planted = kTwo31 + 5;
    need_gpu_memory(bytes);
    // the reference on every fp16 pattern: its unscaled value and its overflow flag
    const float inv = (float)(1.0 / 3.0);
    static uint16_t out_of[65536];
    static unsigned char bad_of[65536];
    for (uint32_t p = 0; p < 65536; p++) {
        uint16_t v = (uint16_t)p;
        float found = 0.0f;
        cr_assert_eq(vram_kref_unscale(&v, 1, VRAM_DTYPE_F16, inv, &found), VRAM_OK);
        out_of[p] = v;
        bad_of[p] = found != 0.0f;
    }
    std::vector<uint16_t> host(n);
    par(n, [&](uint64_t a, uint64_t b, unsigned) {
        for (uint64_t i = a; i < b; i++) host[i] = f16_at(i);
    });
    uint16_t *d = nullptr;
    VRAM_HW_CUDA(cudaMalloc(&d, bytes));
    upload(d, host.data(), bytes);
    float *d_inv = vram_hw_dev_scalar(inv), *d_found = vram_hw_dev_scalar(0.0f);
    vram_k_tensor t = {d, n, VRAM_DTYPE_F16};
    // the check alone: every element finite, nothing flagged
    VRAM_HW_OK(vram_k_unscale(&t, 1, nullptr, d_found, nullptr));
    cr_assert_eq(vram_hw_read_scalar(d_found), 0.0f, "check only, all finite: the flag went up");
    // a NaN past element 2^31: the check must see it (a 32-bit index would look at element 5)
    const uint16_t nan16 = 0x7e00;
    VRAM_HW_CUDA(cudaMemcpy(d + planted, &nan16, 2, cudaMemcpyHostToDevice));
    host[planted] = nan16;
    VRAM_HW_OK(vram_k_unscale(&t, 1, nullptr, d_found, nullptr));
    cr_assert_eq(vram_hw_read_scalar(d_found), 1.0f, "check only: the NaN at element 2^31 + 5 was missed");
    // the unscale: every element is the reference's, and the flag is the reference's
    VRAM_HW_CUDA(cudaMemset(d_found, 0, sizeof(float)));
    VRAM_HW_OK(vram_k_unscale(&t, 1, d_inv, d_found, nullptr));
    VRAM_HW_CUDA(cudaDeviceSynchronize());
    std::vector<uint16_t> back(n);
    download(back.data(), d, bytes);
    misses m;
    std::vector<unsigned char> any_bad(64, 0);
    par(n, [&](uint64_t a, uint64_t b, unsigned k) {
        for (uint64_t i = a; i < b; i++) {
            const uint16_t in = host[i], want = out_of[in];
            any_bad[k] |= bad_of[in];
            const bool both_nan = (want & 0x7fffu) > 0x7c00u && (back[i] & 0x7fffu) > 0x7c00u;
            if (back[i] != want && !both_nan) m.add(k, i);
        }
    });
    cr_assert_eq(m.total(), 0, "unscale of %llu fp16: %llu elements differ from the reference, the first at %llu",
                 (unsigned long long)n, (unsigned long long)m.total(), (unsigned long long)m.first_index());
    const bool want_flag = std::any_of(any_bad.begin(), any_bad.end(), [](unsigned char c) { return c != 0; });
    cr_assert(want_flag, "the planted NaN must raise the reference's flag");
    cr_assert_eq(vram_hw_read_scalar(d_found), 1.0f, "the unscale's flag");
    VRAM_HW_CUDA(cudaFree(d));
    VRAM_HW_CUDA(cudaFree(d_inv));
    VRAM_HW_CUDA(cudaFree(d_found));
}

Test(hw_large, norm_and_clip_fp32) {
    const uint64_t n = kTwo31 + 3, bytes = n * 4;
    need_gpu_memory(bytes);
    std::vector<float> host(n);
    par(n, [&](uint64_t a, uint64_t b, unsigned) {
        for (uint64_t i = a; i < b; i++) host[i] = f32_at(i);
    });
    const float inv = 0x1p-4f, max_norm = 1.0f;
    // the fp64 oracle, each CPU a slice, the slices added in order
    std::vector<double> part(64, 0.0);
    std::vector<int> status(64, VRAM_OK);
    par(n, [&](uint64_t a, uint64_t b, unsigned k) {
        double acc = 0.0;
        status[k] = vram_kref_sumsq_f64(host.data() + a, b - a, VRAM_DTYPE_F32, inv, &acc);
        part[k] = acc;
    });
    double sumsq = 0.0;
    for (unsigned k = 0; k < 64; k++) {
        cr_assert_eq(status[k], VRAM_OK);
        sumsq += part[k];
    }
    const double want = sqrt(sumsq);
    float *d = nullptr, *partials = nullptr;
    VRAM_HW_CUDA(cudaMalloc(&d, bytes));
    upload(d, host.data(), bytes);
    vram_k_tensor t = {d, n, VRAM_DTYPE_F32};
    uint64_t ws = 0;
    VRAM_HW_OK(vram_k_norm_workspace(&t, 1, &ws));
    cr_assert_eq(ws, (n + VRAM_K_CHUNK - 1) / VRAM_K_CHUNK + 1, "one partial per chunk, and the fold's counter");
    VRAM_HW_CUDA(cudaMalloc(&partials, ws * sizeof(float)));
    float *d_inv = vram_hw_dev_scalar(inv), *d_norm = vram_hw_dev_scalar(0.0f), *d_coef = vram_hw_dev_scalar(0.0f), *d_found = vram_hw_dev_scalar(0.0f);
    VRAM_HW_OK(vram_k_l2norm(&t, 1, d_inv, partials, ws, d_norm, nullptr));
    const float norm = vram_hw_read_scalar(d_norm);
    cr_assert(fabs((double)norm - want) <= 1e-5 * want, "norm of %llu fp32: %.9g, fp64 reference %.9g",
              (unsigned long long)n, (double)norm, want);
    // finished by the last of its 32769 blocks (VRAM_K_VARIANT_NORM 1): the same bits
    VRAM_HW_OK(vram_k_set_variant(VRAM_K_VARIANT_NORM, 1));
    VRAM_HW_OK(vram_k_l2norm(&t, 1, d_inv, partials, ws, d_norm, nullptr));
    VRAM_HW_OK(vram_k_set_variant(VRAM_K_VARIANT_NORM, 0));
    cr_assert_eq(vram_kref_f32_bits(vram_hw_read_scalar(d_norm)), vram_kref_f32_bits(norm), "the folded norm %a, the default %a",
                 (double)vram_hw_read_scalar(d_norm), (double)norm);
    // clip_grad_norm_: the same norm, then every element (x * inv) * coef
    VRAM_HW_OK(vram_k_clip_grad_norm(&t, 1, d_inv, max_norm, VRAM_K_NONFINITE_SKIP, partials, ws, d_norm, d_coef,
                                     d_found, nullptr));
    const float coef = vram_hw_read_scalar(d_coef);
    cr_assert_eq(vram_kref_f32_bits(vram_hw_read_scalar(d_norm)), vram_kref_f32_bits(norm), "the same norm twice");
    float want_coef = 0.0f;
    cr_assert_eq(vram_kref_clip_coef(norm, max_norm, &want_coef), 0);
    cr_assert_eq(vram_kref_f32_bits(coef), vram_kref_f32_bits(want_coef), "coefficient %a, reference %a", (double)coef,
                 (double)want_coef);
    cr_assert(coef < 1.0f, "the data must need clipping (norm %g)", (double)norm);
    cr_assert_eq(vram_hw_read_scalar(d_found), 0.0f);
    std::vector<float> back(n);
    download(back.data(), d, bytes);
    misses m;
    par(n, [&](uint64_t a, uint64_t b, unsigned k) {
        for (uint64_t i = a; i < b; i++)
            if (vram_kref_f32_bits(back[i]) != vram_kref_f32_bits(vram_kref_scale_value(host[i], inv, coef))) m.add(k, i);
    });
    cr_assert_eq(m.total(), 0, "clip of %llu fp32: %llu elements differ from (x * inv) * coef, the first at %llu",
                 (unsigned long long)n, (unsigned long long)m.total(), (unsigned long long)m.first_index());
    VRAM_HW_CUDA(cudaFree(d));
    VRAM_HW_CUDA(cudaFree(partials));
    VRAM_HW_CUDA(cudaFree(d_inv));
    VRAM_HW_CUDA(cudaFree(d_norm));
    VRAM_HW_CUDA(cudaFree(d_coef));
    VRAM_HW_CUDA(cudaFree(d_found));
}

Test(hw_large, casts_fp32_bf16) {
    const uint64_t n = kTwo31 + 5;
    need_gpu_memory(n * 6);
    // every bit pattern is fair here: NaNs, infs, subnormals, values that round up to inf
    std::vector<uint32_t> src(n);
    par(n, [&](uint64_t a, uint64_t b, unsigned) {
        for (uint64_t i = a; i < b; i++) src[i] = (uint32_t)mix(i ^ 0xca57);
    });
    uint32_t *d32 = nullptr;
    uint16_t *d16 = nullptr;
    VRAM_HW_CUDA(cudaMalloc(&d32, n * 4));
    VRAM_HW_CUDA(cudaMalloc(&d16, n * 2));
    upload(d32, src.data(), n * 4);
    VRAM_HW_OK(vram_k_cast(d32, VRAM_DTYPE_F32, d16, VRAM_DTYPE_BF16, n, nullptr));
    VRAM_HW_CUDA(cudaDeviceSynchronize());
    std::vector<uint16_t> narrow(n);
    download(narrow.data(), d16, n * 2);
    misses m;
    par(n, [&](uint64_t a, uint64_t b, unsigned k) {
        for (uint64_t i = a; i < b; i++) {
            const uint16_t want = vram_kref_f32_to_bf16(vram_kref_f32_from_bits(src[i]));
            if (narrow[i] != want && !(bf16_nan(narrow[i]) && bf16_nan(want))) m.add(k, i);
        }
    });
    cr_assert_eq(m.total(), 0, "fp32 -> bf16 of %llu: %llu elements differ, the first at %llu", (unsigned long long)n,
                 (unsigned long long)m.total(), (unsigned long long)m.first_index());
    // and back, over the fp32 buffer: bf16 -> fp32 is exact
    VRAM_HW_OK(vram_k_cast(d16, VRAM_DTYPE_BF16, d32, VRAM_DTYPE_F32, n, nullptr));
    VRAM_HW_CUDA(cudaDeviceSynchronize());
    download(src.data(), d32, n * 4);
    misses w;
    par(n, [&](uint64_t a, uint64_t b, unsigned k) {
        for (uint64_t i = a; i < b; i++) {
            const float want = vram_kref_bf16_to_f32(narrow[i]);
            const float got = vram_kref_f32_from_bits(src[i]);
            if (src[i] != vram_kref_f32_bits(want) && !(vram_kref_isnan(got) && vram_kref_isnan(want))) w.add(k, i);
        }
    });
    cr_assert_eq(w.total(), 0, "bf16 -> fp32 of %llu: %llu elements differ, the first at %llu", (unsigned long long)n,
                 (unsigned long long)w.total(), (unsigned long long)w.first_index());
    VRAM_HW_CUDA(cudaFree(d32));
    VRAM_HW_CUDA(cudaFree(d16));
}

VRAM_HW_MAIN()
