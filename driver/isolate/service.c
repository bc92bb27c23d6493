/* driver/isolate/service.c — see service.h. */
#include "service.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <vramkit/attempt.h>

#include "exec_shim.h"
#include "isolate.h"
#include "nvml/nvml.h"
#include "util/clock.h"
#include "util/text.h"

#define LINE_MAX_BYTES (64u * 1024u) /* a longer line is passed through in pieces */
#define PROBE_EVERY_S 0.1            /* --ready-port and --ready-file are looked at this often */

#define FAIL(...) return vram_errorf(err, cap, VRAM_E_INVALID, __VA_ARGS__)

/* ---- options -------------------------------------------------------------------------------- */

/* Seconds as whole milliseconds for the policy (at least 1). */
static vram_status parse_ms(const char *name, const char *text, uint32_t *out, char *err, size_t cap) {
    double s;
    vram_status st = vram_opt_seconds(name, text, &s, err, cap);
    if (st != VRAM_OK) return st;
    double ms = ceil(s * 1000.0);
    *out = ms > (double)UINT32_MAX ? UINT32_MAX : (uint32_t)ms;
    return VRAM_OK;
}

vram_status vram_run_set(vram_run_opts *o, const char *name, const char *a, char *err, size_t cap) {
    uint64_t v;
    vram_status st;
#define IS(n) (strcmp(name, n) == 0)
    if (IS("ready-regex")) {
        int rc;
        if (o->have_re) FAIL("--ready-regex is given twice (give one)");
        if (a[0] == '\0') FAIL("--ready-regex: the expression is empty");
        if ((rc = regcomp(&o->re, a, REG_EXTENDED | REG_NOSUB)) != 0) {
            char why[160];
            regerror(rc, &o->re, why, sizeof why);
            FAIL("--ready-regex: '%s' is not a valid extended regular expression: %s", a, why);
        }
        o->have_re = 1;
        o->ready_regex = a;
    } else if (IS("ready-port")) {
        if (o->ready_port) FAIL("--ready-port is given twice (give one)");
        if ((st = vram_opt_count("ready-port", a, 1, 65535, 0, &v, err, cap)) != VRAM_OK) return st;
        o->ready_port = (int)v;
    } else if (IS("ready-file")) {
        if (o->ready_file) FAIL("--ready-file is given twice (give one)");
        if (a[0] == '\0') FAIL("--ready-file: the path is empty");
        o->ready_file = a;
    } else if (IS("ready-timeout")) {
        return vram_opt_seconds("ready-timeout", a, &o->ready_timeout_s, err, cap);
    } else if (IS("grace")) {
        return vram_opt_seconds("grace", a, &o->grace_s, err, cap);
    } else if (IS("restart")) {
        if ((st = vram_opt_count("restart", a, 0, VRAM_SUPERVISE_MAX_RESTARTS, VRAM_OPT_NEGATIVE, &v,
                                 err, cap)) != VRAM_OK)
            return st;
        o->policy.restarts = (uint32_t)v;
    } else if (IS("degrade")) {
        o->policy.degrade = 1;
    } else if (IS("backoff")) {
        return parse_ms("backoff", a, &o->policy.backoff_ms, err, cap);
    } else if (IS("backoff-max")) {
        return parse_ms("backoff-max", a, &o->policy.backoff_max_ms, err, cap);
    } else if (IS("stable")) {
        return parse_ms("stable", a, &o->policy.stable_ms, err, cap);
    } else if (IS("events")) {
        if (o->events) FAIL("--events is given twice (give one file)");
        if (a[0] == '\0') FAIL("--events: the path is empty");
        o->events = a;
    } else {
        return vram_try_chain_set(&o->chain, name, a, err, cap);
    }
#undef IS
    return VRAM_OK;
}

