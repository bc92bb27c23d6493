/* vramkit/supervise.h — what a supervisor does when its service's child process ends.
 * Walks a chain of load strategies until one becomes ready, then keeps it running: restarts
 * after a death (exponential backoff, reset by a stable period), moves down the chain after
 * an OOM or a sticky CUDA error when asked (degrade), and ends a crash loop. Pure: the
 * caller measures the times and runs the processes; this only decides. */
#ifndef VRAMKIT_SUPERVISE_H
#define VRAMKIT_SUPERVISE_H

#include "attempt.h"
#include "base.h"

/* The rules, first that applies wins, for an attempt that ended:
 *   1. it was asked to stop (the supervisor passed a stop signal on to it)   -> EXIT, stopped
 *   2. it exited with code 0, ready or not (a service that finished)         -> EXIT, clean_exit
 *   3. it ended before it was ready (crash, OOM, sticky error, timeout, any failure, could
 *      not start), as `vramkit try` moves on:
 *        a later strategy is left                                            -> NEXT, failed_before_ready
 *        none                                                                -> GIVE_UP, chain_exhausted
 *   4. it died after it was ready. First, a run of at least stable_ms after ready was a
 *      stable period: the count of restarts in a row, and with it the backoff, starts again.
 *        degrade is on, the death was an OOM or a sticky CUDA error, and a later strategy
 *        is left (a smaller load frees memory; a corrupt context needs a new process)  -> NEXT, degrade
 *        fewer than `restarts` restarts in a row so far                      -> RESTART, restart
 *        no restart was asked for (restarts == 0)                            -> EXIT, no_restart
 *        the restarts in a row are used up: a crash loop                     -> GIVE_UP, crash_loop
 * A degrade starts the count of restarts in a row again (another strategy is another
 * service); it does not use one. The delay before restart k in a row is
 * backoff_ms x 2^(k-1), at most backoff_max_ms; NEXT starts at once. */

/* ---- types -------------------------------------------------------------------------- */

/* Defaults of the zero fields of vram_supervise_config. */
#define VRAM_SUPERVISE_DEFAULT_BACKOFF_MS 1000u      /* first restart after 1 s */
#define VRAM_SUPERVISE_DEFAULT_BACKOFF_MAX_MS 60000u /* then 2, 4, ... at most 60 s */
#define VRAM_SUPERVISE_DEFAULT_STABLE_MS 60000u      /* a minute of service after ready */
#define VRAM_SUPERVISE_MAX_RESTARTS 1000000u         /* the most restarts in a row allowed */
#define VRAM_SUPERVISE_MAX_STRATEGIES 1024           /* the longest chain */

/* The policy. Zero-initialise and set what differs; zero means the documented default. */
typedef struct vram_supervise_config {
    uint32_t restarts;       /* restarts in a row allowed after a death after ready, at most
                                VRAM_SUPERVISE_MAX_RESTARTS; 0: none */
    int degrade;             /* nonzero: an OOM or sticky CUDA error after ready moves down
                                the chain */
    uint32_t backoff_ms;     /* delay before the first restart in a row; 0: 1 s */
    uint32_t backoff_max_ms; /* the longest delay; 0: 60 s; raised to backoff_ms when below */
    uint32_t stable_ms;      /* a run after ready this long resets the count; 0: 60 s */
} vram_supervise_config;

/* X(id, name, text): what to do next. The name is stable (JSON, scripts). */
#define VRAM_SUPERVISE_ACTION_LIST(X)                                             \
    X(VRAM_SUPERVISE_NEXT, "next", "start the next strategy of the chain now")   \
    X(VRAM_SUPERVISE_RESTART, "restart", "start the same strategy again after the delay") \
    X(VRAM_SUPERVISE_EXIT, "exit", "end with the child's own status")             \
    X(VRAM_SUPERVISE_GIVE_UP, "give_up", "end with failure")

typedef enum vram_supervise_action {
#define VRAM__SUPERVISE_ACTION_ENUM(id, name, text) id,
    VRAM_SUPERVISE_ACTION_LIST(VRAM__SUPERVISE_ACTION_ENUM)
#undef VRAM__SUPERVISE_ACTION_ENUM
    VRAM_SUPERVISE_ACTION_COUNT
} vram_supervise_action;

