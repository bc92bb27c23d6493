/* driver/cli/cmd_run.c — `vramkit run`: start a service under the strategy chain and supervise
 * it once it is ready (isolate/service.h). This file reads the options, says what happens on
 * stderr, one line an event, and writes the events as JSON lines to --events. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vramkit/attempt.h>

#include "cli.h"
#include "cli_chain.h"
#include "isolate/service.h"
#include "plan/plan_run.h"

#define CMD "run"
#define TEXT_LINE_MAX 160

static void usage(FILE *out) {
    fprintf(out,
        "usage: vramkit run (--strategies LIST | --plan FILE | --model MODEL [--assume-gpu SPEC])\n"
        "                   [--ready-regex RE] [--ready-port N] [--ready-file PATH]\n"
        "                   [--ready-timeout SECONDS] [--grace SECONDS]\n"
        "                   [--restart N] [--degrade] [--backoff SECONDS] [--backoff-max SECONDS]\n"
        "                   [--stable SECONDS] [--events FILE|-] -- COMMAND [ARGS...]\n"
        "\n"
        "Starts a service (COMMAND) under each strategy in order, each time in a fresh child\n"
        "process (as 'vramkit try' does: spawned, in a process group of its own, stdin from\n"
        "/dev/null, whatever it leaves behind ended when it ends), until one becomes ready.\n"
        "A crash, an out-of-memory error, a sticky CUDA error, an exit or the ready timeout\n"
        "before ready moves on to the next strategy. Once ready, vramkit stays as the\n"
        "service's supervisor until it ends.\n"
        "\n"
        "strategies (as for 'vramkit try'; see 'vramkit try --help' for what each sets):\n"
        "  --strategies LIST   comma-separated strategies in order, e.g. fp16,int8,cpu\n"
        "                      (at most %d, each 1 to %d characters, no blanks)\n"
        "  --plan FILE         the strategies of a plan saved by 'vramkit plan --save FILE'\n"
        "  --model MODEL       the chain 'vramkit plan --model MODEL' computes now\n"
        "  --assume-gpu SPEC   with --model: plan for this GPU (repeat for several)\n"
        "COMMAND and ARGS get {strategy}, {device} and {dtype} replaced, and the environment\n"
        "VRAMKIT_STRATEGY, VRAMKIT_DEVICE, VRAMKIT_DTYPE and VRAMKIT_ATTEMPT (1, 2, ... over\n"
        "every start, restarts included), exactly as with 'vramkit try'.\n"
        "\n"
        "readiness (the first that happens; a line VRAMKIT_READY always counts):\n"
        "  a line on stdout that is VRAMKIT_READY, alone or followed by a blank and more\n"
        "  --ready-regex RE    a line of stdout or stderr matches the POSIX extended regular\n"
        "                      expression RE (e.g. 'Application startup complete')\n"
        "  --ready-port N      a TCP connection to port N on 127.0.0.1 (or ::1) succeeds\n"
        "  --ready-file PATH   PATH appears (or, when it is there as the attempt starts, is\n"
        "                      replaced or modified); ports and files are looked at every 0.1 s\n"
        "  --ready-timeout SECONDS  not ready this long after its start: the attempt is\n"
        "                      stopped (SIGTERM to its group, SIGKILL after --grace) and\n"
        "                      counts as a timeout (default %.0f)\n"
        "  --grace SECONDS     time between SIGTERM and SIGKILL on a ready timeout (default 2)\n"
        "The service's stdout is a pipe: a program that buffers it must flush the ready line\n"
        "(Python: print('VRAMKIT_READY', flush=True), or PYTHONUNBUFFERED=1).\n"
        "\n",
        VRAM_TRY_MAX_STRATEGIES, VRAM_TRY_NAME_MAX, VRAM_RUN_DEFAULT_READY_TIMEOUT_S);
    fputs(
        "policy, when the service dies after it was ready:\n"
        "  --restart N         restart it (same strategy) up to N times in a row (default 0:\n"
        "                      no restart, vramkit ends with the service's status); the delay\n"
        "                      doubles from --backoff to --backoff-max; a run of --stable\n"
        "                      seconds after ready starts the count again; N restarts in a\n"
        "                      row used up is a crash loop: a summary, and exit 1\n"
        "  --degrade           an out-of-memory error or sticky CUDA error after ready moves\n"
        "                      to the next strategy instead (a smaller load; a new process)\n"
        "  --backoff SECONDS   delay before the first restart in a row (default 1)\n"
        "  --backoff-max SECONDS  the longest delay (default 60)\n"
        "  --stable SECONDS    a run this long after ready resets the count (default 60)\n"
        "A service that exits with code 0 is not restarted: vramkit exits 0.\n"
        "\n"
        "supervision:\n"
        "  The service's stdout and stderr pass through to vramkit's, line by line, from its\n"
        "  start (the last 64 KiB of each are kept to classify how it ended). vramkit's own\n"
        "  lines go to stderr and start with 'vramkit: run: '. SIGTERM, SIGINT, SIGHUP,\n"
        "  SIGUSR1 and SIGUSR2 sent to vramkit are forwarded to the service's process group\n"
        "  (within 0.1 s); after SIGTERM, SIGINT or SIGHUP it is not restarted. If vramkit is\n"
        "  killed, even with SIGKILL, the service is killed too (Linux: a parent-death signal\n"
        "  set before the service starts), so no orphan keeps GPU memory.\n"
        "\n"
        "  --events FILE|-     append one JSON object a line for each event to FILE ('-':\n"
        "                      stdout, between whole lines of the service's output): every\n"
        "                      object has time (UTC, ISO 8601), elapsed_s and event, one of\n"
        "                      start, attempt {attempt, strategy, device, dtype, restart},\n"
        "                      ready {attempt, strategy, how: line|regex|port|file, seconds},\n"
        "                      signal {signal, pid}, ended {attempt, strategy, pid, outcome,\n"
        "                      rule, exit_code, signal, ready, seconds, after_ready_s},\n"
        "                      next|degrade {from, to}, restart {restart, delay_s},\n"
        "                      exit {code, why}, give_up {why}; ready and ended also carry\n"
        "                      gpu_bytes and gpu_peak_bytes, the GPU memory of the service's\n"
        "                      process group read through NVML every second (no context of\n"
        "                      vramkit's own; null without NVML, which start's gpu_memory_unknown\n"
        "                      explains); memory_over {attempt, strategy, gpu_bytes,\n"
        "                      predicted_high_bytes}, once an attempt, with a warning on\n"
        "                      stderr, when it uses more than the high of the estimate of a\n"
        "                      plan made now (--model, one-GPU strategies)\n"
        "  -h, --help          this text\n"
        "\n"
        "exit codes: once a service ran, its own: its exit code, or 128 + N when signal N\n"
        "ended it; 1 no strategy became ready, or a crash loop (a summary on stderr); 2 bad\n"
        "usage or input; 3 environment error (the events file cannot be written, no memory).\n"
        "A stop signal between attempts (during a backoff) ends vramkit with 128 + N.\n",
        out);
}

static const struct option long_options[] = {
    {"strategies", required_argument, NULL, CLI_BY_NAME},
    {"plan", required_argument, NULL, CLI_BY_NAME},
    {"model", required_argument, NULL, CLI_BY_NAME},
    {"assume-gpu", required_argument, NULL, CLI_BY_NAME},
    {"ready-regex", required_argument, NULL, CLI_BY_NAME},
    {"ready-port", required_argument, NULL, CLI_BY_NAME},
    {"ready-file", required_argument, NULL, CLI_BY_NAME},
    {"ready-timeout", required_argument, NULL, CLI_BY_NAME},
    {"grace", required_argument, NULL, CLI_BY_NAME},
    {"restart", required_argument, NULL, CLI_BY_NAME},
    {"degrade", no_argument, NULL, CLI_BY_NAME},
    {"backoff", required_argument, NULL, CLI_BY_NAME},
    {"backoff-max", required_argument, NULL, CLI_BY_NAME},
    {"stable", required_argument, NULL, CLI_BY_NAME},
    {"events", required_argument, NULL, CLI_BY_NAME},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static int parse(int argc, char **argv, vram_run_opts *o) {
    char err[4400];
    int c, rc, idx = 0, dd = cli_chain_dashes(argc, argv);
    memset(o, 0, sizeof *o);
    cli_getopt_reset();
    while ((c = getopt_long(dd, argv, ":h", long_options, &idx)) != -1) {
        switch (c) {
        case 'h':
            usage(stdout);
            return VRAM_EXIT_OK;
        case CLI_BY_NAME:
            if ((rc = cli_set(CMD, vram_run_set(o, long_options[idx].name, optarg, err, sizeof err), err)))
                return rc;
            break;
        case ':':
            return cli_usage_error(CMD, "option '%s' needs a value", argv[optind - 1]);
        default:
            return cli_usage_error(CMD, "unknown option '%s' (see 'vramkit run --help')",
                                   argv[optind - 1]);
        }
    }
    if ((rc = cli_chain_stray(CMD, argv, dd, optind))) return rc;
    if ((rc = cli_set(CMD, vram_run_check(o, err, sizeof err), err))) return rc;
    if ((rc = cli_chain_command(CMD, argc, argv, dd, &o->command, &o->ncommand))) return rc;
    if (o->ready_timeout_s == 0) o->ready_timeout_s = VRAM_RUN_DEFAULT_READY_TIMEOUT_S;
    vram_status st = vram_plan_chain(&o->chain, err, sizeof err);
    return st == VRAM_OK ? -1 : cli_fail(CMD, st, err);
}

/* ---- what happens, on stderr and as JSON lines ----------------------------------------------- */

