/* vramkit/place.h — where each component of a service lives (say an embedding model and two
 * classifiers on an 8 GB card that another process, an Ollama server, already half fills). Per-component
 * device settings that inherit a global one, their text form, and a placement onto GPUs
 * whose free memory already reflects other tenants. Pure: caller-provided arrays. */
#ifndef VRAMKIT_PLACE_H
#define VRAMKIT_PLACE_H

#include <stddef.h>

#include "base.h"
#include "estimate.h"
#include "strategy.h"

/* The rules.
 *
 * Settings. Each component has a device setting: INHERIT (0, the zero default: use the
 * global setting), AUTO (vramkit chooses), CPU, or GPU n. The global setting resolves the
 * same way, with INHERIT meaning AUTO. Environment variables (VRAMKIT_DEVICE and
 * VRAMKIT_<COMPONENT>_DEVICE, read in driver/) carry the text form: "auto", "cpu", "cuda",
 * "cuda:N", "gpu", "gpu:N", ASCII case-insensitive; "cuda" and "gpu" alone are GPU 0, as
 * torch.device("cuda") is the current device, 0 unless set.
 *
 * Budgets. As in strategy.h: a GPU's budget is its free memory less the margin, the host's
 * is host_free less the margin (host_free 0: unknown, host placements assumed to fit).
 * A GPU holding at least one component also holds one CUDA context and workspace, the
 * fixed bytes (passed in; 0 = VRAM_PLACE_DEFAULT_FIXED, the estimator's expected context
 * plus workspace), paid once per GPU; a component's own gpu_bytes exclude them.
 *
 * Order.
 *   1. GPU n components, in input order. Each is checked against GPU n's room left
 *      (budget - used, fixed included when it is the first there). One that does not fit
 *      is reported with what it needs and how much is missing (GPU_SHORT, short_by), and is
 *      NOT moved and NOT counted in the GPU's used bytes: the user asked for that GPU, and
 *      a plan never puts more on a device than its budget. A GPU the machine does not have
 *      is NO_SUCH_GPU, not placed either.
 *   2. AUTO components, largest gpu_bytes first (input order on ties), each onto the GPU
 *      with the most room left (room = budget - used, less the fixed bytes on a GPU that
 *      holds nothing yet, which is negative on an empty GPU whose budget is below the fixed
 *      bytes; the lowest index on ties), if it fits there; it fits on no GPU otherwise, and
 *      goes to the host marked as a fallback, with short_by = what the best GPU lacked
 *      (gpu_bytes - room; NO_GPU when the machine has no GPU: short_by 0).
 *   3. The host: CPU components in input order, then the fallbacks in the order of step
 *      2, each with its cpu_bytes against the host budget (when known); one that does not
 *      fit is HOST_SHORT (host_short_by), not placed.
 * A component that fits nowhere keeps fits = 0; every other component has fits = 1. */

/* ---- types -------------------------------------------------------------------------- */

#define VRAM_PLACE_MAX 64 /* components in one placement */
#define VRAM_PLACE_DEFAULT_FIXED (VRAM_CONTEXT_EXPECTED + VRAM_WORKSPACE_EXPECTED)

typedef enum vram_setting_kind {
    VRAM_SETTING_INHERIT = 0, /* use the global setting (global: AUTO) */
    VRAM_SETTING_AUTO = 1,    /* the GPU with the most room, else the host */
    VRAM_SETTING_CPU = 2,     /* the host */
    VRAM_SETTING_GPU = 3      /* GPU `gpu` */
} vram_setting_kind;

typedef struct vram_device_setting {
    vram_setting_kind kind;
    int gpu; /* GPU index when kind is GPU, >= 0; ignored otherwise */
} vram_device_setting;

/* One component of a service. */
typedef struct vram_component {
    uint64_t gpu_bytes; /* expected bytes on a GPU, without the fixed per-GPU costs */
    uint64_t cpu_bytes; /* expected bytes on the host */
    vram_device_setting setting;
} vram_component;

