/* driver/isolate/try.c — see try.h. */
#include "try.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "exec_shim.h"
#include "nvml/nvml.h"
#include "util/text.h"

vram_status vram_try_set(vram_try_opts *o, const char *name, const char *arg, char *err,
                         size_t cap) {
    if (strcmp(name, "timeout") == 0) return vram_opt_seconds("timeout", arg, &o->timeout_s, err, cap);
    if (strcmp(name, "grace") == 0) return vram_opt_seconds("grace", arg, &o->grace_s, err, cap);
    return vram_try_chain_set(&o->chain, name, arg, err, cap);
}

static void attempt_free(vram_try_attempt *a) {
    vram_try_argv_free(a->argv);
    a->argv = NULL;
    vram_isolate_result_free(&a->res);
    cJSON_Delete(a->result);
    a->result = NULL;
}

/* isolate's hooks: the attempt's peak (peak.h) */
static int peak_tick(void *ctx, pid_t pid) {
    vram_peak_tick(ctx, pid);
    return 0;
}

static void peak_output(void *ctx, int stream, const char *data, size_t n) {
    (void)stream; /* the report counts on either stream */
    vram_peak_output(ctx, data, n);
}

/* Runs attempt number k (0-based) with NVML mem (NULL: none, why). Returns 0, or an exit code
 * when the run itself failed. */
static vram_status run_attempt(const vram_try_opts *o, int k, vram_try_attempt *a,
                               const vram_gpumem_ops *mem, const char *why, char *err, size_t cap) {
    vram_try_env env;
    a->strategy = o->chain.strategies[k];
    vram_try_chain_strategy(&o->chain, k, &a->device, &a->dtype);
    if (!(a->argv = vram_try_argv(&o->chain, k, o->command, o->ncommand)))
        return vram_errorf(err, cap, VRAM_E_NOMEM, "out of memory");
    vram_try_chain_env(&o->chain, k, k + 1, &env);

    vram_isolate_opts io;
    memset(&io, 0, sizeof io);
    const char *envs[VRAM_TRY_MAX_ENV + 5];
    int ne = 0;
    for (const char *const *e = env.env; *e; e++) envs[ne++] = *e;
    for (const char *const *e = o->env; e && *e && ne < VRAM_TRY_MAX_ENV + 4; e++) envs[ne++] = *e;
    envs[ne] = NULL;
    io.env = envs;
    io.timeout_s = o->timeout_s;
    io.grace_s = o->grace_s;
    io.cancel = o->cancel;
    vram_peak_init(&a->measured, mem, why);
    io.on_tick = peak_tick;
    io.on_output = peak_output;
    io.hook_ctx = &a->measured;
    vram_status st = vram_exec_isolated(o->self_exe, a->argv, o->ncommand, o->reap, &io, &a->res);
    if (st != VRAM_OK)
        return vram_errorf(err, cap, st, "cannot run '%s': %s", a->argv[0], vram_status_str(st));
    vram_peak_finish(&a->measured);
    vram_attempt_end end = vram_isolate_end(&a->res);
    a->outcome = vram_attempt_explain(&end, &a->ev);
    if (a->res.result_too_long) {
        snprintf(a->result_error, sizeof a->result_error,
                 "VRAMKIT_RESULT line is longer than %u bytes", VRAM_ISOLATE_RESULT_MAX);
    } else if (a->res.result_line) {
        if (vram_isolate_parse_result(a->res.result_line, a->res.result_len, &a->result,
                                      a->result_error, sizeof a->result_error) != VRAM_OK)
            a->result = NULL;
    }
    return VRAM_OK;
}

vram_status vram_try_run(const vram_try_opts *o, vram_try_result *r, char *err, size_t cap) {
    static vram_gpumem_ops nvml; /* each attempt's GPU memory, without a context of our own */
    vram_status st = VRAM_OK;
    memset(r, 0, sizeof *r);
    r->chosen = -1;
    if ((r->attempts = (vram_try_attempt *)calloc((size_t)o->chain.n, sizeof *r->attempts)) == NULL)
        return vram_errorf(err, cap, VRAM_E_NOMEM, "out of memory");
    nvml = vram_nvml_ops(NULL);
    int nvml_ok = nvml.open(nvml.ctx) == VRAM_OK;
    for (int k = 0; k < o->chain.n && !(o->cancel && *o->cancel); k++) {
        vram_try_attempt *a = &r->attempts[k];
        st = run_attempt(o, k, a, nvml_ok ? &nvml : NULL, nvml_ok ? NULL : nvml.error(nvml.ctx), err, cap);
        r->n = k + 1;
        if (st != VRAM_OK) break;
        if (a->res.cancelled) break;
        if (o->on_attempt) o->on_attempt(o->ctx, k, a);
        if (a->outcome == VRAM_ATTEMPT_SUCCESS) {
            r->chosen = k;
            break;
        }
    }
    if (nvml_ok) nvml.close(nvml.ctx);
    r->cancelled = o->cancel != NULL && *o->cancel != 0;
    return st;
}