vram_status vram_run_check(vram_run_opts *o, char *err, size_t cap) {
    vram_status st = vram_try_chain_check(&o->chain, err, cap);
    if (st != VRAM_OK) return st;
    if (o->policy.backoff_max_ms && o->policy.backoff_ms > o->policy.backoff_max_ms)
        FAIL("--backoff is longer than --backoff-max");
    return VRAM_OK;
}

void vram_run_free(vram_run_opts *o) {
    vram_try_chain_free(&o->chain);
    if (o->have_re) regfree(&o->re);
    o->have_re = 0;
}

/* ---- events ----------------------------------------------------------------------------------- */

/* The supervisor's state while it runs. */
typedef struct linebuf {
    char *buf;
    size_t len;
} linebuf;

typedef struct run_state {
    const vram_run_opts *o;
    double t0;            /* when the supervisor started */
    /* this attempt */
    int attempt;          /* 1, 2, ... over every start */
    const char *strategy;
    double started;       /* monotonic */
    int ready;
    double ready_at;
    double next_probe;
    int file_had;         /* --ready-file was there at the start: its identity then */
    struct stat file_st;
    linebuf lines[2];     /* stdout, stderr: the line being collected */
    int out_midline;      /* what was passed through to stdout does not end with a line end */
    const vram_gpumem_ops *mem; /* NVML, or NULL: the service's GPU memory is not known */
    const char *no_mem;   /* why not */
    vram_peak peak;       /* this attempt's GPU memory (peak.h): last read, most seen */
    uint64_t predicted_high; /* the plan's high for this strategy on its GPU; 0: not known */
    int over_warned;      /* this attempt went above it (said once) */
    int stop_requested;   /* a stop signal was forwarded */
    int stop_signal;      /* the SIGTERM or SIGINT that started the grace period (0: none) */
    double kill_at;       /* then: when SIGKILL follows if the service still runs */
    int killed;           /* it did */
    pid_t group;
} run_state;

/* An event of this state, the rest of the fields the caller's. */
static vram_run_event event(const run_state *st, vram_run_event_kind kind) {
    vram_run_event e;
    memset(&e, 0, sizeof e);
    e.kind = kind;
    e.elapsed_s = vram_now_s() - st->t0;
    e.attempt = st->attempt;
    e.strategy = st->strategy;
    e.gpu_known = st->peak.samples > 0;
    e.gpu_bytes = st->peak.last_total;
    e.gpu_peak = st->peak.total_peak;
    e.predicted_high = st->predicted_high;
    e.measured = &st->peak;
    return e;
}

static void write_all(int fd, const char *p, size_t n);

/* An event for the caller. When the events share our stdout with the service's output and that
 * is mid-line (a last line without its end, or a line over LINE_MAX_BYTES passed in pieces), the
 * line is ended first, so each event is a JSON line of its own. */
static void tell(run_state *st, const vram_run_event *e) {
    if (st->o->events_on_stdout && st->out_midline) {
        write_all(1, "\n", 1);
        st->out_midline = 0;
    }
    if (st->o->on_event) st->o->on_event(st->o->ctx, e);
}

/* ---- the running attempt ------------------------------------------------------------------ */

/* Signals forwarded to the service, and whether they ask it to stop. */
static const int fwd_sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2};
#define N_FWD (int)(sizeof fwd_sigs / sizeof fwd_sigs[0])
static volatile sig_atomic_t pending[N_FWD];

static void on_signal(int sig) {
    for (int i = 0; i < N_FWD; i++)
        if (fwd_sigs[i] == sig) pending[i] = 1;
}

static int is_stop_signal(int sig) { return sig == SIGTERM || sig == SIGINT || sig == SIGHUP; }

/* A stop that a service must obey within --grace (SIGHUP asks many to reload instead). */
static int is_kill_signal(int sig) { return sig == SIGTERM || sig == SIGINT; }

/* Writes all of p[0, n) to fd; a closed reader (EPIPE) or another error loses the output,
 * never the service. */
static void write_all(int fd, const char *p, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return;
        }
        p += w;
        n -= (size_t)w;
    }
}

