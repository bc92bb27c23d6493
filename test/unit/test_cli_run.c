/* `vramkit run` as a user runs it: the built binary over the scripted service
 * (vramkit_service). The chain before ready (a crash under the first strategy, an OOM under
 * the second, ready under the third, by each kind of readiness); the ready timeout; a death
 * after ready restarted, a crash loop, --degrade; the child's status passed through;
 * signals forwarded; vramkit killed (SIGTERM, SIGKILL) takes the service with it; no stray
 * process, no leaked descriptor; the events file; every bad input is exit 2 with one line. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <errno.h>
#include <ftw.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "cli_run.h"
#include "json_check.h"

#define SVC VRAMKIT_SERVICE

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void nap_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* The directories this test process made, removed when it exits. */
static char made[4][64];
static int n_made;

static void remove_made(void) {
    for (int i = 0; i < n_made; i++) nftw(made[i], rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

/* A fresh directory for this test's files (removed at the end of the test's process). */
static void tmpdir(char *dir, size_t cap) {
    snprintf(dir, cap, "/tmp/vramkit-run-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    if (n_made < 4) {
        if (n_made == 0) atexit(remove_made);
        snprintf(made[n_made++], sizeof made[0], "%s", dir);
    }
}

static char *slurp(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) return strdup("");
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    size_t got = fread(b, 1, (size_t)n, f);
    b[got] = '\0';
    fclose(f);
    return b;
}

static int count_of(const char *hay, const char *needle) {
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle)) n++;
    return n;
}

/* The events file: one JSON object a line; returns them as an array (owned). */
static cJSON *read_events(const char *path) {
    char *text = slurp(path);
    cJSON *arr = cJSON_CreateArray();
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        cJSON *o = cJSON_Parse(line);
        cr_assert(cJSON_IsObject(o), "not a JSON object line: %s", line);
        cr_assert(cJSON_IsString(cJSON_GetObjectItem(o, "time")), "%s", line);
        cr_assert(cJSON_IsNumber(cJSON_GetObjectItem(o, "elapsed_s")), "%s", line);
        cr_assert(cJSON_IsString(cJSON_GetObjectItem(o, "event")), "%s", line);
        cJSON_AddItemToArray(arr, o);
    }
    free(text);
    return arr;
}

/* "start,attempt,ended,next,..." of the events. */
static void event_names(const cJSON *evs, char *buf, size_t cap) {
    size_t used = 0;
    buf[0] = '\0';
    for (const cJSON *e = evs->child; e; e = e->next) {
        int w = snprintf(buf + used, cap - used, "%s%s", used ? "," : "", jstr(e, "event"));
        if (w < 0 || (size_t)w >= cap - used) break;
        used += (size_t)w;
    }
}

/* The events of a file, checked to be these in this order ("start,attempt,..."). */
static cJSON *expect_events(const char *path, const char *want) {
    cJSON *evs = read_events(path);
    char names[512];
    event_names(evs, names, sizeof names);
    cr_expect_str_eq(names, want);
    return evs;
}

/* A TCP port on 127.0.0.1 that nothing listens on just now. */
static int free_port(void) {
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    socklen_t len = sizeof a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    cr_assert_eq(bind(s, (struct sockaddr *)&a, sizeof a), 0);
    cr_assert_eq(getsockname(s, (struct sockaddr *)&a, &len), 0);
    close(s);
    return ntohs(a.sin_port);
}

/* ---- the chain before ready, each kind of readiness ---------------------------------------- */

typedef struct ready_case {
    char kind[8];
} ready_case;

ParameterizedTestParameters(cli_run, chain_then_ready) {
    static ready_case cases[] = {{"line"}, {"regex"}, {"port"}, {"file"}};
    return cr_make_param_array(ready_case, cases, sizeof cases / sizeof cases[0]);
}

