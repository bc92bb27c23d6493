/* driver/gpustats/watch.c — see watch.h. */
#include "watch.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "device/host_device.h"
#include "util/text.h"

#define FAIL(st, ...) return vram_errorf(err, cap, st, __VA_ARGS__)
#define NO_GPU_HINT "nothing to watch; --host watches the host's memory"
/* Counts: a value starting with '-' is called negative; sizes: 0 has its own line. */
#define COUNT_WORDS VRAM_OPT_NEGATIVE
#define SIZE_WORDS (VRAM_OPT_NEGATIVE | VRAM_OPT_AT_LEAST)

vram_status vram_watch_set(vram_watch_opts *o, const char *name, const char *a, char *err,
                           size_t cap) {
    uint64_t v = 0;
    double pct = 0.0;
    vram_status st = VRAM_OK;
#define IS(n) (strcmp(name, n) == 0)
    if (IS("interval"))
        st = vram_opt_count("interval", a, 1, VRAM_WATCH_MAX_INTERVAL_MS, COUNT_WORDS, &o->interval_ms, err, cap);
    else if (IS("count"))
        st = vram_opt_count("count", a, 1, UINT64_MAX, COUNT_WORDS, &o->count, err, cap);
    else if (IS("epoch-every"))
        st = vram_opt_count("epoch-every", a, 1, UINT32_MAX, COUNT_WORDS, &o->epoch_every, err, cap);
    else if (IS("device")) {
        if ((st = vram_opt_count("device", a, 0, VRAM_MONITOR_MAX_DEVICES - 1, COUNT_WORDS, &v, err, cap)) == VRAM_OK) {
            o->device = (int)v;
            o->device_given = 1;
        }
    } else if (IS("host"))
        o->host = 1;
    else if (IS("processes"))
        o->processes = 1;
    else if (IS("limit")) {
        if ((st = vram_opt_percent("limit", a, &pct, err, cap)) == VRAM_OK) o->mon.limit = pct / 100.0;
    } else if (IS("leak-threshold"))
        st = vram_opt_size("leak-threshold", a, 0, SIZE_WORDS, &o->mon.leak_bytes, err, cap);
    else
        return VRAM_E_UNHANDLED;
#undef IS
    return st;
}

/* Over NVML when it opens and can be read, else the CUDA runtime (device/machine.h). */
static vram_status open_machine(const vram_watch_opts *o, vram_watch *w, char *note, size_t ncap,
                                char *err, size_t cap) {
    char why[256];
    vram_status st;
    vram_machine_reader_open(&w->reader);
    if (w->reader.nvml_open) {
        if (vram_gpustats_open(&w->reader.ops, &o->mon, &w->g, why, sizeof why) == VRAM_OK) return VRAM_OK;
        vram_machine_reader_fallback(&w->reader, why);
        if (o->processes) FAIL(VRAM_E_NOT_SUPPORTED, "--processes: NVML opened but cannot be read: %s", why);
        snprintf(note, ncap, "NVML opened but cannot be read (%s): using the CUDA runtime, which "
                             "holds a context on each GPU", why);
    } else if (o->processes) {
        FAIL(VRAM_E_NOT_SUPPORTED, "--processes needs NVML: %s", w->reader.why_not_nvml);
    } else {
        /* said only once the CUDA runtime did open: without a driver, that error says it */
        if ((st = vram_gpustats_open(NULL, &o->mon, &w->g, NULL, 0)) == VRAM_OK) {
            snprintf(note, ncap, "NVML not used (%s): reading memory through the CUDA runtime, "
                                 "which holds a context on each GPU", w->reader.why_not_nvml);
            return VRAM_OK;
        }
        /* an NVML that is there but unusable is the news; a missing one is not */
        if (w->reader.nvml_status != VRAM_E_NOT_SUPPORTED)
            FAIL(vram_exit_code(st) == 3 ? st : VRAM_E_NOT_SUPPORTED,
                 "NVML cannot be used (%s), nor the CUDA runtime (%s): " NO_GPU_HINT,
                 w->reader.why_not_nvml, vram_status_str(st));
    }
    if ((st = vram_gpustats_open(NULL, &o->mon, &w->g, why, sizeof why)) == VRAM_OK) return VRAM_OK;
    if (st == VRAM_E_NO_DRIVER) FAIL(st, "no NVIDIA driver: " NO_GPU_HINT);
    if (st == VRAM_E_NOT_BUILT) FAIL(st, "this vramkit was built without CUDA: " NO_GPU_HINT);
    if (st == VRAM_E_NO_DEVICE) FAIL(st, "%s: " NO_GPU_HINT, why);
    FAIL(vram_exit_code(st) == 3 ? st : VRAM_E_NOT_SUPPORTED, "cannot watch the cuda backend: %s", why);
}

