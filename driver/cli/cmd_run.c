/* driver/cli/cmd_run.c — `vramkit run`: start a service under the strategy chain, as `try`
 * does, until one strategy becomes ready; then stay beside it as its supervisor: output
 * passes through line by line, stop signals are forwarded to its process group, a death
 * is restarted or degraded by the policy of vramkit/supervise.h, and vramkit ends with it.
 * Each child runs through the isolation library (isolate.h) and the pdeathsig shim
 * (exec_shim.h), so it dies with vramkit even when vramkit is killed with SIGKILL. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <netinet/in.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <vramkit/attempt.h>
#include <vramkit/supervise.h>

#include "cli.h"
#include "cli_chain.h"
#include "isolate/exec_shim.h"
#include "isolate/isolate.h"
#include "nvml/nvml.h"

#define CMD "run"
#define DEFAULT_READY_TIMEOUT_S 600.0
#define LINE_MAX_BYTES (64u * 1024u) /* a longer line is passed through in pieces */
#define PROBE_EVERY_S 0.1           /* --ready-port and --ready-file are looked at this often */
#define TEXT_LINE_MAX 160
#define MEMORY_EVERY_S 1.0 /* the service's GPU memory is read this often (NVML) */

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
        CLI_CHAIN_MAX, CLI_CHAIN_NAME_MAX, DEFAULT_READY_TIMEOUT_S);
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

enum {
    OPT_STRATEGIES = 256, OPT_PLAN, OPT_MODEL, OPT_GPU, OPT_READY_REGEX, OPT_READY_PORT,
    OPT_READY_FILE, OPT_READY_TIMEOUT, OPT_GRACE, OPT_RESTART, OPT_DEGRADE, OPT_BACKOFF,
    OPT_BACKOFF_MAX, OPT_STABLE, OPT_EVENTS
};

