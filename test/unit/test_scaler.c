/* test_scaler.c — the loss scaler (include/vramkit/scaler.h): hand-computed traces of every
 * preset against what its reference implementation does, the PyTorch test case, the
 * unscale/step/update protocol and its errors, the rails and min policies, save/restore
 * validation of every field, the reciprocal, defaults and validation. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h> /* isfinite, NAN, INFINITY: macros, no libm */
#include <stdint.h>
#include <string.h>

#include <vramkit/scaler.h>

#define TWO(n) ((float)(1ull << (n))) /* 2^n, a constant expression */

/* ---- helpers ---------------------------------------------------------------------- */

static vram_scaler make(int preset) {
    vram_scaler_cfg c;
    vram_scaler s;
    cr_assert_eq(vram_scaler_preset(preset, &c), VRAM_OK);
    cr_assert_eq(vram_scaler_init(&s, &c), VRAM_OK);
    return s;
}

static vram_scaler make_cfg(const vram_scaler_cfg *c) {
    vram_scaler s;
    cr_assert_eq(vram_scaler_init(&s, c), VRAM_OK);
    return s;
}

/* Put a state in by restore (how a test reaches counters that take 2^64 steps). */
static void force(vram_scaler *s) {
    vram_scaler_saved sv;
    sv.magic = VRAM_SCALER_SAVE_MAGIC;
    sv.version = VRAM_SCALER_SAVE_VERSION;
    sv.state = *s;
    cr_assert_eq(vram_scaler_restore(s, &sv), VRAM_OK);
}

static int bits_eq(float a, float b) { return memcmp(&a, &b, sizeof a) == 0; }

/* One row of a trace: `repeat` updates with this overflow flag, then the expected state.
 * hyst is hysteresis_left (the reference's hysteresis counter minus one). */
typedef struct trace_row {
    float flag;
    unsigned repeat;
    float scale;
    uint32_t tracker;
    uint32_t hyst;
    int why; /* vram_scaler_skip of the last update of the row */
} trace_row;

#define CLEAN(n, sc, t, h) {0.0f, (n), (sc), (t), (h), VRAM_SCALER_SKIP_NONE}
#define OVER(sc, t, h) {1.0f, 1, (sc), (t), (h), VRAM_SCALER_SKIP_OVERFLOW}
#define ATMIN(sc, t, h) {1.0f, 1, (sc), (t), (h), VRAM_SCALER_SKIP_AT_MIN}

/* Run a trace twice: through the bare state machine (advance) and through the protocol
 * (unscale + step + update, one optimizer); both must give every row's state. */
static void run_trace(const vram_scaler *start, const trace_row *rows, size_t n) {
    for (int via_protocol = 0; via_protocol < 2; via_protocol++) {
        vram_scaler s = *start;
        for (size_t i = 0; i < n; i++) {
            vram_scaler_result r;
            memset(&r, 0, sizeof r);
            for (unsigned k = 0; k < rows[i].repeat; k++) {
                float before = s.scale;
                if (via_protocol) {
                    int skip = -1;
                    cr_assert_eq(vram_scaler_unscale(&s, 0, rows[i].flag), VRAM_OK);
                    cr_assert_eq(vram_scaler_step(&s, 0, 0.0f, &skip), VRAM_OK);
                    cr_assert_eq(skip, rows[i].flag != 0.0f);
                    cr_assert_eq(vram_scaler_update(&s, &r), VRAM_OK);
                } else {
                    cr_assert_eq(vram_scaler_advance(&s, rows[i].flag, &r), VRAM_OK);
                }
                cr_assert_eq(r.skipped, rows[i].flag != 0.0f, "row %zu rep %u", i, k);
                cr_assert(bits_eq(r.scale_before, before));
                cr_assert(bits_eq(r.scale_after, s.scale));
            }
            cr_assert(bits_eq(s.scale, rows[i].scale), "row %zu: scale %a, expected %a", i,
                      (double)s.scale, (double)rows[i].scale);
            cr_assert_eq(s.growth_tracker, rows[i].tracker, "row %zu: tracker %u, expected %u", i,
                         s.growth_tracker, rows[i].tracker);
            cr_assert_eq(s.hysteresis_left, rows[i].hyst, "row %zu: hysteresis %u, expected %u", i,
                         s.hysteresis_left, rows[i].hyst);
            cr_assert_eq((int)r.why, rows[i].why, "row %zu", i);
        }
    }
}

/* ---- the published PyTorch case ------------------------------------------------------ */

/* test_grad_scaling_update_scale: scale 4, growth 2, backoff 0.25, interval 2;
 * flags 0, 0, 1 give (scale, tracker) = (4, 1), (8, 0), (2, 0). */
Test(scaler_trace, pytorch_published_case) {
    vram_scaler_cfg c;
    cr_assert_eq(vram_scaler_preset(VRAM_SCALER_PRESET_PYTORCH, &c), VRAM_OK);
    c.init_scale = 4.0f;
    c.growth_factor = 2.0;
    c.backoff_factor = 0.25;
    c.growth_interval = 2;
    vram_scaler s = make_cfg(&c);
    const trace_row rows[] = {CLEAN(1, 4.0f, 1, 0), CLEAN(1, 8.0f, 0, 0), OVER(2.0f, 0, 0)};
    run_trace(&s, rows, sizeof rows / sizeof rows[0]);
}

/* ---- one hand-computed trace per preset --------------------------------------------- */

/* A preset, optional init/min overrides (0: the preset's) and the expected trace. */
typedef struct preset_trace {
    const char *name;
    int preset;
    float init;
    float min;
    const trace_row *rows;
    size_t n;
} preset_trace;

/* PyTorch: interval 2000, every overflow halves, growth resets the tracker. */
static const trace_row pytorch_rows[] = {
    CLEAN(1999, TWO(16), 1999, 0),
    CLEAN(1, TWO(17), 0, 0),
    OVER(TWO(16), 0, 0),
    CLEAN(5, TWO(16), 5, 0),
    OVER(TWO(15), 0, 0),
    OVER(TWO(14), 0, 0),
    CLEAN(2000, TWO(15), 0, 0),
    CLEAN(1999, TWO(15), 1999, 0),
    OVER(TWO(14), 0, 0),
};

/* Apex: as PyTorch, growth capped by min(2^24, s*2): eight growths reach 2^24, the ninth
 * stays there. */
static const trace_row apex_rows[] = {
    CLEAN(2000, TWO(17), 0, 0),
    CLEAN(14000, TWO(24), 0, 0),
    CLEAN(1999, TWO(24), 1999, 0),
    CLEAN(1, TWO(24), 0, 0),
    OVER(TWO(23), 0, 0),
    CLEAN(2000, TWO(24), 0, 0),
};

/* Apex with min_loss_scale 2^14: backoff is max(min, s/2); at the min it just skips. */
static const trace_row apex_min_rows[] = {
    OVER(TWO(15), 0, 0),
    OVER(TWO(14), 0, 0),
    ATMIN(TWO(14), 0, 0),
    CLEAN(2000, TWO(15), 0, 0),
};

/* DeepSpeed, delayed_shift 2, window 1000: the first overflow only spends hysteresis
 * (cur_hysteresis 2 -> 1), later ones back off until a growth refills it; growth comes when
 * (iter - last_overflow_iter) % 1000 == 0, i.e. after 1000 clean steps since the last
 * overflow, absorbed ones included. */
static const trace_row deepspeed_rows[] = {
    OVER(TWO(32), 0, 0),
    OVER(TWO(31), 0, 0),
    CLEAN(999, TWO(31), 999, 0),
    CLEAN(1, TWO(32), 0, 1),
    OVER(TWO(32), 0, 0),
    CLEAN(3, TWO(32), 3, 0),
    OVER(TWO(31), 0, 0),
    CLEAN(1000, TWO(32), 0, 1),
    OVER(TWO(32), 0, 0),
    CLEAN(1000, TWO(33), 0, 1),
};

/* The same flags with consecutive_hysteresis: every clean step refills, so only two
 * overflows in a row back off. */
static const trace_row deepspeed_consecutive_rows[] = {
    OVER(TWO(32), 0, 0),
    OVER(TWO(31), 0, 0),
    CLEAN(999, TWO(31), 999, 1),
    CLEAN(1, TWO(32), 0, 1),
    OVER(TWO(32), 0, 0),
    CLEAN(3, TWO(32), 3, 1),
    OVER(TWO(32), 0, 0),
    CLEAN(1000, TWO(33), 0, 1),
    OVER(TWO(33), 0, 0),
    OVER(TWO(32), 0, 0),
};

/* DeepSpeed at its minimum 1 (init 2, hysteresis spent): the backoff reaches 1, and the
 * next overflow is where DeepSpeed raises: VRAM_E_MIN_SCALE, tested in scaler_rails. */
