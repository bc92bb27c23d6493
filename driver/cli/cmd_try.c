/* driver/cli/cmd_try.c — `vramkit try`: run a load under each strategy, in a child process,
 * until one works. Each attempt goes through the isolation library (isolate.h), so a
 * native crash, an OOM or a sticky CUDA error costs that attempt only; the core
 * (vramkit/attempt.h) says what each ending means. */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <vramkit/attempt.h>

#include "cli.h"
#include "cli_chain.h"
#include "cli_model.h"
#include "isolate/isolate.h"
#include "plan/plan_doc.h"
#include "plan/planner.h"

#define CMD "try"
#define MAX_STRATEGIES CLI_CHAIN_MAX
#define MAX_STRATEGY_LEN CLI_CHAIN_NAME_MAX
/* Longest "last stderr line" and VRAMKIT_RESULT summary in text mode, in bytes. */
#define TEXT_LINE_MAX 160

static void usage(FILE *out) {
    fprintf(out,
        "usage: vramkit try (--strategies LIST | --plan FILE | --model MODEL [--assume-gpu SPEC])\n"
        "                   [--timeout SECONDS] [--grace SECONDS] [--json] -- COMMAND [ARGS...]\n"
        "\n"
        "Runs COMMAND once per strategy, in order, each time in a fresh child process (spawned,\n"
        "never forked, in a process group of its own, stdin from /dev/null), until one attempt\n"
        "succeeds. A crash, an out-of-memory error or a sticky CUDA error ends that attempt\n"
        "only; the next strategy runs in a new process. When an attempt ends, whatever it\n"
        "left running is ended too: its process group, and processes that left the group\n"
        "(setsid, daemons), which vramkit adopts as a subreaper (Linux), so none keeps GPU\n"
        "memory from the next attempt.\n"
        "\n"
        "options:\n"
        "  --strategies LIST   comma-separated strategies to try in order, e.g. fp16,int8,cpu\n"
        "                      (at most %d, each 1 to %d characters, no blanks)\n"
        "  --plan FILE         the strategies of a plan saved by 'vramkit plan --model MODEL\n"
        "                      --save FILE', in its order, skipping those that do not fit\n"
        "  --model MODEL       the chain 'vramkit plan --model MODEL' computes now (default\n"
        "                      workload), skipping those that do not fit; MODEL as for plan\n"
        "  --assume-gpu SPEC   with --model: plan for this GPU (as in vramkit plan; repeat\n"
        "                      for several); without it the plan has no GPU\n"
        "  --timeout SECONDS   wall-clock limit per attempt, like 600 or 2.5 (default: none);\n"
        "                      when it passes the attempt's process group gets SIGTERM, then\n"
        "                      SIGKILL after the grace period\n"
        "  --grace SECONDS     time between SIGTERM and SIGKILL (default 2)\n"
        "  --json              print one JSON document at the end instead of text lines\n"
        "  -h, --help          this text\n"
        "\n",
        MAX_STRATEGIES, MAX_STRATEGY_LEN);
    fputs(
        "Each attempt replaces {strategy}, {device} and {dtype} anywhere in COMMAND and ARGS,\n"
        "and adds to the environment VRAMKIT_STRATEGY, VRAMKIT_DEVICE, VRAMKIT_DTYPE and\n"
        "VRAMKIT_ATTEMPT (1 for the first attempt). Strategies and what they set:\n"
        "  fp32 cuda:0 float32    fp16 cuda:0 float16    bf16 cuda:0 bfloat16\n"
        "  fp8  cuda:0 float8_e4m3fn                     int8 cuda:0 int8\n"
        "  int4 cuda:0 int4       nf4  cuda:0 nf4        cpu  cpu float32\n"
        "  gpu+cpu, split: auto float16 (as much on the GPU as fits, the rest on the CPU)\n"
        "  any other name: cuda:0, and the name itself as the dtype\n"
        "From a plan (--plan, --model), the device is the plan's: cuda:N for GPU N, cpu, or\n"
        "auto when the strategy spans several devices (multi_gpu, gpu_cpu); the dtype is the\n"
        "plan's format: float32, float16, bfloat16, int8, nf4. Strategies that do not fit are\n"
        "listed first as 'skipped NAME: why' and are not run.\n"
        "\n"
        "Outcomes (how an attempt ended; the first rule that applies):\n"
        "  start_failed   the command could not be started (not found, not executable)\n"
        "  timeout        it ran past --timeout and was stopped\n"
        "  success        it exited with code 0\n"
        "  cuda_sticky    its stderr names a sticky CUDA error (illegal memory access,\n"
        "                 cudaErrorIllegalAddress, CUDA_ERROR_LAUNCH_FAILED, error 700, ...)\n"
        "  not_supported  its stderr says \"operation not supported\" (CUDA error 801)\n"
        "  oom            its stderr says out of memory (CUDA, PyTorch, cuBLAS), or it was\n"
        "                 killed by a SIGKILL vramkit did not send (the kernel's OOM killer)\n"
        "  crash          killed by SIGSEGV, SIGBUS, SIGILL, SIGFPE or SIGABRT\n"
        "  failed         any other nonzero exit or signal\n"
        "Each attempt prints one line as it ends: strategy, outcome, exit code or signal,\n"
        "seconds, the evidence, and the last line of its stderr; then 'chosen: STRATEGY'.\n"
        "A child may print a line 'VRAMKIT_RESULT {json object}' on stdout (peak memory, the\n"
        "device it used, ...): the last such line is parsed and reported, or rejected with\n"
        "the reason when it is not a JSON object.\n"
        "\n"
        "JSON (--json): {command, source {kind: strategies|plan|model, value}, strategies\n"
        "(those to try), skipped [{strategy, reason}], timeout_s (null: none), grace_s, attempts,\n"
        "chosen (the strategy that succeeded, or null)}; each attempt is {strategy, device,\n"
        "dtype, argv, outcome, rule, reason, matched (the stderr text that decided, or null),\n"
        "source, cuda_code, exit_code, signal, signal_name (null when not applicable),\n"
        "seconds, timed_out, start_error, stderr_tail, stderr_bytes, stdout_tail, stdout_bytes\n"
        "(tails are the last 64 KiB; NULs and bytes that are not UTF-8 appear as '?'),\n"
        "escaped (processes it left outside its process group, which vramkit ended; null\n"
        "when they could not be listed),\n"
        "result (the VRAMKIT_RESULT object, or null), result_error (or null)}.\n"
        "\n"
        "exit codes: 0 an attempt succeeded, 1 every attempt failed (or the plan has no\n"
        "strategy that fits), 2 bad usage or input (a malformed plan file), 3 environment\n"
        "error (a plan file that cannot be read, cannot write the report); interrupted by SIGINT/SIGTERM/SIGHUP,\n"
        "it stops the running attempt and then dies of the same signal\n",
        out);
}