typedef struct events {
    const vram_run_opts *o;
    FILE *f;    /* --events (NULL: none) */
    int own;    /* f was opened here */
    int failed; /* a write failed */
} events;

/* "exit 3", "signal 11 SIGSEGV", "not ready after 600 s, stopped", "cannot start ..." */
static void describe_end(const vram_run_opts *o, const vram_try_attempt *a, char *buf, size_t cap) {
    const vram_isolate_result *r = &a->res;
    switch (r->how) {
    case VRAM_ATTEMPT_NOT_STARTED: snprintf(buf, cap, "%s", r->start_error); return;
    case VRAM_ATTEMPT_TIMED_OUT: snprintf(buf, cap, "not ready after %.3g s, stopped", o->ready_timeout_s); return;
    case VRAM_ATTEMPT_SIGNALED:
        snprintf(buf, cap, "signal %d %s", r->signal, r->signal_name ? r->signal_name : "unknown");
        return;
    default: snprintf(buf, cap, "exit %d", r->exit_code); return;
    }
}

static void say_ended(const vram_run_opts *o, const vram_run_event *e) {
    char how[400];
    const vram_try_attempt *a = e->a;
    describe_end(o, a, how, sizeof how);
    fprintf(stderr, "vramkit: run: %s: %s (%s) %s; ran %.2f s", e->strategy,
            vram_attempt_outcome_name(a->outcome), how, e->ready ? "after ready" : "before ready",
            a->res.seconds);
    if (a->res.err.len > 0) {
        const char *ls;
        size_t ln;
        vram_last_line(a->res.err.data, a->res.err.len, &ls, &ln);
        if (ln > 0) {
            char *t = vram_clean_text(ls, ln, TEXT_LINE_MAX, 0);
            fprintf(stderr, " | stderr: %s", t ? t : "?");
            free(t);
        }
    }
    fputc('\n', stderr);
}

