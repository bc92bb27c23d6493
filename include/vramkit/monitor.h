/* vramkit/monitor.h — watch device memory over time and say when it looks wrong.
 * Fed memory samples (time, device, used/free/total, optional epoch marks), it raises
 * warnings as data: near the limit, a suspected leak between epochs, a rising floor. Pure:
 * the caller owns the monitor and the warning array; nothing is allocated or printed. */
#ifndef VRAMKIT_MONITOR_H
#define VRAMKIT_MONITOR_H

#include "base.h"
#include "device.h"

/* The rules (each warning comes with a recommendation; leaks are judged between epochs,
 * where a training loop's memory should return to the same level).
 *
 * Samples. Each sample is one device at one moment: used, free and total bytes. "Used" is
 * what the caller measures; the driver's samplers (driver/gpustats/gpustats.h, `vramkit watch`)
 * give total - free, i.e. every process's memory on the device, as nvidia-smi shows it.
 * Time is in milliseconds from any origin and never goes back on one device.
 *
 * Epochs. A sample may carry an epoch mark: it is the last sample of an epoch and the
 * first mark opens epoch 1 (so mark once before the first epoch, then after each one).
 * Epoch k is the samples after mark k-1 up to and including mark k; samples before the
 * first mark belong to no epoch (loading a model is not a leak). Marks are per device.
 *
 * NEAR_LIMIT (every sample): used >= limit x total (exactly: used * 10^6 >= limit_ppm *
 * total), default limit 90%. Raised when a sample meets the condition while the rule is
 * armed; it then stays quiet until a sample's used falls strictly below (limit - rearm) x
 * total (default rearm 5 points of total, so 85%), which re-arms it. Between the two
 * levels nothing changes (hysteresis: a figure hovering at the limit warns once).
 *
 * LEAK (at a mark that closes an epoch): the epoch's growth, used at this mark minus used
 * at the previous mark, is strictly more than leak_bytes (default 100 MB = 100 x 10^6
 * bytes). Raised at the first epoch of a run of such epochs; re-armed by an
 * epoch whose growth is not above the threshold (a shrink counts as no growth).
 *
 * RISING_FLOOR (at a mark that closes an epoch): the floor of an epoch is the least used
 * among its samples. Epoch k (k >= 2) rises when its floor is at least floor_rise_bytes
 * (default 1 MB) above epoch k-1's. Raised when floor_epochs consecutive epochs rose
 * (default 3: at the earliest when epoch 4 closes), so a slow leak that stays under
 * leak_bytes per epoch still shows. Re-armed by an epoch whose floor does not rise; then
 * floor_epochs new rises are needed.
 *
 * One sample raises at most VRAM_MONITOR_MAX_RAISED warnings, in the order of the table.
 * Each rule keeps its state per device. */

/* ---- types -------------------------------------------------------------------------- */

/* Defaults of the zero fields of vram_monitor_config. */
#define VRAM_MONITOR_DEFAULT_LIMIT 0.90
#define VRAM_MONITOR_DEFAULT_REARM 0.05 /* of total; min(0.05, limit) */
#define VRAM_MONITOR_DEFAULT_LEAK_BYTES UINT64_C(100000000) /* 100 MB: more than allocator
                                                                noise, less than one batch of
                                                                a typical training step */
#define VRAM_MONITOR_DEFAULT_FLOOR_EPOCHS 3u
#define VRAM_MONITOR_DEFAULT_FLOOR_RISE UINT64_C(1000000) /* 1 MB: below it a floor is flat */

#define VRAM_MONITOR_MAX_DEVICES VRAM_MAX_DEVICES
#define VRAM_MONITOR_MAX_RAISED 3 /* warnings one sample can raise: one per rule */

/* What to watch for. Zero-initialise and set what differs; every zero field means its
 * documented default (vram_monitor_defaults). */
typedef struct vram_monitor_config {
    double limit;              /* near-limit level, fraction of total in (0, 1], kept to
                                  the nearest millionth; 0: 0.90 */
    double rearm;              /* the near-limit warning re-arms below (limit - rearm) x
                                  total; in (0, limit]; 0: min(0.05, limit). rearm = limit:
                                  once per run */
    uint64_t leak_bytes;       /* epoch growth above this is a suspected leak; 0: 100 MB
                                  (10^8 bytes); UINT64_MAX: the rule never fires */
    uint32_t floor_epochs;     /* consecutive rising floors that raise RISING_FLOOR; 0: 3 */
    uint64_t floor_rise_bytes; /* the least rise of a floor that counts; 0: 1 MB (10^6) */
} vram_monitor_config;