/* The GPU memory of every process of the service's group (pgid), over every GPU, when the
 * tracker's time has come (now: at once). */
static void read_memory(run_state *st, pid_t group, int now) {
    uint32_t before = st->peak.samples;
    if (now) st->peak.next_s = 0;
    vram_peak_tick(&st->peak, group);
    if (st->peak.samples == before) return;
    if (st->predicted_high > 0 && st->peak.last_total > st->predicted_high && !st->over_warned) {
        vram_run_event e = event(st, VRAM_RUN_MEMORY_OVER);
        st->over_warned = 1;
        tell(st, &e);
    }
}

static void mark_ready(run_state *st, const char *how) {
    if (st->ready) return;
    st->ready = 1;
    st->ready_at = vram_now_s();
    read_memory(st, st->group, 1);
    vram_run_event e = event(st, VRAM_RUN_READY);
    e.how = how;
    e.seconds = st->ready_at - st->started;
    tell(st, &e);
}

/* One whole line (without its '\n') of stream 1 or 2: readiness by line or regex. */
static void look_at_line(run_state *st, int stream, const char *p, size_t n) {
    static const char word[] = "VRAMKIT_READY";
    const size_t wl = sizeof word - 1;
    if (st->ready) return;
    if (stream == 1 && n >= wl && memcmp(p, word, wl) == 0 &&
        (n == wl || p[wl] == ' ' || p[wl] == '\t' || p[wl] == '\r')) {
        mark_ready(st, "line");
        return;
    }
    if (st->o->have_re) {
        char *z = (char *)malloc(n + 1);
        if (z == NULL) return;
        memcpy(z, p, n);
        z[n] = '\0';
        if (n > 0 && z[n - 1] == '\r') z[n - 1] = '\0';
        if (regexec(&st->o->re, z, 0, NULL, 0) == 0) mark_ready(st, "regex");
        free(z);
    }
}

/* isolate's on_output: whole lines pass through to our stdout/stderr as they complete. */
static void on_output(void *ctx, int stream, const char *data, size_t n) {
    run_state *st = ctx;
    linebuf *lb = &st->lines[stream - 1];
    int fd = stream;
    vram_peak_output(&st->peak, data, n);
    if (lb->buf == NULL && (lb->buf = (char *)malloc(LINE_MAX_BYTES + 1)) == NULL) {
        write_all(fd, data, n); /* no memory for lines: pass it through as it comes */
        if (stream == 1 && n > 0) st->out_midline = data[n - 1] != '\n';
        return;
    }
    while (n > 0) {
        const char *nl = memchr(data, '\n', n);
        size_t take = nl ? (size_t)(nl - data) : n;
        if (take > LINE_MAX_BYTES - lb->len) take = LINE_MAX_BYTES - lb->len;
        memcpy(lb->buf + lb->len, data, take);
        lb->len += take;
        data += take;
        n -= take;
        if (n > 0 && *data == '\n') {
            lb->buf[lb->len] = '\n'; /* the buffer has one byte more than a line */
            write_all(fd, lb->buf, lb->len + 1);
            if (stream == 1) st->out_midline = 0;
            look_at_line(st, stream, lb->buf, lb->len); /* after it: "ready" follows the line */
            lb->len = 0;
            data++;
            n--;
        } else if (lb->len == LINE_MAX_BYTES) {
            write_all(fd, lb->buf, lb->len); /* a very long line: in pieces */
            if (stream == 1) st->out_midline = 1;
            lb->len = 0;
        }
    }
}

/* The end of an attempt: a last line without its '\n' passes through as it is. */
static void flush_lines(run_state *st) {
    for (int k = 0; k < 2; k++) {
        linebuf *lb = &st->lines[k];
        if (lb->len > 0) {
            write_all(k + 1, lb->buf, lb->len);
            if (k == 0) st->out_midline = 1;
            look_at_line(st, k + 1, lb->buf, lb->len);
        }
        free(lb->buf);
        lb->buf = NULL;
        lb->len = 0;
    }
}

