/* driver/plan/calibration.c — see calibration.h. A record, one line:
 *   {"version":1,"time":"2026-11-27T15:00:00Z","command":"try","model":"gpt2","strategy":"fp16",
 *    "workload":"mode=infer ...","device":"cuda:0","expected_bytes":N|null,"measured_bytes":N|null,
 *    "outcome":"success","measured":{peak.h's object}} */
#include "calibration.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "plan_doc.h"
#include "planner.h"
#include "util/text.h"

#define FAIL(st, ...) return vram_errorf(err, ecap, st, __VA_ARGS__)

/* 1 when path is there and is not a regular file (a directory, a FIFO, a device). */
static int not_regular(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0 && !S_ISREG(sb.st_mode);
}

vram_status vram_calib_path(const char *arg, char *path, size_t cap, int *is_default, char *err,
                            size_t ecap) {
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int w;
    path[0] = '\0';
    *is_default = arg == NULL;
    if (arg != NULL && strcmp(arg, VRAM_CALIB_NONE) == 0) return VRAM_OK;
    if (arg != NULL && arg[0] == '\0') FAIL(VRAM_E_INVALID, "--calibration: the file name is empty");
    if (arg != NULL) w = snprintf(path, cap, "%s", arg);
    else if (xdg != NULL && xdg[0] == '/') w = snprintf(path, cap, "%s/%s", xdg, VRAM_CALIB_FILE);
    else if (home != NULL && home[0] != '\0') w = snprintf(path, cap, "%s/.cache/%s", home, VRAM_CALIB_FILE);
    else FAIL(VRAM_E_INVALID, "--calibration: no default file: neither XDG_CACHE_HOME nor HOME is set (give --calibration FILE or none)");
    if (w < 0 || (size_t)w >= cap) {
        path[0] = '\0';
        FAIL(VRAM_E_INVALID, "--calibration: the path is too long");
    }
    if (not_regular(path)) {
        vram_status st = vram_errorf(err, ecap, VRAM_E_INVALID, "--calibration %s: not a regular file", path);
        path[0] = '\0';
        return st;
    }
    return VRAM_OK;
}

static void u64_or_default(char *buf, size_t cap, const char *name, uint64_t v) {
    size_t n = strlen(buf);
    if (v) snprintf(buf + n, cap - n, " %s=%llu", name, (unsigned long long)v);
    else snprintf(buf + n, cap - n, " %s=default", name);
}

void vram_calib_workload_key(const vram_workload *given, const vram_estimate *e, char *buf,
                             size_t cap) {
    vram_workload rw = *given;
    const vram_workload *w = &rw;
    size_t n;
    if (e != NULL) { /* what the defaults resolved to: "--seq 2048" and the default 2048 agree */
        rw.batch = e->batch;
        rw.seq = e->seq;
        rw.src_len = e->src_len;
        rw.tgt_len = e->tgt_len;
        rw.logits = e->logits;
        rw.image_tokens = e->image_tokens;
        rw.images = 0; /* counted in image_tokens */
    }
    snprintf(buf, cap, "mode=%s", w->mode == VRAM_MODE_TRAIN ? "train" : "infer");
    u64_or_default(buf, cap, "batch", w->batch > 1 ? w->batch : 1u);
    u64_or_default(buf, cap, "seq", w->seq);
    u64_or_default(buf, cap, "src_len", w->src_len);
    u64_or_default(buf, cap, "tgt_len", w->tgt_len);
    n = strlen(buf);
    snprintf(buf + n, cap - n, " compute=%s logits=%s",
             w->compute != VRAM_DTYPE_NONE ? vram_dtype_name(w->compute) : "default",
             w->logits == VRAM_LOGITS_ALL ? "all" : w->logits == VRAM_LOGITS_LAST ? "last" : "default");
    if (w->mode == VRAM_MODE_TRAIN) {
        n = strlen(buf);
        snprintf(buf + n, cap - n, " optimizer=%s checkpointing=%d grad_accum=%llu lora_rank=%llu lora_targets=%u",
                 vram_optimizer_name(w->optimizer), w->checkpointing ? 1 : 0,
                 (unsigned long long)(w->grad_accum > 1 ? w->grad_accum : 1u),
                 (unsigned long long)w->lora_rank, w->lora_rank ? (unsigned)w->lora_targets : 0u);
    }
    n = strlen(buf);
    snprintf(buf + n, cap - n, " flash_attention=%d", w->flash_attention ? 1 : 0);
    u64_or_default(buf, cap, "images", w->images);
    u64_or_default(buf, cap, "image_tokens", w->image_tokens);
}