static const trace_row deepspeed_min_rows[] = {
    OVER(2.0f, 0, 0),
    OVER(1.0f, 0, 0),
    CLEAN(1000, 2.0f, 0, 1),
    OVER(2.0f, 0, 0),
    OVER(1.0f, 0, 0),
};

/* Megatron, hysteresis 2, interval 1000: tracker 2 -> 1 absorbs, -> 0 backs off, -> -1 backs
 * off again; a growth refills it; an overflow resets the growth tracker. */
static const trace_row megatron_rows[] = {
    OVER(TWO(32), 0, 0),
    OVER(TWO(31), 0, 0),
    OVER(TWO(30), 0, 0),
    CLEAN(999, TWO(30), 999, 0),
    CLEAN(1, TWO(31), 0, 1),
    OVER(TWO(31), 0, 0),
    CLEAN(500, TWO(31), 500, 0),
    OVER(TWO(30), 0, 0),
    CLEAN(1000, TWO(31), 0, 1),
};

/* Megatron at its min 1: max(s * 0.5, 1) keeps 1 and the run goes on, skipping. */
static const trace_row megatron_min_rows[] = {
    OVER(8.0f, 0, 0),
    OVER(4.0f, 0, 0),
    OVER(2.0f, 0, 0),
    OVER(1.0f, 0, 0),
    ATMIN(1.0f, 0, 0),
    ATMIN(1.0f, 0, 0),
    CLEAN(1000, 2.0f, 0, 1),
};

/* The defaults: PyTorch's rule between 1 and 2^24. */
static const trace_row vramkit_rows[] = {
    CLEAN(2000, TWO(17), 0, 0),
    OVER(TWO(16), 0, 0),
    CLEAN(16000, TWO(24), 0, 0),
    CLEAN(2000, TWO(24), 0, 0),
};

#define N(a) (sizeof(a) / sizeof((a)[0]))
static const preset_trace traces[] = {
    {"pytorch", VRAM_SCALER_PRESET_PYTORCH, 0, 0, pytorch_rows, N(pytorch_rows)},
    {"apex", VRAM_SCALER_PRESET_APEX, 0, 0, apex_rows, N(apex_rows)},
    {"apex_min", VRAM_SCALER_PRESET_APEX, 0, 16384.0f, apex_min_rows, N(apex_min_rows)},
    {"deepspeed", VRAM_SCALER_PRESET_DEEPSPEED, 0, 0, deepspeed_rows, N(deepspeed_rows)},
    {"deepspeed_consecutive", VRAM_SCALER_PRESET_DEEPSPEED_CONSECUTIVE, 0, 0,
     deepspeed_consecutive_rows, N(deepspeed_consecutive_rows)},
    {"deepspeed_min", VRAM_SCALER_PRESET_DEEPSPEED, 2.0f, 0, deepspeed_min_rows, N(deepspeed_min_rows)},
    {"megatron", VRAM_SCALER_PRESET_MEGATRON, 0, 0, megatron_rows, N(megatron_rows)},
    {"megatron_min", VRAM_SCALER_PRESET_MEGATRON, 8.0f, 0, megatron_min_rows, N(megatron_min_rows)},
    {"vramkit", VRAM_SCALER_PRESET_VRAMKIT, 0, 0, vramkit_rows, N(vramkit_rows)},
};

/* Criterion runs each parameter in its own process: pass indices, not pointers. */
ParameterizedTestParameters(scaler_trace, preset) {
    static size_t idx[N(traces)];
    for (size_t i = 0; i < N(traces); i++) idx[i] = i;
    return cr_make_param_array(size_t, idx, N(traces));
}

ParameterizedTest(size_t *i, scaler_trace, preset) {
    const preset_trace *t = &traces[*i];
    vram_scaler_cfg c;
    cr_assert_eq(vram_scaler_preset(t->preset, &c), VRAM_OK, "%s", t->name);
    if (t->init != 0.0f) c.init_scale = t->init;
    if (t->min != 0.0f) c.min_scale = t->min;
    vram_scaler s = make_cfg(&c);
    cr_assert_eq(s.hysteresis_left, c.hysteresis - 1);
    run_trace(&s, t->rows, t->n);
}

/* Megatron's first overflow at hysteresis 2 needs the other three of the trace too:
 * the growth tracker resets on an absorbed overflow (counted steps restart). */
Test(scaler_trace, absorbed_overflow_restarts_growth_count) {
    vram_scaler s = make(VRAM_SCALER_PRESET_MEGATRON);
    const trace_row rows[] = {CLEAN(600, TWO(32), 600, 1), OVER(TWO(32), 0, 0),
                              CLEAN(999, TWO(32), 999, 0), CLEAN(1, TWO(33), 0, 1)};
    run_trace(&s, rows, N(rows));
}

/* ---- results, counters, streak ------------------------------------------------------- */

Test(scaler_result, fields_and_counters) {
    vram_scaler s = make(VRAM_SCALER_PRESET_MEGATRON);
    vram_scaler_result r;
    cr_assert_eq(vram_scaler_advance(&s, 1.0f, &r), VRAM_OK); /* absorbed */
    cr_assert(r.skipped && r.absorbed && !r.backed_off && !r.grew && !r.railed);
    cr_assert_eq(r.why, VRAM_SCALER_SKIP_OVERFLOW);
    cr_assert_eq(r.scale_before, r.scale_after);
    cr_assert_eq(vram_scaler_advance(&s, 1.0f, &r), VRAM_OK); /* backs off */
    cr_assert(r.skipped && !r.absorbed && r.backed_off && !r.grew);
    cr_assert_eq(r.scale_after, r.scale_before * 0.5f);
    cr_assert_eq(s.overflow_streak, 2);
    cr_assert_eq(s.skipped, 2);
    for (int i = 0; i < 1000; i++) cr_assert_eq(vram_scaler_advance(&s, 0.0f, &r), VRAM_OK);
    cr_assert(r.grew && !r.skipped && !r.backed_off && !r.absorbed && !r.railed);
    cr_assert_eq(r.why, VRAM_SCALER_SKIP_NONE);
    cr_assert_eq(s.overflow_streak, 0);
    cr_assert_eq(s.steps, 1002);
    cr_assert_eq(s.skipped, 2);
    /* a NULL result is allowed */
    cr_assert_eq(vram_scaler_advance(&s, 1.0f, NULL), VRAM_OK);
    cr_assert_eq(s.overflow_streak, 1);
}

Test(scaler_result, nan_and_negative_zero_flags) {
    vram_scaler s = make(VRAM_SCALER_PRESET_VRAMKIT);
    vram_scaler_result r;
    cr_assert_eq(vram_scaler_advance(&s, NAN, &r), VRAM_OK);
    cr_assert(r.skipped && r.backed_off);
    cr_assert_eq(vram_scaler_advance(&s, -0.0f, &r), VRAM_OK);
    cr_assert(!r.skipped);
    cr_assert_eq(vram_scaler_advance(&s, INFINITY, &r), VRAM_OK);
    cr_assert(r.skipped);
    cr_assert_eq(vram_scaler_advance(&s, 0x1p-149f, &r), VRAM_OK); /* any nonzero */
    cr_assert(r.skipped);
}

Test(scaler_result, counters_saturate) {
    vram_scaler s = make(VRAM_SCALER_PRESET_VRAMKIT);
    vram_scaler_result r;
    s.steps = UINT64_MAX;
    s.skipped = UINT64_MAX;
    s.overflow_streak = UINT32_MAX;
    force(&s);
    cr_assert_eq(vram_scaler_advance(&s, 1.0f, &r), VRAM_OK);
    cr_assert_eq(s.steps, UINT64_MAX);
    cr_assert_eq(s.skipped, UINT64_MAX);
    cr_assert_eq(s.overflow_streak, UINT32_MAX);
    /* steps saturated but skipped below it: skipped still counts */
    s.skipped = 5;
    s.overflow_streak = 5;
    force(&s);
    cr_assert_eq(vram_scaler_advance(&s, 1.0f, &r), VRAM_OK);
    cr_assert_eq(s.steps, UINT64_MAX);
    cr_assert_eq(s.skipped, 6);
    cr_assert_eq(s.overflow_streak, 6);
}

/* ---- the protocol --------------------------------------------------------------------- */

