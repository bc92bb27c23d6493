/* driver/api/api.c — see api.h. The operations take their options from JSON (written by the
 * Python package) through the same setters the vramkit command hands its options to, run, and
 * write their documents with the driver's JSON writer; the streamer is stream/session.h. */
#include "api.h"

#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <vramkit/base.h>

#include "comm/ranks_env.h"
#include "doctor/doctor_run.h"
#include "gpustats/watch.h"
#include "isolate/helper.h"
#include "isolate/try.h"
#include "plan/estimating.h"
#include "plan/plan_run.h"
#include "loader/chunking.h"
#include "loader/session.h"
#include "util/text.h"

int vram_api_version(void) { return VRAM_API_VERSION; }
const char *vram_api_status_name(int status) { return vram_status_name((vram_status)status); }
const char *vram_api_status_str(int status) { return vram_status_str((vram_status)status); }
void vram_api_free(void *p) { free(p); }

/* ---- the operations ------------------------------------------------------------------------ */

/* One call: its options (the parsed JSON, alive while the operation runs), its document and
 * its text (the error line or notes). */
typedef struct api_call {
    const char *op;
    cJSON *options;
    char *out, *err;
    size_t out_len, err_len;
    FILE *o, *e;
    int no_out; /* what was written to o is no document (an error came after it) */
} api_call;

static int call_begin(api_call *c, const char *op, const char *options) {
    memset(c, 0, sizeof *c);
    c->op = op;
    c->o = open_memstream(&c->out, &c->out_len);
    c->e = open_memstream(&c->err, &c->err_len);
    if (c->o == NULL || c->e == NULL) return -1;
    c->options = cJSON_Parse(options != NULL && options[0] ? options : "{}");
    return 0;
}

/* Ends the call: *out and *err as api.h says. Returns rc, or -1 when memory ran out. */
static int call_end(api_call *c, int rc, char **out, char **err) {
    int bad = 0;
    if (c->o != NULL) bad |= fclose(c->o) != 0;
    if (c->e != NULL) bad |= fclose(c->e) != 0;
    cJSON_Delete(c->options);
    if (bad || c->o == NULL || c->e == NULL) {
        free(c->out);
        free(c->err);
        return -1;
    }
    if (c->out_len == 0 || c->no_out) {
        free(c->out);
        c->out = NULL;
    }
    if (c->err_len == 0) {
        free(c->err);
        c->err = NULL;
    }
    *out = c->out;
    *err = c->err;
    return rc;
}

