/* vramkit/scaler.h — dynamic loss scaling for fp16 training, the same code on host and GPU.
 * A pure state machine (scale, growth and hysteresis counters) that reproduces PyTorch, Apex,
 * DeepSpeed and Megatron by configuration; the unscale/step/update protocol; save/restore. */
#ifndef VRAMKIT_SCALER_H
#define VRAMKIT_SCALER_H

#include "base.h"

/* ---- limits and defaults ------------------------------------------------------------ */

/* Optimizers one scaler serves; fixed so the state needs no allocation (also on a GPU). */
#define VRAM_SCALER_MAX_OPTIMIZERS 16
/* Bounds on the integer settings. They keep every counter far from wrapping, and no
 * real run needs more: 2^30 clean steps between growths, 65536 overflows of hysteresis. */
#define VRAM_SCALER_MAX_INTERVAL 1073741824u
#define VRAM_SCALER_MAX_HYSTERESIS 65536u

/* The hard rails no configuration can cross. HARD_MIN is the smallest fp32 scale whose
 * reciprocal (fp64, rounded to fp32) is finite: 2^-128 itself gives inf, and an infinite
 * inv_scale turns zero gradients into NaN. HARD_MAX is FLT_MAX: the scale is stored as fp32.
 * Presets that have no rail of their own use these, so they part from the reference only
 * where the reference would produce a broken scale (0, inf, or a non-finite reciprocal). */
#define VRAM_SCALER_HARD_MIN 0x1.000008p-128f
#define VRAM_SCALER_HARD_MAX 0x1.fffffep127f

/* Defaults (a 0 field). Factors, interval and initial scale are PyTorch GradScaler's. The
 * rails are vramkit's own (PyTorch has none, which is how scales collapsed to 0 and ran to
 * inf). MIN 1, as DeepSpeed and Megatron: at scale 1 gradients are not scaled at all, so an
 * overflow there is the model's (a NaN, an exploding layer), not the scaler's; shrinking
 * further only pushes small gradients into fp16 underflow and hides the fault, and the
 * overflow streak and SKIP_AT_MIN make it visible instead. MAX 2^24, as Apex: fp16 tops out at
 * 65504 < 2^16, so at 2^24 every gradient above 2^-8 already overflows, while every one down
 * to 2^-48 is lifted above fp16's smallest subnormal 2^-24; beyond that a larger scale loses
 * more at the top than it saves at the bottom. Both are powers of two, so a power-of-two scale
 * stays exact. */
#define VRAM_SCALER_DEFAULT_INIT 65536.0f
#define VRAM_SCALER_DEFAULT_GROWTH 2.0
#define VRAM_SCALER_DEFAULT_BACKOFF 0.5
#define VRAM_SCALER_DEFAULT_INTERVAL 2000u
#define VRAM_SCALER_DEFAULT_HYSTERESIS 1u
#define VRAM_SCALER_DEFAULT_MIN 1.0f
#define VRAM_SCALER_DEFAULT_MAX 16777216.0f

/* Saved-state header: "VKSL" and the layout version of vram_scaler_saved. */
#define VRAM_SCALER_SAVE_MAGIC 0x4C534B56u
#define VRAM_SCALER_SAVE_VERSION 1u

/* ---- types -------------------------------------------------------------------------- */

/* Configurations that reproduce an established implementation (see vram_scaler_preset). */
typedef enum vram_scaler_preset_id {
    VRAM_SCALER_PRESET_VRAMKIT = 0,   /* the defaults: PyTorch's rule inside safe rails */
    VRAM_SCALER_PRESET_PYTORCH = 1,   /* torch.amp.GradScaler */
    VRAM_SCALER_PRESET_APEX = 2,      /* apex.amp LossScaler */
    VRAM_SCALER_PRESET_DEEPSPEED = 3, /* DynamicLossScaler, hysteresis 2 */
    VRAM_SCALER_PRESET_DEEPSPEED_CONSECUTIVE = 4, /* the same, consecutive_hysteresis=True */
    VRAM_SCALER_PRESET_MEGATRON = 5   /* DynamicGradScaler */
} vram_scaler_preset_id;

/* What an overflow does when the scale is already at its minimum. Either way the step is
 * skipped and the scale stays; ERROR is DeepSpeed's "raise". */
typedef enum vram_scaler_at_min {
    VRAM_SCALER_AT_MIN_SKIP = 0, /* report VRAM_SCALER_SKIP_AT_MIN and carry on */
    VRAM_SCALER_AT_MIN_ERROR = 1 /* VRAM_E_MIN_SCALE, the state left untouched */
} vram_scaler_at_min;

/* What a growth does when the grown scale would pass the maximum. */
typedef enum vram_scaler_at_max {
    VRAM_SCALER_AT_MAX_CLAMP = 0, /* the scale becomes the maximum (Apex's min(max, s*2)) */
    VRAM_SCALER_AT_MAX_HOLD = 1   /* the scale stays (PyTorch refuses a non-finite growth) */
} vram_scaler_at_max;

/* Configuration. Zero-initialise it; 0 in a field means the documented default.
 * Scales are fp32 like the scale tensor of PyTorch; factors fp64 like PyTorch's, and a
 * product is computed in fp64 and rounded once to fp32. */
typedef struct vram_scaler_cfg {
    double growth_factor;           /* > 1 grows the scale; 1 never grows (default 2) */
    double backoff_factor;          /* in (0, 1) (default 0.5) */
    float init_scale;               /* in [min_scale, max_scale] (default 2^16) */
    float min_scale;                /* >= VRAM_SCALER_HARD_MIN (default 1) */
    float max_scale;                /* <= VRAM_SCALER_HARD_MAX (default 2^24) */
    uint32_t growth_interval;       /* clean steps per growth, <= MAX_INTERVAL (default 2000) */
    uint32_t hysteresis;            /* overflows that back off, <= MAX_HYSTERESIS (default 1:
                                       every overflow backs off) */
    int32_t consecutive_hysteresis; /* 1: refill hysteresis on every clean step (DeepSpeed's
                                       consecutive_hysteresis); 0: only when the scale grows */
    int32_t at_min;                 /* a vram_scaler_at_min (default SKIP) */
    int32_t at_max;                 /* a vram_scaler_at_max (default CLAMP) */
} vram_scaler_cfg;

/* Where one optimizer is in the step: READY -> UNSCALED -> STEPPED -> (update) READY. */
typedef enum vram_scaler_stage {
    VRAM_SCALER_READY = 0,
    VRAM_SCALER_UNSCALED = 1, /* its gradients are unscaled and checked */
    VRAM_SCALER_STEPPED = 2   /* its step was taken or skipped */
} vram_scaler_stage;

/* The state. Plain data with no pointers: copy it to a GPU, save it, compare it. Read the
 * fields freely; change them only through the functions below (every call validates it). */
typedef struct vram_scaler {
    vram_scaler_cfg cfg;      /* resolved and valid */
    uint64_t steps;           /* updates done (saturates) */
    uint64_t skipped;         /* of them, updates that overflowed, so skipped (<= steps) */
    float scale;              /* the loss scale, min_scale <= scale <= max_scale */
    uint32_t growth_tracker;  /* clean updates since the last growth or overflow */
    uint32_t hysteresis_left; /* overflows still absorbed before a backoff, < cfg.hysteresis;
                                 DeepSpeed's cur_hysteresis - 1, Megatron's tracker - 1 */
    uint32_t overflow_streak; /* overflowed updates in a row (<= skipped): a NaN in the model
                                 shows up as a streak that never ends */
    uint8_t stage[VRAM_SCALER_MAX_OPTIMIZERS];     /* a vram_scaler_stage per optimizer */
    uint8_t found_inf[VRAM_SCALER_MAX_OPTIMIZERS]; /* 1: its check found inf/NaN */
} vram_scaler;

/* Why a step was skipped. */
typedef enum vram_scaler_skip {
    VRAM_SCALER_SKIP_NONE = 0,     /* not skipped */
    VRAM_SCALER_SKIP_OVERFLOW = 1, /* inf/NaN gradients; the scale backed off or hysteresis held it */
    VRAM_SCALER_SKIP_AT_MIN = 2    /* inf/NaN gradients with the scale at its minimum */
} vram_scaler_skip;

