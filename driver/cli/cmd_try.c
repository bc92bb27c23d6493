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
        VRAM_TRY_MAX_STRATEGIES, VRAM_TRY_NAME_MAX);
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

enum { OPT_JSON = 1 };

static const struct option long_options[] = {
    {"strategies", required_argument, NULL, CLI_BY_NAME},
    {"timeout", required_argument, NULL, CLI_BY_NAME},
    {"grace", required_argument, NULL, CLI_BY_NAME},
    {"json", no_argument, NULL, OPT_JSON},
    {"plan", required_argument, NULL, CLI_BY_NAME},
    {"model", required_argument, NULL, CLI_BY_NAME},
    {"assume-gpu", required_argument, NULL, CLI_BY_NAME},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* Returns -1 when parsing succeeded, else the exit code to return. */
static int parse(int argc, char **argv, vram_try_opts *o, int *json) {
    char err[4400];
    int c, rc, idx = 0, dd = cli_chain_dashes(argc, argv);
    memset(o, 0, sizeof *o);
    cli_getopt_reset();
    while ((c = getopt_long(dd, argv, ":h", long_options, &idx)) != -1) {
        switch (c) {
        case 'h':
            usage(stdout);
            return VRAM_EXIT_OK;
        case OPT_JSON: *json = 1; break;
        case CLI_BY_NAME:
            if ((rc = cli_set(CMD, vram_try_set(o, long_options[idx].name, optarg, err, sizeof err), err)))
                return rc;
            break;
        case ':':
            return cli_usage_error(CMD, "option '%s' needs a value", argv[optind - 1]);
        default:
            return cli_usage_error(CMD, "unknown option '%s' (see 'vramkit try --help')",
                                   argv[optind - 1]);
        }
    }
    if ((rc = cli_chain_stray(CMD, argv, dd, optind))) return rc;
    if ((rc = cli_set(CMD, vram_try_chain_check(&o->chain, err, sizeof err), err))) return rc;
    if ((rc = cli_chain_command(CMD, argc, argv, dd, &o->command, &o->ncommand))) return rc;
    vram_status st = vram_plan_chain(&o->chain, err, sizeof err);
    return st == VRAM_OK ? -1 : cli_fail(CMD, st, err);
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
    vram_try_opts o;
    vram_try_result r;
    char err[512];
    int json = 0, rc = parse(argc, argv, &o, &json);
    if (rc >= 0) {
        vram_try_chain_free(&o.chain);
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
        for (int i = 0; i < o.chain.n_skipped; i++) {
            char *t = vram_clean_text(o.chain.skipped_why[i], strlen(o.chain.skipped_why[i]), TEXT_LINE_MAX, 0);
            printf("skipped %s: %s\n", o.chain.skipped[i], t ? t : "?");
            free(t);
        }
        if (fflush(stdout) != 0 || ferror(stdout)) write_failed = 1;
        o.on_attempt = print_attempt_line;
        o.ctx = &o;
    }
    o.reap = 1;
    o.cancel = &interrupted;
    vram_status st = vram_try_run(&o, &r, err, sizeof err);
    int sig = interrupted;
    for (int s = 0; s < 3; s++) sigaction(sigs[s], &old[s], NULL);
    if (sig) {
        fprintf(stderr, "vramkit: try: interrupted by %s: the running attempt was stopped\n",
                vram_signal_name(sig) ? vram_signal_name(sig) : "a signal");
        vram_try_free(&r);
        vram_try_chain_free(&o.chain);
        fflush(stdout);
        signal(sig, SIG_DFL);
        raise(sig);
        return VRAM_EXIT_ENV; /* the signal was blocked or ignored after all */
    }
    rc = st != VRAM_OK ? cli_error(VRAM_EXIT_ENV, CMD, "%s", err) : answer(&o, &r, json);
    vram_try_free(&r);
    vram_try_chain_free(&o.chain);
    return rc;
}