/* X(id, name, text): why (the rule of the list above that decided). */
#define VRAM_SUPERVISE_WHY_LIST(X)                                                           \
    X(VRAM_SUPERVISE_WHY_STOPPED, "stopped", "it was asked to stop")                        \
    X(VRAM_SUPERVISE_WHY_CLEAN_EXIT, "clean_exit", "it exited with code 0")                 \
    X(VRAM_SUPERVISE_WHY_FAILED_BEFORE_READY, "failed_before_ready",                        \
      "it failed before it was ready: the next strategy")                                   \
    X(VRAM_SUPERVISE_WHY_CHAIN_EXHAUSTED, "chain_exhausted",                                \
      "it failed before it was ready and no strategy is left")                              \
    X(VRAM_SUPERVISE_WHY_DEGRADE, "degrade",                                                \
      "it ran out of memory or hit a sticky CUDA error after it was ready: the next strategy") \
    X(VRAM_SUPERVISE_WHY_RESTART, "restart", "it died after it was ready: restarted")       \
    X(VRAM_SUPERVISE_WHY_NO_RESTART, "no_restart",                                          \
      "it died after it was ready and no restart was asked for")                            \
    X(VRAM_SUPERVISE_WHY_CRASH_LOOP, "crash_loop",                                          \
      "it died after it was ready again and again, with no stable period between: a crash loop")

typedef enum vram_supervise_why {
#define VRAM__SUPERVISE_WHY_ENUM(id, name, text) id,
    VRAM_SUPERVISE_WHY_LIST(VRAM__SUPERVISE_WHY_ENUM)
#undef VRAM__SUPERVISE_WHY_ENUM
    VRAM_SUPERVISE_WHY_COUNT
} vram_supervise_why;

/* How an attempt ended, as the supervisor tells it. */
typedef struct vram_supervise_end {
    vram_attempt_outcome outcome; /* vram_attempt_explain's (not ready in time: TIMEOUT) */
    int ready;                    /* nonzero: it became ready before it ended */
    uint64_t ready_ms;            /* how long it ran after it became ready */
    int stop_requested;           /* nonzero: the supervisor was asked to stop it */
} vram_supervise_end;

/* What to do next. */
typedef struct vram_supervise_decision {
    vram_supervise_action action;
    vram_supervise_why why;
    int strategy;      /* NEXT, RESTART: the strategy to start; EXIT, GIVE_UP: the last one */
    uint32_t delay_ms; /* RESTART: wait this long first; otherwise 0 */
    uint32_t restart;  /* RESTART: which restart in a row this is (1 = the first); else 0 */
} vram_supervise_decision;

/* The supervisor's state. Fields are read-only for callers; change it only through the
 * functions below. */
typedef struct vram_supervise {
    vram_supervise_config cfg; /* resolved (vram_supervise_defaults) */
    int count;                 /* strategies in the chain */
    int current;               /* the strategy running, or to run next */
    uint32_t in_a_row;         /* restarts since the last stable period or strategy change */
    uint32_t restarts;         /* restarts in all (saturates at UINT32_MAX) */
    uint32_t degrades;         /* moves down the chain after ready */
    int done;                  /* EXIT or GIVE_UP was decided: nothing more to start */
} vram_supervise;

/* ---- functions, in the order a supervisor calls them --------------------------------- */

/* X-macro lookups: names and texts of actions and reasons ("?" out of range). */
/*@ assigns \nothing;
    ensures \result != \null; */
VRAM_DEF const char *vram_supervise_action_name(vram_supervise_action a) {
    VRAM_X_NAME(a, VRAM_SUPERVISE_ACTION_LIST, VRAM_X_COL2, "?");
}

/*@ assigns \nothing;
    ensures \result != \null; */
VRAM_DEF const char *vram_supervise_why_name(vram_supervise_why w) {
    VRAM_X_NAME(w, VRAM_SUPERVISE_WHY_LIST, VRAM_X_COL2, "?");
}

/*@ assigns \nothing;
    ensures \result != \null; */
