// cast.cu — fp32 <-> fp16 / bf16 (and fp16 <-> bf16) element casts: widen to fp32 (exact),
// round once to the target with the hardware's round-to-nearest-even conversions (subnormals
// kept, overflow to inf, NaN stays NaN). Grid-stride over groups of G = 16 / (the smaller
// element size) elements, so both sides move in 128-bit accesses (an fp32 side in two), all
// loads of a step issued before its stores; the grid is one wave of the blocks the registers
// let each SM hold. When the two buffers cannot both reach a 16-byte boundary after the same
// number of elements, every element is moved on its own (same results). CPU reference:
// vram_kref_cast.
// VRAM_K_VARIANT_CAST 1, for the widening casts (fp16/bf16 -> fp32) only: groups of 4 elements
// (an 8-byte load, one 16-byte store), so that each store instruction of a warp writes 512
// contiguous bytes and every 32-byte sector whole; the default's groups of 8 (a 16-byte load,
// two 16-byte stores) have each store instruction write half of 32 sectors, the other half
// coming with the next. The first GPU run had the widening casts at 63% of copy, the narrowing
// ones (whose loads have that pattern, and whose stores are whole) at 97%: if L2 fetches a
// sector from memory before merging a partial write (1.07 GB more read: 2.68 GB moved in 606
// us is the copy's 4.4 TB/s), whole-sector stores remove that read. Same bytes in flight per
// thread (64 of source), same results bit for bit (each element converts alone).
#include "vk_internal.cuh"

