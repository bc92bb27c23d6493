/* driver/doctor/doctor_run.c — see doctor_run.h. */
#include "doctor_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vramkit/cudaerr.h>

#include "device/snapshot.h"
#include "models/model_find.h"
#include "plan/estimating.h"
#include "util/text.h"

/* ---- evidence as text --------------------------------------------------------------------- */

const char *vram_doctor_compute_mode_name(long long m) {
    switch (m) {
    case VRAM_COMPUTE_DEFAULT: return "default";
    case VRAM_COMPUTE_EXCLUSIVE_THREAD: return "exclusive thread";
    case VRAM_COMPUTE_PROHIBITED: return "prohibited";
    case VRAM_COMPUTE_EXCLUSIVE_PROCESS: return "exclusive process";
    default: return "unknown";
    }
}

const char *vram_doctor_tristate_name(long long v) { return v == VRAM_YES ? "yes" : v == VRAM_NO ? "no" : "unknown"; }

void vram_doctor_cuda_version(long long v, char *buf, size_t cap) {
    if (v <= 0)
        snprintf(buf, cap, "none");
    else
        snprintf(buf, cap, "%lld.%lld", v / 1000, (v % 1000) / 10);
}

static void evidence_text(vram_evidence_unit unit, int64_t v, char *buf, size_t cap) {
    long long x = (long long)v;
    switch (unit) {
    case VRAM_EVU_BYTES: vram_fmt_size(v < 0 ? 0u : (uint64_t)v, buf, cap); return;
    case VRAM_EVU_CUDA_VERSION: vram_doctor_cuda_version(x, buf, cap); return;
    case VRAM_EVU_CC:
        if (x <= 0) snprintf(buf, cap, "unknown");
        else snprintf(buf, cap, "%lld.%lld", x / 10, x % 10);
        return;
    case VRAM_EVU_TRISTATE: snprintf(buf, cap, "%s", vram_doctor_tristate_name(x)); return;
    case VRAM_EVU_CUDA_ERROR: {
        const char *n = x > 0 && x < 100000 ? vram_cuda_error_name((int)x) : NULL;
        if (x == 0) snprintf(buf, cap, "none");
        else if (n != NULL) snprintf(buf, cap, "%lld (%s)", x, n);
        else snprintf(buf, cap, "%lld", x);
        return;
    }
    case VRAM_EVU_STATUS: snprintf(buf, cap, "%s", vram_status_str((vram_status)x)); return;
    case VRAM_EVU_PROBE: {
        const char *n = x >= 0 && x < VRAM_DIAG_PROBE_COUNT ? vram_diag_probe_name((vram_diag_probe_kind)x) : NULL;
        snprintf(buf, cap, "%s", n ? n : "unknown");
        return;
    }
    case VRAM_EVU_BRANCH:
        if (x <= 0) snprintf(buf, cap, "unknown");
        else snprintf(buf, cap, "%lld", x);
        return;
    case VRAM_EVU_VISIBLE_STOP: snprintf(buf, cap, "%s", vram_visible_stop_name((vram_visible_stop)x)); return;
    case VRAM_EVU_COMPUTE_MODE: snprintf(buf, cap, "%s", vram_doctor_compute_mode_name(x)); return;
    case VRAM_EVU_DEVICE:
        if (x < 0) snprintf(buf, cap, "none");
        else snprintf(buf, cap, "%lld", x);
        return;
    case VRAM_EVU_COUNT:
    case VRAM_EVU_OFFSET:
    case VRAM_EVU_INDEX: snprintf(buf, cap, "%lld", x); return;
    case VRAM_EVU_NONE: break;
    }
    buf[0] = '\0';
}

/* A finding's evidence value by the name its templates use. */
static int evidence_value(void *ctx, const char *key, size_t klen, char *val, size_t cap) {
    const vram_finding *f = ctx;
    for (int k = 0; k < VRAM_FINDING_EVIDENCE; k++) {
        vram_evidence_spec s = vram_finding_evidence(f->id, k);
        if (s.name != NULL && strlen(s.name) == klen && strncmp(s.name, key, klen) == 0) {
            evidence_text(s.unit, f->ev[k], val, cap);
            return 1;
        }
    }
    return 0;
}