VRAM_DEF const char *vram_supervise_why_text(vram_supervise_why w) {
    VRAM_X_NAME(w, VRAM_SUPERVISE_WHY_LIST, VRAM_X_COL3, "?");
}

/* The config with every zero field replaced by its default, and backoff_max_ms raised to
 * backoff_ms when below it. restarts is kept as given (the caller checks its range). */
/*@ requires \valid_read(c);
    assigns \nothing;
    ensures \result.backoff_ms > 0 && \result.backoff_max_ms >= \result.backoff_ms;
    ensures \result.stable_ms > 0;
    ensures \result.restarts == c->restarts && \result.degrade == c->degrade; */
VRAM_DEF vram_supervise_config vram_supervise_defaults(const vram_supervise_config *c) {
    vram_supervise_config r = *c;
    if (r.backoff_ms == 0) r.backoff_ms = VRAM_SUPERVISE_DEFAULT_BACKOFF_MS;
    if (r.backoff_max_ms == 0) r.backoff_max_ms = VRAM_SUPERVISE_DEFAULT_BACKOFF_MAX_MS;
    if (r.backoff_max_ms < r.backoff_ms) r.backoff_max_ms = r.backoff_ms;
    if (r.stable_ms == 0) r.stable_ms = VRAM_SUPERVISE_DEFAULT_STABLE_MS;
    return r;
}

/* The delay before restart k in a row (k >= 1): base x 2^(k-1), at most max, without
 * overflow; 0 for k == 0. */
/*@ requires base <= max;
    assigns \nothing;
    ensures k == 0 ==> \result == 0;
    ensures k > 0 ==> base <= \result <= max;
    ensures k == 1 ==> \result == base; */
VRAM_DEF uint32_t vram_supervise_backoff(uint32_t base, uint32_t max, uint32_t k) {
    uint32_t d = base;
    uint32_t i = 1;
    if (k == 0) return 0;
    /*@ loop invariant 1 <= i <= k;
        loop invariant base <= d <= max;
        loop invariant i == 1 ==> d == base;
        loop assigns i, d;
        loop variant k - i; */
    while (i < k && d < max) {
        d = d > max / 2u ? max : d * 2u;
        i++;
    }
    return d;
}

/* Starts a chain of `count` strategies at the first, under cfg (NULL: all defaults).
 * Requires: s valid. Guarantees: VRAM_OK with *s ready (current 0, nothing counted);
 * VRAM_E_INVALID (s untouched) for count outside 1 .. VRAM_SUPERVISE_MAX_STRATEGIES or
 * cfg->restarts above VRAM_SUPERVISE_MAX_RESTARTS. */
/*@ requires \valid(s);
    requires cfg == \null || (\valid_read(cfg) && \separated(s, cfg));
    assigns *s;
    ensures \result == VRAM_OK || \result == VRAM_E_INVALID;
    ensures \result == VRAM_OK ==> s->count == count && s->current == 0 && s->done == 0 &&
            s->in_a_row == 0 && s->cfg.restarts <= VRAM_SUPERVISE_MAX_RESTARTS &&
            s->cfg.backoff_ms > 0 && s->cfg.backoff_ms <= s->cfg.backoff_max_ms &&
            s->cfg.stable_ms > 0;
    ensures \result == VRAM_OK <==>
            (1 <= count <= VRAM_SUPERVISE_MAX_STRATEGIES &&
             (cfg == \null || cfg->restarts <= VRAM_SUPERVISE_MAX_RESTARTS)); */
VRAM_DEF VRAM_NODISCARD vram_status vram_supervise_init(vram_supervise *s,
                                                        const vram_supervise_config *cfg,
                                                        int count) {
    vram_supervise_config zero = {0u, 0, 0u, 0u, 0u};
    if (count < 1 || count > VRAM_SUPERVISE_MAX_STRATEGIES) return VRAM_E_INVALID;
    if (cfg != NULL && cfg->restarts > VRAM_SUPERVISE_MAX_RESTARTS) return VRAM_E_INVALID;
    s->cfg = vram_supervise_defaults(cfg != NULL ? cfg : &zero);
    s->count = count;
    s->current = 0;
    s->in_a_row = 0;
    s->restarts = 0;
    s->degrades = 0;
    s->done = 0;
    return VRAM_OK;
}

