/* driver/gpustats/gpustats.c — GPU memory statistics for training loops (see gpustats.h).
 * Samples come from the ops table's mem_info, go through vramkit/monitor.h, and the warnings
 * wait in a bounded queue until the loop reads them. */
#include "gpustats.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/text.h"
#include "cuda/cuda_device.h"
#include "util/clock.h"

struct vram_gpustats {
    vram_device_ops ops;
    int count;
    int host; /* the host backend: lines say "host" */
    uint64_t t0_ns;
    vram_monitor mon;
    char names[VRAM_MONITOR_MAX_DEVICES][VRAM_DEVICE_NAME_MAX];
    vram_monitor_sample last[VRAM_MONITOR_MAX_DEVICES];
    uint64_t reserved[VRAM_MONITOR_MAX_DEVICES];
    vram_monitor_warning queue[VRAM_GPUSTATS_QUEUE];
    size_t head, pending; /* oldest unread at queue[head] */
    uint64_t dropped;
    char error[256];
};

/* " (CUDA error N)" when the backend recorded one. */
static void cuda_suffix(const vram_device_ops *ops, char *buf, size_t cap) {
    int code = ops->last_error ? ops->last_error(ops->ctx) : 0;
    if (code != 0)
        snprintf(buf, cap, " (CUDA error %d)", code);
    else
        buf[0] = '\0';
}

vram_status vram_gpustats_open(const vram_device_ops *ops, const vram_monitor_config *cfg,
                               vram_gpustats **out, char *err, size_t errcap) {
    vram_device_ops table;
    vram_status st;
    vram_gpustats *g;
    char sfx[48];
    int count = 0, driver = 0;
    vram_msgf(err, errcap, "%s", "");
    if (out == NULL) {
        vram_msgf(err, errcap, "no place for the handle (out is NULL)");
        return VRAM_E_INVALID;
    }
    *out = NULL;
    if (ops == NULL) {
        memset(&table, 0, sizeof table);
        st = vram_cuda_ops(&table);
        if (st != VRAM_OK) {
            vram_msgf(err, errcap, "this vramkit was built without CUDA: no GPU backend");
            return st;
        }
    } else {
        table = *ops;
    }
    st = vram_device_ops_check(&table);
    if (st != VRAM_OK) {
        vram_msgf(err, errcap, "the device table cannot be used by this build: %s",
                  vram_status_str(st));
        return st;
    }
    st = table.device_count(table.ctx, &count);
    if (st != VRAM_OK) {
        cuda_suffix(&table, sfx, sizeof sfx);
        /* as vram_snapshot_take decides it */
        if (table.driver_version(table.ctx, &driver) == VRAM_OK && driver == 0)
            st = VRAM_E_NO_DRIVER;
        if (st == VRAM_E_NO_DRIVER)
            vram_msgf(err, errcap, "no NVIDIA driver found");
        else if (st == VRAM_E_NO_DEVICE)
            vram_msgf(err, errcap, "no usable GPU: the driver sees no device%s (check "
                                   "CUDA_VISIBLE_DEVICES)", sfx);
        else
            vram_msgf(err, errcap, "%s backend: device_count failed: %s%s", table.backend,
                      vram_status_str(st), sfx);
        return st;
    }
    if (count <= 0) {
        vram_msgf(err, errcap, "no usable GPU: the %s backend reports %d devices",
                  table.backend, count);
        return VRAM_E_NO_DEVICE;
    }
    if (count > VRAM_MONITOR_MAX_DEVICES) count = VRAM_MONITOR_MAX_DEVICES;

    g = (vram_gpustats *)calloc(1, sizeof *g);
    if (g == NULL) {
        vram_msgf(err, errcap, "out of host memory");
        return VRAM_E_NOMEM;
    }
    st = vram_monitor_init(&g->mon, cfg);
    if (st != VRAM_OK) {
        free(g);
        vram_msgf(err, errcap, "bad monitor settings: the limit must be in (0, 1] and the "
                               "re-arm margin in (0, limit]");
        return st;
    }
    g->ops = table;
    g->count = count;
    g->host = strcmp(table.backend, "host") == 0;
    for (int d = 0; d < count; d++) {
        vram_device_info info;
        memset(&info, 0, sizeof info);
        st = table.device_info(table.ctx, d, &info);
        if (st != VRAM_OK) {
            cuda_suffix(&table, sfx, sizeof sfx);
            vram_msgf(err, errcap, "%s backend: device_info(%d) failed: %s%s", table.backend, d,
                      vram_status_str(st), sfx);
            free(g);
            return st;
        }
        info.name[VRAM_DEVICE_NAME_MAX - 1] = '\0';
        memcpy(g->names[d], info.name, sizeof g->names[d]);
        g->reserved[d] = VRAM_GPUSTATS_UNKNOWN;
    }
    g->t0_ns = vram_now_ns();
    *out = g;
    return VRAM_OK;
}

