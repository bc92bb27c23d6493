// hw_kernels.cu — every kernel of kernels/vramkit_kernels.h against its CPU reference in
// include/vramkit/kref.h, on a real GPU.
//
// Tolerances, per dtype (normalised error = max |gpu - ref| / max |ref| over finite values):
//   elementwise kernels (unscale, scale, clip coefficient, int8 quantise/dequantise, casts,
//   gather): 0 for fp32, fp16 and bf16 alike. Each element is one or two IEEE fp32 operations
//   and one round-to-nearest-even conversion, which the GPU and kref.h both do exactly, so
//   the results must agree bit for bit (NaN payloads excepted: any NaN equals any NaN).
//   global L2 norm: relative error <= 1e-5 for fp32, fp16 and bf16 inputs alike (the squares
//   are summed in fp32 on the GPU, in fp64 by the reference; a chunk's tree of ~140 additions
//   bounds the error near 140 * 2^-24 / 2 on the norm, ~4e-6).
// NaN/inf: the class of every element (finite, +inf, -inf, NaN) must match, and the overflow
// flags must be set exactly when the reference sets them. Sentinel bytes (256 on each side of
// every output, a misaligned start included) must be untouched. Sizes cover empty tensors, 1,
// odd lengths, the chunk boundary (65536 +- 1), starts one element past a 16-byte boundary,
// lists longer than one launch holds (300 tensors, mixed dtypes) and tensors split across
// launches (vram_k_set_launch_limits); results must not depend on the split.
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <vector>

#include "hw_common.h"
#include <vramkit/kref.h>
#include <vramkit/scaler.h>
#include <vramkit_kernels.h>