/* How a component was placed: X(id, name, template). The CLI prints the template with
 * {device} and {short_device} as "GPU n" / "the host", and {bytes}, {needed}, {short_by},
 * {host_short_by} as sizes, from the fields of vram_placement of the same names. */
#define VRAM_PLACE_REASON_LIST(X)                                                           \
    X(VRAM_PLACE_ON_GPU, "on_gpu", "on {device}: {bytes}")                                   \
    X(VRAM_PLACE_ON_CPU, "on_cpu", "on the host, as set: {bytes}")                          \
    X(VRAM_PLACE_FELL_BACK, "fell_back",                                                    \
      "no GPU had room ({short_device}, the best, was {short_by} short): on the host, "    \
      "{bytes}")                                                                            \
    X(VRAM_PLACE_NO_GPU, "no_gpu", "no GPU: on the host, {bytes}")                         \
    X(VRAM_PLACE_GPU_SHORT, "gpu_short",                                                    \
      "needs {needed} on {device}, {short_by} more than is free there after the margin")   \
    X(VRAM_PLACE_NO_SUCH_GPU, "no_such_gpu", "set to {device}, which this machine lacks")  \
    X(VRAM_PLACE_HOST_SHORT, "host_short",                                                  \
      "needs {needed} of host memory, {host_short_by} more than is free after the margin")

typedef enum vram_place_reason {
#define VRAM__PLACE_REASON_ENUM(id, name, text) id,
    VRAM_PLACE_REASON_LIST(VRAM__PLACE_REASON_ENUM)
#undef VRAM__PLACE_REASON_ENUM
    VRAM_PLACE_REASON_COUNT
} vram_place_reason;

/* Where one component went. */
typedef struct vram_placement {
    vram_device_setting setting; /* the effective setting (never INHERIT) */
    int device;             /* GPU index or VRAM_PLAN_CPU; when fits == 0, where it was
                               meant to go */
    uint64_t bytes;         /* its own bytes there: gpu_bytes on a GPU, cpu_bytes on the host */
    uint64_t needed;        /* what placing it there takes: bytes, plus the fixed bytes when
                               it is the first component on its GPU */
    int fits;               /* 1: placed within the budget; 0: not placed */
    int fell_back;          /* AUTO that no GPU could take: on the host */
    uint64_t short_by;      /* GPU_SHORT: needed - room on its GPU; FELL_BACK: gpu_bytes -
                               room on the best GPU (room < 0 counts); else 0 */
    int short_device;       /* the GPU short_by is about; VRAM_PLAN_NONE when none */
    uint64_t host_short_by; /* HOST_SHORT: cpu_bytes - room on the host; else 0 */
    vram_place_reason reason;
} vram_placement;

/* One GPU after placement. */
typedef struct vram_place_gpu {
    uint64_t budget;    /* free - margin */
    uint64_t used;      /* fixed (when it holds a component) + its components' gpu_bytes,
                           <= budget */
    int components;     /* how many it holds */
} vram_place_gpu;

/* The whole placement. */
typedef struct vram_place_summary {
    int gpus;
    vram_place_gpu gpu[VRAM_PLAN_MAX_GPUS];
    uint64_t fixed_bytes;  /* per GPU holding a component (resolved) */
    uint64_t host_budget;  /* host_free - margin; 0 with host_known == 0 */
    uint64_t host_used;    /* cpu_bytes of the components on the host */
    int host_known;        /* host_free was given */
    int on_gpu, on_cpu;    /* components placed on GPUs / on the host */
    int fell_back;         /* of those on the host, AUTO ones no GPU could take */
    int not_placed;        /* components with fits == 0 */
    int all_fit;           /* not_placed == 0 */
} vram_place_summary;

/* ---- functions, in the order a user calls them ------------------------------------ */

