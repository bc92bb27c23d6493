/* vramkit/plan.h — what changed between a saved plan and the same plan made again now (the
 * machine or the models may have moved): the chosen strategy, and where each component went.
 * Differences come back as data; the caller words them. Pure: caller-provided arrays. */
#ifndef VRAMKIT_PLAN_H
#define VRAMKIT_PLAN_H

#include <stddef.h>

#include "base.h"
#include "strategy.h"

/* ---- types -------------------------------------------------------------------------- */

/* Bytes of a strategy name that are compared (longer names are cut there). */
#define VRAM_PLAN_NAME_MAX 64

/* Where a component went in one plan. */
typedef struct vram_outcome {
    int component; /* its index among the components of the plan made now; a saved entry
                      that names no current component has a negative index and is skipped */
    int device;    /* a GPU index, VRAM_PLAN_CPU, or VRAM_PLAN_NONE (placed nowhere) */
    int fits;      /* 1: placed within the budget; 0: not placed */
} vram_outcome;

/* One difference. */
typedef struct vram_change {
    int component;          /* -1: the chosen strategy (then_chosen -> now_chosen); else
                               the component, an index into the plan made now */
    vram_outcome then, now; /* a component's saved and current placement */
} vram_change;

/* ---- functions ---------------------------------------------------------------------- */

/* Are two chosen strategies the same? Names compared on their first VRAM_PLAN_NAME_MAX
 * bytes; NULL is "none fits" and equals only NULL. */
/*@ requires a == \null || \valid_read(a + (0 .. VRAM_PLAN_NAME_MAX - 1));
    requires b == \null || \valid_read(b + (0 .. VRAM_PLAN_NAME_MAX - 1));
    assigns \nothing;
    ensures \result == 0 || \result == 1; */
VRAM_DEF int vram_plan_same_chosen(const char *a, const char *b) {
    int i;
    if (a == NULL || b == NULL) return a == b;
    /*@ loop invariant 0 <= i <= VRAM_PLAN_NAME_MAX;
        loop assigns i;
        loop variant VRAM_PLAN_NAME_MAX - i; */
    for (i = 0; i < VRAM_PLAN_NAME_MAX; i++) {
        if (a[i] != b[i]) return 0;
        if (a[i] == '\0') return 1;
    }
    return 1;
}

/* The differences between a saved plan (then_chosen; then[0 .. nthen)) and the plan made
 * now (now_chosen; now[0 .. nnow), indexed by component): first the chosen strategy when
 * it changed, then, in the saved order, each saved entry whose component (0 <= component
 * < nnow; others are skipped) is now on another device or now fits where it did not or
 * the other way round. Chosen names: NULL = none fits. *count is the number of
 * differences even when out[] is too small; out[] holds the first min(*count, cap).
 * VRAM_E_INVALID for a NULL that is not allowed (nothing written). */
/*@ requires nthen == 0 || \valid_read(then + (0 .. nthen - 1));
    requires nnow == 0 || \valid_read(now + (0 .. nnow - 1));
    requires cap == 0 || \valid(out + (0 .. cap - 1));
    requires count == \null || \valid(count);
    requires then_chosen == \null || \valid_read(then_chosen + (0 .. VRAM_PLAN_NAME_MAX - 1));
    requires now_chosen == \null || \valid_read(now_chosen + (0 .. VRAM_PLAN_NAME_MAX - 1));
    requires nthen <= SIZE_MAX - 1;
    requires \separated(out + (0 .. cap - 1), count);
    assigns *count, out[0 .. cap - 1];
    ensures \result == VRAM_OK || \result == VRAM_E_BUFFER || \result == VRAM_E_INVALID;
    ensures \result == VRAM_OK ==> *count <= cap;
    ensures \result == VRAM_E_BUFFER ==> *count > cap;
    ensures \result != VRAM_E_INVALID ==> *count <= nthen + 1; */
VRAM_DEF VRAM_NODISCARD vram_status vram_plan_changes(const char *then_chosen,
                                                      const char *now_chosen,
                                                      const vram_outcome *then, size_t nthen,
                                                      const vram_outcome *now, size_t nnow,
                                                      vram_change *out, size_t cap,
                                                      size_t *count) {
    size_t n = 0, i;
    if (count == NULL || (nthen != 0 && then == NULL) || (nnow != 0 && now == NULL) ||
        (cap != 0 && out == NULL))
        return VRAM_E_INVALID;
    if (!vram_plan_same_chosen(then_chosen, now_chosen)) {
        if (n < cap) {
            vram_change ch;
            ch.component = -1;
            ch.then.component = ch.now.component = -1;
            ch.then.device = ch.now.device = VRAM_PLAN_NONE;
            ch.then.fits = ch.now.fits = 0;
            out[n] = ch;
        }
        n++;
    }
    /*@ loop invariant 0 <= i <= nthen;
        loop invariant n <= i + 1;
        loop assigns i, n, out[0 .. cap - 1];
        loop variant nthen - i; */
    for (i = 0; i < nthen; i++) {
        const vram_outcome t = then[i];
        vram_outcome w;
        if (t.component < 0 || (size_t)t.component >= nnow) continue;
        w = now[t.component];
        if (w.device == t.device && w.fits == t.fits) continue;
        if (n < cap) {
            /* built as a value, stored once: one write for the prover to follow, not four */
            vram_change ch;
            ch.component = t.component;
            ch.then = t;
            ch.now = w;
            ch.now.component = t.component;
            out[n] = ch;
        }
        n++;
    }
    *count = n;
    return n > cap ? VRAM_E_BUFFER : VRAM_OK;
}

#endif /* VRAMKIT_PLAN_H */