static const struct option long_options[] = {
    {"strategies", required_argument, NULL, OPT_STRATEGIES},
    {"plan", required_argument, NULL, OPT_PLAN},
    {"model", required_argument, NULL, OPT_MODEL},
    {"assume-gpu", required_argument, NULL, OPT_GPU},
    {"ready-regex", required_argument, NULL, OPT_READY_REGEX},
    {"ready-port", required_argument, NULL, OPT_READY_PORT},
    {"ready-file", required_argument, NULL, OPT_READY_FILE},
    {"ready-timeout", required_argument, NULL, OPT_READY_TIMEOUT},
    {"grace", required_argument, NULL, OPT_GRACE},
    {"restart", required_argument, NULL, OPT_RESTART},
    {"degrade", no_argument, NULL, OPT_DEGRADE},
    {"backoff", required_argument, NULL, OPT_BACKOFF},
    {"backoff-max", required_argument, NULL, OPT_BACKOFF_MAX},
    {"stable", required_argument, NULL, OPT_STABLE},
    {"events", required_argument, NULL, OPT_EVENTS},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

typedef struct opts {
    cli_chain chain;
    const char *ready_regex, *ready_file, *events;
    regex_t re;
    int have_re;
    int ready_port; /* 0: none */
    double ready_timeout_s, grace_s;
    vram_supervise_config policy;
    char **command;
    int n_command;
} opts;

/* Seconds as whole milliseconds for the policy (at least 1). */
static int parse_ms(const char *name, const char *text, uint32_t *out) {
    double s;
    int rc = cli_opt_seconds(CMD, name, text, &s);
    if (rc) return rc;
    double ms = ceil(s * 1000.0);
    *out = ms > (double)UINT32_MAX ? UINT32_MAX : (uint32_t)ms;
    return 0;
}

static int parse(int argc, char **argv, opts *o) {
    int c, rc, dd = cli_chain_dashes(argc, argv);
    uint64_t v;
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
        case OPT_PLAN:
            if ((rc = cli_chain_plan(CMD, optarg, &o->chain))) return rc;
            break;
        case OPT_MODEL:
            if ((rc = cli_chain_model(CMD, optarg, &o->chain))) return rc;
            break;
        case OPT_GPU:
            if ((rc = cli_chain_gpu(CMD, optarg, &o->chain))) return rc;
            break;
        case OPT_READY_REGEX:
            if (o->have_re) return cli_usage_error(CMD, "--ready-regex is given twice (give one)");
            if (optarg[0] == '\0') return cli_usage_error(CMD, "--ready-regex: the expression is empty");
            if ((rc = regcomp(&o->re, optarg, REG_EXTENDED | REG_NOSUB)) != 0) {
                char why[160];
                regerror(rc, &o->re, why, sizeof why);
                return cli_usage_error(CMD, "--ready-regex: '%s' is not a valid extended regular "
                                            "expression: %s", optarg, why);
            }
            o->have_re = 1;
            o->ready_regex = optarg;
            break;
        case OPT_READY_PORT:
            if (o->ready_port) return cli_usage_error(CMD, "--ready-port is given twice (give one)");
            if ((rc = cli_opt_count(CMD, "ready-port", optarg, 1, 65535, 0, &v))) return rc;
            o->ready_port = (int)v;
            break;
        case OPT_READY_FILE:
            if (o->ready_file) return cli_usage_error(CMD, "--ready-file is given twice (give one)");
            if (optarg[0] == '\0') return cli_usage_error(CMD, "--ready-file: the path is empty");
            o->ready_file = optarg;
            break;
        case OPT_READY_TIMEOUT:
            if ((rc = cli_opt_seconds(CMD, "ready-timeout", optarg, &o->ready_timeout_s))) return rc;
            break;
        case OPT_GRACE:
            if ((rc = cli_opt_seconds(CMD, "grace", optarg, &o->grace_s))) return rc;
            break;
        case OPT_RESTART:
            if ((rc = cli_opt_count(CMD, "restart", optarg, 0, VRAM_SUPERVISE_MAX_RESTARTS,
                                    CLI_OPT_NEGATIVE, &v)))
                return rc;
            o->policy.restarts = (uint32_t)v;
            break;
        case OPT_DEGRADE: o->policy.degrade = 1; break;
        case OPT_BACKOFF:
            if ((rc = parse_ms("backoff", optarg, &o->policy.backoff_ms))) return rc;
            break;
        case OPT_BACKOFF_MAX:
            if ((rc = parse_ms("backoff-max", optarg, &o->policy.backoff_max_ms))) return rc;
            break;
        case OPT_STABLE:
            if ((rc = parse_ms("stable", optarg, &o->policy.stable_ms))) return rc;
            break;
        case OPT_EVENTS:
            if (o->events) return cli_usage_error(CMD, "--events is given twice (give one file)");
            if (optarg[0] == '\0') return cli_usage_error(CMD, "--events: the path is empty");
            o->events = optarg;
            break;
        case ':':
            return cli_usage_error(CMD, "option '%s' needs a value", argv[optind - 1]);
        default:
            return cli_usage_error(CMD, "unknown option '%s' (see 'vramkit run --help')",
                                   argv[optind - 1]);
        }
    }
    if ((rc = cli_chain_stray(CMD, argv, dd, optind))) return rc;
    if ((rc = cli_chain_check(CMD, &o->chain))) return rc;
    if (o->policy.backoff_max_ms && o->policy.backoff_ms > o->policy.backoff_max_ms)
        return cli_usage_error(CMD, "--backoff is longer than --backoff-max");
    if ((rc = cli_chain_command(CMD, argc, argv, dd, &o->command, &o->n_command))) return rc;
    if (o->ready_timeout_s == 0) o->ready_timeout_s = DEFAULT_READY_TIMEOUT_S;
    if ((rc = cli_chain_load(CMD, &o->chain))) return rc;
    return -1;
}

static void opts_free(opts *o) {
    cli_chain_free(&o->chain);
    if (o->have_re) regfree(&o->re);
    o->have_re = 0;
}

/* ---- time and events ------------------------------------------------------------------- */

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct events {
    FILE *f;     /* NULL: no --events */
    int own;     /* f was opened here */
    int failed;  /* a write failed */
    double t0;   /* when run started (monotonic) */
    vram_json j;
} events;

/* Starts an event line: {"time":..., "elapsed_s":..., "event":NAME, then the caller's keys. */
static vram_json *ev_begin(events *e, const char *name) {
    struct timespec ts;
    struct tm tm;
    char when[48];
    if (e->f == NULL) return NULL;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    size_t n = strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(when + n, sizeof when - n, ".%03ldZ", ts.tv_nsec / 1000000L);
    vram_json_init(&e->j, e->f);
    vram_json_begin_object(&e->j);
    vram_json_key(&e->j, "time");
    vram_json_string(&e->j, when);
    vram_json_key(&e->j, "elapsed_s");
    vram_json_double(&e->j, now_s() - e->t0);
    vram_json_key(&e->j, "event");
    vram_json_string(&e->j, name);
    return &e->j;
}

