// hw_scaler.cu — the loss scaler (include/vramkit/scaler.h) compiled for the GPU gives the
// same answers as on the host, bit for bit: random overflow sequences (NaN and inf flags
// included), one thread per sequence, under every preset and a few odd configurations
// (non-power-of-two factors, rails close by, the DeepSpeed error at the minimum), through the
// bare state machine and through the unscale/step/update protocol with two optimizers.
// Every step's scale, reciprocal, counters, status and result are compared.
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "hw_common.h"
#include <vramkit/scaler.h>

namespace {

constexpr int kSeqs = 512;   // sequences (threads) per configuration
constexpr int kSteps = 3000; // updates per sequence

// What one update left behind; compared field by field, floats as bits.
struct step_record {
    uint32_t scale_bits;
    uint32_t inv_bits;
    uint32_t tracker;
    uint32_t hyst_left;
    int32_t status;
    int32_t skipped;
    int32_t why;
    int32_t flags; // grew | backed_off << 1 | absorbed << 2 | railed << 3 | skip0 << 4 | skip1 << 5
};

__host__ __device__ uint32_t bits_of(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

// One update of sequence `seq`, the same code on host and device. Even sequences use the
// bare state machine, odd ones the protocol: optimizer 0 unscaled with the flag then
// stepped, optimizer 1 stepped from READY with the flag of step k-1's half.
__host__ __device__ step_record one_step(vram_scaler *s, int seq, float flag, float flag1) {
    step_record rec;
    vram_scaler_result r;
    int skip0 = 0, skip1 = 0;
    vram_status st;
    memset(&r, 0, sizeof r);
    if ((seq & 1) == 0) {
        st = vram_scaler_advance(s, flag, &r);
    } else {
        st = vram_scaler_unscale(s, 0, flag);
        if (st == VRAM_OK) st = vram_scaler_step(s, 0, 0.0f, &skip0);
        if (st == VRAM_OK) st = vram_scaler_step(s, 1, flag1, &skip1);
        if (st == VRAM_OK) st = vram_scaler_update(s, &r);
    }
    int32_t code = (int32_t)st;
    if (st == VRAM_E_MIN_SCALE) { // DeepSpeed would stop here; carry on skipping
        s->cfg.at_min = VRAM_SCALER_AT_MIN_SKIP;
        st = (seq & 1) == 0 ? vram_scaler_advance(s, flag, &r) : vram_scaler_update(s, &r);
        code = 100 + (int32_t)st; // marks the switch
    }
    rec.scale_bits = bits_of(vram_scaler_scale(s));
    rec.inv_bits = bits_of(vram_scaler_inv_scale(s));
    rec.tracker = s->growth_tracker;
    rec.hyst_left = s->hysteresis_left;
    rec.status = code;
    rec.skipped = r.skipped;
    rec.why = (int32_t)r.why;
    rec.flags = r.grew | r.backed_off << 1 | r.absorbed << 2 | r.railed << 3 | skip0 << 4 | skip1 << 5;
    return rec;
}

__global__ void run_sequences(vram_scaler *states, const float *flags, step_record *out) {
    int seq = blockIdx.x * blockDim.x + threadIdx.x;
    if (seq >= kSeqs) return;
    vram_scaler s = states[seq];
    for (int k = 0; k < kSteps; k++) {
        const float *f = flags + ((size_t)seq * kSteps + k) * 2;
        out[(size_t)seq * kSteps + k] = one_step(&s, seq, f[0], f[1]);
    }
    states[seq] = s;
}

// xorshift64*: a fixed host-side stream, so a failure reproduces.
struct rng {
    uint64_t x;
    uint64_t next() { return vram_hw_rng_next(&x); }
};

float random_flag(rng &g, uint32_t per_mille) {
    const float bad[4] = {1.0f, NAN, INFINITY, -INFINITY};
    uint64_t v = g.next();
    if ((uint32_t)(v % 1000) < per_mille) return bad[(v >> 20) & 3];
    return ((v >> 30) & 1) ? 0.0f : -0.0f;
}

struct hw_case {
    const char *name;
    int preset;
    float init;       // 0: the preset's
    double growth;    // 0: the preset's
    double backoff;   // 0: the preset's
    uint32_t interval;
    uint32_t hysteresis; // 0: the preset's
    float min, max;   // 0: the preset's
    int at_max;       // -1: the preset's
};

const hw_case kCases[] = {
    {"pytorch", VRAM_SCALER_PRESET_PYTORCH, 0, 0, 0, 7, 0, 0, 0, -1},
    {"pytorch_odd_factors", VRAM_SCALER_PRESET_PYTORCH, 3.3f, 1.7, 0.3, 3, 0, 0, 0, -1},
    {"pytorch_at_the_top", VRAM_SCALER_PRESET_PYTORCH, 1e38f, 2.0000001, 0.5, 2, 0, 0, 0, -1},
    {"pytorch_at_the_floor", VRAM_SCALER_PRESET_PYTORCH, 1e-37f, 2.0, 0.125, 50, 0, 0, 0, -1},
    {"apex", VRAM_SCALER_PRESET_APEX, 0, 0, 0, 5, 0, 0, 0, -1},
    {"apex_min", VRAM_SCALER_PRESET_APEX, 0, 0, 0, 11, 0, 3.0f, 0, -1},
    {"deepspeed", VRAM_SCALER_PRESET_DEEPSPEED, 64.0f, 0, 0, 6, 3, 0, 0, -1},
    {"deepspeed_consecutive", VRAM_SCALER_PRESET_DEEPSPEED_CONSECUTIVE, 64.0f, 0, 0, 6, 2, 0, 0, -1},
    {"megatron", VRAM_SCALER_PRESET_MEGATRON, 0, 0, 0, 9, 0, 0, 0, -1},
    {"vramkit", VRAM_SCALER_PRESET_VRAMKIT, 0, 0, 0, 4, 0, 0, 0, -1},
    {"vramkit_clamp_odd_max", VRAM_SCALER_PRESET_VRAMKIT, 1000.0f, 1.9, 0.7, 2, 2, 0, 12345.0f, -1},
    {"vramkit_hold_odd_max", VRAM_SCALER_PRESET_VRAMKIT, 1000.0f, 1.9, 0.7, 2, 2, 0, 12345.0f,
     VRAM_SCALER_AT_MAX_HOLD},
};

vram_scaler_cfg cfg_of(const hw_case &c) {
    vram_scaler_cfg cfg;
    cr_assert_eq(vram_scaler_preset(c.preset, &cfg), VRAM_OK);
    if (c.init != 0.0f) cfg.init_scale = c.init;
    if (c.growth != 0.0) cfg.growth_factor = c.growth;
    if (c.backoff != 0.0) cfg.backoff_factor = c.backoff;
    if (c.interval != 0) cfg.growth_interval = c.interval;
    if (c.hysteresis != 0) cfg.hysteresis = c.hysteresis;
    if (c.min != 0.0f) cfg.min_scale = c.min;
    if (c.max != 0.0f) cfg.max_scale = c.max;
    if (c.at_max >= 0) cfg.at_max = c.at_max;
    cr_assert_eq(vram_scaler_validate(&cfg), VRAM_OK, "%s", c.name);
    return cfg;
}


void run_case(const hw_case &c, uint64_t seed) {
    vram_scaler_cfg cfg = cfg_of(c);
    const size_t n_rec = (size_t)kSeqs * kSteps;
    vram_scaler *states = new vram_scaler[kSeqs];
    float *flags = new float[n_rec * 2];
    step_record *dev_out = new step_record[n_rec];
    rng g = {seed};
    for (int q = 0; q < kSeqs; q++) {
        cr_assert_eq(vram_scaler_init(&states[q], &cfg), VRAM_OK);
        // from "almost never" to "mostly overflow", so both rails are reached
        uint32_t per_mille = (uint32_t)((q * 37) % 1000);
        if (q % 4 == 0) per_mille /= 50;
        for (int k = 0; k < kSteps; k++) {
            flags[((size_t)q * kSteps + k) * 2] = random_flag(g, per_mille);
            flags[((size_t)q * kSteps + k) * 2 + 1] = random_flag(g, per_mille / 4);
        }
    }
    vram_scaler *d_states = nullptr;
    float *d_flags = nullptr;
    step_record *d_out = nullptr;
    VRAM_HW_CUDA(cudaMalloc(&d_states, sizeof(vram_scaler) * kSeqs));
    VRAM_HW_CUDA(cudaMalloc(&d_flags, sizeof(float) * n_rec * 2));
    VRAM_HW_CUDA(cudaMalloc(&d_out, sizeof(step_record) * n_rec));
    VRAM_HW_CUDA(cudaMemcpy(d_states, states, sizeof(vram_scaler) * kSeqs, cudaMemcpyHostToDevice));
    VRAM_HW_CUDA(cudaMemcpy(d_flags, flags, sizeof(float) * n_rec * 2, cudaMemcpyHostToDevice));
    run_sequences<<<(kSeqs + 127) / 128, 128>>>(d_states, d_flags, d_out);
    VRAM_HW_CUDA(cudaGetLastError());
    VRAM_HW_CUDA(cudaDeviceSynchronize());
    vram_scaler *dev_states = new vram_scaler[kSeqs];
    VRAM_HW_CUDA(cudaMemcpy(dev_out, d_out, sizeof(step_record) * n_rec, cudaMemcpyDeviceToHost));
    VRAM_HW_CUDA(cudaMemcpy(dev_states, d_states, sizeof(vram_scaler) * kSeqs, cudaMemcpyDeviceToHost));
    VRAM_HW_CUDA(cudaFree(d_states));
    VRAM_HW_CUDA(cudaFree(d_flags));
    VRAM_HW_CUDA(cudaFree(d_out));

    size_t grew = 0, backed = 0, railed = 0;
    for (int q = 0; q < kSeqs; q++) {
        vram_scaler s = states[q];
        for (int k = 0; k < kSteps; k++) {
            size_t i = (size_t)q * kSteps + k;
            step_record h = one_step(&s, q, flags[i * 2], flags[i * 2 + 1]);
            const step_record &d = dev_out[i];
            cr_assert(memcmp(&h, &d, sizeof h) == 0,
                      "%s: sequence %d step %d: host scale %08x inv %08x t %u h %u st %d f %x, "
                      "device %08x %08x %u %u %d %x",
                      c.name, q, k, h.scale_bits, h.inv_bits, h.tracker, h.hyst_left, h.status,
                      h.flags, d.scale_bits, d.inv_bits, d.tracker, d.hyst_left, d.status, d.flags);
            grew += h.flags & 1;
            backed += (h.flags >> 1) & 1;
            railed += (h.flags >> 3) & 1;
        }
        cr_assert(memcmp(&s, &dev_states[q], sizeof s) == 0, "%s: final state of sequence %d", c.name, q);
    }
    // the sequences did exercise the rule
    cr_assert(grew > 0 && backed > 0, "%s: grew %zu, backed off %zu", c.name, grew, backed);
    cr_log_info("%s: %d x %d steps equal; %zu growths, %zu backoffs, %zu on a rail", c.name, kSeqs,
                kSteps, grew, backed, railed);
    delete[] states;
    delete[] dev_states;
    delete[] flags;
    delete[] dev_out;
}

} // namespace

Test(hw_scaler, device_matches_host_bit_for_bit) {
    uint64_t seed = 0x5ca1ab1e5eedULL;
    for (const hw_case &c : kCases) run_case(c, seed++);
}

VRAM_HW_MAIN()