Test(scaler_protocol, one_optimizer_happy_path) {
    vram_scaler s = make(VRAM_SCALER_PRESET_VRAMKIT);
    vram_scaler_result r;
    int stage = -1, skip = -1;
    cr_assert_eq(vram_scaler_get_stage(&s, 0, &stage), VRAM_OK);
    cr_assert_eq(stage, VRAM_SCALER_READY);
    cr_assert_eq(vram_scaler_unscale(&s, 0, 0.0f), VRAM_OK);
    cr_assert_eq(vram_scaler_get_stage(&s, 0, &stage), VRAM_OK);
    cr_assert_eq(stage, VRAM_SCALER_UNSCALED);
    cr_assert_eq(vram_scaler_step(&s, 0, 0.0f, &skip), VRAM_OK);
    cr_assert_eq(skip, 0);
    cr_assert_eq(vram_scaler_get_stage(&s, 0, &stage), VRAM_OK);
    cr_assert_eq(stage, VRAM_SCALER_STEPPED);
    cr_assert_eq(vram_scaler_update(&s, &r), VRAM_OK);
    cr_assert(!r.skipped);
    cr_assert_eq(vram_scaler_get_stage(&s, 0, &stage), VRAM_OK);
    cr_assert_eq(stage, VRAM_SCALER_READY);
    cr_assert_eq(s.growth_tracker, 1);
    /* the result is optional */
    cr_assert_eq(vram_scaler_step(&s, 0, 0.0f, &skip), VRAM_OK);
    cr_assert_eq(vram_scaler_update(&s, NULL), VRAM_OK);
    cr_assert_eq(s.growth_tracker, 2);
}

Test(scaler_protocol, errors) {
    vram_scaler s = make(VRAM_SCALER_PRESET_VRAMKIT);
    vram_scaler_result r;
    int skip = -1;
    /* update with no recorded check */
    cr_assert_eq(vram_scaler_update(&s, &r), VRAM_E_STATE);
    /* unscale twice before update */
    cr_assert_eq(vram_scaler_unscale(&s, 0, 0.0f), VRAM_OK);
    cr_assert_eq(vram_scaler_unscale(&s, 0, 0.0f), VRAM_E_STATE);
    /* step, then unscale after step, then step twice */
    cr_assert_eq(vram_scaler_step(&s, 0, 0.0f, &skip), VRAM_OK);
    cr_assert_eq(vram_scaler_unscale(&s, 0, 0.0f), VRAM_E_STATE);
    skip = -1;
    cr_assert_eq(vram_scaler_step(&s, 0, 0.0f, &skip), VRAM_E_STATE);
    cr_assert_eq(skip, -1); /* untouched on error */
    /* the bare state machine refuses while a protocol step is under way */
    cr_assert_eq(vram_scaler_advance(&s, 0.0f, &r), VRAM_E_STATE);
    cr_assert_eq(s.steps, 0);
    cr_assert_eq(vram_scaler_update(&s, &r), VRAM_OK);
    cr_assert_eq(vram_scaler_update(&s, &r), VRAM_E_STATE); /* nothing recorded again */
    /* optimizer index out of range */
    cr_assert_eq(vram_scaler_unscale(&s, VRAM_SCALER_MAX_OPTIMIZERS, 0.0f), VRAM_E_RANGE);
    cr_assert_eq(vram_scaler_step(&s, VRAM_SCALER_MAX_OPTIMIZERS, 0.0f, &skip), VRAM_E_RANGE);
    int stage = -1;
    cr_assert_eq(vram_scaler_get_stage(&s, VRAM_SCALER_MAX_OPTIMIZERS, &stage), VRAM_E_RANGE);
    cr_assert_eq(stage, -1);
}

Test(scaler_protocol, step_on_ready_unscales_first) {
    vram_scaler s = make(VRAM_SCALER_PRESET_VRAMKIT);
    vram_scaler_result r;
    int skip = -1;
    cr_assert_eq(vram_scaler_step(&s, 3, 1.0f, &skip), VRAM_OK);
    cr_assert_eq(skip, 1);
    cr_assert_eq(vram_scaler_update(&s, &r), VRAM_OK);
    cr_assert(r.skipped && r.backed_off);
    cr_assert_eq(s.scale, 32768.0f);
    /* a clean step from READY */
    cr_assert_eq(vram_scaler_step(&s, 3, 0.0f, &skip), VRAM_OK);
    cr_assert_eq(skip, 0);
    cr_assert_eq(vram_scaler_update(&s, &r), VRAM_OK);
    cr_assert(!r.skipped);
}

Test(scaler_protocol, flag_at_step_is_added_to_unscale_flag) {
    vram_scaler s = make(VRAM_SCALER_PRESET_VRAMKIT);
    vram_scaler_result r;
    int skip = -1;
    cr_assert_eq(vram_scaler_unscale(&s, 0, 0.0f), VRAM_OK);
    cr_assert_eq(vram_scaler_step(&s, 0, NAN, &skip), VRAM_OK);
    cr_assert_eq(skip, 1);
    /* and a recorded overflow is not dropped by a clean flag at step */
    cr_assert_eq(vram_scaler_unscale(&s, 1, NAN), VRAM_OK);
    cr_assert_eq(vram_scaler_step(&s, 1, 0.0f, &skip), VRAM_OK);
    cr_assert_eq(skip, 1);
    cr_assert_eq(vram_scaler_update(&s, &r), VRAM_OK);
    cr_assert(r.skipped);
}

/* Each optimizer skips on its own overflow; update backs off once for all of them. */
Test(scaler_protocol, multiple_optimizers) {
    vram_scaler s = make(VRAM_SCALER_PRESET_VRAMKIT);
    vram_scaler_result r;
    int skip;
    for (unsigned o = 0; o < VRAM_SCALER_MAX_OPTIMIZERS; o++) {
        cr_assert_eq(vram_scaler_unscale(&s, o, (o == 5 || o == 9) ? 1.0f : 0.0f), VRAM_OK);
    }
    for (unsigned o = 0; o < VRAM_SCALER_MAX_OPTIMIZERS; o++) {
        cr_assert_eq(vram_scaler_step(&s, o, 0.0f, &skip), VRAM_OK);
        cr_assert_eq(skip, o == 5 || o == 9, "optimizer %u", o);
    }
    cr_assert_eq(vram_scaler_update(&s, &r), VRAM_OK);
    cr_assert(r.skipped);
    cr_assert_eq(s.scale, 32768.0f); /* once, not twice */
    cr_assert_eq(s.steps, 1);
    for (unsigned o = 0; o < VRAM_SCALER_MAX_OPTIMIZERS; o++) {
        int st = -1;
        cr_assert_eq(vram_scaler_get_stage(&s, o, &st), VRAM_OK);
        cr_assert_eq(st, VRAM_SCALER_READY);
        cr_assert_eq(s.found_inf[o], 0);
    }
    /* only some optimizers take part in a step: the others stay out of it */
    cr_assert_eq(vram_scaler_unscale(&s, 2, 0.0f), VRAM_OK);
    cr_assert_eq(vram_scaler_step(&s, 7, 0.0f, &skip), VRAM_OK);
    cr_assert_eq(vram_scaler_update(&s, &r), VRAM_OK); /* 2 unscaled but never stepped: allowed */
    cr_assert(!r.skipped);
    cr_assert_eq(s.growth_tracker, 1);
}

/* Gradient accumulation: the loss of every micro-batch is scaled by the same scale, the
 * gradients are unscaled once, just before the step. */
Test(scaler_protocol, accumulation) {
    vram_scaler s = make(VRAM_SCALER_PRESET_VRAMKIT);
    vram_scaler_result r;
    int skip;
    for (int step = 0; step < 3; step++) {
        float scale = vram_scaler_scale(&s);
        for (int micro = 0; micro < 8; micro++) {
            cr_assert_eq(vram_scaler_scale(&s), scale); /* reading it changes nothing */
            cr_assert_eq(s.stage[0], VRAM_SCALER_READY);
        }
        cr_assert_eq(vram_scaler_unscale(&s, 0, 0.0f), VRAM_OK);
        cr_assert_eq(vram_scaler_unscale(&s, 0, 0.0f), VRAM_E_STATE); /* once per step */
        cr_assert_eq(vram_scaler_step(&s, 0, 0.0f, &skip), VRAM_OK);
        cr_assert_eq(vram_scaler_update(&s, &r), VRAM_OK);
    }
    cr_assert_eq(s.steps, 3);
    cr_assert_eq(s.growth_tracker, 3);
}

/* ---- rails and policies ----------------------------------------------------------------- */

Test(scaler_rails, default_min_skip_policy_reports) {
    vram_scaler_cfg c = {0};
    c.init_scale = 2.0f;
    vram_scaler s = make_cfg(&c);
    vram_scaler_result r;
    cr_assert_eq(vram_scaler_advance(&s, 1.0f, &r), VRAM_OK);
    cr_assert_eq(s.scale, 1.0f);
    cr_assert_eq(vram_scaler_advance(&s, 1.0f, &r), VRAM_OK);
    cr_assert_eq(r.why, VRAM_SCALER_SKIP_AT_MIN);
    cr_assert(r.skipped && !r.backed_off);
    cr_assert_eq(s.scale, 1.0f);
    cr_assert_eq(s.skipped, 2);
}

