/* driver/cli/cmd_try.c — `vramkit try`: run a load under each strategy, in a child process,
 * until one works (isolate/try.h); this file reads the options, prints each attempt as it ends,
 * and stops the running attempt on Ctrl-C. */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "cli_chain.h"
#include "isolate/try.h"
#include "plan/plan_run.h"

#define CMD "try"
/* Longest "last stderr line" and VRAMKIT_RESULT summary in text mode, in bytes. */
#define TEXT_LINE_MAX 160

/* The names vramkit gives a meaning (vramkit/strategy.h's VRAM_STRATEGY_NAMES) and what each
 * sets, three a line. */
static void strategy_names(FILE *out) {
    int k = 0;
#define VRAM__NAME_LINE(name, where, dtype)                                                       \
    fprintf(out, "%s%s %s %s%s", k % 3 ? "   " : "  ", name, vram_try_where_device(where), dtype, \
            k % 3 == 2 ? "\n" : "");                                                              \
    k++;
    VRAM_STRATEGY_NAMES(VRAM__NAME_LINE)
#undef VRAM__NAME_LINE
    if (k % 3) fputc('\n', out);
}

static void usage(FILE *out) {
    fprintf(out,
        "usage: vramkit try (--strategies LIST | --plan FILE | --model MODEL [--assume-gpu SPEC])\n"
        "                   [--timeout SECONDS] [--grace SECONDS] [--calibration FILE|none]\n"
        "                   [--json] -- COMMAND [ARGS...]\n"
        "\n"
        "Runs COMMAND once per strategy, in order, each time in a fresh child process (spawned,\n"
        "in a process group of its own), until one attempt succeeds. A crash, an out-of-memory\n"
        "error or a sticky CUDA error ends that attempt only; whatever it left running is ended\n"
        "with it.\n"
        "\n"
        "options:\n"
        "  --strategies LIST   comma-separated strategies in order, e.g. fp16,int8,cpu (at most\n"
        "                      %d, each 1 to %d characters)\n"
        "  --plan FILE         the strategies of a plan saved by 'vramkit plan --save FILE' that fit\n"
        "  --model MODEL       those of the plan 'vramkit plan --model MODEL' makes now\n"
        "  --assume-gpu SPEC   with --model: plan for this GPU (repeat for several)\n"
        "  --timeout SECONDS   wall-clock limit per attempt (default none): SIGTERM, then SIGKILL\n"
        "  --grace SECONDS     time between them (default 2)\n"
        "  --calibration FILE  with --plan or --model: append each attempt's measured peak there\n"
        "                      for 'vramkit plan --calibration' (default: ~/.cache/vramkit/\n"
        "                      calibration.jsonl under $XDG_CACHE_HOME if set; none: no file)\n"
        "  --json              one JSON document at the end instead of a line per attempt\n"
        "\n"
        "COMMAND and ARGS get {strategy}, {device} and {dtype} replaced; the environment gets\n"
        "VRAMKIT_STRATEGY, VRAMKIT_DEVICE, VRAMKIT_DTYPE and VRAMKIT_ATTEMPT. A name means:\n",
        VRAM_TRY_MAX_STRATEGIES, VRAM_TRY_NAME_MAX);
    strategy_names(out);
    fputs(
        "  any other name: cuda:0 and the name as the dtype. From a plan: the plan's device\n"
        "  (cuda:N for GPU N, cpu, auto when split) and format; 'skipped NAME: why' for those\n"
        "  that do not fit.\n"
        "Outcomes: start_failed, timeout, success, cuda_sticky, not_supported, oom, crash, failed.\n"
        "A child may print 'VRAMKIT_RESULT {json object}': the last such line is reported, and\n"
        "'vramkit: peak_bytes=N': its own peak, beside NVML's of its process group.\n"
        "\n"
        "exit codes: 0 an attempt succeeded, 1 every attempt failed (or none fits the plan),\n"
        "            2 bad usage or input, 3 environment error; on SIGINT, SIGTERM or SIGHUP it\n"
        "            stops the attempt, then dies of the same signal\n"
        "Manual, with the outcome rules and the JSON fields: docs/try.md\n",
        out);
}

enum { FLAG_JSON = 1u << 0 };

/* The options: try's own, and the calibration file's. */
typedef struct try_args {
    vram_try_opts o;
    cli_calib calib;
} try_args;

static vram_status set(void *ctx, const char *name, const char *arg, char *err, size_t cap) {
    try_args *t = ctx;
    if (cli_calib_option(&t->calib, name, arg)) return VRAM_OK;
    return vram_try_set(&t->o, name, arg, err, cap);
}

/* Returns -1 when parsing succeeded, else the exit code to return. */
static int parse(int argc, char **argv, try_args *t, int *json) {
    char err[4400];
    unsigned flags = 0;
    vram_try_opts *o = &t->o;
    int rc, dd = cli_chain_dashes(argc, argv);
    const cli_spec spec = {CMD, "strategies= timeout= grace= plan= model= assume-gpu= calibration=",
                           "json", set, t, usage, NULL, 1, dd};
    memset(t, 0, sizeof *t);
    if ((rc = cli_parse(&spec, argc, argv, &flags)) >= 0) return rc;
    *json = (flags & FLAG_JSON) != 0;
    if ((rc = cli_chain_stray(CMD, argv, dd, optind))) return rc;
    if ((rc = cli_set(CMD, vram_try_chain_check(&o->chain, err, sizeof err), err))) return rc;
    if ((rc = cli_chain_command(CMD, argc, argv, dd, &o->command, &o->ncommand))) return rc;
    return cli_chain_plan(CMD, &o->chain, &t->calib);
}