/* crash under fp16, OOM under int8, ready under cpu; then it exits 0 by itself. */
ParameterizedTest(ready_case *c, cli_run, chain_then_ready) {
    char dir[64], events[128], ready_arg[160], file[128], opt_val[160];
    const char *opt = NULL;
    tmpdir(dir, sizeof dir);
    snprintf(events, sizeof events, "%s/events.jsonl", dir);
    snprintf(file, sizeof file, "%s/ready", dir);
    if (strcmp(c->kind, "line") == 0) {
        snprintf(ready_arg, sizeof ready_arg, "ready=line");
    } else if (strcmp(c->kind, "regex") == 0) {
        snprintf(ready_arg, sizeof ready_arg, "ready=regex");
        opt = "--ready-regex";
        snprintf(opt_val, sizeof opt_val, "startup complete\\.$");
    } else if (strcmp(c->kind, "port") == 0) {
        int port = free_port();
        snprintf(ready_arg, sizeof ready_arg, "ready=port:%d", port);
        opt = "--ready-port";
        snprintf(opt_val, sizeof opt_val, "%d", port);
    } else {
        snprintf(ready_arg, sizeof ready_arg, "ready=file:%s", file);
        opt = "--ready-file";
        snprintf(opt_val, sizeof opt_val, "%s", file);
    }
    const char *args[20];
    int n = 0;
    args[n++] = "run";
    args[n++] = "--strategies";
    args[n++] = "fp16,int8,cpu";
    args[n++] = "--events";
    args[n++] = events;
    args[n++] = "--ready-timeout";
    args[n++] = "20";
    if (opt) {
        args[n++] = opt;
        args[n++] = opt_val;
    }
    args[n++] = "--";
    args[n++] = SVC;
    args[n++] = "{strategy}";
    args[n++] = "crash=fp16";
    args[n++] = "oom=int8";
    args[n++] = ready_arg;
    args[n++] = "die=exit:0";
    args[n++] = "die_ms=300";
    args[n] = NULL;
    cli_result r = cli_run(args);
    cr_expect_eq(r.exit_code, 0, "%s: %s", c->kind, r.err);
    cr_expect(strstr(r.err, "vramkit: run: fp16: crash (signal 11 SIGSEGV) before ready"), "%s", r.err);
    cr_expect(strstr(r.err, "vramkit: run: fp16 -> int8 (failed_before_ready)"), "%s", r.err);
    cr_expect(strstr(r.err, "vramkit: run: int8: oom (exit 1) before ready"), "%s", r.err);
    char want[64];
    snprintf(want, sizeof want, "vramkit: run: cpu: ready (%s)", c->kind);
    cr_expect(strstr(r.err, want), "%s: %s", want, r.err);
    cr_expect(strstr(r.err, "cpu: it exited with code 0; exit 0"), "%s", r.err);
    /* the service's own output passed through, on the stream it used */
    cr_expect(strstr(r.out, "service: start fp16 attempt 1\n"), "%s", r.out);
    cr_expect(strstr(r.out, "service: start int8 attempt 2\n"), "%s", r.out);
    cr_expect(strstr(r.out, "service: start cpu attempt 3\n"), "%s", r.out);
    cr_expect(strstr(r.err, "service: crashing while loading fp16\n"), "%s", r.err);
    cr_expect(strstr(r.err, "RuntimeError: CUDA out of memory"), "%s", r.err);
    /* nothing but 0, 1 and 2 reached the service */
    cr_expect(strstr(r.out, "service: fds 3\n"), "%s", r.out);

    cJSON *evs = read_events(events);
    char names[512];
    event_names(evs, names, sizeof names);
    cr_expect_str_eq(names, "start,attempt,ended,next,attempt,ended,next,attempt,ready,ended,exit");
    const cJSON *ready = jfind(evs, "event", "ready");
    cr_assert_not_null(ready);
    cr_expect_str_eq(jstr(ready, "how"), c->kind);
    cr_expect_str_eq(jstr(ready, "strategy"), "cpu");
    cr_expect_eq(jnum(ready, "attempt"), 3);
    const cJSON *first_end = cJSON_GetArrayItem(evs, 2);
    cr_expect_str_eq(jstr(first_end, "outcome"), "crash");
    cr_expect_str_eq(jstr(first_end, "signal"), "SIGSEGV");
    cr_expect(cJSON_IsFalse(cJSON_GetObjectItem(first_end, "ready")));
    const cJSON *last_end = cJSON_GetArrayItem(evs, 9);
    cr_expect(cJSON_IsTrue(cJSON_GetObjectItem(last_end, "ready")));
    /* it serves 0.3 s by its own count; ports and files are seen up to 0.1 s late */
    cr_expect(jnum(last_end, "after_ready_s") >= 0.1, "served after ready: %g",
              jnum(last_end, "after_ready_s"));
    const cJSON *ex = cJSON_GetArrayItem(evs, 10);
    cr_expect_eq(jnum(ex, "code"), 0);
    cr_expect_str_eq(jstr(ex, "why"), "clean_exit");
    cJSON_Delete(evs);
    cli_result_free(&r);
}

Test(cli_run, no_strategy_ready_is_exit_1_with_a_summary) {
    const char *args[] = {"run", "--strategies", "fp16,int8,nope", "--ready-timeout", "0.5", "--grace",
                          "0.2", "--", SVC, "{strategy}", "crash=fp16", "hang=int8,nope", NULL};
    double t0 = now_s();
    cli_result r = cli_run(args);
    cr_expect_eq(r.exit_code, 1, "%s", r.err);
    cr_expect(now_s() - t0 < 10.0);
    cr_expect(strstr(r.err, "int8: timeout (not ready after 0.5 s, stopped) before ready"), "%s", r.err);
    cr_expect(strstr(r.err, "vramkit: run: no strategy became ready (fp16: crash, int8: timeout, "
                            "nope: timeout)\n"),
              "%s", r.err);
    cli_result_free(&r);
}

Test(cli_run, a_program_not_found_is_start_failed) {
    const char *args[] = {"run", "--strategies", "a,b", "--", "./no-such-service", NULL};
    cli_result r = cli_run(args);
    cr_expect_eq(r.exit_code, 1, "%s", r.err);
    cr_expect(strstr(r.err, "a: start_failed (cannot start './no-such-service': No such file or "
                            "directory) before ready"),
              "%s", r.err);
    cr_expect(strstr(r.err, "no strategy became ready (a: start_failed, b: start_failed)"), "%s", r.err);
    cr_expect_str_eq(r.out, "");
    cli_result_free(&r);
}

/* ---- after ready: the policy --------------------------------------------------------------- */