Test(scaler_rails, min_error_policy) {
    vram_scaler s = make(VRAM_SCALER_PRESET_DEEPSPEED);
    vram_scaler_result r;
    s.scale = 1.0f;
    force(&s);
    /* hysteresis left: the overflow is absorbed at the min, no error (DeepSpeed too) */
    cr_assert_eq(vram_scaler_advance(&s, 1.0f, &r), VRAM_OK);
    cr_assert(r.absorbed);
    vram_scaler before = s;
    memset(&r, 0x5a, sizeof r);
    cr_assert_eq(vram_scaler_advance(&s, 1.0f, &r), VRAM_E_MIN_SCALE);
    cr_assert_eq(memcmp(&before, &s, sizeof s), 0); /* untouched, like DeepSpeed's raise */
    cr_assert(r.skipped);
    cr_assert_eq(r.why, VRAM_SCALER_SKIP_AT_MIN);
    cr_assert_eq(r.scale_after, 1.0f);
    /* through the protocol: stages stay, so the caller may change policy and go on */
    int skip;
    cr_assert_eq(vram_scaler_step(&s, 0, 1.0f, &skip), VRAM_OK);
    cr_assert_eq(vram_scaler_update(&s, &r), VRAM_E_MIN_SCALE);
    cr_assert_eq(s.stage[0], VRAM_SCALER_STEPPED);
    s.cfg.at_min = VRAM_SCALER_AT_MIN_SKIP;
    cr_assert_eq(vram_scaler_update(&s, &r), VRAM_OK);
    cr_assert_eq(r.why, VRAM_SCALER_SKIP_AT_MIN);
    cr_assert_eq(s.stage[0], VRAM_SCALER_READY);
    /* a NULL result still gets the error */
    s.cfg.at_min = VRAM_SCALER_AT_MIN_ERROR;
    cr_assert_eq(vram_scaler_advance(&s, 1.0f, NULL), VRAM_E_MIN_SCALE);
}

Test(scaler_rails, backoff_clamps_to_min) {
    vram_scaler_cfg c = {0};
    c.init_scale = 1.5f;
    vram_scaler s = make_cfg(&c);
    vram_scaler_result r;
    cr_assert_eq(vram_scaler_advance(&s, 1.0f, &r), VRAM_OK);
    cr_assert_eq(s.scale, 1.0f);
    cr_assert(r.railed && r.backed_off);
    cr_assert_eq(r.why, VRAM_SCALER_SKIP_OVERFLOW);
}

Test(scaler_rails, growth_clamps_or_holds_at_max) {
    vram_scaler_cfg c = {0};
    c.max_scale = 100000.0f;
    c.growth_interval = 1;
    vram_scaler s = make_cfg(&c);
    vram_scaler_result r;
    cr_assert_eq(vram_scaler_advance(&s, 0.0f, &r), VRAM_OK); /* CLAMP: 131072 -> 100000 */
    cr_assert_eq(s.scale, 100000.0f);
    cr_assert(r.railed && r.grew);
    cr_assert_eq(vram_scaler_advance(&s, 0.0f, &r), VRAM_OK); /* at max: stays */
    cr_assert_eq(s.scale, 100000.0f);
    cr_assert(r.railed && !r.grew);
    c.at_max = VRAM_SCALER_AT_MAX_HOLD;
    s = make_cfg(&c);
    cr_assert_eq(vram_scaler_advance(&s, 0.0f, &r), VRAM_OK); /* HOLD: stays 65536 */
    cr_assert_eq(s.scale, 65536.0f);
    cr_assert(r.railed && !r.grew);
    cr_assert_eq(s.growth_tracker, 0);
    /* growth 1 never grows and never rails */
    c.growth_factor = 1.0;
    s = make_cfg(&c);
    cr_assert_eq(vram_scaler_advance(&s, 0.0f, &r), VRAM_OK);
    cr_assert(!r.railed && !r.grew);
}

/* PyTorch grows only when the fp32 result is finite: from 2^127 it holds. */
Test(scaler_rails, pytorch_holds_below_inf) {
    vram_scaler s = make(VRAM_SCALER_PRESET_PYTORCH);
    vram_scaler_result r;
    s.scale = 0x1p127f;
    s.growth_tracker = 1999;
    force(&s);
    cr_assert_eq(vram_scaler_advance(&s, 0.0f, &r), VRAM_OK);
    cr_assert(bits_eq(s.scale, 0x1p127f));
    cr_assert(r.railed && !r.grew);
    cr_assert_eq(s.growth_tracker, 0); /* PyTorch resets it anyway */
    cr_assert(isfinite(vram_scaler_inv_scale(&s)) && vram_scaler_inv_scale(&s) > 0.0f);
    /* with CLAMP the hard max is FLT_MAX itself */
    s.cfg.at_max = VRAM_SCALER_AT_MAX_CLAMP;
    s.growth_tracker = 1999;
    cr_assert_eq(vram_scaler_advance(&s, 0.0f, &r), VRAM_OK);
    cr_assert(bits_eq(s.scale, VRAM_SCALER_HARD_MAX));
    cr_assert(r.grew && r.railed);
}

/* A product just above FLT_MAX that rounds to FLT_MAX in fp32 is finite: PyTorch keeps it,
 * so do we; one at the midpoint to 2^128 rounds to inf and is refused. */
Test(scaler_rails, fp32_rounding_at_the_top) {
    vram_scaler s = make(VRAM_SCALER_PRESET_PYTORCH);
    vram_scaler_result r;
    s.cfg.growth_factor = 2.0 * (1.0 + 0x1p-30);
    s.scale = 0x1p127f * 0x1.fffffep-1f; /* FLT_MAX / 2 */
    s.growth_tracker = 1999;
    force(&s);
    cr_assert_eq(vram_scaler_advance(&s, 0.0f, &r), VRAM_OK);
    cr_assert(bits_eq(s.scale, VRAM_SCALER_HARD_MAX));
    cr_assert(r.grew && !r.railed);
    int big = -1;
    cr_assert_eq(vram__scaler_mul(VRAM_SCALER_HARD_MAX, 1.0 + 0x1p-24, &big), VRAM_SCALER_HARD_MAX);
    cr_assert_eq(big, 1);
    cr_assert(bits_eq(vram__scaler_mul(VRAM_SCALER_HARD_MAX, 1.0 + 0x1p-25, &big), VRAM_SCALER_HARD_MAX));
    cr_assert_eq(big, 0);
    cr_assert(bits_eq(vram__scaler_mul(1.0f, NAN, &big), 1.0f)); /* never reached: factors are checked */
    cr_assert_eq(big, 1);
}

/* PyTorch can back off to 0; the preset stops at the smallest scale with a finite fp32
 * reciprocal, which is where PyTorch's own reciprocal would turn inf. */
Test(scaler_rails, pytorch_floor_is_hard_min) {
    vram_scaler s = make(VRAM_SCALER_PRESET_PYTORCH);
    vram_scaler_result r;
    s.scale = 0x1p-127f;
    force(&s);
    cr_assert(isfinite((float)(1.0 / (double)0x1p-127f)));
    cr_assert(!isfinite((float)(1.0 / (double)0x1p-128f))); /* what PyTorch would reach */
    cr_assert_eq(vram_scaler_advance(&s, 1.0f, &r), VRAM_OK);
    cr_assert(bits_eq(s.scale, VRAM_SCALER_HARD_MIN));
    cr_assert(r.railed && r.backed_off);
    cr_assert(isfinite(vram_scaler_inv_scale(&s)));
    cr_assert_eq(vram_scaler_advance(&s, 1.0f, &r), VRAM_OK);
    cr_assert_eq(r.why, VRAM_SCALER_SKIP_AT_MIN);
    cr_assert(bits_eq(s.scale, VRAM_SCALER_HARD_MIN));
    /* a tiny backoff factor underflows to 0 in fp32: the rail catches that too */
    s.cfg.backoff_factor = 1e-300;
    s.scale = 1.0f;
    force(&s);
    cr_assert_eq(vram_scaler_advance(&s, 1.0f, &r), VRAM_OK);
    cr_assert(bits_eq(s.scale, VRAM_SCALER_HARD_MIN));
}

/* A growth tracker restored above the interval still grows (>=, not ==). */
Test(scaler_rails, tracker_above_interval_grows) {
    vram_scaler s = make(VRAM_SCALER_PRESET_MEGATRON);
    vram_scaler_result r;
    s.growth_tracker = 5000;
    force(&s);
    cr_assert_eq(vram_scaler_advance(&s, 0.0f, &r), VRAM_OK);
    cr_assert(r.grew);
    cr_assert_eq(s.growth_tracker, 0);
    s.growth_tracker = VRAM_SCALER_MAX_INTERVAL;
    force(&s);
    cr_assert_eq(vram_scaler_advance(&s, 0.0f, &r), VRAM_OK);
    cr_assert(r.grew);
}

/* ---- reciprocal ------------------------------------------------------------------------ */

