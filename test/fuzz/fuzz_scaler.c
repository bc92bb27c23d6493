/* fuzz_scaler.c — the loss scaler (include/vramkit/scaler.h) under random configurations,
 * overflow sequences and protocol call sequences. Two kinds of runs:
 *  - differential: a preset (with the parameters its reference lets a user change) against a
 *    literal re-implementation of that reference's update rule (PyTorch, Apex, DeepSpeed in
 *    both hysteresis modes, Megatron), compared bit for bit after every step until the
 *    reference itself produces a broken scale (0, inf, or a non-finite fp32 reciprocal);
 *  - protocol: any configuration (zeros, NaN, inf, nonsense) and any sequence of unscale, step,
 *    update, advance, save/restore and damaged restores, against a shadow of the protocol and
 *    a twin scaler driven by the bare state machine.
 * After every call: scale finite and within [min, max] within the hard rails, reciprocal
 * finite and > 0, counters within bounds, a skip iff an overflow, errors change nothing,
 * restore(save(s)) == s. */
#include <math.h>

#include "fuzz_common.h"
#include <vramkit/scaler.h>

#define MAX_OPS 512      /* protocol calls per input */
#define MAX_UPDATES 4000 /* scale updates per differential input: keeps exec/s useful */

static float flag_of(uint8_t b) {
    static const float flags[8] = {0.0f, 1.0f, NAN, -0.0f, INFINITY, -INFINITY, 0x1p-149f, -1.0f};
    return flags[b & 7];
}

/* A nonzero flag (NaN included): the check found inf/NaN. */
static float over_flag(uint8_t b) {
    static const float flags[6] = {1.0f, NAN, INFINITY, -INFINITY, 0x1p-149f, -1.0f};
    return flags[b % 6];
}

/* States and results are compared with memcmp: they have no padding. */
_Static_assert(sizeof(vram_scaler) == 112 && sizeof(vram_scaler_result) == 32, "padding");

/* x * 2^e without libm (exact: only powers of two multiply). */
static double scale2(double x, int e) {
    for (; e > 0; e--) x *= 2.0;
    for (; e < 0; e++) x *= 0.5;
    return x;
}
static double dmax(double a, double b) { return a > b ? a : b; }

static int same_bits(float a, float b) { return memcmp(&a, &b, sizeof a) == 0; }

/* Every invariant a state that came out of the library must satisfy; with round_trip,
 * also restore(save(s)) == s (every call in protocol runs, every 64th update otherwise). */
static void check_state_rt(const vram_scaler *s, int round_trip) {
    const vram_scaler_cfg *c = &s->cfg;
    float inv = vram_scaler_inv_scale(s);
    FUZZ_CHECK(isfinite(s->scale) && s->scale > 0.0f);
    FUZZ_CHECK(isfinite(inv) && inv > 0.0f);
    FUZZ_CHECK(same_bits(inv, (float)(1.0 / (double)s->scale)));
    FUZZ_CHECK(c->min_scale >= VRAM_SCALER_HARD_MIN && c->max_scale <= VRAM_SCALER_HARD_MAX);
    FUZZ_CHECK(c->min_scale <= s->scale && s->scale <= c->max_scale);
    FUZZ_CHECK(c->growth_interval >= 1 && c->growth_interval <= VRAM_SCALER_MAX_INTERVAL);
    FUZZ_CHECK(c->hysteresis >= 1 && c->hysteresis <= VRAM_SCALER_MAX_HYSTERESIS);
    FUZZ_CHECK(s->growth_tracker <= VRAM_SCALER_MAX_INTERVAL);
    FUZZ_CHECK(s->hysteresis_left < c->hysteresis);
    FUZZ_CHECK(s->skipped <= s->steps && s->overflow_streak <= s->skipped);
    for (unsigned i = 0; i < VRAM_SCALER_MAX_OPTIMIZERS; i++) {
        FUZZ_CHECK(s->stage[i] <= VRAM_SCALER_STEPPED);
        FUZZ_CHECK(s->found_inf[i] <= 1);
        FUZZ_CHECK(s->stage[i] != VRAM_SCALER_READY || s->found_inf[i] == 0);
    }
    if (!round_trip) return;
    vram_scaler_saved sv;
    vram_scaler back;
    FUZZ_CHECK(vram_scaler_save(s, &sv) == VRAM_OK);
    FUZZ_CHECK(vram_scaler_restore(&back, &sv) == VRAM_OK);
    FUZZ_CHECK(memcmp(&back, s, sizeof back) == 0);
}

