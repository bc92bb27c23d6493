/* test_isolate.c — the isolation library (driver/isolate/isolate.h) against the test child
 * (test/unit/child): every way a load can end gives the right outcome, within the timeout
 * plus the grace period, leaving no zombie, no open descriptor and no stray grandchild,
 * with the pidfd and with the polling fallback. Also the VRAMKIT_RESULT scanner and parser. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "isolate/isolate.h"

/* How late an attempt may end past timeout + grace (+ drain): process start-up, a loaded CI. */
#define SLACK_S 1.5

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int count_fds(void) {
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    struct dirent *e;
    cr_assert_not_null(d);
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.') n++;
    closedir(d);
    return n - 1;
}

static void assert_no_children(void) {
    errno = 0;
    pid_t w = waitpid(-1, NULL, WNOHANG);
    cr_assert(w == -1 && errno == ECHILD, "a child is left behind (waitpid gave %d, errno %d)", (int)w,
              errno);
}

/* 1 while pid runs (a zombie does not count). */
static int alive(pid_t pid) {
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');
    return p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

static void assert_gone(pid_t pid) {
    for (int i = 0; i < 200 && alive(pid); i++) usleep(5000);
    cr_assert(!alive(pid), "process %d was left running", (int)pid);
}

typedef struct run_case {
    char mode[32];
    char arg[16];
    double timeout_s, grace_s;
    vram_attempt_how how;
    int exit_code; /* -1: do not check */
    int signal;    /* -1: do not check */
    vram_attempt_outcome want;
    double min_s;  /* it must take at least this long (timeouts, grace) */
    double max_s;  /* and end within this (before slack) */
} run_case;

static const run_case run_cases[] = {
    {"segfault", "", 10, 0, VRAM_ATTEMPT_SIGNALED, -1, 11, VRAM_ATTEMPT_CRASH, 0, 10},
    {"abort", "", 10, 0, VRAM_ATTEMPT_SIGNALED, -1, 6, VRAM_ATTEMPT_CRASH, 0, 10},
    {"sigbus", "", 10, 0, VRAM_ATTEMPT_SIGNALED, -1, 7, VRAM_ATTEMPT_CRASH, 0, 10},
    {"sigkill", "", 10, 0, VRAM_ATTEMPT_SIGNALED, -1, 9, VRAM_ATTEMPT_OOM, 0, 10},
    {"sigterm", "", 10, 0, VRAM_ATTEMPT_SIGNALED, -1, 15, VRAM_ATTEMPT_FAILED, 0, 10},
    {"exit3", "", 10, 0, VRAM_ATTEMPT_EXITED, 3, 0, VRAM_ATTEMPT_FAILED, 0, 10},
    {"exit", "0", 10, 0, VRAM_ATTEMPT_EXITED, 0, 0, VRAM_ATTEMPT_SUCCESS, 0, 10},
    {"oom", "", 10, 0, VRAM_ATTEMPT_EXITED, 1, 0, VRAM_ATTEMPT_OOM, 0, 10},
    {"illegal", "", 10, 0, VRAM_ATTEMPT_EXITED, 1, 0, VRAM_ATTEMPT_CUDA_STICKY, 0, 10},
    {"not-supported", "", 10, 0, VRAM_ATTEMPT_EXITED, 1, 0, VRAM_ATTEMPT_NOT_SUPPORTED, 0, 10},
    /* sleeps past the timeout, dies on SIGTERM */
    {"sleep", "", 0.3, 2, VRAM_ATTEMPT_TIMED_OUT, -1, 15, VRAM_ATTEMPT_TIMEOUT, 0.3, 0.3 + 2},
    /* ignores SIGTERM: needs the SIGKILL after the grace period */
    {"ignore-term", "", 0.3, 0.4, VRAM_ATTEMPT_TIMED_OUT, -1, 9, VRAM_ATTEMPT_TIMEOUT, 0.7, 0.7},
    /* exits 0 on SIGTERM: still a timeout */
    {"term-exit", "", 0.3, 2, VRAM_ATTEMPT_TIMED_OUT, 0, 0, VRAM_ATTEMPT_TIMEOUT, 0.3, 2.3},
    /* the grandchild keeps the pipes: bounded by the drain time, then its group is killed */
    {"grandchild", "", 10, 0, VRAM_ATTEMPT_EXITED, 0, 0, VRAM_ATTEMPT_SUCCESS, 0,
     VRAM_ISOLATE_DEFAULT_DRAIN_S},
    {"grandchild-closed", "", 10, 0, VRAM_ATTEMPT_EXITED, 0, 0, VRAM_ATTEMPT_SUCCESS, 0, 1},
    {"flood", "100", 60, 0, VRAM_ATTEMPT_EXITED, 0, 0, VRAM_ATTEMPT_SUCCESS, 0, 60},
    {"flood-out", "100", 60, 0, VRAM_ATTEMPT_EXITED, 0, 0, VRAM_ATTEMPT_SUCCESS, 0, 60},
    {"close-stdout", "", 10, 0, VRAM_ATTEMPT_EXITED, 0, 0, VRAM_ATTEMPT_SUCCESS, 0.2, 10},
    {"bad-result", "", 10, 0, VRAM_ATTEMPT_EXITED, 0, 0, VRAM_ATTEMPT_SUCCESS, 0, 10},
    {"result", "", 10, 0, VRAM_ATTEMPT_EXITED, 0, 0, VRAM_ATTEMPT_SUCCESS, 0, 10},
};
#define N_RUN (sizeof run_cases / sizeof run_cases[0])

typedef struct run_param {
    run_case c;
    int no_pidfd;
} run_param;

ParameterizedTestParameters(isolate, ends) {
    static run_param ps[2 * N_RUN];
    for (size_t i = 0; i < N_RUN; i++) {
        ps[2 * i].c = run_cases[i];
        ps[2 * i].no_pidfd = 0;
        ps[2 * i + 1].c = run_cases[i];
        ps[2 * i + 1].no_pidfd = 1;
    }
    return cr_make_param_array(run_param, ps, 2 * N_RUN);
}

/* Runs the child in `mode`; checks what every run must satisfy. */
static void run_child(const run_case *c, int no_pidfd, vram_isolate_result *r, double *wall) {
    const char *argv[4] = {VRAMKIT_CHILD, c->mode, c->arg[0] ? c->arg : NULL, NULL};
    vram_isolate_opts o;
    memset(&o, 0, sizeof o);
    o.argv = argv;
    o.timeout_s = c->timeout_s;
    o.grace_s = c->grace_s;
    o.no_pidfd = no_pidfd;
    int fds = count_fds();
    double t0 = now_s();
    cr_assert_eq(vram_isolate_run(&o, r), VRAM_OK);
    *wall = now_s() - t0;
    cr_assert_eq(count_fds(), fds, "%s: descriptors leaked", c->mode);
    assert_no_children();
}

ParameterizedTest(const run_param *p, isolate, ends) {
    const run_case *c = &p->c;
    vram_isolate_result r;
    double wall;
    run_child(c, p->no_pidfd, &r, &wall);
    vram_attempt_end end = vram_isolate_end(&r);
    vram_attempt_outcome o = vram_attempt_classify(&end);
    cr_expect_eq(r.how, c->how, "%s: how %d, want %d", c->mode, r.how, c->how);
    cr_expect_eq(o, c->want, "%s (pidfd %s): %s, want %s; stderr '%.200s'", c->mode,
                 p->no_pidfd ? "off" : "on", vram_attempt_outcome_name(o),
                 vram_attempt_outcome_name(c->want), r.err.data ? r.err.data : "");
    if (c->exit_code >= 0) cr_expect_eq(r.exit_code, c->exit_code, "%s: exit %d", c->mode, r.exit_code);
    if (c->signal >= 0) cr_expect_eq(r.signal, c->signal, "%s: signal %d", c->mode, r.signal);
    if (r.signal) cr_expect_str_eq(r.signal_name, vram_signal_name(r.signal));
    cr_expect_geq(r.seconds, c->min_s - 0.01, "%s: %.3f s", c->mode, r.seconds);
    cr_expect_leq(wall, c->max_s + SLACK_S, "%s: took %.3f s", c->mode, wall);
    cr_expect_leq(r.seconds, wall + 0.01);
    cr_expect_gt(r.pid, 0);
    cr_expect_leq(r.out.len, VRAM_ISOLATE_TAIL_BYTES);
    cr_expect_leq(r.err.len, VRAM_ISOLATE_TAIL_BYTES);
    cr_expect_leq(r.out.len, r.out.total);
    cr_expect_leq(r.err.len, r.err.total);
    if (r.out.data) cr_expect_eq(r.out.data[r.out.len], '\0');
    if (r.err.data) cr_expect_eq(r.err.data[r.err.len], '\0');
    assert_gone(r.pid);

    if (strcmp(c->mode, "segfault") == 0)
        cr_expect(r.err.data && strstr(r.err.data, "about to segfault"));
    if (strcmp(c->mode, "ignore-term") == 0) cr_expect(r.sent_term && r.sent_kill);
    if (strcmp(c->mode, "sleep") == 0) cr_expect(r.sent_term && !r.sent_kill);
    if (strcmp(c->mode, "term-exit") == 0)
        cr_expect(r.out.data && strstr(r.out.data, "got SIGTERM"), "the child saw SIGTERM");
    if (strncmp(c->mode, "grandchild", 10) == 0) {
        int g = 0;
        cr_assert(r.out.data && sscanf(r.out.data, "grandchild %d", &g) == 1);
        assert_gone((pid_t)g);
        cr_expect_eq(r.leftovers, strcmp(c->mode, "grandchild") == 0, "leftovers %d", r.leftovers);
        if (strcmp(c->mode, "grandchild") == 0)
            cr_expect_geq(wall, VRAM_ISOLATE_DEFAULT_DRAIN_S - 0.01, "drained for %.3f s", wall);
    }
    if (strncmp(c->mode, "flood", 5) == 0) {
        const vram_isolate_stream *s = strcmp(c->mode, "flood") == 0 ? &r.err : &r.out;
        uint64_t want = 100ull * 1024 * 1024 + strlen("flood done\n");
        cr_expect_eq(s->total, want, "wrote %llu bytes", (unsigned long long)s->total);
        cr_expect_eq(s->len, VRAM_ISOLATE_TAIL_BYTES, "kept %zu bytes, at most 64 KiB", s->len);
        cr_expect(s->len >= 11 && memcmp(s->data + s->len - 11, "flood done\n", 11) == 0,
                  "the tail is the end of the stream");
        cr_expect_eq(s->data[0], 'x');
    }
    if (strcmp(c->mode, "close-stdout") == 0) cr_expect(r.out.len == 0 && r.err.len == 0);
    if (strcmp(c->mode, "bad-result") == 0) {
        cJSON *v = (cJSON *)1;
        char err[256];
        cr_assert_not_null(r.result_line);
        cr_expect_str_eq(r.result_line, "{not json");
        cr_expect_eq(vram_isolate_parse_result(r.result_line, r.result_len, &v, err, sizeof err),
                     VRAM_E_FORMAT);
        cr_expect_null(v);
        cr_expect(strncmp(err, "VRAMKIT_RESULT line is not valid JSON: ", 39) == 0, "%s", err);
    }
    if (strcmp(c->mode, "result") == 0) {
        cJSON *v = NULL;
        char err[256];
        cr_assert_not_null(r.result_line, "the line split across two writes was found");
        cr_assert_eq(vram_isolate_parse_result(r.result_line, r.result_len, &v, err, sizeof err),
                     VRAM_OK, "%s", err);
        cJSON *peak = cJSON_GetObjectItemCaseSensitive(v, "peak_bytes");
        cr_expect(cJSON_IsNumber(peak) && peak->valuedouble == 123456789.0, "the last line wins");
        cr_expect_null(cJSON_GetObjectItemCaseSensitive(v, "stale"));
        cJSON_Delete(v);
    } else if (strcmp(c->mode, "bad-result") != 0) {
        cr_expect_null(r.result_line);
    }
    vram_isolate_result_free(&r);
    vram_isolate_result_free(&r); /* twice is fine */
}

static vram_isolate_result run_argv(const char *const *argv, const char *const *env, const char *cwd) {
    vram_isolate_opts o;
    vram_isolate_result r;
    memset(&o, 0, sizeof o);
    o.argv = argv;
    o.env = env;
    o.cwd = cwd;
    o.timeout_s = 10;
    int fds = count_fds();
    cr_assert_eq(vram_isolate_run(&o, &r), VRAM_OK);
    cr_assert_eq(count_fds(), fds, "descriptors leaked");
    assert_no_children();
    return r;
}

Test(isolate, program_not_found) {
    const char *argv[] = {"/nonexistent/vramkit-no-such-program", NULL};
    vram_isolate_result r = run_argv(argv, NULL, NULL);
    cr_expect_eq(r.how, VRAM_ATTEMPT_NOT_STARTED);
    cr_expect_eq(r.start_errno, ENOENT);
    cr_expect(strstr(r.start_error, "vramkit-no-such-program") && strstr(r.start_error, strerror(ENOENT)),
              "%s", r.start_error);
    cr_expect_eq(r.pid, -1);
    vram_attempt_end e = vram_isolate_end(&r);
    cr_expect_eq(vram_attempt_classify(&e), VRAM_ATTEMPT_START_FAILED);
    vram_isolate_result_free(&r);

    const char *path_argv[] = {"vramkit-no-such-program-in-path", NULL};
    r = run_argv(path_argv, NULL, NULL);
    cr_expect_eq(r.how, VRAM_ATTEMPT_NOT_STARTED);
    cr_expect_eq(r.start_errno, ENOENT);
    vram_isolate_result_free(&r);
}

Test(isolate, program_not_executable) {
    const char *argv[] = {VRAMKIT_SOURCE_DIR "/README.md", NULL};
    vram_isolate_result r = run_argv(argv, NULL, NULL);
    cr_expect_eq(r.how, VRAM_ATTEMPT_NOT_STARTED);
    cr_expect_eq(r.start_errno, EACCES, "errno %d", r.start_errno);
    vram_isolate_result_free(&r);
}

Test(isolate, program_found_in_path) {
    const char *argv[] = {"true", NULL};
    vram_isolate_result r = run_argv(argv, NULL, NULL);
    cr_expect_eq(r.how, VRAM_ATTEMPT_EXITED);
    cr_expect_eq(r.exit_code, 0);
    vram_isolate_result_free(&r);
}

Test(isolate, environment_and_directory) {
    setenv("TEST_VAR", "from-parent", 1);
    setenv("VRAMKIT_DTYPE", "stale", 1);
    const char *argv[] = {VRAMKIT_CHILD, "env", NULL};
    const char *env[] = {"TEST_VAR=from-child", "VRAMKIT_STRATEGY=fp16", "VRAMKIT_DEVICE=a=b",
                         "VRAMKIT_STRATEGY=int8", NULL};
    vram_isolate_result r = run_argv(argv, env, "/tmp");
    cr_assert_eq(r.exit_code, 0);
    cr_assert_not_null(r.out.data);
    cr_expect(strstr(r.out.data, "TEST_VAR=from-child\n"), "%s", r.out.data);
    cr_expect(strstr(r.out.data, "VRAMKIT_STRATEGY=int8\n"), "the later addition wins: %s", r.out.data);
    cr_expect(strstr(r.out.data, "VRAMKIT_DEVICE=a=b\n"), "%s", r.out.data);
    cr_expect(strstr(r.out.data, "VRAMKIT_DTYPE=stale\n"), "the rest of the environment stays");
    cr_expect(strstr(r.out.data, "cwd=/tmp\n"), "%s", r.out.data);
    vram_isolate_result_free(&r);
    /* without additions the parent's environment and directory are the child's */
    const char *argv2[] = {VRAMKIT_CHILD, "env", NULL};
    r = run_argv(argv2, NULL, NULL);
    cr_expect(strstr(r.out.data, "TEST_VAR=from-parent\n"), "%s", r.out.data);
    vram_isolate_result_free(&r);
}

Test(isolate, bad_working_directory) {
    const char *argv[] = {VRAMKIT_CHILD, "exit", "0", NULL};
    vram_isolate_result r = run_argv(argv, NULL, "/nonexistent/dir");
    cr_expect_eq(r.how, VRAM_ATTEMPT_NOT_STARTED);
    cr_expect_eq(r.start_errno, ENOENT);
    vram_isolate_result_free(&r);
}

Test(isolate, child_gets_only_stdio_and_empty_stdin) {
    int leaked = open("/dev/null", O_RDONLY); /* no O_CLOEXEC: must still not reach the child */
    cr_assert_geq(leaked, 0);
    const char *argv[] = {VRAMKIT_CHILD, "fds", NULL};
    vram_isolate_result r = run_argv(argv, NULL, NULL);
    cr_expect_str_eq(r.out.data, "fds 3\n");
    vram_isolate_result_free(&r);
    const char *argv2[] = {VRAMKIT_CHILD, "stdin", NULL};
    r = run_argv(argv2, NULL, NULL);
    cr_expect_str_eq(r.out.data, "eof\n");
    vram_isolate_result_free(&r);
    close(leaked);
}

Test(isolate, ignored_signals_are_not_inherited) {
    /* a parent that ignores SIGTERM (as daemons do) must not pass that on: the timeout
     * would then always need SIGKILL */
    signal(SIGTERM, SIG_IGN);
    const char *argv[] = {VRAMKIT_CHILD, "sleep", "30", NULL};
    vram_isolate_opts o;
    vram_isolate_result r;
    memset(&o, 0, sizeof o);
    o.argv = argv;
    o.timeout_s = 0.2;
    o.grace_s = 5;
    double t0 = now_s();
    cr_assert_eq(vram_isolate_run(&o, &r), VRAM_OK);
    cr_expect_lt(now_s() - t0, 0.2 + SLACK_S, "SIGTERM ended it, not SIGKILL after 5 s");
    cr_expect_eq(r.signal, SIGTERM);
    cr_expect_eq(r.sent_kill, 0);
    vram_isolate_result_free(&r);
    assert_no_children();
}

Test(isolate, cancel) {
    static volatile sig_atomic_t flag = 1;
    const char *argv[] = {VRAMKIT_CHILD, "sleep", "30", NULL};
    vram_isolate_opts o;
    vram_isolate_result r;
    memset(&o, 0, sizeof o);
    o.argv = argv;
    o.cancel = &flag;
    double t0 = now_s();
    cr_assert_eq(vram_isolate_run(&o, &r), VRAM_OK);
    cr_expect_lt(now_s() - t0, SLACK_S);
    cr_expect_eq(r.how, VRAM_ATTEMPT_TIMED_OUT);
    cr_expect_eq(r.cancelled, 1);
    vram_isolate_result_free(&r);
    assert_no_children();
}

Test(isolate, bad_options) {
    vram_isolate_opts o;
    vram_isolate_result r;
    const char *argv[] = {VRAMKIT_CHILD, "exit", "0", NULL};
    const char *empty[] = {"", NULL};
    const char *none[] = {NULL};
    const char *bad_env[][2] = {{"NOEQUALS", NULL}, {"=value", NULL}};
    memset(&o, 0, sizeof o);
    cr_expect_eq(vram_isolate_run(NULL, &r), VRAM_E_INVALID);
    cr_expect_eq(vram_isolate_run(&o, NULL), VRAM_E_INVALID);
    cr_expect_eq(vram_isolate_run(&o, &r), VRAM_E_INVALID, "no argv");
    o.argv = none;
    cr_expect_eq(vram_isolate_run(&o, &r), VRAM_E_INVALID, "no argv[0]");
    o.argv = empty;
    cr_expect_eq(vram_isolate_run(&o, &r), VRAM_E_INVALID, "empty argv[0]");
    o.argv = argv;
    const double bad[] = {-1.0, NAN, INFINITY, 1e12};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        o.timeout_s = bad[i];
        cr_expect_eq(vram_isolate_run(&o, &r), VRAM_E_INVALID, "timeout %g", bad[i]);
        o.timeout_s = 0;
        o.grace_s = bad[i];
        cr_expect_eq(vram_isolate_run(&o, &r), VRAM_E_INVALID, "grace %g", bad[i]);
        o.grace_s = 0;
        o.drain_s = bad[i];
        cr_expect_eq(vram_isolate_run(&o, &r), VRAM_E_INVALID, "drain %g", bad[i]);
        o.drain_s = 0;
    }
    for (size_t i = 0; i < 2; i++) {
        o.env = bad_env[i];
        cr_expect_eq(vram_isolate_run(&o, &r), VRAM_E_INVALID, "env '%s'", bad_env[i][0]);
    }
    assert_no_children();
}