/* ---- the chain's context ---------------------------------------------------------------- */

/* An estimate of p's model with the workload (any strategy's: the values the key resolves do
 * not depend on the format), NULL when the plan has none. */
static const vram_estimate *plan_estimate(const vram_plan *p) {
    for (int i = 0; i < p->chain.count; i++)
        if (p->chain.cand[i].status == VRAM_OK) return &p->chain.cand[i].estimate;
    return NULL;
}

void vram_calib_chain_from_plan(vram_try_chain *c, const vram_plan *p, uint64_t *expected) {
    snprintf(c->calib_model, sizeof c->calib_model, "%s", p->comps[0].model_arg);
    vram_calib_workload_key(&p->w, plan_estimate(p), c->calib_workload, sizeof c->calib_workload);
    for (int i = 0; i < p->chain.count; i++) {
        const vram_candidate *k = &p->chain.cand[i];
        if (k->fits && k->device >= 0 && k->device < VRAM_PLAN_MAX_GPUS && k->gpu_mask == (1u << k->device))
            expected[i] = k->gpu_bytes[k->device];
    }
}

static const cJSON *item(const cJSON *o, const char *key) {
    return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
}

void vram_calib_chain_from_doc(vram_try_chain *c, const char *path, uint64_t *expected, int nrows) {
    char err[512];
    vram_plan *p = calloc(1, sizeof *p);
    FILE *f;
    if (p == NULL) return;
    if (vram_plan_doc_load(path, "--plan", p, err, sizeof err) == VRAM_OK && p->single) {
        /* the saved plan holds the workload as given: its model resolves the defaults (when
           it cannot be read now, the key keeps them unresolved and matches no plan's) */
        vram_estimate e;
        vram_workload x = p->w;
        x.format = VRAM_DTYPE_NONE; /* as published: any format resolves the same values */
        int have = vram_model_find(p->comps[0].model_arg, &p->comps[0].m, err, sizeof err) == VRAM_OK &&
                   vram_estimate_model(&p->comps[0].m.model, &x, &e) == VRAM_OK;
        snprintf(c->calib_model, sizeof c->calib_model, "%s", p->comps[0].model_arg);
        vram_calib_workload_key(&p->w, have ? &e : NULL, c->calib_workload, sizeof c->calib_workload);
    }
    free(p);
    /* each strategy's bytes on its one device, as the saved plan says */
    if ((f = fopen(path, "rb")) == NULL) return;
    char *text = malloc(16u << 20);
    size_t n = text ? fread(text, 1, (16u << 20) - 1, f) : 0;
    fclose(f);
    if (text == NULL) return;
    text[n] = '\0';
    cJSON *doc = cJSON_Parse(text), *s;
    free(text);
    int i = 0;
    cJSON_ArrayForEach(s, item(doc, "strategies")) {
        const cJSON *per = item(s, "per_device"), *d0 = cJSON_GetArrayItem(per, 0);
        const cJSON *b = item(d0, "bytes"), *dev = item(d0, "device");
        if (i < nrows && cJSON_GetArraySize(per) == 1 && cJSON_IsNumber(b) && b->valuedouble >= 0 &&
            b->valuedouble < 1.8e19 && cJSON_IsString(dev) && strncmp(dev->valuestring, "gpu", 3) == 0)
            expected[i] = (uint64_t)b->valuedouble;
        i++;
    }
    cJSON_Delete(doc);
}

/* ---- writing ------------------------------------------------------------------------------ */

/* mkdir -p of path's directory (the default's: the cache directory may not be there yet). */
static void make_dirs(const char *path) {
    char d[4096];
    snprintf(d, sizeof d, "%s", path);
    char *slash = strrchr(d, '/');
    if (slash == NULL || slash == d) return;
    *slash = '\0';
    for (char *q = d + 1; *q; q++) {
        if (*q != '/') continue;
        *q = '\0';
        mkdir(d, 0755);
        *q = '/';
    }
    mkdir(d, 0755);
}

