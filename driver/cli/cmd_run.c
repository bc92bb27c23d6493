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
#include "util/file.h"

#define CMD "run"
#define TEXT_LINE_MAX 160

static void usage(FILE *out) {
    fprintf(out,
        "usage: vramkit run (--strategies LIST | --plan FILE | --model MODEL [--assume-gpu SPEC])\n"
        "                   [readiness] [policy] [--events FILE|-] [--calibration FILE|none]\n"
        "                   -- COMMAND [ARGS...]\n"
        "\n"
        "Starts a service (COMMAND) under each strategy in order, as 'vramkit try' does, until one\n"
        "becomes ready; then stays beside it as its supervisor until it ends: output passes\n"
        "through line by line, SIGTERM, SIGINT, SIGHUP, SIGUSR1 and SIGUSR2 are forwarded to its\n"
        "process group, and if vramkit is killed, even with SIGKILL, the service dies with it.\n"
        "\n"
        "strategies (as for 'vramkit try': --strategies, --plan, --model, --assume-gpu; at most\n"
        "%d of 1 to %d characters); {strategy}, {device}, {dtype} and VRAMKIT_* as there.\n"
        "readiness (the first that happens; a stdout line VRAMKIT_READY always counts):\n"
        "  --ready-regex RE    a line of stdout or stderr matches the extended regex RE\n"
        "  --ready-port N      a TCP connection to port N on localhost succeeds\n"
        "  --ready-file PATH   PATH appears (or changes)\n"
        "  --ready-timeout SECONDS  not ready by then: stopped, the next strategy (default %.0f)\n"
        "  --grace SECONDS     between SIGTERM and SIGKILL (default 2)\n"
        "policy, when the service dies after it was ready:\n"
        "  --restart N         restart it up to N times in a row (default 0: end with it)\n"
        "  --degrade           after an OOM or sticky CUDA error: the next strategy instead\n"
        "  --backoff SECONDS, --backoff-max SECONDS  the delays, doubling (default 1, 60)\n"
        "  --stable SECONDS    a run this long after ready resets the count (default 60)\n"
        "  --events FILE|-     one JSON object a line for each event ('-': stdout)\n"
        "  --calibration FILE  each start's measured peak, as 'vramkit try' writes it\n"
        "\n"
        "exit codes: once a service ran, its own (128 + N for signal N); 1 no strategy became\n"
        "            ready, or a crash loop; 2 bad usage or input; 3 environment error\n"
        "Manual, with the events and their fields: docs/run.md\n",
        VRAM_TRY_MAX_STRATEGIES, VRAM_TRY_NAME_MAX, VRAM_RUN_DEFAULT_READY_TIMEOUT_S);
}

/* The options: run's own, and the calibration file's. */
typedef struct run_args {
    vram_run_opts o;
    cli_calib calib;
} run_args;

static vram_status set(void *ctx, const char *name, const char *arg, char *err, size_t cap) {
    run_args *t = ctx;
    if (cli_calib_option(&t->calib, name, arg)) return VRAM_OK;
    return vram_run_set(&t->o, name, arg, err, cap);
}

static int parse(int argc, char **argv, run_args *t) {
    char err[4400];
    unsigned flags = 0;
    vram_run_opts *o = &t->o;
    int rc, dd = cli_chain_dashes(argc, argv);
    const cli_spec spec = {CMD,
                           "strategies= plan= model= assume-gpu= ready-regex= ready-port= ready-file= "
                           "ready-timeout= grace= restart= degrade backoff= backoff-max= stable= events= "
                           "calibration=",
                           "", set, t, usage, NULL, 1, dd};
    memset(t, 0, sizeof *t);
    if ((rc = cli_parse(&spec, argc, argv, &flags)) >= 0) return rc;
    if ((rc = cli_chain_stray(CMD, argv, dd, optind))) return rc;
    if ((rc = cli_set(CMD, vram_run_check(o, err, sizeof err), err))) return rc;
    if ((rc = cli_chain_command(CMD, argc, argv, dd, &o->command, &o->ncommand))) return rc;
    if (o->ready_timeout_s == 0) o->ready_timeout_s = VRAM_RUN_DEFAULT_READY_TIMEOUT_S;
    return cli_chain_plan(CMD, &o->chain, &t->calib);
}