/* One measurement of one device. */
typedef struct vram_monitor_sample {
    uint64_t time_ms;    /* any origin; never less than the device's previous sample */
    int device;          /* 0 .. VRAM_MONITOR_MAX_DEVICES - 1 */
    uint64_t used_bytes; /* <= total_bytes */
    uint64_t free_bytes; /* <= total_bytes; carried for reports, the rules use used */
    uint64_t total_bytes; /* > 0 */
    int epoch_mark;      /* nonzero: this sample ends an epoch and opens the next */
} vram_monitor_sample;

typedef enum vram_monitor_severity {
    VRAM_MONITOR_NOTICE = 1,  /* worth a look: a trend, not yet a problem */
    VRAM_MONITOR_WARNING = 2  /* act on it, or the run may fail */
} vram_monitor_severity;

/* The warnings: X(id, name, severity, summary, recommendation). The driver prints the
 * summary with {used}, {total}, {free}, {percent}, {limit}, {growth}, {threshold}, {from},
 * {to}, {epoch}, {epochs} replaced from the vram_monitor_warning fields of those names. */
#define VRAM_MONITOR_WARNING_LIST(X)                                                        \
    X(VRAM_MONITOR_NEAR_LIMIT, "near_limit", VRAM_MONITOR_WARNING,                          \
      "{used} of {total} in use ({percent}), at or above the {limit} limit; {free} free",   \
      "free cached blocks (torch.cuda.empty_cache()), lower the batch or chunk size, or "  \
      "load in a smaller precision (vramkit plan); other processes on the GPU count too")  \
    X(VRAM_MONITOR_LEAK, "leak", VRAM_MONITOR_WARNING,                                      \
      "suspected leak: used grew by {growth} over epoch {epoch} ({from} -> {to}), more "    \
      "than the {threshold} threshold",                                                     \
      "look for tensors kept across epochs (a loss kept with its graph, lists that grow, "  \
      "caches); detach what you log (loss.item()), run gc.collect() and empty the cache "   \
      "between epochs, and compare the epoch-end figures")                                  \
    X(VRAM_MONITOR_RISING_FLOOR, "rising_floor", VRAM_MONITOR_NOTICE,                       \
      "the least memory in use rose in each of the last {epochs} epochs ({from} -> {to} "  \
      "by epoch {epoch}): memory that is never given back",                                 \
      "a slow leak stays under the per-epoch threshold: check what survives an epoch "      \
      "(optimizer state created late, growing caches, fragmentation); if it keeps rising "  \
      "the run will end out of memory")

typedef enum vram_monitor_warning_id {
#define VRAM__MONITOR_ID_ENUM(id, name, sev, text, rec) id,
    VRAM_MONITOR_WARNING_LIST(VRAM__MONITOR_ID_ENUM)
#undef VRAM__MONITOR_ID_ENUM
    VRAM_MONITOR_WARNING_COUNT
} vram_monitor_warning_id;

/* One warning, as numbers. */
typedef struct vram_monitor_warning {
    vram_monitor_warning_id id;
    vram_monitor_severity severity;
    int device;
    uint64_t time_ms;   /* of the sample that raised it */
    uint64_t epoch;     /* the epoch the sample belongs to (marks before it; a mark belongs
                           to the epoch it closes); 0 before the first mark */
    uint64_t used, free, total; /* the sample's figures */
    uint32_t limit_ppm; /* NEAR_LIMIT: the limit in millionths of total */
    uint64_t threshold; /* bytes: NEAR_LIMIT the limit in bytes (least used that meets
                           it), LEAK leak_bytes, RISING_FLOOR floor_rise_bytes */
    uint64_t growth;    /* LEAK: to - from; RISING_FLOOR: to - from (the whole rise) */
    uint64_t from, to;  /* LEAK: used at the previous and this mark; RISING_FLOOR: the
                           floor before the run of rises and the floor of this epoch */
    uint32_t epochs;    /* RISING_FLOOR: rises in a row (floor_epochs) */
} vram_monitor_warning;