static void ev_end(events *e) {
    if (e->f == NULL) return;
    vram_json_end_object(&e->j);
    vram_json_finish(&e->j);
    if (fflush(e->f) != 0 || ferror(e->f)) e->failed = 1;
}

static void ev_str(vram_json *j, const char *key, const char *v) {
    char *t;
    if (key != NULL) vram_json_key(j, key); /* NULL: an array item */
    if (v == NULL) {
        vram_json_null(j);
        return;
    }
    t = cli_clean_text(v, strlen(v), strlen(v), 0);
    vram_json_string(j, t ? t : "?");
    free(t);
}

static void ev_int(vram_json *j, const char *key, int have, int64_t v) {
    vram_json_key(j, key);
    if (have)
        vram_json_i64(j, v);
    else
        vram_json_null(j);
}

/* ---- the running attempt ---------------------------------------------------------------- */

/* Signals forwarded to the service, and whether they ask it to stop. */
static const int fwd_sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2};
#define N_FWD (int)(sizeof fwd_sigs / sizeof fwd_sigs[0])
static volatile sig_atomic_t pending[N_FWD];

static void on_signal(int sig) {
    for (int i = 0; i < N_FWD; i++)
        if (fwd_sigs[i] == sig) pending[i] = 1;
}

static int is_stop_signal(int sig) { return sig == SIGTERM || sig == SIGINT || sig == SIGHUP; }

typedef struct linebuf {
    char *buf;
    size_t len;
} linebuf;

typedef struct run_state {
    const opts *o;
    events *ev;
    /* this attempt */
    int attempt;          /* 1, 2, ... over every start */
    const char *strategy;
    double started;       /* monotonic */
    int ready;
    const char *ready_how;
    double ready_at;
    double next_probe;
    int file_had;         /* --ready-file was there at the start: its identity then */
    struct stat file_st;
    linebuf lines[2];     /* stdout, stderr: the line being collected */
    const vram_gpumem_ops *mem; /* NVML, or NULL: the service's GPU memory is not known */
    uint64_t gpu_bytes, gpu_peak; /* its process group's GPU memory: last read, most seen */
    int gpu_known;        /* read at least once this attempt */
    uint64_t predicted_high; /* the plan's high for this strategy on its GPU; 0: not known */
    int over_warned;      /* this attempt went above it (said once) */
    double next_memory;
    int stop_requested;   /* a stop signal was forwarded */
    int stop_signal;      /* the last stop signal received (for 128 + N between attempts) */
} run_state;

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

/* The GPU memory of every process of the service's group (pgid), over every GPU. */
static void read_memory(run_state *st, pid_t group) {
    int ndev = 0;
    uint64_t sum = 0;
    if (st->mem == NULL || st->mem->device_count(st->mem->ctx, &ndev) != VRAM_OK) return;
    for (int d = 0; d < ndev; d++) {
        vram_gpumem_proc procs[VRAM_GPUMEM_MAX_PROCS];
        int n = 0;
        if (st->mem->processes(st->mem->ctx, d, procs, VRAM_GPUMEM_MAX_PROCS, &n) != VRAM_OK) return;
        for (int i = 0; i < n; i++)
            if (procs[i].used_bytes != VRAM_GPUMEM_UNKNOWN &&
                (procs[i].pid == (uint32_t)group || getpgid((pid_t)procs[i].pid) == group))
                sum += procs[i].used_bytes;
    }
    st->gpu_bytes = sum;
    if (sum > st->gpu_peak) st->gpu_peak = sum;
    st->gpu_known = 1;
    if (st->predicted_high > 0 && sum > st->predicted_high && !st->over_warned) {
        char used[32], high[32];
        st->over_warned = 1;
        vram_fmt_size(sum, used, sizeof used);
        vram_fmt_size(st->predicted_high, high, sizeof high);
        fprintf(stderr, "vramkit: run: warning: %s uses %s of GPU memory, more than the plan's "
                        "predicted high of %s\n", st->strategy, used, high);
        fflush(stderr);
        vram_json *j = ev_begin(st->ev, "memory_over");
        if (j) {
            ev_int(j, "attempt", 1, st->attempt);
            ev_str(j, "strategy", st->strategy);
            vram_json_key(j, "gpu_bytes");
            vram_json_u64(j, sum);
            vram_json_key(j, "predicted_high_bytes");
            vram_json_u64(j, st->predicted_high);
            ev_end(st->ev);
        }
    }
}