/* Name of a placement reason ("fell_back"): "unknown" out of range; and its template:
 * NULL out of range (a text, not a name: callers word their own). */
/*@ assigns \nothing;
    ensures \result != \null; */
VRAM_DEF const char *vram_place_reason_name(vram_place_reason r) {
    VRAM_X_NAME(r, VRAM_PLACE_REASON_LIST, VRAM_X_COL2, "unknown");
}
/*@ assigns \nothing; */
VRAM_DEF const char *vram_place_reason_text(vram_place_reason r) {
    VRAM_X_NAME(r, VRAM_PLACE_REASON_LIST, VRAM_X_COL3, NULL);
}

/* Does text[0 .. len) equal the lower-case word, ASCII case folded? */
/*@ requires \valid_read(text + (0 .. len - 1)) && \valid_read(word + (0 .. wlen - 1));
    assigns \nothing; */
VRAM_DEF int vram__setting_word(const char *text, size_t len, const char *word, size_t wlen) {
    size_t i;
    if (len != wlen) return 0;
    for (i = 0; i < len; i++) {
        char a = text[i];
        if (a >= 'A' && a <= 'Z') a = (char)(a - 'A' + 'a');
        if (a != word[i]) return 0;
    }
    return 1;
}

/* A setting from its text (an environment variable's value), len bytes, no NUL needed:
 * "auto", "cpu", "cuda", "cuda:N", "gpu", "gpu:N", ASCII case-insensitive, N decimal
 * digits (leading zeros allowed). VRAM_E_RANGE for a well-formed N >= VRAM_PLAN_MAX_GPUS;
 * VRAM_E_FORMAT for anything else ("", "cuda:", "cuda:-1", "cuda: 1", "tpu", "cpu:0");
 * VRAM_E_INVALID when out is NULL, or text is NULL with len > 0. *out is written only on
 * VRAM_OK. */
/*@ requires len == 0 || \valid_read(text + (0 .. len - 1));
    requires out == \null || \valid(out);
    assigns *out;
    ensures \result == VRAM_OK || \result == VRAM_E_RANGE || \result == VRAM_E_FORMAT ||
            \result == VRAM_E_INVALID;
    ensures \result == VRAM_OK ==> out->kind != VRAM_SETTING_INHERIT;
    ensures \result == VRAM_OK && out->kind == VRAM_SETTING_GPU ==>
            0 <= out->gpu < VRAM_PLAN_MAX_GPUS; */
VRAM_DEF VRAM_NODISCARD vram_status vram_setting_parse(const char *text, size_t len,
                                                       vram_device_setting *out) {
    size_t prefix, i;
    uint64_t n = 0;
    if (out == NULL || (text == NULL && len != 0)) return VRAM_E_INVALID;
    if (vram__setting_word(text, len, "auto", 4)) {
        out->kind = VRAM_SETTING_AUTO;
        out->gpu = 0;
        return VRAM_OK;
    }
    if (vram__setting_word(text, len, "cpu", 3)) {
        out->kind = VRAM_SETTING_CPU;
        out->gpu = 0;
        return VRAM_OK;
    }
    if (len >= 4 && vram__setting_word(text, 4, "cuda", 4))
        prefix = 4;
    else if (len >= 3 && vram__setting_word(text, 3, "gpu", 3))
        prefix = 3;
    else
        return VRAM_E_FORMAT;
    if (len > prefix) {
        if (text[prefix] != ':' || len == prefix + 1) return VRAM_E_FORMAT;
        for (i = prefix + 1; i < len; i++) {
            if (text[i] < '0' || text[i] > '9') return VRAM_E_FORMAT;
        }
        for (i = prefix + 1; i < len; i++) {
            n = n * 10u + (uint64_t)(text[i] - '0');
            if (n >= VRAM_PLAN_MAX_GPUS) return VRAM_E_RANGE; /* stops before any wrap */
        }
    }
    out->kind = VRAM_SETTING_GPU;
    out->gpu = (int)n;
    return VRAM_OK;
}