Test(cli_run, without_restart_the_service_status_is_vramkits) {
    const char *args[] = {"run", "--strategies", "fp16", "--", SVC, "{strategy}", "die=exit:42", NULL};
    cli_result r = cli_run(args);
    cr_expect_eq(r.exit_code, 42, "%s", r.err);
    cr_expect(strstr(r.err, "fp16: it died after it was ready and no restart was asked for; exit 42"),
              "%s", r.err);
    cli_result_free(&r);
    const char *crash[] = {"run", "--strategies", "fp16", "--", SVC, "{strategy}", "die=crash", NULL};
    r = cli_run(crash);
    cr_expect_eq(r.exit_code, 128 + SIGSEGV, "%s", r.err);
    cli_result_free(&r);
}

Test(cli_run, crash_loop_gives_up) {
    char dir[64], count[128], countarg[160], events[128];
    tmpdir(dir, sizeof dir);
    snprintf(count, sizeof count, "%s/count", dir);
    snprintf(countarg, sizeof countarg, "count=%s", count);
    snprintf(events, sizeof events, "%s/ev", dir);
    const char *args[] = {"run", "--strategies", "fp16,cpu", "--restart", "2", "--backoff", "0.1",
                          "--backoff-max", "0.15", "--events", events, "--", SVC, "{strategy}",
                          "die=crash", "die_ms=20", countarg, NULL};
    double t0 = now_s();
    cli_result r = cli_run(args);
    double took = now_s() - t0;
    cr_expect_eq(r.exit_code, 1, "%s", r.err);
    cr_expect(strstr(r.err, "vramkit: run: crash loop: fp16 died after ready 3 times in a row "
                            "(last: crash, signal 11 SIGSEGV; 2 restarts in all, 0 degrades); "
                            "giving up\n"),
              "%s", r.err);
    cr_expect(strstr(r.err, "fp16: restart 1 of 2 in a row in 0.1 s"), "%s", r.err);
    cr_expect(strstr(r.err, "fp16: restart 2 of 2 in a row in 0.15 s"), "%s", r.err);
    char *c = slurp(count);
    cr_expect_str_eq(c, "fp16\nfp16\nfp16\n", "started three times, never cpu");
    free(c);
    cr_expect(took >= 0.25, "the backoff was waited: %.3f s", took);
    cJSON *evs = read_events(events);
    char names[512];
    event_names(evs, names, sizeof names);
    cr_expect_str_eq(names, "start,attempt,ready,ended,restart,attempt,ready,ended,restart,attempt,"
                            "ready,ended,give_up");
    cr_expect_eq(jnum(cJSON_GetArrayItem(evs, 5), "restart"), 1);
    cr_expect_eq(jnum(cJSON_GetArrayItem(evs, 8), "delay_s"), 0.15);
    cr_expect_str_eq(jstr(cJSON_GetArrayItem(evs, 12), "why"), "crash_loop");
    cJSON_Delete(evs);
    cli_result_free(&r);
}

Test(cli_run, degrade_moves_down_the_chain_on_oom_after_ready) {
    char dir[64], events[128];
    tmpdir(dir, sizeof dir);
    snprintf(events, sizeof events, "%s/ev", dir);
    const char *args[] = {"run", "--strategies", "fp16,int8,cpu", "--degrade", "--events", events,
                          "--", SVC, "{strategy}", "crash=fp16", "die.int8=oom", "die.cpu=exit:0",
                          NULL};
    cli_result r = cli_run(args);
    cr_expect_eq(r.exit_code, 0, "%s", r.err);
    cr_expect(strstr(r.err, "int8: oom (exit 1) after ready"), "%s", r.err);
    cr_expect(strstr(r.err, "int8 -> cpu (degrade)"), "%s", r.err);
    cJSON *evs = read_events(events);
    const cJSON *d = jfind(evs, "event", "degrade");
    cr_assert_not_null(d, "a degrade event");
    cr_expect_str_eq(jstr(d, "from"), "int8");
    cr_expect_str_eq(jstr(d, "to"), "cpu");
    cJSON_Delete(evs);
    cli_result_free(&r);
    /* without --degrade the same death ends vramkit with the service's status */
    const char *plain[] = {"run", "--strategies", "fp16,int8,cpu", "--", SVC, "{strategy}",
                           "crash=fp16", "die.int8=oom", "die.cpu=exit:0", NULL};
    r = cli_run(plain);
    cr_expect_eq(r.exit_code, 1, "%s", r.err);
    cr_expect(strstr(r.err, "int8: it died after it was ready and no restart was asked for; exit 1"),
              "%s", r.err);
    cr_expect(strstr(r.out, "service: start cpu") == NULL, "%s", r.out);
    cli_result_free(&r);
}

/* ---- vramkit in the background: signals, restarts, being killed ----------------------------- */

typedef struct bg {
    pid_t pid;
    char out[128], err[128];
} bg;