/* The decision and the counters after it (internal: computed from values, then stored). */
typedef struct vram__supervise_step {
    vram_supervise_decision d;
    uint32_t in_a_row; /* the restarts in a row after the decision */
    int done;
} vram__supervise_step;

/* The rules at the top, on plain values: the strategy `cur` of `count` ended with `o`;
 * `ready`, `ready_ms`, `stop` as in vram_supervise_end; in_a_row restarts in a row so far,
 * `allowed` of them allowed. */
/*@ requires 1 <= count <= VRAM_SUPERVISE_MAX_STRATEGIES && 0 <= cur < count;
    requires allowed <= VRAM_SUPERVISE_MAX_RESTARTS && in_a_row <= allowed;
    requires 0 < backoff <= backoff_max;
    assigns \nothing;
    ensures 0 <= \result.d.strategy < count && \result.in_a_row <= allowed;
    ensures \result.d.action == VRAM_SUPERVISE_NEXT ==>
            \result.d.strategy == cur + 1 && \result.done == 0 && \result.in_a_row == 0;
    ensures \result.d.action == VRAM_SUPERVISE_RESTART ==>
            \result.d.strategy == cur && \result.done == 0 &&
            backoff <= \result.d.delay_ms <= backoff_max &&
            1 <= \result.d.restart <= allowed && \result.in_a_row == \result.d.restart;
    ensures (\result.d.action == VRAM_SUPERVISE_EXIT || \result.d.action == VRAM_SUPERVISE_GIVE_UP) ==>
            \result.d.strategy == cur && \result.done == 1;
    ensures \result.d.action == VRAM_SUPERVISE_NEXT || \result.d.action == VRAM_SUPERVISE_RESTART ||
            \result.d.action == VRAM_SUPERVISE_EXIT || \result.d.action == VRAM_SUPERVISE_GIVE_UP; */
VRAM_DEF vram__supervise_step vram__supervise_decide(int cur, int count, vram_attempt_outcome o,
                                                     int ready, uint64_t ready_ms, int stop,
                                                     uint32_t in_a_row, uint32_t allowed,
                                                     int degrade, uint32_t stable_ms,
                                                     uint32_t backoff, uint32_t backoff_max) {
    vram__supervise_step r;
    const int later = cur < count - 1;
    r.d.strategy = cur;
    r.d.delay_ms = 0u;
    r.d.restart = 0u;
    r.in_a_row = in_a_row;
    r.done = 1;
    if (stop || o == VRAM_ATTEMPT_SUCCESS) {
        r.d.action = VRAM_SUPERVISE_EXIT;
        r.d.why = stop ? VRAM_SUPERVISE_WHY_STOPPED : VRAM_SUPERVISE_WHY_CLEAN_EXIT;
        return r;
    }
    if (!ready) {
        if (!later) {
            r.d.action = VRAM_SUPERVISE_GIVE_UP;
            r.d.why = VRAM_SUPERVISE_WHY_CHAIN_EXHAUSTED;
            return r;
        }
        r.d.action = VRAM_SUPERVISE_NEXT;
        r.d.why = VRAM_SUPERVISE_WHY_FAILED_BEFORE_READY;
        r.d.strategy = cur + 1;
        r.in_a_row = 0u;
        r.done = 0;
        return r;
    }
    /* it died after it was ready; a stable period first starts the count again */
    if (ready_ms >= (uint64_t)stable_ms) r.in_a_row = 0u;
    if (degrade && later && (o == VRAM_ATTEMPT_OOM || o == VRAM_ATTEMPT_CUDA_STICKY)) {
        r.d.action = VRAM_SUPERVISE_NEXT;
        r.d.why = VRAM_SUPERVISE_WHY_DEGRADE;
        r.d.strategy = cur + 1;
        r.in_a_row = 0u;
        r.done = 0;
        return r;
    }
    if (r.in_a_row < allowed) {
        r.in_a_row = r.in_a_row + 1u;
        r.d.action = VRAM_SUPERVISE_RESTART;
        r.d.why = VRAM_SUPERVISE_WHY_RESTART;
        r.d.restart = r.in_a_row;
        r.d.delay_ms = vram_supervise_backoff(backoff, backoff_max, r.in_a_row);
        r.done = 0;
        return r;
    }
    r.d.action = allowed == 0u ? VRAM_SUPERVISE_EXIT : VRAM_SUPERVISE_GIVE_UP;
    r.d.why = allowed == 0u ? VRAM_SUPERVISE_WHY_NO_RESTART : VRAM_SUPERVISE_WHY_CRASH_LOOP;
    return r;
}