/* What one update did. */
typedef struct vram_scaler_result {
    float scale_before;
    float scale_after;
    vram_scaler_skip why; /* VRAM_SCALER_SKIP_NONE when the step was applied */
    int skipped;          /* 1 iff an overflow was reported: the step must not be applied */
    int grew;             /* scale_after > scale_before */
    int backed_off;       /* scale_after < scale_before */
    int absorbed;         /* an overflow that hysteresis kept from backing off */
    int railed;           /* the rule's scale passed min or max and the rail decided */
} vram_scaler_result;

/* What save writes and restore reads: the whole state behind a magic and a version. */
typedef struct vram_scaler_saved {
    uint32_t magic;   /* VRAM_SCALER_SAVE_MAGIC */
    uint32_t version; /* VRAM_SCALER_SAVE_VERSION */
    vram_scaler state;
} vram_scaler_saved;

/* How vram_scaler_end_step reads its flags. */
typedef enum vram_scaler_flags_mode {
    VRAM_SCALER_FLAGS_STEP = 0,   /* optimizer k steps with flag k (vram_scaler_step), then
                                     vram_scaler_update: the protocol, in one call */
    VRAM_SCALER_FLAGS_ADVANCE = 1 /* the bare state machine (vram_scaler_advance) with the
                                     flags combined into one */
} vram_scaler_flags_mode;

/* What vram_scaler_end_step reports besides its status. */
typedef struct vram_scaler_report {
    vram_scaler_result result; /* the update's result: the refused step for VRAM_E_MIN_SCALE;
                                  all zero when the call failed before the update */
    uint32_t skip_mask;        /* bit k: optimizer k must not apply its step (flag k nonzero,
                                  NaN included, or a check recorded on the state found one) */
    float found_inf;           /* 1.0f when any flag is nonzero (NaN included), else 0.0f */
} vram_scaler_report;

/* Private: vram_scaler_end_step's status with its report, returned by value (see
 * vram__scaler_end). */
typedef struct vram__scaler_end_outcome {
    vram_scaler_report rep;
    vram_status st;
} vram__scaler_end_outcome;

/* Private: an update's status with its result, returned by value (see vram__scaler_next). */
typedef struct vram__scaler_outcome {
    vram_scaler_result r;
    vram_status st;
} vram__scaler_outcome;

#ifdef __FRAMAC__
/* ACSL shorthands, read by Frama-C only. Macros rather than ACSL predicates: z3 proves the
 * expanded goals quickly and chokes on unfolding predicates (and on conjunctions of
 * quantified facts, so those are written one per clause). SOUND: the integer facts every
 * call keeps; the floats are checked at run time. */
/* vram__bit(k) = 2^k for 0 <= k <= 16, as a table: z3 bounds neither 1 << k nor a power. */
/*@ logic integer vram__bit(integer k) =
      k == 0 ? 1 : k == 1 ? 2 : k == 2 ? 4 : k == 3 ? 8 : k == 4 ? 16 : k == 5 ? 32 : k == 6 ? 64 :
      k == 7 ? 128 : k == 8 ? 256 : k == 9 ? 512 : k == 10 ? 1024 : k == 11 ? 2048 :
      k == 12 ? 4096 : k == 13 ? 8192 : k == 14 ? 16384 : k == 15 ? 32768 : k == 16 ? 65536 : 0; */
#define VRAM__SCALER_SOUND(s)                                                                  \
    (1 <= (s)->cfg.growth_interval <= VRAM_SCALER_MAX_INTERVAL &&                              \
     1 <= (s)->cfg.hysteresis <= VRAM_SCALER_MAX_HYSTERESIS &&                                 \
     (s)->hysteresis_left < (s)->cfg.hysteresis &&                                            \
     (s)->growth_tracker <= VRAM_SCALER_MAX_INTERVAL && (s)->skipped <= (s)->steps &&          \
     (s)->overflow_streak <= (s)->skipped)
#endif

/* ---- internals, declared here and defined at the end ------------------------------- */

VRAM_HD VRAM_DEF float vram__scaler_recip(float scale);
VRAM_HD VRAM_DEF float vram__scaler_or_f32(float v, float d);
VRAM_HD VRAM_DEF double vram__scaler_or_f64(double v, double d);
VRAM_HD VRAM_DEF uint32_t vram__scaler_or_u32(uint32_t v, uint32_t d);
VRAM_HD VRAM_DEF vram_scaler_cfg vram__scaler_cfg_make(float init, double growth, double backoff,
                                                       uint32_t interval, uint32_t hysteresis,
                                                       float min, float max, int32_t consecutive,
                                                       int32_t at_min, int32_t at_max);
VRAM_HD VRAM_DEF vram_status vram__scaler_cfg_check(const vram_scaler_cfg *c);
VRAM_HD VRAM_DEF vram_status vram__scaler_check(const vram_scaler *s);
VRAM_HD VRAM_DEF void vram__scaler_reset_stages(vram_scaler *s);
VRAM_HD VRAM_DEF int vram__scaler_gather(const vram_scaler *s, int *overflow);
VRAM_HD VRAM_DEF vram__scaler_outcome vram__scaler_apply(vram_scaler *s, int overflow);
VRAM_HD VRAM_DEF vram_scaler_result vram__scaler_result_zero(void);
VRAM_HD VRAM_DEF vram_status vram__scaler_end_copy(vram_scaler *t, const float *found_inf, unsigned n, int mode,
                                                   vram_scaler_result *out, uint8_t *skip);
VRAM_HD VRAM_DEF void vram__scaler_flags(const float *found_inf, unsigned n, const uint8_t *skip, uint32_t *mask,
                                         float *any);
VRAM_HD VRAM_DEF vram__scaler_end_outcome vram__scaler_end(vram_scaler *s, const float *found_inf, unsigned n,
                                                         int mode);

/* ---- configuration ------------------------------------------------------------------ */

/* The configuration of an established implementation, resolved (no 0 fields) so what it
 * reproduces is visible, and open to the settings the reference lets a user change. Each
 * keeps its reference's factors, interval, hysteresis and rails; where the reference has
 * none, the hard rail stands in (see HARD_MIN/MAX), so a preset parts from its reference
 * only where the reference would produce a broken scale. Factors multiply in fp64 rounded
 * to fp32; with the presets' powers of two that is exact, as in the references.
 *   PYTORCH    2^16, x2 / x0.5, interval 2000, no hysteresis. min HARD_MIN (PyTorch backs
 *              off to 0), max HARD_MAX with HOLD (it grows only to a finite fp32).
 *   APEX       as PyTorch with max 2^24 and CLAMP (min(max, s*2)); min HARD_MIN, or set
 *              min_scale to Apex's min_loss_scale for its max(min, s/2).
 *   DEEPSPEED  2^32 (the class default; set init_scale from a config's initial_scale_power),
 *              x2 / x0.5, window 1000, hysteresis 2 (the class default delayed_shift is 1),
 *              min 1 with ERROR (raise_error_at_min_scale), max HARD_MAX with HOLD (its own
 *              scale would leave fp32's range). _CONSECUTIVE: consecutive_hysteresis.
 *   MEGATRON   2^32, x2 / x0.5, interval 1000, hysteresis 2, min 1 with SKIP, max HARD_MAX
 *              with HOLD.
 *   VRAMKIT    the defaults.
 * On VRAM_OK *out is a valid configuration. */
/*@ requires out == \null || \valid(out);
    assigns *out;
    ensures \result == VRAM_OK || \result == VRAM_E_INVALID;
    ensures \result == VRAM_OK ==> 1 <= out->growth_interval && 1 <= out->hysteresis;
    behavior null:
      assumes out == \null;
      assigns \nothing;
      ensures \result == VRAM_E_INVALID;
    behavior known:
      assumes out != \null && VRAM_SCALER_PRESET_VRAMKIT <= preset <= VRAM_SCALER_PRESET_MEGATRON;
      ensures \result == VRAM_OK;
    behavior unknown:
      assumes out != \null && !(VRAM_SCALER_PRESET_VRAMKIT <= preset <= VRAM_SCALER_PRESET_MEGATRON);
      assigns \nothing;
      ensures \result == VRAM_E_INVALID;
    complete behaviors; disjoint behaviors; */