static int port_open(int port) {
    struct sockaddr_in a4;
    struct sockaddr_in6 a6;
    int ok = 0;
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s >= 0) {
        memset(&a4, 0, sizeof a4);
        a4.sin_family = AF_INET;
        a4.sin_port = htons((uint16_t)port);
        a4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ok = connect(s, (struct sockaddr *)&a4, sizeof a4) == 0;
        close(s);
    }
    if (ok) return 1;
    s = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s >= 0) {
        memset(&a6, 0, sizeof a6);
        a6.sin6_family = AF_INET6;
        a6.sin6_port = htons((uint16_t)port);
        a6.sin6_addr = in6addr_loopback;
        ok = connect(s, (struct sockaddr *)&a6, sizeof a6) == 0;
        close(s);
    }
    return ok;
}

static int file_ready(const run_state *st) {
    struct stat now;
    if (stat(st->o->ready_file, &now) != 0) return 0;
    if (!st->file_had) return 1;
    return now.st_ino != st->file_st.st_ino || now.st_dev != st->file_st.st_dev ||
           now.st_mtim.tv_sec != st->file_st.st_mtim.tv_sec ||
           now.st_mtim.tv_nsec != st->file_st.st_mtim.tv_nsec;
}

/* isolate's on_tick: forwards signals, looks at the port and the file. */
static int on_tick(void *ctx, pid_t pid) {
    run_state *st = ctx;
    st->group = pid;
    read_memory(st, pid, 0);
    for (int i = 0; i < N_FWD; i++) {
        if (!pending[i]) continue;
        pending[i] = 0;
        kill(-pid, fwd_sigs[i]);
        if (is_stop_signal(fwd_sigs[i])) st->stop_requested = 1;
        if (is_kill_signal(fwd_sigs[i]) && st->stop_signal == 0) {
            double grace = st->o->grace_s > 0 ? st->o->grace_s : VRAM_ISOLATE_DEFAULT_GRACE_S;
            st->stop_signal = fwd_sigs[i];
            st->kill_at = vram_now_s() + grace;
        }
        vram_run_event e = event(st, VRAM_RUN_SIGNAL);
        e.signal = fwd_sigs[i];
        e.pid = pid;
        tell(st, &e);
    }
    /* a service that ignores the stop: its whole group is killed after the grace period */
    if (st->stop_signal && !st->killed && vram_now_s() >= st->kill_at) {
        vram_run_event e = event(st, VRAM_RUN_KILL);
        kill(-pid, SIGCONT); /* (SIGKILL ends a stopped process all the same) */
        kill(-pid, SIGKILL);
        st->killed = 1;
        e.signal = st->stop_signal;
        e.pid = pid;
        e.seconds = st->o->grace_s > 0 ? st->o->grace_s : VRAM_ISOLATE_DEFAULT_GRACE_S;
        tell(st, &e);
    }
    if (!st->ready && (st->o->ready_port || st->o->ready_file)) {
        double t = vram_now_s();
        if (t >= st->next_probe) {
            st->next_probe = t + PROBE_EVERY_S;
            if (st->o->ready_port && port_open(st->o->ready_port)) mark_ready(st, "port");
            else if (st->o->ready_file && file_ready(st)) mark_ready(st, "file");
        }
    }
    return st->ready ? VRAM_ISOLATE_TICK_NO_TIMEOUT : 0;
}

/* ---- starting a child ------------------------------------------------------------------- */

typedef struct attempt {
    int strategy; /* index in the chain */
    vram_try_attempt t;
    int ready;
    double after_ready_s;
} attempt;

static void attempt_free(attempt *a) {
    vram_try_argv_free(a->t.argv);
    a->t.argv = NULL;
    vram_isolate_result_free(&a->t.res);
}