void vram_try_free(vram_try_result *r) {
    for (int i = 0; i < r->n; i++) attempt_free(&r->attempts[i]);
    free(r->attempts);
    r->attempts = NULL;
    r->n = 0;
}

/* "exit 3", "signal 11 (SIGSEGV)", "timed out after 2 s, SIGTERM then SIGKILL", ... */
void vram_try_describe_end(const vram_try_opts *o, const vram_try_attempt *a, char *buf,
                           size_t cap) {
    const vram_isolate_result *r = &a->res;
    char sigtxt[48] = "";
    if (r->signal) snprintf(sigtxt, sizeof sigtxt, "signal %d %s", r->signal,
                            r->signal_name ? r->signal_name : "unknown");
    switch (r->how) {
    case VRAM_ATTEMPT_NOT_STARTED:
        snprintf(buf, cap, "%s", r->start_error);
        return;
    case VRAM_ATTEMPT_TIMED_OUT:
        snprintf(buf, cap, "%s%.3g s, sent SIGTERM%s; it ended with %s",
                 r->cancelled ? "interrupted after " : "timed out after ",
                 r->cancelled ? r->seconds : o->timeout_s, r->sent_kill ? " then SIGKILL" : "",
                 r->signal ? sigtxt : (r->exit_code >= 0 ? "an exit" : "no status"));
        if (!r->signal && r->exit_code >= 0) {
            size_t n = strlen(buf);
            snprintf(buf + n, cap - n, " %d", r->exit_code);
        }
        return;
    case VRAM_ATTEMPT_SIGNALED:
        snprintf(buf, cap, "%s", sigtxt);
        return;
    default:
        snprintf(buf, cap, "exit %d", r->exit_code);
        return;
    }
}

static void json_text(vram_json *j, const char *p, size_t n) {
    char *t = vram_clean_text(p, n, n, 1);
    vram_json_string(j, t ? t : "");
    free(t);
}

static void json_cstr(vram_json *j, const char *s) { json_text(j, s, strlen(s)); }

/* A cJSON value through the CLI's writer (nesting was bounded when it was parsed). */
static void json_value(vram_json *j, const cJSON *v) {
    if (cJSON_IsObject(v)) {
        vram_json_begin_object(j);
        for (const cJSON *c = v->child; c; c = c->next) {
            char *k = vram_clean_text(c->string ? c->string : "", c->string ? strlen(c->string) : 0,
                                 VRAM_ISOLATE_RESULT_MAX, 1);
            vram_json_key(j, k ? k : "");
            free(k);
            json_value(j, c);
        }
        vram_json_end_object(j);
    } else if (cJSON_IsArray(v)) {
        vram_json_begin_array(j);
        for (const cJSON *c = v->child; c; c = c->next) json_value(j, c);
        vram_json_end_array(j);
    } else if (cJSON_IsString(v)) {
        json_cstr(j, v->valuestring ? v->valuestring : "");
    } else if (cJSON_IsNumber(v)) {
        double d = v->valuedouble;
        if (d == (double)(int64_t)d && d > -9007199254740992.0 && d < 9007199254740992.0)
            vram_json_i64(j, (int64_t)d);
        else
            vram_json_double(j, d);
    } else if (cJSON_IsBool(v)) {
        vram_json_bool(j, cJSON_IsTrue(v));
    } else {
        vram_json_null(j);
    }
}