VRAM_HD VRAM_DEF VRAM_NODISCARD vram_status vram_scaler_preset(int preset, vram_scaler_cfg *out) {
    const float two16 = 65536.0f, two24 = 16777216.0f, two32 = 4294967296.0f;
    if (out == NULL) return VRAM_E_INVALID;
    switch (preset) {
    case VRAM_SCALER_PRESET_VRAMKIT:
        *out = vram__scaler_cfg_make(VRAM_SCALER_DEFAULT_INIT, VRAM_SCALER_DEFAULT_GROWTH,
                                     VRAM_SCALER_DEFAULT_BACKOFF, VRAM_SCALER_DEFAULT_INTERVAL,
                                     VRAM_SCALER_DEFAULT_HYSTERESIS, VRAM_SCALER_DEFAULT_MIN,
                                     VRAM_SCALER_DEFAULT_MAX, 0, VRAM_SCALER_AT_MIN_SKIP,
                                     VRAM_SCALER_AT_MAX_CLAMP);
        return VRAM_OK;
    case VRAM_SCALER_PRESET_PYTORCH:
        *out = vram__scaler_cfg_make(two16, 2.0, 0.5, 2000u, 1u, VRAM_SCALER_HARD_MIN,
                                     VRAM_SCALER_HARD_MAX, 0, VRAM_SCALER_AT_MIN_SKIP,
                                     VRAM_SCALER_AT_MAX_HOLD);
        return VRAM_OK;
    case VRAM_SCALER_PRESET_APEX:
        *out = vram__scaler_cfg_make(two16, 2.0, 0.5, 2000u, 1u, VRAM_SCALER_HARD_MIN, two24, 0,
                                     VRAM_SCALER_AT_MIN_SKIP, VRAM_SCALER_AT_MAX_CLAMP);
        return VRAM_OK;
    case VRAM_SCALER_PRESET_DEEPSPEED:
    case VRAM_SCALER_PRESET_DEEPSPEED_CONSECUTIVE:
        *out = vram__scaler_cfg_make(two32, 2.0, 0.5, 1000u, 2u, 1.0f, VRAM_SCALER_HARD_MAX,
                                     preset == VRAM_SCALER_PRESET_DEEPSPEED_CONSECUTIVE,
                                     VRAM_SCALER_AT_MIN_ERROR, VRAM_SCALER_AT_MAX_HOLD);
        return VRAM_OK;
    case VRAM_SCALER_PRESET_MEGATRON:
        *out = vram__scaler_cfg_make(two32, 2.0, 0.5, 1000u, 2u, 1.0f, VRAM_SCALER_HARD_MAX, 0,
                                     VRAM_SCALER_AT_MIN_SKIP, VRAM_SCALER_AT_MAX_HOLD);
        return VRAM_OK;
    default:
        return VRAM_E_INVALID;
    }
}

/* Resolve a configuration: each 0 field takes its default (NULL: all defaults), so no 0
 * is left in a field that has one; other values are copied as they are
 * (vram_scaler_validate judges them). */
/*@ requires cfg == \null || \valid_read(cfg);
    assigns \nothing;
    ensures \result.growth_interval != 0 && \result.hysteresis != 0; */
VRAM_HD VRAM_DEF vram_scaler_cfg vram_scaler_defaults(const vram_scaler_cfg *cfg) {
    vram_scaler_cfg r =
        cfg != NULL ? *cfg : vram__scaler_cfg_make(0.0f, 0.0, 0.0, 0u, 0u, 0.0f, 0.0f, 0, 0, 0);
    r.growth_factor = vram__scaler_or_f64(r.growth_factor, VRAM_SCALER_DEFAULT_GROWTH);
    r.backoff_factor = vram__scaler_or_f64(r.backoff_factor, VRAM_SCALER_DEFAULT_BACKOFF);
    r.init_scale = vram__scaler_or_f32(r.init_scale, VRAM_SCALER_DEFAULT_INIT);
    r.min_scale = vram__scaler_or_f32(r.min_scale, VRAM_SCALER_DEFAULT_MIN);
    r.max_scale = vram__scaler_or_f32(r.max_scale, VRAM_SCALER_DEFAULT_MAX);
    r.growth_interval = vram__scaler_or_u32(r.growth_interval, VRAM_SCALER_DEFAULT_INTERVAL);
    r.hysteresis = vram__scaler_or_u32(r.hysteresis, VRAM_SCALER_DEFAULT_HYSTERESIS);
    return r;
}

/* Is this configuration usable (0 fields taken as their defaults)? VRAM_E_INVALID for NaN,
 * inf, <= 0 or unknown policy values; VRAM_E_RANGE for growth < 1, backoff >= 1, interval
 * or hysteresis over their bound, min < HARD_MIN, min > max, init outside [min, max]. */
/*@ requires cfg == \null || \valid_read(cfg);
    assigns \nothing;
    ensures \result == VRAM_OK || \result == VRAM_E_INVALID || \result == VRAM_E_RANGE;
    behavior null:
      assumes cfg == \null;
      ensures \result == VRAM_E_INVALID;
    behavior given:
      assumes cfg != \null;
    complete behaviors; disjoint behaviors; */
VRAM_HD VRAM_DEF VRAM_NODISCARD vram_status vram_scaler_validate(const vram_scaler_cfg *cfg) {
    vram_scaler_cfg r;
    if (cfg == NULL) return VRAM_E_INVALID;
    r = vram_scaler_defaults(cfg);
    return vram__scaler_cfg_check(&r);
}

/* ---- the scaler --------------------------------------------------------------------- */

/* Start a scaler at scale = init (cfg NULL: the defaults). A configuration that
 * vram_scaler_validate refuses gives its code, with *s untouched. */
/*@ requires s == \null || \valid(s);
    requires cfg == \null || \valid_read(cfg);
    requires s != \null && cfg != \null ==> \separated(s, cfg);
    assigns *s;
    ensures \result == VRAM_OK || \result == VRAM_E_INVALID || \result == VRAM_E_RANGE;
    ensures \result == VRAM_OK ==> VRAM__SCALER_SOUND(s);
    ensures \result == VRAM_OK ==>
      s->steps == 0 && s->growth_tracker == 0 && s->hysteresis_left == s->cfg.hysteresis - 1;
    ensures \result == VRAM_OK ==>
      (\forall integer k; 0 <= k < VRAM_SCALER_MAX_OPTIMIZERS ==> s->stage[k] == VRAM_SCALER_READY);
    ensures \result == VRAM_OK ==> (\forall integer k; 0 <= k < VRAM_SCALER_MAX_OPTIMIZERS ==> s->found_inf[k] == 0);
    behavior null:
      assumes s == \null;
      assigns \nothing;
      ensures \result == VRAM_E_INVALID;
    behavior given:
      assumes s != \null;
    complete behaviors; disjoint behaviors; */
VRAM_HD VRAM_DEF VRAM_NODISCARD vram_status vram_scaler_init(vram_scaler *s, const vram_scaler_cfg *cfg) {
    vram_scaler_cfg r;
    vram_status st;
    if (s == NULL) return VRAM_E_INVALID;
    r = vram_scaler_defaults(cfg);
    st = vram__scaler_cfg_check(&r);
    if (st != VRAM_OK) return st;
    s->cfg = r;
    s->steps = 0;
    s->skipped = 0;
    s->scale = r.init_scale;
    s->growth_tracker = 0;
    s->hysteresis_left = r.hysteresis - 1u;
    s->overflow_streak = 0;
    vram__scaler_reset_stages(s);
    return VRAM_OK;
}

/* The scale to multiply the loss by, every micro-batch (accumulation needs no call).
 * Finite and > 0 for a state from vram_scaler_init/restore; 1 for NULL. */
/*@ requires s == \null || \valid_read(s);
    assigns \nothing; */
VRAM_HD VRAM_DEF float vram_scaler_scale(const vram_scaler *s) { return s != NULL ? s->scale : 1.0f; }

/* The reciprocal to unscale gradients by: fp64 1/scale rounded to fp32, as PyTorch.
 * Finite and > 0, never 0, for a state from vram_scaler_init/restore (the HARD rails see to
 * it); 1 for NULL. */
/*@ requires s == \null || \valid_read(s);
    assigns \nothing; */
VRAM_HD VRAM_DEF float vram_scaler_inv_scale(const vram_scaler *s) {
    return s != NULL ? vram__scaler_recip(s->scale) : 1.0f;
}

/* Where optimizer opt is; ask before touching gradients to refuse a second unscale early.
 * VRAM_E_INVALID (NULL) or VRAM_E_RANGE (opt >= VRAM_SCALER_MAX_OPTIMIZERS) leave *stage
 * untouched. */