/* Runs strategy a->strategy to its end. VRAM_OK, or the failure to run it with err. */
static vram_status run_attempt(run_state *st, attempt *a, int restart, char *err, size_t cap) {
    const vram_run_opts *o = st->o;
    vram_try_env env;
    const char *name = o->chain.strategies[a->strategy];
    vram_try_chain_strategy(&o->chain, a->strategy, &a->t.device, &a->t.dtype);
    a->t.strategy = name;
    a->t.argv = vram_try_argv(&o->chain, a->strategy, o->command, o->ncommand);
    if (!a->t.argv) return vram_errorf(err, cap, VRAM_E_NOMEM, "out of memory");
    vram_try_chain_env(&o->chain, a->strategy, st->attempt, &env);

    st->strategy = name;
    st->ready = 0;
    st->stop_requested = 0;
    st->stop_signal = 0;
    st->kill_at = 0;
    st->killed = 0;
    st->started = vram_now_s();
    st->next_probe = 0;
    vram_peak_init(&st->peak, st->mem, st->no_mem);
    st->predicted_high = o->chain.gpu_high[a->strategy];
    st->over_warned = 0;
    st->group = 0;
    st->file_had = o->ready_file && stat(o->ready_file, &st->file_st) == 0;

    vram_run_event ev = event(st, VRAM_RUN_ATTEMPT);
    ev.device = a->t.device;
    ev.dtype = a->t.dtype;
    ev.restart = restart;
    tell(st, &ev); /* the pid is in the ended event: it is known only after */

    {
        vram_isolate_opts io;
        memset(&io, 0, sizeof io);
        io.env = env.env;
        io.timeout_s = o->ready_timeout_s;
        io.grace_s = o->grace_s;
        io.on_output = on_output;
        io.on_tick = on_tick;
        io.hook_ctx = st;
        io.tick_ms = 50;
        vram_status s = vram_exec_isolated(o->self_exe, a->t.argv, o->ncommand, 1, &io, &a->t.res);
        flush_lines(st);
        vram_peak_finish(&st->peak);
        if (s != VRAM_OK) return vram_errorf(err, cap, s, "cannot run '%s': %s", a->t.argv[0], vram_status_str(s));
        if (st->killed && a->t.res.how == VRAM_ATTEMPT_SIGNALED) {
            /* our SIGKILL after the grace period, not the kernel's OOM killer: stopped, as an
               interrupted attempt of try is */
            a->t.res.how = VRAM_ATTEMPT_TIMED_OUT;
            a->t.res.cancelled = 1;
            a->t.res.sent_kill = 1;
        }
    }
    vram_attempt_end end = vram_isolate_end(&a->t.res);
    a->t.outcome = vram_attempt_explain(&end, &a->t.ev);
    a->ready = st->ready;
    a->after_ready_s = st->ready ? vram_now_s() - st->ready_at : 0.0;
    return VRAM_OK;
}

/* The supervisor's exit code for a service that ended so. */
static int service_status(const attempt *a) {
    const vram_isolate_result *r = &a->t.res;
    if (r->how == VRAM_ATTEMPT_SIGNALED || (r->how == VRAM_ATTEMPT_TIMED_OUT && r->signal))
        return 128 + r->signal;
    if (r->how == VRAM_ATTEMPT_NOT_STARTED) return 1;
    return r->exit_code >= 0 ? r->exit_code : 1;
}

/* A stop signal that arrived while no child ran; 0 when none. */
static int pending_stop(void) {
    for (int i = 0; i < N_FWD; i++)
        if (pending[i] && is_stop_signal(fwd_sigs[i])) return fwd_sigs[i];
    return 0;
}

/* Waits ms milliseconds, or less when a stop signal comes. Returns that signal, or 0. */
static int backoff_wait(uint32_t ms) {
    double until = vram_now_s() + ms / 1000.0;
    for (;;) {
        int s = pending_stop();
        if (s) return s;
        double left = until - vram_now_s();
        if (left <= 0) return 0;
        if (left > 0.05) left = 0.05;
        struct timespec ts = {0, (long)(left * 1e9)};
        nanosleep(&ts, NULL);
    }
}