/* ---- the VRAMKIT_RESULT scanner -------------------------------------------------------- */

/* Feeds text in pieces of `step` bytes; returns the last payload ("" when none, "<long>"). */
static void scan_in_pieces(const char *text, size_t n, size_t step, char *out, size_t cap) {
    vram_isolate_scanner s;
    vram_isolate_scanner_init(&s);
    for (size_t i = 0; i < n; i += step) vram_isolate_scanner_feed(&s, text + i, i + step > n ? n - i : step);
    vram_isolate_scanner_finish(&s);
    if (s.last_too_long)
        snprintf(out, cap, "<long>");
    else if (s.last)
        snprintf(out, cap, "%s", s.last);
    else
        snprintf(out, cap, "<none>");
    cr_expect_eq(s.no_memory, 0);
    vram_isolate_scanner_free(&s);
}

typedef struct scan_case {
    char text[200];
    char want[64];
} scan_case;

static const scan_case scan_cases[] = {
    {"VRAMKIT_RESULT {\"a\":1}\n", "{\"a\":1}"},
    {"noise\nVRAMKIT_RESULT {\"a\":1}\nmore\n", "{\"a\":1}"},
    {"VRAMKIT_RESULT {\"a\":1}\nVRAMKIT_RESULT {\"b\":2}\n", "{\"b\":2}"},
    {"VRAMKIT_RESULT {\"a\":1}", "{\"a\":1}"},                  /* no final newline */
    {"VRAMKIT_RESULT {\"a\":1}\r\n", "{\"a\":1}"},              /* CRLF */
    {"VRAMKIT_RESULT\t{\"a\":1}\n", "{\"a\":1}"},               /* a tab as the blank */
    {"VRAMKIT_RESULT\n", ""},                                   /* the prefix alone */
    {"VRAMKIT_RESULT", ""},                                     /* ... at the very end */
    {"VRAMKIT_RESULTS {\"a\":1}\n", "<none>"},                  /* another word */
    {" VRAMKIT_RESULT {\"a\":1}\n", "<none>"},                  /* not at the line start */
    {"say VRAMKIT_RESULT {\"a\":1}\n", "<none>"},
    {"VRAMKIT_RES\nULT {}\n", "<none>"},
    {"VRAMKIT_RESULT {\"a\":1}\nVRAMKIT_RESUL\n", "{\"a\":1}"}, /* a partial prefix is no line */
    {"VRAMKIT_VRAMKIT_RESULT {}\n", "<none>"},
    {"\n\nVRAMKIT_RESULT   {}  \n", "  {}  "},
    {"", "<none>"},
};