static bg start_bg(const char *dir, const char *const *args) {
    bg b;
    snprintf(b.out, sizeof b.out, "%s/out", dir);
    snprintf(b.err, sizeof b.err, "%s/err", dir);
    b.pid = fork();
    cr_assert(b.pid >= 0);
    if (b.pid == 0) {
        int o = open(b.out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int e = open(b.err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int z = open("/dev/null", O_RDONLY);
        dup2(o, 1);
        dup2(e, 2);
        dup2(z, 0);
        const char *argv[40];
        int n = 0;
        argv[n++] = VRAMKIT_EXE;
        for (const char *const *a = args; *a && n < 39; a++) argv[n++] = *a;
        argv[n] = NULL;
        execv(VRAMKIT_EXE, (char *const *)argv);
        _exit(127);
    }
    return b;
}

/* Waits up to `secs` for `needle` to appear in the file; 1 when it did. */
static int wait_text(const char *path, const char *needle, double secs) {
    double until = now_s() + secs;
    while (now_s() < until) {
        char *t = slurp(path);
        int found = strstr(t, needle) != NULL;
        free(t);
        if (found) return 1;
        nap_ms(10);
    }
    return 0;
}

static int wait_status(pid_t pid, double secs, int *status) {
    double until = now_s() + secs;
    while (now_s() < until) {
        pid_t w = waitpid(pid, status, WNOHANG);
        if (w == pid) return 1;
        nap_ms(10);
    }
    return 0;
}

static long read_pid(const char *path) {
    char *t = slurp(path);
    long v = atol(t);
    free(t);
    return v;
}

/* Is pid gone (or a zombie that is nobody's business but its reaper's)? */
static int gone(long pid) {
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) return 1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *rp = strrchr(buf, ')');
    return rp && rp[1] == ' ' && (rp[2] == 'Z' || rp[2] == 'X');
}

Test(cli_run, signals_reach_the_service_and_sigterm_ends_both) {
    char dir[64], pidf[128], pidarg[160];
    tmpdir(dir, sizeof dir);
    snprintf(pidf, sizeof pidf, "%s/pid", dir);
    snprintf(pidarg, sizeof pidarg, "pid=%s", pidf);
    const char *args[] = {"run", "--strategies", "cpu", "--restart", "3", "--", SVC, "{strategy}",
                          pidarg, "term_exit=7", "grandchild=1", NULL};
    bg b = start_bg(dir, args);
    cr_assert(wait_text(b.err, "cpu: ready (line)", 20), "ready");
    cr_assert(wait_text(b.out, "service: grandchild ", 5));
    static const int sigs[] = {SIGUSR1, SIGUSR2, SIGHUP};
    static const char *names[] = {"service: got SIGUSR1", "service: got SIGUSR2", "service: got SIGHUP"};
    for (int i = 0; i < 2; i++) {
        kill(b.pid, sigs[i]);
        cr_expect(wait_text(b.out, names[i], 5), "%s forwarded", names[i]);
    }
    long svc = read_pid(pidf);
    char *out = slurp(b.out);
    const char *g = strstr(out, "service: grandchild ");
    long grand = g ? atol(g + strlen("service: grandchild ")) : 0;
    free(out);
    cr_assert(svc > 0 && grand > 0);
    kill(b.pid, SIGTERM);
    int status = 0;
    cr_assert(wait_status(b.pid, 20, &status), "vramkit ended after SIGTERM");
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 7, "the service's exit code: %d", status);
    char *o = slurp(b.out), *e = slurp(b.err);
    cr_expect(strstr(o, "service: got SIGTERM\n"), "%s", o);
    cr_expect_eq(count_of(o, "service: start"), 1, "a stop is not restarted: %s", o);
    cr_expect(strstr(e, "cpu: it was asked to stop; exit 7"), "%s", e);
    free(o);
    free(e);
    cr_expect(gone(svc), "service %ld gone", svc);
    cr_expect(gone(grand), "grandchild %ld gone (no stray process)", grand);
    (void)sigs[2];
    (void)names[2];
}

Test(cli_run, sighup_is_forwarded_and_stops_it) {
    char dir[64];
    tmpdir(dir, sizeof dir);
    const char *args[] = {"run", "--strategies", "cpu", "--", SVC, "{strategy}", NULL};
    bg b = start_bg(dir, args);
    cr_assert(wait_text(b.err, "cpu: ready (line)", 20));
    kill(b.pid, SIGHUP);
    cr_expect(wait_text(b.out, "service: got SIGHUP", 5));
    /* the service serves on after SIGHUP (it reloads); vramkit counts it as a stop request,
       so a later death is not restarted; end it with SIGINT */
    kill(b.pid, SIGINT);
    int status = 0;
    cr_assert(wait_status(b.pid, 20, &status));
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%d", status);
    char *o = slurp(b.out);
    cr_expect(strstr(o, "service: got SIGINT"), "%s", o);
    free(o);
}

Test(cli_run, a_death_after_ready_is_restarted) {
    char dir[64], count[128], countarg[160];
    tmpdir(dir, sizeof dir);
    snprintf(count, sizeof count, "%s/count", dir);
    snprintf(countarg, sizeof countarg, "count=%s", count);
    const char *args[] = {"run", "--strategies", "fp16,cpu", "--restart", "1", "--backoff", "0.05",
                          "--", SVC, "{strategy}", "die=crash", "die_runs=1", countarg, NULL};
    bg b = start_bg(dir, args);
    cr_assert(wait_text(b.err, "fp16: restart 1 of 1 in a row", 20), "restarted");
    cr_assert(wait_text(b.out, "service: start fp16 attempt 2", 20), "started again");
    int readies = 0;
    for (double until = now_s() + 20; now_s() < until && readies < 2; nap_ms(10)) {
        char *e = slurp(b.err);
        readies = count_of(e, "fp16: ready (line)");
        free(e);
    }
    cr_assert_eq(readies, 2, "ready again after the restart");
    nap_ms(300); /* it serves now: no third start */
    char *c = slurp(count);
    cr_expect_str_eq(c, "fp16\nfp16\n");
    free(c);
    kill(b.pid, SIGTERM);
    int status = 0;
    cr_assert(wait_status(b.pid, 20, &status));
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%d", status);
}