/* ---- the supervisor ------------------------------------------------------------------------ */

/* What the policy decided after attempt a, told; the exit code when it ends here, else -1. */
static int decide(run_state *st, vram_supervise *sv, const attempt *a, const vram_supervise_decision *d,
                  const int *last_before_ready, int *restart) {
    const vram_run_opts *o = st->o;
    vram_run_event e = event(st, VRAM_RUN_NEXT);
    int s;
    e.why = d->why;
    switch (d->action) {
    case VRAM_SUPERVISE_NEXT:
        e.kind = d->why == VRAM_SUPERVISE_WHY_DEGRADE ? VRAM_RUN_DEGRADE : VRAM_RUN_NEXT;
        e.to = o->chain.strategies[d->strategy];
        tell(st, &e);
        *restart = 0;
        return -1;
    case VRAM_SUPERVISE_RESTART:
        e.kind = VRAM_RUN_RESTART;
        e.restart_no = d->restart;
        e.restarts = sv->cfg.restarts;
        e.delay_s = d->delay_ms / 1000.0;
        tell(st, &e);
        *restart = (int)d->restart;
        if ((s = backoff_wait(d->delay_ms)) == 0) return -1;
        e = event(st, VRAM_RUN_STOPPED);
        e.signal = s;
        e.in_backoff = 1;
        tell(st, &e);
        return 128 + s;
    case VRAM_SUPERVISE_EXIT:
        e.kind = VRAM_RUN_EXIT;
        e.code = d->why == VRAM_SUPERVISE_WHY_CLEAN_EXIT ? 0 : service_status(a);
        tell(st, &e);
        return e.code;
    default: /* GIVE_UP */
        e.kind = VRAM_RUN_GIVE_UP;
        e.code = 1;
        e.a = &a->t;
        e.last_before_ready = last_before_ready;
        e.restarts = sv->cfg.restarts;
        e.restarts_total = sv->restarts;
        e.degrades_total = sv->degrades;
        tell(st, &e);
        return 1;
    }
}