/* Is a setting well-formed? GPU needs gpu >= 0 (whether the machine has that GPU is the
 * placement's question: NO_SUCH_GPU). */
/*@ assigns \nothing;
    ensures \result == VRAM_OK || \result == VRAM_E_INVALID; */
VRAM_DEF VRAM_NODISCARD vram_status vram_setting_check(vram_device_setting s) {
    switch (s.kind) {
    case VRAM_SETTING_INHERIT:
    case VRAM_SETTING_AUTO:
    case VRAM_SETTING_CPU:
        return VRAM_OK;
    case VRAM_SETTING_GPU:
        return s.gpu >= 0 ? VRAM_OK : VRAM_E_INVALID;
    default:
        return VRAM_E_INVALID;
    }
}

/* The effective setting of a component: its own unless INHERIT, else the global one unless
 * INHERIT, else AUTO. */
/*@ assigns \nothing;
    ensures \result.kind != VRAM_SETTING_INHERIT;
    ensures component.kind != VRAM_SETTING_INHERIT ==> \result == component;
    ensures component.kind == VRAM_SETTING_INHERIT && global.kind != VRAM_SETTING_INHERIT
            ==> \result == global; */
VRAM_DEF vram_device_setting vram_setting_resolve(vram_device_setting component,
                                                  vram_device_setting global) {
    vram_device_setting r;
    if (component.kind != VRAM_SETTING_INHERIT) return component;
    if (global.kind != VRAM_SETTING_INHERIT) return global;
    r.kind = VRAM_SETTING_AUTO;
    r.gpu = 0;
    return r;
}

/* The 16-bit format of a component that may land on any GPU of d: bf16 when d has a GPU and
 * every GPU computes in bf16 (compute capability >= 8.0), else fp16. (A single model's chain
 * looks at its best GPU only: strategy.h.) */
/*@ requires \valid_read(d) && 0 <= d->gpus <= VRAM_PLAN_MAX_GPUS;
    assigns \nothing;
    ensures \result == VRAM_DTYPE_BF16 || \result == VRAM_DTYPE_F16; */
VRAM_DEF vram_dtype vram_place_format16(const vram_devices *d) {
    int i;
    if (d->gpus == 0) return VRAM_DTYPE_F16;
    for (i = 0; i < d->gpus; i++)
        if (!vram_devices_bf16(d, i)) return VRAM_DTYPE_F16;
    return VRAM_DTYPE_BF16;
}

/* The two workloads a component is estimated under, from the service's workload w: on a GPU
 * (w's weight format, or vram_place_format16(d) when w leaves it at NONE; cpu = 0) and on the
 * host (fp32 weights, the estimator's default compute, cpu = 1). Feed the two estimates to
 * vram_component_from_estimates. */
/*@ requires \valid_read(w) && \valid_read(d) && 0 <= d->gpus <= VRAM_PLAN_MAX_GPUS;
    requires \valid(gpu) && \valid(cpu) && \separated(gpu, cpu);
    assigns *gpu, *cpu;
    ensures gpu->format != VRAM_DTYPE_NONE && gpu->cpu == 0;
    ensures cpu->format == VRAM_DTYPE_F32 && cpu->compute == VRAM_DTYPE_NONE && cpu->cpu == 1; */
VRAM_DEF void vram_component_workloads(const vram_workload *w, const vram_devices *d,
                                       vram_workload *gpu, vram_workload *cpu) {
    *gpu = *w;
    *cpu = *w;
    if (gpu->format == VRAM_DTYPE_NONE) gpu->format = vram_place_format16(d);
    gpu->cpu = 0;
    cpu->format = VRAM_DTYPE_F32;
    cpu->compute = VRAM_DTYPE_NONE;
    cpu->cpu = 1;
}