/* Waits up to `secs` for pid to be gone; 1 when it is. */
static int wait_gone(long pid, double secs) {
    for (double until = now_s() + secs; now_s() < until; nap_ms(10))
        if (gone(pid)) return 1;
    return gone(pid);
}

Test(cli_run, sigkill_of_vramkit_kills_the_service_and_its_group) {
    char dir[64], pidf[128], pidarg[160];
    tmpdir(dir, sizeof dir);
    snprintf(pidf, sizeof pidf, "%s/pid", dir);
    snprintf(pidarg, sizeof pidarg, "pid=%s", pidf);
    /* the service and its child are reparented to this process when vramkit dies, so they can
       be reaped and their deaths checked */
    cr_assert_eq(prctl(PR_SET_CHILD_SUBREAPER, 1L, 0L, 0L, 0L), 0);
    const char *args[] = {"run", "--strategies", "cpu", "--", SVC, "{strategy}", pidarg,
                          "grandchild=1", NULL};
    bg b = start_bg(dir, args);
    cr_assert(wait_text(b.err, "cpu: ready (line)", 20));
    cr_assert(wait_text(b.out, "service: grandchild ", 5));
    long svc = read_pid(pidf);
    char *out = slurp(b.out);
    long grand = atol(strstr(out, "service: grandchild ") + strlen("service: grandchild "));
    free(out);
    cr_assert(svc > 0 && grand > 0);
    cr_assert(!gone(svc) && !gone(grand));
    kill(b.pid, SIGKILL);
    int status = 0;
    cr_assert(wait_status(b.pid, 10, &status));
    cr_expect(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    cr_assert(wait_status((pid_t)svc, 10, &status), "the service ended and came to us");
    cr_expect(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "killed: %d", status);
    /* the service's own child, in its process group: the guard's kill of the group */
    cr_expect(wait_gone(grand, 10), "the service's child %ld outlived vramkit", grand);
    waitpid((pid_t)grand, NULL, WNOHANG);
}

Test(cli_run, a_service_that_ignores_sigterm_is_killed_after_the_grace) {
    char dir[64], evf[128];
    tmpdir(dir, sizeof dir);
    snprintf(evf, sizeof evf, "%s/events", dir);
    const char *args[] = {"run", "--strategies", "cpu", "--grace", "0.3", "--events", evf, "--",
                          SVC, "{strategy}", "ignore_term=1", "grandchild=1", NULL};
    bg b = start_bg(dir, args);
    cr_assert(wait_text(b.err, "cpu: ready (line)", 20));
    cr_assert(wait_text(b.out, "service: grandchild ", 5));
    char *out = slurp(b.out);
    long grand = atol(strstr(out, "service: grandchild ") + strlen("service: grandchild "));
    free(out);
    double t0 = now_s();
    kill(b.pid, SIGTERM);
    int status = 0;
    cr_assert(wait_status(b.pid, 10, &status), "vramkit ended after SIGTERM and the grace");
    double took = now_s() - t0;
    cr_expect(took >= 0.25 && took < 5, "after the grace: %.2f s", took);
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGKILL, "status %d", status);
    char *o = slurp(b.out), *e = slurp(b.err);
    cr_expect(strstr(o, "service: got SIGTERM"), "%s", o);
    cr_expect(strstr(e, "cpu: still running 0.3 s after SIGTERM: SIGKILL to its process group"), "%s", e);
    cr_expect(strstr(e, "cpu: it was asked to stop; exit 137"), "%s", e);
    free(o);
    free(e);
    cJSON *evs = expect_events(evf, "start,attempt,ready,signal,kill,ended,exit");
    const cJSON *k = cJSON_GetArrayItem(evs, 4);
    cr_expect_str_eq(jstr(k, "after"), "SIGTERM");
    cr_expect_str_eq(jstr(k, "signal"), "SIGKILL");
    cr_expect(fabs(cJSON_GetObjectItem(k, "grace_s")->valuedouble - 0.3) < 1e-9);
    cr_expect_str_eq(jstr(cJSON_GetArrayItem(evs, 5), "outcome"), "timeout");
    cJSON_Delete(evs);
    cr_expect(wait_gone(grand, 5), "its group went with it");
}

/* try's attempts die with vramkit as run's do: the attempt (through the shim) and its group
   (through the guard). */