static void check_state(const vram_scaler *s) { check_state_rt(s, 1); }

static void check_result(const vram_scaler_result *r, int overflow, const vram_scaler *s) {
    FUZZ_CHECK(r->skipped == (overflow != 0));
    FUZZ_CHECK((r->why != VRAM_SCALER_SKIP_NONE) == (overflow != 0));
    FUZZ_CHECK(same_bits(r->scale_after, s->scale));
    FUZZ_CHECK(r->grew == (r->scale_after > r->scale_before));
    FUZZ_CHECK(r->backed_off == (r->scale_after < r->scale_before));
    FUZZ_CHECK(!(r->grew && overflow)); /* an overflow never grows the scale */
    FUZZ_CHECK(!(r->absorbed && (r->backed_off || !overflow)));
}

/* ---- literal references ------------------------------------------------------------------ */

/* fp64 -> fp32 the IEEE way, without an out-of-range conversion in C. */
static float to_f32(double d) {
    if (d >= 0x1.ffffffp127) return INFINITY;
    return (float)d;
}

typedef struct ref_model {
    int kind; /* preset id */
    /* PyTorch, Megatron: fp32 scale; Apex, DeepSpeed: Python floats (fp64) */
    float f32;
    double f64;
    double growth, backoff;
    int64_t tracker, hyst, hyst_cfg, interval;
    int64_t iter, last_overflow;
    double min, max; /* Apex min: 0 = none */
    int consecutive, raise_at_min;
} ref_model;

/* One update of the reference. Returns 1 when DeepSpeed would raise at the minimum. */
static int ref_update(ref_model *m, int overflow) {
    switch (m->kind) {
    case VRAM_SCALER_PRESET_PYTORCH:
        if (overflow) {
            m->f32 = to_f32((double)m->f32 * m->backoff);
            m->tracker = 0;
        } else if (m->tracker + 1 == m->interval) {
            float n = to_f32((double)m->f32 * m->growth);
            if (isfinite(n)) m->f32 = n;
            m->tracker = 0;
        } else {
            m->tracker += 1;
        }
        return 0;
    case VRAM_SCALER_PRESET_APEX:
        if (overflow) {
            m->f64 = m->min != 0.0 ? dmax(m->min, m->f64 / 2.0) : m->f64 / 2.0;
            m->tracker = 0;
        } else {
            m->tracker += 1;
        }
        if (m->tracker == m->interval) {
            m->f64 = m->f64 * 2.0 < m->max ? m->f64 * 2.0 : m->max;
            m->tracker = 0;
        }
        return 0;
    case VRAM_SCALER_PRESET_MEGATRON:
        if (overflow) {
            m->tracker = 0;
            m->hyst -= 1;
            if (m->hyst <= 0) m->f32 = m->f32 * 0.5f > (float)m->min ? m->f32 * 0.5f : (float)m->min;
        } else {
            m->tracker += 1;
            if (m->tracker == m->interval) {
                m->tracker = 0;
                m->hyst = m->hyst_cfg;
                m->f32 = m->f32 * 2.0f;
            }
        }
        return 0;
    default: /* DeepSpeed, both modes */
        if (overflow) {
            if (m->hyst_cfg == 1 || m->hyst == 1) {
                if (m->f64 == m->min && m->raise_at_min) return 1;
                m->f64 = dmax(m->f64 / 2.0, m->min);
            } else {
                m->hyst -= 1;
            }
            m->last_overflow = m->iter;
        } else {
            if (m->consecutive) m->hyst = m->hyst_cfg;
            if ((m->iter - m->last_overflow) % m->interval == 0) {
                if (!m->consecutive) m->hyst = m->hyst_cfg;
                m->f64 *= 2.0;
            }
        }
        m->iter += 1;
        return 0;
    }
}

/* The reference's scale as fp32, or NAN once it is broken (where the rails take over). */
static float ref_scale(const ref_model *m) {
    double v = (m->kind == VRAM_SCALER_PRESET_PYTORCH || m->kind == VRAM_SCALER_PRESET_MEGATRON)
                   ? (double)m->f32
                   : m->f64;
    if (!(v >= (double)VRAM_SCALER_HARD_MIN && v <= (double)VRAM_SCALER_HARD_MAX)) return NAN;
    return (float)v;
}

static double pick_growth(fuzz_in *in) {
    static const double g[8] = {2.0, 1.0, 1.5, 3.0, 1.0001, 65536.0, 1.0 + 0x1p-30, 10.0};
    uint8_t b = (uint8_t)fuzz_u64(in, 1);
    return b < 8 ? g[b] : 1.0 + (double)b / 16.0;
}