ParameterizedTestParameters(isolate, scanner) {
    return cr_make_param_array(scan_case, scan_cases, sizeof scan_cases / sizeof scan_cases[0]);
}

ParameterizedTest(const scan_case *c, isolate, scanner) {
    char got[256];
    size_t n = strlen(c->text);
    for (size_t step = 1; step <= n + 1; step++) {
        scan_in_pieces(c->text, n, step, got, sizeof got);
        cr_expect_str_eq(got, c->want, "'%s' in pieces of %zu", c->text, step);
    }
}

Test(isolate, scanner_bounds_long_lines) {
    size_t n = VRAM_ISOLATE_RESULT_MAX + 100;
    char *text = (char *)malloc(n + 64);
    memcpy(text, "VRAMKIT_RESULT ", 15);
    memset(text + 15, 'x', n - 15);
    char got[64];
    scan_in_pieces(text, n, 4096, got, sizeof got);
    cr_expect_str_eq(got, "<long>");
    /* a good line after a long one is the last one again */
    memcpy(text + n, "\nVRAMKIT_RESULT {}\n", 19);
    scan_in_pieces(text, n + 19, 4096, got, sizeof got);
    cr_expect_str_eq(got, "{}");
    /* exactly the maximum is accepted */
    memset(text + 15, ' ', VRAM_ISOLATE_RESULT_MAX);
    text[15 + VRAM_ISOLATE_RESULT_MAX] = '\n';
    vram_isolate_scanner s;
    vram_isolate_scanner_init(&s);
    vram_isolate_scanner_feed(&s, text, 15 + VRAM_ISOLATE_RESULT_MAX + 1);
    vram_isolate_scanner_finish(&s);
    cr_expect_eq(s.last_too_long, 0);
    cr_expect_eq(s.last_len, VRAM_ISOLATE_RESULT_MAX);
    vram_isolate_scanner_free(&s);
    free(text);
}