/* A template with {name} placeholders filled from the finding's evidence. */
static void expand(const char *tmpl, const vram_finding *f, char *buf, size_t cap) {
    vram_expand(tmpl, evidence_value, (void *)f, buf, cap);
}

/* "name=value, ..." of a finding's evidence. */
static void evidence_line(const vram_finding *f, char *buf, size_t cap) {
    size_t n = 0;
    buf[0] = '\0';
    for (int k = 0; k < VRAM_FINDING_EVIDENCE; k++) {
        vram_evidence_spec s = vram_finding_evidence(f->id, k);
        if (s.name == NULL) continue;
        char val[128];
        evidence_text(s.unit, f->ev[k], val, sizeof val);
        int w = snprintf(buf + n, cap - n, "%s%s %s", n ? ", " : "", s.name, val);
        if (w < 0 || (size_t)w >= cap - n) break;
        n += (size_t)w;
    }
}

void vram_doctor_finding_text(const vram_finding *f, char *summary, size_t scap, char *remedy,
                              size_t rcap, char *evidence, size_t ecap) {
    expand(vram_finding_summary(f->id), f, summary, scap);
    expand(vram_finding_remedy(f->id), f, remedy, rcap);
    evidence_line(f, evidence, ecap);
}

/* One line for the case no GPU can be used, from the most severe finding. */
static const char *no_gpu_headline(const vram_finding *fs, size_t n) {
    for (size_t i = 0; i < n; i++) {
        switch (fs[i].id) {
        case VRAM_FINDING_NO_CUDA_IN_BUILD: return "this vramkit was built without CUDA";
        case VRAM_FINDING_NO_DRIVER: return "no NVIDIA driver found";
        case VRAM_FINDING_DRIVER_TOO_OLD: return "the NVIDIA driver is too old for this build's CUDA runtime";
        case VRAM_FINDING_VISIBLE_DEVICES_HIDE_ALL: return "CUDA_VISIBLE_DEVICES hides every GPU";
        case VRAM_FINDING_NO_DEVICE: return "no NVIDIA GPU is visible";
        case VRAM_FINDING_FORKED_AFTER_INIT: return "CUDA cannot work in this forked process";
        case VRAM_FINDING_DEVICE_UNAVAILABLE:
        case VRAM_FINDING_COMPUTE_PROHIBITED: return "the GPU refuses CUDA contexts (compute mode)";
        default: break;
        }
    }
    return "no GPU can be used";
}


/* ---- options -------------------------------------------------------------------------- */

vram_status vram_doctor_set(vram_doctor_opts *o, const char *name, const char *arg, char *err,
                            size_t cap) {
    vram_status st;
    if (strcmp(name, "probe") == 0) {
        o->probe = 1;
    } else if (strcmp(name, "model") == 0) {
        o->model = arg;
    } else if (strcmp(name, "need") == 0) {
        if ((st = vram_opt_size("need", arg, 0, VRAM_OPT_BRIEF, &o->need, err, cap)) != VRAM_OK) return st;
        o->need_given = 1;
    } else if (strcmp(name, "arch") == 0) {
        vram_diag_facts *tmp = calloc(1, sizeof *tmp);
        if (tmp == NULL) return vram_errorf(err, cap, VRAM_E_NOMEM, "out of memory");
        st = vram_diag_parse_archs(arg, tmp);
        free(tmp);
        if (st != VRAM_OK)
            return vram_errorf(err, cap, VRAM_E_INVALID,
                               "--arch: '%s' is not an architecture list (e.g. 80,90 or "
                               "sm_90,compute_90; at most %d entries)",
                               arg, VRAM_DIAG_MAX_ARCHS);
        o->arch = arg;
    } else {
        if ((st = vram_workload_set(&o->w, name, arg, err, cap)) == VRAM_OK) o->workload_given = 1;
        return st;
    }
    return VRAM_OK;
}