Test(cli_run, sigkill_of_try_kills_its_attempt_and_its_group) {
    char dir[64], script[512];
    tmpdir(dir, sizeof dir);
    cr_assert_eq(prctl(PR_SET_CHILD_SUBREAPER, 1L, 0L, 0L, 0L), 0);
    snprintf(script, sizeof script, "echo $$ > %s/pid; sleep 60 & echo $! > %s/grand; wait", dir, dir);
    const char *args[] = {"try", "--strategies", "a", "--", "sh", "-c", script, NULL};
    char pf[128], gf[128];
    snprintf(pf, sizeof pf, "%s/grand", dir);
    bg b = start_bg(dir, args);
    long grand = 0, att = 0;
    for (double until = now_s() + 10; now_s() < until && grand <= 0; nap_ms(10)) grand = read_pid(pf);
    snprintf(gf, sizeof gf, "%s/pid", dir);
    att = read_pid(gf);
    cr_assert(att > 0 && grand > 0, "the attempt started: %ld %ld", att, grand);
    kill(b.pid, SIGKILL);
    int status = 0;
    cr_assert(wait_status(b.pid, 10, &status));
    cr_expect(wait_gone(att, 10), "the attempt %ld outlived vramkit try", att);
    cr_expect(wait_gone(grand, 10), "the attempt's child %ld outlived vramkit try", grand);
    waitpid((pid_t)att, NULL, WNOHANG);
    waitpid((pid_t)grand, NULL, WNOHANG);
}

/* --events - among the service's output: every line that holds an event is a whole JSON
   object, also when the service leaves its last line unended or writes one over 64 KiB (issue 29;
   they were glued: "xxxx{\"time\":...}"). The service's bytes all pass through. */
typedef struct partial_case {
    long n;
} partial_case;

ParameterizedTestParameters(cli_run, events_on_stdout_are_json_lines) {
    static partial_case cases[] = {{10}, {70000}};
    return cr_make_param_array(partial_case, cases, 2);
}

ParameterizedTest(partial_case *c, cli_run, events_on_stdout_are_json_lines) {
    char dir[64], part[64];
    tmpdir(dir, sizeof dir);
    snprintf(part, sizeof part, "partial=%ld", c->n);
    const char *args[] = {"run", "--strategies", "cpu", "--events", "-", "--", SVC, "{strategy}", part,
                          "die=exit:3", "die_ms=200", NULL};
    bg b = start_bg(dir, args);
    int status = 0;
    cr_assert(wait_status(b.pid, 20, &status), "vramkit ended with the service");
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 3, "status %d", status);
    char *o = slurp(b.out), *save = NULL;
    long xs = 0;
    int events = 0;
    for (char *line = strtok_r(o, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (strstr(line, "\"event\":") == NULL) { /* the service's own line */
            for (const char *p = line; *p; p++) xs += *p == 'x';
            continue;
        }
        cJSON *j = cJSON_Parse(line);
        cr_expect(line[0] == '{' && cJSON_IsObject(j), "not a JSON line: %.120s", line);
        events += j != NULL;
        cJSON_Delete(j);
    }
    cr_expect_eq(events, 5, "start, attempt, ready, ended, exit");
    cr_expect_eq(xs, c->n, "the service's bytes passed through");
    free(o);
}

/* supervise.h's rule 2 and docs/run.md agree: an exit with code 0 before ready is a service that
   finished, not a failure; the next strategy is not started and vramkit exits 0 (issue 29). */
Test(cli_run, exit_0_before_ready_ends_with_0) {
    char dir[64], evf[128];
    tmpdir(dir, sizeof dir);
    snprintf(evf, sizeof evf, "%s/events", dir);
    const char *args[] = {"run", "--strategies", "fp16,cpu", "--events", evf, "--", "sh", "-c",
                          "echo done {strategy}; exit 0", NULL};
    bg b = start_bg(dir, args);
    int status = 0;
    cr_assert(wait_status(b.pid, 20, &status));
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);
    char *o = slurp(b.out), *e = slurp(b.err);
    cr_expect_str_eq(o, "done fp16\n", "cpu was not started: %s", o);
    cr_expect(strstr(e, "fp16: it exited with code 0; exit 0"), "%s", e);
    free(o);
    free(e);
    cJSON *evs = expect_events(evf, "start,attempt,ended,exit");
    cr_expect_str_eq(jstr(cJSON_GetArrayItem(evs, 3), "why"), "clean_exit");
    cJSON_Delete(evs);
    /* the manual says the same */
    char path[512];
    snprintf(path, sizeof path, "%s/docs/run.md", VRAMKIT_SOURCE_DIR);
    char *doc = slurp(path);
    cr_expect(strstr(doc, "an exit with code 0, ready or not, is a service that finished"), "docs/run.md");
    cr_expect(strstr(doc, "an exit or") == NULL, "docs/run.md still says any exit moves on");
    free(doc);
}

/* ---- options ------------------------------------------------------------------------------- */

Test(cli_run, help) {
    const char *args[] = {"run", "--help", NULL};
    cli_result r = cli_run(args);
    cr_expect_eq(r.exit_code, 0);
    cr_expect_str_eq(r.err, "");
    static const char *opts[] = {"--strategies", "--plan", "--model", "--assume-gpu",
                                 "--ready-regex", "--ready-port", "--ready-file", "--ready-timeout",
                                 "--grace", "--restart", "--degrade", "--backoff", "--backoff-max",
                                 "--stable", "--events", "exit codes:", "VRAMKIT_READY",
                                 "SIGUSR2", "SIGKILL", "{strategy}"};
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++)
        cr_expect(strstr(r.out, opts[i]), "help lacks %s", opts[i]);
    cli_result_free(&r);
}