/* A component's bytes from two estimates of its model: on a GPU (gpu_bytes = expected less
 * the cuda_context and workspace terms, which the placement pays once per GPU) and on the
 * host (cpu_bytes = expected of an estimate with vram_workload.cpu set). The setting is
 * left as it is. VRAM_E_INVALID only for a NULL pointer. */
/*@ requires \valid_read(gpu) && \valid_read(cpu) && \valid(out);
    assigns out->gpu_bytes, out->cpu_bytes;
    ensures \result == VRAM_OK || \result == VRAM_E_INVALID;
    ensures \result == VRAM_OK ==> out->gpu_bytes <= gpu->expected; */
VRAM_DEF VRAM_NODISCARD vram_status vram_component_from_estimates(const vram_estimate *gpu,
                                                                  const vram_estimate *cpu,
                                                                  vram_component *out) {
    uint64_t fixed = 0;
    if (gpu == NULL || cpu == NULL || out == NULL) return VRAM_E_INVALID;
    /* both terms are parts of expected, so their sum is <= expected; saturate anyway */
    fixed = vram__sat_add_u64(gpu->term[VRAM_TERM_CUDA_CONTEXT].expected,
                              gpu->term[VRAM_TERM_WORKSPACE].expected);
    out->gpu_bytes = gpu->expected > fixed ? gpu->expected - fixed : 0u;
    out->cpu_bytes = cpu->expected;
    return VRAM_OK;
}

/* Room left on GPU g for one more component: budget - used, less the fixed bytes when it
 * holds nothing yet. That can be negative (an empty GPU whose budget is below the fixed
 * bytes): *room is then 0 and *deficit the amount missing; else *deficit is 0. */
/*@ requires \valid_read(s) && 0 <= g < VRAM_PLAN_MAX_GPUS;
    requires s->gpu[g].used <= s->gpu[g].budget;
    requires \valid(room) && \valid(deficit) && \separated(room, deficit);
    assigns *room, *deficit;
    ensures *room == 0 || *deficit == 0; */
VRAM_DEF void vram__place_room(const vram_place_summary *s, int g, uint64_t *room,
                               uint64_t *deficit) {
    uint64_t avail = s->gpu[g].budget - s->gpu[g].used;
    uint64_t take = s->gpu[g].components == 0 ? s->fixed_bytes : 0u;
    *room = take <= avail ? avail - take : 0u;
    *deficit = take <= avail ? 0u : take - avail;
}

/* Put a component on GPU g (the caller checked its room): used grows by needed. */
/*@ requires \valid(s) && \valid(o) && 0 <= g < VRAM_PLAN_MAX_GPUS;
    assigns s->gpu[g], s->on_gpu, *o; */
VRAM_DEF void vram__place_on_gpu(vram_place_summary *s, int g, uint64_t bytes,
                                 vram_placement *o) {
    o->device = g;
    o->bytes = bytes;
    o->needed = s->gpu[g].components == 0 ? bytes + s->fixed_bytes : bytes; /* checked */
    s->gpu[g].used += o->needed; /* <= budget: the caller checked the room */
    s->gpu[g].components++;
    s->on_gpu++;
    o->fits = 1;
    o->reason = VRAM_PLACE_ON_GPU;
}

/* Put a component on the host if it fits the host budget (or the budget is unknown). */
/*@ requires \valid(s) && \valid(o);
    assigns s->host_used, s->on_cpu, s->fell_back, *o; */
VRAM_DEF void vram__place_on_host(vram_place_summary *s, uint64_t bytes, vram_placement *o) {
    o->device = VRAM_PLAN_CPU;
    o->bytes = bytes;
    o->needed = bytes;
    if (s->host_known && bytes > s->host_budget - s->host_used) {
        o->fits = 0;
        o->host_short_by = bytes - (s->host_budget - s->host_used);
        o->reason = VRAM_PLACE_HOST_SHORT;
        return;
    }
    s->host_used += bytes; /* the caller checked that all cpu_bytes sum below 2^64 */
    s->on_cpu++;
    if (o->fell_back) s->fell_back++;
    o->fits = 1;
}