namespace {

constexpr size_t kGuard = 256;
constexpr unsigned char kSentinel = 0xA5;

// xorshift64*: fixed streams, so a failure reproduces.
struct rng {
    uint64_t x;
    uint64_t next() { return vram_hw_rng_next(&x); }
    double uniform() { return (double)(next() >> 11) * 0x1p-53; }
};

uint32_t esize(int dtype) { return vram_kref_elem_bytes((vram_dtype)dtype); }
const char *dname(int dtype) { return dtype == VRAM_DTYPE_F32 ? "f32" : dtype == VRAM_DTYPE_F16 ? "f16" : "bf16"; }

// A device buffer with kGuard sentinel bytes before and after the data, whose start is
// `misalign` bytes past a 256-byte boundary.
struct guarded {
    unsigned char *base = nullptr;
    size_t bytes = 0, misalign = 0, total = 0;
    void init(size_t n_bytes, size_t mis) {
        bytes = n_bytes;
        misalign = mis;
        total = bytes + misalign + 2 * kGuard;
        VRAM_HW_CUDA(cudaMalloc(&base, total));
        VRAM_HW_CUDA(cudaMemset(base, kSentinel, total));
    }
    void *data() const { return base + kGuard + misalign; }
    void upload(const void *h) {
        if (bytes) VRAM_HW_CUDA(cudaMemcpy(data(), h, bytes, cudaMemcpyHostToDevice));
    }
    // The data back into h; every sentinel byte must be intact.
    void download(void *h, const char *what) {
        std::vector<unsigned char> all(total);
        VRAM_HW_CUDA(cudaMemcpy(all.data(), base, total, cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < kGuard + misalign; i++)
            cr_assert_eq(all[i], kSentinel, "%s: sentinel byte %zu before the data was written", what,
                         kGuard + misalign - i);
        for (size_t i = kGuard + misalign + bytes; i < total; i++)
            cr_assert_eq(all[i], kSentinel, "%s: sentinel byte %zu after the data was written", what,
                         i - (kGuard + misalign + bytes));
        if (bytes) memcpy(h, all.data() + kGuard + misalign, bytes);
    }
    void release() {
        if (base) VRAM_HW_CUDA(cudaFree(base));
        base = nullptr;
    }
};

int fclass(float f) { return isnan(f) ? 3 : isinf(f) ? (f > 0 ? 1 : 2) : 0; }
bool same_bits(float a, float b) {
    if (isnan(a) && isnan(b)) return true;
    return vram_kref_f32_bits(a) == vram_kref_f32_bits(b);
}

// Compare n elements of dtype: NaN/inf classes equal, normalised error within tol, and the
// number of finite elements that differ in any bit (must be 0 where the tolerance is 0).
void expect_equal(const void *gpu, const void *ref, uint64_t n, int dtype, double tol, const char *what) {
    double max_ref = 0.0, max_err = 0.0;
    uint64_t bit_diffs = 0;
    for (uint64_t i = 0; i < n; i++) {
        float g = vram_kref_load((vram_dtype)dtype, gpu, i), r = vram_kref_load((vram_dtype)dtype, ref, i);
        cr_assert_eq(fclass(g), fclass(r), "%s (%s): element %llu: gpu %a, reference %a", what, dname(dtype),
                     (unsigned long long)i, (double)g, (double)r);
        if (fclass(r) != 0) continue;
        max_ref = fmax(max_ref, fabs((double)r));
        max_err = fmax(max_err, fabs((double)g - (double)r));
        if (!same_bits(g, r)) {
            if (bit_diffs == 0)
                cr_log_error("%s (%s): first difference at %llu: gpu %a, reference %a", what, dname(dtype),
                             (unsigned long long)i, (double)g, (double)r);
            bit_diffs++;
        }
    }
    double nerr = max_ref > 0.0 ? max_err / max_ref : max_err;
    cr_assert(nerr <= tol, "%s (%s): normalised error %g > %g", what, dname(dtype), nerr, tol);
    if (tol == 0.0) cr_assert_eq(bit_diffs, 0, "%s (%s): %llu elements differ", what, dname(dtype),
                                 (unsigned long long)bit_diffs);
}

// Host data of dtype: gradient-like values (random sign, magnitudes over 2^-lo .. 2^hi), with
// specials (NaN, +-inf, subnormals, -0) at a few positions when asked.
std::vector<unsigned char> make_data(rng &g, int dtype, uint64_t n, int lo, int hi, bool specials) {
    std::vector<unsigned char> v(n * esize(dtype) + 1);
    for (uint64_t i = 0; i < n; i++) {
        double m = ldexp(1.0 + g.uniform(), (int)(g.next() % (uint64_t)(hi + lo + 1)) - lo);
        float f = (float)((g.next() & 1) ? -m : m);
        vram_kref_store((vram_dtype)dtype, v.data(), i, f);
    }
    if (specials && n > 0) {
        const float sp[6] = {NAN, INFINITY, -INFINITY, -0.0f, 0x1p-130f, 0x1p-20f};
        for (int k = 0; k < 6; k++) vram_kref_store((vram_dtype)dtype, v.data(), g.next() % n, sp[k]);
    }
    return v;
}

const int kDtypes[3] = {VRAM_DTYPE_F32, VRAM_DTYPE_F16, VRAM_DTYPE_BF16};
const uint64_t kSizes[] = {0, 1, 3, 4, 5, 17, 65535, 65536, 65537, 131073, 1000003};

} // namespace

// ---- non-finite check + unscale --------------------------------------------------------------

Test(hw_kernels, unscale_one_tensor_every_size_dtype_and_alignment) {
    rng g = {0x51ced};
    const float invs[3] = {0x1p-16f, (float)(1.0 / 3.0), 4.0f}; // 4: scale 0.25, fp16 overflows
    for (int dtype : kDtypes) {
        for (uint64_t n : kSizes) {
            for (int mis = 0; mis < 2; mis++) {
                for (int k = 0; k < 4; k++) { // k == 3: check only (inv_scale NULL)
                    bool specials = (n + (uint64_t)k) % 2 == 0;
                    std::vector<unsigned char> host = make_data(g, dtype, n, 12, 14, specials);
                    std::vector<unsigned char> ref = host, back(host.size());
                    guarded buf;
                    buf.init(n * esize(dtype), (size_t)mis * esize(dtype));
                    buf.upload(host.data());
                    float inv = k < 3 ? invs[k] : 1.0f;
                    float *d_inv = vram_hw_dev_scalar(inv), *d_found = vram_hw_dev_scalar(0.0f);
                    vram_k_tensor t = {buf.data(), n, dtype};
                    VRAM_HW_OK(vram_k_unscale(&t, 1, k < 3 ? d_inv : nullptr, d_found, nullptr));
                    VRAM_HW_CUDA(cudaDeviceSynchronize());
                    float ref_found = 0.0f;
                    cr_assert_eq(vram_kref_unscale(ref.data(), n, (vram_dtype)dtype, inv, &ref_found), VRAM_OK);
                    buf.download(back.data(), "unscale");
                    char what[96];
                    snprintf(what, sizeof what, "unscale n=%llu mis=%d inv#%d", (unsigned long long)n, mis, k);
                    expect_equal(back.data(), ref.data(), n, dtype, 0.0, what);
                    if (k == 3) cr_assert(memcmp(back.data(), host.data(), n * esize(dtype)) == 0, "%s: check only wrote", what);
                    cr_assert_eq(vram_hw_read_scalar(d_found), ref_found, "%s: flag", what);
                    VRAM_HW_CUDA(cudaFree(d_inv));
                    VRAM_HW_CUDA(cudaFree(d_found));
                    buf.release();
                }
            }
        }
    }
}

Test(hw_kernels, unscale_flags_one_bad_element_at_a_chunk_edge) {
    // one NaN / inf as the very last element of a 65537-element tensor (the second chunk's
    // only element), everything else finite: the flag must go up, the rest be unscaled
    const float bad[2] = {NAN, -INFINITY};
    for (int dtype : kDtypes) {
        for (float b : bad) {
            const uint64_t n = 65537;
            std::vector<unsigned char> host(n * esize(dtype));
            for (uint64_t i = 0; i < n; i++) vram_kref_store((vram_dtype)dtype, host.data(), i, (float)(i % 7) - 3.0f);
            vram_kref_store((vram_dtype)dtype, host.data(), n - 1, b);
            guarded buf;
            buf.init(host.size(), 0);
            buf.upload(host.data());
            float *d_inv = vram_hw_dev_scalar(0.5f), *d_found = vram_hw_dev_scalar(0.0f);
            vram_k_tensor t = {buf.data(), n, dtype};
            VRAM_HW_OK(vram_k_unscale(&t, 1, d_inv, d_found, nullptr));
            cr_assert_eq(vram_hw_read_scalar(d_found), 1.0f, "%s: the flag missed the last element", dname(dtype));
            std::vector<unsigned char> back(host.size());
            buf.download(back.data(), "unscale edge");
            cr_assert_eq(vram_kref_load((vram_dtype)dtype, back.data(), 0), -1.5f);
            cr_assert(!vram_kref_isfinite(vram_kref_load((vram_dtype)dtype, back.data(), n - 1)));
            VRAM_HW_CUDA(cudaFree(d_inv));
            VRAM_HW_CUDA(cudaFree(d_found));
            buf.release();
        }
    }
}

namespace {

// A list of tensors of mixed dtypes and sizes (empty ones, chunk edges and odd lengths
// among them), each in its own guarded buffer.
struct tensor_list {
    std::vector<guarded> bufs;
    std::vector<vram_k_tensor> t;
    std::vector<std::vector<unsigned char>> host;
    void make(rng &g, size_t count, bool specials, int lo, int hi) {
        const uint64_t picks[] = {0, 1, 2, 3, 7, 768, 2304, 65535, 65536, 65537, 100000, 131073};
        bufs.resize(count);
        t.resize(count);
        host.resize(count);
        for (size_t i = 0; i < count; i++) {
            int dtype = kDtypes[g.next() % 3];
            uint64_t n = picks[g.next() % (sizeof picks / sizeof picks[0])];
            size_t mis = (g.next() % 4 == 0) ? esize(dtype) : 0;
            const bool with_specials = specials && i % 50 == 7;
            if (with_specials && n == 0) n = 65537; // the specials must land somewhere
            host[i] = make_data(g, dtype, n, lo, hi, with_specials);
            bufs[i].init(n * esize(dtype), mis);
            bufs[i].upload(host[i].data());
            t[i] = {bufs[i].data(), n, dtype};
        }
    }
    void reset() {
        for (size_t i = 0; i < t.size(); i++) bufs[i].upload(host[i].data());
    }
    void release() {
        for (guarded &b : bufs) b.release();
    }
};

} // namespace

// A list of 300 tensors (more than a launch of the default metadata holds), mixed dtypes and
// specials, unscaled under three launch splits: every tensor bit for bit the reference's.
static void check_unscale_list(void) {
    rng g = {0xfeed};
    tensor_list L;
    L.make(g, 300, true, 10, 10); // 300 > VRAM_K_MAX_TENSORS_PER_LAUNCH
    const float inv = (float)(1.0 / 1024.0);
    // the reference, tensor by tensor
    std::vector<std::vector<unsigned char>> ref = L.host;
    float ref_found = 0.0f;
    for (size_t i = 0; i < L.t.size(); i++)
        cr_assert_eq(vram_kref_unscale(ref[i].data(), L.t[i].count, (vram_dtype)L.t[i].dtype, inv, &ref_found), VRAM_OK);
    cr_assert_eq(ref_found, 1.0f, "the list holds specials");
    const unsigned limits[3][2] = {{0, 0}, {7, 3}, {1, 1}};
    float *d_inv = vram_hw_dev_scalar(inv), *d_found = vram_hw_dev_scalar(0.0f);
    for (auto &lim : limits) {
        VRAM_HW_OK(vram_k_set_launch_limits(lim[0], lim[1]));
        L.reset();
        VRAM_HW_CUDA(cudaMemset(d_found, 0, sizeof(float)));
        VRAM_HW_OK(vram_k_unscale(L.t.data(), L.t.size(), d_inv, d_found, nullptr));
        VRAM_HW_CUDA(cudaDeviceSynchronize());
        cr_assert_eq(vram_hw_read_scalar(d_found), 1.0f);
        for (size_t i = 0; i < L.t.size(); i++) {
            std::vector<unsigned char> back(L.host[i].size());
            L.bufs[i].download(back.data(), "unscale list");
            char what[64];
            snprintf(what, sizeof what, "tensor %zu of 300, limits %u/%u", i, lim[0], lim[1]);
            expect_equal(back.data(), ref[i].data(), L.t[i].count, L.t[i].dtype, 0.0, what);
        }
    }
    VRAM_HW_OK(vram_k_set_launch_limits(0, 0));
    // without specials the flag stays down
    rng g2 = {0xc1ea4};
    tensor_list C;
    C.make(g2, 150, false, 4, 4);
    VRAM_HW_CUDA(cudaMemset(d_found, 0, sizeof(float)));
    VRAM_HW_OK(vram_k_unscale(C.t.data(), C.t.size(), d_inv, d_found, nullptr));
    cr_assert_eq(vram_hw_read_scalar(d_found), 0.0f);
    VRAM_HW_CUDA(cudaFree(d_inv));
    VRAM_HW_CUDA(cudaFree(d_found));
    L.release();
    C.release();
}

Test(hw_kernels, unscale_many_tensors_any_launch_split) { check_unscale_list(); }

// ---- scale, norm, clipping --------------------------------------------------------------------

Test(hw_kernels, scale_by_device_factors) {
    rng g = {0x5ca1e};
    const float inv = (float)(1.0 / 3.0), coef = 0.3f;
    for (int dtype : kDtypes) {
        for (uint64_t n : kSizes) {
            for (int mode = 0; mode < 4; mode++) { // both, inv only, coef only, factors equal to 1
                std::vector<unsigned char> host = make_data(g, dtype, n, 8, 8, n % 2 == 1);
                std::vector<unsigned char> ref = host, back(host.size());
                guarded buf;
                buf.init(n * esize(dtype), (n % 3) * esize(dtype));
                buf.upload(host.data());
                float a = mode == 3 ? 1.0f : inv, b = mode == 3 ? 1.0f : coef;
                float *d_a = vram_hw_dev_scalar(a), *d_b = vram_hw_dev_scalar(b);
                vram_k_tensor t = {buf.data(), n, dtype};
                VRAM_HW_OK(vram_k_scale(&t, 1, mode == 2 ? nullptr : d_a, mode == 1 ? nullptr : d_b, nullptr));
                cr_assert_eq(vram_kref_scale(ref.data(), n, (vram_dtype)dtype, mode == 2 ? 1.0f : a,
                                             mode == 1 ? 1.0f : b),
                             VRAM_OK);
                buf.download(back.data(), "scale");
                char what[64];
                snprintf(what, sizeof what, "scale n=%llu mode %d", (unsigned long long)n, mode);
                expect_equal(back.data(), ref.data(), n, dtype, 0.0, what);
                if (mode == 3) cr_assert(memcmp(back.data(), host.data(), n * esize(dtype)) == 0, "%s", what);
                VRAM_HW_CUDA(cudaFree(d_a));
                VRAM_HW_CUDA(cudaFree(d_b));
                buf.release();
            }
        }
    }
}

namespace {

double ref_norm(const tensor_list &L, float inv) {
    double acc = 0.0;
    for (size_t i = 0; i < L.t.size(); i++)
        cr_assert_eq(vram_kref_sumsq_f64(L.host[i].data(), L.t[i].count, (vram_dtype)L.t[i].dtype, inv, &acc), VRAM_OK);
    return sqrt(acc);
}

} // namespace

// The norm of a 260-tensor list against fp64, the same bits under four launch splits and twice
// in a row; *bits gets the norm's bits without and with the unscale folded in.
static void check_l2norm_list(uint32_t bits_out[2]) {
    rng g = {0x40a3};
    tensor_list L;
    L.make(g, 260, false, 6, 6);
    uint64_t ws = 0;
    VRAM_HW_OK(vram_k_norm_workspace(L.t.data(), L.t.size(), &ws));
    float *partials = nullptr, *d_norm = vram_hw_dev_scalar(0.0f);
    VRAM_HW_CUDA(cudaMalloc(&partials, ws * sizeof(float)));
    for (int folded = 0; folded < 2; folded++) {
        const float inv = folded ? 0x1p-7f : 1.0f;
        float *d_inv = vram_hw_dev_scalar(inv);
        const double want = ref_norm(L, inv);
        const unsigned limits[4][2] = {{0, 0}, {110, 5}, {3, 1}, {1, 16384}};
        uint32_t first_bits = 0;
        for (int k = 0; k < 4; k++) {
            VRAM_HW_OK(vram_k_set_launch_limits(limits[k][0], limits[k][1]));
            VRAM_HW_CUDA(cudaMemset(partials, 0xff, ws * sizeof(float))); // garbage the kernel must overwrite
            VRAM_HW_OK(vram_k_l2norm(L.t.data(), L.t.size(), folded ? d_inv : nullptr, partials, ws, d_norm, nullptr));
            float got = vram_hw_read_scalar(d_norm);
            double rel = fabs((double)got - want) / want;
            cr_assert(rel <= 1e-5, "norm %.9g, fp64 reference %.12g: relative error %g", (double)got, want, rel);
            if (k == 0) first_bits = vram_kref_f32_bits(got);
            else cr_assert_eq(vram_kref_f32_bits(got), first_bits, "the norm changed with the launch split");
        }
        // the same call again: bit for bit the same
        VRAM_HW_OK(vram_k_l2norm(L.t.data(), L.t.size(), folded ? d_inv : nullptr, partials, ws, d_norm, nullptr));
        cr_assert_eq(vram_kref_f32_bits(vram_hw_read_scalar(d_norm)), first_bits);
        cr_log_info("l2norm over %zu tensors (folded %d): %.9g vs fp64 %.12g", L.t.size(), folded,
                    (double)vram_kref_f32_from_bits(first_bits), want);
        bits_out[folded] = first_bits;
        VRAM_HW_CUDA(cudaFree(d_inv));
    }
    VRAM_HW_OK(vram_k_set_launch_limits(0, 0));
    // workspace too small (one per chunk is the least; ws holds one more): refused before anything runs
    cr_assert_eq(vram_k_l2norm(L.t.data(), L.t.size(), nullptr, partials, ws - 2, d_norm, nullptr), VRAM_E_INVALID);
    // one per chunk, without the variant's counter: the same norm (the final kernel adds the partials)
    VRAM_HW_OK(vram_k_l2norm(L.t.data(), L.t.size(), nullptr, partials, ws - 1, d_norm, nullptr));
    cr_assert_eq(vram_kref_f32_bits(vram_hw_read_scalar(d_norm)), bits_out[0], "a workspace without the counter");
    // an empty list has norm 0
    VRAM_HW_OK(vram_k_l2norm(nullptr, 0, nullptr, partials, 1, d_norm, nullptr));
    cr_assert_eq(vram_hw_read_scalar(d_norm), 0.0f);
    // inf and NaN elements give inf and NaN norms
    const float bad[2] = {INFINITY, NAN};
    size_t k = 0;
    while (L.t[k].count == 0) k++;
    for (float b : bad) {
        vram_kref_store((vram_dtype)L.t[k].dtype, L.host[k].data(), 0, b);
        L.reset();
        VRAM_HW_OK(vram_k_l2norm(L.t.data(), L.t.size(), nullptr, partials, ws, d_norm, nullptr));
        float got = vram_hw_read_scalar(d_norm);
        cr_assert(isnan(b) ? isnan(got) : isinf(got), "norm %a with %a in a tensor", (double)got, (double)b);
    }
    VRAM_HW_CUDA(cudaFree(partials));
    VRAM_HW_CUDA(cudaFree(d_norm));
    L.release();
}

Test(hw_kernels, l2norm_matches_fp64_and_is_deterministic) {
    uint32_t bits[2];
    check_l2norm_list(bits);
}

// The norm depends on the values and the chunking only: the same values at every start
// modulo 16 bytes give the same bits (the vectorised path for the aligned copy, element
// loads for the others, in the same order). *out (when given) gets each case's bits, in order.
static void check_l2norm_alignment(std::vector<uint32_t> *out = nullptr) {
    rng g = {0xa119};
    const uint64_t sizes[] = {1, 7, 4099, 65536, 65537, 200003};
    for (int dtype : kDtypes) {
        for (uint64_t n : sizes) {
            std::vector<unsigned char> host = make_data(g, dtype, n, 10, 10, false);
            const uint64_t ws = (n + VRAM_K_CHUNK - 1) / VRAM_K_CHUNK + 1; // and the fold variant's counter
            float *partials = nullptr, *d_norm = vram_hw_dev_scalar(0.0f);
            VRAM_HW_CUDA(cudaMalloc(&partials, ws * sizeof(float)));
            uint32_t bits[8];
            const int shifts = (int)(16 / esize(dtype));
            for (int k = 0; k < shifts; k++) {
                guarded buf;
                buf.init(n * esize(dtype), (size_t)k * esize(dtype));
                buf.upload(host.data());
                vram_k_tensor t = {buf.data(), n, dtype};
                VRAM_HW_OK(vram_k_l2norm(&t, 1, nullptr, partials, ws, d_norm, nullptr));
                bits[k] = vram_kref_f32_bits(vram_hw_read_scalar(d_norm));
                cr_assert_eq(bits[k], bits[0], "%s n=%llu: norm %a at offset %d elements, %a aligned", dname(dtype),
                             (unsigned long long)n, (double)vram_kref_f32_from_bits(bits[k]), k,
                             (double)vram_kref_f32_from_bits(bits[0]));
                buf.release();
            }
            if (out != nullptr) out->push_back(bits[0]);
            VRAM_HW_CUDA(cudaFree(partials));
            VRAM_HW_CUDA(cudaFree(d_norm));
        }
    }
}

Test(hw_kernels, l2norm_does_not_depend_on_alignment) { check_l2norm_alignment(); }

Test(hw_kernels, clip_coefficient_and_policies) {
    const float norms[] = {2.0f, 3.0f, 0.5f, 0.0f, 1.0f, 123456.78f, 1e-30f, INFINITY, NAN};
    const float maxes[] = {1.0f, 2.5f, 0.01f};
    float *d_norm = vram_hw_dev_scalar(0.0f), *d_coef = vram_hw_dev_scalar(0.0f), *d_found = vram_hw_dev_scalar(0.0f);
    for (float m : maxes) {
        for (float nrm : norms) {
            for (int policy = 0; policy < 2; policy++) {
                VRAM_HW_CUDA(cudaMemcpy(d_norm, &nrm, sizeof nrm, cudaMemcpyHostToDevice));
                VRAM_HW_CUDA(cudaMemset(d_found, 0, sizeof(float)));
                VRAM_HW_OK(vram_k_clip_coef(d_norm, m, policy, d_coef, d_found, nullptr));
                float want = 0.0f;
                int nonfinite = vram_kref_clip_coef(nrm, m, &want);
                cr_assert(same_bits(vram_hw_read_scalar(d_coef), want), "coef(%g, %g): gpu %a, reference %a", (double)nrm,
                          (double)m, (double)vram_hw_read_scalar(d_coef), (double)want);
                cr_assert_eq(vram_hw_read_scalar(d_found), nonfinite && policy == VRAM_K_NONFINITE_SKIP ? 1.0f : 0.0f);
            }
        }
    }
    // REPORT may go without a flag; SKIP may not; max_norm must be finite and > 0
    VRAM_HW_OK(vram_k_clip_coef(d_norm, 1.0f, VRAM_K_NONFINITE_REPORT, d_coef, nullptr, nullptr));
    cr_assert_eq(vram_k_clip_coef(d_norm, 1.0f, VRAM_K_NONFINITE_SKIP, d_coef, nullptr, nullptr), VRAM_E_INVALID);
    cr_assert_eq(vram_k_clip_coef(d_norm, 0.0f, 0, d_coef, d_found, nullptr), VRAM_E_INVALID);
    cr_assert_eq(vram_k_clip_coef(d_norm, INFINITY, 0, d_coef, d_found, nullptr), VRAM_E_INVALID);
    cr_assert_eq(vram_k_clip_coef(d_norm, 1.0f, 7, d_coef, d_found, nullptr), VRAM_E_INVALID);
    VRAM_HW_CUDA(cudaFree(d_norm));
    VRAM_HW_CUDA(cudaFree(d_coef));
    VRAM_HW_CUDA(cudaFree(d_found));
}

// clip_grad_norm_ over 120 tensors with the unscale folded in: norm, coefficient, every tensor
// bit for bit, and a NaN gradient's skip.
static void check_clip_grad_norm(void) {
    rng g = {0xc119};
    tensor_list L;
    L.make(g, 120, false, 3, 3);
    uint64_t ws = 0;
    VRAM_HW_OK(vram_k_norm_workspace(L.t.data(), L.t.size(), &ws));
    float *partials = nullptr;
    VRAM_HW_CUDA(cudaMalloc(&partials, ws * sizeof(float)));
    const float inv = 0x1p-10f, max_norm = 1.0f;
    float *d_inv = vram_hw_dev_scalar(inv), *d_norm = vram_hw_dev_scalar(0.0f), *d_coef = vram_hw_dev_scalar(0.0f), *d_found = vram_hw_dev_scalar(0.0f);
    VRAM_HW_OK(vram_k_clip_grad_norm(L.t.data(), L.t.size(), d_inv, max_norm, VRAM_K_NONFINITE_SKIP, partials, ws, d_norm,
                                d_coef, d_found, nullptr));
    float norm = vram_hw_read_scalar(d_norm), coef = vram_hw_read_scalar(d_coef);
    const double want = ref_norm(L, inv);
    cr_assert(fabs((double)norm - want) / want <= 1e-5, "norm %g, reference %g", (double)norm, want);
    float want_coef = 0.0f;
    cr_assert_eq(vram_kref_clip_coef(norm, max_norm, &want_coef), 0);
    cr_assert(same_bits(coef, want_coef));
    cr_assert(coef < 1.0f, "the test data must need clipping (norm %g)", (double)norm);
    cr_assert_eq(vram_hw_read_scalar(d_found), 0.0f);
    // every tensor is (x * inv) * coef, bit for bit
    for (size_t i = 0; i < L.t.size(); i++) {
        std::vector<unsigned char> ref = L.host[i], back(L.host[i].size());
        cr_assert_eq(vram_kref_scale(ref.data(), L.t[i].count, (vram_dtype)L.t[i].dtype, inv, coef), VRAM_OK);
        L.bufs[i].download(back.data(), "clip_grad_norm");
        expect_equal(back.data(), ref.data(), L.t[i].count, L.t[i].dtype, 0.0, "clip_grad_norm");
    }
    // and their norm is now at most max_norm
    VRAM_HW_OK(vram_k_l2norm(L.t.data(), L.t.size(), nullptr, partials, ws, d_norm, nullptr));
    // (1e-4: each element was rounded to its dtype after scaling, bf16 by up to 2^-9)
    cr_assert(vram_hw_read_scalar(d_norm) <= max_norm * (1.0f + 1e-4f), "clipped norm %g", (double)vram_hw_read_scalar(d_norm));
    // a NaN gradient: SKIP raises the flag and leaves the gradients unclipped (coef 1)
    size_t k = 0;
    while (L.t[k].count == 0) k++;
    vram_kref_store((vram_dtype)L.t[k].dtype, L.host[k].data(), 0, NAN);
    L.reset();
    VRAM_HW_OK(vram_k_clip_grad_norm(L.t.data(), L.t.size(), d_inv, max_norm, VRAM_K_NONFINITE_SKIP, partials, ws, d_norm,
                                d_coef, d_found, nullptr));
    cr_assert(isnan(vram_hw_read_scalar(d_norm)));
    cr_assert_eq(vram_hw_read_scalar(d_coef), 1.0f);
    cr_assert_eq(vram_hw_read_scalar(d_found), 1.0f);
    VRAM_HW_CUDA(cudaFree(partials));
    VRAM_HW_CUDA(cudaFree(d_inv));
    VRAM_HW_CUDA(cudaFree(d_norm));
    VRAM_HW_CUDA(cudaFree(d_coef));
    VRAM_HW_CUDA(cudaFree(d_found));
    L.release();
}

Test(hw_kernels, clip_grad_norm_unscales_and_clips_in_one_go) { check_clip_grad_norm(); }

// ---- the scaler's update on the device -------------------------------------------------------

Test(hw_kernels, scaler_update_kernel_matches_the_host_state_machine) {
    // DeepSpeed's preset reaches its error at the minimum (VRAM_E_MIN_SCALE) on this sequence:
    // the device must leave the state as it was and go on, exactly as vram_scaler_end_step
    // does on the host.
    const int presets[5] = {VRAM_SCALER_PRESET_VRAMKIT, VRAM_SCALER_PRESET_PYTORCH, VRAM_SCALER_PRESET_MEGATRON,
                            VRAM_SCALER_PRESET_DEEPSPEED_CONSECUTIVE, VRAM_SCALER_PRESET_DEEPSPEED};
    rng g = {0x5ca1};
    for (int p : presets) {
        for (int advance = 0; advance < 2; advance++) {
            unsigned refused = 0;
            vram_scaler_cfg cfg;
            cr_assert_eq(vram_scaler_preset(p, &cfg), VRAM_OK);
            cfg.growth_interval = 5;
            cfg.init_scale = 1024.0f;
            vram_scaler host;
            cr_assert_eq(vram_scaler_init(&host, &cfg), VRAM_OK);
            vram_scaler *d_state = vram_hw_dev_scalar(host);
            float *d_flags = nullptr;
            VRAM_HW_CUDA(cudaMalloc(&d_flags, 2 * sizeof(float)));
            vram_k_step_info *d_info = vram_hw_dev_scalar(vram_k_step_info{});
            VRAM_HW_OK(vram_k_scaler_publish(d_state, d_info, nullptr));
            vram_k_step_info info = vram_hw_read_scalar(d_info);
            cr_assert(info.scale == 1024.0f && same_bits(info.inv_scale, vram_scaler_inv_scale(&host)));
            for (int step = 0; step < 400; step++) {
                const float choices[5] = {0.0f, 0.0f, 0.0f, 1.0f, NAN};
                float f[2] = {choices[g.next() % 5], (g.next() % 7 == 0) ? INFINITY : 0.0f};
                VRAM_HW_CUDA(cudaMemcpy(d_flags, f, sizeof f, cudaMemcpyHostToDevice));
                vram_scaler_report rep;
                vram_status st;
                if (advance) {
                    VRAM_HW_OK(vram_k_scaler_advance(d_state, d_flags, d_info, nullptr));
                    st = vram_scaler_end_step(&host, f, 1, VRAM_SCALER_FLAGS_ADVANCE, &rep);
                } else {
                    VRAM_HW_OK(vram_k_scaler_update(d_state, d_flags, 2, d_info, nullptr));
                    st = vram_scaler_end_step(&host, f, 2, VRAM_SCALER_FLAGS_STEP, &rep);
                }
                refused += st == VRAM_E_MIN_SCALE;
                const vram_scaler_result &r = rep.result;
                const uint32_t mask = rep.skip_mask;
                info = vram_hw_read_scalar(d_info);
                cr_assert_eq(info.status, (int32_t)st, "preset %d step %d", p, step);
                cr_assert_eq(vram_kref_f32_bits(info.scale), vram_kref_f32_bits(vram_scaler_scale(&host)),
                             "preset %d step %d: scale %a vs host %a", p, step, (double)info.scale,
                             (double)vram_scaler_scale(&host));
                cr_assert_eq(vram_kref_f32_bits(info.inv_scale), vram_kref_f32_bits(vram_scaler_inv_scale(&host)));
                cr_assert_eq(info.skip_mask, mask);
                cr_assert_eq(info.found_inf, rep.found_inf);
                cr_assert_eq(info.steps, host.steps);
                cr_assert(memcmp(&info.result, &r, sizeof r) == 0, "preset %d step %d: result", p, step);
                float back[2];
                VRAM_HW_CUDA(cudaMemcpy(back, d_flags, sizeof back, cudaMemcpyDeviceToHost));
                cr_assert(back[0] == 0.0f && (advance || back[1] == 0.0f), "flags are consumed");
            }
            vram_scaler dev = vram_hw_read_scalar(d_state);
            cr_assert(memcmp(&dev, &host, sizeof dev) == 0, "preset %d: final state", p);
            if (p == VRAM_SCALER_PRESET_DEEPSPEED)
                cr_assert(refused > 0, "preset %d: the sequence reached the error at the minimum", p);
            cr_assert(host.skipped > 0 && host.skipped < host.steps, "the sequence exercised both paths");
            VRAM_HW_CUDA(cudaFree(d_state));
            VRAM_HW_CUDA(cudaFree(d_flags));
            VRAM_HW_CUDA(cudaFree(d_info));
        }
    }
    cr_assert_eq(vram_k_scaler_update(nullptr, nullptr, 1, nullptr, nullptr), VRAM_E_INVALID);
}

// ---- int8 quantisation -----------------------------------------------------------------------

Test(hw_kernels, int8_rows_bit_for_bit) {
    rng g = {0x1178};
    // every group size of the one-pass kernel (32 to 256 threads a row, by the row's length and
    // dtype), the two-pass kernel (8200 columns and up), odd lengths (element path)
    const uint64_t shapes[][2] = {{1, 1},    {3, 5},     {2, 65535}, {2, 65536}, {1, 65537}, {1000, 768},
                                  {33, 4096}, {5, 2049},  {64, 2048}, {7, 0},     {0, 9},     {257, 3},
                                  {40, 100},  {17, 1500}, {9, 3072},  {3, 8192},  {3, 8200},  {2, 16384}};
    for (int dtype : kDtypes) {
        for (auto &sh : shapes) {
            for (int mis = 0; mis < 2; mis++) {
                const uint64_t rows = sh[0], cols = sh[1], n = rows * cols;
                std::vector<unsigned char> host = make_data(g, dtype, n, 20, 10, false);
                // special rows: all zero, one NaN, one inf, tiny
                if (rows > 4 && cols > 0) {
                    for (uint64_t c = 0; c < cols; c++) vram_kref_store((vram_dtype)dtype, host.data(), c, 0.0f);
                    vram_kref_store((vram_dtype)dtype, host.data(), cols + cols / 2, NAN);
                    vram_kref_store((vram_dtype)dtype, host.data(), 2 * cols, -INFINITY);
                    for (uint64_t c = 0; c < cols; c++)
                        vram_kref_store((vram_dtype)dtype, host.data(), 3 * cols + c, dtype == VRAM_DTYPE_F16 ? 0x1p-24f : 0x1p-125f);
                }
                guarded x, q, s, y;
                x.init(n * esize(dtype), (size_t)mis * esize(dtype));
                q.init(n, (size_t)mis);
                s.init(rows * 4, (size_t)mis * 4);
                y.init(n * esize(dtype), (size_t)mis * esize(dtype));
                x.upload(host.data());
                int *d_nf = vram_hw_dev_scalar(0);
                VRAM_HW_OK(vram_k_quant_int8_rows(x.data(), dtype, rows, cols, (int8_t *)q.data(), (float *)s.data(), d_nf, nullptr));
                VRAM_HW_OK(vram_k_dequant_int8_rows((const int8_t *)q.data(), (const float *)s.data(), rows, cols, y.data(), dtype, nullptr));
                std::vector<int8_t> gq(n + 1), rq(n + 1);
                std::vector<float> gs(rows + 1), rs(rows + 1);
                std::vector<unsigned char> gy(n * esize(dtype) + 1), ry(n * esize(dtype) + 1), hx(host.size());
                q.download(gq.data(), "int8 codes");
                s.download(gs.data(), "int8 scales");
                y.download(gy.data(), "dequantised");
                x.download(hx.data(), "quantised input");
                cr_assert(memcmp(hx.data(), host.data(), n * esize(dtype)) == 0, "the input was changed");
                int nf = 0;
                for (uint64_t r = 0; r < rows; r++) {
                    cr_assert_eq(vram_kref_quant_int8_row(host.data() + r * cols * esize(dtype), cols, (vram_dtype)dtype,
                                                          rq.data() + r * cols, &rs[r], &nf),
                                 VRAM_OK);
                    cr_assert_eq(vram_kref_dequant_int8_row(rq.data() + r * cols, cols, rs[r],
                                                            ry.data() + r * cols * esize(dtype), (vram_dtype)dtype),
                                 VRAM_OK);
                    cr_assert(same_bits(gs[r], rs[r]), "%s %llux%llu row %llu: scale %a vs %a", dname(dtype),
                              (unsigned long long)rows, (unsigned long long)cols, (unsigned long long)r,
                              (double)gs[r], (double)rs[r]);
                }
                cr_assert(memcmp(gq.data(), rq.data(), n) == 0, "%s %llux%llu: codes differ", dname(dtype),
                          (unsigned long long)rows, (unsigned long long)cols);
                expect_equal(gy.data(), ry.data(), n, dtype, 0.0, "dequantise");
                cr_assert_eq(vram_hw_read_scalar(d_nf), nf, "non-finite flag");
                VRAM_HW_CUDA(cudaFree(d_nf));
                x.release();
                q.release();
                s.release();
                y.release();
            }
        }
    }
}

// ---- casts -------------------------------------------------------------------------------------

// Every pair, every size, and the three layouts the kernel tells apart: both buffers 16-byte
// aligned (the vectorised path users hit with cudaMalloc'd tensors), both one element past a
// boundary (a few elements moved alone, then vectorised), and one aligned, one not (no common
// boundary: element by element).
Test(hw_kernels, casts_every_pair_bit_for_bit) {
    rng g = {0xca57};
    const uint64_t sizes[] = {0, 1, 3, 5, 7, 8, 9, 17, 65535, 65536, 65537, 1000003};
    const int layouts[4][2] = {{0, 0}, {1, 1}, {1, 0}, {0, 1}}; // elements past 16 bytes: src, dst
    for (int sd : kDtypes) {
        for (int dd : kDtypes) {
            for (uint64_t n : sizes) {
                for (const auto &lay : layouts) {
                    // every bit pattern is fair: NaNs, infs, subnormals, values past fp16's range
                    std::vector<unsigned char> host(n * esize(sd) + 1);
                    for (size_t i = 0; i + 1 < host.size(); i++) host[i] = (unsigned char)g.next();
                    if (sd == VRAM_DTYPE_F32 && n > 0) { // and the edges of the formats
                        const float e[6] = {65520.0f, 0x1.ffdffep+15f, 0x1p-25f, 0x1.000002p-25f, 0x1.8p-24f, 0x1.7ffffep-24f};
                        for (int k = 0; k < 6; k++) vram_kref_store(VRAM_DTYPE_F32, host.data(), g.next() % n, e[k]);
                    }
                    guarded src, dst;
                    src.init(n * esize(sd), (size_t)lay[0] * esize(sd));
                    dst.init(n * esize(dd), (size_t)lay[1] * esize(dd));
                    src.upload(host.data());
                    VRAM_HW_OK(vram_k_cast(src.data(), sd, dst.data(), dd, n, nullptr));
                    std::vector<unsigned char> got(n * esize(dd) + 1), ref(n * esize(dd) + 1);
                    dst.download(got.data(), "cast");
                    cr_assert_eq(vram_kref_cast(host.data(), (vram_dtype)sd, ref.data(), (vram_dtype)dd, n), VRAM_OK);
                    char what[64];
                    snprintf(what, sizeof what, "cast %s -> %s n=%llu layout %d/%d", dname(sd), dname(dd),
                             (unsigned long long)n, lay[0], lay[1]);
                    expect_equal(got.data(), ref.data(), n, dd, 0.0, what);
                    src.release();
                    dst.release();
                }
            }
        }
    }
    cr_assert_eq(vram_k_cast(nullptr, VRAM_DTYPE_F32, nullptr, VRAM_DTYPE_I8, 1, nullptr), VRAM_E_INVALID);
}

// ---- gather ----------------------------------------------------------------------------------

static void check_gather(void) {
    rng g = {0x6a7};
    const uint64_t row_bytes[] = {1, 3, 4, 16, 17, 100, 3072, 65537, 1u << 20};
    const uint64_t rows_list[] = {0, 1, 5, 1000};
    for (uint64_t rb : row_bytes) {
        for (uint64_t rows : rows_list) {
            for (int mis = 0; mis < 3; mis++) { // 0: aligned; 1: dst one byte off; 2: src 4 bytes off
                const uint64_t src_rows = rb >= 65537 ? 7 : 1500;
                if (rb * rows > (64u << 20)) continue;
                std::vector<unsigned char> src(src_rows * rb), ref(rows * rb + 1), got(rows * rb + 1);
                for (auto &b : src) b = (unsigned char)g.next();
                std::vector<uint64_t> idx(rows + 1);
                for (uint64_t i = 0; i < rows; i++) idx[i] = g.next() % src_rows;
                if (rows >= 5) {
                    idx[1] = src_rows;       // just past the end
                    idx[rows - 1] = UINT64_MAX;
                }
                guarded s, d, ix;
                s.init(src.size(), mis == 2 ? 4 : 0);
                d.init(rows * rb, mis == 1 ? 1 : 0);
                ix.init(rows * 8, 0);
                s.upload(src.data());
                ix.upload(idx.data());
                // what a bad row must keep: the destination's prior bytes (sentinels here)
                memset(ref.data(), kSentinel, ref.size());
                int *d_bad = vram_hw_dev_scalar(0);
                VRAM_HW_OK(vram_k_gather_rows(d.data(), s.data(), src_rows, (const uint64_t *)ix.data(), rows, rb, d_bad, nullptr));
                int bad = 0;
                cr_assert_eq(vram_kref_gather_rows(ref.data(), src.data(), src_rows, idx.data(), rows, rb, &bad), VRAM_OK);
                d.download(got.data(), "gather");
                cr_assert(memcmp(got.data(), ref.data(), rows * rb) == 0, "gather rb=%llu rows=%llu mis=%d",
                          (unsigned long long)rb, (unsigned long long)rows, mis);
                cr_assert_eq(vram_hw_read_scalar(d_bad), bad);
                // without a flag the bad rows are still skipped
                if (rows >= 5) VRAM_HW_OK(vram_k_gather_rows(d.data(), s.data(), src_rows, (const uint64_t *)ix.data(), rows, rb, nullptr, nullptr));
                VRAM_HW_CUDA(cudaDeviceSynchronize());
                VRAM_HW_CUDA(cudaFree(d_bad));
                s.release();
                d.release();
                ix.release();
            }
        }
    }
    cr_assert_eq(vram_k_gather_rows(nullptr, nullptr, 1, nullptr, 1, 1, nullptr, nullptr), VRAM_E_INVALID);
    cr_assert_eq(vram_k_gather_rows(nullptr, nullptr, 1, nullptr, UINT64_MAX, 2, nullptr, nullptr), VRAM_E_OVERFLOW);
    cr_assert_eq(vram_k_gather_rows(nullptr, nullptr, 1, nullptr, 0, 5, nullptr, nullptr), VRAM_OK);
}

Test(hw_kernels, gather_rows_any_size_alignment_and_bad_indices) { check_gather(); }

// ---- variants (vram_k_set_variant) and the multi-tensor calls -----------------------------------

// Sets variants for the rest of a test; every kind goes back to its default when it ends.
struct variants_set {
    variants_set(int list, int norm, int gather) {
        VRAM_HW_OK(vram_k_set_variant(VRAM_K_VARIANT_LIST, list));
        VRAM_HW_OK(vram_k_set_variant(VRAM_K_VARIANT_NORM, norm));
        VRAM_HW_OK(vram_k_set_variant(VRAM_K_VARIANT_GATHER, gather));
    }
    ~variants_set() { // the defaults cannot be refused (checked in bad_arguments_enqueue_nothing)
        vram_status st = vram_k_set_launch_limits(0, 0);
        for (int k = 0; k < VRAM_K_VARIANT_KINDS; k++) st = vram_k_set_variant(k, 0);
        (void)st;
    }
};

// The list metadata (4 KiB, 32 KiB) and the norm's finish (final kernel, last block) in every
// combination: the default's checks against the reference, and the norm's bits the default's.
Test(hw_kernels, variants_list_and_norm_every_combination) {
    uint32_t base[2] = {0, 0};
    for (int list = 0; list < 2; list++)
        for (int fold = 0; fold < 2; fold++) {
            variants_set v(list, fold, 0);
            cr_log_info("list variant %d, norm variant %d", list, fold);
            check_unscale_list();
            uint32_t bits[2];
            check_l2norm_list(bits);
            if (list == 0 && fold == 0) memcpy(base, bits, sizeof base);
            cr_assert_eq(bits[0], base[0], "list %d, norm %d: the norm's bits differ from the default's", list, fold);
            cr_assert_eq(bits[1], base[1], "list %d, norm %d: the unscaled norm's bits differ from the default's", list,
                         fold);
            check_clip_grad_norm();
        }
}

// The last block's finish at every start modulo 16, small tensors (compute-sanitizer's
// racecheck runs this one: the partials and the counter cross blocks).
Test(hw_kernels, variants_norm_fold_alignment) {
    variants_set v(1, 1, 0);
    check_l2norm_alignment();
}

// The gather's variant 1 (the default before the first GPU run: a group as wide as the row,
// no index prefetch) against the reference, as gather_rows_any_size_alignment_and_bad_indices
// holds the default (variant 0) to it.
Test(hw_kernels, variants_gather_wide) {
    variants_set v(0, 0, 1);
    check_gather();
}

namespace {

// One kind's variant for the rest of a scope; the kind back to its default at its end.
struct variant_on {
    int kind;
    variant_on(int k, int v) : kind(k) { VRAM_HW_OK(vram_k_set_variant(k, v)); }
    ~variant_on() { // the default cannot be refused (checked in bad_arguments_enqueue_nothing)
        const vram_status st = vram_k_set_variant(kind, 0);
        (void)st;
    }
};

// A list of casts for vram_k_cast_many, each source random bytes (NaNs, infs, subnormals) in its
// own guarded buffers.
struct cast_list {
    struct item_bufs {
        guarded src, dst;
        std::vector<unsigned char> host;
    };
    std::vector<item_bufs> bufs;
    std::vector<vram_k_cast_item> items;
    // n elements from sd to dd, the buffers lay[0] and lay[1] elements past 16 bytes
    void add(rng &g, int sd, int dd, uint64_t n, const int lay[2]) {
        item_bufs b;
        b.host.resize(n * esize(sd) + 1);
        for (auto &c : b.host) c = (unsigned char)g.next();
        b.src.init(n * esize(sd), (size_t)lay[0] * esize(sd));
        b.dst.init(n * esize(dd), (size_t)lay[1] * esize(dd));
        b.src.upload(b.host.data());
        items.push_back({b.src.data(), b.dst.data(), n, sd, dd});
        bufs.push_back(std::move(b));
    }
    void stale() { // bytes every cast must overwrite
        for (auto &b : bufs) VRAM_HW_CUDA(cudaMemset(b.dst.data(), 0x5c, b.dst.bytes));
    }
    // Item i's output (into *got) against vram_kref_cast bit for bit (any NaN for any NaN; a copy: the bytes).
    void check(size_t i, const char *what, std::vector<unsigned char> *got) {
        const vram_k_cast_item &it = items[i];
        std::vector<unsigned char> ref(it.count * esize(it.dst_dtype) + 1);
        got->assign(ref.size(), 0);
        bufs[i].dst.download(got->data(), "cast_many");
        cr_assert_eq(vram_kref_cast(bufs[i].host.data(), (vram_dtype)it.src_dtype, ref.data(), (vram_dtype)it.dst_dtype,
                                    it.count),
                     VRAM_OK);
        if (it.src_dtype == it.dst_dtype)
            cr_assert(memcmp(got->data(), bufs[i].host.data(), it.count * esize(it.dst_dtype)) == 0, "%s: not a copy", what);
        else
            expect_equal(got->data(), ref.data(), it.count, it.dst_dtype, 0.0, what);
    }
    void release() {
        for (auto &b : bufs) {
            b.src.release();
            b.dst.release();
        }
    }
};

// Matrices for the int8 quantisation: the int8 test's shapes (every group size of the one-pass
// kernel, the two-pass rows, odd lengths, empty matrices), each dtype, aligned and one element
// off, with special rows when there are more than 4: all zero, a NaN, -inf, tiny; with `more`
// and more than 8 rows also those that test the variant's bits: fp16 subnormals only (row 4),
// -0 only (6), the largest magnitude negative (7), a NaN with its sign set (8).
const uint64_t kQuantShapes[][2] = {{1, 1},    {3, 5},     {2, 65535}, {1, 65537}, {1000, 768}, {33, 4096},
                                    {5, 2049}, {64, 2048}, {7, 0},     {0, 9},     {257, 3},    {17, 1500},
                                    {9, 3072}, {3, 8192},  {3, 8200},  {2, 16384}, {12, 16},    {40, 100}};

struct quant_list {
    struct item_bufs {
        guarded x, q, s;
        std::vector<unsigned char> host;
    };
    std::vector<item_bufs> bufs;
    std::vector<vram_k_quant_item> items;
    void make(rng &g, bool more) {
        for (int dtype : kDtypes)
            for (const auto &sh : kQuantShapes)
                for (int mis = 0; mis < 2; mis++) add(g, dtype, sh[0], sh[1], mis, more);
    }
    void add(rng &g, int dtype, uint64_t rows, uint64_t cols, int mis, bool more) {
        const uint64_t n = rows * cols;
        const vram_dtype dt = (vram_dtype)dtype;
        item_bufs b;
        b.host = make_data(g, dtype, n, 20, 10, false);
        unsigned char *h = b.host.data();
        if (rows > 4 && cols > 0) { // a zero row, a NaN row, an inf row, a tiny row
            for (uint64_t c = 0; c < cols; c++) vram_kref_store(dt, h, c, 0.0f);
            vram_kref_store(dt, h, cols + cols / 2, NAN);
            vram_kref_store(dt, h, 2 * cols, -INFINITY);
            for (uint64_t c = 0; c < cols; c++) vram_kref_store(dt, h, 3 * cols + c, dtype == VRAM_DTYPE_F16 ? 0x1p-24f : 0x1p-125f);
        }
        if (more && rows > 8 && cols > 0) {
            for (uint64_t c = 0; c < cols; c++) {
                vram_kref_store(dt, h, 6 * cols + c, -0.0f);
                vram_kref_store(dt, h, 7 * cols + c, (float)(c % 5) * 0.25f - 0.5f);
                if (dtype == VRAM_DTYPE_F16) { // largest magnitude 0x03ff, either sign
                    const uint16_t bits = (uint16_t)(((c * 37u) % 0x400u) | (c % 2 ? 0x8000u : 0u));
                    memcpy(h + (4 * cols + c) * 2, &bits, 2);
                }
            }
            vram_kref_store(dt, h, 7 * cols + cols / 3, -3.0f);
            vram_kref_store(dt, h, 8 * cols + cols - 1, -NAN);
        }
        b.x.init(n * esize(dtype), (size_t)mis * esize(dtype));
        b.q.init(n, (size_t)mis);
        b.s.init(rows * 4, (size_t)mis * 4);
        b.x.upload(b.host.data());
        items.push_back({b.x.data(), (int8_t *)b.q.data(), (float *)b.s.data(), rows, cols, dtype});
        bufs.push_back(std::move(b));
    }
    void stale() {
        for (auto &b : bufs) {
            VRAM_HW_CUDA(cudaMemset(b.q.data(), 0x5c, b.q.bytes));
            VRAM_HW_CUDA(cudaMemset(b.s.data(), 0x5c, b.s.bytes));
        }
    }
    // Item i's codes and scales (into *gq, *gs) against the reference bit for bit; *nf |= its rows' flag.
    void check(size_t i, const char *what, int *nf, std::vector<int8_t> *gq, std::vector<float> *gs) {
        const vram_k_quant_item &it = items[i];
        const uint64_t n = it.rows * it.cols;
        std::vector<int8_t> rq(n + 1);
        std::vector<float> rs(it.rows + 1);
        gq->assign(n + 1, 0);
        gs->assign(it.rows + 1, 0.0f);
        bufs[i].q.download(gq->data(), "quant codes");
        bufs[i].s.download(gs->data(), "quant scales");
        for (uint64_t row = 0; row < it.rows; row++) {
            cr_assert_eq(vram_kref_quant_int8_row(bufs[i].host.data() + row * it.cols * esize(it.dtype), it.cols,
                                                  (vram_dtype)it.dtype, rq.data() + row * it.cols, &rs[row], nf),
                         VRAM_OK);
            cr_assert(same_bits((*gs)[row], rs[row]), "%s %s %llux%llu item %zu row %llu: scale %a vs %a", what,
                      dname(it.dtype), (unsigned long long)it.rows, (unsigned long long)it.cols, i,
                      (unsigned long long)row, (double)(*gs)[row], (double)rs[row]);
        }
        cr_assert(memcmp(gq->data(), rq.data(), n) == 0, "%s %s %llux%llu item %zu: codes differ", what, dname(it.dtype),
                  (unsigned long long)it.rows, (unsigned long long)it.cols, i);
    }
    void release() {
        for (auto &b : bufs) {
            b.x.release();
            b.q.release();
            b.s.release();
        }
    }
};

} // namespace

// VRAM_K_VARIANT_CAST 1 (fp16/bf16 -> fp32 in 4-element groups): every size and layout of the
// cast test, and starts that only the variant's 8-byte source groups can use (4 elements past
// a 16-byte boundary: the variant moves no element alone, the default 4), each output the
// default's bytes exactly (NaN payloads too: the same conversion) and the reference's values
// bit for bit; and vram_k_cast_many under the variant, the same items mixed with the other pairs.
Test(hw_kernels, variants_cast_wide_stores) {
    rng g = {0xca58};
    const uint64_t sizes[] = {0, 1, 3, 4, 5, 7, 8, 9, 17, 65535, 65536, 65537, 1000003};
    const int layouts[7][2] = {{0, 0}, {1, 1}, {1, 0}, {0, 1}, {4, 4}, {2, 2}, {4, 0}}; // elements past 16 bytes
    const int pairs[2][2] = {{VRAM_DTYPE_F16, VRAM_DTYPE_F32}, {VRAM_DTYPE_BF16, VRAM_DTYPE_F32}};
    for (const auto &pr : pairs) {
        const int sd = pr[0], dd = pr[1];
        for (uint64_t n : sizes) {
            for (const auto &lay : layouts) {
                std::vector<unsigned char> host(n * esize(sd) + 1);
                for (size_t i = 0; i + 1 < host.size(); i++) host[i] = (unsigned char)g.next(); // NaNs, infs, subnormals
                guarded src, dst;
                src.init(n * esize(sd), (size_t)lay[0] * esize(sd));
                dst.init(n * esize(dd), (size_t)lay[1] * esize(dd));
                src.upload(host.data());
                std::vector<unsigned char> def(n * esize(dd) + 1), got(def.size()), ref(def.size());
                VRAM_HW_OK(vram_k_cast(src.data(), sd, dst.data(), dd, n, nullptr));
                dst.download(def.data(), "cast, default");
                VRAM_HW_CUDA(cudaMemset(dst.data(), 0x5c, dst.bytes)); // stale bytes the variant must overwrite
                {
                    variant_on v(VRAM_K_VARIANT_CAST, 1);
                    VRAM_HW_OK(vram_k_cast(src.data(), sd, dst.data(), dd, n, nullptr));
                }
                dst.download(got.data(), "cast, variant 1");
                char what[80];
                snprintf(what, sizeof what, "cast variant 1 %s -> %s n=%llu layout %d/%d", dname(sd), dname(dd),
                         (unsigned long long)n, lay[0], lay[1]);
                cr_assert(memcmp(got.data(), def.data(), n * esize(dd)) == 0, "%s: not the default's bytes", what);
                cr_assert_eq(vram_kref_cast(host.data(), (vram_dtype)sd, ref.data(), (vram_dtype)dd, n), VRAM_OK);
                expect_equal(got.data(), ref.data(), n, dd, 0.0, what);
                src.release();
                dst.release();
            }
        }
    }
    // vram_k_cast_many: the widening items under the variant among items of every other pair
    cast_list L;
    const uint64_t many_sizes[] = {1, 9, 65537, 131076};
    const int many_layouts[3][2] = {{0, 0}, {4, 4}, {1, 0}}; // aligned, both 4 elements off, the source 1 off
    for (int sd : kDtypes)
        for (int dd : kDtypes)
            for (uint64_t n : many_sizes)
                for (const auto &lay : many_layouts) L.add(g, sd, dd, n, lay);
    std::vector<std::vector<unsigned char>> def(L.items.size());
    for (int variant = 0; variant < 2; variant++) {
        variant_on v(VRAM_K_VARIANT_CAST, variant);
        VRAM_HW_OK(vram_k_set_launch_limits(5, 3)); // items cut across launches
        L.stale();
        VRAM_HW_OK(vram_k_cast_many(L.items.data(), L.items.size(), nullptr));
        VRAM_HW_OK(vram_k_set_launch_limits(0, 0));
        for (size_t i = 0; i < L.items.size(); i++) {
            const vram_k_cast_item &it = L.items[i];
            std::vector<unsigned char> got;
            char what[96];
            snprintf(what, sizeof what, "cast_many variant %d %s -> %s n=%llu item %zu", variant, dname(it.src_dtype),
                     dname(it.dst_dtype), (unsigned long long)it.count, i);
            L.check(i, what, &got);
            if (variant == 0) def[i] = got;
            else cr_assert(memcmp(got.data(), def[i].data(), it.count * esize(it.dst_dtype)) == 0, "%s: not the default's bytes", what);
        }
    }
    L.release();
}

// VRAM_K_VARIANT_QUANT 1 (the absmax from the magnitude bits, a branch a row for all-zero
// codes): the int8 test's shapes, every dtype, aligned (the variant's path) and not (the
// default's, unchanged), with rows that test the bits: a zero row, a NaN row, a -inf row, a
// tiny row, a row whose largest magnitude is negative, a row of subnormals, a row of -0 and a
// negative NaN; codes, scales and the flag the default's exactly and the reference's. Then
// vram_k_quant_int8_rows_many under the variant, against the default, on the same matrices.
Test(hw_kernels, variants_quant_bits) {
    rng g = {0x9b17};
    quant_list L;
    L.make(g, true);
    for (int many = 0; many < 2; many++) {
        std::vector<std::vector<int8_t>> def_q(L.items.size());
        std::vector<std::vector<float>> def_s(L.items.size());
        int def_nf = -1;
        for (int variant = 0; variant < 2; variant++) {
            variant_on v(VRAM_K_VARIANT_QUANT, variant);
            L.stale();
            int *d_nf = vram_hw_dev_scalar(0);
            if (many) {
                VRAM_HW_OK(vram_k_quant_int8_rows_many(L.items.data(), L.items.size(), d_nf, nullptr));
            } else {
                for (const vram_k_quant_item &it : L.items)
                    VRAM_HW_OK(vram_k_quant_int8_rows(it.x, it.dtype, it.rows, it.cols, it.q, it.scales, d_nf, nullptr));
            }
            const int nf = vram_hw_read_scalar(d_nf);
            VRAM_HW_CUDA(cudaFree(d_nf));
            if (variant == 0) def_nf = nf;
            cr_assert_eq(nf, def_nf, "the non-finite flag differs from the default's (many %d)", many);
            int ref_nf = 0;
            char what[48];
            snprintf(what, sizeof what, "quant variant %d (many %d)", variant, many);
            for (size_t i = 0; i < L.items.size(); i++) {
                std::vector<int8_t> gq;
                std::vector<float> gs;
                L.check(i, what, &ref_nf, &gq, &gs);
                if (variant == 0) {
                    def_q[i] = gq;
                    def_s[i] = gs;
                    continue;
                }
                const vram_k_quant_item &it = L.items[i];
                cr_assert(memcmp(gq.data(), def_q[i].data(), it.rows * it.cols) == 0, "%s item %zu: codes differ from the default's", what, i);
                cr_assert(memcmp(gs.data(), def_s[i].data(), it.rows * 4) == 0, "%s item %zu: scales differ from the default's", what, i);
            }
            cr_assert_eq(nf, ref_nf, "%s: the non-finite flag", what);
            cr_assert_eq(ref_nf, 1, "the matrices hold NaN rows");
        }
    }
    L.release();
}

// VRAM_K_VARIANT_HALF 1 (the norm's fp16/bf16 loads: aligned and unaligned loops apart, 4 packs
// in flight): the same order of additions, so the same bits as the default at every start
// modulo 16 bytes and size (the alignment test's cases), alone and with the last block's finish.
// Light enough for compute-sanitizer (the list test below is not).
Test(hw_kernels, variants_half_norm_alignment) {
    std::vector<uint32_t> def, got, folded;
    check_l2norm_alignment(&def);
    {
        variant_on v(VRAM_K_VARIANT_HALF, 1);
        check_l2norm_alignment(&got);
        variant_on f(VRAM_K_VARIANT_NORM, 1);
        check_l2norm_alignment(&folded);
    }
    cr_assert_eq(got.size(), def.size());
    cr_assert_eq(folded.size(), def.size());
    for (size_t i = 0; i < def.size(); i++) {
        cr_assert_eq(got[i], def[i], "case %zu: variant 1's norm %a, the default's %a", i, (double)vram_kref_f32_from_bits(got[i]),
                     (double)vram_kref_f32_from_bits(def[i]));
        cr_assert_eq(folded[i], def[i], "case %zu: variant 1 with the fold: %a, the default's %a", i,
                     (double)vram_kref_f32_from_bits(folded[i]), (double)vram_kref_f32_from_bits(def[i]));
    }
}

// The same over the 260-tensor list (mixed dtypes, four launch splits, the unscale folded in) and
// clip_grad_norm: the norm's bits the default's.
Test(hw_kernels, variants_half_norm_list) {
    uint32_t base[2], bits[2];
    check_l2norm_list(base);
    variant_on v(VRAM_K_VARIANT_HALF, 1);
    check_l2norm_list(bits);
    cr_assert_eq(bits[0], base[0], "variant 1's norm %a, the default's %a", (double)vram_kref_f32_from_bits(bits[0]),
                 (double)vram_kref_f32_from_bits(base[0]));
    cr_assert_eq(bits[1], base[1], "variant 1's unscaled norm %a, the default's %a", (double)vram_kref_f32_from_bits(bits[1]),
                 (double)vram_kref_f32_from_bits(base[1]));
    check_clip_grad_norm();
}

// vram_k_cast_many: every pair of types (equal ones are copies), sizes around the chunk, both
// buffers aligned, both one element off, one off; each item bit for bit vram_kref_cast (any
// NaN for any NaN; copies exact), sentinels intact; under both list variants and a launch
// split that cuts items across launches.
Test(hw_kernels, variants_cast_many_matches_the_reference) {
    rng g = {0xca5e};
    const uint64_t sizes[] = {0, 1, 5, 17, 65535, 65537, 131076, 200003};
    const int layouts[3][2] = {{0, 0}, {1, 1}, {1, 0}};
    cast_list L;
    for (int sd : kDtypes)
        for (int dd : kDtypes)
            for (uint64_t n : sizes)
                for (const auto &lay : layouts) L.add(g, sd, dd, n, lay);
    const int rounds[3][3] = {{0, 0, 0}, {1, 0, 0}, {0, 5, 3}}; // list variant, max tensors, max chunks
    for (const auto &r : rounds) {
        variants_set v(r[0], 0, 0);
        VRAM_HW_OK(vram_k_set_launch_limits((unsigned)r[1], (unsigned)r[2]));
        L.stale();
        VRAM_HW_OK(vram_k_cast_many(L.items.data(), L.items.size(), nullptr));
        VRAM_HW_CUDA(cudaDeviceSynchronize());
        for (size_t i = 0; i < L.items.size(); i++) {
            const vram_k_cast_item &it = L.items[i];
            std::vector<unsigned char> got;
            char what[96];
            snprintf(what, sizeof what, "cast_many %s -> %s n=%llu item %zu (list %d, limits %d/%d)",
                     dname(it.src_dtype), dname(it.dst_dtype), (unsigned long long)it.count, i, r[0], r[1], r[2]);
            L.check(i, what, &got);
        }
    }
    vram_k_cast_item bad = L.items[0];
    bad.dst_dtype = VRAM_DTYPE_I8;
    cr_assert_eq(vram_k_cast_many(&bad, 1, nullptr), VRAM_E_INVALID);
    cr_assert_eq(vram_k_cast_many(nullptr, 2, nullptr), VRAM_E_INVALID);
    VRAM_HW_OK(vram_k_cast_many(nullptr, 0, nullptr));
    L.release();
}

// vram_k_quant_int8_rows_many: the int8 test's shapes (every group size, the two-pass rows,
// odd lengths, empty matrices), three dtypes, aligned and not, special rows, in one call;
// each matrix's codes and scales bit for bit the reference's, the flag the reference's; under
// both list variants and a split of 7 matrices a launch.
Test(hw_kernels, variants_quant_many_matches_the_reference) {
    rng g = {0x9a11};
    quant_list L;
    L.make(g, false);
    int want_nf = 0;
    const int rounds[3][2] = {{0, 0}, {1, 0}, {0, 7}}; // list variant, max tensors a launch
    for (const auto &r : rounds) {
        variants_set v(r[0], 0, 0);
        VRAM_HW_OK(vram_k_set_launch_limits((unsigned)r[1], 0));
        int *d_nf = vram_hw_dev_scalar(0);
        VRAM_HW_OK(vram_k_quant_int8_rows_many(L.items.data(), L.items.size(), d_nf, nullptr));
        VRAM_HW_CUDA(cudaDeviceSynchronize());
        int nf = 0;
        char what[40];
        snprintf(what, sizeof what, "quant_many (list %d)", r[0]);
        for (size_t i = 0; i < L.items.size(); i++) {
            std::vector<int8_t> gq;
            std::vector<float> gs;
            L.check(i, what, &nf, &gq, &gs);
        }
        want_nf = nf;
        cr_assert_eq(vram_hw_read_scalar(d_nf), want_nf, "the non-finite flag");
        VRAM_HW_CUDA(cudaFree(d_nf));
    }
    cr_assert_eq(want_nf, 1, "the lists hold NaN rows");
    vram_k_quant_item bad = L.items[0];
    bad.dtype = VRAM_DTYPE_U8;
    cr_assert_eq(vram_k_quant_int8_rows_many(&bad, 1, nullptr, nullptr), VRAM_E_INVALID);
    cr_assert_eq(vram_k_quant_int8_rows_many(nullptr, 1, nullptr, nullptr), VRAM_E_INVALID);
    L.release();
}

// ---- arguments ----------------------------------------------------------------------------------

Test(hw_kernels, bad_arguments_enqueue_nothing) {
    float *f = vram_hw_dev_scalar(0.0f);
    vram_k_tensor bad_dtype = {f, 1, VRAM_DTYPE_I32};
    vram_k_tensor null_data = {nullptr, 4, VRAM_DTYPE_F32};
    vram_k_tensor misaligned = {(unsigned char *)f + 1, 1, VRAM_DTYPE_F16};
    vram_k_tensor empty = {nullptr, 0, VRAM_DTYPE_BF16};
    cr_assert_eq(vram_k_unscale(&bad_dtype, 1, nullptr, f, nullptr), VRAM_E_INVALID);
    cr_assert_eq(vram_k_unscale(&null_data, 1, nullptr, f, nullptr), VRAM_E_INVALID);
    cr_assert_eq(vram_k_unscale(&misaligned, 1, nullptr, f, nullptr), VRAM_E_INVALID);
    cr_assert_eq(vram_k_unscale(&empty, 1, nullptr, nullptr, nullptr), VRAM_E_INVALID); // no flag
    VRAM_HW_OK(vram_k_unscale(&empty, 1, nullptr, f, nullptr));
    VRAM_HW_OK(vram_k_unscale(nullptr, 0, nullptr, f, nullptr));
    cr_assert_eq(vram_k_unscale(nullptr, 3, nullptr, f, nullptr), VRAM_E_INVALID);
    uint64_t ws = 0;
    vram_k_tensor huge = {f, UINT64_MAX / 2, VRAM_DTYPE_F32};
    cr_assert_eq(vram_k_norm_workspace(&huge, 1, &ws), VRAM_E_OVERFLOW);
    cr_assert_eq(vram_k_quant_int8_rows(f, VRAM_DTYPE_F32, UINT64_MAX, 2, nullptr, nullptr, nullptr, nullptr),
                 VRAM_E_OVERFLOW);
    cr_assert_eq(vram_k_quant_int8_rows(f, VRAM_DTYPE_U8, 1, 1, nullptr, nullptr, nullptr, nullptr), VRAM_E_INVALID);
    cr_assert_eq(vram_k_set_launch_limits(VRAM_K_MAX_TENSORS_PER_LAUNCH_LARGE + 1, 0), VRAM_E_RANGE);
    cr_assert_eq(vram_k_set_variant(VRAM_K_VARIANT_KINDS, 0), VRAM_E_RANGE);
    cr_assert_eq(vram_k_set_variant(VRAM_K_VARIANT_GATHER, vram_k_variants(VRAM_K_VARIANT_GATHER)), VRAM_E_RANGE);
    for (int k = 0; k < VRAM_K_VARIANT_KINDS; k++) VRAM_HW_OK(vram_k_set_variant(k, 0));
    vram_k_error e;
    cr_assert_eq(vram_k_last_error(nullptr), VRAM_E_INVALID);
    VRAM_HW_OK(vram_k_last_error(&e));
    cr_assert_eq(e.cuda_error, 0, "a refused argument records no CUDA error");
    cr_assert_eq(vram_hw_read_scalar(f), 0.0f, "nothing ran");
    VRAM_HW_CUDA(cudaFree(f));
}

// An error left in the runtime's last-error slot by someone else's call is not this library's:
// a launch that succeeds returns VRAM_OK and did its work (the kernels used to read
// cudaGetLastError after <<<>>> and return the stale error, after queueing the kernel: a
// caller retrying an in-place unscale would apply it twice).
Test(hw_kernels, a_stale_runtime_error_is_not_blamed_on_a_launch) {
    float *buf = nullptr, *d_inv = vram_hw_dev_scalar(0.5f), *d_found = vram_hw_dev_scalar(0.0f);
    const float h[4] = {2.0f, 4.0f, 8.0f, 16.0f};
    VRAM_HW_CUDA(cudaMalloc(&buf, sizeof h));
    VRAM_HW_CUDA(cudaMemcpy(buf, h, sizeof h, cudaMemcpyHostToDevice));
    cr_assert_eq(cudaSetDevice(1 << 20), cudaErrorInvalidDevice, "a failed call of the caller's");
    cr_assert_eq(cudaPeekAtLastError(), cudaErrorInvalidDevice, "the slot holds it");
    vram_k_tensor t = {buf, 4, VRAM_DTYPE_F32};
    VRAM_HW_OK(vram_k_unscale(&t, 1, d_inv, d_found, nullptr));
    float back[4];
    VRAM_HW_CUDA(cudaMemcpy(back, buf, sizeof back, cudaMemcpyDeviceToHost));
    cr_assert(back[0] == 1.0f && back[3] == 8.0f, "unscaled once: %g %g", (double)back[0], (double)back[3]);
    (void)cudaGetLastError();
    VRAM_HW_CUDA(cudaFree(buf));
    VRAM_HW_CUDA(cudaFree(d_inv));
    VRAM_HW_CUDA(cudaFree(d_found));
}

VRAM_HW_MAIN()