Test(cli_run, events_file_that_cannot_be_written_is_exit_3) {
    const char *args[] = {"run", "--strategies", "a", "--events", "/nonexistent/dir/ev", "--", SVC,
                          "{strategy}", NULL};
    cli_result r = cli_run(args);
    cr_expect_eq(r.exit_code, 3, "%s", r.err);
    cr_expect_str_eq(r.err, "vramkit: run: --events /nonexistent/dir/ev: cannot open for writing: "
                            "No such file or directory\n");
    cr_expect_str_eq(r.out, "");
    cli_result_free(&r);
}

#define END "\x01"
typedef struct bad_case {
    char args[12][48];
    char needle[96];
} bad_case;

static bad_case bad_cases[] = {
    {{"run", "--strategies", "a", END}, "missing '--' before the command"},
    {{"run", "--", "true", END}, "--strategies, --plan or --model is required"},
    {{"run", "--strategies", "a", "--", END}, "no command after '--'"},
    {{"run", "--strategies", "a", "--", "", END}, "the command after '--' is empty"},
    {{"run", "--strategies", "a", "b", "--", "true", END}, "unexpected argument 'b'"},
    {{"run", "--strategies", "a,,b", "--", "true", END}, "--strategies: item 2 of 'a,,b' is empty"},
    {{"run", "--strategies", "a", "--model", "gpt2", "--", "true", END},
     "give one of --strategies, --plan and --model"},
    {{"run", "--strategies", "a", "--ready-regex", "(", "--", "true", END},
     "--ready-regex: '(' is not a valid extended regular expression"},
    {{"run", "--strategies", "a", "--ready-regex", "", "--", "true", END},
     "--ready-regex: the expression is empty"},
    {{"run", "--strategies", "a", "--ready-regex", "x", "--ready-regex", "y", "--", "true", END},
     "--ready-regex is given twice"},
    {{"run", "--strategies", "a", "--ready-port", "0", "--", "true", END}, "--ready-port"},
    {{"run", "--strategies", "a", "--ready-port", "65536", "--", "true", END}, "--ready-port"},
    {{"run", "--strategies", "a", "--ready-port", "http", "--", "true", END}, "--ready-port"},
    {{"run", "--strategies", "a", "--ready-port", "80", "--ready-port", "81", "--", "true", END},
     "--ready-port is given twice"},
    {{"run", "--strategies", "a", "--ready-file", "", "--", "true", END}, "--ready-file: the path is empty"},
    {{"run", "--strategies", "a", "--ready-timeout", "soon", "--", "true", END},
     "--ready-timeout: 'soon' is not a number of seconds"},
    {{"run", "--strategies", "a", "--ready-timeout", "0", "--", "true", END},
     "--ready-timeout: must be more than 0 seconds"},
    {{"run", "--strategies", "a", "--grace", "-1", "--", "true", END}, "--grace: '-1' is negative"},
    {{"run", "--strategies", "a", "--restart", "-1", "--", "true", END}, "--restart: '-1' is negative"},
    {{"run", "--strategies", "a", "--restart", "many", "--", "true", END}, "--restart"},
    {{"run", "--strategies", "a", "--restart", "1000001", "--", "true", END}, "--restart"},
    {{"run", "--strategies", "a", "--backoff", "0", "--", "true", END},
     "--backoff: must be more than 0 seconds"},
    {{"run", "--strategies", "a", "--backoff", "5", "--backoff-max", "1", "--", "true", END},
     "--backoff is longer than --backoff-max"},
    {{"run", "--strategies", "a", "--stable", "x", "--", "true", END}, "--stable: 'x' is not"},
    {{"run", "--strategies", "a", "--events", "", "--", "true", END}, "--events: the path is empty"},
    {{"run", "--strategies", "a", "--events", "a", "--events", "b", "--", "true", END},
     "--events is given twice"},
    {{"run", "--strategies", "a", "--bogus", "--", "true", END}, "unknown option '--bogus'"},
    {{"run", "--strategies", "a", "--events", "--", "true", END},
     "option '--events' needs a value"},
    {{"run", "--strategies", "a", "--restart", END}, "option '--restart' needs a value"},
    {{"run", "--plan", "/nonexistent/plan.json", "--", "true", END},
     "--plan /nonexistent/plan.json: no such file"},
};

ParameterizedTestParameters(cli_run, bad_input) {
    return cr_make_param_array(bad_case, bad_cases, sizeof bad_cases / sizeof bad_cases[0]);
}

ParameterizedTest(const bad_case *c, cli_run, bad_input) {
    const char *args[13];
    int n = 0;
    while (n < 12 && strcmp(c->args[n], END) != 0) {
        args[n] = c->args[n];
        n++;
    }
    args[n] = NULL;
    cli_result r = cli_run(args);
    cr_expect_eq(r.exit_code, 2, "'%s': exit %d (%s)", c->needle, r.exit_code, r.err);
    cr_expect_str_eq(r.out, "");
    cr_expect_eq(cli_count_lines(r.err), 1, "one line: %s", r.err);
    cr_expect(strncmp(r.err, "vramkit: run: ", 14) == 0, "%s", r.err);
    cr_expect(strstr(r.err, c->needle), "'%s' not in: %s", c->needle, r.err);
    cli_result_free(&r);
}

/* The events carry the service's GPU memory, read through NVML (the stand-in library lists
 * the service's pid with 3 GiB); without NVML they say null and why. */