static void say_give_up(const vram_run_opts *o, const vram_run_event *e) {
    char list[1024] = "", how[400];
    size_t used = 0;
    if (e->why != VRAM_SUPERVISE_WHY_CHAIN_EXHAUSTED) {
        describe_end(o, e->a, how, sizeof how);
        cli_error(VRAM_EXIT_NO, CMD,
                  "crash loop: %s died after ready %u times in a row (last: %s, %s; %u restarts in "
                  "all, %u degrades); giving up",
                  e->strategy, e->restarts + 1u, vram_attempt_outcome_name(e->a->outcome), how,
                  e->restarts_total, e->degrades_total);
        return;
    }
    for (int i = 0; i < o->chain.n && used + 1 < sizeof list; i++) {
        int w = snprintf(list + used, sizeof list - used, "%s%s: %s", i ? ", " : "", o->chain.strategies[i],
                         e->last_before_ready[i] < 0
                             ? "was ready earlier"
                             : vram_attempt_outcome_name((vram_attempt_outcome)e->last_before_ready[i]));
        if (w < 0) break;
        used += (size_t)w;
    }
    cli_error(VRAM_EXIT_NO, CMD, "no strategy became ready (%s)", list);
}

static void on_event(void *ctx, const vram_run_event *e) {
    events *ev = ctx;
    const vram_run_opts *o = ev->o;
    char a[32], b[32];
    switch (e->kind) {
    case VRAM_RUN_START:
        if (e->gpu_memory_unknown && e->watched)
            fprintf(stderr, "vramkit: run: the service's GPU memory is not watched against the plan: %s\n",
                    e->gpu_memory_unknown);
        break;
    case VRAM_RUN_READY:
        fprintf(stderr, "vramkit: run: %s: ready (%s) after %.2f s\n", e->strategy, e->how, e->seconds);
        break;
    case VRAM_RUN_MEMORY_OVER:
        fprintf(stderr, "vramkit: run: warning: %s uses %s of GPU memory, more than the plan's "
                        "predicted high of %s\n", e->strategy, vram_fmt_size(e->gpu_bytes, a, sizeof a),
                vram_fmt_size(e->predicted_high, b, sizeof b));
        break;
    case VRAM_RUN_ENDED: say_ended(o, e); break;
    case VRAM_RUN_NEXT:
    case VRAM_RUN_DEGRADE:
        fprintf(stderr, "vramkit: run: %s -> %s (%s)\n", e->strategy, e->to, vram_supervise_why_name(e->why));
        break;
    case VRAM_RUN_RESTART:
        fprintf(stderr, "vramkit: run: %s: restart %u of %u in a row in %.3g s\n", e->strategy,
                e->restart_no, e->restarts, e->delay_s);
        break;
    case VRAM_RUN_EXIT:
        fprintf(stderr, "vramkit: run: %s: %s; exit %d\n", e->strategy, vram_supervise_why_text(e->why), e->code);
        break;
    case VRAM_RUN_GIVE_UP: say_give_up(o, e); break;
    case VRAM_RUN_STOPPED:
        fprintf(stderr, "vramkit: run: %s %s: ending\n", vram_signal_name(e->signal),
                e->in_backoff ? "during the backoff" : "before the next start");
        break;
    default: break;
    }
    fflush(stderr);
    if (ev->f != NULL) {
        vram_json j;
        vram_json_init(&j, ev->f);
        if (vram_run_event_json(&j, e, o)) vram_json_finish(&j);
        if (fflush(ev->f) != 0 || ferror(ev->f)) ev->failed = 1;
    }
    if (e->kind == VRAM_RUN_START)
        for (int i = 0; i < o->chain.n_skipped; i++)
            fprintf(stderr, "vramkit: run: skipped %s: %s\n", o->chain.skipped[i], o->chain.skipped_why[i]);
}