/*@ requires s == \null || \valid_read(s);
    requires stage == \null || \valid(stage);
    assigns *stage;
    ensures \result == VRAM_OK || \result == VRAM_E_INVALID || \result == VRAM_E_RANGE;
    ensures \result == VRAM_OK ==> *stage == s->stage[opt]; */
VRAM_HD VRAM_DEF VRAM_NODISCARD vram_status vram_scaler_get_stage(const vram_scaler *s, unsigned opt,
                                                                  int *stage) {
    if (s == NULL || stage == NULL) return VRAM_E_INVALID;
    if (opt >= VRAM_SCALER_MAX_OPTIMIZERS) return VRAM_E_RANGE;
    *stage = s->stage[opt];
    return VRAM_OK;
}

/* Record that optimizer opt's gradients were unscaled by vram_scaler_inv_scale() and
 * checked: found_inf is the check's flag (any nonzero, NaN included, is an overflow).
 * VRAM_E_STATE when opt is not READY (a second unscale, or one after step); VRAM_E_RANGE
 * for opt out of range; VRAM_E_INVALID/RANGE for a NULL or damaged state. Nothing changes
 * on error. */
/*@ requires s == \null || \valid(s);
    assigns s->stage[0 .. VRAM_SCALER_MAX_OPTIMIZERS - 1],
            s->found_inf[0 .. VRAM_SCALER_MAX_OPTIMIZERS - 1];
    ensures \result == VRAM_OK || \result == VRAM_E_INVALID || \result == VRAM_E_RANGE ||
            \result == VRAM_E_STATE;
    ensures \result == VRAM_OK ==> VRAM__SCALER_SOUND(s);
    ensures \result == VRAM_OK ==> s->stage[opt] == VRAM_SCALER_UNSCALED && s->found_inf[opt] <= 1;
    behavior null:
      assumes s == \null;
      assigns \nothing;
      ensures \result == VRAM_E_INVALID;
    behavior given:
      assumes s != \null;
    complete behaviors; disjoint behaviors; */
VRAM_HD VRAM_DEF VRAM_NODISCARD vram_status vram_scaler_unscale(vram_scaler *s, unsigned opt, float found_inf) {
    vram_status st;
    if (s == NULL) return VRAM_E_INVALID;
    st = vram__scaler_check(s);
    if (st != VRAM_OK) return st;
    if (opt >= VRAM_SCALER_MAX_OPTIMIZERS) return VRAM_E_RANGE;
    if (s->stage[opt] != VRAM_SCALER_READY) return VRAM_E_STATE;
    s->found_inf[opt] = (uint8_t)(found_inf != 0.0f);
    s->stage[opt] = (uint8_t)VRAM_SCALER_UNSCALED;
    return VRAM_OK;
}

/* Optimizer opt's step: *skip = 1 when its own gradients overflowed, then do not apply its
 * update. From READY it unscales first (found_inf is the flag of the check just run); from
 * UNSCALED a nonzero found_inf is added to the recorded one (an overflow is never dropped).
 * VRAM_E_STATE for a second step; other errors as vram_scaler_unscale. Nothing changes on
 * error. */
/*@ requires s == \null || \valid(s);
    requires skip == \null || \valid(skip);
    requires s != \null && skip != \null ==> \separated(s, skip);
    assigns s->stage[0 .. VRAM_SCALER_MAX_OPTIMIZERS - 1],
            s->found_inf[0 .. VRAM_SCALER_MAX_OPTIMIZERS - 1], *skip;
    ensures \result == VRAM_OK || \result == VRAM_E_INVALID || \result == VRAM_E_RANGE ||
            \result == VRAM_E_STATE;
    ensures \result == VRAM_OK ==> VRAM__SCALER_SOUND(s);
    ensures \result == VRAM_OK ==> s->stage[opt] == VRAM_SCALER_STEPPED &&
      *skip == s->found_inf[opt];
    behavior null:
      assumes s == \null || skip == \null;
      assigns \nothing;
      ensures \result == VRAM_E_INVALID;
    behavior given:
      assumes s != \null && skip != \null;
    complete behaviors; disjoint behaviors; */
VRAM_HD VRAM_DEF VRAM_NODISCARD vram_status vram_scaler_step(vram_scaler *s, unsigned opt, float found_inf,
                                                             int *skip) {
    vram_status st;
    if (s == NULL || skip == NULL) return VRAM_E_INVALID;
    st = vram__scaler_check(s);
    if (st != VRAM_OK) return st;
    if (opt >= VRAM_SCALER_MAX_OPTIMIZERS) return VRAM_E_RANGE;
    if (s->stage[opt] == VRAM_SCALER_STEPPED) return VRAM_E_STATE;
    if (s->stage[opt] == VRAM_SCALER_READY) s->found_inf[opt] = 0;
    if (found_inf != 0.0f) s->found_inf[opt] = 1;
    s->stage[opt] = (uint8_t)VRAM_SCALER_STEPPED;
    *skip = s->found_inf[opt];
    return VRAM_OK;
}

/* End of the optimizer step: combine every optimizer's recorded flag, update the scale
 * once, return every optimizer to READY. *out (may be NULL) says what happened.
 * VRAM_E_STATE when no optimizer recorded a check (none unscaled or stepped);
 * VRAM_E_MIN_SCALE (policy ERROR) with the state untouched and *out describing the refused
 * step; VRAM_E_INVALID/RANGE for a NULL or damaged state. */
/*@ requires s == \null || \valid(s);
    requires out == \null || \valid(out);
    requires s != \null && out != \null ==> \separated(s, out);
    assigns *s, *out;
    ensures \result == VRAM_OK || \result == VRAM_E_INVALID || \result == VRAM_E_RANGE ||
            \result == VRAM_E_STATE || \result == VRAM_E_MIN_SCALE;
    ensures \result == VRAM_OK ==> VRAM__SCALER_SOUND(s);
    ensures \result == VRAM_OK ==>
      (\forall integer k; 0 <= k < VRAM_SCALER_MAX_OPTIMIZERS ==> s->stage[k] == VRAM_SCALER_READY);
    ensures \result == VRAM_OK ==> (\forall integer k; 0 <= k < VRAM_SCALER_MAX_OPTIMIZERS ==> s->found_inf[k] == 0);
    behavior null:
      assumes s == \null;
      assigns \nothing;
      ensures \result == VRAM_E_INVALID;
    behavior given:
      assumes s != \null;
    complete behaviors; disjoint behaviors; */
VRAM_HD VRAM_DEF VRAM_NODISCARD vram_status vram_scaler_update(vram_scaler *s, vram_scaler_result *out) {
    vram__scaler_outcome o;
    vram_status st;
    int overflow = 0;
    if (s == NULL) return VRAM_E_INVALID;
    st = vram__scaler_check(s);
    if (st != VRAM_OK) return st;
    if (!vram__scaler_gather(s, &overflow)) return VRAM_E_STATE;
    o = vram__scaler_apply(s, overflow);
    if (o.st == VRAM_OK) vram__scaler_reset_stages(s);
    if (out != NULL) *out = o.r;
    return o.st;
}

/* The bare state machine, for callers that run their own protocol (DeepSpeed's
 * update_scale(overflow)): one update with this overflow flag (nonzero or NaN = overflow).
 * Statuses as vram_scaler_update, except that VRAM_E_STATE means a protocol step is under
 * way (an optimizer not READY): mixing the two would lose its flags. */
/*@ requires s == \null || \valid(s);
    requires out == \null || \valid(out);
    requires s != \null && out != \null ==> \separated(s, out);
    assigns *s, *out;
    ensures \result == VRAM_OK || \result == VRAM_E_INVALID || \result == VRAM_E_RANGE ||
            \result == VRAM_E_STATE || \result == VRAM_E_MIN_SCALE;
    ensures \result == VRAM_OK ==> VRAM__SCALER_SOUND(s);
    ensures \result == VRAM_OK ==>
      (\forall integer k; 0 <= k < VRAM_SCALER_MAX_OPTIMIZERS ==> s->stage[k] == VRAM_SCALER_READY);
    behavior null:
      assumes s == \null;
      assigns \nothing;
      ensures \result == VRAM_E_INVALID;
    behavior given:
      assumes s != \null;
    complete behaviors; disjoint behaviors; */