/* ---- the VRAMKIT_RESULT parser --------------------------------------------------------------- */

typedef struct parse_case {
    char text[128];
    int ok;
    char err_start[64];
} parse_case;

static const parse_case parse_cases[] = {
    {"{\"peak_bytes\": 1024, \"device\": \"cuda:0\"}", 1, ""},
    {"  {}  ", 1, ""},
    {"{\"nested\": {\"a\": [1, 2, {\"b\": null}]}}", 1, ""},
    {"", 0, "VRAMKIT_RESULT line is not valid JSON: it is empty"},
    {"   ", 0, "VRAMKIT_RESULT line is not valid JSON: it is empty"},
    {"{not json", 0, "VRAMKIT_RESULT line is not valid JSON: "},
    {"{\"a\": 1", 0, "VRAMKIT_RESULT line is not valid JSON: "},
    {"{\"a\": 1} trailing", 0, "VRAMKIT_RESULT line is not valid JSON: unexpected text"},
    {"{} {}", 0, "VRAMKIT_RESULT line is not valid JSON: unexpected text"},
    {"[1, 2]", 0, "VRAMKIT_RESULT line is not an object (it is an array)"},
    {"\"text\"", 0, "VRAMKIT_RESULT line is not an object (it is a string)"},
    {"42", 0, "VRAMKIT_RESULT line is not an object (it is a number)"},
    {"true", 0, "VRAMKIT_RESULT line is not an object (it is a boolean)"},
    {"null", 0, "VRAMKIT_RESULT line is not an object (it is null)"},
};