/* A table given (the mock) or the host's. */
static vram_status open_table(const vram_watch_opts *o, const vram_device_ops *ops, vram_watch *w,
                              char *err, size_t cap) {
    char why[256];
    vram_status st;
    if (o->processes) FAIL(VRAM_E_NOT_SUPPORTED, "--processes needs NVML: the %s backend has no process list", ops->backend);
    if ((st = vram_gpustats_open(ops, &o->mon, &w->g, why, sizeof why)) == VRAM_OK) return VRAM_OK;
    if (st == VRAM_E_INVALID && vram_device_ops_check(ops) == VRAM_OK) FAIL(VRAM_E_INVALID, "%s", why); /* the settings */
    FAIL(vram_exit_code(st) == 3 ? st : VRAM_E_NOT_SUPPORTED, "cannot watch the %s backend: %s", ops->backend, why);
}

vram_status vram_watch_open(const vram_watch_opts *o, vram_watch *w, char *note, size_t ncap,
                            char *err, size_t cap) {
    vram_device_ops host;
    vram_status st;
    int n;
    memset(w, 0, sizeof *w);
    if (ncap) note[0] = '\0';
    w->interval_ms = o->interval_ms ? o->interval_ms : VRAM_WATCH_DEFAULT_INTERVAL_MS;
    w->epoch_every = o->epoch_every;
    if (o->ops == NULL && o->host) host = vram_host_ops();
    if (o->ops != NULL || o->host)
        st = open_table(o, o->ops != NULL ? o->ops : &host, w, err, cap);
    else
        st = open_machine(o, w, note, ncap, err, cap);
    if (st != VRAM_OK) {
        vram_machine_reader_close(&w->reader);
        return st;
    }
    n = vram_gpustats_device_count(w->g);
    if (o->device_given && o->device >= n) {
        const char *what = vram_gpustats_label(w->g);
        vram_watch_close(w);
        if (n == 1) FAIL(VRAM_E_INVALID, "--device %d: this machine has one %s device, 0", o->device, what);
        FAIL(VRAM_E_INVALID, "--device %d: this machine has %d %s devices, 0 to %d", o->device, n, what, n - 1);
    }
    w->first = o->device_given ? o->device : 0;
    w->last = o->device_given ? o->device : n - 1;
    return VRAM_OK;
}

void vram_watch_close(vram_watch *w) {
    vram_gpustats_close(w->g);
    w->g = NULL;
    vram_machine_reader_close(&w->reader);
}

vram_status vram_watch_sample(vram_watch *w, int d, vram_monitor_sample *s, uint64_t *epoch,
                              char *err, size_t cap) {
    int mark = w->epoch_every != 0 && w->round % w->epoch_every == 0;
    vram_status st = vram_gpustats_sample_device(w->g, d, mark);
    if (st != VRAM_OK) FAIL(st, "sample %llu: %s", (unsigned long long)(w->round + 1), vram_gpustats_error(w->g));
    if ((st = vram_gpustats_last(w->g, d, s)) != VRAM_OK) return st;
    *epoch = vram_gpustats_state(w->g, d)->marks - (s->epoch_mark ? 1u : 0u);
    return VRAM_OK;
}

vram_status vram_watch_processes(vram_watch *w, int d, vram_gpumem_proc *procs, int cap_procs,
                                 int *n, char *err, size_t cap) {
    const vram_gpumem_ops *m = &w->reader.nvml;
    *n = 0;
    if (!w->reader.nvml_open) FAIL(VRAM_E_NOT_SUPPORTED, "--processes needs NVML");
    if (m->processes(m->ctx, d, procs, cap_procs, n) != VRAM_OK)
        FAIL(VRAM_E_NOT_SUPPORTED, "sample %llu: processes of GPU %d: %s",
             (unsigned long long)(w->round + 1), d, m->error(m->ctx));
    return VRAM_OK;
}

vram_status vram_watch_round(vram_watch *w, int processes, const vram_watch_sink *sink, char *err,
                             size_t cap) {
    char stamp[40];
    struct timespec ts;
    struct tm tm;
    vram_status st;
    for (int d = w->first; d <= w->last; d++) {
        vram_monitor_sample s;
        uint64_t epoch = 0;
        st = vram_watch_sample(w, d, &s, &epoch, err, cap);
        clock_gettime(CLOCK_REALTIME, &ts);
        gmtime_r(&ts.tv_sec, &tm);
        size_t n = strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
        snprintf(stamp + n, sizeof stamp - n, ".%03ldZ", ts.tv_nsec / 1000000L);
        if (st == VRAM_E_STATE) continue;
        if (st != VRAM_OK) return st;
        sink->sample(sink->ctx, w, &s, epoch, stamp);
        if (processes) {
            vram_gpumem_proc procs[VRAM_GPUMEM_MAX_PROCS];
            int np = 0;
            if ((st = vram_watch_processes(w, d, procs, VRAM_GPUMEM_MAX_PROCS, &np, err, cap)) != VRAM_OK)
                return st;
            sink->processes(sink->ctx, d, procs, np, s.time_ms, stamp);
        }
    }
    vram_monitor_warning warn[16];
    size_t k = 0;
    do {
        if (vram_gpustats_warnings(w->g, warn, 16, &k) != VRAM_OK) break;
        for (size_t q = 0; q < k; q++) sink->warning(sink->ctx, w, &warn[q], stamp);
    } while (k == 16);
    w->round++;
    return VRAM_OK;
}