/* One device's state; all zero before its first sample. */
typedef struct vram_monitor_device {
    uint64_t samples;     /* samples fed */
    uint64_t marks;       /* epoch marks fed; completed epochs = marks - 1 once marks >= 1 */
    uint64_t last_time_ms;
    uint64_t used, free, total; /* the last sample */
    uint64_t min_used, max_used; /* over every sample */
    uint64_t mark_used;   /* used at the last mark (marks >= 1) */
    uint64_t floor;       /* least used in the epoch in progress (marks >= 1); UINT64_MAX:
                             no sample in it yet */
    uint64_t prev_floor;  /* floor of the last completed epoch (marks >= 2) */
    uint64_t run_from;    /* floor before the current run of rises */
    uint32_t rises;       /* consecutive rising floors, ending at the last completed epoch */
    int near_raised;      /* 1: NEAR_LIMIT raised, not re-armed yet */
    int leak_raised;      /* 1: LEAK raised in the last completed epoch's run */
    int floor_raised;     /* 1: RISING_FLOOR raised in the current run */
} vram_monitor_device;

/* A monitor over up to VRAM_MONITOR_MAX_DEVICES devices (about 10 KiB; the caller owns it). */
typedef struct vram_monitor {
    vram_monitor_config config; /* resolved */
    uint32_t limit_ppm, rearm_ppm;
    uint64_t raised[VRAM_MONITOR_WARNING_COUNT]; /* warnings raised so far, per id */
    vram_monitor_device dev[VRAM_MONITOR_MAX_DEVICES];
} vram_monitor;

/* ---- functions, in the order a user calls them ------------------------------------ */

/* Name ("near_limit"), summary template, recommendation and severity of a warning id.
 * Guarantees: static strings; when id is out of range, the name is "unknown" (never NULL),
 * the template and recommendation NULL (texts, not names: callers word their own) and the
 * severity 0. */
VRAM_DEF const char *vram_monitor_warning_name(vram_monitor_warning_id id) {
    VRAM_X_NAME(id, VRAM_MONITOR_WARNING_LIST, VRAM_X_COL2, "unknown");
}
VRAM_DEF const char *vram_monitor_warning_text(vram_monitor_warning_id id) {
    VRAM_X_NAME(id, VRAM_MONITOR_WARNING_LIST, VRAM_X_COL4, NULL);
}
VRAM_DEF const char *vram_monitor_warning_recommendation(vram_monitor_warning_id id) {
    VRAM_X_NAME(id, VRAM_MONITOR_WARNING_LIST, VRAM_X_COL5, NULL);
}
VRAM_DEF vram_monitor_severity vram_monitor_warning_severity(vram_monitor_warning_id id) {
    VRAM_X_NAME(id, VRAM_MONITOR_WARNING_LIST, VRAM_X_COL3, (vram_monitor_severity)0);
}

/* "notice" / "warning"; "unknown" for anything else, never NULL. */
VRAM_DEF const char *vram_monitor_severity_name(vram_monitor_severity s) {
    switch (s) {
    case VRAM_MONITOR_NOTICE: return "notice";
    case VRAM_MONITOR_WARNING: return "warning";
    default: return "unknown";
    }
}

/* The config with every zero field resolved (limit 0.90, rearm min(0.05, limit), leak
 * 100 MB, 3 epochs, 1 MB rise). Requires: cfg valid. Guarantees: no field is 0; the
 * values are not range-checked here (vram_monitor_init does that). */
VRAM_DEF vram_monitor_config vram_monitor_defaults(const vram_monitor_config *cfg) {
    vram_monitor_config c = *cfg;
    if (c.limit == 0.0) c.limit = VRAM_MONITOR_DEFAULT_LIMIT;
    if (c.rearm == 0.0)
        c.rearm = c.limit < VRAM_MONITOR_DEFAULT_REARM ? c.limit : VRAM_MONITOR_DEFAULT_REARM;
    if (c.leak_bytes == 0) c.leak_bytes = VRAM_MONITOR_DEFAULT_LEAK_BYTES;
    if (c.floor_epochs == 0) c.floor_epochs = VRAM_MONITOR_DEFAULT_FLOOR_EPOCHS;
    if (c.floor_rise_bytes == 0) c.floor_rise_bytes = VRAM_MONITOR_DEFAULT_FLOOR_RISE;
    return c;
}

/* A fraction in (0, 1] as millionths in [1, 10^6], rounded to nearest. Guarantees: VRAM_OK
 * and *ppm set, or VRAM_E_INVALID (NaN, <= 0, > 1) with *ppm untouched. */
VRAM_DEF VRAM_NODISCARD vram_status vram__monitor_ppm(double f, uint32_t *ppm) {
    double x;
    if (!(f > 0.0) || !(f <= 1.0)) return VRAM_E_INVALID;
    x = f * 1e6 + 0.5;
    x = x < 1e6 ? x : 1e6;
    x = x > 1.0 ? x : 1.0;
    *ppm = (uint32_t)x;
    return VRAM_OK;
}