static double pick_backoff(fuzz_in *in) {
    static const double k[8] = {0.5, 0.25, 0.9999, 1e-3, 0.1, 1e-30, 0.75, 0.3};
    uint8_t b = (uint8_t)fuzz_u64(in, 1);
    return b < 8 ? k[b] : (double)b / 256.0;
}

static void run_differential(fuzz_in *in, int kind) {
    vram_scaler_cfg c;
    vram_scaler s;
    ref_model m;
    FUZZ_CHECK(vram_scaler_preset(kind, &c) == VRAM_OK);
    memset(&m, 0, sizeof m);
    m.kind = kind;
    m.interval = 1 + (int64_t)(fuzz_u64(in, 1) % 40);
    c.growth_interval = (uint32_t)m.interval;
    int e = (int)(fuzz_u64(in, 1) % 80) - 20; /* init = 2^e */
    switch (kind) {
    case VRAM_SCALER_PRESET_PYTORCH:
        m.growth = c.growth_factor = pick_growth(in);
        m.backoff = c.backoff_factor = pick_backoff(in);
        c.init_scale = (float)scale2(1.0 + (double)(fuzz_u64(in, 1)) / 256.0, e * 2);
        if (fuzz_bool(in)) c.init_scale = (float)scale2(1.0, -120 - (int)(fuzz_u64(in, 1) % 8));
        m.f32 = c.init_scale;
        break;
    case VRAM_SCALER_PRESET_APEX: {
        static const float mins[4] = {0.0f, 1.0f, 3.0f, 0.75f};
        c.init_scale = (float)scale2(1.0, e > 24 ? 24 : e);
        m.f64 = c.init_scale;
        m.max = c.max_scale;
        m.min = mins[fuzz_u64(in, 1) & 3];
        if (m.min != 0.0 && m.min > m.f64) m.min = 0.0;
        if (m.min != 0.0) c.min_scale = (float)m.min;
        break;
    }
    case VRAM_SCALER_PRESET_MEGATRON:
        c.init_scale = (float)scale2(1.0, e < 0 ? -e : e);
        c.hysteresis = 1 + (uint32_t)(fuzz_u64(in, 1) % 4);
        m.f32 = c.init_scale;
        m.min = c.min_scale;
        m.hyst = m.hyst_cfg = c.hysteresis;
        break;
    default:
        c.init_scale = (float)scale2(1.0, e < 0 ? -e : e);
        c.hysteresis = 1 + (uint32_t)(fuzz_u64(in, 1) % 4);
        c.min_scale = (float)scale2(1.0, (int)(fuzz_u64(in, 1) % 3));
        if (c.min_scale > c.init_scale) c.min_scale = 1.0f;
        m.raise_at_min = fuzz_bool(in);
        if (!m.raise_at_min) c.at_min = VRAM_SCALER_AT_MIN_SKIP;
        m.f64 = c.init_scale;
        m.min = c.min_scale;
        m.hyst = m.hyst_cfg = c.hysteresis;
        m.consecutive = c.consecutive_hysteresis;
        m.last_overflow = -1;
        break;
    }
    FUZZ_CHECK(vram_scaler_init(&s, &c) == VRAM_OK);
    check_state(&s);
    for (long budget = MAX_UPDATES; budget > 0 && in->n > 0;) {
        uint8_t b = (uint8_t)fuzz_u64(in, 1);
        int overflow = b >= 0xc0;
        unsigned reps = overflow ? 1u : (unsigned)b + 1u;
        for (unsigned k = 0; k < reps; k++, budget--) {
            vram_scaler_result r;
            vram_scaler before = s;
            float flag = overflow ? over_flag(b) : ((b & 0x18) ? 0.0f : -0.0f);
            int raise = ref_update(&m, overflow);
            vram_status st = vram_scaler_advance(&s, flag, &r);
            if (raise) { /* DeepSpeed stops the run here; we refuse and change nothing */
                FUZZ_CHECK(st == VRAM_E_MIN_SCALE);
                FUZZ_CHECK(memcmp(&before, &s, sizeof s) == 0);
                FUZZ_CHECK(r.why == VRAM_SCALER_SKIP_AT_MIN && r.skipped);
                return;
            }
            FUZZ_CHECK(st == VRAM_OK);
            check_result(&r, overflow, &s);
            check_state_rt(&s, (budget & 63) == 0);
            float want = ref_scale(&m);
            if (isnan(want)) return; /* the reference broke; the rails took over */
            FUZZ_CHECK(same_bits(s.scale, want));
            if (kind == VRAM_SCALER_PRESET_MEGATRON) {
                FUZZ_CHECK((int64_t)s.growth_tracker == m.tracker);
                FUZZ_CHECK((int64_t)s.hysteresis_left == (m.hyst > 1 ? m.hyst - 1 : 0));
            } else if (kind == VRAM_SCALER_PRESET_DEEPSPEED ||
                       kind == VRAM_SCALER_PRESET_DEEPSPEED_CONSECUTIVE) {
                FUZZ_CHECK((int64_t)s.growth_tracker == (m.iter - m.last_overflow - 1) % m.interval);
                FUZZ_CHECK((int64_t)s.hysteresis_left == m.hyst - 1);
            } else {
                FUZZ_CHECK((int64_t)s.growth_tracker == m.tracker);
            }
        }
    }
}