int vram_watch_command(uint32_t pid, char *buf, size_t cap) {
    char path[64];
    FILE *f;
    snprintf(path, sizeof path, "/proc/%u/comm", pid);
    if ((f = fopen(path, "re")) == NULL) return 0;
    if (fgets(buf, (int)cap, f) == NULL) {
        fclose(f);
        return 0;
    }
    fclose(f);
    buf[strcspn(buf, "\n")] = '\0';
    return 1;
}

double vram_watch_used_percent(uint64_t used, uint64_t total) {
    return total ? (double)used * 100.0 / (double)total : 0.0;
}

/* ---- JSON lines ------------------------------------------------------------------------------ */

/* The members every JSON line begins with: what it is, when, and on which device. Opens the
 * line's object; the caller adds its own members and closes it. */
static void line_begin(vram_json *j, const char *type, uint64_t time_ms, const char *stamp,
                       int device) {
    vram_json_begin_object(j);
    vram_json_key_string(j, "type", type);
    vram_json_key_u64(j, "elapsed_ms", time_ms);
    vram_json_key_string(j, "timestamp", stamp);
    vram_json_key_i64(j, "device", device);
}

void vram_watch_sample_json(vram_json *j, const vram_watch *w, const vram_monitor_sample *s,
                            uint64_t epoch, const char *stamp) {
    const char *name = vram_gpustats_device_name(w->g, s->device);
    double pct = vram_watch_used_percent(s->used_bytes, s->total_bytes);
    line_begin(j, "sample", s->time_ms, stamp, s->device);
    vram_json_key_string(j, "name", name);
    vram_json_key_u64(j, "used_bytes", s->used_bytes);
    vram_json_key_u64(j, "free_bytes", s->free_bytes);
    vram_json_key_u64(j, "total_bytes", s->total_bytes);
    vram_json_key_double(j, "used_percent", pct);
    vram_json_key_u64(j, "epoch", epoch);
    vram_json_key_bool(j, "epoch_mark", s->epoch_mark);
    vram_json_end_object(j);
}

void vram_watch_warning_json(vram_json *j, const vram_watch *w, const vram_monitor_warning *x,
                             const char *stamp) {
    char line[2048];
    const char *name = vram_gpustats_device_name(w->g, x->device);
    const char *id = vram_monitor_warning_name(x->id);
    const char *sev = vram_monitor_severity_name(x->severity);
    const char *rec = vram_monitor_warning_recommendation(x->id);
    vram_gpustats_format_summary(x, line, sizeof line);
    line_begin(j, "warning", x->time_ms, stamp, x->device);
    vram_json_key_string(j, "name", name);
    vram_json_key_string(j, "id", id);
    vram_json_key_string(j, "severity", sev);
    vram_json_key_string(j, "message", line);
    vram_json_key_string(j, "recommendation", rec);
    vram_json_key_u64(j, "used_bytes", x->used);
    vram_json_key_u64(j, "free_bytes", x->free);
    vram_json_key_u64(j, "total_bytes", x->total);
    vram_json_key_u64(j, "epoch", x->epoch);
    vram_json_key_u64(j, "threshold_bytes", x->threshold);
    if (x->id == VRAM_MONITOR_NEAR_LIMIT) {
        vram_json_key_double(j, "limit_percent", (double)x->limit_ppm / 1e4);
    } else {
        vram_json_key_u64(j, "growth_bytes", x->growth);
        vram_json_key_u64(j, "from_bytes", x->from);
        vram_json_key_u64(j, "to_bytes", x->to);
    }
    if (x->id == VRAM_MONITOR_RISING_FLOOR) {
        vram_json_key_u64(j, "epochs", x->epochs);
    }
    vram_json_end_object(j);
}

void vram_watch_process_json(vram_json *j, int d, const vram_gpumem_proc *p, uint64_t time_ms,
                             const char *stamp) {
    char cmd[64];
    int have = vram_watch_command(p->pid, cmd, sizeof cmd);
    const char *kind = p->graphics ? "graphics" : "compute";
    int known = p->used_bytes != VRAM_GPUMEM_UNKNOWN;
    line_begin(j, "process", time_ms, stamp, d);
    vram_json_key_u64(j, "pid", p->pid);
    vram_json_key_string(j, "command", have ? cmd : NULL);
    vram_json_key_string(j, "kind", kind);
    vram_json_key_u64_or_null(j, "used_bytes", known, p->used_bytes);
    vram_json_end_object(j);
}