static void ev_memory(run_state *st, vram_json *j) {
    vram_json_key(j, "gpu_bytes");
    if (st->gpu_known) vram_json_u64(j, st->gpu_bytes);
    else vram_json_null(j);
    vram_json_key(j, "gpu_peak_bytes");
    if (st->gpu_known) vram_json_u64(j, st->gpu_peak);
    else vram_json_null(j);
}

static pid_t current_group;

static void mark_ready(run_state *st, const char *how) {
    if (st->ready) return;
    st->ready = 1;
    st->ready_how = how;
    st->ready_at = now_s();
    read_memory(st, current_group);
    fprintf(stderr, "vramkit: run: %s: ready (%s) after %.2f s\n", st->strategy, how,
            st->ready_at - st->started);
    fflush(stderr);
    vram_json *j = ev_begin(st->ev, "ready");
    if (j) {
        ev_int(j, "attempt", 1, st->attempt);
        ev_str(j, "strategy", st->strategy);
        ev_str(j, "how", how);
        vram_json_key(j, "seconds");
        vram_json_double(j, st->ready_at - st->started);
        ev_memory(st, j);
        ev_end(st->ev);
    }
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
    if (lb->buf == NULL && (lb->buf = (char *)malloc(LINE_MAX_BYTES + 1)) == NULL) {
        write_all(fd, data, n); /* no memory for lines: pass it through as it comes */
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
            look_at_line(st, stream, lb->buf, lb->len); /* after it: "ready" follows the line */
            lb->len = 0;
            data++;
            n--;
        } else if (lb->len == LINE_MAX_BYTES) {
            write_all(fd, lb->buf, lb->len); /* a very long line: in pieces */
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
    current_group = pid;
    if (st->mem != NULL && now_s() >= st->next_memory) {
        st->next_memory = now_s() + MEMORY_EVERY_S;
        read_memory(st, pid);
    }
    for (int i = 0; i < N_FWD; i++) {
        if (!pending[i]) continue;
        pending[i] = 0;
        kill(-pid, fwd_sigs[i]);
        if (is_stop_signal(fwd_sigs[i])) {
            st->stop_requested = 1;
            st->stop_signal = fwd_sigs[i];
        }
        vram_json *j = ev_begin(st->ev, "signal");
        if (j) {
            ev_str(j, "signal", vram_signal_name(fwd_sigs[i]));
            ev_int(j, "pid", 1, pid);
            ev_end(st->ev);
        }
    }
    if (!st->ready && (st->o->ready_port || st->o->ready_file)) {
        double t = now_s();
        if (t >= st->next_probe) {
            st->next_probe = t + PROBE_EVERY_S;
            if (st->o->ready_port && port_open(st->o->ready_port)) mark_ready(st, "port");
            else if (st->o->ready_file && file_ready(st)) mark_ready(st, "file");
        }
    }
    return st->ready ? VRAM_ISOLATE_TICK_NO_TIMEOUT : 0;
}

/* ---- starting a child ------------------------------------------------------------------- */

/* The program `name` would run as (PATH search as execvp does); 0, or an errno. */
static int resolve_program(const char *name, char *out, size_t cap) {
    if (strchr(name, '/')) {
        if (access(name, X_OK) != 0) return errno;
        snprintf(out, cap, "%s", name);
        return 0;
    }
    const char *path = getenv("PATH");
    int err = ENOENT;
    if (path == NULL || path[0] == '\0') path = "/usr/local/bin:/bin:/usr/bin";
    for (const char *p = path;;) {
        const char *colon = strchr(p, ':');
        size_t dl = colon ? (size_t)(colon - p) : strlen(p);
        struct stat sb;
        int w = dl == 0 ? snprintf(out, cap, "%s", name)
                        : snprintf(out, cap, "%.*s/%s", (int)dl, p, name);
        if (w > 0 && (size_t)w < cap && stat(out, &sb) == 0 && S_ISREG(sb.st_mode)) {
            if (access(out, X_OK) == 0) return 0;
            err = EACCES;
        }
        if (!colon) break;
        p = colon + 1;
    }
    return err;
}

typedef struct attempt {
    int strategy;         /* index in the chain */
    const char *device, *dtype;
    char **argv;          /* the service's argv, substituted */
    vram_isolate_result res;
    vram_attempt_outcome outcome;
    vram_attempt_evidence ev;
    int ready;
    double after_ready_s;
} attempt;

static void attempt_free(attempt *a) {
    cli_chain_argv_free(a->argv);
    a->argv = NULL;
    vram_isolate_result_free(&a->res);
}

/* Runs strategy a->strategy to its end. Returns 0, or an exit code when running failed. */
static int run_attempt(const opts *o, run_state *st, attempt *a, const char *self_exe,
                       int restart) {
    char ppid[32];
    char prog[PATH_MAX];
    cli_chain_attempt_env env;
    const char **argv;
    int err;
    const char *name = o->chain.strategies[a->strategy];
    cli_chain_strategy(&o->chain, a->strategy, &a->device, &a->dtype);
    a->argv = cli_chain_argv(&o->chain, a->strategy, o->command, o->n_command);
    argv = (const char **)calloc((size_t)o->n_command + 5, sizeof *argv);
    if (!a->argv || !argv) {
        free(argv);
        return cli_error(VRAM_EXIT_ENV, CMD, "out of memory");
    }
    cli_chain_env(&o->chain, a->strategy, st->attempt, &env);

    st->strategy = name;
    st->ready = 0;
    st->ready_how = NULL;
    st->stop_requested = 0;
    st->started = now_s();
    st->next_probe = 0;
    st->next_memory = 0;
    st->gpu_known = 0;
    st->gpu_bytes = st->gpu_peak = 0;
    st->predicted_high = o->chain.gpu_high[a->strategy];
    st->over_warned = 0;
    current_group = 0;
    st->file_had = o->ready_file && stat(o->ready_file, &st->file_st) == 0;

    vram_json *j = ev_begin(st->ev, "attempt");
    if (j) {
        ev_int(j, "attempt", 1, st->attempt);
        ev_str(j, "strategy", name);
        ev_str(j, "device", a->device);
        ev_str(j, "dtype", a->dtype);
        ev_int(j, "restart", restart > 0, restart);
    }

    /* the program is found here, as posix_spawnp would, so "not found" stays start_failed
       although the shim is what is spawned */
    err = resolve_program(a->argv[0], prog, sizeof prog);
    if (err != 0) {
        memset(&a->res, 0, sizeof a->res);
        a->res.how = VRAM_ATTEMPT_NOT_STARTED;
        a->res.exit_code = -1;
        a->res.pid = -1;
        a->res.start_errno = err;
        snprintf(a->res.start_error, sizeof a->res.start_error, "cannot start '%s': %s",
                 a->argv[0], strerror(err));
        if (j) ev_end(st->ev);
        free(argv);
    } else {
        int n = 0;
        if (self_exe) {
            snprintf(ppid, sizeof ppid, "%ld", (long)getpid());
            argv[n++] = self_exe;
            argv[n++] = VRAM_EXEC_SHIM_COMMAND;
            argv[n++] = ppid;
            argv[n++] = "--";
        }
        argv[n++] = prog;
        for (int i = 1; i < o->n_command; i++) argv[n++] = a->argv[i];
        argv[n] = NULL;

        vram_isolate_opts io;
        memset(&io, 0, sizeof io);
        io.argv = argv;
        io.env = env.env;
        io.timeout_s = o->ready_timeout_s;
        io.grace_s = o->grace_s;
        io.on_output = on_output;
        io.on_tick = on_tick;
        io.hook_ctx = st;
        io.tick_ms = 50;
        if (j) ev_end(st->ev); /* the pid is in the ended event: it is known only after */
        vram_status s = cli_chain_isolate(&io, &a->res);
        flush_lines(st);
        free(argv);
        if (s != VRAM_OK)
            return cli_error(VRAM_EXIT_ENV, CMD, "cannot run '%s': %s", a->argv[0],
                             vram_status_str(s));
    }
    vram_attempt_end end = vram_isolate_end(&a->res);
    a->outcome = vram_attempt_explain(&end, &a->ev);
    a->ready = st->ready;
    a->after_ready_s = st->ready ? now_s() - st->ready_at : 0.0;
    return 0;
}

/* "exit 3", "signal 11 SIGSEGV", "not ready after 600 s", "cannot start ..." */
static void describe_end(const opts *o, const attempt *a, char *buf, size_t cap) {
    const vram_isolate_result *r = &a->res;
    switch (r->how) {
    case VRAM_ATTEMPT_NOT_STARTED:
        snprintf(buf, cap, "%s", r->start_error);
        return;
    case VRAM_ATTEMPT_TIMED_OUT:
        snprintf(buf, cap, "not ready after %.3g s, stopped", o->ready_timeout_s);
        return;
    case VRAM_ATTEMPT_SIGNALED:
        snprintf(buf, cap, "signal %d %s", r->signal, r->signal_name ? r->signal_name : "unknown");
        return;
    default:
        snprintf(buf, cap, "exit %d", r->exit_code);
        return;
    }
}

/* vramkit's exit code for a service that ended so. */
static int service_status(const attempt *a) {
    const vram_isolate_result *r = &a->res;
    if (r->how == VRAM_ATTEMPT_SIGNALED || (r->how == VRAM_ATTEMPT_TIMED_OUT && r->signal))
        return 128 + r->signal;
    if (r->how == VRAM_ATTEMPT_NOT_STARTED) return VRAM_EXIT_NO;
    return r->exit_code >= 0 ? r->exit_code : VRAM_EXIT_NO;
}

static void report_end(const opts *o, events *ev, run_state *st, int attempt_no, const attempt *a) {
    char how[400];
    const char *name = o->chain.strategies[a->strategy];
    describe_end(o, a, how, sizeof how);
    fprintf(stderr, "vramkit: run: %s: %s (%s) %s; ran %.2f s", name,
            vram_attempt_outcome_name(a->outcome), how, a->ready ? "after ready" : "before ready",
            a->res.seconds);
    if (a->res.err.len > 0) {
        const char *ls;
        size_t ln;
        cli_last_line(a->res.err.data, a->res.err.len, &ls, &ln);
        if (ln > 0) {
            char *t = cli_clean_text(ls, ln, TEXT_LINE_MAX, 0);
            fprintf(stderr, " | stderr: %s", t ? t : "?");
            free(t);
        }
    }
    fputc('\n', stderr);
    fflush(stderr);
    vram_json *j = ev_begin(ev, "ended");
    if (j) {
        const vram_isolate_result *r = &a->res;
        ev_int(j, "attempt", 1, attempt_no);
        ev_str(j, "strategy", name);
        ev_int(j, "pid", r->pid > 0, r->pid);
        ev_str(j, "outcome", vram_attempt_outcome_name(a->outcome));
        ev_str(j, "rule", vram_attempt_rule_name(a->ev.rule));
        ev_int(j, "exit_code", r->how != VRAM_ATTEMPT_NOT_STARTED && r->exit_code >= 0,
               r->exit_code);
        ev_str(j, "signal", r->signal ? vram_signal_name(r->signal) : NULL);
        vram_json_key(j, "ready");
        vram_json_bool(j, a->ready);
        vram_json_key(j, "seconds");
        vram_json_double(j, r->seconds);
        vram_json_key(j, "after_ready_s");
        if (a->ready)
            vram_json_double(j, a->after_ready_s);
        else
            vram_json_null(j);
        ev_str(j, "start_error", r->how == VRAM_ATTEMPT_NOT_STARTED ? r->start_error : NULL);
        ev_memory(st, j);
        ev_end(ev);
    }
}

/* A stop signal that arrived while no child ran; 0 when none. */
static int pending_stop(void) {
    for (int i = 0; i < N_FWD; i++)
        if (pending[i] && is_stop_signal(fwd_sigs[i])) return fwd_sigs[i];
    return 0;
}

/* Waits ms milliseconds, or less when a stop signal comes. Returns that signal, or 0. */
static int backoff_wait(uint32_t ms) {
    double until = now_s() + ms / 1000.0;
    for (;;) {
        int s = pending_stop();
        if (s) return s;
        double left = until - now_s();
        if (left <= 0) return 0;
        if (left > 0.05) left = 0.05;
        struct timespec ts = {0, (long)(left * 1e9)};
        nanosleep(&ts, NULL);
    }
}

/* ---- the command ------------------------------------------------------------------------- */

int cmd_run(int argc, char **argv) {
    opts o;
    int rc = parse(argc, argv, &o);
    if (rc >= 0) {
        opts_free(&o);
        return rc;
    }
    events ev;
    memset(&ev, 0, sizeof ev);
    ev.t0 = now_s();
    if (o.events) {
        if (strcmp(o.events, "-") == 0) {
            ev.f = stdout;
        } else if ((ev.f = fopen(o.events, "ae")) == NULL) {
            rc = cli_error(VRAM_EXIT_ENV, CMD, "--events %s: cannot open for writing: %s",
                           o.events, strerror(errno));
            opts_free(&o);
            return rc;
        } else {
            ev.own = 1;
        }
    }
    /* the shim that ties each child's life to ours; without /proc, children run directly.
       The path is spawned as is: in the spawned child it names the image it shares with
       us, so the shim runs even when the vramkit file was replaced since we started */
    const char *self_exe = "/proc/self/exe";
    if (access(self_exe, X_OK) != 0) {
        self_exe = NULL;
        fprintf(stderr, "vramkit: run: warning: /proc/self/exe cannot be run: the service will "
                        "not be killed if vramkit is killed with SIGKILL\n");
    }

    vram_supervise sv;
    if (vram_supervise_init(&sv, &o.policy, o.chain.n) != VRAM_OK) { /* ranges checked above */
        opts_free(&o);
        return cli_error(VRAM_EXIT_USAGE, CMD, "the policy is out of range");
    }

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

    /* the service's GPU memory, for the events and the plan's high, through NVML (no
       context of our own) */
    static vram_gpumem_ops nvml;
    int nvml_ok = 0;
    nvml = vram_nvml_ops(NULL);
    nvml_ok = nvml.open(nvml.ctx) == VRAM_OK;
    int predicted = 0;
    for (int i = 0; i < o.chain.n; i++) predicted |= o.chain.gpu_high[i] > 0;
    if (!nvml_ok && predicted)
        fprintf(stderr, "vramkit: run: the service's GPU memory is not watched against the plan: "
                        "%s\n", nvml.error(nvml.ctx));
    vram_json *j = ev_begin(&ev, "start");
    if (j) {
        ev_str(j, "gpu_memory", nvml_ok ? "nvml" : NULL);
        if (!nvml_ok) ev_str(j, "gpu_memory_unknown", nvml.error(nvml.ctx));
        ev_int(j, "pid", 1, getpid());
        ev_str(j, "source", cli_chain_kind(&o.chain));
        ev_str(j, "value", cli_chain_value(&o.chain));
        vram_json_key(j, "strategies");
        vram_json_begin_array(j);
        for (int i = 0; i < o.chain.n; i++) ev_str(j, NULL, o.chain.strategies[i]);
        vram_json_end_array(j);
        ev_end(&ev);
    }
    for (int i = 0; i < o.chain.n_skipped; i++)
        fprintf(stderr, "vramkit: run: skipped %s: %s\n", o.chain.skipped[i], o.chain.skipped_why[i]);

    run_state st;
    memset(&st, 0, sizeof st);
    st.o = &o;
    st.ev = &ev;
    if (nvml_ok) st.mem = &nvml;
    int last_before_ready[CLI_CHAIN_MAX]; /* each strategy's last outcome before ready */
    for (int i = 0; i < CLI_CHAIN_MAX; i++) last_before_ready[i] = -1;
    int restart = 0;
    rc = -1;
    for (int attempt_no = 1; rc < 0; attempt_no++) {
        int s = pending_stop();
        if (s) {
            fprintf(stderr, "vramkit: run: %s before the next start: ending\n", vram_signal_name(s));
            rc = 128 + s;
            break;
        }
        attempt a;
        memset(&a, 0, sizeof a);
        a.strategy = sv.current;
        st.attempt = attempt_no;
        int e = run_attempt(&o, &st, &a, self_exe, restart);
        if (e != 0) {
            attempt_free(&a);
            rc = e;
            break;
        }
        report_end(&o, &ev, &st, attempt_no, &a);
        if (!a.ready) last_before_ready[a.strategy] = (int)a.outcome;

        vram_supervise_end end;
        vram_supervise_decision d;
        end.outcome = a.outcome;
        end.ready = a.ready;
        end.ready_ms = a.after_ready_s > 0 ? (uint64_t)(a.after_ready_s * 1000.0) : 0u;
        end.stop_requested = st.stop_requested;
        if (vram_supervise_ended(&sv, &end, &d) != VRAM_OK) { /* cannot happen: done ends the loop */
            attempt_free(&a);
            rc = cli_error(VRAM_EXIT_ENV, CMD, "internal error: the supervisor is done");
            break;
        }
        const char *from = o.chain.strategies[a.strategy];
        switch (d.action) {
        case VRAM_SUPERVISE_NEXT:
            fprintf(stderr, "vramkit: run: %s -> %s (%s)\n", from, o.chain.strategies[d.strategy],
                    vram_supervise_why_name(d.why));
            if ((j = ev_begin(&ev, d.why == VRAM_SUPERVISE_WHY_DEGRADE ? "degrade" : "next"))) {
                ev_str(j, "from", from);
                ev_str(j, "to", o.chain.strategies[d.strategy]);
                ev_end(&ev);
            }
            restart = 0;
            break;
        case VRAM_SUPERVISE_RESTART:
            fprintf(stderr, "vramkit: run: %s: restart %u of %u in a row in %.3g s\n", from,
                    d.restart, sv.cfg.restarts, d.delay_ms / 1000.0);
            if ((j = ev_begin(&ev, "restart"))) {
                ev_str(j, "strategy", from);
                ev_int(j, "restart", 1, d.restart);
                vram_json_key(j, "delay_s");
                vram_json_double(j, d.delay_ms / 1000.0);
                ev_end(&ev);
            }
            restart = (int)d.restart;
            fflush(stderr);
            if ((s = backoff_wait(d.delay_ms)) != 0) {
                fprintf(stderr, "vramkit: run: %s during the backoff: ending\n", vram_signal_name(s));
                rc = 128 + s;
            }
            break;
        case VRAM_SUPERVISE_EXIT:
            rc = d.why == VRAM_SUPERVISE_WHY_CLEAN_EXIT ? VRAM_EXIT_OK : service_status(&a);
            fprintf(stderr, "vramkit: run: %s: %s; exit %d\n", from, vram_supervise_why_text(d.why), rc);
            if ((j = ev_begin(&ev, "exit"))) {
                ev_int(j, "code", 1, rc);
                ev_str(j, "why", vram_supervise_why_name(d.why));
                ev_end(&ev);
            }
            break;
        default: { /* GIVE_UP */
            char list[1024] = "";
            size_t used = 0;
            if (d.why == VRAM_SUPERVISE_WHY_CHAIN_EXHAUSTED) {
                for (int i = 0; i < o.chain.n && used + 1 < sizeof list; i++) {
                    int w = snprintf(list + used, sizeof list - used, "%s%s: %s", i ? ", " : "",
                                     o.chain.strategies[i],
                                     last_before_ready[i] < 0
                                         ? "was ready earlier"
                                         : vram_attempt_outcome_name(
                                               (vram_attempt_outcome)last_before_ready[i]));
                    if (w < 0) break;
                    used += (size_t)w;
                }
                cli_error(VRAM_EXIT_NO, CMD, "no strategy became ready (%s)", list);
            } else {
                char how[400];
                describe_end(&o, &a, how, sizeof how);
                cli_error(VRAM_EXIT_NO, CMD,
                          "crash loop: %s died after ready %u times in a row (last: %s, %s; "
                          "%u restarts in all, %u degrades); giving up",
                          from, sv.cfg.restarts + 1u, vram_attempt_outcome_name(a.outcome), how,
                          sv.restarts, sv.degrades);
            }
            if ((j = ev_begin(&ev, "give_up"))) {
                ev_str(j, "why", vram_supervise_why_name(d.why));
                ev_int(j, "code", 1, VRAM_EXIT_NO);
                ev_end(&ev);
            }
            rc = VRAM_EXIT_NO;
            break;
        }
        }
        fflush(stderr);
        attempt_free(&a);
    }

    for (int i = 0; i < N_FWD; i++) sigaction(fwd_sigs[i], &old[i], NULL);
    sigaction(SIGPIPE, &old_pipe, NULL);
    if (nvml_ok) nvml.close(nvml.ctx);
    if (ev.f) {
        if (fflush(ev.f) != 0 || ferror(ev.f)) ev.failed = 1;
        if (ev.own && fclose(ev.f) != 0) ev.failed = 1;
        if (ev.failed && rc == VRAM_EXIT_OK)
            rc = cli_error(VRAM_EXIT_ENV, CMD, "--events %s: a write failed", o.events);
        else if (ev.failed)
            fprintf(stderr, "vramkit: run: --events %s: a write failed\n", o.events);
    }
    opts_free(&o);
    return rc;
}