ParameterizedTestParameters(isolate, parse) {
    return cr_make_param_array(parse_case, parse_cases, sizeof parse_cases / sizeof parse_cases[0]);
}

ParameterizedTest(const parse_case *c, isolate, parse) {
    size_t n = strlen(c->text);
    char *exact = (char *)malloc(n ? n : 1); /* not NUL-terminated */
    memcpy(exact, c->text, n);
    cJSON *v = (cJSON *)1;
    char err[256];
    vram_status st = vram_isolate_parse_result(exact, n, &v, err, sizeof err);
    if (c->ok) {
        cr_expect_eq(st, VRAM_OK, "'%s': %s", c->text, err);
        cr_expect(cJSON_IsObject(v));
    } else {
        cr_expect_eq(st, VRAM_E_FORMAT, "'%s'", c->text);
        cr_expect_null(v);
        cr_expect(strncmp(err, c->err_start, strlen(c->err_start)) == 0, "'%s' gave '%s'", c->text, err);
        cr_expect_null(strchr(err, '\n'), "one line");
    }
    cJSON_Delete(st == VRAM_OK ? v : NULL);
    free(exact);
}

Test(isolate, parse_limits) {
    char err[256];
    cJSON *v = NULL;
    /* nesting: 32 levels pass, 33 do not */
    char deep[200];
    for (int levels = 32; levels <= 33; levels++) {
        size_t k = 0;
        for (int i = 0; i < levels; i++) { memcpy(deep + k, "{\"a\":", 5); k += 5; }
        deep[k++] = '1';
        for (int i = 0; i < levels; i++) deep[k++] = '}';
        vram_status st = vram_isolate_parse_result(deep, k, &v, err, sizeof err);
        if (levels == 32) {
            cr_expect_eq(st, VRAM_OK, "%s", err);
            cJSON_Delete(v);
        } else {
            cr_expect_eq(st, VRAM_E_FORMAT);
            cr_expect_str_eq(err, "VRAMKIT_RESULT object is nested deeper than 32 levels");
        }
    }
    char *big = (char *)malloc(VRAM_ISOLATE_RESULT_MAX + 1);
    memset(big, ' ', VRAM_ISOLATE_RESULT_MAX + 1);
    big[0] = '{';
    big[VRAM_ISOLATE_RESULT_MAX - 1] = '}';
    cr_expect_eq(vram_isolate_parse_result(big, VRAM_ISOLATE_RESULT_MAX, &v, err, sizeof err), VRAM_OK);
    cJSON_Delete(v);
    cr_expect_eq(vram_isolate_parse_result(big, VRAM_ISOLATE_RESULT_MAX + 1, &v, err, sizeof err),
                 VRAM_E_FORMAT);
    cr_expect(strstr(err, "longer than"), "%s", err);
    free(big);
    /* no room for the reason is allowed */
    cr_expect_eq(vram_isolate_parse_result("[", 1, &v, NULL, 0), VRAM_E_FORMAT);
}