Test(scaler_recip, fp64_reciprocal_rounded_to_fp32) {
    const float scales[] = {1.0f, 3.0f, 65536.0f, 1e-3f, 7.0f, 0.1f, 12345.678f, TWO(24),
                            VRAM_SCALER_HARD_MIN, VRAM_SCALER_HARD_MAX, 0x1p-127f, 1.17549435e-38f};
    for (size_t i = 0; i < N(scales); i++) {
        vram_scaler_cfg c;
        cr_assert_eq(vram_scaler_preset(VRAM_SCALER_PRESET_PYTORCH, &c), VRAM_OK);
        c.init_scale = scales[i];
        vram_scaler s = make_cfg(&c);
        float inv = vram_scaler_inv_scale(&s);
        float want = (float)(1.0 / (double)scales[i]);
        cr_assert(bits_eq(inv, want), "%a: %a != %a", (double)scales[i], (double)inv, (double)want);
        cr_assert(isfinite(inv) && inv > 0.0f);
        cr_assert_eq(vram_scaler_scale(&s), scales[i]);
    }
    cr_assert_eq(vram_scaler_inv_scale(NULL), 1.0f);
    cr_assert_eq(vram_scaler_scale(NULL), 1.0f);
    cr_assert_eq(vram__scaler_recip(65536.0f), 0x1p-16f);
    /* the edges of the hard rails */
    cr_assert(isfinite(vram__scaler_recip(VRAM_SCALER_HARD_MIN)));
    cr_assert(vram__scaler_recip(VRAM_SCALER_HARD_MAX) > 0.0f);
    cr_assert(!isfinite((float)(1.0 / (double)(VRAM_SCALER_HARD_MIN - 0x1p-149f)))); /* the float below */
}

/* ---- configuration --------------------------------------------------------------------- */

static void assert_cfg_eq(const vram_scaler_cfg *a, const vram_scaler_cfg *b) {
    cr_assert_eq(a->growth_factor, b->growth_factor);
    cr_assert_eq(a->backoff_factor, b->backoff_factor);
    cr_assert(bits_eq(a->init_scale, b->init_scale));
    cr_assert(bits_eq(a->min_scale, b->min_scale));
    cr_assert(bits_eq(a->max_scale, b->max_scale));
    cr_assert_eq(a->growth_interval, b->growth_interval);
    cr_assert_eq(a->hysteresis, b->hysteresis);
    cr_assert_eq(a->consecutive_hysteresis, b->consecutive_hysteresis);
    cr_assert_eq(a->at_min, b->at_min);
    cr_assert_eq(a->at_max, b->at_max);
}

Test(scaler_cfg, defaults) {
    vram_scaler_cfg zero = {0}, d = vram_scaler_defaults(NULL), z = vram_scaler_defaults(&zero), p;
    cr_assert_eq(d.init_scale, 65536.0f);
    cr_assert_eq(d.growth_factor, 2.0);
    cr_assert_eq(d.backoff_factor, 0.5);
    cr_assert_eq(d.growth_interval, 2000);
    cr_assert_eq(d.hysteresis, 1);
    cr_assert_eq(d.min_scale, 1.0f);
    cr_assert_eq(d.max_scale, 16777216.0f);
    cr_assert_eq(d.consecutive_hysteresis, 0);
    cr_assert_eq(d.at_min, VRAM_SCALER_AT_MIN_SKIP);
    cr_assert_eq(d.at_max, VRAM_SCALER_AT_MAX_CLAMP);
    assert_cfg_eq(&d, &z);
    cr_assert_eq(vram_scaler_preset(VRAM_SCALER_PRESET_VRAMKIT, &p), VRAM_OK);
    assert_cfg_eq(&d, &p);
    /* set fields are kept, and resolving twice changes nothing */
    zero.growth_interval = 7;
    zero.backoff_factor = 0.25;
    z = vram_scaler_defaults(&zero);
    cr_assert_eq(z.growth_interval, 7);
    cr_assert_eq(z.backoff_factor, 0.25);
    vram_scaler_cfg zz = vram_scaler_defaults(&z);
    assert_cfg_eq(&z, &zz);
    /* init with NULL: the defaults */
    vram_scaler s;
    cr_assert_eq(vram_scaler_init(&s, NULL), VRAM_OK);
    assert_cfg_eq(&s.cfg, &d);
    cr_assert_eq(s.scale, 65536.0f);
}

Test(scaler_cfg, presets) {
    struct {
        int id;
        float init, min, max;
        uint32_t interval, hysteresis;
        int consecutive, at_min, at_max;
    } want[] = {
        {VRAM_SCALER_PRESET_PYTORCH, TWO(16), VRAM_SCALER_HARD_MIN, VRAM_SCALER_HARD_MAX, 2000, 1, 0,
         VRAM_SCALER_AT_MIN_SKIP, VRAM_SCALER_AT_MAX_HOLD},
        {VRAM_SCALER_PRESET_APEX, TWO(16), VRAM_SCALER_HARD_MIN, TWO(24), 2000, 1, 0,
         VRAM_SCALER_AT_MIN_SKIP, VRAM_SCALER_AT_MAX_CLAMP},
        {VRAM_SCALER_PRESET_DEEPSPEED, TWO(32), 1.0f, VRAM_SCALER_HARD_MAX, 1000, 2, 0,
         VRAM_SCALER_AT_MIN_ERROR, VRAM_SCALER_AT_MAX_HOLD},
        {VRAM_SCALER_PRESET_DEEPSPEED_CONSECUTIVE, TWO(32), 1.0f, VRAM_SCALER_HARD_MAX, 1000, 2, 1,
         VRAM_SCALER_AT_MIN_ERROR, VRAM_SCALER_AT_MAX_HOLD},
        {VRAM_SCALER_PRESET_MEGATRON, TWO(32), 1.0f, VRAM_SCALER_HARD_MAX, 1000, 2, 0,
         VRAM_SCALER_AT_MIN_SKIP, VRAM_SCALER_AT_MAX_HOLD},
    };
    for (size_t i = 0; i < N(want); i++) {
        vram_scaler_cfg c;
        cr_assert_eq(vram_scaler_preset(want[i].id, &c), VRAM_OK);
        cr_assert_eq(c.growth_factor, 2.0);
        cr_assert_eq(c.backoff_factor, 0.5);
        cr_assert(bits_eq(c.init_scale, want[i].init));
        cr_assert(bits_eq(c.min_scale, want[i].min));
        cr_assert(bits_eq(c.max_scale, want[i].max));
        cr_assert_eq(c.growth_interval, want[i].interval);
        cr_assert_eq(c.hysteresis, want[i].hysteresis);
        cr_assert_eq(c.consecutive_hysteresis, want[i].consecutive);
        cr_assert_eq(c.at_min, want[i].at_min);
        cr_assert_eq(c.at_max, want[i].at_max);
        cr_assert_eq(vram_scaler_validate(&c), VRAM_OK);
        vram_scaler_cfg r = vram_scaler_defaults(&c); /* resolved already */
        assert_cfg_eq(&c, &r);
    }
    vram_scaler_cfg c = {0};
    c.growth_interval = 77;
    cr_assert_eq(vram_scaler_preset(6, &c), VRAM_E_INVALID);
    cr_assert_eq(vram_scaler_preset(-1, &c), VRAM_E_INVALID);
    cr_assert_eq(c.growth_interval, 77); /* untouched */
    cr_assert_eq(vram_scaler_preset(VRAM_SCALER_PRESET_PYTORCH, NULL), VRAM_E_INVALID);
}

/* One field made bad at a time, on top of the defaults. */
typedef struct cfg_case {
    char what[48]; /* inline: parameters are copied into another process */
    int field; /* see set_field */
    double value;
    int want;
} cfg_case;

enum { F_INIT, F_MIN, F_MAX, F_GROWTH, F_BACKOFF, F_INTERVAL, F_HYST, F_CONSEC, F_ATMIN, F_ATMAX };

static void set_field(vram_scaler_cfg *c, int field, double v) {
    switch (field) {
    case F_INIT: c->init_scale = (float)v; break;
    case F_MIN: c->min_scale = (float)v; break;
    case F_MAX: c->max_scale = (float)v; break;
    case F_GROWTH: c->growth_factor = v; break;
    case F_BACKOFF: c->backoff_factor = v; break;
    case F_INTERVAL: c->growth_interval = (uint32_t)v; break;
    case F_HYST: c->hysteresis = (uint32_t)v; break;
    case F_CONSEC: c->consecutive_hysteresis = (int32_t)v; break;
    case F_ATMIN: c->at_min = (int32_t)v; break;
    default: c->at_max = (int32_t)v; break;
    }
}