static void json_attempt(vram_json *j, const vram_try_attempt *a) {
    const vram_isolate_result *r = &a->res;
    const vram_attempt_evidence *ev = &a->ev;
    vram_json_begin_object(j);
    vram_json_key(j, "strategy");
    json_cstr(j, a->strategy);
    vram_json_key(j, "device");
    json_cstr(j, a->device);
    vram_json_key(j, "dtype");
    json_cstr(j, a->dtype);
    vram_json_key(j, "argv");
    vram_json_begin_array(j);
    for (char **p = a->argv; *p; p++) json_cstr(j, *p);
    vram_json_end_array(j);
    vram_json_key_string(j, "outcome", vram_attempt_outcome_name(a->outcome));
    vram_json_key_string(j, "rule", vram_attempt_rule_name(ev->rule));
    vram_json_key_string(j, "reason", vram_attempt_rule_text(ev->rule));
    vram_json_key(j, "matched");
    if (ev->length > 0 && r->err.data)
        json_text(j, r->err.data + ev->offset, ev->length);
    else
        vram_json_null(j);
    vram_json_key_string(j, "source", ev->source);
    vram_json_key_i64_or_null(j, "cuda_code", ev->cuda_code != 0, ev->cuda_code);
    vram_json_key_i64_or_null(j, "exit_code", r->how != VRAM_ATTEMPT_NOT_STARTED && r->exit_code >= 0,
                              r->exit_code);
    vram_json_key_i64_or_null(j, "signal", r->signal != 0, r->signal);
    vram_json_key_string(j, "signal_name", r->signal_name);
    vram_json_key_double(j, "seconds", r->seconds);
    vram_json_key_bool(j, "timed_out", r->how == VRAM_ATTEMPT_TIMED_OUT);
    vram_json_key(j, "start_error");
    if (r->how == VRAM_ATTEMPT_NOT_STARTED)
        json_cstr(j, r->start_error);
    else
        vram_json_null(j);
    vram_json_key(j, "stderr_tail");
    json_text(j, r->err.data ? r->err.data : "", r->err.len);
    vram_json_key_u64(j, "stderr_bytes", r->err.total);
    vram_json_key(j, "stdout_tail");
    json_text(j, r->out.data ? r->out.data : "", r->out.len);
    vram_json_key_u64(j, "stdout_bytes", r->out.total);
    vram_json_key_i64_or_null(j, "escaped", r->escaped >= 0, r->escaped);
    vram_json_key(j, "result");
    if (a->result)
        json_value(j, a->result);
    else
        vram_json_null(j);
    vram_json_key_string(j, "result_error", a->result_error[0] ? a->result_error : NULL);
    vram_json_key(j, "measured");
    vram_peak_json(j, &a->measured);
    vram_json_end_object(j);
}

void vram_try_json(vram_json *j, const vram_try_opts *o, const vram_try_result *r) {
    const vram_try_attempt *as = r->attempts;
    const int n = r->n, chosen = r->chosen;
    vram_json_begin_object(j);
    vram_json_key(j, "command");
    vram_json_begin_array(j);
    for (int i = 0; i < o->ncommand; i++) json_cstr(j, o->command[i]);
    vram_json_end_array(j);
    vram_json_key(j, "source");
    vram_json_begin_object(j);
    vram_json_key_string(j, "kind", vram_try_chain_kind(&o->chain));
    vram_json_key(j, "value");
    json_cstr(j, vram_try_chain_value(&o->chain));
    vram_json_end_object(j);
    vram_json_key(j, "strategies");
    vram_json_begin_array(j);
    for (int i = 0; i < o->chain.n; i++) json_cstr(j, o->chain.strategies[i]);
    vram_json_end_array(j);
    vram_json_key(j, "skipped");
    vram_json_begin_array(j);
    for (int i = 0; i < o->chain.n_skipped; i++) {
        vram_json_begin_object(j);
        vram_json_key(j, "strategy");
        json_cstr(j, o->chain.skipped[i]);
        vram_json_key(j, "reason");
        json_cstr(j, o->chain.skipped_why[i]);
        vram_json_end_object(j);
    }
    vram_json_end_array(j);
    vram_json_key_double_or_null(j, "timeout_s", o->timeout_s > 0, o->timeout_s);
    vram_json_key_double(j, "grace_s", o->grace_s > 0 ? o->grace_s : VRAM_ISOLATE_DEFAULT_GRACE_S);
    vram_json_key(j, "attempts");
    vram_json_begin_array(j);
    for (int i = 0; i < n; i++) json_attempt(j, &as[i]);
    vram_json_end_array(j);
    vram_json_key(j, "chosen");
    if (chosen >= 0)
        json_cstr(j, as[chosen].strategy);
    else
        vram_json_null(j);
    vram_json_end_object(j);
}