vram_status vram_doctor_check(const vram_doctor_opts *o, char *err, size_t cap) {
    if (o->model != NULL && o->need_given)
        return vram_errorf(err, cap, VRAM_E_INVALID,
                           "--model and --need both say what the model needs: give one");
    if (o->workload_given && o->model == NULL)
        return vram_errorf(err, cap, VRAM_E_INVALID,
                           "workload options describe a --model: give --model MODEL");
    return VRAM_OK;
}

/* ---- the checkup ------------------------------------------------------------------------ */

/* The preset for a --model: on the usable GPU with the most free memory, else the CPU. */
static void recommend(const vram_doctor_opts *o, const vram_model_ref *cm, vram_doctor_result *r) {
    uint64_t budget = 0;
    int best = -1;
    for (int d = 0; d < vram_snapshot_count(&r->rep.snap); d++)
        if (vram_diag_gpu_usable(&r->rep.facts, d) &&
            (best < 0 || r->rep.snap.devices[d].free_bytes > r->rep.snap.devices[best].free_bytes))
            best = d;
    if (best >= 0)
        budget = r->rep.snap.devices[best].free_bytes > VRAM_DOCTOR_MARGIN
                     ? r->rep.snap.devices[best].free_bytes - VRAM_DOCTOR_MARGIN
                     : 0;
    if (vram_estimate_recommend(&cm->model, &o->w, budget, &r->rec) == VRAM_OK) {
        r->rec_ok = 1;
        r->rec_device = r->rec.chosen == VRAM_PRESET_CPU ? -1 : best;
    }
}

vram_status vram_doctor_run(const vram_doctor_opts *o, vram_doctor_result *r, char *err, size_t cap) {
    vram_doctor_config cfg = o->cfg;
    vram_model_ref *cm = NULL;
    vram_status st = VRAM_OK;
    size_t total = 0;
    memset(r, 0, sizeof *r);
    r->rec_device = -1;
    /* the model's need, before anything touches the GPU */
    if (o->model != NULL) {
        vram_estimate e;
        if ((cm = calloc(1, sizeof *cm)) == NULL) return vram_errorf(err, cap, VRAM_E_NOMEM, "out of memory");
        if ((st = vram_model_find(o->model, cm, err, cap)) != VRAM_OK) goto out;
        if ((st = vram_estimate_model(&cm->model, &o->w, &e)) != VRAM_OK) {
            st = vram_errorf(err, cap, VRAM_E_INVALID, "%s: cannot estimate what it needs: %s",
                             cm->label, vram_status_str(st));
            goto out;
        }
        r->model_given = 1;
        r->need = e.expected;
        snprintf(r->label, sizeof r->label, "%s", cm->label);
    } else if (o->need_given) {
        r->model_given = 1;
        r->need = o->need;
        snprintf(r->label, sizeof r->label, "the model (--need)");
    }
    cfg.probe = cfg.probe || o->probe;
    cfg.model_bytes = r->need;
    if (o->arch != NULL) cfg.archs = o->arch;
    if (vram_doctor_gather(&cfg, &r->rep) != VRAM_OK) {
        st = vram_errorf(err, cap, VRAM_E_INVALID, "the architecture list '%s' does not parse",
                         cfg.archs ? cfg.archs : "");
        goto out;
    }
    if ((st = vram_diagnose(&r->rep.facts, r->fs, VRAM_DIAG_MAX_FINDINGS, &r->nf, &total)) != VRAM_OK) {
        st = vram_errorf(err, cap, VRAM_E_STATE, "diagnosis failed: %s", vram_status_str(st));
        goto out;
    }
    r->usable = vram_diag_usable_gpus(&r->rep.facts);
    if (cm != NULL) recommend(o, cm, r);
    r->exit_code = r->usable == 0 ? 3 : vram_findings_worst(r->fs, r->nf) == VRAM_SEV_ERROR ? 1 : 0;
    r->headline = no_gpu_headline(r->fs, r->nf);
out:
    free(cm);
    return st;
}

/* ---- JSON --------------------------------------------------------------------------------- */