/* ---- the command ------------------------------------------------------------------------- */

int cmd_run(int argc, char **argv) {
    vram_run_opts o;
    events ev;
    char err[512];
    int rc = parse(argc, argv, &o);
    if (rc >= 0) {
        vram_run_free(&o);
        return rc;
    }
    memset(&ev, 0, sizeof ev);
    ev.o = &o;
    if (o.events) {
        if (strcmp(o.events, "-") == 0) {
            ev.f = stdout;
        } else if ((ev.f = fopen(o.events, "ae")) == NULL) {
            rc = cli_error(VRAM_EXIT_ENV, CMD, "--events %s: cannot open for writing: %s", o.events,
                           strerror(errno));
            vram_run_free(&o);
            return rc;
        } else {
            ev.own = 1;
        }
    }
    /* the shim that ties each child's life to ours; without /proc, children run directly.
       The path is spawned as is: in the spawned child it names the image it shares with us,
       so the shim runs even when the vramkit file was replaced since we started */
    o.self_exe = "/proc/self/exe";
    if (access(o.self_exe, X_OK) != 0) {
        o.self_exe = NULL;
        fprintf(stderr, "vramkit: run: warning: /proc/self/exe cannot be run: the service will "
                        "not be killed if vramkit is killed with SIGKILL\n");
    }
    o.on_event = on_event;
    o.ctx = &ev;
    vram_status st = vram_run(&o, &rc, err, sizeof err);
    if (st != VRAM_OK) rc = cli_error(st == VRAM_E_INVALID ? VRAM_EXIT_USAGE : VRAM_EXIT_ENV, CMD, "%s", err);
    if (ev.f) {
        if (fflush(ev.f) != 0 || ferror(ev.f)) ev.failed = 1;
        if (ev.own && fclose(ev.f) != 0) ev.failed = 1;
        if (ev.failed && rc == VRAM_EXIT_OK)
            rc = cli_error(VRAM_EXIT_ENV, CMD, "--events %s: a write failed", o.events);
        else if (ev.failed)
            fprintf(stderr, "vramkit: run: --events %s: a write failed\n", o.events);
    }
    vram_run_free(&o);
    return rc;
}