/* ---- text -------------------------------------------------------------------------------- */

static int write_failed;

static void print_attempt_line(void *ctx, int k, const vram_try_attempt *a) {
    const vram_try_opts *o = ctx;
    char how[400], why[256] = "";
    vram_try_describe_end(o, a, how, sizeof how);
    const vram_attempt_evidence *ev = &a->ev;
    if (ev->length > 0 && a->res.err.data) {
        char *m = vram_clean_text(a->res.err.data + ev->offset, ev->length, 80, 0);
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
        vram_last_line(a->res.err.data, a->res.err.len, &ls, &ln);
        if (ln > 0) {
            char *t = vram_clean_text(ls, ln, TEXT_LINE_MAX, 0);
            printf(" | stderr: %s", t ? t : "?");
            free(t);
        }
    }
    if (a->res.escaped > 0)
        printf(" | ended %d process%s it left outside its process group", a->res.escaped,
               a->res.escaped == 1 ? "" : "es");
    if (a->result) {
        char *j = cJSON_PrintUnformatted(a->result);
        char *t = j ? vram_clean_text(j, strlen(j), TEXT_LINE_MAX, 0) : NULL;
        printf(" | result: %s", t ? t : "?");
        free(t);
        cJSON_free(j);
    } else if (a->result_error[0]) {
        printf(" | %s", a->result_error);
    }
    printf("\n");
    if (cli_measured_line(&a->measured, why, sizeof why)) printf("      %s\n", why);
    if (fflush(stdout) != 0 || ferror(stdout)) write_failed = 1;
}

/* ---- the command ------------------------------------------------------------------------- */

static volatile sig_atomic_t interrupted;

static void on_signal(int sig) { interrupted = sig; }

/* The answer once every attempt ran: the report, and the exit code. */
static int answer(const vram_try_opts *o, const vram_try_result *r, int json) {
    if (json) {
        vram_json j;
        vram_json_init(&j, stdout);
        vram_try_json(&j, o, r);
        vram_json_finish(&j);
    } else {
        printf("chosen: %s\n", r->chosen >= 0 ? r->attempts[r->chosen].strategy : "none");
    }
    if (fflush(stdout) != 0 || ferror(stdout)) write_failed = 1;
    if (write_failed) return cli_error(VRAM_EXIT_ENV, CMD, "cannot write the report to standard output");
    if (r->chosen >= 0) return VRAM_EXIT_OK;
    char list[512] = "";
    size_t used = 0;
    for (int i = 0; i < r->n && used + 1 < sizeof list; i++) {
        int w = snprintf(list + used, sizeof list - used, "%s%s: %s", i ? ", " : "",
                         r->attempts[i].strategy, vram_attempt_outcome_name(r->attempts[i].outcome));
        if (w < 0) break;
        used += (size_t)w;
    }
    return cli_error(VRAM_EXIT_NO, CMD, "every strategy failed (%s)", list);
}

int cmd_try(int argc, char **argv) {
    static try_args ta; /* large: not on the stack */
    vram_try_result r;
    char err[512];
    int json = 0, rc = parse(argc, argv, &ta, &json);
    vram_try_opts *o = &ta.o;
    if (rc >= 0) {
        vram_try_chain_free(&o->chain);
        return rc;
    }
    /* Ctrl-C reaches only vramkit (the child has a group of its own): stop the child, then
     * die of the same signal, so no attempt outlives the command. */
    struct sigaction sa, old[3];
    static const int sigs[3] = {SIGINT, SIGTERM, SIGHUP};
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    interrupted = 0;
    write_failed = 0;
    for (int s = 0; s < 3; s++) sigaction(sigs[s], &sa, &old[s]);
    if (!json) {
        for (int i = 0; i < o->chain.n_skipped; i++) {
            char *t = vram_clean_text(o->chain.skipped_why[i], strlen(o->chain.skipped_why[i]), TEXT_LINE_MAX, 0);
            printf("skipped %s: %s\n", o->chain.skipped[i], t ? t : "?");
            free(t);
        }
        if (fflush(stdout) != 0 || ferror(stdout)) write_failed = 1;
        o->on_attempt = print_attempt_line;
        o->ctx = o;
    }
    o->reap = 1;
    o->self_exe = cli_chain_self_exe(CMD); /* each attempt dies with vramkit */
    o->cancel = &interrupted;
    vram_status st = vram_try_run(o, &r, err, sizeof err);
    int sig = interrupted;
    for (int s = 0; s < 3; s++) sigaction(sigs[s], &old[s], NULL);
    if (sig) {
        fprintf(stderr, "vramkit: try: interrupted by %s: the running attempt was stopped\n",
                vram_signal_name(sig) ? vram_signal_name(sig) : "a signal");
        vram_try_free(&r);
        vram_try_chain_free(&o->chain);
        fflush(stdout);
        signal(sig, SIG_DFL);
        raise(sig);
        return VRAM_EXIT_ENV; /* the signal was blocked or ignored after all */
    }
    for (int i = 0; i < r.n; i++) /* the attempts that ran, for plan --calibration */
        if (r.attempts[i].res.how != VRAM_ATTEMPT_NOT_STARTED)
            cli_calib_record(CMD, &ta.calib, &o->chain, r.attempts[i].strategy,
                             vram_attempt_outcome_name(r.attempts[i].outcome), &r.attempts[i].measured);
    rc = st != VRAM_OK ? cli_error(VRAM_EXIT_ENV, CMD, "%s", err) : answer(o, &r, json);
    vram_try_free(&r);
    vram_try_chain_free(&o->chain);
    return rc;
}