VRAM_HD VRAM_DEF VRAM_NODISCARD vram_status vram_scaler_advance(vram_scaler *s, float found_inf,
                                                                vram_scaler_result *out) {
    vram__scaler_outcome o;
    vram_status st;
    int overflow = 0;
    if (s == NULL) return VRAM_E_INVALID;
    st = vram__scaler_check(s);
    if (st != VRAM_OK) return st;
    if (vram__scaler_gather(s, &overflow)) return VRAM_E_STATE;
    o = vram__scaler_apply(s, found_inf != 0.0f);
    if (out != NULL) *out = o.r;
    return o.st;
}

/* The end of a step from raw overflow flags, all or nothing: what the loss scaler's update
 * on the GPU runs (kernels/scaler_kernel.cu), so a failed update can never leave a state
 * half-moved. Mode STEP: each optimizer k < n takes its step with found_inf[k] (as
 * vram_scaler_step, unscaling first when it is READY), then one vram_scaler_update; mode
 * ADVANCE: one vram_scaler_advance with found_inf[0]. *rep says what happened.
 * The status is that of the first step or update that failed, else VRAM_OK with *s updated
 * and every optimizer READY. On any error *s is exactly as it was before the call
 * (VRAM_E_MIN_SCALE included: the next call starts from the same state, so a step refused
 * at the minimum does not wedge the ones after it). Once the arguments pass, *rep is
 * filled, its found_inf and skip_mask from every flag whatever the status. (The
 * all-or-nothing is proved on vram__scaler_end, which returns its report by value: this
 * wrapper only checks the arguments and copies the report out.) */
/*@ requires s == \null || \valid(s);
    requires rep == \null || \valid(rep);
    requires found_inf == \null || \valid_read(found_inf + (0 .. n - 1));
    requires s != \null && rep != \null ==> \separated(s, rep);
    assigns *s, *rep;
    ensures \result == VRAM_OK || \result == VRAM_E_INVALID || \result == VRAM_E_RANGE ||
            \result == VRAM_E_STATE || \result == VRAM_E_MIN_SCALE;
    behavior refused:
      assumes s == \null || rep == \null || found_inf == \null || n < 1 ||
              n > VRAM_SCALER_MAX_OPTIMIZERS ||
              (mode != VRAM_SCALER_FLAGS_STEP && mode != VRAM_SCALER_FLAGS_ADVANCE) ||
              (mode == VRAM_SCALER_FLAGS_ADVANCE && n != 1);
      assigns \nothing;
      ensures \result == VRAM_E_INVALID;
    behavior given:
      assumes s != \null && rep != \null && found_inf != \null && 1 <= n <= VRAM_SCALER_MAX_OPTIMIZERS &&
              (mode == VRAM_SCALER_FLAGS_STEP || (mode == VRAM_SCALER_FLAGS_ADVANCE && n == 1));
    complete behaviors; disjoint behaviors; */
VRAM_HD VRAM_DEF VRAM_NODISCARD vram_status vram_scaler_end_step(vram_scaler *s, const float *found_inf, unsigned n,
                                                                 int mode, vram_scaler_report *rep) {
    vram__scaler_end_outcome o;
    if (s == NULL || rep == NULL || found_inf == NULL || n < 1u || n > VRAM_SCALER_MAX_OPTIMIZERS ||
        (mode != VRAM_SCALER_FLAGS_STEP && mode != VRAM_SCALER_FLAGS_ADVANCE) ||
        (mode == VRAM_SCALER_FLAGS_ADVANCE && n != 1u))
        return VRAM_E_INVALID;
    o = vram__scaler_end(s, found_inf, n, mode);
    *rep = o.rep;
    return o.st;
}

/* ---- save and restore --------------------------------------------------------------- *//* ---- save and restore --------------------------------------------------------------- *//* ---- save and restore --------------------------------------------------------------- */

/* Copy every counter, stage and setting into *saved, behind the magic and version, so
 * that vram_scaler_restore(saved) gives *s back. A damaged state is VRAM_E_INVALID/RANGE,
 * with *saved untouched. */
/*@ requires s == \null || \valid_read(s);
    requires saved == \null || \valid(saved);
    requires s != \null && saved != \null ==> \separated(s, saved);
    assigns *saved;
    ensures \result == VRAM_OK || \result == VRAM_E_INVALID || \result == VRAM_E_RANGE;
    ensures \result == VRAM_OK ==>
      saved->magic == VRAM_SCALER_SAVE_MAGIC && saved->version == VRAM_SCALER_SAVE_VERSION;
    behavior null:
      assumes s == \null || saved == \null;
      assigns \nothing;
      ensures \result == VRAM_E_INVALID;
    behavior given:
      assumes s != \null && saved != \null;
    complete behaviors; disjoint behaviors; */
VRAM_HD VRAM_DEF VRAM_NODISCARD vram_status vram_scaler_save(const vram_scaler *s, vram_scaler_saved *saved) {
    vram_status st;
    if (s == NULL || saved == NULL) return VRAM_E_INVALID;
    st = vram__scaler_check(s);
    if (st != VRAM_OK) return st;
    saved->magic = VRAM_SCALER_SAVE_MAGIC;
    saved->version = VRAM_SCALER_SAVE_VERSION;
    saved->state = *s;
    return VRAM_OK;
}

/* Take a saved state back, after checking all of it: the configuration as
 * vram_scaler_validate (no 0 defaults: a saved one is resolved), the scale finite and within
 * [min, max], trackers within bounds (a growth tracker above the interval is accepted: it
 * grows at the next clean step), hysteresis_left < hysteresis, skipped <= steps, streak <=
 * skipped, stages known, flags 0/1 and clear on READY optimizers. VRAM_E_INVALID: NULL,
 * wrong magic, NaN/inf/<= 0 numbers, unknown policy or stage, flag not 0/1; VRAM_E_VERSION:
 * another layout version; VRAM_E_RANGE: a value out of range or inconsistent with another.
 * On VRAM_OK *s == saved->state; on any error *s is untouched. */
/*@ requires s == \null || \valid(s);
    requires saved == \null || \valid_read(saved);
    requires s != \null && saved != \null ==> \separated(s, saved);
    assigns *s;
    ensures \result == VRAM_OK || \result == VRAM_E_INVALID || \result == VRAM_E_RANGE ||
            \result == VRAM_E_VERSION;
    behavior null:
      assumes s == \null || saved == \null;
      assigns \nothing;
      ensures \result == VRAM_E_INVALID;
    behavior bad_magic:
      assumes s != \null && saved != \null && saved->magic != VRAM_SCALER_SAVE_MAGIC;
      assigns \nothing;
      ensures \result == VRAM_E_INVALID;
    behavior bad_version:
      assumes s != \null && saved != \null && saved->magic == VRAM_SCALER_SAVE_MAGIC &&
              saved->version != VRAM_SCALER_SAVE_VERSION;
      assigns \nothing;
      ensures \result == VRAM_E_VERSION;
    behavior given:
      assumes s != \null && saved != \null && saved->magic == VRAM_SCALER_SAVE_MAGIC &&
              saved->version == VRAM_SCALER_SAVE_VERSION;
    complete behaviors; disjoint behaviors; */
VRAM_HD VRAM_DEF VRAM_NODISCARD vram_status vram_scaler_restore(vram_scaler *s, const vram_scaler_saved *saved) {
    vram_status st;
    if (s == NULL || saved == NULL) return VRAM_E_INVALID;
    if (saved->magic != VRAM_SCALER_SAVE_MAGIC) return VRAM_E_INVALID;
    if (saved->version != VRAM_SCALER_SAVE_VERSION) return VRAM_E_VERSION;
    st = vram__scaler_check(&saved->state);
    if (st != VRAM_OK) return st;
    *s = saved->state;
    return VRAM_OK;
}

/* ---- internals ------------------------------------------------------------------------ */

/* A finite fp32 > 0 (false for NaN, inf, 0, negatives), without libm. */
/*@ assigns \nothing; */
VRAM_HD VRAM_DEF int vram__scaler_pos_f32(float x) { return x > 0.0f && x <= VRAM_SCALER_HARD_MAX; }

/* A finite fp64 > 0. */
/*@ assigns \nothing; */
VRAM_HD VRAM_DEF int vram__scaler_pos_f64(double x) { return x > 0.0 && x <= 0x1.fffffffffffffp1023; }

