// gather.cu — batch gather by an index list: dst row i = src row index[i] (the streamer's
// device-side shuffle, torch.index_select on dim 0). Rows are copied in the widest unit
// (16, 8, 4, 2 or 1 bytes) that both pointers and the row size allow; a power-of-two group
// of threads per row (up to 256), and long rows split into segments across blockIdx.y so a
// few huge rows still fill the device; each thread issues the loads of 4 units before their
// stores, and the grid is one wave of the blocks the registers let each SM hold. An index
// past src_rows copies nothing and raises the flag. CPU reference: vram_kref_gather_rows.
// Two variants (VRAM_K_VARIANT_GATHER): 0 (the default since the first GPU run: 1.18x and
// 1.24x variant 1's speed on an H200, test/bench/RESULTS.md), a group a quarter as wide as the
// row's units, so each thread holds 4 units of the row, and each thread loads the index of its
// next row before it copies the current one (the copy no longer waits on a dependent index
// load); 1 (the default before), a group as wide as the row's units (a 3 KiB row of 192
// 16-byte units takes 256 threads, 64 of them idle), each row's index loaded when it is copied.
#include "vk_internal.cuh"

namespace {

constexpr int kBlock = 256;
constexpr int kMinBlocks = 4; // resident blocks per SM the registers must allow (<= 64 each)
constexpr int kUnroll = 4; // units in flight per thread

template <typename U, bool PREFETCH>
__global__ void __launch_bounds__(kBlock, kMinBlocks)
    vram__k_gather_kernel(U *__restrict__ dst, const U *__restrict__ src, uint64_t src_rows,
                     const uint64_t *__restrict__ index, uint64_t rows, uint64_t units, uint64_t seg_units,
                     int tpr_shift, int *bad) {
    const uint32_t tpr = 1u << tpr_shift;
    const uint32_t rpb = (uint32_t)kBlock >> tpr_shift;
    const uint32_t lane = threadIdx.x & (tpr - 1u);
    const uint64_t seg_begin = (uint64_t)blockIdx.y * seg_units;
    if (seg_begin >= units) return;
    const uint64_t seg_end = units - seg_begin < seg_units ? units : seg_begin + seg_units;
    const uint64_t step = (uint64_t)gridDim.x * rpb;
    uint64_t r = (uint64_t)blockIdx.x * rpb + (threadIdx.x >> tpr_shift);
    uint64_t next_ix = PREFETCH && r < rows ? index[r] : 0;
    for (; r < rows; r += step) {
        uint64_t ix;
        if (PREFETCH) { // this row's index came with the last row; the next one's goes out now
            ix = next_ix;
            if (r + step < rows) next_ix = index[r + step];
        } else {
            ix = index[r];
        }
        if (ix >= src_rows) {
            if (lane == 0u && blockIdx.y == 0u && bad != nullptr) *bad = 1;
            continue;
        }
        const U *__restrict__ s = src + ix * units;
        U *__restrict__ d = dst + r * units;
        for (uint64_t u0 = seg_begin + lane; u0 < seg_end; u0 += (uint64_t)kUnroll * tpr) {
            U v[kUnroll];
#pragma unroll
            for (int k = 0; k < kUnroll; k++)
                if (u0 + (uint64_t)k * tpr < seg_end) v[k] = s[u0 + (uint64_t)k * tpr];
#pragma unroll
            for (int k = 0; k < kUnroll; k++)
                if (u0 + (uint64_t)k * tpr < seg_end) d[u0 + (uint64_t)k * tpr] = v[k];
        }
    }
}

// QUARTER: variant 0's shape and prefetch; false: variant 1's.
template <typename U, bool QUARTER>
vram_status vram__k_gather_t(void *dst, const void *src, uint64_t src_rows, const uint64_t *index, uint64_t rows,
                        uint64_t row_bytes, int *bad, cudaStream_t s) {
    const uint64_t units = row_bytes / sizeof(U);
    // threads per row: a quarter of the units, each thread 4 (variant 1: the units), rounded up to 2^k, <= 256
    const uint64_t per_row = QUARTER ? (units + kUnroll - 1u) / kUnroll : units;
    int shift = 0;
    while ((1ull << shift) < per_row && shift < 8) shift++;
    const uint64_t rpb = (uint64_t)kBlock >> shift;
    const uint64_t row_blocks = (rows + rpb - 1u) / rpb;
    const auto kernel = vram__k_gather_kernel<U, QUARTER>;
    const uint64_t target = vram__k_grid((const void *)kernel, kBlock, UINT64_MAX); // one full wave
    uint64_t segments = 1;
    if (row_blocks < target) {
        const uint64_t by_fill = (target + row_blocks - 1u) / row_blocks;
        const uint64_t by_work = (units + ((uint64_t)4u << shift) - 1u) / ((uint64_t)4u << shift); // >= 4 units a thread
        segments = by_fill < by_work ? by_fill : by_work;
        if (segments > 65535u) segments = 65535u;
        if (segments < 1u) segments = 1u;
    }
    const uint64_t seg_units = (units + segments - 1u) / segments;
    segments = (units + seg_units - 1u) / seg_units;
    dim3 grid((unsigned)(row_blocks < target ? row_blocks : target), (unsigned)segments);
    return VRAM__K_LAUNCH("vram__k_gather_kernel", kernel, grid, dim3(kBlock), s, static_cast<U *>(dst),
                          static_cast<const U *>(src), src_rows, index, rows, units, seg_units, shift, bad);
}

// The widest unit both pointers and the row size allow.
template <bool QUARTER>
vram_status vram__k_gather_unit(void *dst, const void *src, uint64_t src_rows, const uint64_t *index, uint64_t rows,
                                uint64_t row_bytes, int *bad, cudaStream_t s) {
    const uint64_t a = reinterpret_cast<uintptr_t>(dst) | reinterpret_cast<uintptr_t>(src) | row_bytes;
    if (a % 16u == 0u) return vram__k_gather_t<uint4, QUARTER>(dst, src, src_rows, index, rows, row_bytes, bad, s);
    if (a % 8u == 0u) return vram__k_gather_t<uint2, QUARTER>(dst, src, src_rows, index, rows, row_bytes, bad, s);
    if (a % 4u == 0u) return vram__k_gather_t<uint32_t, QUARTER>(dst, src, src_rows, index, rows, row_bytes, bad, s);
    if (a % 2u == 0u) return vram__k_gather_t<uint16_t, QUARTER>(dst, src, src_rows, index, rows, row_bytes, bad, s);
    return vram__k_gather_t<uint8_t, QUARTER>(dst, src, src_rows, index, rows, row_bytes, bad, s);
}

} // namespace

extern "C" vram_status vram_k_gather_rows(void *dst, const void *src, uint64_t src_rows, const uint64_t *index,
                                          uint64_t rows, uint64_t row_bytes, int *bad_index_flag, void *stream) {
    uint64_t total = 0, src_total = 0;
    vram__k_begin();
    if (vram__mul_u64(rows, row_bytes, &total) != VRAM_OK || vram__mul_u64(src_rows, row_bytes, &src_total) != VRAM_OK)
        return VRAM_E_OVERFLOW;
    if (rows == 0u || row_bytes == 0u) return VRAM_OK;
    if (dst == nullptr || src == nullptr || index == nullptr || reinterpret_cast<uintptr_t>(index) % 8u != 0u ||
        reinterpret_cast<uintptr_t>(bad_index_flag) % alignof(int) != 0u)
        return VRAM_E_INVALID;
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (vram__k_variant(VRAM_K_VARIANT_GATHER) == 1)
        return vram__k_gather_unit<false>(dst, src, src_rows, index, rows, row_bytes, bad_index_flag, s);
    return vram__k_gather_unit<true>(dst, src, src_rows, index, rows, row_bytes, bad_index_flag, s);
}