enum { OPT_STRATEGIES = 256, OPT_TIMEOUT, OPT_GRACE, OPT_JSON, OPT_PLAN, OPT_MODEL, OPT_GPU };

static const struct option long_options[] = {
    {"strategies", required_argument, NULL, OPT_STRATEGIES},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"grace", required_argument, NULL, OPT_GRACE},
    {"json", no_argument, NULL, OPT_JSON},
    {"plan", required_argument, NULL, OPT_PLAN},
    {"model", required_argument, NULL, OPT_MODEL},
    {"assume-gpu", required_argument, NULL, OPT_GPU},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

typedef struct opts {
    cli_chain chain;            /* the strategies (cli_chain.h) */
    double timeout_s, grace_s;  /* 0: none / default */
    int json;
    char **command;             /* argv after "--" */
    int n_command;
} opts;

/* Returns -1 when parsing succeeded, else the exit code to return. */
static int parse(int argc, char **argv, opts *o) {
    int c, rc, dd = cli_chain_dashes(argc, argv);
    memset(o, 0, sizeof *o);
    cli_getopt_reset();
    while ((c = getopt_long(dd, argv, ":h", long_options, NULL)) != -1) {
        switch (c) {
        case 'h':
            usage(stdout);
            return VRAM_EXIT_OK;
        case OPT_STRATEGIES:
            if ((rc = cli_chain_strategies(CMD, optarg, &o->chain))) return rc;
            break;
        case OPT_TIMEOUT:
            if ((rc = cli_opt_seconds(CMD, "timeout", optarg, &o->timeout_s))) return rc;
            break;
        case OPT_GRACE:
            if ((rc = cli_opt_seconds(CMD, "grace", optarg, &o->grace_s))) return rc;
            break;
        case OPT_JSON: o->json = 1; break;
        case OPT_PLAN:
            if ((rc = cli_chain_plan(CMD, optarg, &o->chain))) return rc;
            break;
        case OPT_MODEL:
            if ((rc = cli_chain_model(CMD, optarg, &o->chain))) return rc;
            break;
        case OPT_GPU:
            if ((rc = cli_chain_gpu(CMD, optarg, &o->chain))) return rc;
            break;
        case ':':
            return cli_usage_error(CMD, "option '%s' needs a value", argv[optind - 1]);
        default:
            return cli_usage_error(CMD, "unknown option '%s' (see 'vramkit try --help')",
                                   argv[optind - 1]);
        }
    }
    if ((rc = cli_chain_stray(CMD, argv, dd, optind))) return rc;
    if ((rc = cli_chain_check(CMD, &o->chain))) return rc;
    if ((rc = cli_chain_command(CMD, argc, argv, dd, &o->command, &o->n_command))) return rc;
    if ((rc = cli_chain_load(CMD, &o->chain))) return rc;
    return -1;
}