/* Place n components (the rules at the top of this file) on the machine d, with the
 * global setting and the fixed bytes per GPU (0 = VRAM_PLACE_DEFAULT_FIXED). On VRAM_OK
 * out[i] is the placement of comp[i], each component either placed (fits 1) or reported
 * (fits 0, with its reason and shortfall), and *sum holds the per-GPU and host totals.
 * VRAM_E_INVALID for a NULL pointer (comp and out may be NULL when n is 0),
 * n > VRAM_PLACE_MAX, a bad machine (vram_devices_check) or a bad setting (kind out of
 * range, GPU index < 0); else VRAM_E_OVERFLOW when a component's gpu_bytes + fixed, or the
 * sum of all cpu_bytes, passes 2^64. out and sum are written only on VRAM_OK. */
/*@ requires d == \null || \valid_read(d);
    requires sum == \null || \valid(sum);
    requires 0 < n <= VRAM_PLACE_MAX && comp != \null && out != \null ==>
             \valid_read(comp + (0 .. n - 1)) && \valid(out + (0 .. n - 1));
    assigns *sum, out[0 .. n - 1];
    ensures \result == VRAM_OK || \result == VRAM_E_INVALID || \result == VRAM_E_OVERFLOW;
    ensures \result == VRAM_OK ==>
            \forall integer g; 0 <= g < sum->gpus ==> sum->gpu[g].used <= sum->gpu[g].budget;
    ensures \result == VRAM_OK && sum->host_known ==> sum->host_used <= sum->host_budget; */