static void json_env(vram_json *j, const char *name, const char *value) {
    vram_json_key(j, name);
    vram_json_string(j, value); /* NULL is null */
}

void vram_doctor_json(vram_json *j, const vram_doctor_result *r) {
    const vram_doctor_report *rep = &r->rep;
    const vram_diag_facts *f = &rep->facts;
    const vram_device_snapshot *s = &rep->snap;
    const vram_finding *fs = r->fs;
    const size_t nf = r->nf;
    const int rc = r->exit_code, usable = r->usable;
    vram_json_begin_object(j);
    vram_json_key_string(j, "version", VRAM_VERSION_STRING);
    vram_json_key_string(j, "verdict", rc == 3 ? "no_gpu" : rc == 1 ? "errors" : "ok");
    vram_json_key_string(j, "headline", rc == 3 ? r->headline : NULL);
    vram_json_key_i64(j, "exit_code", rc);
    vram_json_key(j, "driver");
    vram_json_begin_object(j);
    vram_json_key_i64(j, "cuda_version", s->driver_version);
    vram_json_key_string(j, "kernel_module", rep->kernel_module[0] ? rep->kernel_module : NULL);
    vram_json_end_object(j);
    vram_json_key_i64(j, "runtime_version", s->runtime_version);
    vram_json_key_string(j, "backend", rep->backend[0] ? rep->backend : NULL);
    vram_json_key_bool(j, "cuda_built", rep->cuda_built);
    vram_json_key(j, "archs");
    vram_json_begin_array(j);
    for (int i = 0; i < f->n_archs; i++) {
        vram_json_begin_object(j);
        vram_json_key_i64(j, "cc", f->archs[i].cc);
        vram_json_key_bool(j, "sass", f->archs[i].sass);
        vram_json_key_bool(j, "ptx", f->archs[i].ptx);
        vram_json_end_object(j);
    }
    vram_json_end_array(j);
    vram_json_key(j, "platform");
    vram_json_begin_object(j);
    vram_json_key_bool(j, "wsl2", f->wsl2);
    vram_json_key_bool(j, "jetson", f->jetson);
    vram_json_key_bool(j, "vgpu", f->vgpu);
    vram_json_key_i64_or_null(j, "physical_gpus", f->physical_gpus > 0, f->physical_gpus);
    vram_json_end_object(j);
    vram_json_key(j, "environment");
    vram_json_begin_object(j);
    json_env(j, "CUDA_VISIBLE_DEVICES", f->cuda_visible_devices);
    json_env(j, "CUDA_LAUNCH_BLOCKING", f->cuda_launch_blocking);
    json_env(j, rep->alloc_conf_var ? rep->alloc_conf_var : "PYTORCH_CUDA_ALLOC_CONF", f->alloc_conf);
    json_env(j, "LD_LIBRARY_PATH", f->ld_library_path);
    vram_json_end_object(j);
    vram_json_key_string(j, "snapshot_status", vram_status_name(s->status));
    vram_json_key_i64(j, "snapshot_cuda_error", s->cuda_error);
    vram_json_key_i64(j, "usable_gpus", usable);

    vram_json_key(j, "devices");
    vram_json_begin_array(j);
    int n = vram_snapshot_count(s);
    for (int d = 0; d < n; d++) {
        const vram_device_info *g = &s->devices[d];
        vram_json_begin_object(j);
        vram_json_key_i64(j, "ordinal", d);
        vram_json_key_string(j, "name", g->name);
        vram_json_key_i64(j, "cc", vram_device_cc(g));
        vram_json_key_u64(j, "total_bytes", g->total_bytes);
        vram_json_key_u64(j, "free_bytes", g->free_bytes);
        vram_json_key(j, "used_bytes");
        vram_json_u64(j, g->total_bytes > g->free_bytes ? g->total_bytes - g->free_bytes : 0);
        vram_json_key_i64(j, "multiprocessors", g->multiprocessors);
        vram_json_key_i64(j, "copy_engines", g->copy_engines);
        vram_json_key_bool(j, "integrated", g->integrated);
        vram_json_key_string(j, "compute_mode", vram_doctor_compute_mode_name(g->compute_mode));
        const struct {
            const char *name;
            vram_tristate v;
        } caps[] = {{"vmm", g->vmm},
                    {"vmm_posix_fd", g->vmm_posix_fd},
                    {"memory_pools", g->memory_pools},
                    {"host_register", g->host_register}};
        for (size_t k = 0; k < sizeof caps / sizeof caps[0]; k++) {
            vram_json_key_bool_or_null(j, caps[k].name, caps[k].v != VRAM_UNKNOWN,
                                       caps[k].v == VRAM_YES);
        }
        vram_json_key(j, "probes");
        vram_json_begin_array(j);
        if (rep->probed) {
            for (int k = 0; k < VRAM_PROBE_COUNT; k++) {
                const vram_probe_result *p = &rep->probes[d][k];
                vram_json_begin_object(j);
                vram_json_key_string(j, "name", vram_probe_name((vram_probe_kind)k));
                vram_json_key_bool(j, "ran", p->ran);
                vram_json_key_bool_or_null(j, "ok", p->ran, p->status == VRAM_OK);
                vram_json_key(j, "status");
                vram_json_string(j, vram_status_name(p->ran ? p->status : rep->probe_run[d][k]));
                vram_json_key_i64(j, "cuda_error", p->cuda_error);
                vram_json_key_string(j, "detail", p->detail);
                vram_json_key_double(j, "seconds", p->seconds);
                vram_json_end_object(j);
            }
        }
        vram_json_end_array(j);
        vram_json_end_object(j);
    }
    vram_json_end_array(j);

    vram_json_key(j, "model");
    if (!r->model_given) {
        vram_json_null(j);
    } else {
        vram_json_begin_object(j);
        vram_json_key_string(j, "label", r->label);
        vram_json_key_u64(j, "need_bytes", r->need);
        vram_json_key_string(j, "preset", r->rec_ok ? vram_preset_name(r->rec.chosen) : NULL);
        vram_json_key(j, "device");
        if (r->rec_ok && r->rec_device >= 0) vram_json_i64(j, r->rec_device);
        else if (r->rec_ok) vram_json_string(j, "cpu");
        else vram_json_null(j);
        vram_json_end_object(j);
    }

    int counts[4] = {0, 0, 0, 0};
    vram_json_key(j, "findings");
    vram_json_begin_array(j);
    for (size_t i = 0; i < nf; i++) {
        char sum[1024], rem[1024], ev[512];
        vram_doctor_finding_text(&fs[i], sum, sizeof sum, rem, sizeof rem, ev, sizeof ev);
        if (fs[i].severity >= VRAM_SEV_INFO && fs[i].severity <= VRAM_SEV_ERROR) counts[fs[i].severity]++;
        vram_json_begin_object(j);
        vram_json_key_string(j, "id", vram_finding_name(fs[i].id));
        vram_json_key_string(j, "severity", vram_severity_name(fs[i].severity));
        vram_json_key_i64_or_null(j, "device", fs[i].device >= 0, fs[i].device);
        vram_json_key_string(j, "summary", sum);
        vram_json_key(j, "evidence");
        vram_json_begin_object(j);
        for (int k = 0; k < VRAM_FINDING_EVIDENCE; k++) {
            vram_evidence_spec sp = vram_finding_evidence(fs[i].id, k);
            if (sp.name == NULL) continue;
            vram_json_key_i64(j, sp.name, fs[i].ev[k]);
        }
        vram_json_end_object(j);
        vram_json_key_string(j, "evidence_text", ev);
        vram_json_key_string(j, "remedy", rem);
        vram_json_end_object(j);
    }
    vram_json_end_array(j);
    vram_json_key(j, "counts");
    vram_json_begin_object(j);
    vram_json_key_i64(j, "error", counts[VRAM_SEV_ERROR]);
    vram_json_key_i64(j, "warning", counts[VRAM_SEV_WARNING]);
    vram_json_key_i64(j, "info", counts[VRAM_SEV_INFO]);
    vram_json_end_object(j);
    vram_json_end_object(j);
}