vram_status vram_calib_append(const char *path, int is_default, const char *command,
                              const vram_try_chain *c, int k, const char *outcome,
                              const vram_peak *m, char *err, size_t ecap) {
    char when[32], *line = NULL;
    size_t len = 0;
    struct tm tm;
    time_t now = time(NULL);
    const char *device, *dtype;
    if (path[0] == '\0' || c->calib_model[0] == '\0' || k < 0 || k >= c->n) return VRAM_OK;
    vram_try_chain_strategy(c, k, &device, &dtype);
    gmtime_r(&now, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    FILE *mem = open_memstream(&line, &len);
    if (mem == NULL) FAIL(VRAM_E_NOMEM, "out of memory");
    vram_json j;
    vram_json_init(&j, mem);
    vram_json_begin_object(&j);
    vram_json_key_i64(&j, "version", VRAM_CALIB_VERSION);
    vram_json_key_string(&j, "time", when);
    vram_json_key_string(&j, "command", command);
    vram_json_key_string(&j, "model", c->calib_model);
    vram_json_key_string(&j, "strategy", c->strategies[k]);
    vram_json_key_string(&j, "workload", c->calib_workload);
    vram_json_key_string(&j, "device", device);
    vram_json_key(&j, "expected_bytes");
    if (c->expected[k]) vram_json_u64(&j, c->expected[k]);
    else vram_json_null(&j);
    vram_json_key(&j, "measured_bytes");
    if (vram_peak_bytes(m)) vram_json_u64(&j, vram_peak_bytes(m));
    else vram_json_null(&j);
    vram_json_key_string(&j, "outcome", outcome);
    vram_json_key(&j, "measured");
    vram_peak_json(&j, m);
    vram_json_end_object(&j);
    vram_json_finish(&j);
    if (fclose(mem) != 0 || line == NULL) {
        free(line);
        FAIL(VRAM_E_NOMEM, "out of memory");
    }
    /* the writer's compact form is one line; make sure it ends with exactly one newline */
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == ' ')) len--;
    line[len++] = '\n';
    if (is_default) make_dirs(path);
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    vram_status st = VRAM_OK;
    struct stat sb;
    if (fd < 0) {
        st = vram_errorf(err, ecap, VRAM_E_IO, "--calibration %s: cannot open: %s", path, strerror(errno));
    } else if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        st = vram_errorf(err, ecap, VRAM_E_INVALID, "--calibration %s: not a regular file", path);
    } else {
        ssize_t w;
        do w = write(fd, line, len); /* one write: the line lands whole at the end */
        while (w < 0 && errno == EINTR);
        if (w < 0 || (size_t)w != len)
            st = vram_errorf(err, ecap, VRAM_E_IO, "--calibration %s: cannot write: %s", path,
                             w < 0 ? strerror(errno) : "short write");
    }
    if (fd >= 0 && close(fd) != 0 && st == VRAM_OK)
        st = vram_errorf(err, ecap, VRAM_E_IO, "--calibration %s: cannot write: %s", path, strerror(errno));
    free(line);
    return st;
}

/* ---- reading and planning --------------------------------------------------------------- */

/* A record's byte count: a whole non-negative number below 2^53, or null (0). -1: bad. */
static int64_t bytes_of(const cJSON *v) {
    if (v == NULL || cJSON_IsNull(v)) return 0;
    if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble >= 9007199254740992.0 ||
        v->valuedouble != (double)(int64_t)v->valuedouble)
        return -1;
    return (int64_t)v->valuedouble;
}

/* One line: matched to p's candidates. 0 when it is a good record, -1 when bad. */
static int take_line(const char *line, const vram_plan *p, const char *model, const char *key,
                     vram_calib_plan *out) {
    cJSON *r = cJSON_Parse(line);
    const cJSON *ver = item(r, "version"), *mo = item(r, "model"), *sn = item(r, "strategy"),
                *wk = item(r, "workload"), *ms = item(r, "measured");
    int64_t mb = bytes_of(item(r, "measured_bytes"));
    int64_t nv = bytes_of(item(ms, "nvml_peak_bytes")), rp = bytes_of(item(ms, "reported_peak_bytes"));
    int rc = 0;
    if (!cJSON_IsObject(r) || !cJSON_IsNumber(ver) || ver->valuedouble != VRAM_CALIB_VERSION ||
        !cJSON_IsString(mo) || !cJSON_IsString(sn) || !cJSON_IsString(wk) || mb < 0 ||
        (ms != NULL && !cJSON_IsObject(ms)) || nv < 0 || rp < 0) {
        rc = -1;
    } else if (mb > 0 && strcmp(mo->valuestring, model) == 0 && strcmp(wk->valuestring, key) == 0) {
        for (int i = 0; i < p->chain.count; i++) {
            vram_calib_cand *k = &out->cand[i];
            if (strcmp(p->chain.cand[i].name, sn->valuestring) != 0) continue;
            k->records++;
            if ((uint64_t)mb > k->measured) {
                k->measured = (uint64_t)mb;
                k->nvml = (uint64_t)nv;
                k->reported = (uint64_t)rp;
            }
        }
    }
    cJSON_Delete(r);
    return rc;
}