namespace {

constexpr int kThreads = 256;
constexpr int kMinBlocks = 4; // resident blocks per SM the registers must allow (<= 64 each)

// WIDE: VRAM_K_VARIANT_CAST 1's groups (only instantiated for sizeof(S) < sizeof(D)). A side's
// boundary: the alignment its group needs (16 bytes, or 8 for WIDE's 2-byte source).
template <typename S, typename D, bool WIDE = false> struct vram__k_cast_shape {
    static constexpr int G = WIDE ? 16 / (int)sizeof(D) // elements per group
                                  : 16 / (int)(sizeof(S) < sizeof(D) ? sizeof(S) : sizeof(D));
    static constexpr int U = 64 / (G * (int)sizeof(S)); // groups in flight per thread: 64 bytes of source
    static constexpr uintptr_t src_align = G * sizeof(S) < 16 ? G * sizeof(S) : 16;
    static constexpr uintptr_t dst_align = G * sizeof(D) < 16 ? G * sizeof(D) : 16;
};

template <typename S, typename D>
__device__ __forceinline__ D vram__k_cast_one(S x) {
    return vram__k_from_f<D>(vram__k_to_f(x));
}

// Elements [0, n) of src into dst by the threads numbered first, first + stride, ... (a grid or
// a block). VEC: src + head and dst + head are both 16-byte aligned: the head (head < G
// elements) alone, then groups of G, U in flight a thread with every load issued before its
// stores, then the tail alone; otherwise element by element, U in flight.
template <typename S, typename D, bool VEC, bool WIDE = false>
__device__ __forceinline__ void vram__k_cast_span(const S *__restrict__ src, D *__restrict__ dst, uint64_t n,
                                                  uint32_t head, uint64_t first, uint64_t stride) {
    constexpr int G = vram__k_cast_shape<S, D, WIDE>::G, U = vram__k_cast_shape<S, D, WIDE>::U;
    if (!VEC) {
        for (uint64_t k0 = first; k0 < n; k0 += U * stride) {
            S a[U];
#pragma unroll
            for (int u = 0; u < U; u++)
                if (k0 + u * stride < n) a[u] = src[k0 + u * stride];
#pragma unroll
            for (int u = 0; u < U; u++)
                if (k0 + u * stride < n) dst[k0 + u * stride] = vram__k_cast_one<S, D>(a[u]);
        }
        return;
    }
    if (first < head) dst[first] = vram__k_cast_one<S, D>(src[first]);
    const uint64_t groups = (n - head) / G;
    const vram__k_group<S, G> *__restrict__ sg = reinterpret_cast<const vram__k_group<S, G> *>(src + head);
    vram__k_group<D, G> *__restrict__ dg = reinterpret_cast<vram__k_group<D, G> *>(dst + head);
    for (uint64_t k0 = first; k0 < groups; k0 += U * stride) {
        vram__k_group<S, G> a[U];
#pragma unroll
        for (int u = 0; u < U; u++)
            if (k0 + u * stride < groups) a[u] = sg[k0 + u * stride];
#pragma unroll
        for (int u = 0; u < U; u++)
            if (k0 + u * stride < groups) {
                vram__k_group<D, G> b;
#pragma unroll
                for (int j = 0; j < G; j++) b.v[j] = vram__k_cast_one<S, D>(a[u].v[j]);
                dg[k0 + u * stride] = b;
            }
    }
    const uint64_t tail0 = head + groups * G;
    if (first < n - tail0) dst[tail0 + first] = vram__k_cast_one<S, D>(src[tail0 + first]);
}

// The whole buffer over a grid-stride loop (VEC, WIDE as vram__k_cast_span's).
template <typename S, typename D, bool VEC, bool WIDE = false>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    vram__k_cast_kernel(const S *__restrict__ src, D *__restrict__ dst, uint64_t n, uint32_t head) {
    vram__k_cast_span<S, D, VEC, WIDE>(src, dst, n, head, (uint64_t)blockIdx.x * kThreads + threadIdx.x,
                                 (uint64_t)gridDim.x * kThreads);
}

// Elements to move one by one before both buffers reach their group's boundary (16 bytes;
// WIDE's source 8); -1 when no count below G does it for both.
template <typename S, typename D, bool WIDE = false> int vram__k_cast_head(const void *src, const void *dst) {
    using Sh = vram__k_cast_shape<S, D, WIDE>;
    for (int h = 0; h < Sh::G; h++)
        if ((reinterpret_cast<uintptr_t>(src) + (uintptr_t)h * sizeof(S)) % Sh::src_align == 0u &&
            (reinterpret_cast<uintptr_t>(dst) + (uintptr_t)h * sizeof(D)) % Sh::dst_align == 0u)
            return h;
    return -1;
}

template <typename S, typename D, bool WIDE = false>
vram_status vram__k_cast_t(const void *src, void *dst, uint64_t n, cudaStream_t s) {
    constexpr int G = vram__k_cast_shape<S, D, WIDE>::G, U = vram__k_cast_shape<S, D, WIDE>::U;
    const S *sp = static_cast<const S *>(src);
    D *dp = static_cast<D *>(dst);
    const int head = vram__k_cast_head<S, D, WIDE>(src, dst);
    if (head >= 0 && (uint64_t)head + G <= n) {
        const auto kernel = vram__k_cast_kernel<S, D, true, WIDE>;
        const uint64_t per_block = (uint64_t)kThreads * U;
        const unsigned grid = vram__k_grid((const void *)kernel, kThreads, ((n - head) / G + per_block - 1u) / per_block);
        return VRAM__K_LAUNCH("vram__k_cast_kernel", kernel, dim3(grid), dim3(kThreads), s, sp, dp, n,
                              (uint32_t)head);
    }
    const auto kernel = vram__k_cast_kernel<S, D, false>;
    const uint64_t per_block = (uint64_t)kThreads * U;
    const unsigned grid = vram__k_grid((const void *)kernel, kThreads, (n + per_block - 1u) / per_block);
    return VRAM__K_LAUNCH("vram__k_cast_kernel", kernel, dim3(grid), dim3(kThreads), s, sp, dp, n, (uint32_t)0);
}

// Widening to fp32 (S a 2-byte type) takes VRAM_K_VARIANT_CAST 1's groups when it is set.
template <typename S>
vram_status vram__k_cast_from(const void *src, int32_t dst_dtype, void *dst, uint64_t n, cudaStream_t s) {
    if (dst_dtype == VRAM_DTYPE_F32 && sizeof(S) == 2 && vram__k_variant(VRAM_K_VARIANT_CAST) == 1)
        return vram__k_cast_t<S, float, sizeof(S) == 2>(src, dst, n, s);
    if (dst_dtype == VRAM_DTYPE_F32) return vram__k_cast_t<S, float>(src, dst, n, s);
    if (dst_dtype == VRAM_DTYPE_F16) return vram__k_cast_t<S, __half>(src, dst, n, s);
    return vram__k_cast_t<S, __nv_bfloat16>(src, dst, n, s);
}

// ---- many casts in a few launches (vram_k_cast_many) ---------------------------------------

// One launch's casts, by value (__grid_constant__): Cap items; block b casts chunk
// first[t] + (b - start[t]) (VRAM_K_CHUNK elements) of item t. head[t]: the elements before
// both of the item's buffers reach a 16-byte boundary, -1 when no count below G does it (the
// chunk then moves element by element); a chunk starts a multiple of 16 bytes after its item,
// so the item's head is every chunk's.
template <unsigned Cap> struct vram__k_cast_meta_t {
    static constexpr unsigned cap = Cap;
    const void *src[Cap];
    void *dst[Cap];
    uint64_t count[Cap];
    uint32_t first[Cap];
    uint32_t start[Cap + 1];
    int32_t head[Cap];
    uint32_t ntensors;
    uint32_t nchunks;
};
using vram__k_cast_meta = vram__k_cast_meta_t<84>;
using vram__k_cast_meta_large = vram__k_cast_meta_t<870>;
static_assert(sizeof(vram__k_cast_meta) <= 3200, "under 4 KiB of parameters");
static_assert(sizeof(vram__k_cast_meta_large) <= 32000, "under 32 KiB of parameters");

// One chunk per block, moved by the block's threads as vram__k_cast_kernel moves a whole buffer.
template <typename S, typename D, typename M, bool WIDE = false>
__global__ void __launch_bounds__(kThreads, kMinBlocks) vram__k_cast_many_kernel(const __grid_constant__ M m) {
    constexpr int G = vram__k_cast_shape<S, D, WIDE>::G;
    const uint32_t t = vram__k_find(m.start, m.ntensors, blockIdx.x);
    const uint64_t off = ((uint64_t)m.first[t] + (blockIdx.x - m.start[t])) * VRAM_K_CHUNK;
    const uint64_t left = m.count[t] - off;
    const uint32_t len = (uint32_t)(left < VRAM_K_CHUNK ? left : VRAM_K_CHUNK);
    const S *src = static_cast<const S *>(m.src[t]) + off;
    D *dst = static_cast<D *>(m.dst[t]) + off;
    const int32_t head = m.head[t];
    if (head < 0 || (uint32_t)head + G > len) vram__k_cast_span<S, D, false>(src, dst, len, 0, threadIdx.x, kThreads);
    else vram__k_cast_span<S, D, true, WIDE>(src, dst, len, (uint32_t)head, threadIdx.x, kThreads);
}

// The six pairs of different types, in the order their launches go out.
constexpr int32_t kPairs[6][2] = {{VRAM_DTYPE_F32, VRAM_DTYPE_F16}, {VRAM_DTYPE_F32, VRAM_DTYPE_BF16},
                                  {VRAM_DTYPE_F16, VRAM_DTYPE_F32}, {VRAM_DTYPE_BF16, VRAM_DTYPE_F32},
                                  {VRAM_DTYPE_F16, VRAM_DTYPE_BF16}, {VRAM_DTYPE_BF16, VRAM_DTYPE_F16}};

int vram__k_pair_of(const vram_k_cast_item &it) {
    for (int p = 0; p < 6; p++)
        if (it.src_dtype == kPairs[p][0] && it.dst_dtype == kPairs[p][1]) return p;
    return -1; // equal types: a copy
}

template <typename S, typename D, bool WIDE = false> int vram__k_head_of(const vram_k_cast_item &it) {
    return vram__k_cast_head<S, D, WIDE>(it.src, it.dst);
}
// wide: VRAM_K_VARIANT_CAST 1 (the widening pairs 2 and 3 take its groups).
int vram__k_item_head(const vram_k_cast_item &it, int pair, bool wide) {
    switch (pair) {
    case 0: return vram__k_head_of<float, __half>(it);
    case 1: return vram__k_head_of<float, __nv_bfloat16>(it);
    case 2: return wide ? vram__k_head_of<__half, float, true>(it) : vram__k_head_of<__half, float>(it);
    case 3: return wide ? vram__k_head_of<__nv_bfloat16, float, true>(it) : vram__k_head_of<__nv_bfloat16, float>(it);
    case 4: return vram__k_head_of<__half, __nv_bfloat16>(it);
    default: return vram__k_head_of<__nv_bfloat16, __half>(it);
    }
}

template <typename M> vram_status vram__k_cast_many_launch(const M &m, int pair, bool wide, cudaStream_t s) {
    const char *name = "launch vram__k_cast_many_kernel";
    const dim3 grid(m.nchunks), block(kThreads);
    if (wide && pair == 2)
        return vram__k_launch(name, __FILE__, __LINE__, vram__k_cast_many_kernel<__half, float, M, true>, grid, block, s,
                              m);
    if (wide && pair == 3)
        return vram__k_launch(name, __FILE__, __LINE__, vram__k_cast_many_kernel<__nv_bfloat16, float, M, true>, grid,
                              block, s, m);
    switch (pair) {
    case 0: return vram__k_launch(name, __FILE__, __LINE__, vram__k_cast_many_kernel<float, __half, M>, grid, block, s, m);
    case 1:
        return vram__k_launch(name, __FILE__, __LINE__, vram__k_cast_many_kernel<float, __nv_bfloat16, M>, grid, block, s,
                              m);
    case 2: return vram__k_launch(name, __FILE__, __LINE__, vram__k_cast_many_kernel<__half, float, M>, grid, block, s, m);
    case 3:
        return vram__k_launch(name, __FILE__, __LINE__, vram__k_cast_many_kernel<__nv_bfloat16, float, M>, grid, block, s,
                              m);
    case 4:
        return vram__k_launch(name, __FILE__, __LINE__, vram__k_cast_many_kernel<__half, __nv_bfloat16, M>, grid, block,
                              s, m);
    default:
        return vram__k_launch(name, __FILE__, __LINE__, vram__k_cast_many_kernel<__nv_bfloat16, __half, M>, grid, block,
                              s, m);
    }
}

template <typename M> vram_status vram__k_cast_many_t(const vram_k_cast_item *items, size_t n, cudaStream_t s) {
    const bool wide = vram__k_variant(VRAM_K_VARIANT_CAST) == 1;
    return vram__k_plan<M>(
        n, 6, vram__k_max_chunks(), [&](size_t i) { return vram__k_pair_of(items[i]); },
        [&](size_t i) { return (items[i].count + VRAM_K_CHUNK - 1u) / VRAM_K_CHUNK; },
        [&](M &m, uint32_t k, size_t i, uint64_t done, uint64_t) {
            m.src[k] = items[i].src;
            m.dst[k] = items[i].dst;
            m.count[k] = items[i].count;
            m.first[k] = (uint32_t)done;
            m.head[k] = vram__k_item_head(items[i], vram__k_pair_of(items[i]), wide);
        },
        [&](const M &m, int pair) { return vram__k_cast_many_launch(m, pair, wide, s); });
}

// vram_k_cast's checks of one item: known types, no NULL with elements, aligned to the element.
vram_status vram__k_cast_check(const void *src, int32_t sd, const void *dst, int32_t dd, uint64_t count) {
    const uint32_t sb = vram__k_elem_bytes(sd), db = vram__k_elem_bytes(dd);
    if (sb == 0u || db == 0u) return VRAM_E_INVALID;
    if (count > UINT64_MAX / 4u) return VRAM_E_OVERFLOW;
    if (count == 0u) return VRAM_OK;
    if (src == nullptr || dst == nullptr || reinterpret_cast<uintptr_t>(src) % sb != 0u ||
        reinterpret_cast<uintptr_t>(dst) % db != 0u)
        return VRAM_E_INVALID;
    return VRAM_OK;
}

} // namespace