void vram_gpustats_close(vram_gpustats *g) { free(g); }

int vram_gpustats_device_count(const vram_gpustats *g) { return g ? g->count : 0; }
const char *vram_gpustats_backend(const vram_gpustats *g) { return g ? g->ops.backend : ""; }
const char *vram_gpustats_label(const vram_gpustats *g) {
    return g && g->host ? "host" : "gpu";
}
const char *vram_gpustats_device_name(const vram_gpustats *g, int device) {
    if (g == NULL || device < 0 || device >= g->count) return "";
    return g->names[device];
}
const char *vram_gpustats_error(const vram_gpustats *g) { return g ? g->error : ""; }

static void enqueue(vram_gpustats *g, const vram_monitor_warning *w) {
    if (g->pending == VRAM_GPUSTATS_QUEUE) { /* full: the oldest goes */
        g->head = (g->head + 1) % VRAM_GPUSTATS_QUEUE;
        g->pending--;
        g->dropped++;
    }
    g->queue[(g->head + g->pending) % VRAM_GPUSTATS_QUEUE] = *w;
    g->pending++;
}

vram_status vram_gpustats_sample_device(vram_gpustats *g, int device, int epoch_mark) {
    uint64_t free_b = 0, total_b = 0;
    vram_monitor_sample s;
    vram_monitor_warning w[VRAM_MONITOR_MAX_RAISED];
    size_t n = 0;
    vram_status st;
    char sfx[48];
    if (g == NULL) return VRAM_E_INVALID;
    if (device < 0 || device >= g->count) {
        snprintf(g->error, sizeof g->error, "no device %d (this handle watches %d)", device,
                 g->count);
        return VRAM_E_RANGE;
    }
    st = g->ops.mem_info(g->ops.ctx, device, &free_b, &total_b);
    if (st != VRAM_OK) {
        cuda_suffix(&g->ops, sfx, sizeof sfx);
        snprintf(g->error, sizeof g->error, "%s%d: mem_info failed: %s%s", vram_gpustats_label(g),
                 device, vram_status_str(st), sfx);
        return st;
    }
    if (total_b == 0 || free_b > total_b) {
        snprintf(g->error, sizeof g->error,
                 "%s%d: the backend reports %llu bytes free of %llu total", vram_gpustats_label(g),
                 device, (unsigned long long)free_b, (unsigned long long)total_b);
        return VRAM_E_FORMAT;
    }
    memset(&s, 0, sizeof s);
    s.time_ms = (vram_now_ns() - g->t0_ns) / UINT64_C(1000000);
    s.device = device;
    s.used_bytes = total_b - free_b;
    s.free_bytes = free_b;
    s.total_bytes = total_b;
    s.epoch_mark = epoch_mark != 0;
    st = vram_monitor_feed(&g->mon, &s, w, VRAM_MONITOR_MAX_RAISED, &n);
    if (st != VRAM_OK) { /* cannot happen with the checks above; said, not hidden */
        snprintf(g->error, sizeof g->error, "%s%d: the monitor refused the sample: %s",
                 vram_gpustats_label(g), device, vram_status_str(st));
        return st;
    }
    for (size_t i = 0; i < n; i++) enqueue(g, &w[i]);
    g->last[device] = s;
    g->error[0] = '\0';
    return VRAM_OK;
}