/* Plans candidate k with `bytes` on its GPU g, against the same budget. */
static void replan(vram_candidate *k, const vram_devices *d, int g, uint64_t bytes) {
    uint64_t budget = vram_devices_budget(d, g);
    k->gpu_bytes[g] = bytes;
    k->needed = bytes;
    k->available = budget;
    k->reason_device = g;
    if (bytes > budget) {
        k->fits = 0;
        k->reason = VRAM_REASON_TOO_BIG;
    }
}

vram_status vram_calib_plan_apply(vram_plan *p, const char *path, vram_calib_plan *out,
                                  char *err, size_t ecap) {
    char model[512], key[320];
    char *line = NULL;
    size_t lcap = 0;
    ssize_t n;
    struct stat sb;
    memset(out, 0, sizeof *out);
    if (path == NULL || strcmp(path, VRAM_CALIB_NONE) == 0 || !p->single) return VRAM_OK;
    snprintf(out->path, sizeof out->path, "%s", path);
    FILE *f = fopen(path, "r");
    if (f == NULL) FAIL(errno == ENOENT ? VRAM_E_INVALID : VRAM_E_IO, "--calibration %s: %s", path, strerror(errno));
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
        fclose(f);
        FAIL(VRAM_E_INVALID, "--calibration %s: not a regular file", path);
    }
    out->used = 1;
    snprintf(model, sizeof model, "%s", p->comps[0].model_arg);
    vram_calib_workload_key(&p->w, plan_estimate(p), key, sizeof key);
    while ((n = getline(&line, &lcap, f)) >= 0) {
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = '\0';
        if (n == 0) continue;
        out->lines++;
        if ((size_t)n > VRAM_CALIB_LINE_MAX || strlen(line) != (size_t)n ||
            take_line(line, p, model, key, out) != 0)
            out->bad++;
    }
    int rerr = ferror(f);
    free(line);
    fclose(f);
    if (rerr) FAIL(VRAM_E_IO, "--calibration %s: cannot read", path);
    /* plan again with the measured figures where they are larger */
    for (int i = 0; i < p->chain.count; i++) {
        vram_candidate *k = &p->chain.cand[i];
        vram_calib_cand *c = &out->cand[i];
        int one_gpu = k->kind == VRAM_STRATEGY_16BIT || k->kind == VRAM_STRATEGY_INT8 ||
                      k->kind == VRAM_STRATEGY_INT4;
        c->fits_before = k->fits;
        if (c->records == 0 || k->status != VRAM_OK || k->device < 0 || k->device >= VRAM_PLAN_MAX_GPUS)
            continue;
        c->expected = k->gpu_bytes[k->device];
        if (!one_gpu || !k->fits) continue; /* a split's measure is not per GPU; a no stays no */
        c->applied = 1;
        if (c->measured > c->expected) replan(k, &p->chain.devices, k->device, c->measured);
    }
    p->chain.chosen = -1;
    for (int i = 0; i < p->chain.count && p->chain.chosen < 0; i++)
        if (p->chain.cand[i].fits) p->chain.chosen = i;
    return VRAM_OK;
}

void vram_calib_plan_json(vram_json *j, const vram_plan *p, const vram_calib_plan *c) {
    vram_json_key(j, "calibration");
    vram_json_begin_object(j);
    vram_json_key_string(j, "file", c->path);
    vram_json_key_i64(j, "lines", c->lines);
    vram_json_key_i64(j, "bad_lines", c->bad);
    vram_json_key(j, "strategies");
    vram_json_begin_array(j);
    for (int i = 0; i < p->chain.count; i++) {
        const vram_calib_cand *k = &c->cand[i];
        if (k->records == 0) continue;
        vram_json_begin_object(j);
        vram_json_key_string(j, "name", p->chain.cand[i].name);
        vram_json_key_i64(j, "records", k->records);
        vram_json_key_u64_or_null(j, "expected_bytes", k->expected != 0, k->expected);
        vram_json_key_u64(j, "measured_bytes", k->measured);
        vram_json_key_u64_or_null(j, "nvml_peak_bytes", k->nvml != 0, k->nvml);
        vram_json_key_u64_or_null(j, "reported_peak_bytes", k->reported != 0, k->reported);
        vram_json_key_bool(j, "applied", k->applied);
        vram_json_key_bool(j, "fits_before", k->fits_before);
        vram_json_key_bool(j, "fits", p->chain.cand[i].fits);
        vram_json_end_object(j);
    }
    vram_json_end_array(j);
    vram_json_end_object(j);
}