/* x * f computed in fp64 and rounded to fp32, as PyTorch does. *big is set instead when
 * the rounded product is not finite in fp32 (fp64 values from the midpoint between FLT_MAX
 * and 2^128 up round to inf), so no out-of-range conversion ever happens. */
/*@ requires \valid(big);
    assigns *big;
    ensures *big == 0 || *big == 1; */
VRAM_HD VRAM_DEF float vram__scaler_mul(float x, double f, int *big) {
    double d = (double)x * f;
    *big = !(d < 0x1.ffffffp127);
    return *big ? x : (float)d;
}

/* The reciprocal used to unscale: fp64 1/scale rounded to fp32 (PyTorch's inv_scale).
 * Finite and > 0 for every scale in [HARD_MIN, HARD_MAX]. */
/*@ assigns \nothing; */
VRAM_HD VRAM_DEF float vram__scaler_recip(float scale) { return (float)(1.0 / (double)scale); }

/* v, or d when v is 0 (zero means default; -0.0 too, NaN is kept for validation to refuse). */
/*@ assigns \nothing; */
VRAM_HD VRAM_DEF float vram__scaler_or_f32(float v, float d) { return v == 0.0f ? d : v; }
/*@ assigns \nothing; */
VRAM_HD VRAM_DEF double vram__scaler_or_f64(double v, double d) { return v == 0.0 ? d : v; }
/*@ assigns \nothing;
    ensures \result == (v == 0 ? d : v); */
VRAM_HD VRAM_DEF uint32_t vram__scaler_or_u32(uint32_t v, uint32_t d) { return v == 0u ? d : v; }

/* A configuration built field by field (C++ has no designated initialisers). */
/*@ assigns \nothing;
    ensures \result.growth_interval == interval && \result.hysteresis == hysteresis; */
VRAM_HD VRAM_DEF vram_scaler_cfg vram__scaler_cfg_make(float init, double growth, double backoff,
                                                       uint32_t interval, uint32_t hysteresis,
                                                       float min, float max, int32_t consecutive,
                                                       int32_t at_min, int32_t at_max) {
    vram_scaler_cfg c;
    c.growth_factor = growth;
    c.backoff_factor = backoff;
    c.init_scale = init;
    c.min_scale = min;
    c.max_scale = max;
    c.growth_interval = interval;
    c.hysteresis = hysteresis;
    c.consecutive_hysteresis = consecutive;
    c.at_min = at_min;
    c.at_max = at_max;
    return c;
}

/* Check a resolved configuration (a 0 is an error here, not a default). NaN, infinities,
 * non-positive numbers and unknown policy values are VRAM_E_INVALID; numbers outside their
 * range or inconsistent with each other are VRAM_E_RANGE. */
/*@ requires \valid_read(c);
    assigns \nothing;
    ensures \result == VRAM_OK || \result == VRAM_E_INVALID || \result == VRAM_E_RANGE;
    ensures \result == VRAM_OK ==>
      1 <= c->growth_interval <= VRAM_SCALER_MAX_INTERVAL &&
      1 <= c->hysteresis <= VRAM_SCALER_MAX_HYSTERESIS; */
VRAM_HD VRAM_DEF vram_status vram__scaler_cfg_check(const vram_scaler_cfg *c) {
    if (!vram__scaler_pos_f32(c->init_scale) || !vram__scaler_pos_f32(c->min_scale) ||
        !vram__scaler_pos_f32(c->max_scale) || !vram__scaler_pos_f64(c->growth_factor) ||
        !vram__scaler_pos_f64(c->backoff_factor))
        return VRAM_E_INVALID;
    if ((c->consecutive_hysteresis != 0 && c->consecutive_hysteresis != 1) ||
        (c->at_min != VRAM_SCALER_AT_MIN_SKIP && c->at_min != VRAM_SCALER_AT_MIN_ERROR) ||
        (c->at_max != VRAM_SCALER_AT_MAX_CLAMP && c->at_max != VRAM_SCALER_AT_MAX_HOLD))
        return VRAM_E_INVALID;
    if (c->growth_factor < 1.0 || c->backoff_factor >= 1.0) return VRAM_E_RANGE;
    if (c->growth_interval < 1 || c->growth_interval > VRAM_SCALER_MAX_INTERVAL ||
        c->hysteresis < 1 || c->hysteresis > VRAM_SCALER_MAX_HYSTERESIS)
        return VRAM_E_RANGE;
    if (c->min_scale < VRAM_SCALER_HARD_MIN || c->min_scale > c->max_scale ||
        c->init_scale < c->min_scale || c->init_scale > c->max_scale)
        return VRAM_E_RANGE;
    return VRAM_OK;
}

/* The optimizer table of a state: stages known, flags 0/1, no flag on a READY optimizer.
 * (A loop of its own with one array and one fact per loop: z3 proves those quickly.) */
/*@ requires \valid_read(s);
    assigns \nothing;
    ensures \result == VRAM_OK || \result == VRAM_E_INVALID || \result == VRAM_E_RANGE;
    ensures \result == VRAM_OK ==>
      (\forall integer k; 0 <= k < VRAM_SCALER_MAX_OPTIMIZERS ==> s->stage[k] <= VRAM_SCALER_STEPPED);
    ensures \result == VRAM_OK ==>
      (\forall integer k; 0 <= k < VRAM_SCALER_MAX_OPTIMIZERS ==> s->found_inf[k] <= 1); */
VRAM_HD VRAM_DEF vram_status vram__scaler_check_stages(const vram_scaler *s) {
    unsigned i;
    /*@ loop invariant 0 <= i <= VRAM_SCALER_MAX_OPTIMIZERS;
        loop invariant \forall integer j; 0 <= j < i ==> s->stage[j] <= VRAM_SCALER_STEPPED;
        loop assigns i;
        loop variant VRAM_SCALER_MAX_OPTIMIZERS - i; */
    for (i = 0; i < VRAM_SCALER_MAX_OPTIMIZERS; i++)
        if (s->stage[i] > VRAM_SCALER_STEPPED) return VRAM_E_INVALID;
    /*@ loop invariant 0 <= i <= VRAM_SCALER_MAX_OPTIMIZERS;
        loop invariant \forall integer j; 0 <= j < i ==> s->found_inf[j] <= 1;
        loop assigns i;
        loop variant VRAM_SCALER_MAX_OPTIMIZERS - i; */
    for (i = 0; i < VRAM_SCALER_MAX_OPTIMIZERS; i++)
        if (s->found_inf[i] > 1) return VRAM_E_INVALID;
    /* A flag on a READY optimizer: no check was recorded, so the flag cannot be real. */
    /*@ loop invariant 0 <= i <= VRAM_SCALER_MAX_OPTIMIZERS;
        loop assigns i;
        loop variant VRAM_SCALER_MAX_OPTIMIZERS - i; */
    for (i = 0; i < VRAM_SCALER_MAX_OPTIMIZERS; i++)
        if (s->found_inf[i] > s->stage[i]) return VRAM_E_RANGE;
    return VRAM_OK;
}

/* The scale of a state: finite, > 0, within [min, max] (fp32 only, no counters). */
/*@ requires \valid_read(s);
    assigns \nothing;
    ensures \result == VRAM_OK || \result == VRAM_E_INVALID || \result == VRAM_E_RANGE; */
VRAM_HD VRAM_DEF vram_status vram__scaler_check_scale(const vram_scaler *s) {
    if (!vram__scaler_pos_f32(s->scale)) return VRAM_E_INVALID;
    if (s->scale < s->cfg.min_scale || s->scale > s->cfg.max_scale) return VRAM_E_RANGE;
    return VRAM_OK;
}

/* Check a whole state: configuration, scale within its rails, counters within bounds, the
 * optimizer table. Same codes as vram__scaler_cfg_check. */
/*@ requires \valid_read(s);
    assigns \nothing;
    ensures \result == VRAM_OK || \result == VRAM_E_INVALID || \result == VRAM_E_RANGE;
    ensures \result == VRAM_OK ==> VRAM__SCALER_SOUND(s);
    ensures \result == VRAM_OK ==>
      (\forall integer k; 0 <= k < VRAM_SCALER_MAX_OPTIMIZERS ==> s->stage[k] <= VRAM_SCALER_STEPPED);
    ensures \result == VRAM_OK ==>
      (\forall integer k; 0 <= k < VRAM_SCALER_MAX_OPTIMIZERS ==> s->found_inf[k] <= 1); */