/* The attempt of s->current ended as `end` says: decides what comes next (the rules at the
 * top) and moves the state there.
 * Requires: s initialised (vram_supervise_init), end and out valid.
 * Guarantees: VRAM_OK with *out set; then 0 <= out->strategy < s->count, a NEXT names the
 * strategy after the one that ended, a RESTART the same one with
 * backoff_ms <= delay_ms <= backoff_max_ms and 1 <= restart <= cfg.restarts, and after EXIT
 * or GIVE_UP s->done is set. VRAM_E_STATE when s->done was already set, VRAM_E_INVALID for
 * an outcome outside the list; on error neither *s nor *out changes. */
/*@ requires \valid(s) && \valid_read(end) && \valid(out);
    requires \separated(s, end, out);
    requires 1 <= s->count <= VRAM_SUPERVISE_MAX_STRATEGIES && 0 <= s->current < s->count;
    requires s->cfg.restarts <= VRAM_SUPERVISE_MAX_RESTARTS && s->in_a_row <= s->cfg.restarts;
    requires 0 < s->cfg.backoff_ms <= s->cfg.backoff_max_ms;
    assigns s->current, s->in_a_row, s->restarts, s->degrades, s->done, *out;
    ensures \result == VRAM_OK || \result == VRAM_E_STATE || \result == VRAM_E_INVALID;
    ensures \result != VRAM_OK ==> s->current == \old(s->current) &&
            s->in_a_row == \old(s->in_a_row) && s->done == \old(s->done);
    ensures \result == VRAM_OK ==> 0 <= out->strategy < s->count && s->current == out->strategy;
    ensures \result == VRAM_OK ==> s->in_a_row <= s->cfg.restarts;
    ensures \result == VRAM_OK && out->action == VRAM_SUPERVISE_NEXT ==>
            out->strategy == \old(s->current) + 1 && s->done == 0;
    ensures \result == VRAM_OK && out->action == VRAM_SUPERVISE_RESTART ==>
            out->strategy == \old(s->current) && s->done == 0 &&
            s->cfg.backoff_ms <= out->delay_ms <= s->cfg.backoff_max_ms &&
            1 <= out->restart <= s->cfg.restarts;
    ensures \result == VRAM_OK && (out->action == VRAM_SUPERVISE_EXIT ||
                                   out->action == VRAM_SUPERVISE_GIVE_UP) ==> s->done == 1; */
VRAM_DEF VRAM_NODISCARD vram_status vram_supervise_ended(vram_supervise *s,
                                                         const vram_supervise_end *end,
                                                         vram_supervise_decision *out) {
    vram__supervise_step r;
    if (s->done) return VRAM_E_STATE;
    if ((int)end->outcome < 0 || (int)end->outcome >= (int)VRAM_ATTEMPT_OUTCOME_COUNT)
        return VRAM_E_INVALID;
    r = vram__supervise_decide(s->current, s->count, end->outcome, end->ready != 0, end->ready_ms,
                               end->stop_requested != 0, s->in_a_row, s->cfg.restarts,
                               s->cfg.degrade != 0, s->cfg.stable_ms, s->cfg.backoff_ms,
                               s->cfg.backoff_max_ms);
    if (r.d.action == VRAM_SUPERVISE_RESTART && s->restarts < UINT32_MAX) s->restarts++;
    if (r.d.why == VRAM_SUPERVISE_WHY_DEGRADE && s->degrades < UINT32_MAX) s->degrades++;
    s->current = r.d.strategy;
    s->in_a_row = r.in_a_row;
    s->done = r.done;
    *out = r.d;
    return VRAM_OK;
}

#endif /* VRAMKIT_SUPERVISE_H */