/* A grandchild that leaves the process group (setsid) escapes the group kill. With
   reap_descendants the runner adopts it and ends it (and what it started in turn); without,
   it is left running, as documented. */
static vram_isolate_result run_escape(const char *arg, int reap) {
    const char *argv[] = {VRAMKIT_CHILD, "escape", arg, NULL};
    vram_isolate_opts o;
    memset(&o, 0, sizeof o);
    o.argv = argv;
    o.timeout_s = 10;
    o.reap_descendants = reap;
    vram_isolate_result r;
    cr_assert_eq(vram_isolate_run(&o, &r), VRAM_OK);
    cr_assert_eq(r.how, VRAM_ATTEMPT_EXITED);
    cr_assert_eq(r.exit_code, 0);
    cr_assert_not_null(r.out.data);
    return r;
}

Test(isolate, reap_descendants_ends_what_left_the_group) {
    int g = 0, gg = 0;
    vram_isolate_result r = run_escape(NULL, 1);
    cr_assert(sscanf(r.out.data, "escaped %d", &g) == 1, "%s", r.out.data);
    cr_expect_eq(r.escaped, 1);
    cr_expect(!alive(g), "the escaped grandchild %d still runs", g);
    vram_isolate_result_free(&r);
    /* the escaped grandchild's own child is reparented here when it dies: the next round */
    r = run_escape("2", 1);
    cr_assert(sscanf(r.out.data, "escaped %d %d", &g, &gg) == 2, "%s", r.out.data);
    cr_expect_eq(r.escaped, 2);
    cr_expect(!alive(g) && !alive(gg), "left running: %d %d", g, gg);
    vram_isolate_result_free(&r);
    assert_no_children();
}