/* ---- protocol runs ------------------------------------------------------------------------ */

static float pick_float(fuzz_in *in) {
    uint8_t b = (uint8_t)fuzz_u64(in, 1);
    switch (b & 15) {
    case 0: case 1: case 2: case 3: return 0.0f; /* the default, often */
    case 4: return NAN;
    case 5: return INFINITY;
    case 6: return -1.0f;
    case 7: return 0x1p-130f;
    case 8: return VRAM_SCALER_HARD_MIN;
    case 9: return VRAM_SCALER_HARD_MAX;
    default: {
        int e = (int)(fuzz_u64(in, 1) % 160) - 64;
        return (float)scale2(1.0 + (double)(b >> 4) / 16.0, e);
    }
    }
}

static double pick_double(fuzz_in *in) {
    uint8_t b = (uint8_t)fuzz_u64(in, 1);
    switch (b & 7) {
    case 0: case 1: return 0.0;
    case 2: return NAN;
    case 3: return -INFINITY;
    case 4: return (double)(b >> 3) / 8.0; /* backoff-ish, 0..3.9 */
    case 5: return 1.0 + (double)(b >> 3);
    case 6: return 1e300;
    default: return -(double)(b >> 3);
    }
}

static void random_cfg(fuzz_in *in, vram_scaler_cfg *c) {
    static const uint32_t ints[8] = {0, 1, 2, 3, 7, 2000, VRAM_SCALER_MAX_INTERVAL, UINT32_MAX};
    c->growth_factor = pick_double(in);
    c->backoff_factor = pick_double(in);
    c->init_scale = pick_float(in);
    c->min_scale = pick_float(in);
    c->max_scale = pick_float(in);
    c->growth_interval = ints[fuzz_u64(in, 1) & 7];
    c->hysteresis = ints[fuzz_u64(in, 1) & 7] % (VRAM_SCALER_MAX_HYSTERESIS + 2u);
    c->consecutive_hysteresis = (int32_t)(fuzz_u64(in, 1) % 3) - (fuzz_bool(in) ? 0 : 1);
    c->at_min = (int32_t)(fuzz_u64(in, 1) % 3);
    c->at_max = (int32_t)(fuzz_u64(in, 1) % 3);
}