ParameterizedTestParameters(scaler_cfg, validate) {
    static cfg_case cases[] = {
        {"init NaN", F_INIT, NAN, VRAM_E_INVALID},
        {"init inf", F_INIT, INFINITY, VRAM_E_INVALID},
        {"init negative", F_INIT, -4.0, VRAM_E_INVALID},
        {"min NaN", F_MIN, NAN, VRAM_E_INVALID},
        {"min negative", F_MIN, -1.0, VRAM_E_INVALID},
        {"max inf", F_MAX, INFINITY, VRAM_E_INVALID},
        {"max NaN", F_MAX, NAN, VRAM_E_INVALID},
        {"growth NaN", F_GROWTH, NAN, VRAM_E_INVALID},
        {"growth negative", F_GROWTH, -2.0, VRAM_E_INVALID},
        {"growth inf", F_GROWTH, INFINITY, VRAM_E_INVALID},
        {"backoff NaN", F_BACKOFF, NAN, VRAM_E_INVALID},
        {"backoff negative", F_BACKOFF, -0.5, VRAM_E_INVALID},
        {"backoff inf", F_BACKOFF, INFINITY, VRAM_E_INVALID},
        {"consecutive 2", F_CONSEC, 2, VRAM_E_INVALID},
        {"consecutive -1", F_CONSEC, -1, VRAM_E_INVALID},
        {"at_min 2", F_ATMIN, 2, VRAM_E_INVALID},
        {"at_min -1", F_ATMIN, -1, VRAM_E_INVALID},
        {"at_max 2", F_ATMAX, 2, VRAM_E_INVALID},
        {"at_max -3", F_ATMAX, -3, VRAM_E_INVALID},
        {"growth < 1", F_GROWTH, 0.5, VRAM_E_RANGE},
        {"backoff 1", F_BACKOFF, 1.0, VRAM_E_RANGE},
        {"backoff > 1", F_BACKOFF, 1.5, VRAM_E_RANGE},
        {"interval too big", F_INTERVAL, VRAM_SCALER_MAX_INTERVAL + 1.0, VRAM_E_RANGE},
        {"hysteresis too big", F_HYST, VRAM_SCALER_MAX_HYSTERESIS + 1.0, VRAM_E_RANGE},
        {"min below hard min", F_MIN, 0x1p-128, VRAM_E_RANGE},
        {"min above max", F_MIN, 33554432.0, VRAM_E_RANGE},
        {"init below min", F_INIT, 0.5, VRAM_E_RANGE},
        {"init above max", F_INIT, 33554432.0, VRAM_E_RANGE},
        {"max below init", F_MAX, 1024.0, VRAM_E_RANGE},
        {"growth 1 is fine", F_GROWTH, 1.0, VRAM_OK},
        {"interval max is fine", F_INTERVAL, VRAM_SCALER_MAX_INTERVAL, VRAM_OK},
        {"hysteresis max is fine", F_HYST, VRAM_SCALER_MAX_HYSTERESIS, VRAM_OK},
        {"min hard min is fine", F_MIN, VRAM_SCALER_HARD_MIN, VRAM_OK},
        {"consecutive 1 is fine", F_CONSEC, 1, VRAM_OK},
        {"-0 is a default", F_BACKOFF, -0.0, VRAM_OK},
    };
    return cr_make_param_array(cfg_case, cases, N(cases));
}

ParameterizedTest(cfg_case *t, scaler_cfg, validate) {
    vram_scaler_cfg c = {0};
    vram_scaler s, before;
    set_field(&c, t->field, t->value);
    cr_assert_eq(vram_scaler_validate(&c), t->want, "%s", t->what);
    memset(&s, 0x77, sizeof s);
    before = s;
    cr_assert_eq(vram_scaler_init(&s, &c), t->want, "%s", t->what);
    if (t->want != VRAM_OK) cr_assert_eq(memcmp(&s, &before, sizeof s), 0, "%s: touched", t->what);
}

Test(scaler_cfg, null_arguments) {
    vram_scaler_cfg c = {0};
    cr_assert_eq(vram_scaler_validate(NULL), VRAM_E_INVALID);
    cr_assert_eq(vram_scaler_init(NULL, &c), VRAM_E_INVALID);
    cr_assert_eq(vram_scaler_validate(&c), VRAM_OK);
}

/* ---- save and restore -------------------------------------------------------------------- */

/* A state with something in every field: mid-step, counters moved. */
static vram_scaler busy(void) {
    vram_scaler_cfg c = {0};
    c.hysteresis = 2;
    vram_scaler s = make_cfg(&c);
    vram_scaler_result r;
    int skip;
    for (int i = 0; i < 10; i++) cr_assert_eq(vram_scaler_advance(&s, 0.0f, &r), VRAM_OK);
    cr_assert_eq(vram_scaler_advance(&s, 1.0f, &r), VRAM_OK);
    cr_assert_eq(vram_scaler_unscale(&s, 1, 1.0f), VRAM_OK);
    cr_assert_eq(vram_scaler_step(&s, 2, 0.0f, &skip), VRAM_OK);
    return s;
}

Test(scaler_save, round_trip) {
    vram_scaler s = busy(), t;
    vram_scaler_saved sv;
    memset(&t, 0, sizeof t);
    cr_assert_eq(vram_scaler_save(&s, &sv), VRAM_OK);
    cr_assert_eq(sv.magic, VRAM_SCALER_SAVE_MAGIC);
    cr_assert_eq(sv.version, VRAM_SCALER_SAVE_VERSION);
    cr_assert_eq(vram_scaler_restore(&t, &sv), VRAM_OK);
    cr_assert_eq(memcmp(&s, &t, sizeof s), 0);
    /* the restored scaler carries on exactly like the original */
    vram_scaler_result a, b;
    cr_assert_eq(vram_scaler_update(&s, &a), VRAM_OK);
    cr_assert_eq(vram_scaler_update(&t, &b), VRAM_OK);
    cr_assert_eq(memcmp(&s, &t, sizeof s), 0);
    cr_assert_eq(memcmp(&a, &b, sizeof a), 0);
    cr_assert_eq(sizeof(vram_scaler_saved), 8 + sizeof(vram_scaler)); /* no padding to leak */
}

typedef struct restore_case {
    char what[48];
    int field;
    double value;
    int want;
} restore_case;

enum { R_MAGIC, R_VERSION, R_SCALE, R_TRACKER, R_HLEFT, R_STEPS, R_SKIPPED, R_STREAK, R_STAGE,
       R_FLAG, R_FLAG_READY, R_INTERVAL0, R_HYST0, R_GROWTH, R_INIT0, R_ATMAX, R_ATMIN, R_CONSEC,
       R_BACKOFF, R_MIN, R_MAX };

static void damage(vram_scaler_saved *sv, int field, double v) {
    vram_scaler *s = &sv->state;
    switch (field) {
    case R_MAGIC: sv->magic = (uint32_t)v; break;
    case R_VERSION: sv->version = (uint32_t)v; break;
    case R_SCALE: s->scale = (float)v; break;
    case R_TRACKER: s->growth_tracker = (uint32_t)v; break;
    case R_HLEFT: s->hysteresis_left = (uint32_t)v; break;
    case R_STEPS: s->steps = (uint64_t)v; break;
    case R_SKIPPED: s->skipped = (uint64_t)v; break;
    case R_STREAK: s->overflow_streak = (uint32_t)v; break;
    case R_STAGE: s->stage[4] = (uint8_t)v; break;
    case R_FLAG: s->found_inf[1] = (uint8_t)v; break; /* optimizer 1 is UNSCALED */
    case R_FLAG_READY: s->found_inf[9] = (uint8_t)v; break; /* optimizer 9 is READY */
    case R_INTERVAL0: s->cfg.growth_interval = (uint32_t)v; break;
    case R_HYST0: s->cfg.hysteresis = (uint32_t)v; break;
    case R_GROWTH: s->cfg.growth_factor = v; break;
    case R_INIT0: s->cfg.init_scale = (float)v; break;
    case R_ATMIN: s->cfg.at_min = (int32_t)v; break;
    case R_CONSEC: s->cfg.consecutive_hysteresis = (int32_t)v; break;
    case R_BACKOFF: s->cfg.backoff_factor = v; break;
    case R_MIN: s->cfg.min_scale = (float)v; break;
    case R_MAX: s->cfg.max_scale = (float)v; break;
    default: s->cfg.at_max = (int32_t)v; break;
    }
}