Test(isolate, without_reap_descendants_an_escaped_grandchild_survives) {
    int g = 0;
    vram_isolate_result r = run_escape(NULL, 0);
    cr_assert(sscanf(r.out.data, "escaped %d", &g) == 1, "%s", r.out.data);
    cr_expect_eq(r.escaped, 0);
    cr_expect(alive(g), "the group kill does not reach a process in another session");
    kill(g, SIGKILL);
    vram_isolate_result_free(&r);
}

/* ---- the hooks of a long-running child (vramkit run) ------------------------------------ */

typedef struct hook_log {
    char out[256];
    size_t out_len;
    int ticks;
    int ready_after; /* ticks before on_tick says NO_TIMEOUT; 0: never */
    pid_t seen_pid;
} hook_log;

static void log_output(void *ctx, int stream, const char *data, size_t n) {
    hook_log *h = ctx;
    if (stream != 1) return;
    if (n > sizeof h->out - 1 - h->out_len) n = sizeof h->out - 1 - h->out_len;
    memcpy(h->out + h->out_len, data, n);
    h->out_len += n;
    h->out[h->out_len] = '\0';
}

static int log_tick(void *ctx, pid_t pid) {
    hook_log *h = ctx;
    h->seen_pid = pid;
    h->ticks++;
    return h->ready_after > 0 && h->ticks >= h->ready_after ? VRAM_ISOLATE_TICK_NO_TIMEOUT : 0;
}