extern "C" vram_status vram_k_cast_many(const vram_k_cast_item *items, size_t n, void *stream) {
    vram__k_begin();
    if (n > 0u && items == nullptr) return VRAM_E_INVALID;
    uint64_t chunks = 0;
    for (size_t i = 0; i < n; i++) { // every item checked before anything is enqueued
        vram_status st = vram__k_cast_check(items[i].src, items[i].src_dtype, items[i].dst, items[i].dst_dtype,
                                            items[i].count);
        if (st != VRAM_OK) return st;
        chunks += (items[i].count + VRAM_K_CHUNK - 1u) / VRAM_K_CHUNK;
        if (chunks > UINT32_MAX) return VRAM_E_OVERFLOW;
    }
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    for (size_t i = 0; i < n; i++) // equal types: the bytes as they are
        if (items[i].count > 0u && items[i].src_dtype == items[i].dst_dtype) {
            VRAM__K_CHECK(cudaMemcpyAsync(items[i].dst, items[i].src, items[i].count * vram__k_elem_bytes(items[i].src_dtype),
                                          cudaMemcpyDeviceToDevice, s));
            vram__k_enqueued();
        }
    if (vram__k_variant(VRAM_K_VARIANT_LIST) == 1) return vram__k_cast_many_t<vram__k_cast_meta_large>(items, n, s);
    return vram__k_cast_many_t<vram__k_cast_meta>(items, n, s);
}

extern "C" vram_status vram_k_cast(const void *src, int32_t src_dtype, void *dst, int32_t dst_dtype, uint64_t count,
                                   void *stream) {
    const uint32_t sb = vram__k_elem_bytes(src_dtype);
    vram__k_begin();
    vram_status st = vram__k_cast_check(src, src_dtype, dst, dst_dtype, count);
    if (st != VRAM_OK || count == 0u) return st;
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (src_dtype == dst_dtype) {
        VRAM__K_CHECK(cudaMemcpyAsync(dst, src, count * sb, cudaMemcpyDeviceToDevice, s));
        vram__k_enqueued();
        return VRAM_OK;
    }
    if (src_dtype == VRAM_DTYPE_F32) return vram__k_cast_from<float>(src, dst_dtype, dst, count, s);
    if (src_dtype == VRAM_DTYPE_F16) return vram__k_cast_from<__half>(src, dst_dtype, dst, count, s);
    return vram__k_cast_from<__nv_bfloat16>(src, dst_dtype, dst, count, s);
}