static vram_status sample_all(vram_gpustats *g, int mark) {
    if (g == NULL) return VRAM_E_INVALID;
    for (int d = 0; d < g->count; d++) {
        vram_status st = vram_gpustats_sample_device(g, d, mark);
        if (st != VRAM_OK) return st;
    }
    return VRAM_OK;
}

vram_status vram_gpustats_sample(vram_gpustats *g) { return sample_all(g, 0); }
vram_status vram_gpustats_mark_epoch(vram_gpustats *g) { return sample_all(g, 1); }

vram_status vram_gpustats_warnings(vram_gpustats *g, vram_monitor_warning *out, size_t cap,
                                   size_t *n) {
    size_t k = 0;
    if (n == NULL) return VRAM_E_INVALID;
    *n = 0;
    if (g == NULL || (out == NULL && cap != 0)) return VRAM_E_INVALID;
    while (k < cap && g->pending > 0) {
        out[k++] = g->queue[g->head];
        g->head = (g->head + 1) % VRAM_GPUSTATS_QUEUE;
        g->pending--;
    }
    *n = k;
    return VRAM_OK;
}

size_t vram_gpustats_pending(const vram_gpustats *g) { return g ? g->pending : 0; }
uint64_t vram_gpustats_dropped(const vram_gpustats *g) { return g ? g->dropped : 0; }

vram_status vram_gpustats_last(const vram_gpustats *g, int device, vram_monitor_sample *out) {
    if (g == NULL || out == NULL) return VRAM_E_INVALID;
    if (device < 0 || device >= g->count) return VRAM_E_RANGE;
    if (g->mon.dev[device].samples == 0) return VRAM_E_STATE;
    *out = g->last[device];
    return VRAM_OK;
}

const vram_monitor_device *vram_gpustats_state(const vram_gpustats *g, int device) {
    if (g == NULL || device < 0 || device >= g->count) return NULL;
    return vram_monitor_device_state(&g->mon, device);
}

void vram_gpustats_set_reserved(vram_gpustats *g, int device, uint64_t bytes) {
    if (g == NULL || device < 0 || device >= g->count) return;
    g->reserved[device] = bytes;
}

uint64_t vram_gpustats_reserved(const vram_gpustats *g, int device) {
    if (g == NULL || device < 0 || device >= g->count) return VRAM_GPUSTATS_UNKNOWN;
    return g->reserved[device];
}

vram_status vram_gpustats_log_line(const vram_gpustats *g, int device, char *buf, size_t cap) {
    vram_monitor_sample s;
    vram_status st;
    int len;
    if (buf == NULL || cap == 0) return VRAM_E_INVALID;
    buf[0] = '\0';
    st = vram_gpustats_last(g, device, &s);
    if (st != VRAM_OK) return st;
    len = vram_gpustats_format_sample(vram_gpustats_label(g), &s, g->reserved[device], 1, buf,
                                      cap);
    if (len < 0) return VRAM_E_INVALID;
    return (size_t)len >= cap ? VRAM_E_BUFFER : VRAM_OK;
}

/* ---- formatting ------------------------------------------------------------------ */

/* An append-only text buffer that counts what it could not hold, like snprintf. */
typedef struct sbuf {
    char *p;
    size_t cap, len;
} sbuf;