/* "vramkit: OP: message" on the call's error text; returns the exit code. */
static int call_fail(api_call *c, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int call_fail(api_call *c, int code, const char *fmt, ...) {
    va_list ap;
    fprintf(c->e, "vramkit: %s: ", c->op);
    va_start(ap, fmt);
    vfprintf(c->e, fmt, ap);
    va_end(ap);
    fputc('\n', c->e);
    return code;
}

typedef vram_status (*api_setter)(void *opts, const char *name, const char *arg, char *err,
                                  size_t cap);

/* One value of option `name`: a string, a number, true (a flag); false and null leave it out.
 * Returns -1, or the exit code after the error line. */
static int call_value(api_call *c, const char *key, const char *name, const cJSON *v,
                      api_setter set, void *opts) {
    char err[1200], num[64];
    const char *text;
    vram_status st;
    if (cJSON_IsFalse(v) || cJSON_IsNull(v)) return -1;
    if (cJSON_IsString(v)) {
        text = v->valuestring;
    } else if (cJSON_IsTrue(v)) {
        text = "";
    } else if (cJSON_IsNumber(v)) {
        double d = v->valuedouble;
        if (d >= 0 && d < 1.8e19 && d == (double)(uint64_t)d)
            snprintf(num, sizeof num, "%llu", (unsigned long long)d);
        else
            snprintf(num, sizeof num, "%.17g", d);
        text = num;
    } else {
        return call_fail(c, 2, "--%s: give a string, a number, true or a list of them", name);
    }
    st = set(opts, name, text, err, sizeof err);
    if (st == VRAM_E_UNHANDLED) return call_fail(c, 2, "unknown option '%s'", key);
    if (st != VRAM_OK) return call_fail(c, vram_exit_code(st), "%s", err);
    return -1;
}

/* Hands every option of the call to `set` (keys in either spelling; `positional` is the key of
 * the operation's argument, put in *arg; an array gives the option once per element). Returns
 * -1 when all were taken, else the exit code after the error line. */
static int call_options(api_call *c, const char *positional, const char **arg, api_setter set,
                        void *opts) {
    char name[64];
    int rc;
    if (!cJSON_IsObject(c->options)) return call_fail(c, 2, "the options are not a JSON object");
    for (const cJSON *kv = c->options->child; kv != NULL; kv = kv->next) {
        size_t n = strlen(kv->string);
        if (n >= sizeof name) return call_fail(c, 2, "unknown option '%s'", kv->string);
        for (size_t i = 0; i <= n; i++) name[i] = kv->string[i] == '_' ? '-' : kv->string[i];
        if (positional != NULL && strcmp(name, positional) == 0) {
            if (!cJSON_IsString(kv)) return call_fail(c, 2, "%s: give it as a string", positional);
            *arg = kv->valuestring;
        } else if (cJSON_IsArray(kv)) {
            for (const cJSON *v = kv->child; v != NULL; v = v->next)
                if ((rc = call_value(c, kv->string, name, v, set, opts)) >= 0) return rc;
        } else if ((rc = call_value(c, kv->string, name, kv, set, opts)) >= 0) {
            return rc;
        }
    }
    return -1;
}

static vram_status set_estimate(void *o, const char *n, const char *a, char *err, size_t cap) {
    return vram_estimate_set((vram_estimate_opts *)o, n, a, err, cap);
}

int vram_api_estimate(const char *options, char **out, char **err) {
    api_call c;
    vram_estimate_opts o;
    vram_estimate_report *r = NULL;
    char why[1200];
    vram_status st;
    int rc;
    memset(&o, 0, sizeof o);
    if (call_begin(&c, "estimate", options) != 0) return call_end(&c, -1, out, err);
    if ((rc = call_options(&c, "model", &o.model, set_estimate, &o)) < 0) {
        if ((r = calloc(1, sizeof *r)) == NULL) {
            rc = call_fail(&c, 3, "out of memory");
        } else if ((st = vram_estimate_run(&o, r, why, sizeof why)) != VRAM_OK) {
            rc = call_fail(&c, vram_exit_code(st), "%s", why);
        } else {
            vram_json j;
            vram_json_init(&j, c.o);
            vram_estimate_json(&j, r);
            vram_json_finish(&j);
            rc = 0;
        }
    }
    free(r);
    return call_end(&c, rc, out, err);
}

typedef struct plan_args {
    vram_plan *p;
    vram_plan_request o;
} plan_args;

static vram_status set_plan(void *o, const char *n, const char *a, char *err, size_t cap) {
    plan_args *x = o;
    return vram_plan_set(x->p, &x->o, n, a, err, cap);
}

int vram_api_plan(const char *options, char **out, char **err) {
    static const size_t ncap = 2048;
    api_call c;
    plan_args x;
    vram_plan_result *r = calloc(1, sizeof *r);
    char why[4400], (*notes)[2048] = calloc(VRAM_EMIT_FORMATS, ncap);
    vram_status st;
    int rc;
    memset(&x, 0, sizeof x);
    x.p = calloc(1, sizeof *x.p);
    if (call_begin(&c, "plan", options) != 0) {
        rc = -1;
    } else if (x.p == NULL || r == NULL || notes == NULL) {
        rc = call_fail(&c, 3, "out of memory");
    } else if ((rc = call_options(&c, NULL, NULL, set_plan, &x)) < 0) {
        vram_json j;
        vram_json_init(&j, c.o);
        if ((st = vram_plan_check(x.p, &x.o, why, sizeof why)) != VRAM_OK ||
            (st = vram_plan_run(x.p, &x.o, r, why, sizeof why)) != VRAM_OK ||
            (st = vram_plan_result_json(&j, x.p, &x.o, r, notes, why, sizeof why)) != VRAM_OK) {
            rc = call_fail(&c, vram_exit_code(st), "%s", why);
        } else {
            vram_json_finish(&j);
            if (x.o.save != NULL) st = vram_plan_save(x.p, r, x.o.save, why, sizeof why);
            if (st != VRAM_OK) {
                rc = call_fail(&c, vram_exit_code(st), "%s", why);
            } else {
                for (int i = 0; i < x.o.nemit; i++) fputs(notes[i], c.e);
                rc = vram_plan_yes(x.p, &x.o, r) ? 0 : 1;
            }
        }
        if (rc != 0 && rc != 1) c.no_out = 1; /* no document with an error */
    }
    free(notes);
    free(r);
    free(x.p);
    return call_end(&c, rc, out, err);
}

typedef struct chunks_args {
    vram_chunking_opts o;
} chunks_args;

static vram_status set_chunks(void *o, const char *n, const char *a, char *err, size_t cap) {
    return vram_chunking_set((vram_chunking_opts *)o, n, a, err, cap);
}

int vram_api_chunks(const char *options, char **out, char **err) {
    api_call c;
    vram_chunking_opts o;
    vram_chunking_report r;
    vram_ranks ranks;
    char why[1200];
    vram_status st;
    int rc;
    memset(&o, 0, sizeof o);
    memset(&r, 0, sizeof r);
    if (call_begin(&c, "chunks", options) != 0) return call_end(&c, -1, out, err);
    if ((rc = call_options(&c, "file", &o.file, set_chunks, &o)) < 0) {
        if ((st = vram_chunking_check(&o, NULL, &ranks, why, sizeof why)) != VRAM_OK ||
            (st = vram_chunking_run(&o, &ranks, &r, why, sizeof why)) != VRAM_OK) {
            rc = call_fail(&c, vram_exit_code(st), "%s", why);
        } else {
            vram_json j;
            vram_json_init(&j, c.o);
            if (vram_chunking_json(&j, &r) != VRAM_OK) {
                c.no_out = 1;
                rc = call_fail(&c, 3, "internal error: inconsistent plan");
            } else {
                vram_json_finish(&j);
                rc = 0;
            }
        }
        vram_chunking_free(&r);
    }
    return call_end(&c, rc, out, err);
}

static vram_status set_doctor(void *o, const char *n, const char *a, char *err, size_t cap) {
    return vram_doctor_set((vram_doctor_opts *)o, n, a, err, cap);
}

int vram_api_doctor(const char *options, char **out, char **err) {
    api_call c;
    vram_doctor_opts o;
    vram_doctor_result *r = NULL;
    char why[1200];
    vram_status st;
    int rc;
    memset(&o, 0, sizeof o);
    if (call_begin(&c, "doctor", options) != 0) return call_end(&c, -1, out, err);
    if ((rc = call_options(&c, NULL, NULL, set_doctor, &o)) < 0) {
        if ((st = vram_doctor_check(&o, why, sizeof why)) != VRAM_OK) {
            rc = call_fail(&c, vram_exit_code(st), "%s", why);
        } else if ((r = calloc(1, sizeof *r)) == NULL) {
            rc = call_fail(&c, 3, "out of memory");
        } else if ((st = vram_doctor_run(&o, r, why, sizeof why)) != VRAM_OK) {
            rc = call_fail(&c, vram_exit_code(st), "%s", why);
        } else {
            vram_json j;
            vram_json_init(&j, c.o);
            vram_doctor_json(&j, r);
            vram_json_finish(&j);
            rc = r->exit_code;
        }
    }
    free(r);
    return call_end(&c, rc, out, err);
}

/* The strings of an array option ("command", "env") into out[0 .. max), NULL-terminated.
 * Returns how many, or -1 after the error line. */
static int call_strings(api_call *c, const char *key, const char **out, int max) {
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(c->options, key);
    int n = 0;
    out[0] = NULL; /* absent: an empty list, never what the caller's stack held */
    if (a == NULL) return 0;
    if (!cJSON_IsArray(a)) return call_fail(c, 2, "%s: give a list of strings", key), -1;
    for (const cJSON *v = a->child; v != NULL; v = v->next) {
        if (!cJSON_IsString(v)) return call_fail(c, 2, "%s: give a list of strings", key), -1;
        if (n + 1 >= max) return call_fail(c, 2, "%s: at most %d entries", key, max - 1), -1;
        out[n++] = v->valuestring;
    }
    out[n] = NULL;
    return n;
}

static vram_status set_try(void *o, const char *n, const char *a, char *err, size_t cap) {
    if (strcmp(n, "command") == 0 || strcmp(n, "env") == 0) return VRAM_OK; /* call_strings */
    return vram_try_set((vram_try_opts *)o, n, a, err, cap);
}

#define API_MAX_COMMAND 256

int vram_api_try(const char *options, char **out, char **err) {
    api_call c;
    vram_try_opts o;
    vram_try_result r;
    const char *command[API_MAX_COMMAND] = {NULL}, *env[VRAM_TRY_MAX_ENV + 1] = {NULL};
    char why[4400], exe[PATH_MAX];
    vram_status st;
    int rc;
    memset(&o, 0, sizeof o);
    memset(&r, 0, sizeof r);
    if (call_begin(&c, "try", options) != 0) return call_end(&c, -1, out, err);
    if ((rc = call_options(&c, NULL, NULL, set_try, &o)) < 0) {
        o.ncommand = call_strings(&c, "command", command, API_MAX_COMMAND);
        rc = o.ncommand < 0 ? 2 : call_strings(&c, "env", env, VRAM_TRY_MAX_ENV + 1) < 0 ? 2 : -1;
        o.command = (char *const *)command;
        o.env = env;
        /* each attempt through the vramkit executable's shim and guard, so that it dies with
           this process even one killed with SIGKILL (the CLI's rule); not /proc/self/exe, which
           here is the program that loaded the library */
        if (vram_helper_exe_named(exe, sizeof exe)) o.self_exe = exe;
        if (rc < 0 && o.ncommand == 0) rc = call_fail(&c, 2, "command: the command is empty");
        else if (rc < 0 && command[0][0] == '\0') rc = call_fail(&c, 2, "command: the program is empty ('')");
    }
    if (rc < 0) {
        if ((st = vram_try_chain_check(&o.chain, why, sizeof why)) != VRAM_OK ||
            (st = vram_plan_chain(&o.chain, why, sizeof why)) != VRAM_OK ||
            (st = vram_try_run(&o, &r, why, sizeof why)) != VRAM_OK) {
            rc = call_fail(&c, vram_exit_code(st), "%s", why);
        } else {
            vram_json j;
            vram_json_init(&j, c.o);
            vram_try_json(&j, &o, &r);
            vram_json_finish(&j);
            rc = r.chosen >= 0 ? 0 : 1;
        }
    }
    vram_try_free(&r);
    vram_try_chain_free(&o.chain);
    return call_end(&c, rc, out, err);
}

/* ---- watch ---------------------------------------------------------------------------------- */

struct vram_api_watch {
    vram_watch_opts o;
    vram_watch w;
};

static vram_status set_watch(void *o, const char *n, const char *a, char *err, size_t cap) {
    return vram_watch_set((vram_watch_opts *)o, n, a, err, cap);
}

int vram_api_watch_open(const char *options, vram_api_watch **w, char **err) {
    api_call c;
    char note[512], why[512], *out = NULL;
    vram_status st;
    int rc;
    vram_api_watch *x = calloc(1, sizeof *x);
    *w = NULL;
    if (call_begin(&c, "watch", options) != 0 || x == NULL) {
        free(x);
        return call_end(&c, -1, &out, err);
    }
    if ((rc = call_options(&c, NULL, NULL, set_watch, &x->o)) < 0) {
        if ((st = vram_watch_open(&x->o, &x->w, note, sizeof note, why, sizeof why)) != VRAM_OK) {
            rc = call_fail(&c, vram_exit_code(st), "%s", why);
        } else {
            if (note[0]) fprintf(c.e, "vramkit: watch: %s\n", note);
            *w = x;
            x = NULL;
            rc = 0;
        }
    }
    free(x);
    rc = call_end(&c, rc, &out, err);
    free(out);
    return rc;
}

static void line_sample(void *ctx, const vram_watch *w, const vram_monitor_sample *s,
                        uint64_t epoch, const char *stamp) {
    vram_json j;
    vram_json_init(&j, ctx);
    vram_watch_sample_json(&j, w, s, epoch, stamp);
    vram_json_finish(&j);
}

static void line_processes(void *ctx, int d, const vram_gpumem_proc *procs, int n,
                           uint64_t time_ms, const char *stamp) {
    for (int i = 0; i < n; i++) {
        vram_json j;
        vram_json_init(&j, ctx);
        vram_watch_process_json(&j, d, &procs[i], time_ms, stamp);
        vram_json_finish(&j);
    }
}

static void line_warning(void *ctx, const vram_watch *w, const vram_monitor_warning *x,
                         const char *stamp) {
    vram_json j;
    vram_json_init(&j, ctx);
    vram_watch_warning_json(&j, w, x, stamp);
    vram_json_finish(&j);
}

int vram_api_watch_round(vram_api_watch *x, char **out, char **err) {
    api_call c;
    char why[512];
    int rc = 0;
    if (call_begin(&c, "watch", "{}") != 0) return call_end(&c, -1, out, err);
    const vram_watch_sink sink = {line_sample, line_processes, line_warning, c.o};
    if (vram_watch_round(&x->w, x->o.processes, &sink, why, sizeof why) != VRAM_OK) {
        c.no_out = 1;
        rc = call_fail(&c, 3, "%s", why);
    }
    return call_end(&c, rc, out, err);
}

uint64_t vram_api_watch_interval_ms(const vram_api_watch *x) { return x ? x->w.interval_ms : 0; }

void vram_api_watch_close(vram_api_watch *x) {
    if (x == NULL) return;
    vram_watch_close(&x->w);
    free(x);
}

/* ---- the streamer ------------------------------------------------------------------------- */

struct vram_api_stream {
    vram_stream_session *s;
    vram_batch held;
    int holding;
    vram_event order; /* vram_api_stream_order's event (GPU; made when first needed) */
    vram_api_keep *keeps;    /* the live keeps of this stream (a list, under keep_mu) */
    vram_api_keep *cur_keep; /* the keep of the chunk being taken, or NULL */
    uint64_t detached;
};

/* A kept chunk: while in the stream, the streamer's buffer (unkept on release); detached
 * (mem set), memory of its own that the release frees with the backend's ops. */
struct vram_api_keep {
    vram_api_stream *s; /* NULL once detached for good (the stream closed) */
    uint64_t q;
    void *mem;
    vram_device_ops ops;
    int device;
    vram_api_keep *prev, *next;
};

/* Keeps are released by the consumer's finalizers, on any thread, also after their stream
 * closed: one lock for every keep list (never held while a call waits for a chunk). */
static pthread_mutex_t keep_mu = PTHREAD_MUTEX_INITIALIZER;

static void keep_unlink_locked(vram_api_keep *k) {
    if (k->s == NULL) return;
    if (k->prev) k->prev->next = k->next;
    else k->s->keeps = k->next;
    if (k->next) k->next->prev = k->prev;
    if (k->s->cur_keep == k) k->s->cur_keep = NULL;
    k->prev = k->next = NULL;
}

static int api_fail(char *err, size_t cap, int st, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int api_fail(char *err, size_t cap, int st, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    if (cap) vsnprintf(err, cap, fmt, ap);
    va_end(ap);
    return st;
}

int vram_api_local_gpu(char *err, size_t cap) {
    vram_world_opts w;
    vram_ranks r;
    vram_stream_backend be;
    vram_status st;
    if (cap) err[0] = '\0';
    memset(&w, 0, sizeof w);
    if ((st = vram_world_resolve(&w, &r, err, cap)) != VRAM_OK) return st;
    if ((st = vram_stream_backend_open(VRAM_STREAM_DEVICE_LOCAL, 0, &r, &be, err, cap)) != VRAM_OK) return st;
    return be.device;
}

static const vram_h5_dataset *api_ds(const vram_api_stream *s, uint32_t d) {
    return s && d < s->s->f->datasets ? &s->s->f->ds[d] : NULL;
}

uint32_t vram_api_stream_datasets(const vram_api_stream *s) { return s ? s->s->f->datasets : 0; }

uint64_t vram_api_stream_row_bytes(const vram_api_stream *s, uint32_t d) {
    const vram_h5_dataset *x = api_ds(s, d);
    return x ? x->row_bytes : 0;
}

const char *vram_api_stream_type(const vram_api_stream *s, uint32_t d) {
    const vram_h5_dataset *x = api_ds(s, d);
    return x ? x->type : "";
}

int vram_api_stream_rank(const vram_api_stream *s, uint32_t d) {
    const vram_h5_dataset *x = api_ds(s, d);
    return x ? x->rank : 0;
}

uint64_t vram_api_stream_dim(const vram_api_stream *s, uint32_t d, int k) {
    const vram_h5_dataset *x = api_ds(s, d);
    return x && k >= 0 && k < x->rank ? x->dims[k] : 0;
}

uint64_t vram_api_stream_rank_samples(const vram_api_stream *s) {
    if (s == NULL) return 0;
    const vram_chunks_plan *p = vram_streamer_plan(s->s->s);
    return p->rank_samples - p->dropped_last;
}

uint64_t vram_api_stream_batches_per_epoch(const vram_api_stream *s) {
    return s ? vram_streamer_plan(s->s->s)->batch_count : 0;
}

int vram_api_stream_device(const vram_api_stream *s) {
    return s && s->s->be.cuda ? s->s->be.device : -1;
}

uint32_t vram_api_stream_rank_of(const vram_api_stream *s) {
    return s ? vram_streamer_plan(s->s->s)->config.rank : 0;
}

uint32_t vram_api_stream_world(const vram_api_stream *s) {
    return s ? vram_streamer_plan(s->s->s)->config.world : 0;
}

const char *vram_api_stream_launcher(const vram_api_stream *s) {
    if (s == NULL || s->s->ranks.launcher == VRAM_LAUNCHER_NONE || s->s->ranks.launcher == VRAM_LAUNCHER_FLAGS)
        return "";
    return vram_launcher_name(s->s->ranks.launcher);
}

int vram_api_stream_close(vram_api_stream *s) {
    vram_status st;
    if (s == NULL) return VRAM_OK;
    if (s->holding) (void)vram_streamer_release(s->s->s, &s->held);
    /* the chunks still kept become memory of their keeps: everything else goes */
    pthread_mutex_lock(&keep_mu);
    while (s->keeps) {
        vram_api_keep *k = s->keeps;
        if (k->mem == NULL) {
            (void)vram_streamer_detach(s->s->s, k->q, 0, &k->mem);
            k->ops = s->s->be.ops;
            k->device = s->s->be.device;
        }
        keep_unlink_locked(k);
        k->s = NULL;
    }
    pthread_mutex_unlock(&keep_mu);
    if (s->order != NULL) (void)s->s->be.ops.event_destroy(s->s->be.ops.ctx, s->order);
    st = vram_stream_session_close(s->s);
    free(s);
    return st;
}

uint64_t vram_api_host_budget(void) {
    long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    uint64_t avail = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
    uint64_t b = VRAM_API_HOST_BUDGET_MAX;
    if (avail / 8 < b) b = avail / 8;
    return b < VRAM_API_HOST_BUDGET_MIN ? VRAM_API_HOST_BUDGET_MIN : b;
}

int vram_api_parse_size(const char *text, uint64_t *out) {
    if (text == NULL || out == NULL) return VRAM_E_INVALID;
    return vram_parse_size(text, out);
}

int vram_api_world(uint32_t *world, uint32_t *rank, char *err, size_t cap) {
    vram_world_opts w;
    vram_ranks r;
    vram_status st;
    if (cap) err[0] = '\0';
    if (world == NULL || rank == NULL) return api_fail(err, cap, VRAM_E_INVALID, "world: missing arguments");
    memset(&w, 0, sizeof w);
    if ((st = vram_world_resolve(&w, &r, err, cap)) != VRAM_OK) return st;
    *world = r.world;
    *rank = r.rank;
    return VRAM_OK;
}

uint64_t vram_api_stream_budget(const vram_api_stream *s) {
    return s ? vram_streamer_plan(s->s->s)->budget_bytes : 0;
}

int vram_api_stream_skip(vram_api_stream *s, uint64_t n, uint64_t *skipped, char *err, size_t cap) {
    vram_api_batch b;
    uint64_t k = 0;
    int st = VRAM_OK;
    if (cap) err[0] = '\0';
    if (s == NULL) return api_fail(err, cap, VRAM_E_INVALID, "stream: no stream");
    memset(&b, 0, sizeof b);
    b.size = sizeof b;
    while (k < n) {
        if ((st = vram_api_stream_next(s, &b, err, cap)) != VRAM_OK || b.done) break;
        k++;
        if ((st = vram_api_stream_release(s, err, cap)) != VRAM_OK) break;
    }
    if (skipped) *skipped = k;
    return st;
}

int vram_api_stream_order(vram_api_stream *s, void *stream, int consumer_waits, char *err, size_t cap) {
    vram_stream_backend *be;
    vram_status st;
    vram_stream from, to;
    if (cap) err[0] = '\0';
    if (s == NULL) return api_fail(err, cap, VRAM_E_INVALID, "stream: no stream");
    be = &s->s->be;
    if (!be->cuda || stream == be->consumer) return VRAM_OK; /* host memory: nothing to order */
    from = consumer_waits ? (vram_stream)stream : be->consumer;
    to = consumer_waits ? be->consumer : (vram_stream)stream;
    if (s->order == NULL && (st = be->ops.event_create(be->ops.ctx, &s->order)) != VRAM_OK)
        return api_fail(err, cap, st, "%s: cannot create an event: %s", be->label, vram_status_str(st));
    if ((st = be->ops.event_record(be->ops.ctx, s->order, from)) != VRAM_OK ||
        (st = be->ops.stream_wait_event(be->ops.ctx, to, s->order)) != VRAM_OK)
        return api_fail(err, cap, st, "%s: ordering the batch on stream %p: %s", be->label, stream,
                        vram_status_str(st));
    return VRAM_OK;
}

int vram_api_stream_open(const char *path, const char *const *datasets, uint32_t n,
                         const vram_api_stream_opts *o, vram_api_stream **out, char *err,
                         size_t cap) {
    vram_stream_opts so;
    vram_ranks ranks;
    vram_api_stream *s;
    vram_status st;
    if (cap) err[0] = '\0';
    if (out == NULL || o == NULL || path == NULL || (n && datasets == NULL))
        return api_fail(err, cap, VRAM_E_INVALID, "stream: missing arguments");
    *out = NULL;
    if (o->size != sizeof *o)
        return api_fail(err, cap, VRAM_E_VERSION, "stream: the options' layout differs from this "
                                                  "library's (a package and library of different versions)");
    if (n > VRAM_STREAM_MAX_DATASETS)
        return api_fail(err, cap, VRAM_E_INVALID, "stream: at most %u datasets", VRAM_STREAM_MAX_DATASETS);
    memset(&so, 0, sizeof so);
    so.file = path;
    for (uint32_t i = 0; i < n; i++) so.names[i] = datasets[i];
    so.n_names = n;
    /* the launcher's variables when world is "auto" (a rank given wins), else the numbers */
    if (o->world_auto && o->world == 0) {
        so.world.have_rank = o->rank_given;
    } else {
        so.world.have_world = so.world.have_rank = 1;
        so.world.world = o->world ? o->world : 1u;
    }
    so.world.rank = o->rank;
    if ((st = vram_world_resolve(&so.world, &ranks, err, cap)) != VRAM_OK && !so.world.have_world) {
        char why[256];
        snprintf(why, sizeof why, "%s", err);
        return api_fail(err, cap, st, "world=auto: %s", why);
    }
    if (st != VRAM_OK) return st;
    so.cfg.plan.batch = o->batch;
    so.cfg.plan.budget_bytes = o->budget_bytes;
    if (o->device == -1 && o->budget_bytes == 0 && o->fraction == 0.0 && o->reserve_bytes == 0)
        so.cfg.plan.budget_bytes = vram_api_host_budget();
    so.have_budget = so.cfg.plan.budget_bytes != 0;
    so.cfg.plan.fraction = o->fraction;
    so.cfg.plan.reserve_bytes = o->reserve_bytes;
    so.cfg.plan.buffers = o->buffers;
    so.cfg.plan.world = ranks.world;
    so.cfg.plan.rank = ranks.rank;
    so.cfg.plan.shuffle = o->shuffle != 0;
    so.cfg.plan.seed = o->seed;
    so.cfg.plan.drop_last = o->drop_last != 0;
    if (o->no_pad) so.cfg.plan.shard = VRAM_SHARD_DROP;
    so.cfg.epochs = o->epochs;
    so.cfg.first_epoch = o->first_epoch;
    so.cfg.readers = o->readers;
    so.device = o->device == -1 ? VRAM_STREAM_DEVICE_CPU
              : o->device == -2 ? VRAM_STREAM_DEVICE_LOCAL : VRAM_STREAM_DEVICE_CUDA;
    so.ordinal = o->device >= 0 ? o->device : 0;
    so.consumer = o->consumer;
    if (n == 0) return api_fail(err, cap, VRAM_E_INVALID, "%s: no dataset named", path);
    if ((s = calloc(1, sizeof *s)) == NULL) return api_fail(err, cap, VRAM_E_NOMEM, "out of host memory");
    if ((st = vram_stream_session_open(&so, &ranks, &s->s, err, cap)) != VRAM_OK) {
        free(s);
        return st;
    }
    *out = s;
    return VRAM_OK;
}

int vram_api_stream_next(vram_api_stream *s, vram_api_batch *b, char *err, size_t cap) {
    if (cap) err[0] = '\0';
    if (s == NULL || b == NULL) return api_fail(err, cap, VRAM_E_INVALID, "stream: no stream");
    if (b->size != sizeof *b)
        return api_fail(err, cap, VRAM_E_VERSION, "stream: the batch's layout differs from this library's");
    if (s->holding)
        return api_fail(err, cap, VRAM_E_STATE, "stream: the previous batch is still held (release it first)");
    vram_status st = vram_streamer_next(s->s->s, &s->held);
    if (st != VRAM_OK) {
        const char *why = vram_streamer_error(s->s->s);
        return api_fail(err, cap, st, "%s", why[0] ? why : vram_status_str(st));
    }
    memset(b, 0, sizeof *b);
    b->size = sizeof *b;
    b->count = s->held.count;
    b->epoch = s->held.epoch;
    b->epoch_index = s->held.epoch_index;
    b->index = s->held.index;
    b->epoch_begin = s->held.epoch_begin;
    b->epoch_end = s->held.epoch_end;
    b->done = s->held.done;
    b->samples = s->held.samples;
    for (int d = 0; d < 16 && d < (int)VRAM_STREAM_MAX_DATASETS; d++) b->data[d] = s->held.data[d];
    s->holding = !s->held.done; /* the end holds nothing */
    b->held = s->holding;
    return VRAM_OK;
}

int vram_api_stream_release(vram_api_stream *s, char *err, size_t cap) {
    if (cap) err[0] = '\0';
    if (s == NULL) return api_fail(err, cap, VRAM_E_INVALID, "stream: no stream");
    if (!s->holding) return api_fail(err, cap, VRAM_E_STATE, "stream: no batch is held");
    vram_status st = vram_streamer_release(s->s->s, &s->held);
    s->holding = 0;
    if (st != VRAM_OK) return api_fail(err, cap, st, "releasing a batch: %s", vram_status_str(st));
    return VRAM_OK;
}

/* ---- taking batches: one call a batch, kept or copied ------------------------------------ */

void vram_api_keep_release(vram_api_keep *k) {
    if (k == NULL) return;
    pthread_mutex_lock(&keep_mu);
    if (k->mem != NULL)
        (void)k->ops.dev_free(k->ops.ctx, k->device, k->mem);
    else if (k->s != NULL)
        (void)vram_streamer_unkeep(k->s->s->s, k->q);
    keep_unlink_locked(k);
    pthread_mutex_unlock(&keep_mu);
    free(k);
}

uint64_t vram_api_stream_chunk_rows(const vram_api_stream *s) {
    return s ? vram_streamer_plan(s->s->s)->samples_per_chunk : 0;
}

/* The next batch, or VRAM_E_STATE with t->blocked when a kept chunk is in the way and may
 * not be detached. Detaches it otherwise. */
static int take_next(vram_api_stream *s, vram_api_take *t, char *err, size_t cap) {
    for (;;) {
        vram_status st = vram_streamer_next(s->s->s, &s->held);
        if (st == VRAM_E_STATE) {
            uint64_t q = vram_streamer_kept_blocker(s->s->s);
            vram_api_keep *k;
            if (q != UINT64_MAX && !t->may_detach) {
                t->blocked = 1;
                return api_fail(err, cap, st, "stream: the batches of chunk %llu are still in use",
                                (unsigned long long)q);
            }
            if (q != UINT64_MAX) {
                pthread_mutex_lock(&keep_mu);
                for (k = s->keeps; k != NULL && !(k->q == q && k->mem == NULL); k = k->next) {}
                st = k ? vram_streamer_detach(s->s->s, q, 1, &k->mem) : VRAM_E_STATE;
                if (k && k->mem) {
                    k->ops = s->s->be.ops;
                    k->device = s->s->be.device;
                }
                pthread_mutex_unlock(&keep_mu);
                if (st != VRAM_OK)
                    return api_fail(err, cap, st, "stream: a new chunk buffer in place of one still in "
                                                  "use: %s", vram_status_str(st));
                s->detached++;
                continue;
            }
        }
        if (st != VRAM_OK) {
            const char *why = vram_streamer_error(s->s->s);
            return api_fail(err, cap, st, "%s", why[0] ? why : vram_status_str(st));
        }
        return VRAM_OK;
    }
}

int vram_api_stream_take(vram_api_stream *s, vram_api_take *t) {
    const vram_batch *h;
    uint32_t n;
    int st;
    char *err = t ? t->err : NULL;
    size_t cap = t ? sizeof t->err : 0;
    if (s == NULL || t == NULL) return VRAM_E_INVALID;
    if (t->size != sizeof *t) return VRAM_E_VERSION; /* its err may not be where ours is */
    if (t->mode != VRAM_API_TAKE_KEEP && t->mode != VRAM_API_TAKE_COPY)
        return api_fail(err, cap, VRAM_E_INVALID, "stream: take mode %llu", (unsigned long long)t->mode);
    if (s->holding)
        return api_fail(err, cap, VRAM_E_STATE, "stream: the previous batch is still held (release it first)");
    h = &s->held;
    n = s->s->f->datasets;
    memset(&t->count, 0, offsetof(vram_api_take, err) - offsetof(vram_api_take, count));
    err[0] = '\0';
    if ((st = take_next(s, t, err, cap)) != VRAM_OK) return st;
    t->detached = s->detached;
    if (h->done) {
        t->done = 1;
        return VRAM_OK;
    }
    s->holding = 1;
    t->count = h->count;
    t->epoch = h->epoch;
    t->epoch_index = h->epoch_index;
    t->index = h->index;
    t->epoch_begin = (uint64_t)h->epoch_begin;
    t->epoch_end = (uint64_t)h->epoch_end;
    t->slot = h->slot_start;
    if (t->samples_out) memcpy((void *)(uintptr_t)t->samples_out, h->samples, h->count * sizeof(uint64_t));
    if (t->mode == VRAM_API_TAKE_KEEP) {
        pthread_mutex_lock(&keep_mu);
        if (s->cur_keep == NULL || s->cur_keep->q != h->chunk_seq) {
            vram_api_keep *k = calloc(1, sizeof *k);
            if (k == NULL) st = VRAM_E_NOMEM;
            else if ((st = vram_streamer_keep(s->s->s, h)) != VRAM_OK) free(k);
            else {
                k->s = s;
                k->q = h->chunk_seq;
                k->next = s->keeps;
                if (s->keeps) s->keeps->prev = k;
                s->keeps = s->cur_keep = k;
                t->keep = (uint64_t)(uintptr_t)k;
            }
        }
        pthread_mutex_unlock(&keep_mu);
        if (st != VRAM_OK) {
            (void)vram_api_stream_release(s, NULL, 0);
            return api_fail(err, cap, st, "stream: keeping a chunk: %s", vram_status_str(st));
        }
        for (uint32_t d = 0; d < n; d++) t->data[d] = (uint64_t)(uintptr_t)h->data[d];
    } else {
        for (uint32_t d = 0; d < n; d++) {
            if (t->dst[d] == 0) continue;
            memcpy((void *)(uintptr_t)t->dst[d], h->data[d], h->count * s->s->f->ds[d].row_bytes);
            t->data[d] = t->dst[d];
        }
    }
    return vram_api_stream_release(s, err, cap);
}