Test(cli_run, events_carry_the_service_gpu_memory) {
    char dir[64], events[128], pidf[128], pidarg[160], script[512];
    tmpdir(dir, sizeof dir);
    snprintf(events, sizeof events, "%s/ev", dir);
    snprintf(pidf, sizeof pidf, "%s/pid", dir);
    snprintf(pidarg, sizeof pidarg, "pid=%s", pidf);
    snprintf(script, sizeof script, "VRAMKIT_FAKE_NVML=pidfile=%s;pidbytes=3221225472;procs=4194397:5",
             pidf);
    const char *env[] = {"VRAMKIT_NVML_LIBRARY=" VRAMKIT_FAKE_NVML, script, NULL};
    const char *args[] = {"run", "--strategies", "cpu", "--events", events, "--", SVC, "{strategy}",
                          pidarg, "die=exit:0", "die_ms=200", NULL};
    cli_result r = cli_run_env(args, env);
    cr_expect_eq(r.exit_code, 0, "%s", r.err);
    cJSON *evs = read_events(events);
    cr_expect_str_eq(jstr(jfind(evs, "event", "start"), "gpu_memory"), "nvml");
    const cJSON *ready = jfind(evs, "event", "ready");
    const cJSON *ended = jfind(evs, "event", "ended");
    cr_assert(ready && ended);
    cr_expect_eq(jnum(ready, "gpu_bytes"), 3221225472.0, "only the service's group counts");
    cr_expect_eq(jnum(ended, "gpu_peak_bytes"), 3221225472.0);
    cJSON_Delete(evs);
    cli_result_free(&r);

    char events2[128];
    snprintf(events2, sizeof events2, "%s/ev2", dir);
    const char *none[] = {"VRAMKIT_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1", NULL};
    const char *args2[] = {"run", "--strategies", "cpu", "--events", events2, "--", SVC,
                           "{strategy}", "die=exit:0", NULL};
    r = cli_run_env(args2, none);
    cr_expect_eq(r.exit_code, 0, "%s", r.err);
    evs = read_events(events2);
    const cJSON *start = jfind(evs, "event", "start");
    cr_expect(jis_null(start, "gpu_memory"));
    cr_expect(strstr(jstr(start, "gpu_memory_unknown"), "cannot load /nonexistent/libnvidia-ml.so.1"));
    cr_expect(jis_null(jfind(evs, "event", "ended"), "gpu_peak_bytes"));
    cJSON_Delete(evs);
    cli_result_free(&r);
}

/* With --model, a one-GPU strategy has the estimate's high: a service above it is warned
 * about once (stderr and a memory_over event). gpt2 in fp16 is predicted under 2 GiB; the
 * stand-in NVML says the service holds 6 GiB. */
Test(cli_run, memory_above_the_plans_high_is_warned) {
    char dir[64], events[128], pidf[128], pidarg[160], script[512];
    tmpdir(dir, sizeof dir);
    snprintf(events, sizeof events, "%s/ev", dir);
    snprintf(pidf, sizeof pidf, "%s/pid", dir);
    snprintf(pidarg, sizeof pidarg, "pid=%s", pidf);
    snprintf(script, sizeof script, "VRAMKIT_FAKE_NVML=pidfile=%s;pidbytes=6442450944", pidf);
    const char *env[] = {"VRAMKIT_NVML_LIBRARY=" VRAMKIT_FAKE_NVML, script, NULL};
    const char *args[] = {"run", "--model", "gpt2", "--assume-gpu", "8GiB", "--events", events, "--",
                          SVC, "{strategy}", pidarg, "die=exit:0", "die_ms=1500", NULL};
    cli_result r = cli_run_env(args, env);
    cr_expect_eq(r.exit_code, 0, "%s", r.err);
    cr_expect_eq(count_of(r.err, "vramkit: run: warning: fp16 uses 6.00 GiB of GPU memory, more "
                                 "than the plan's predicted high of "),
                 1, "once: %s", r.err);
    cJSON *evs = read_events(events);
    const cJSON *over = jfind(evs, "event", "memory_over");
    cr_assert_not_null(over);
    cr_expect_eq(jnum(over, "gpu_bytes"), 6442450944.0);
    cr_expect(jnum(over, "predicted_high_bytes") > 0 && jnum(over, "predicted_high_bytes") < 6442450944.0);
    cJSON_Delete(evs);
    cli_result_free(&r);
    /* --strategies has no prediction: no warning */
    const char *args2[] = {"run", "--strategies", "fp16", "--", SVC, "{strategy}", pidarg,
                           "die=exit:0", NULL};
    r = cli_run_env(args2, env);
    cr_expect_eq(r.exit_code, 0, "%s", r.err);
    cr_expect(strstr(r.err, "warning") == NULL, "%s", r.err);
    cli_result_free(&r);
}

Test(cli_run, without_nvml_a_plan_run_says_memory_is_not_watched) {
    const char *env[] = {"VRAMKIT_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1", NULL};
    const char *args[] = {"run", "--model", "gpt2", "--assume-gpu", "8GiB", "--", SVC,
                          "{strategy}", "die=exit:0", NULL};
    cli_result r = cli_run_env(args, env);
    cr_expect_eq(r.exit_code, 0, "%s", r.err);
    cr_expect(strstr(r.err, "vramkit: run: the service's GPU memory is not watched against the "
                            "plan: cannot load /nonexistent/libnvidia-ml.so.1"),
              "%s", r.err);
    cli_result_free(&r);
}