vram_status vram_run(const vram_run_opts *o, int *code, char *err, size_t cap) {
    static vram_gpumem_ops nvml;
    vram_supervise sv;
    run_state st;
    vram_status status = VRAM_OK;
    int last_before_ready[VRAM_TRY_MAX_STRATEGIES]; /* each strategy's last outcome before ready */
    int restart = 0, rc = -1;
    if (vram_supervise_init(&sv, &o->policy, o->chain.n) != VRAM_OK) /* ranges checked by the setter */
        return vram_errorf(err, cap, VRAM_E_INVALID, "the policy is out of range");
    memset(&st, 0, sizeof st);
    st.o = o;
    st.t0 = vram_now_s();

    struct sigaction sa, old[N_FWD], ign, old_pipe;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < N_FWD; i++) {
        pending[i] = 0;
        sigaction(fwd_sigs[i], &sa, &old[i]);
    }
    /* a reader of our stdout that goes away must not kill the supervisor (and so the
       service): writes fail with EPIPE instead; the child gets SIGPIPE's default back */
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ign, &old_pipe);

    /* the service's GPU memory, for the events and the plan's high, through NVML (no context
       of our own) */
    nvml = vram_nvml_ops(NULL);
    int nvml_ok = nvml.open(nvml.ctx) == VRAM_OK;
    if (nvml_ok) st.mem = &nvml;
    else st.no_mem = nvml.error(nvml.ctx);
    vram_run_event e = event(&st, VRAM_RUN_START);
    e.gpu_memory_unknown = nvml_ok ? NULL : nvml.error(nvml.ctx);
    for (int i = 0; i < o->chain.n; i++) e.watched |= o->chain.gpu_high[i] > 0;
    e.pid = getpid();
    tell(&st, &e);

    for (int i = 0; i < VRAM_TRY_MAX_STRATEGIES; i++) last_before_ready[i] = -1;
    for (int attempt_no = 1; rc < 0; attempt_no++) {
        int s = pending_stop();
        attempt a;
        vram_supervise_end end;
        vram_supervise_decision d;
        if (s) {
            e = event(&st, VRAM_RUN_STOPPED);
            e.signal = s;
            tell(&st, &e);
            rc = 128 + s;
            break;
        }
        memset(&a, 0, sizeof a);
        a.strategy = sv.current;
        st.attempt = attempt_no;
        if ((status = run_attempt(&st, &a, restart, err, cap)) != VRAM_OK) {
            attempt_free(&a);
            break;
        }
        e = event(&st, VRAM_RUN_ENDED);
        e.a = &a.t;
        e.pid = a.t.res.pid;
        e.ready = a.ready;
        e.seconds = a.t.res.seconds;
        e.after_ready_s = a.after_ready_s;
        e.signal = a.t.res.signal;
        tell(&st, &e);
        if (!a.ready) last_before_ready[a.strategy] = (int)a.t.outcome;
        end.outcome = a.t.outcome;
        end.ready = a.ready;
        end.ready_ms = a.after_ready_s > 0 ? (uint64_t)(a.after_ready_s * 1000.0) : 0u;
        end.stop_requested = st.stop_requested;
        if (vram_supervise_ended(&sv, &end, &d) != VRAM_OK) { /* cannot happen: done ends the loop */
            attempt_free(&a);
            status = vram_errorf(err, cap, VRAM_E_STATE, "internal error: the supervisor is done");
            break;
        }
        st.strategy = o->chain.strategies[a.strategy];
        rc = decide(&st, &sv, &a, &d, last_before_ready, &restart);
        attempt_free(&a);
    }
    for (int i = 0; i < N_FWD; i++) sigaction(fwd_sigs[i], &old[i], NULL);
    sigaction(SIGPIPE, &old_pipe, NULL);
    if (nvml_ok) nvml.close(nvml.ctx);
    *code = rc;
    return status;
}

/* ---- the events as JSON ---------------------------------------------------------------------- */

const char *vram_run_event_name(vram_run_event_kind k) {
    static const char *const names[] = {"start", "attempt", "ready", "signal", "kill", "memory_over",
                                        "ended", "next", "degrade", "restart", "exit", "give_up",
                                        "stopped"};
    return (unsigned)k < sizeof names / sizeof names[0] ? names[k] : "unknown";
}

static void ev_str(vram_json *j, const char *key, const char *v) {
    char *t;
    if (key != NULL) vram_json_key(j, key); /* NULL: an array item */
    if (v == NULL) {
        vram_json_null(j);
        return;
    }
    t = vram_clean_text(v, strlen(v), strlen(v), 0);
    vram_json_string(j, t ? t : "?");
    free(t);
}

/* The attempt an event is about: its number and its strategy. */
static void ev_attempt(vram_json *j, const vram_run_event *e) {
    vram_json_key_i64(j, "attempt", e->attempt);
    ev_str(j, "strategy", e->strategy);
}

static void ev_memory(vram_json *j, const vram_run_event *e) {
    vram_json_key_u64_or_null(j, "gpu_bytes", e->gpu_known, e->gpu_bytes);
    vram_json_key_u64_or_null(j, "gpu_peak_bytes", e->gpu_known, e->gpu_peak);
}

static void ev_ended(vram_json *j, const vram_run_event *e) {
    const vram_isolate_result *r = &e->a->res;
    ev_attempt(j, e);
    vram_json_key_i64_or_null(j, "pid", r->pid > 0, r->pid);
    ev_str(j, "outcome", vram_attempt_outcome_name(e->a->outcome));
    ev_str(j, "rule", vram_attempt_rule_name(e->a->ev.rule));
    vram_json_key_i64_or_null(j, "exit_code", r->how != VRAM_ATTEMPT_NOT_STARTED && r->exit_code >= 0,
                              r->exit_code);
    ev_str(j, "signal", r->signal ? vram_signal_name(r->signal) : NULL);
    vram_json_key_bool(j, "ready", e->ready);
    vram_json_key_double(j, "seconds", r->seconds);
    vram_json_key_double_or_null(j, "after_ready_s", e->ready, e->after_ready_s);
    ev_str(j, "start_error", r->how == VRAM_ATTEMPT_NOT_STARTED ? r->start_error : NULL);
    ev_memory(j, e);
    vram_json_key(j, "measured");
    vram_peak_json(j, e->measured);
}