ParameterizedTestParameters(scaler_save, restore_rejects) {
    static restore_case cases[] = {
        {"magic", R_MAGIC, 0x12345678, VRAM_E_INVALID},
        {"version", R_VERSION, 2, VRAM_E_VERSION},
        {"scale NaN", R_SCALE, NAN, VRAM_E_INVALID},
        {"scale inf", R_SCALE, INFINITY, VRAM_E_INVALID},
        {"scale 0", R_SCALE, 0.0, VRAM_E_INVALID},
        {"scale negative", R_SCALE, -2.0, VRAM_E_INVALID},
        {"scale below min", R_SCALE, 0.5, VRAM_E_RANGE},
        {"scale above max", R_SCALE, 33554432.0, VRAM_E_RANGE},
        {"tracker beyond bound", R_TRACKER, VRAM_SCALER_MAX_INTERVAL + 1.0, VRAM_E_RANGE},
        {"hysteresis_left >= hysteresis", R_HLEFT, 2, VRAM_E_RANGE},
        {"skipped > steps", R_SKIPPED, 1000, VRAM_E_RANGE},
        {"steps < skipped", R_STEPS, 0, VRAM_E_RANGE},
        {"streak > skipped", R_STREAK, 2, VRAM_E_RANGE},
        {"stage unknown", R_STAGE, 3, VRAM_E_INVALID},
        {"flag not 0/1", R_FLAG, 2, VRAM_E_INVALID},
        {"flag on READY", R_FLAG_READY, 1, VRAM_E_RANGE},
        {"interval 0 (saved configs are resolved)", R_INTERVAL0, 0, VRAM_E_RANGE},
        {"hysteresis 0", R_HYST0, 0, VRAM_E_RANGE},
        {"growth NaN", R_GROWTH, NAN, VRAM_E_INVALID},
        {"init 0", R_INIT0, 0.0, VRAM_E_INVALID},
        {"at_max unknown", R_ATMAX, 9, VRAM_E_INVALID},
        {"at_min unknown", R_ATMIN, 5, VRAM_E_INVALID},
        {"consecutive not 0/1", R_CONSEC, 2, VRAM_E_INVALID},
        {"backoff >= 1", R_BACKOFF, 1.0, VRAM_E_RANGE},
        {"min above scale", R_MIN, 131072.0, VRAM_E_RANGE},
        {"min below hard min", R_MIN, 0x1p-130, VRAM_E_RANGE},
        {"max below scale", R_MAX, 1024.0, VRAM_E_RANGE},
        {"max inf", R_MAX, INFINITY, VRAM_E_INVALID},
        {"tracker above interval is fine", R_TRACKER, 5000, VRAM_OK},
        {"streak == skipped is fine", R_STREAK, 1, VRAM_OK},
    };
    return cr_make_param_array(restore_case, cases, N(cases));
}

ParameterizedTest(restore_case *t, scaler_save, restore_rejects) {
    vram_scaler s = busy(), t0;
    vram_scaler_saved sv;
    cr_assert_eq(vram_scaler_save(&s, &sv), VRAM_OK);
    damage(&sv, t->field, t->value);
    memset(&t0, 0x33, sizeof t0);
    vram_scaler before = t0;
    cr_assert_eq(vram_scaler_restore(&t0, &sv), t->want, "%s", t->what);
    if (t->want != VRAM_OK) {
        cr_assert_eq(memcmp(&t0, &before, sizeof t0), 0, "%s: touched", t->what);
        /* the same damage in a live state: every call refuses it, nothing changes */
        vram_scaler live = sv.state;
        vram_scaler_result r;
        int skip = -7;
        if (t->field != R_MAGIC && t->field != R_VERSION) {
            vram_scaler_saved out;
            cr_assert_neq(vram_scaler_unscale(&live, 0, 0.0f), VRAM_OK, "%s", t->what);
            cr_assert_neq(vram_scaler_step(&live, 0, 0.0f, &skip), VRAM_OK, "%s", t->what);
            cr_assert_neq(vram_scaler_update(&live, &r), VRAM_OK, "%s", t->what);
            cr_assert_neq(vram_scaler_advance(&live, 0.0f, &r), VRAM_OK, "%s", t->what);
            cr_assert_neq(vram_scaler_save(&live, &out), VRAM_OK, "%s", t->what);
            cr_assert_eq(memcmp(&live, &sv.state, sizeof live), 0, "%s", t->what);
            cr_assert_eq(skip, -7);
        }
    }
}

Test(scaler_save, null_arguments) {
    vram_scaler s = busy();
    vram_scaler_saved sv;
    int stage;
    int skip;
    vram_scaler_result r;
    cr_assert_eq(vram_scaler_save(NULL, &sv), VRAM_E_INVALID);
    cr_assert_eq(vram_scaler_save(&s, NULL), VRAM_E_INVALID);
    cr_assert_eq(vram_scaler_save(&s, &sv), VRAM_OK);
    cr_assert_eq(vram_scaler_restore(NULL, &sv), VRAM_E_INVALID);
    cr_assert_eq(vram_scaler_restore(&s, NULL), VRAM_E_INVALID);
    cr_assert_eq(vram_scaler_get_stage(NULL, 0, &stage), VRAM_E_INVALID);
    cr_assert_eq(vram_scaler_get_stage(&s, 0, NULL), VRAM_E_INVALID);
    cr_assert_eq(vram_scaler_unscale(NULL, 0, 0.0f), VRAM_E_INVALID);
    cr_assert_eq(vram_scaler_step(NULL, 0, 0.0f, &skip), VRAM_E_INVALID);
    cr_assert_eq(vram_scaler_step(&s, 0, 0.0f, NULL), VRAM_E_INVALID);
    cr_assert_eq(vram_scaler_update(NULL, &r), VRAM_E_INVALID);
    cr_assert_eq(vram_scaler_advance(NULL, 0.0f, &r), VRAM_E_INVALID);
    cr_assert_str_eq(vram_status_name(VRAM_E_MIN_SCALE), "VRAM_E_MIN_SCALE");
}

/* ---- the GPU's end of step (vram_scaler_end_step), replayed on the host ------------------ */

/* What kernels/scaler_kernel.cu does with the state and flags it finds in device memory, line
 * for line: one call of the core, the state written back, the flags consumed. (Before the
 * core had vram_scaler_end_step, the kernel ran step/update on a copy and wrote the copy back
 * whatever the status; this test failed against that with VRAM_E_STATE after the refusal.) */
static vram_status device_update(vram_scaler *state, float *flags, unsigned n, int mode, vram_scaler_report *rep) {
    vram_scaler s = *state;
    vram_status st = vram_scaler_end_step(&s, flags, n, mode, rep);
    *state = s;
    for (unsigned k = 0; k < n; k++) flags[k] = 0.0f;
    return st;
}

/* DeepSpeed's error at the minimum scale, on the GPU: the refused update must leave the state
 * as it was, so the next clean steps go on and the scale grows again (the kernel used to keep
 * the half-moved copy, whose optimizers stayed STEPPED: every later update failed with
 * VRAM_E_STATE and the scale never moved again). */
Test(scaler_device, deepspeed_min_scale_does_not_wedge_later_updates) {
    for (int mode = VRAM_SCALER_FLAGS_STEP; mode <= VRAM_SCALER_FLAGS_ADVANCE; mode++) {
        const unsigned n = mode == VRAM_SCALER_FLAGS_STEP ? 2u : 1u;
        vram_scaler_cfg c;
        cr_assert_eq(vram_scaler_preset(VRAM_SCALER_PRESET_DEEPSPEED, &c), VRAM_OK);
        c.init_scale = 2.0f;
        c.growth_interval = 3;
        vram_scaler state = make_cfg(&c);
        vram_scaler_report rep;
        float flags[2];
        vram_status st = VRAM_OK;
        int k;
        /* overflows: absorbed (hysteresis 2), backed off to 1, then refused at the minimum */
        for (k = 0; k < 10 && st == VRAM_OK; k++) {
            vram_scaler before = state;
            flags[0] = 0.0f;
            flags[1] = 1.0f;
            if (n == 1) flags[0] = 1.0f;
            st = device_update(&state, flags, n, mode, &rep);
            if (st == VRAM_E_MIN_SCALE) {
                cr_assert_eq(memcmp(&before, &state, sizeof state), 0, "mode %d: the refused update moved the state",
                             mode);
                cr_assert(rep.result.skipped && rep.result.why == VRAM_SCALER_SKIP_AT_MIN);
                cr_assert_eq(rep.found_inf, 1.0f);
                cr_assert_eq(rep.skip_mask, n == 2 ? 2u : 1u);
            }
            cr_assert(flags[0] == 0.0f && flags[n - 1] == 0.0f, "the flags are consumed");
        }
        cr_assert_eq(st, VRAM_E_MIN_SCALE, "mode %d: the sequence reaches DeepSpeed's error", mode);
        cr_assert_eq(k, 3);
        cr_assert_eq(state.scale, 1.0f);
        /* clean steps go on from the state before the refused one, and the scale grows */
        for (k = 0; k < 3; k++) {
            flags[0] = flags[1] = 0.0f;
            st = device_update(&state, flags, n, mode, &rep);
            cr_assert_eq(st, VRAM_OK, "mode %d: clean update %d after the refused one: %s", mode, k,
                         vram_status_name(st));
            cr_assert(!rep.result.skipped && rep.skip_mask == 0u && rep.found_inf == 0.0f);
        }
        cr_assert(rep.result.grew, "mode %d: the scale grows again", mode);
        cr_assert_eq(state.scale, 2.0f);
        cr_assert_eq(state.stage[0], VRAM_SCALER_READY);
        cr_assert_eq(state.stage[1], VRAM_SCALER_READY);
    }
}