/* ---- one attempt ---------------------------------------------------------------------------- */

typedef struct attempt {
    const char *strategy, *device, *dtype;
    char **argv;   /* substituted, NULL-terminated */
    vram_isolate_result res;
    vram_attempt_outcome outcome;
    vram_attempt_evidence ev;
    cJSON *result; /* the VRAMKIT_RESULT object */
    char result_error[256];
} attempt;

static void attempt_free(attempt *a) {
    cli_chain_argv_free(a->argv);
    a->argv = NULL;
    vram_isolate_result_free(&a->res);
    cJSON_Delete(a->result);
    a->result = NULL;
}

static volatile sig_atomic_t interrupted;

static void on_signal(int sig) { interrupted = sig; }

/* Runs attempt number k (0-based). Returns 0, or an exit code when the run itself failed. */
static int run_attempt(const opts *o, int k, attempt *a) {
    cli_chain_attempt_env env;
    a->strategy = o->chain.strategies[k];
    cli_chain_strategy(&o->chain, k, &a->device, &a->dtype);
    if (!(a->argv = cli_chain_argv(&o->chain, k, o->command, o->n_command)))
        return cli_error(VRAM_EXIT_ENV, CMD, "out of memory");
    cli_chain_env(&o->chain, k, k + 1, &env);

    vram_isolate_opts io;
    memset(&io, 0, sizeof io);
    io.argv = (const char *const *)a->argv;
    io.env = env.env;
    io.timeout_s = o->timeout_s;
    io.grace_s = o->grace_s;
    io.cancel = &interrupted;
    vram_status st = cli_chain_isolate(&io, &a->res);
    if (st != VRAM_OK)
        return cli_error(VRAM_EXIT_ENV, CMD, "cannot run '%s': %s", a->argv[0], vram_status_str(st));
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
    return 0;
}