int vram_run_event_json(vram_json *j, const vram_run_event *e, const vram_run_opts *o) {
    struct timespec ts;
    struct tm tm;
    char when[48];
    if (e->kind == VRAM_RUN_STOPPED) return 0;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    size_t n = strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(when + n, sizeof when - n, ".%03ldZ", ts.tv_nsec / 1000000L);
    vram_json_begin_object(j);
    vram_json_key_string(j, "time", when);
    vram_json_key_double(j, "elapsed_s", e->elapsed_s);
    vram_json_key_string(j, "event", vram_run_event_name(e->kind));
    switch (e->kind) {
    case VRAM_RUN_START:
        ev_str(j, "gpu_memory", e->gpu_memory_unknown ? NULL : "nvml");
        if (e->gpu_memory_unknown) ev_str(j, "gpu_memory_unknown", e->gpu_memory_unknown);
        vram_json_key_i64(j, "pid", e->pid);
        ev_str(j, "source", vram_try_chain_kind(&o->chain));
        ev_str(j, "value", vram_try_chain_value(&o->chain));
        vram_json_key(j, "strategies");
        vram_json_begin_array(j);
        for (int i = 0; i < o->chain.n; i++) ev_str(j, NULL, o->chain.strategies[i]);
        vram_json_end_array(j);
        break;
    case VRAM_RUN_ATTEMPT:
        ev_attempt(j, e);
        ev_str(j, "device", e->device);
        ev_str(j, "dtype", e->dtype);
        vram_json_key_i64_or_null(j, "restart", e->restart > 0, e->restart);
        break;
    case VRAM_RUN_READY:
        ev_attempt(j, e);
        ev_str(j, "how", e->how);
        vram_json_key_double(j, "seconds", e->seconds);
        ev_memory(j, e);
        break;
    case VRAM_RUN_SIGNAL:
        ev_str(j, "signal", vram_signal_name(e->signal));
        vram_json_key_i64(j, "pid", e->pid);
        break;
    case VRAM_RUN_KILL:
        ev_attempt(j, e);
        ev_str(j, "after", vram_signal_name(e->signal));
        vram_json_key_double(j, "grace_s", e->seconds);
        ev_str(j, "signal", "SIGKILL");
        vram_json_key_i64(j, "pid", e->pid);
        break;
    case VRAM_RUN_MEMORY_OVER:
        ev_attempt(j, e);
        vram_json_key_u64(j, "gpu_bytes", e->gpu_bytes);
        vram_json_key_u64(j, "predicted_high_bytes", e->predicted_high);
        break;
    case VRAM_RUN_ENDED: ev_ended(j, e); break;
    case VRAM_RUN_NEXT:
    case VRAM_RUN_DEGRADE:
        ev_str(j, "from", e->strategy);
        ev_str(j, "to", e->to);
        break;
    case VRAM_RUN_RESTART:
        ev_str(j, "strategy", e->strategy);
        vram_json_key_i64(j, "restart", e->restart_no);
        vram_json_key_double(j, "delay_s", e->delay_s);
        break;
    case VRAM_RUN_EXIT:
        vram_json_key_i64(j, "code", e->code);
        ev_str(j, "why", vram_supervise_why_name(e->why));
        break;
    default: /* give_up */
        ev_str(j, "why", vram_supervise_why_name(e->why));
        vram_json_key_i64(j, "code", e->code);
        break;
    }
    vram_json_end_object(j);
    return 1;
}