Test(scaler_device, refuses_bad_arguments_and_touches_nothing) {
    vram_scaler s = make(VRAM_SCALER_PRESET_VRAMKIT), before = s;
    vram_scaler_report rep, rep0;
    float flags[VRAM_SCALER_MAX_OPTIMIZERS + 1] = {0};
    memset(&rep, 0x5a, sizeof rep);
    rep0 = rep;
    cr_assert_eq(vram_scaler_end_step(NULL, flags, 1, VRAM_SCALER_FLAGS_STEP, &rep), VRAM_E_INVALID);
    cr_assert_eq(vram_scaler_end_step(&s, NULL, 1, VRAM_SCALER_FLAGS_STEP, &rep), VRAM_E_INVALID);
    cr_assert_eq(vram_scaler_end_step(&s, flags, 1, VRAM_SCALER_FLAGS_STEP, NULL), VRAM_E_INVALID);
    cr_assert_eq(vram_scaler_end_step(&s, flags, 0, VRAM_SCALER_FLAGS_STEP, &rep), VRAM_E_INVALID);
    cr_assert_eq(vram_scaler_end_step(&s, flags, VRAM_SCALER_MAX_OPTIMIZERS + 1, VRAM_SCALER_FLAGS_STEP, &rep),
                 VRAM_E_INVALID);
    cr_assert_eq(vram_scaler_end_step(&s, flags, 1, 2, &rep), VRAM_E_INVALID);
    cr_assert_eq(vram_scaler_end_step(&s, flags, 1, -1, &rep), VRAM_E_INVALID);
    cr_assert_eq(vram_scaler_end_step(&s, flags, 2, VRAM_SCALER_FLAGS_ADVANCE, &rep), VRAM_E_INVALID);
    cr_assert_eq(memcmp(&s, &before, sizeof s), 0);
    cr_assert_eq(memcmp(&rep, &rep0, sizeof rep), 0);
    /* the largest n is fine */
    cr_assert_eq(vram_scaler_end_step(&s, flags, VRAM_SCALER_MAX_OPTIMIZERS, VRAM_SCALER_FLAGS_STEP, &rep), VRAM_OK);
    cr_assert_eq(s.steps, 1);
}

/* Every error leaves the state exactly as it was; the report still says what the flags said. */
Test(scaler_device, errors_leave_the_state_untouched) {
    vram_scaler_report rep;
    float flags[3] = {0.0f, NAN, -0.0f};
    /* optimizer 1 already stepped: optimizer 0's step succeeds on the copy, 1's fails */
    vram_scaler s = make(VRAM_SCALER_PRESET_VRAMKIT);
    int skip = 0;
    cr_assert_eq(vram_scaler_step(&s, 1, 0.0f, &skip), VRAM_OK);
    vram_scaler before = s;
    cr_assert_eq(vram_scaler_end_step(&s, flags, 3, VRAM_SCALER_FLAGS_STEP, &rep), VRAM_E_STATE);
    cr_assert_eq(memcmp(&s, &before, sizeof s), 0);
    cr_assert_eq(rep.found_inf, 1.0f, "NaN counts as an overflow");
    cr_assert_eq(rep.skip_mask, 2u, "-0.0 does not");
    cr_assert(!rep.result.skipped && rep.result.scale_before == 0.0f, "no update ran: the result is zero");
    /* the bare state machine while a protocol step is under way */
    cr_assert_eq(vram_scaler_end_step(&s, flags, 1, VRAM_SCALER_FLAGS_ADVANCE, &rep), VRAM_E_STATE);
    cr_assert_eq(memcmp(&s, &before, sizeof s), 0);
    cr_assert_eq(rep.found_inf, 0.0f);
    cr_assert_eq(rep.skip_mask, 0u);
    /* a damaged state */
    s = make(VRAM_SCALER_PRESET_VRAMKIT);
    s.hysteresis_left = 5;
    before = s;
    cr_assert_eq(vram_scaler_end_step(&s, flags, 2, VRAM_SCALER_FLAGS_STEP, &rep), VRAM_E_RANGE);
    cr_assert_eq(memcmp(&s, &before, sizeof s), 0);
    s.scale = NAN;
    before = s;
    cr_assert_eq(vram_scaler_end_step(&s, flags, 1, VRAM_SCALER_FLAGS_ADVANCE, &rep), VRAM_E_INVALID);
    cr_assert_eq(memcmp(&s, &before, sizeof s), 0);
}

/* A check recorded on the state (vram_scaler_unscale on the host) is not dropped by a clean
 * flag: that optimizer skips. */
Test(scaler_device, recorded_check_sets_the_skip_bit) {
    vram_scaler s = make(VRAM_SCALER_PRESET_VRAMKIT);
    vram_scaler_report rep;
    float flags[2] = {0.0f, 0.0f};
    cr_assert_eq(vram_scaler_unscale(&s, 0, 1.0f), VRAM_OK);
    cr_assert_eq(vram_scaler_end_step(&s, flags, 2, VRAM_SCALER_FLAGS_STEP, &rep), VRAM_OK);
    cr_assert_eq(rep.skip_mask, 1u);
    cr_assert_eq(rep.found_inf, 0.0f, "found_inf reports the flags passed in");
    cr_assert(rep.result.skipped && rep.result.backed_off);
    cr_assert_eq(s.scale, 32768.0f);
}

/* STEP is vram_scaler_step for each optimizer then vram_scaler_update, ADVANCE is
 * vram_scaler_advance: same status, state and result on long random sequences of every preset
 * (both rails and DeepSpeed's error included). */
Test(scaler_device, same_as_the_protocol_and_the_state_machine) {
    uint64_t x = 0x9e3779b97f4a7c15ull;
    const float pick[6] = {0.0f, 0.0f, 0.0f, 1.0f, NAN, INFINITY};
    for (int preset = VRAM_SCALER_PRESET_VRAMKIT; preset <= VRAM_SCALER_PRESET_MEGATRON; preset++) {
        for (int mode = VRAM_SCALER_FLAGS_STEP; mode <= VRAM_SCALER_FLAGS_ADVANCE; mode++) {
            vram_scaler_cfg c;
            cr_assert_eq(vram_scaler_preset(preset, &c), VRAM_OK);
            c.init_scale = 8.0f;
            c.growth_interval = 4;
            vram_scaler a = make_cfg(&c), b = a;
            unsigned errors = 0, skipped = 0;
            for (int step = 0; step < 4000; step++) {
                unsigned n = mode == VRAM_SCALER_FLAGS_ADVANCE ? 1u : 1u + (unsigned)(step % 3);
                float flags[3];
                int mostly_clean = (step / 200) % 2;
                for (unsigned k = 0; k < n; k++) {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    flags[k] = pick[mostly_clean ? (x % 12 < 11 ? 0 : 3) : x % 6];
                }
                vram_scaler_report rep;
                vram_scaler_result r;
                uint32_t mask = 0;
                memset(&r, 0, sizeof r);
                vram_status want = VRAM_OK;
                vram_scaler copy = b;
                if (mode == VRAM_SCALER_FLAGS_ADVANCE) {
                    want = vram_scaler_advance(&copy, flags[0], &r);
                    mask = flags[0] != 0.0f;
                } else {
                    for (unsigned k = 0; k < n && want == VRAM_OK; k++) {
                        int skip = 0;
                        want = vram_scaler_step(&copy, k, flags[k], &skip);
                        if (skip) mask |= 1u << k;
                    }
                    if (want == VRAM_OK) want = vram_scaler_update(&copy, &r);
                }
                if (want == VRAM_OK) b = copy; /* all or nothing, as the contract says */
                vram_status got = vram_scaler_end_step(&a, flags, n, mode, &rep);
                cr_assert_eq(got, want, "preset %d mode %d step %d", preset, mode, step);
                cr_assert_eq(memcmp(&a, &b, sizeof a), 0, "preset %d mode %d step %d: state", preset, mode, step);
                cr_assert_eq(memcmp(&rep.result, &r, sizeof r), 0, "preset %d mode %d step %d: result", preset, mode,
                             step);
                cr_assert_eq(rep.skip_mask, mask, "preset %d mode %d step %d", preset, mode, step);
                cr_assert_eq(rep.found_inf, mask != 0u ? 1.0f : 0.0f);
                errors += got != VRAM_OK;
                skipped += rep.result.skipped;
            }
            cr_assert(skipped > 0 && a.steps > 0, "preset %d mode %d: both paths ran", preset, mode);
            if (c.at_min == VRAM_SCALER_AT_MIN_ERROR)
                cr_assert(errors > 0, "preset %d mode %d: the error at the minimum was reached", preset, mode);
        }
    }
}