VRAM_DEF VRAM_NODISCARD vram_status vram_place(const vram_devices *d, vram_device_setting global,
                                               uint64_t fixed_bytes, const vram_component *comp,
                                               size_t n, vram_placement *out,
                                               vram_place_summary *sum) {
    unsigned char autos[VRAM_PLACE_MAX];
    size_t i, j, na = 0;
    uint64_t fixed = fixed_bytes != 0 ? fixed_bytes : VRAM_PLACE_DEFAULT_FIXED, t, all_cpu = 0;
    int g;
    vram_place_summary s;

    /* ---- check everything before writing anything */
    if (sum == NULL || vram_devices_check(d) != VRAM_OK || n > VRAM_PLACE_MAX)
        return VRAM_E_INVALID;
    if (n > 0 && (comp == NULL || out == NULL)) return VRAM_E_INVALID;
    if (vram_setting_check(global) != VRAM_OK) return VRAM_E_INVALID;
    for (i = 0; i < n; i++)
        if (vram_setting_check(comp[i].setting) != VRAM_OK) return VRAM_E_INVALID;
    for (i = 0; i < n; i++) {
        if (vram__add_u64(comp[i].gpu_bytes, fixed, &t) != VRAM_OK ||
            vram__add_u64(all_cpu, comp[i].cpu_bytes, &all_cpu) != VRAM_OK)
            return VRAM_E_OVERFLOW;
    }

    s.gpus = d->gpus;
    for (g = 0; g < VRAM_PLAN_MAX_GPUS; g++) {
        s.gpu[g].budget = g < d->gpus ? vram_devices_budget(d, g) : 0u;
        s.gpu[g].used = 0;
        s.gpu[g].components = 0;
    }
    s.fixed_bytes = fixed;
    s.host_known = d->host_free != 0;
    s.host_budget = s.host_known ? vram_devices_host_budget(d) : 0u;
    s.host_used = 0;
    s.on_gpu = s.on_cpu = s.fell_back = s.not_placed = 0;
    for (i = 0; i < n; i++) {
        vram_placement *o = &out[i];
        o->setting = vram_setting_resolve(comp[i].setting, global);
        o->device = VRAM_PLAN_NONE;
        o->bytes = o->needed = 0;
        o->fits = 0;
        o->fell_back = 0;
        o->short_by = o->host_short_by = 0;
        o->short_device = VRAM_PLAN_NONE;
        o->reason = VRAM_PLACE_ON_CPU;
    }

    /* ---- 1. components set to a GPU, in input order */
    for (i = 0; i < n; i++) {
        vram_placement *o = &out[i];
        uint64_t room, need;
        if (o->setting.kind != VRAM_SETTING_GPU) continue;
        g = o->setting.gpu;
        o->device = g;
        o->bytes = comp[i].gpu_bytes;
        if (g >= d->gpus) {
            o->needed = comp[i].gpu_bytes + fixed;
            o->reason = VRAM_PLACE_NO_SUCH_GPU;
            continue;
        }
        room = s.gpu[g].budget - s.gpu[g].used;
        need = comp[i].gpu_bytes + (s.gpu[g].components == 0 ? fixed : 0u);
        if (need <= room) {
            vram__place_on_gpu(&s, g, comp[i].gpu_bytes, o);
        } else {
            o->needed = need;
            o->short_by = need - room;
            o->short_device = g;
            o->reason = VRAM_PLACE_GPU_SHORT;
        }
    }

    /* ---- 2. AUTO components, largest first (stable insertion sort, n <= 64) */
    for (i = 0; i < n; i++) {
        if (out[i].setting.kind != VRAM_SETTING_AUTO) continue;
        for (j = na; j > 0 && comp[autos[j - 1]].gpu_bytes < comp[i].gpu_bytes; j--)
            autos[j] = autos[j - 1];
        autos[j] = (unsigned char)i;
        na++;
    }
    for (j = 0; j < na; j++) {
        vram_placement *o = &out[autos[j]];
        uint64_t bytes = comp[autos[j]].gpu_bytes, room, deficit, best_room = 0, best_def = 0;
        int best = VRAM_PLAN_NONE;
        /* the most room: the smallest deficit, then the largest room */
        for (g = 0; g < d->gpus; g++) {
            vram__place_room(&s, g, &room, &deficit);
            if (best == VRAM_PLAN_NONE || deficit < best_def ||
                (deficit == best_def && room > best_room)) {
                best = g;
                best_room = room;
                best_def = deficit;
            }
        }
        if (best != VRAM_PLAN_NONE && best_def == 0 && bytes <= best_room) {
            vram__place_on_gpu(&s, best, bytes, o);
            continue;
        }
        o->fell_back = 1;
        if (best == VRAM_PLAN_NONE) {
            o->reason = VRAM_PLACE_NO_GPU;
        } else {
            /* <= bytes + fixed, checked above: no overflow */
            o->reason = VRAM_PLACE_FELL_BACK;
            o->short_by = best_def != 0 ? bytes + best_def : bytes - best_room;
            o->short_device = best;
        }
    }

    /* ---- 3. the host: CPU components in input order, then the fallbacks */
    for (i = 0; i < n; i++) {
        if (out[i].setting.kind != VRAM_SETTING_CPU) continue;
        out[i].reason = VRAM_PLACE_ON_CPU;
        vram__place_on_host(&s, comp[i].cpu_bytes, &out[i]);
    }
    for (j = 0; j < na; j++) {
        vram_placement *o = &out[autos[j]];
        vram_place_reason r = o->reason; /* FELL_BACK or NO_GPU */
        if (!o->fell_back) continue;
        vram__place_on_host(&s, comp[autos[j]].cpu_bytes, o);
        if (o->fits) o->reason = r; /* else HOST_SHORT; short_by still says what the best
                                       GPU lacked */
    }

    for (i = 0; i < n; i++)
        if (!out[i].fits) s.not_placed++;
    s.all_fit = s.not_placed == 0;
    *sum = s;
    return VRAM_OK;
}

#endif /* VRAMKIT_PLACE_H */