/* "exit 3", "signal 11 (SIGSEGV)", "timed out after 2 s, SIGTERM then SIGKILL", ... */
static void describe_end(const opts *o, const attempt *a, char *buf, size_t cap) {
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

static int print_attempt_line(const opts *o, int k, const attempt *a) {
    char how[400], why[256] = "";
    describe_end(o, a, how, sizeof how);
    const vram_attempt_evidence *ev = &a->ev;
    if (ev->length > 0 && a->res.err.data) {
        char *m = cli_clean_text(a->res.err.data + ev->offset, ev->length, 80, 0);
        snprintf(why, sizeof why, "; stderr has \"%s\"%s%s", m ? m : "?",
                 ev->source[0] ? " from " : "", ev->source);
        free(m);
    } else if (ev->rule == VRAM_ATTEMPT_RULE_SIGKILL || ev->rule == VRAM_ATTEMPT_RULE_SHELL_SIGNAL) {
        snprintf(why, sizeof why, "; %s", vram_attempt_rule_text(ev->rule));
    }
    printf("[%d/%d] %s: %s (%s%s) after %.2f s", k + 1, o->chain.n, a->strategy,
           vram_attempt_outcome_name(a->outcome), how, why, a->res.seconds);
    if (a->res.err.len > 0) {
        const char *ls;
        size_t ln;
        cli_last_line(a->res.err.data, a->res.err.len, &ls, &ln);
        if (ln > 0) {
            char *t = cli_clean_text(ls, ln, TEXT_LINE_MAX, 0);
            printf(" | stderr: %s", t ? t : "?");
            free(t);
        }
    }
    if (a->res.escaped > 0)
        printf(" | ended %d process%s it left outside its process group", a->res.escaped,
               a->res.escaped == 1 ? "" : "es");
    if (a->result) {
        char *j = cJSON_PrintUnformatted(a->result);
        char *t = j ? cli_clean_text(j, strlen(j), TEXT_LINE_MAX, 0) : NULL;
        printf(" | result: %s", t ? t : "?");
        free(t);
        cJSON_free(j);
    } else if (a->result_error[0]) {
        printf(" | %s", a->result_error);
    }
    printf("\n");
    return fflush(stdout) == 0 && !ferror(stdout) ? 0 : -1;
}

/* ---- JSON ------------------------------------------------------------------------------------ */

static void json_text(vram_json *j, const char *p, size_t n) {
    char *t = cli_clean_text(p, n, n, 1);
    vram_json_string(j, t ? t : "");
    free(t);
}

static void json_cstr(vram_json *j, const char *s) { json_text(j, s, strlen(s)); }

/* A cJSON value through the CLI's writer (nesting was bounded when it was parsed). */
static void json_value(vram_json *j, const cJSON *v) {
    if (cJSON_IsObject(v)) {
        vram_json_begin_object(j);
        for (const cJSON *c = v->child; c; c = c->next) {
            char *k = cli_clean_text(c->string ? c->string : "", c->string ? strlen(c->string) : 0,
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

static void json_int_or_null(vram_json *j, const char *key, int have, int64_t v) {
    vram_json_key(j, key);
    if (have)
        vram_json_i64(j, v);
    else
        vram_json_null(j);
}

static void json_attempt(vram_json *j, const attempt *a) {
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
    vram_json_key(j, "outcome");
    vram_json_string(j, vram_attempt_outcome_name(a->outcome));
    vram_json_key(j, "rule");
    vram_json_string(j, vram_attempt_rule_name(ev->rule));
    vram_json_key(j, "reason");
    vram_json_string(j, vram_attempt_rule_text(ev->rule));
    vram_json_key(j, "matched");
    if (ev->length > 0 && r->err.data)
        json_text(j, r->err.data + ev->offset, ev->length);
    else
        vram_json_null(j);
    vram_json_key(j, "source");
    vram_json_string(j, ev->source);
    json_int_or_null(j, "cuda_code", ev->cuda_code != 0, ev->cuda_code);
    json_int_or_null(j, "exit_code", r->how != VRAM_ATTEMPT_NOT_STARTED && r->exit_code >= 0,
                     r->exit_code);
    json_int_or_null(j, "signal", r->signal != 0, r->signal);
    vram_json_key(j, "signal_name");
    vram_json_string(j, r->signal_name);
    vram_json_key(j, "seconds");
    vram_json_double(j, r->seconds);
    vram_json_key(j, "timed_out");
    vram_json_bool(j, r->how == VRAM_ATTEMPT_TIMED_OUT);
    vram_json_key(j, "start_error");
    if (r->how == VRAM_ATTEMPT_NOT_STARTED)
        json_cstr(j, r->start_error);
    else
        vram_json_null(j);
    vram_json_key(j, "stderr_tail");
    json_text(j, r->err.data ? r->err.data : "", r->err.len);
    vram_json_key(j, "stderr_bytes");
    vram_json_u64(j, r->err.total);
    vram_json_key(j, "stdout_tail");
    json_text(j, r->out.data ? r->out.data : "", r->out.len);
    vram_json_key(j, "stdout_bytes");
    vram_json_u64(j, r->out.total);
    json_int_or_null(j, "escaped", r->escaped >= 0, r->escaped);
    vram_json_key(j, "result");
    if (a->result)
        json_value(j, a->result);
    else
        vram_json_null(j);
    vram_json_key(j, "result_error");
    if (a->result_error[0])
        vram_json_string(j, a->result_error);
    else
        vram_json_null(j);
    vram_json_end_object(j);
}

static int print_json(const opts *o, const attempt *as, int n, int chosen) {
    vram_json j;
    vram_json_init(&j, stdout);
    vram_json_begin_object(&j);
    vram_json_key(&j, "command");
    vram_json_begin_array(&j);
    for (int i = 0; i < o->n_command; i++) json_cstr(&j, o->command[i]);
    vram_json_end_array(&j);
    vram_json_key(&j, "source");
    vram_json_begin_object(&j);
    vram_json_key(&j, "kind");
    vram_json_string(&j, cli_chain_kind(&o->chain));
    vram_json_key(&j, "value");
    json_cstr(&j, cli_chain_value(&o->chain));
    vram_json_end_object(&j);
    vram_json_key(&j, "strategies");
    vram_json_begin_array(&j);
    for (int i = 0; i < o->chain.n; i++) json_cstr(&j, o->chain.strategies[i]);
    vram_json_end_array(&j);
    vram_json_key(&j, "skipped");
    vram_json_begin_array(&j);
    for (int i = 0; i < o->chain.n_skipped; i++) {
        vram_json_begin_object(&j);
        vram_json_key(&j, "strategy");
        json_cstr(&j, o->chain.skipped[i]);
        vram_json_key(&j, "reason");
        json_cstr(&j, o->chain.skipped_why[i]);
        vram_json_end_object(&j);
    }
    vram_json_end_array(&j);
    vram_json_key(&j, "timeout_s");
    if (o->timeout_s > 0)
        vram_json_double(&j, o->timeout_s);
    else
        vram_json_null(&j);
    vram_json_key(&j, "grace_s");
    vram_json_double(&j, o->grace_s > 0 ? o->grace_s : VRAM_ISOLATE_DEFAULT_GRACE_S);
    vram_json_key(&j, "attempts");
    vram_json_begin_array(&j);
    for (int i = 0; i < n; i++) json_attempt(&j, &as[i]);
    vram_json_end_array(&j);
    vram_json_key(&j, "chosen");
    if (chosen >= 0)
        json_cstr(&j, as[chosen].strategy);
    else
        vram_json_null(&j);
    vram_json_end_object(&j);
    vram_json_finish(&j);
    return ferror(stdout) ? -1 : 0;
}

/* ---- the command ------------------------------------------------------------------------------ */

static void opts_free(opts *o) { cli_chain_free(&o->chain); }

int cmd_try(int argc, char **argv) {
    opts o;
    int rc = parse(argc, argv, &o);
    if (rc >= 0) {
        opts_free(&o);
        return rc;
    }
    attempt *as = (attempt *)calloc((size_t)o.chain.n, sizeof *as);
    if (!as) {
        opts_free(&o);
        return cli_error(VRAM_EXIT_ENV, CMD, "out of memory");
    }

    /* Ctrl-C reaches only vramkit (the child has a group of its own): stop the child, then
     * die of the same signal, so no attempt outlives the command. */
    struct sigaction sa, old[3];
    static const int sigs[3] = {SIGINT, SIGTERM, SIGHUP};
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    interrupted = 0;
    for (int s = 0; s < 3; s++) sigaction(sigs[s], &sa, &old[s]);

    int n = 0, chosen = -1, write_failed = 0;
    rc = -1;
    if (!o.json) {
        for (int i = 0; i < o.chain.n_skipped; i++) {
            char *t = cli_clean_text(o.chain.skipped_why[i], strlen(o.chain.skipped_why[i]), TEXT_LINE_MAX, 0);
            printf("skipped %s: %s\n", o.chain.skipped[i], t ? t : "?");
            free(t);
        }
        if (fflush(stdout) != 0 || ferror(stdout)) write_failed = 1;
    }
    for (int k = 0; k < o.chain.n && !interrupted; k++) {
        int e = run_attempt(&o, k, &as[k]);
        n = k + 1;
        if (e != 0) {
            rc = e;
            break;
        }
        if (as[k].res.cancelled) break;
        if (!o.json && print_attempt_line(&o, k, &as[k]) != 0) write_failed = 1;
        if (as[k].outcome == VRAM_ATTEMPT_SUCCESS) {
            chosen = k;
            break;
        }
    }
    int sig = interrupted;
    for (int s = 0; s < 3; s++) sigaction(sigs[s], &old[s], NULL);

    if (sig) {
        fprintf(stderr, "vramkit: try: interrupted by %s: the running attempt was stopped\n",
                vram_signal_name(sig) ? vram_signal_name(sig) : "a signal");
        for (int i = 0; i < n; i++) attempt_free(&as[i]);
        free(as);
        opts_free(&o);
        fflush(stdout);
        signal(sig, SIG_DFL);
        raise(sig);
        return VRAM_EXIT_ENV; /* the signal was blocked or ignored after all */
    }
    if (rc < 0) {
        if (o.json) {
            if (print_json(&o, as, n, chosen) != 0) write_failed = 1;
        } else if (chosen >= 0) {
            printf("chosen: %s\n", as[chosen].strategy);
        } else {
            printf("chosen: none\n");
        }
        if (fflush(stdout) != 0 || ferror(stdout)) write_failed = 1;
        if (write_failed)
            rc = cli_error(VRAM_EXIT_ENV, CMD, "cannot write the report to standard output");
        else if (chosen >= 0)
            rc = VRAM_EXIT_OK;
        else {
            char list[512] = "";
            size_t used = 0;
            for (int i = 0; i < n && used + 1 < sizeof list; i++) {
                int w = snprintf(list + used, sizeof list - used, "%s%s: %s", i ? ", " : "",
                                 as[i].strategy, vram_attempt_outcome_name(as[i].outcome));
                if (w < 0) break;
                used += (size_t)w;
            }
            rc = cli_error(VRAM_EXIT_NO, CMD, "every strategy failed (%s)", list);
        }
    }
    for (int i = 0; i < n; i++) attempt_free(&as[i]);
    free(as);
    opts_free(&o);
    return rc;
}