/* The least x with x * 10^6 >= ppm * total, i.e. ceil(ppm * total / 10^6), without a
 * 128-bit product. Requires: ppm <= 10^6. Guarantees: the result is <= total. */
VRAM_DEF uint64_t vram__monitor_level(uint64_t total, uint32_t ppm) {
    uint64_t q = total / 1000000u, r = total % 1000000u;
    uint64_t rp = r * ppm; /* < 10^12 */
    return q * ppm + rp / 1000000u + (rp % 1000000u != 0 ? 1u : 0u);
}

/* Resets *m to a monitor with no samples, under the resolved cfg (NULL: all defaults).
 * Requires: m valid. Guarantees: VRAM_OK; or VRAM_E_INVALID for m NULL, a limit or rearm
 * that is NaN or outside its range (limit in (0, 1], rearm in (0, limit]), and then *m
 * is untouched. */
VRAM_DEF VRAM_NODISCARD vram_status vram_monitor_init(vram_monitor *m,
                                                      const vram_monitor_config *cfg) {
    vram_monitor_config zero = {0.0, 0.0, 0u, 0u, 0u};
    vram_monitor_config c;
    uint32_t lim = 0, re = 0;
    size_t i;
    if (m == NULL) return VRAM_E_INVALID;
    c = vram_monitor_defaults(cfg != NULL ? cfg : &zero);
    if (vram__monitor_ppm(c.limit, &lim) != VRAM_OK) return VRAM_E_INVALID;
    if (!(c.rearm > 0.0) || !(c.rearm <= c.limit)) return VRAM_E_INVALID;
    if (vram__monitor_ppm(c.rearm, &re) != VRAM_OK) return VRAM_E_INVALID;
    if (re > lim) re = lim; /* rounding of a rearm equal to the limit */
    m->config = c;
    m->limit_ppm = lim;
    m->rearm_ppm = re;
    for (i = 0; i < (size_t)VRAM_MONITOR_WARNING_COUNT; i++) m->raised[i] = 0;
    for (i = 0; i < (size_t)VRAM_MONITOR_MAX_DEVICES; i++) {
        vram_monitor_device z = {0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u, 0, 0, 0};
        m->dev[i] = z;
    }
    return VRAM_OK;
}

/* A warning of rule `id` raised by sample s in `epoch`, rule-specific numbers zero.
 * Requires: w, s valid. */
VRAM_DEF void vram__monitor_warning_fill(vram_monitor_warning *w, vram_monitor_warning_id id,
                                         const vram_monitor_sample *s, uint64_t epoch) {
    w->id = id;
    w->severity = vram_monitor_warning_severity(id);
    w->device = s->device;
    w->time_ms = s->time_ms;
    w->epoch = epoch;
    w->used = s->used_bytes;
    w->free = s->free_bytes;
    w->total = s->total_bytes;
    w->limit_ppm = 0;
    w->threshold = 0;
    w->growth = 0;
    w->from = 0;
    w->to = 0;
    w->epochs = 0;
}

/* Feeds one sample: updates its device's state and writes the warnings it raises to
 * out[0 .. *n_out), in table order (NEAR_LIMIT, LEAK, RISING_FLOOR).
 * Requires: m initialised by vram_monitor_init; s valid; out valid for cap entries (may
 * be NULL when cap is 0); n_out valid.
 * Guarantees: VRAM_OK with *n_out <= VRAM_MONITOR_MAX_RAISED warnings written.
 *   VRAM_E_BUFFER when the sample raises more than cap warnings: *n_out says how many,
 *   nothing is written and the monitor is unchanged (feed the same sample again with room
 *   for VRAM_MONITOR_MAX_RAISED and nothing is lost).
 *   VRAM_E_RANGE for a device outside 0 .. VRAM_MONITOR_MAX_DEVICES - 1; VRAM_E_INVALID
 *   for NULL arguments, total 0, used or free above total, or a time before the device's
 *   last sample. On any error but VRAM_E_BUFFER *n_out is 0 (when n_out is valid) and the
 *   monitor is unchanged. */