/* ---- what happens, on stderr and as JSON lines ----------------------------------------------- */

typedef struct events {
    const vram_run_opts *o;
    const cli_calib *calib; /* where each start's measured peak is recorded */
    FILE *f;    /* --events (NULL: none) */
    int own;    /* f was opened here */
    int failed; /* a write failed */
} events;

/* "exit 3", "signal 11 SIGSEGV", "not ready after 600 s, stopped", "cannot start ..." */
static void describe_end(const vram_run_opts *o, const vram_try_attempt *a, char *buf, size_t cap) {
    const vram_isolate_result *r = &a->res;
    switch (r->how) {
    case VRAM_ATTEMPT_NOT_STARTED: snprintf(buf, cap, "%s", r->start_error); return;
    case VRAM_ATTEMPT_TIMED_OUT:
        if (r->cancelled)
            snprintf(buf, cap, "still running %.3g s after the stop signal: SIGKILL",
                     o->grace_s > 0 ? o->grace_s : VRAM_ISOLATE_DEFAULT_GRACE_S);
        else
            snprintf(buf, cap, "not ready after %.3g s, stopped", o->ready_timeout_s);
        return;
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
    case VRAM_RUN_KILL:
        fprintf(stderr, "vramkit: run: %s: still running %.3g s after %s: SIGKILL to its process group\n",
                e->strategy, e->seconds, vram_signal_name(e->signal));
        break;
    case VRAM_RUN_MEMORY_OVER:
        fprintf(stderr, "vramkit: run: warning: %s uses %s of GPU memory, more than the plan's "
                        "predicted high of %s\n", e->strategy, vram_fmt_size(e->gpu_bytes, a, sizeof a),
                vram_fmt_size(e->predicted_high, b, sizeof b));
        break;
    case VRAM_RUN_ENDED:
        say_ended(o, e);
        if (e->a->res.how != VRAM_ATTEMPT_NOT_STARTED) {
            char line[256];
            if (cli_measured_line(e->measured, line, sizeof line))
                fprintf(stderr, "vramkit: run: %s: %s\n", e->strategy, line);
            cli_calib_record(CMD, ev->calib, &o->chain, e->strategy,
                             vram_attempt_outcome_name(e->a->outcome), e->measured);
        }
        break;
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
    static run_args ra; /* large: not on the stack */
    vram_run_opts *o = &ra.o;
    events ev;
    char err[512];
    int rc = parse(argc, argv, &ra);
    if (rc >= 0) {
        vram_run_free(o);
        return rc;
    }
    memset(&ev, 0, sizeof ev);
    ev.o = o;
    ev.calib = &ra.calib;
    if (o->events) {
        if (strcmp(o->events, "-") == 0) {
            ev.f = stdout;
            o->events_on_stdout = 1; /* each event a line of its own among the service's */
        } else {
            /* appended to as a log; a FIFO nobody reads is refused, not waited on */
            const char *why = NULL;
            int fd = vram_open_append(o->events, &why);
            if (fd < 0 || (ev.f = fdopen(fd, "a")) == NULL) {
                if (fd >= 0) close(fd);
                rc = cli_error(VRAM_EXIT_ENV, CMD, "--events %s: cannot open for writing: %s",
                               o->events, why ? why : strerror(errno));
                vram_run_free(o);
                return rc;
            }
            ev.own = 1;
        }
    }
    o->self_exe = cli_chain_self_exe(CMD); /* each child dies with vramkit */
    o->on_event = on_event;
    o->ctx = &ev;
    vram_status st = vram_run(o, &rc, err, sizeof err);
    if (st != VRAM_OK) rc = cli_error(st == VRAM_E_INVALID ? VRAM_EXIT_USAGE : VRAM_EXIT_ENV, CMD, "%s", err);
    if (ev.f) {
        if (fflush(ev.f) != 0 || ferror(ev.f)) ev.failed = 1;
        if (ev.own && fclose(ev.f) != 0) ev.failed = 1;
        if (ev.failed && rc == VRAM_EXIT_OK)
            rc = cli_error(VRAM_EXIT_ENV, CMD, "--events %s: a write failed", o->events);
        else if (ev.failed)
            fprintf(stderr, "vramkit: run: --events %s: a write failed\n", o->events);
    }
    vram_run_free(o);
    return rc;
}