VRAM_HD VRAM_DEF vram_status vram__scaler_check(const vram_scaler *s) {
    vram_status st = vram__scaler_cfg_check(&s->cfg);
    if (st != VRAM_OK) return st;
    st = vram__scaler_check_scale(s);
    if (st != VRAM_OK) return st;
    if (s->growth_tracker > VRAM_SCALER_MAX_INTERVAL || s->hysteresis_left >= s->cfg.hysteresis ||
        s->skipped > s->steps || s->overflow_streak > s->skipped)
        return VRAM_E_RANGE;
    return vram__scaler_check_stages(s);
}

/* Every optimizer back to READY with no recorded flag (one array per loop, see above). */
/*@ requires \valid(s);
    assigns s->stage[0 .. VRAM_SCALER_MAX_OPTIMIZERS - 1],
            s->found_inf[0 .. VRAM_SCALER_MAX_OPTIMIZERS - 1];
    ensures \forall integer k; 0 <= k < VRAM_SCALER_MAX_OPTIMIZERS ==> s->stage[k] == VRAM_SCALER_READY;
    ensures \forall integer k; 0 <= k < VRAM_SCALER_MAX_OPTIMIZERS ==> s->found_inf[k] == 0; */
VRAM_HD VRAM_DEF void vram__scaler_reset_stages(vram_scaler *s) {
    unsigned i;
    /*@ loop invariant 0 <= i <= VRAM_SCALER_MAX_OPTIMIZERS;
        loop invariant \forall integer j; 0 <= j < i ==> s->stage[j] == VRAM_SCALER_READY;
        loop assigns i, s->stage[0 .. VRAM_SCALER_MAX_OPTIMIZERS - 1];
        loop variant VRAM_SCALER_MAX_OPTIMIZERS - i; */
    for (i = 0; i < VRAM_SCALER_MAX_OPTIMIZERS; i++) s->stage[i] = (uint8_t)VRAM_SCALER_READY;
    /*@ loop invariant 0 <= i <= VRAM_SCALER_MAX_OPTIMIZERS;
        loop invariant \forall integer j; 0 <= j < i ==> s->found_inf[j] == 0;
        loop assigns i, s->found_inf[0 .. VRAM_SCALER_MAX_OPTIMIZERS - 1];
        loop variant VRAM_SCALER_MAX_OPTIMIZERS - i; */
    for (i = 0; i < VRAM_SCALER_MAX_OPTIMIZERS; i++) s->found_inf[i] = 0;
}

/* A result with every field 0 (C++ has no designated initialisers, and no memset here). */
/*@ assigns \nothing;
    ensures \result.skipped == 0; */
VRAM_HD VRAM_DEF vram_scaler_result vram__scaler_result_zero(void) {
    vram_scaler_result r;
    r.scale_before = 0.0f;
    r.scale_after = 0.0f;
    r.why = VRAM_SCALER_SKIP_NONE;
    r.skipped = 0;
    r.grew = 0;
    r.backed_off = 0;
    r.absorbed = 0;
    r.railed = 0;
    return r;
}

/* vram_scaler_end_step's work on its copy t: the steps (skip[k] = 1 when optimizer k's step
 * is skipped, for k < n; the others 0) and the update, or the bare state machine. */
/*@ requires \valid(t) && \valid(out) && \valid(skip + (0 .. VRAM_SCALER_MAX_OPTIMIZERS - 1));
    requires 1 <= n <= VRAM_SCALER_MAX_OPTIMIZERS && \valid_read(found_inf + (0 .. n - 1));
    requires \separated(t, out, skip + (0 .. VRAM_SCALER_MAX_OPTIMIZERS - 1));
    assigns *t, *out, skip[0 .. VRAM_SCALER_MAX_OPTIMIZERS - 1];
    ensures \result == VRAM_OK || \result == VRAM_E_INVALID || \result == VRAM_E_RANGE ||
            \result == VRAM_E_STATE || \result == VRAM_E_MIN_SCALE;
    ensures \result == VRAM_OK ==> VRAM__SCALER_SOUND(t);
    ensures \result == VRAM_OK ==>
      (\forall integer k; 0 <= k < VRAM_SCALER_MAX_OPTIMIZERS ==> t->stage[k] == VRAM_SCALER_READY); */
VRAM_HD VRAM_DEF vram_status vram__scaler_end_copy(vram_scaler *t, const float *found_inf, unsigned n, int mode,
                                                   vram_scaler_result *out, uint8_t *skip) {
    vram_status st = VRAM_OK;
    unsigned k;
    *out = vram__scaler_result_zero();
    /*@ loop invariant 0 <= k <= VRAM_SCALER_MAX_OPTIMIZERS;
        loop assigns k, skip[0 .. VRAM_SCALER_MAX_OPTIMIZERS - 1];
        loop variant VRAM_SCALER_MAX_OPTIMIZERS - k; */
    for (k = 0; k < VRAM_SCALER_MAX_OPTIMIZERS; k++) skip[k] = 0;
    if (mode == VRAM_SCALER_FLAGS_ADVANCE) return vram_scaler_advance(t, found_inf[0], out);
    /*@ loop invariant 0 <= k <= n;
        loop invariant st == VRAM_OK || st == VRAM_E_INVALID || st == VRAM_E_RANGE || st == VRAM_E_STATE;
        loop assigns k, st, skip[0 .. VRAM_SCALER_MAX_OPTIMIZERS - 1],
                     t->stage[0 .. VRAM_SCALER_MAX_OPTIMIZERS - 1],
                     t->found_inf[0 .. VRAM_SCALER_MAX_OPTIMIZERS - 1];
        loop variant n - k; */
    for (k = 0; k < n && st == VRAM_OK; k++) {
        int sk = 0;
        st = vram_scaler_step(t, k, found_inf[k], &sk);
        if (st == VRAM_OK && sk) skip[k] = 1;
    }
    if (st != VRAM_OK) return st;
    return vram_scaler_update(t, out);
}

/* The flags' summary: bit k of *mask when found_inf[k] is nonzero (NaN included) or skip[k]
 * is set, for k < n; *any = 1.0f when a flag is nonzero, else 0.0f. (The mask is built by
 * additions of a doubling bit, whose bound the prover checks through vram__bit.) */
/*@ requires 1 <= n <= VRAM_SCALER_MAX_OPTIMIZERS;
    requires \valid_read(found_inf + (0 .. n - 1)) && \valid_read(skip + (0 .. n - 1));
    requires \valid(mask) && \valid(any) && \separated(mask, any);
    assigns *mask, *any;
    ensures *mask < 65536; */
VRAM_HD VRAM_DEF void vram__scaler_flags(const float *found_inf, unsigned n, const uint8_t *skip, uint32_t *mask,
                                         float *any) {
    uint32_t m = 0u, bit = 1u;
    int a = 0;
    unsigned k;
    /*@ loop invariant 0 <= k <= n;
        loop invariant bit == vram__bit(k);
        loop invariant m < bit;
        loop assigns k, m, bit, a;
        loop variant n - k; */
    for (k = 0; k < n; k++) {
        int flagged = found_inf[k] != 0.0f;
        if (flagged) a = 1;
        if (flagged || skip[k] != 0) m += bit;
        bit += bit;
    }
    *mask = m;
    *any = a ? 1.0f : 0.0f;
}

/* vram_scaler_end_step once its arguments are checked: the work on a copy of *s, committed
 * only when every step and the update succeeded. The report comes back by value, so that on
 * an error path nothing at all is written and "*s untouched" needs no aliasing argument. */
/*@ requires \valid(s);
    requires 1 <= n <= VRAM_SCALER_MAX_OPTIMIZERS && \valid_read(found_inf + (0 .. n - 1));
    assigns *s;
    ensures \result.st == VRAM_OK || \result.st == VRAM_E_INVALID || \result.st == VRAM_E_RANGE ||
            \result.st == VRAM_E_STATE || \result.st == VRAM_E_MIN_SCALE;
    ensures \result.st == VRAM_OK ==> VRAM__SCALER_SOUND(s);
    ensures \result.st != VRAM_OK ==> *s == \old(*s);
    ensures \result.rep.skip_mask < 65536; */