static void run_protocol(fuzz_in *in) {
    vram_scaler_cfg c;
    vram_scaler s, twin;
    if (fuzz_bool(in)) {
        random_cfg(in, &c);
    } else {
        int id = (int)(fuzz_u64(in, 1) % 7);
        memset(&c, 0x11, sizeof c);
        vram_scaler_cfg c0 = c;
        vram_status pst = vram_scaler_preset(id, &c);
        if (id > VRAM_SCALER_PRESET_MEGATRON) {
            FUZZ_CHECK(pst == VRAM_E_INVALID && memcmp(&c, &c0, sizeof c) == 0);
            return;
        }
        FUZZ_CHECK(pst == VRAM_OK && vram_scaler_validate(&c) == VRAM_OK);
        c.growth_interval = 1 + (uint32_t)(fuzz_u64(in, 1) % 8); /* reach the rails quickly */
        if (fuzz_bool(in)) c.growth_factor = 1.0 + (double)fuzz_u64(in, 1);
    }
    memset(&s, 0xa5, sizeof s);
    vram_scaler untouched = s;
    vram_status vst = vram_scaler_validate(&c);
    vram_status ist = vram_scaler_init(&s, &c);
    FUZZ_CHECK(vst == ist);
    FUZZ_CHECK(ist == VRAM_OK || ist == VRAM_E_INVALID || ist == VRAM_E_RANGE);
    if (ist != VRAM_OK) {
        FUZZ_CHECK(memcmp(&s, &untouched, sizeof s) == 0);
        return;
    }
    check_state(&s);
    twin = s;
    for (int op = 0; op < MAX_OPS && in->n > 0; op++) {
        uint8_t b = (uint8_t)fuzz_u64(in, 1);
        unsigned opt = (unsigned)fuzz_u64(in, 1) % (VRAM_SCALER_MAX_OPTIMIZERS + 4u);
        float flag = flag_of((uint8_t)fuzz_u64(in, 1));
        int flagged = flag != 0.0f;
        vram_scaler before = s;
        vram_scaler_result r;
        vram_status st;
        switch (b % 8) {
        case 0: /* unscale */
            st = vram_scaler_unscale(&s, opt, flag);
            if (opt >= VRAM_SCALER_MAX_OPTIMIZERS) {
                FUZZ_CHECK(st == VRAM_E_RANGE);
            } else if (before.stage[opt] != VRAM_SCALER_READY) {
                FUZZ_CHECK(st == VRAM_E_STATE);
            } else {
                FUZZ_CHECK(st == VRAM_OK);
                FUZZ_CHECK(s.stage[opt] == VRAM_SCALER_UNSCALED && s.found_inf[opt] == flagged);
            }
            break;
        case 1: { /* step */
            int skip = -1;
            st = vram_scaler_step(&s, opt, flag, &skip);
            if (opt >= VRAM_SCALER_MAX_OPTIMIZERS) {
                FUZZ_CHECK(st == VRAM_E_RANGE);
            } else if (before.stage[opt] == VRAM_SCALER_STEPPED) {
                FUZZ_CHECK(st == VRAM_E_STATE);
                FUZZ_CHECK(skip == -1);
            } else {
                int want = flagged || (before.stage[opt] == VRAM_SCALER_UNSCALED && before.found_inf[opt]);
                FUZZ_CHECK(st == VRAM_OK);
                FUZZ_CHECK(s.stage[opt] == VRAM_SCALER_STEPPED && skip == want);
            }
            break;
        }
        case 2:
        case 3: { /* update, checked against the twin's bare state machine */
            int any = 0, over = 0;
            for (unsigned i = 0; i < VRAM_SCALER_MAX_OPTIMIZERS; i++) {
                if (before.stage[i] != VRAM_SCALER_READY) {
                    any = 1;
                    over |= before.found_inf[i];
                }
            }
            st = vram_scaler_update(&s, &r);
            if (!any) {
                FUZZ_CHECK(st == VRAM_E_STATE);
                break;
            }
            vram_scaler_result tr;
            vram_status tst = vram_scaler_advance(&twin, over ? NAN : 0.0f, &tr);
            FUZZ_CHECK(st == tst);
            FUZZ_CHECK(memcmp(&r, &tr, sizeof r) == 0);
            if (st == VRAM_OK) {
                check_result(&r, over, &s);
                for (unsigned i = 0; i < VRAM_SCALER_MAX_OPTIMIZERS; i++)
                    FUZZ_CHECK(s.stage[i] == VRAM_SCALER_READY && s.found_inf[i] == 0);
            } else {
                FUZZ_CHECK(st == VRAM_E_MIN_SCALE && r.why == VRAM_SCALER_SKIP_AT_MIN && r.skipped);
                FUZZ_CHECK(memcmp(&before, &s, sizeof s) == 0);
                if (fuzz_bool(in)) { /* carry on under the SKIP policy */
                    s.cfg.at_min = VRAM_SCALER_AT_MIN_SKIP;
                    twin.cfg.at_min = VRAM_SCALER_AT_MIN_SKIP;
                    before = s;
                }
            }
            break;
        }
        case 4: { /* advance: refused mid-step */
            int any = 0;
            for (unsigned i = 0; i < VRAM_SCALER_MAX_OPTIMIZERS; i++) any |= before.stage[i] != 0;
            st = vram_scaler_advance(&s, flag, &r);
            if (any) {
                FUZZ_CHECK(st == VRAM_E_STATE);
                break;
            }
            vram_scaler_result tr;
            vram_status tst = vram_scaler_advance(&twin, flag, &tr);
            FUZZ_CHECK(st == tst);
            FUZZ_CHECK(memcmp(&r, &tr, sizeof r) == 0);
            if (st == VRAM_OK) check_result(&r, flagged, &s);
            break;
        }
        case 5: { /* save, damage some bytes, restore */
            vram_scaler_saved sv;
            vram_scaler t;
            FUZZ_CHECK(vram_scaler_save(&s, &sv) == VRAM_OK);
            unsigned flips = (unsigned)fuzz_u64(in, 1) % 3;
            for (unsigned k = 0; k < flips; k++) {
                size_t at = (size_t)fuzz_u64(in, 1) % sizeof sv;
                ((unsigned char *)&sv)[at] ^= (unsigned char)fuzz_u64(in, 1);
            }
            memset(&t, 0x5c, sizeof t);
            vram_scaler t0 = t;
            st = vram_scaler_restore(&t, &sv);
            FUZZ_CHECK(st == VRAM_OK || st == VRAM_E_INVALID || st == VRAM_E_RANGE ||
                       st == VRAM_E_VERSION);
            if (flips == 0) FUZZ_CHECK(st == VRAM_OK);
            if (st != VRAM_OK) {
                FUZZ_CHECK(memcmp(&t, &t0, sizeof t) == 0);
            } else {
                check_state(&t); /* whatever was accepted is sound */
                if (flips == 0) FUZZ_CHECK(memcmp(&t, &s, sizeof t) == 0);
                if (fuzz_bool(in)) { /* and we go on with it */
                    s = t;
                    twin = t;
                    for (unsigned i = 0; i < VRAM_SCALER_MAX_OPTIMIZERS; i++) {
                        twin.stage[i] = 0;
                        twin.found_inf[i] = 0;
                    }
                }
            }
            st = VRAM_OK;
            before = s;
            break;
        }
        case 6: { /* stage query */
            int stage = -1;
            st = vram_scaler_get_stage(&s, opt, &stage);
            if (opt >= VRAM_SCALER_MAX_OPTIMIZERS) {
                FUZZ_CHECK(st == VRAM_E_RANGE && stage == -1);
            } else {
                FUZZ_CHECK(st == VRAM_OK && stage == s.stage[opt]);
            }
            break;
        }
        default: { /* a damaged live state: every call refuses it and changes nothing */
            vram_scaler d = s;
            int skip = -1;
            unsigned char *p = (unsigned char *)&d;
            p[(size_t)fuzz_u64(in, 1) % sizeof d] ^= (unsigned char)(fuzz_u64(in, 1) | 1u);
            vram_scaler_saved sv;
            sv.magic = VRAM_SCALER_SAVE_MAGIC;
            sv.version = VRAM_SCALER_SAVE_VERSION;
            sv.state = d;
            vram_scaler probe;
            if (vram_scaler_restore(&probe, &sv) != VRAM_OK) {
                vram_scaler d0 = d;
                FUZZ_CHECK(vram_scaler_unscale(&d, 0, flag) != VRAM_OK);
                FUZZ_CHECK(vram_scaler_step(&d, 0, flag, &skip) != VRAM_OK && skip == -1);
                FUZZ_CHECK(vram_scaler_update(&d, &r) != VRAM_OK);
                FUZZ_CHECK(vram_scaler_advance(&d, flag, &r) != VRAM_OK);
                FUZZ_CHECK(vram_scaler_save(&d, &sv) != VRAM_OK);
                FUZZ_CHECK(memcmp(&d, &d0, sizeof d) == 0);
            }
            st = VRAM_OK;
            break;
        }
        }
        if (st != VRAM_OK) FUZZ_CHECK(memcmp(&before, &s, sizeof s) == 0); /* errors change nothing */
        check_state(&s);
        check_state(&twin);
        /* the twin follows the same scale rule: same scale and counters */
        FUZZ_CHECK(same_bits(s.scale, twin.scale) && s.growth_tracker == twin.growth_tracker &&
                   s.hysteresis_left == twin.hysteresis_left && s.steps == twin.steps &&
                   s.skipped == twin.skipped && s.overflow_streak == twin.overflow_streak);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_in in = {data, size};
    uint8_t mode = (uint8_t)fuzz_u64(&in, 1);
    static const int kinds[5] = {VRAM_SCALER_PRESET_PYTORCH, VRAM_SCALER_PRESET_APEX,
                                 VRAM_SCALER_PRESET_DEEPSPEED, VRAM_SCALER_PRESET_DEEPSPEED_CONSECUTIVE,
                                 VRAM_SCALER_PRESET_MEGATRON};
    if (mode % 8 < 5)
        run_differential(&in, kinds[mode % 8]);
    else
        run_protocol(&in);
    return 0;
}