Test(isolate, hooks_see_output_and_ticks) {
    const char *argv[] = {VRAMKIT_CHILD, "args", "one", "two", NULL};
    hook_log h;
    memset(&h, 0, sizeof h);
    vram_isolate_opts o;
    memset(&o, 0, sizeof o);
    o.argv = argv;
    o.on_output = log_output;
    o.on_tick = log_tick;
    o.hook_ctx = &h;
    vram_isolate_result r;
    cr_assert_eq(vram_isolate_run(&o, &r), VRAM_OK);
    cr_expect_str_eq(h.out, "one\ntwo\n", "on_output saw stdout as it came");
    cr_expect_eq(r.out.len, 8, "the tail is kept all the same");
    /* a child that ended before the loop's first turn got no tick */
    if (h.ticks > 0) cr_expect_eq(h.seen_pid, r.pid);
    vram_isolate_result_free(&r);
    assert_no_children();
}

/* A child that would time out at 0.3 s runs on once on_tick says it is ready; the ticks come
 * at least every tick_ms while it runs. */
Test(isolate, no_timeout_after_ready) {
    const char *argv[] = {VRAMKIT_CHILD, "sleep", "0.8", NULL};
    hook_log h;
    memset(&h, 0, sizeof h);
    h.ready_after = 2;
    vram_isolate_opts o;
    memset(&o, 0, sizeof o);
    o.argv = argv;
    o.timeout_s = 0.3;
    o.on_tick = log_tick;
    o.hook_ctx = &h;
    o.tick_ms = 20;
    vram_isolate_result r;
    cr_assert_eq(vram_isolate_run(&o, &r), VRAM_OK);
    cr_expect_eq(r.how, VRAM_ATTEMPT_EXITED, "not stopped by the timeout (how %d)", (int)r.how);
    cr_expect_eq(r.exit_code, 0);
    cr_expect(r.seconds >= 0.75);
    cr_expect(h.ticks >= 20, "ticks every 20 ms over 0.8 s: %d", h.ticks);
    vram_isolate_result_free(&r);
    /* never ready: the timeout applies */
    memset(&h, 0, sizeof h);
    cr_assert_eq(vram_isolate_run(&o, &r), VRAM_OK);
    cr_expect_eq(r.how, VRAM_ATTEMPT_TIMED_OUT);
    vram_isolate_result_free(&r);
    o.tick_ms = -1;
    cr_expect_eq(vram_isolate_run(&o, &r), VRAM_E_INVALID);
    vram_isolate_result_free(&r);
    assert_no_children();
}