VRAM_DEF VRAM_NODISCARD vram_status vram_monitor_feed(vram_monitor *m,
                                                      const vram_monitor_sample *s,
                                                      vram_monitor_warning *out, size_t cap,
                                                      size_t *n_out) {
    vram_monitor_warning w[VRAM_MONITOR_MAX_RAISED];
    vram_monitor_device d;
    size_t n = 0, i;
    uint64_t used, epoch, near_level, rearm_level, bar;
    if (n_out == NULL) return VRAM_E_INVALID;
    *n_out = 0;
    if (m == NULL || s == NULL || (out == NULL && cap != 0)) return VRAM_E_INVALID;
    if (s->device < 0 || s->device >= VRAM_MONITOR_MAX_DEVICES) return VRAM_E_RANGE;
    if (s->total_bytes == 0 || s->used_bytes > s->total_bytes || s->free_bytes > s->total_bytes)
        return VRAM_E_INVALID;
    d = m->dev[s->device];
    if (d.samples > 0 && s->time_ms < d.last_time_ms) return VRAM_E_INVALID;
    used = s->used_bytes;
    epoch = d.marks;

    /* the sample itself */
    d.min_used = d.samples == 0 ? used : vram__min_u64(d.min_used, used);
    d.max_used = d.samples == 0 ? used : vram__max_u64(d.max_used, used);
    d.samples++;
    d.last_time_ms = s->time_ms;
    d.used = used;
    d.free = s->free_bytes;
    d.total = s->total_bytes;
    if (d.marks >= 1) d.floor = vram__min_u64(d.floor, used);

    /* NEAR_LIMIT: raise on meeting the limit while armed; re-arm strictly below
     * limit - rearm (a level of 0 is never passed: once per run) */
    near_level = vram__monitor_level(s->total_bytes, m->limit_ppm);
    rearm_level = vram__monitor_level(s->total_bytes, m->limit_ppm - m->rearm_ppm);
    if (used >= near_level) {
        if (!d.near_raised) {
            vram__monitor_warning_fill(&w[n], VRAM_MONITOR_NEAR_LIMIT, s, epoch);
            w[n].limit_ppm = m->limit_ppm;
            w[n].threshold = near_level;
            n++;
            d.near_raised = 1;
        }
    } else if (used < rearm_level) {
        d.near_raised = 0;
    }

    if (s->epoch_mark) {
        if (d.marks >= 1) {
            /* epoch number `epoch` (>= 1) is complete: LEAK */
            uint64_t growth = used > d.mark_used ? used - d.mark_used : 0u;
            if (growth > m->config.leak_bytes) {
                if (!d.leak_raised) {
                    vram__monitor_warning_fill(&w[n], VRAM_MONITOR_LEAK, s, epoch);
                    w[n].threshold = m->config.leak_bytes;
                    w[n].growth = growth;
                    w[n].from = d.mark_used;
                    w[n].to = used;
                    n++;
                    d.leak_raised = 1;
                }
            } else {
                d.leak_raised = 0;
            }
            /* RISING_FLOOR, from the second complete epoch on */
            if (d.marks >= 2) {
                if (vram__add_u64(d.prev_floor, m->config.floor_rise_bytes, &bar) == VRAM_OK &&
                    d.floor >= bar) {
                    if (d.rises == 0) d.run_from = d.prev_floor;
                    if (d.rises < UINT32_MAX) d.rises++;
                } else {
                    d.rises = 0;
                    d.floor_raised = 0;
                }
                if (d.rises >= m->config.floor_epochs && !d.floor_raised) {
                    vram__monitor_warning_fill(&w[n], VRAM_MONITOR_RISING_FLOOR, s, epoch);
                    w[n].threshold = m->config.floor_rise_bytes;
                    w[n].from = d.run_from;
                    w[n].to = d.floor;
                    w[n].growth = d.floor - d.run_from;
                    w[n].epochs = m->config.floor_epochs;
                    n++;
                    d.floor_raised = 1;
                }
            }
            d.prev_floor = d.floor;
        }
        d.marks++;
        d.mark_used = used;
        d.floor = UINT64_MAX; /* the next epoch has no sample yet */
    }

    if (n > cap) {
        *n_out = n;
        return VRAM_E_BUFFER;
    }
    for (i = 0; i < n; i++) {
        out[i] = w[i];
        m->raised[w[i].id]++;
    }
    m->dev[s->device] = d;
    *n_out = n;
    return VRAM_OK;
}

/* A device's state (read-only). Requires: m valid. Guarantees: NULL for a device out of
 * range, else a pointer into *m (samples == 0: never fed). */
VRAM_DEF const vram_monitor_device *vram_monitor_device_state(const vram_monitor *m, int device) {
    if (m == NULL || device < 0 || device >= VRAM_MONITOR_MAX_DEVICES) return NULL;
    return &m->dev[device];
}

/* Completed epochs of a device (marks - 1, 0 before the second mark). Requires: d valid. */
VRAM_DEF uint64_t vram_monitor_epochs_done(const vram_monitor_device *d) {
    return d->marks > 0 ? d->marks - 1u : 0u;
}

#endif /* VRAMKIT_MONITOR_H */