static void sb_add(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_add(sbuf *b, const char *fmt, ...) {
    va_list ap;
    size_t room = b->len < b->cap ? b->cap - b->len : 0;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(room ? b->p + b->len : NULL, room, fmt, ap);
    va_end(ap);
    if (n > 0) b->len += (size_t)n;
}

static void sb_size(sbuf *b, uint64_t bytes) {
    char s[32];
    sb_add(b, "%s", vram_fmt_size(bytes, s, sizeof s));
}

/* A threshold as the user most likely gave it: whole decimal MB as such. */
static void sb_threshold(sbuf *b, uint64_t bytes) {
    if (bytes != 0 && bytes % UINT64_C(1000000) == 0 && bytes % (UINT64_C(1) << 20) != 0)
        sb_add(b, "%llu MB", (unsigned long long)(bytes / UINT64_C(1000000)));
    else
        sb_size(b, bytes);
}

static double percent(uint64_t part, uint64_t whole) {
    return whole ? (double)part * 100.0 / (double)whole : 0.0;
}

static int sb_done(sbuf *b) {
    if (b->cap > 0) b->p[b->len < b->cap ? b->len : b->cap - 1] = '\0';
    return b->len > (size_t)0x7fffffff ? 0x7fffffff : (int)b->len;
}

int vram_gpustats_format_sample(const char *label, const vram_monitor_sample *s,
                                uint64_t reserved, int show_reserved, char *buf, size_t cap) {
    sbuf b = {buf, buf ? cap : 0, 0};
    if (label == NULL || s == NULL) return -1;
    sb_add(&b, "%s%d used ", label, s->device);
    sb_size(&b, s->used_bytes);
    sb_add(&b, " / ");
    sb_size(&b, s->total_bytes);
    sb_add(&b, " (%.1f%%), free ", percent(s->used_bytes, s->total_bytes));
    sb_size(&b, s->free_bytes);
    if (show_reserved) {
        sb_add(&b, ", reserved by this process ");
        if (reserved == VRAM_GPUSTATS_UNKNOWN)
            sb_add(&b, "unknown");
        else
            sb_size(&b, reserved);
    }
    return sb_done(&b);
}

/* The values a warning's template names (vram_monitor_warning_text). */
static int warning_value(void *ctx, const char *k, size_t n, char *val, size_t cap) {
    const vram_monitor_warning *w = ctx;
    sbuf b = {val, cap, 0};
#define KEY(name) (n == sizeof(name) - 1 && memcmp(k, name, n) == 0)
    if (KEY("used")) sb_size(&b, w->used);
    else if (KEY("total")) sb_size(&b, w->total);
    else if (KEY("free")) sb_size(&b, w->free);
    else if (KEY("percent")) sb_add(&b, "%.1f%%", percent(w->used, w->total));
    else if (KEY("limit")) sb_add(&b, "%g%%", (double)w->limit_ppm / 1e4);
    else if (KEY("growth")) sb_size(&b, w->growth);
    else if (KEY("threshold")) sb_threshold(&b, w->threshold);
    else if (KEY("from")) sb_size(&b, w->from);
    else if (KEY("to")) sb_size(&b, w->to);
    else if (KEY("epoch")) sb_add(&b, "%llu", (unsigned long long)w->epoch);
    else if (KEY("epochs")) sb_add(&b, "%u", w->epochs);
    else return 0; /* not a placeholder: as written */
#undef KEY
    return 1;
}

static void sb_summary(sbuf *b, const vram_monitor_warning *w) {
    const char *t = vram_monitor_warning_text(w->id);
    size_t room = b->len < b->cap ? b->cap - b->len : 0;
    if (t == NULL) {
        sb_add(b, "unknown warning %d", (int)w->id);
        return;
    }
    b->len += vram_expand(t, warning_value, (void *)w, room ? b->p + b->len : NULL, room);
}

int vram_gpustats_format_summary(const vram_monitor_warning *w, char *buf, size_t cap) {
    sbuf b = {buf, buf ? cap : 0, 0};
    if (w == NULL) return -1;
    sb_summary(&b, w);
    return sb_done(&b);
}

int vram_gpustats_format_warning(const char *label, const vram_monitor_warning *w,
                                 int recommendation, char *buf, size_t cap) {
    sbuf b = {buf, buf ? cap : 0, 0};
    const char *sev, *name, *rec;
    if (label == NULL || w == NULL) return -1;
    sev = vram_monitor_severity_name(w->severity);
    name = vram_monitor_warning_name(w->id);
    sb_add(&b, "%s%d %s %s: ", label, w->device, sev, name);
    sb_summary(&b, w);
    rec = vram_monitor_warning_recommendation(w->id);
    if (recommendation && rec) sb_add(&b, "; recommendation: %s", rec);
    return sb_done(&b);
}