VRAM_HD VRAM_DEF vram__scaler_end_outcome vram__scaler_end(vram_scaler *s, const float *found_inf, unsigned n,
                                                         int mode) {
    vram__scaler_end_outcome o;
    vram_scaler t = *s; /* every change goes to the copy */
    uint8_t skip[VRAM_SCALER_MAX_OPTIMIZERS];
    vram_scaler_result r;
    uint32_t mask = 0u;
    float any = 0.0f;
    o.st = vram__scaler_end_copy(&t, found_inf, n, mode, &r, skip);
    vram__scaler_flags(found_inf, n, skip, &mask, &any);
    o.rep.result = r;
    o.rep.skip_mask = mask;
    o.rep.found_inf = any;
    if (o.st == VRAM_OK) *s = t;
    return o;
}

/* Any optimizer past READY (a check recorded)? *overflow: any of them found inf/NaN. */
/*@ requires \valid_read(s) && \valid(overflow);
    assigns *overflow;
    ensures *overflow == 0 || *overflow == 1;
    ensures \result == 0 || \result == 1;
    ensures \result == 0 ==>
      (\forall integer k; 0 <= k < VRAM_SCALER_MAX_OPTIMIZERS ==> s->stage[k] == VRAM_SCALER_READY); */
VRAM_HD VRAM_DEF int vram__scaler_gather(const vram_scaler *s, int *overflow) {
    unsigned i;
    int any = 0, over = 0;
    /*@ loop invariant 0 <= i <= VRAM_SCALER_MAX_OPTIMIZERS;
        loop invariant (any == 0 || any == 1) && (over == 0 || over == 1);
        loop invariant any == 0 ==>
          (\forall integer j; 0 <= j < i ==> s->stage[j] == VRAM_SCALER_READY);
        loop assigns i, any, over;
        loop variant VRAM_SCALER_MAX_OPTIMIZERS - i; */
    for (i = 0; i < VRAM_SCALER_MAX_OPTIMIZERS; i++) {
        if (s->stage[i] != VRAM_SCALER_READY) {
            any = 1;
            if (s->found_inf[i] != 0) over = 1;
        }
    }
    *overflow = over;
    return any;
}

/* The scale rule's arithmetic: what the step does to the scale (everything but the
 * counters); scale_after is the next scale. absorbed: hysteresis keeps the scale; grow_due:
 * the growth count is reached. Backoff never goes below min, growth never above max (at_max
 * decides); at min nothing changes and why says so. Results are values, not pointers, so the
 * proof of the counters never has to reason about aliasing. */
/*@ requires \valid_read(s);
    assigns \nothing;
    ensures \result.skipped == (overflow != 0 ? 1 : 0);
    ensures \result.why == VRAM_SCALER_SKIP_AT_MIN ==> overflow != 0; */
VRAM_HD VRAM_DEF vram_scaler_result vram__scaler_next(const vram_scaler *s, int overflow, int absorbed,
                                                      int grow_due) {
    vram_scaler_result r;
    float next = s->scale;
    int big = 0;
    r.scale_before = s->scale;
    r.why = overflow ? VRAM_SCALER_SKIP_OVERFLOW : VRAM_SCALER_SKIP_NONE;
    r.absorbed = absorbed;
    r.railed = 0;
    if (overflow && !absorbed) {
        if (s->scale <= s->cfg.min_scale) {
            r.why = VRAM_SCALER_SKIP_AT_MIN;
        } else {
            next = vram__scaler_mul(s->scale, s->cfg.backoff_factor, &big);
            if (next < s->cfg.min_scale) {
                next = s->cfg.min_scale;
                r.railed = 1;
            }
        }
    } else if (grow_due) {
        next = vram__scaler_mul(s->scale, s->cfg.growth_factor, &big);
        if (big || next > s->cfg.max_scale) {
            next = s->cfg.at_max == VRAM_SCALER_AT_MAX_HOLD ? s->scale : s->cfg.max_scale;
            r.railed = 1;
        }
    }
    r.scale_after = next;
    r.grew = next > s->scale;
    r.backed_off = next < s->scale;
    r.skipped = overflow != 0;
    return r;
}

/* The scale rule's counters, once the step is accepted. Overflow: the growth count restarts,
 * an absorbing overflow spends one hysteresis. Clean: the count advances, or restarts with a
 * refilled hysteresis when due; consecutive mode refills on every clean step. steps, skipped
 * and the streak saturate rather than wrap. */
/*@ requires \valid(s) && VRAM__SCALER_SOUND(s);
    requires absorbed != 0 ==> overflow != 0 && s->hysteresis_left > 0;
    requires grow_due != 0 ==> overflow == 0;
    requires grow_due == 0 && overflow == 0 ==> s->growth_tracker + 1 < s->cfg.growth_interval;
    assigns s->growth_tracker, s->hysteresis_left, s->steps, s->skipped, s->overflow_streak;
    ensures s->growth_tracker <= VRAM_SCALER_MAX_INTERVAL;
    ensures s->hysteresis_left < s->cfg.hysteresis;
    ensures s->skipped <= s->steps;
    ensures s->overflow_streak <= s->skipped;
    ensures overflow != 0 ==> s->growth_tracker == 0; */
VRAM_HD VRAM_DEF void vram__scaler_count(vram_scaler *s, int overflow, int absorbed, int grow_due) {
    if (overflow) {
        s->growth_tracker = 0;
        if (absorbed) s->hysteresis_left -= 1u;
    } else if (grow_due) {
        s->growth_tracker = 0;
        s->hysteresis_left = s->cfg.hysteresis - 1u;
    } else {
        s->growth_tracker += 1u;
        if (s->cfg.consecutive_hysteresis) s->hysteresis_left = s->cfg.hysteresis - 1u;
    }
    if (s->steps < UINT64_MAX) s->steps += 1u;
    if (!overflow) {
        s->overflow_streak = 0;
    } else {
        if (s->skipped < s->steps) s->skipped += 1u;
        if (s->overflow_streak < UINT32_MAX) s->overflow_streak += 1u;
    }
}

/* The scale rule, once per optimizer step. Overflow: the growth count restarts; hysteresis
 * absorbs it if any is left, else the scale backs off (never below min; at min the at_min
 * policy decides). Clean: the count grows, and at >= interval (a count restored above the
 * interval still grows) the scale grows (never above max; at_max decides) and hysteresis is
 * refilled. The rules of PyTorch, Apex, DeepSpeed and Megatron are all this one, configured:
 * DeepSpeed's growth test (iter - last_overflow_iter) % window == 0 counts the same clean
 * steps since the last overflow (absorbed ones included), and Megatron's hysteresis tracker,
 * which goes negative once exhausted, backs off at <= 0 exactly when hysteresis_left is 0.
 * Returns the status with the result. */
/*@ requires \valid(s) && VRAM__SCALER_SOUND(s);
    assigns s->scale, s->growth_tracker, s->hysteresis_left, s->steps, s->skipped,
            s->overflow_streak;
    ensures \result.st == VRAM_OK || \result.st == VRAM_E_MIN_SCALE;
    ensures VRAM__SCALER_SOUND(s);
    ensures \result.r.skipped == (overflow != 0 ? 1 : 0);
    ensures \result.st == VRAM_E_MIN_SCALE ==>
      overflow != 0 && s->steps == \old(s->steps) && s->skipped == \old(s->skipped) &&
      s->growth_tracker == \old(s->growth_tracker) &&
      s->hysteresis_left == \old(s->hysteresis_left); */
VRAM_HD VRAM_DEF vram__scaler_outcome vram__scaler_apply(vram_scaler *s, int overflow) {
    vram__scaler_outcome o;
    int absorbed = overflow && s->hysteresis_left > 0;
    int grow_due = !overflow && s->growth_tracker + 1u >= s->cfg.growth_interval;
    o.r = vram__scaler_next(s, overflow, absorbed, grow_due);
    o.st = VRAM_OK;
    if (o.r.why == VRAM_SCALER_SKIP_AT_MIN && s->cfg.at_min == VRAM_SCALER_AT_MIN_ERROR) {
        o.st = VRAM_E_MIN_SCALE; /* DeepSpeed raises before it changes anything */
        return o;
    }
    s->scale = o.r.scale_after;
    vram__scaler_count(s, overflow, absorbed, grow_due);
    return o;
}

#endif /* VRAMKIT_SCALER_H */
