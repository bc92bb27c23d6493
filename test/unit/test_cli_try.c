/* `vramkit try` as a user runs it: the built binary over the test child. A crash-unless-cpu
 * load ends on cpu after two crashes (text, and JSON parsed with cJSON); substitution and
 * the environment; every failing attempt gives exit 1; timeouts; an interrupt stops the
 * running attempt; every kind of bad input is exit 2 with one line naming it; --help. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "cli_run.h"
#include "json_check.h"

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static cJSON *parse_doc(const cli_result *r) {
    cJSON *doc = jparse(r->out);
    cr_assert(cJSON_IsObject(doc));
    return doc;
}

Test(cli_try, crash_unless_cpu_text) {
    const char *args[] = {"try", "--strategies", "fp16,int8,cpu", "--", VRAMKIT_CHILD,
                          "crash-unless-cpu", "{strategy}", NULL};
    cli_result r = cli_run(args);
    cr_expect_eq(r.exit_code, 0, "stderr: %s", r.err);
    cr_expect_str_eq(r.err, "");
    cr_expect_eq(cli_count_lines(r.out), 4, "%s", r.out);
    cr_expect(strstr(r.out, "[1/3] fp16: crash (signal 11 SIGSEGV)"), "%s", r.out);
    cr_expect(strstr(r.out, "[2/3] int8: crash (signal 11 SIGSEGV)"), "%s", r.out);
    cr_expect(strstr(r.out, "stderr: crashing: strategy fp16 is not cpu\n"), "%s", r.out);
    cr_expect(strstr(r.out, "[3/3] cpu: success (exit 0)"), "%s", r.out);
    cr_expect(strstr(r.out, "result: {\"device\":\"cpu\",\"peak_bytes\":0}"), "%s", r.out);
    cr_expect(strstr(r.out, "\nchosen: cpu\n"), "%s", r.out);
    cli_result_free(&r);
}

Test(cli_try, crash_unless_cpu_json) {
    const char *args[] = {"try", "--json", "--strategies", "fp16,int8,cpu", "--", VRAMKIT_CHILD,
                          "crash-unless-cpu", "{strategy}", NULL};
    cli_result r = cli_run(args);
    cr_expect_eq(r.exit_code, 0, "stderr: %s", r.err);
    cJSON *doc = parse_doc(&r);
    cr_expect_str_eq(jstr_or_null(doc, "chosen"), "cpu");
    cr_expect(jis_null(doc, "timeout_s"));
    cr_expect_eq(jnum(doc, "grace_s"), 2.0);
    const cJSON *attempts = cJSON_GetObjectItemCaseSensitive(doc, "attempts");
    cr_assert(cJSON_IsArray(attempts));
    cr_assert_eq(cJSON_GetArraySize(attempts), 3);
    const char *names[3] = {"fp16", "int8", "cpu"};
    for (int i = 0; i < 3; i++) {
        const cJSON *a = cJSON_GetArrayItem(attempts, i);
        cr_expect_str_eq(jstr_or_null(a, "strategy"), names[i]);
        const cJSON *argv = cJSON_GetObjectItemCaseSensitive(a, "argv");
        cr_expect_str_eq(cJSON_GetArrayItem(argv, 2)->valuestring, names[i], "substituted");
        cr_expect(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(a, "seconds")));
        cr_expect(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(a, "timed_out")));
        cr_expect(jis_null(a, "start_error"));
        if (i < 2) {
            cr_expect_str_eq(jstr_or_null(a, "outcome"), "crash");
            cr_expect_str_eq(jstr_or_null(a, "rule"), "crash_signal");
            cr_expect_eq(jnum(a, "signal"), 11);
            cr_expect_str_eq(jstr_or_null(a, "signal_name"), "SIGSEGV");
            cr_expect(jis_null(a, "exit_code"));
            cr_expect(strstr(jstr_or_null(a, "stderr_tail"), "crashing: strategy"));
            cr_expect(jis_null(a, "result"));
            cr_expect_str_eq(jstr_or_null(a, "device"), "cuda:0");
        } else {
            cr_expect_str_eq(jstr_or_null(a, "outcome"), "success");
            cr_expect_eq(jnum(a, "exit_code"), 0);
            cr_expect(jis_null(a, "signal") && jis_null(a, "signal_name"));
            const cJSON *res = cJSON_GetObjectItemCaseSensitive(a, "result");
            cr_assert(cJSON_IsObject(res));
            cr_expect_str_eq(jstr_or_null(res, "device"), "cpu");
            cr_expect_eq(jnum(res, "peak_bytes"), 0);
            cr_expect(jis_null(a, "result_error"));
            cr_expect_str_eq(jstr_or_null(a, "device"), "cpu");
            cr_expect_str_eq(jstr_or_null(a, "dtype"), "float32");
        }
    }
    cJSON_Delete(doc);
    cli_result_free(&r);
}

Test(cli_try, substitution_and_environment) {
    const char *args[] = {"try", "--json", "--strategies", "bf16", "--", VRAMKIT_CHILD, "args",
                          "{strategy}/{device}/{dtype}", "{other} {strategy}{strategy}", "plain",
                          NULL};
    cli_result r = cli_run(args);
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    cJSON *doc = parse_doc(&r);
    const cJSON *a = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "attempts"), 0);
    cr_expect_str_eq(jstr_or_null(a, "stdout_tail"), "bf16/cuda:0/bfloat16\n{other} bf16bf16\nplain\n");
    cJSON_Delete(doc);
    cli_result_free(&r);

    const char *env_args[] = {"try", "--json", "--strategies", "q4_k_m", "--", VRAMKIT_CHILD, "env",
                              NULL};
    r = cli_run(env_args);
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    doc = parse_doc(&r);
    a = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "attempts"), 0);
    const char *out = jstr_or_null(a, "stdout_tail");
    cr_expect(strstr(out, "VRAMKIT_STRATEGY=q4_k_m\n"), "%s", out);
    cr_expect(strstr(out, "VRAMKIT_DEVICE=cuda:0\n"), "unknown names run on cuda:0: %s", out);
    cr_expect(strstr(out, "VRAMKIT_DTYPE=q4_k_m\n"), "and pass through as the dtype: %s", out);
    cJSON_Delete(doc);
    cli_result_free(&r);

    const char *split_args[] = {"try", "--strategies", "gpu+cpu", "--", VRAMKIT_CHILD, "args",
                                "{device} {dtype}", NULL};
    r = cli_run(split_args);
    cr_expect_eq(r.exit_code, 0);
    cli_result_free(&r);
}

Test(cli_try, every_attempt_fails) {
    const char *args[] = {"try", "--strategies", "fp16,int8", "--", VRAMKIT_CHILD, "oom", NULL};
    cli_result r = cli_run(args);
    cr_expect_eq(r.exit_code, 1);
    cr_expect(strstr(r.out, "[1/2] fp16: oom (exit 1; stderr has \"CUDA out of memory\" from PyTorch)"),
              "%s", r.out);
    cr_expect(strstr(r.out, "[2/2] int8: oom"), "%s", r.out);
    cr_expect(strstr(r.out, "chosen: none\n"), "%s", r.out);
    cr_expect_eq(cli_count_lines(r.err), 1, "%s", r.err);
    cr_expect(strstr(r.err, "every strategy failed (fp16: oom, int8: oom)"), "%s", r.err);
    cli_result_free(&r);

    const char *json_args[] = {"try", "--json", "--strategies", "a", "--", VRAMKIT_CHILD, "illegal",
                               NULL};
    r = cli_run(json_args);
    cr_expect_eq(r.exit_code, 1);
    cJSON *doc = parse_doc(&r);
    cr_expect(jis_null(doc, "chosen"));
    const cJSON *a = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "attempts"), 0);
    cr_expect_str_eq(jstr_or_null(a, "outcome"), "cuda_sticky");
    cr_expect_str_eq(jstr_or_null(a, "matched"), "illegal memory access");
    cr_expect_eq(jnum(a, "cuda_code"), 700);
    cJSON_Delete(doc);
    cli_result_free(&r);
}

Test(cli_try, command_not_found) {
    const char *args[] = {"try", "--json", "--strategies", "a,b", "--", "/nonexistent/load", NULL};
    cli_result r = cli_run(args);
    cr_expect_eq(r.exit_code, 1);
    cJSON *doc = parse_doc(&r);
    const cJSON *attempts = cJSON_GetObjectItemCaseSensitive(doc, "attempts");
    cr_expect_eq(cJSON_GetArraySize(attempts), 2);
    const cJSON *a = cJSON_GetArrayItem(attempts, 0);
    cr_expect_str_eq(jstr_or_null(a, "outcome"), "start_failed");
    cr_expect(strstr(jstr_or_null(a, "start_error"), "No such file or directory"));
    cr_expect(jis_null(a, "exit_code"));
    cJSON_Delete(doc);
    cli_result_free(&r);
}

Test(cli_try, malformed_result_is_reported) {
    const char *args[] = {"try", "--json", "--strategies", "a", "--", VRAMKIT_CHILD, "not-object", NULL};
    cli_result r = cli_run(args);
    cr_expect_eq(r.exit_code, 0, "a bad result line does not fail a successful attempt");
    cJSON *doc = parse_doc(&r);
    const cJSON *a = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "attempts"), 0);
    cr_expect(jis_null(a, "result"));
    cr_expect_str_eq(jstr_or_null(a, "result_error"), "VRAMKIT_RESULT line is not an object (it is an array)");
    cJSON_Delete(doc);
    cli_result_free(&r);

    const char *text_args[] = {"try", "--strategies", "a", "--", VRAMKIT_CHILD, "bad-result", NULL};
    r = cli_run(text_args);
    cr_expect(strstr(r.out, "| VRAMKIT_RESULT line is not valid JSON: "), "%s", r.out);
    cli_result_free(&r);
}

Test(cli_try, timeout_then_next_strategy) {
    const char *args[] = {"try", "--json", "--timeout", "0.3", "--grace", "0.3", "--strategies",
                          "slow,fast", "--", VRAMKIT_CHILD, "ignore-term", NULL};
    double t0 = now_s();
    cli_result r = cli_run(args);
    double wall = now_s() - t0;
    cr_expect_eq(r.exit_code, 1);
    cr_expect_lt(wall, 2 * 0.6 + 2.0, "two attempts of timeout + grace took %.2f s", wall);
    cJSON *doc = parse_doc(&r);
    cr_expect_eq(jnum(doc, "timeout_s"), 0.3);
    cr_expect_eq(jnum(doc, "grace_s"), 0.3);
    const cJSON *attempts = cJSON_GetObjectItemCaseSensitive(doc, "attempts");
    cr_assert_eq(cJSON_GetArraySize(attempts), 2);
    for (int i = 0; i < 2; i++) {
        const cJSON *a = cJSON_GetArrayItem(attempts, i);
        cr_expect_str_eq(jstr_or_null(a, "outcome"), "timeout");
        cr_expect(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(a, "timed_out")));
        cr_expect_eq(jnum(a, "signal"), 9, "SIGTERM was ignored, so SIGKILL");
    }
    cJSON_Delete(doc);
    cli_result_free(&r);
}

/* Is a process (not a zombie) running with `marker` in its command line? */
static int marker_running(const char *marker) {
    DIR *d = opendir("/proc");
    struct dirent *e;
    int found = 0;
    if (!d) return 0;
    while (!found && (e = readdir(d)) != NULL) {
        char path[300], buf[4096], stat[512];
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        snprintf(path, sizeof path, "/proc/%s/cmdline", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        size_t n = fread(buf, 1, sizeof buf, f);
        fclose(f);
        int has = 0;
        for (size_t i = 0; i + strlen(marker) <= n && !has; i++)
            has = memcmp(buf + i, marker, strlen(marker)) == 0;
        if (!has) continue;
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        f = fopen(path, "r");
        if (!f) continue;
        size_t m = fread(stat, 1, sizeof stat - 1, f);
        fclose(f);
        stat[m] = '\0';
        const char *p = strrchr(stat, ')');
        found = p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
    }
    closedir(d);
    return found;
}

Test(cli_try, interrupt_stops_the_attempt) {
    char marker[64];
    snprintf(marker, sizeof marker, "vramkit-test-marker-%d", (int)getpid());
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, 1);
        dup2(devnull, 2);
        execl(VRAMKIT_EXE, VRAMKIT_EXE, "try", "--strategies", "a,b", "--", VRAMKIT_CHILD, "sleep",
              "30", marker, (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 400 && !marker_running(marker); i++) usleep(5000);
    cr_assert(marker_running(marker), "the attempt did not start");
    kill(pid, SIGINT);
    int status = 0;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_expect(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT, "vramkit dies of SIGINT (status %d)",
              status);
    for (int i = 0; i < 200 && marker_running(marker); i++) usleep(5000);
    cr_expect(!marker_running(marker), "the attempt outlived vramkit");
}

/* ---- bad input: exit 2, nothing on stdout, one line on stderr that names the input ---------- */

/* Strings live inside the struct: parameters are copied into the worker process, where a
 * pointer into the runner's memory means nothing. The argument list ends at the first
 * END ("" is a real, empty argument). */
#define END "\x01"
typedef struct bad_case {
    char args[12][160];
    char needle[200];
} bad_case;

#define CHILD VRAMKIT_CHILD
static const bad_case bad_cases[] = {
    {{"try", "--strategies", "a", CHILD, "exit", END}, "unexpected argument '" CHILD "'"},
    {{"try", "--strategies", "a", END}, "missing '--' before the command"},
    {{"try", "--strategies", "a", "--", END}, "no command after '--'"},
    {{"try", "--strategies", "a", "--", "", END}, "the command after '--' is empty"},
    {{"try", "--", CHILD, "exit", END}, "--strategies, --plan or --model is required"},
    {{"try", "--strategies", "", "--", CHILD, END}, "--strategies: the list is empty"},
    {{"try", "--strategies", "fp16,,cpu", "--", CHILD, END}, "item 2 of 'fp16,,cpu' is empty"},
    {{"try", "--strategies", ",", "--", CHILD, END}, "item 1 of ',' is empty"},
    {{"try", "--strategies", "fp16,", "--", CHILD, END}, "item 2 of 'fp16,' is empty"},
    {{"try", "--strategies", "fp 16", "--", CHILD, END}, "'fp 16' (item 1) has a character other than"},
    {{"try", "--strategies", "a", "--strategies", "b", "--", CHILD, END}, "--strategies is given twice"},
    {{"try", "--strategies", "a", "--timeout", "abc", "--", CHILD, END},
     "--timeout: 'abc' is not a number of seconds"},
    {{"try", "--strategies", "a", "--timeout", "-1", "--", CHILD, END}, "--timeout: '-1' is negative"},
    {{"try", "--strategies", "a", "--timeout", "0", "--", CHILD, END},
     "--timeout: must be more than 0 seconds"},
    {{"try", "--strategies", "a", "--timeout", "0.000", "--", CHILD, END},
     "--timeout: must be more than 0 seconds"},
    {{"try", "--strategies", "a", "--timeout", "1e3", "--", CHILD, END},
     "--timeout: '1e3' is not a number of seconds"},
    {{"try", "--strategies", "a", "--timeout", "nan", "--", CHILD, END},
     "--timeout: 'nan' is not a number"},
    {{"try", "--strategies", "a", "--timeout", "1.", "--", CHILD, END}, "--timeout: '1.' is not"},
    {{"try", "--strategies", "a", "--timeout", "", "--", CHILD, END}, "--timeout: '' is not"},
    {{"try", "--strategies", "a", "--timeout", "2000000", "--", CHILD, END},
     "--timeout: '2000000' is more than 1000000 seconds"},
    {{"try", "--strategies", "a", "--grace", "soon", "--", CHILD, END}, "--grace: 'soon' is not"},
    {{"try", "--strategies", "a", "--grace", "0", "--", CHILD, END}, "--grace: must be more than 0"},
    {{"try", "--strategies", "a", "--bogus", "--", CHILD, END}, "unknown option '--bogus'"},
    {{"try", "--strategies", "a", "--timeout", "--", CHILD, END}, "option '--timeout' needs a value"},
    {{"try", "--strategies", "a", "--plan", "p.json", "--", CHILD, END},
     "give one of --strategies, --plan and --model"},
    {{"try", "--plan", "a.json", "--model", "gpt2", "--", CHILD, END},
     "give one of --strategies, --plan and --model"},
    {{"try", "--plan", "a.json", "--plan", "b.json", "--", CHILD, END}, "--plan is given twice"},
    {{"try", "--model", "gpt2", "--model", "gpt2", "--", CHILD, END}, "--model is given twice"},
    {{"try", "--strategies", "a", "--assume-gpu", "8GiB", "--", CHILD, END},
     "--assume-gpu goes with --model"},
    {{"try", "--model", "gpt2", "--assume-gpu", "8XB", "--", CHILD, END}, "8XB"},
    {{"try", "--model", "no-such-model", "--", CHILD, END}, "no-such-model"},
    {{"try", "--plan", "/nonexistent/plan.json", "--", CHILD, END},
     "--plan /nonexistent/plan.json: no such file"},
    {{"try", "--plan", "/etc/hostname", "--", CHILD, END}, "--plan /etc/hostname: not valid JSON"},
};

ParameterizedTestParameters(cli_try, bad_input) {
    return cr_make_param_array(bad_case, bad_cases, sizeof bad_cases / sizeof bad_cases[0]);
}

ParameterizedTest(const bad_case *c, cli_try, bad_input) {
    const char *args[13];
    int n = 0;
    while (n < 12 && strcmp(c->args[n], END) != 0) {
        args[n] = c->args[n];
        n++;
    }
    args[n] = NULL;
    cli_result r = cli_run(args);
    cr_expect_eq(r.exit_code, 2, "'%s': exit %d", c->needle, r.exit_code);
    cr_expect_str_eq(r.out, "");
    cr_expect_eq(cli_count_lines(r.err), 1, "one line: %s", r.err);
    cr_expect(strncmp(r.err, "vramkit: try: ", 14) == 0, "%s", r.err);
    cr_expect(strstr(r.err, c->needle), "'%s' not in: %s", c->needle, r.err);
    cli_result_free(&r);
}

Test(cli_try, too_many_strategies) {
    char list[400] = "s";
    for (int i = 1; i < 65; i++) strcat(list, ",s");
    const char *args[] = {"try", "--strategies", list, "--", VRAMKIT_CHILD, NULL};
    cli_result r = cli_run(args);
    cr_expect_eq(r.exit_code, 2);
    cr_expect(strstr(r.err, "more than 64 strategies"), "%s", r.err);
    cli_result_free(&r);
    char longname[80];
    memset(longname, 'x', 65);
    longname[65] = '\0';
    const char *args2[] = {"try", "--strategies", longname, "--", VRAMKIT_CHILD, NULL};
    r = cli_run(args2);
    cr_expect_eq(r.exit_code, 2);
    cr_expect(strstr(r.err, "is longer than 64 characters"), "%s", r.err);
    cli_result_free(&r);
}

Test(cli_try, help) {
    const char *args[] = {"try", "--help", NULL};
    cli_result r = cli_run(args);
    cr_expect_eq(r.exit_code, 0);
    const char *want[] = {"--strategies LIST", "--timeout SECONDS", "--grace SECONDS", "--json",
                          "{strategy}", "{device}", "{dtype}", "VRAMKIT_STRATEGY", "VRAMKIT_DEVICE",
                          "VRAMKIT_DTYPE", "cuda_sticky", "not_supported", "start_failed", "crash",
                          "oom", "timeout", "exit codes: 0", "VRAMKIT_RESULT", "fp16 cuda:0 float16"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        cr_expect(strstr(r.out, want[i]), "--help lacks '%s'", want[i]);
    const char *plan_words[] = {"--plan FILE", "--model MODEL", "--assume-gpu SPEC",
                                "skipped NAME: why", "cuda:N for GPU N"};
    for (size_t i = 0; i < sizeof plan_words / sizeof plan_words[0]; i++)
        cr_expect(strstr(r.out, plan_words[i]), "--help lacks '%s'", plan_words[i]);
    cli_result_free(&r);
    const char *top[] = {"--help", NULL};
    r = cli_run(top);
    cr_expect(strstr(r.out, "  try "), "vramkit --help lists try: %s", r.out);
    cli_result_free(&r);
}

/* ---- strategies from a plan (--plan FILE, --model MODEL) ---------------------------------- */

/* Writes `text` to a file named `name` in the build tree; returns its path (static). */
static const char *write_plan(const char *name, const char *text) {
    static char path[4][512];
    static int next;
    char *p = path[next++ % 4];
    snprintf(p, sizeof path[0], "%s/test_cli_try_%s.json", VRAMKIT_BINARY_DIR, name);
    FILE *f = fopen(p, "w");
    cr_assert_not_null(f, "cannot write %s", p);
    fputs(text, f);
    cr_assert_eq(fclose(f), 0);
    return p;
}

/* A plan as vramkit plan saves it: Llama-3-8B on one 8 GiB GPU with 64 GiB of host memory.
 * fp16 (16 GB) and int8 (8.5 GiB) do not fit in 7.75 GiB; multi_gpu needs two GPUs; int4,
 * gpu_cpu and cpu fit. */
Test(cli_try, saved_plan_skips_what_does_not_fit) {
    const char *path = write_plan("saved", "");
    const char *plan[] = {"plan", "--model", "Llama-3-8B", "--assume-gpu", "8GiB",
                          "--host-memory", "64GiB", "--save", path, NULL};
    cli_result r = cli_run(plan);
    cr_assert_eq(r.exit_code, 0, "plan: %s", r.err);
    cli_result_free(&r);
    const char *args[] = {"try", "--plan", path, "--", VRAMKIT_CHILD, "crash-unless", "gpu_cpu",
                          "{strategy}", NULL};
    r = cli_run(args);
    cr_expect_eq(r.exit_code, 0, "stderr: %s", r.err);
    cr_expect_eq(cli_count_lines(r.out), 7, "%s", r.out);
    cr_expect(strncmp(r.out, "skipped fp16: needs ", 20) == 0, "%s", r.out);
    cr_expect(strstr(r.out, "\nskipped int8: needs "), "%s", r.out);
    cr_expect(strstr(r.out, "\nskipped multi_gpu: a split over GPUs needs two GPUs"), "%s", r.out);
    cr_expect(strstr(r.out, "\nskipped experts_cpu: the model has no routed experts"), "%s", r.out);
    cr_expect(strstr(r.out, "\n[1/3] int4: crash (signal 11 SIGSEGV)"), "%s", r.out);
    cr_expect(strstr(r.out, "\n[2/3] gpu_cpu: success (exit 0)"), "%s", r.out);
    cr_expect(strstr(r.out, "\nchosen: gpu_cpu\n"), "%s", r.out);
    cr_expect_null(strstr(r.out, "[3/3]"), "cpu is not tried after a success: %s", r.out);
    cli_result_free(&r);
}

/* The plan's device and format become {device} and {dtype}: a hand-written plan. */
Test(cli_try, plan_devices_and_formats) {
    const char *path = write_plan("devices",
        "{\"version\": 1, \"strategies\": ["
        "{\"name\": \"bf16\", \"format\": \"bf16\", \"devices\": [\"gpu1\"], \"fits\": true},"
        "{\"name\": \"int8\", \"format\": \"int8\", \"devices\": [\"gpu0\"], \"fits\": false,"
        " \"reason_text\": \"too big for the test\"},"
        "{\"name\": \"gpu_cpu\", \"format\": \"f16\", \"devices\": [\"gpu0\", \"cpu\"], \"fits\": true},"
        "{\"name\": \"int4\", \"format\": \"nf4\", \"devices\": [\"gpu12\"], \"fits\": true},"
        "{\"name\": \"cpu\", \"format\": \"f32\", \"devices\": [\"cpu\"], \"fits\": true}]}");
    const char *args[] = {"try", "--json", "--plan", path, "--", VRAMKIT_CHILD, "crash-unless",
                          "cpu/float32", "{device}/{dtype}", NULL};
    cli_result r = cli_run(args);
    cr_expect_eq(r.exit_code, 0, "stderr: %s", r.err);
    cJSON *doc = parse_doc(&r);
    const cJSON *src = cJSON_GetObjectItemCaseSensitive(doc, "source");
    cr_expect_str_eq(jstr_or_null(src, "kind"), "plan");
    cr_expect_str_eq(jstr_or_null(src, "value"), path);
    const cJSON *skipped = cJSON_GetObjectItemCaseSensitive(doc, "skipped");
    cr_assert_eq(cJSON_GetArraySize(skipped), 1);
    cr_expect_str_eq(jstr_or_null(cJSON_GetArrayItem(skipped, 0), "strategy"), "int8");
    cr_expect_str_eq(jstr_or_null(cJSON_GetArrayItem(skipped, 0), "reason"), "too big for the test");
    const cJSON *attempts = cJSON_GetObjectItemCaseSensitive(doc, "attempts");
    cr_assert_eq(cJSON_GetArraySize(attempts), 4);
    const char *want[4][3] = {{"bf16", "cuda:1", "bfloat16"}, {"gpu_cpu", "auto", "float16"},
                              {"int4", "cuda:12", "nf4"}, {"cpu", "cpu", "float32"}};
    for (int i = 0; i < 4; i++) {
        const cJSON *a = cJSON_GetArrayItem(attempts, i);
        char arg[64];
        cr_expect_str_eq(jstr_or_null(a, "strategy"), want[i][0]);
        cr_expect_str_eq(jstr_or_null(a, "device"), want[i][1]);
        cr_expect_str_eq(jstr_or_null(a, "dtype"), want[i][2]);
        snprintf(arg, sizeof arg, "%s/%s", want[i][1], want[i][2]);
        cr_expect_str_eq(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(a, "argv"), 3)->valuestring,
                         arg);
    }
    cr_expect_str_eq(jstr_or_null(doc, "chosen"), "cpu");
    cJSON_Delete(doc);
    cli_result_free(&r);
}

/* --model plans now, as vramkit plan --model would: on an 8 GiB GPU Llama-3-8B starts at
 * int4 (NF4) on cuda:0, and the environment says so. */
Test(cli_try, model_plans_the_chain) {
    const char *args[] = {"try", "--model", "Llama-3-8B", "--assume-gpu", "8GiB", "--json", "--",
                          VRAMKIT_CHILD, "env", NULL};
    cli_result r = cli_run(args);
    cr_expect_eq(r.exit_code, 0, "stderr: %s", r.err);
    cJSON *doc = parse_doc(&r);
    const cJSON *src = cJSON_GetObjectItemCaseSensitive(doc, "source");
    cr_expect_str_eq(jstr_or_null(src, "kind"), "model");
    cr_expect_str_eq(jstr_or_null(src, "value"), "Llama-3-8B");
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(doc, "strategies");
    cr_assert(cJSON_GetArraySize(list) >= 2, "int4 and gpu_cpu fit at least");
    cr_expect_str_eq(cJSON_GetArrayItem(list, 0)->valuestring, "int4");
    cr_expect_str_eq(cJSON_GetArrayItem(list, 1)->valuestring, "gpu_cpu");
    const cJSON *skipped = cJSON_GetObjectItemCaseSensitive(doc, "skipped");
    cr_expect_str_eq(jstr_or_null(cJSON_GetArrayItem(skipped, 0), "strategy"), "fp16");
    cr_expect_str_eq(jstr_or_null(cJSON_GetArrayItem(skipped, 1), "strategy"), "int8");
    const cJSON *a = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "attempts"), 0);
    cr_expect(strstr(jstr_or_null(a, "stdout_tail"),
                     "VRAMKIT_STRATEGY=int4\nVRAMKIT_DEVICE=cuda:0\nVRAMKIT_DTYPE=nf4\n"),
              "%s", jstr_or_null(a, "stdout_tail"));
    cr_expect_str_eq(jstr_or_null(doc, "chosen"), "int4");
    cJSON_Delete(doc);
    cli_result_free(&r);
}

/* Nothing in the plan fits: nothing is run, exit 1 with one line. */
Test(cli_try, plan_where_nothing_fits) {
    const char *path = write_plan("nofit",
        "{\"version\": 1, \"strategies\": [{\"name\": \"fp16\", \"format\": \"f16\","
        " \"devices\": [\"gpu0\"], \"fits\": false}, {\"name\": \"cpu\", \"format\": \"f32\","
        " \"devices\": [\"cpu\"], \"fits\": false}]}");
    const char *args[] = {"try", "--plan", path, "--", VRAMKIT_CHILD, "exit", "0", NULL};
    cli_result r = cli_run(args);
    cr_expect_eq(r.exit_code, 1, "stderr: %s", r.err);
    cr_expect_str_empty(r.out);
    cr_expect_eq(cli_count_lines(r.err), 1, "%s", r.err);
    cr_expect(strstr(r.err, "none of the plan's 2 strategies fits: nothing to try"), "%s", r.err);
    cli_result_free(&r);
}

/* Plan files that are not plans: exit 2, one line naming the file and what is wrong. */
Test(cli_try, malformed_plans) {
    static const struct {
        const char *text, *needle;
    } cases[] = {
        {"[1, 2]", "not a vramkit plan of version 1"},
        {"{\"version\": 2, \"strategies\": []}", "not a vramkit plan of version 1"},
        {"{\"version\": 1}", "the plan has no \"strategies\" list"},
        {"{\"version\": 1, \"strategies\": [], \"placement\": []}", "a plan of components"},
        {"{\"version\": 1, \"strategies\": [{\"fits\": true}]}", "strategy 1 has no \"name\" string"},
        {"{\"version\": 1, \"strategies\": [{\"name\": \"a b\", \"fits\": true}]}",
         "strategy 1 is named 'a b', not a strategy vramkit plans"},
        /* a plan is data: a name outside the vocabulary is refused by its name (issue 29) */
        {"{\"version\": 1, \"strategies\": [{\"name\": \"$(touch${IFS}/tmp/x)\", \"fits\": true}]}",
         "strategy 1 is named '$(touch${IFS}/tmp/x)', not a strategy vramkit plans"},
        {"{\"version\": 1, \"strategies\": [{\"name\": \"q4_k_m\", \"fits\": true}]}",
         "strategy 1 is named 'q4_k_m', not a strategy vramkit plans"},
        {"{\"version\": 1, \"strategies\": [{\"name\": \"fp16\", \"fits\": 1}]}",
         "strategy 1 (fp16) has no \"fits\": true or false"},
        {"{\"version\": 1, \"strategies\": [{\"name\": \"fp16\", \"fits\": true}]}",
         "strategy 1 (fp16) has no \"devices\" list"},
        {"{\"version\": 1, \"strategies\": [{\"name\": \"fp16\", \"fits\": true, \"devices\": []}]}",
         "strategy 1 (fp16) fits but lists no device"},
        {"{\"version\": 1, \"strategies\": [{\"name\": \"int4\", \"fits\": false},"
         " {\"name\": \"fp16\", \"fits\": true, \"devices\": [\"tpu0\"]}]}",
         "strategy 2 (fp16) names a device that is not cpu or gpu0..gpu15"},
        {"{\"version\": 1, \"strategies\": [{\"name\": \"fp16\", \"fits\": true, \"devices\": [\"gpu16\"]}]}",
         "names a device that is not"},
        {"{\"version\": 1, \"strategies\": [{\"name\": \"fp16\", \"fits\": true, \"devices\": [\"gpu-1\"]}]}",
         "names a device that is not"},
        {"{\"version\": 1, \"strategies\": [{\"name\": \"fp16\", \"fits\": true, \"devices\": [\"gpu0x\"]}]}",
         "names a device that is not"},
        {"{\"version\": 1, \"strategies\": [{\"name\": \"fp16\", \"fits\": true, \"devices\": [7]}]}",
         "names a device that is not"},
        {"{\"version\": 1, \"strategies\": ", "not valid JSON (at byte"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *path = write_plan("bad", cases[i].text);
        const char *args[] = {"try", "--plan", path, "--", VRAMKIT_CHILD, "exit", "0", NULL};
        cli_result r = cli_run(args);
        cr_expect_eq(r.exit_code, 2, "case %zu: exit %d (%s)", i, r.exit_code, r.err);
        cr_expect_str_empty(r.out, "case %zu: nothing run", i);
        cr_expect_eq(cli_count_lines(r.err), 1, "case %zu: %s", i, r.err);
        cr_expect(strncmp(r.err, "vramkit: try: --plan ", 21) == 0, "case %zu: %s", i, r.err);
        cr_expect(strstr(r.err, cases[i].needle), "case %zu: '%s' not in %s", i, cases[i].needle,
                  r.err);
        cli_result_free(&r);
    }
}

/* A crafted plan cannot run code through {strategy} in a shell command (issue 29): its name is
   refused before anything runs, and so is such a name in --strategies. */
Test(cli_try, a_plan_is_data_not_code) {
    char dir[] = "/tmp/vramkit-plancode-XXXXXX", doc[512], mark[128], cmd[256];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(mark, sizeof mark, "%s/ran", dir);
    snprintf(doc, sizeof doc,
             "{\"version\": 1, \"strategies\": [{\"name\": \"$(touch${IFS}%s)\", \"fits\": true, "
             "\"devices\": [\"cpu\"]}]}", mark);
    const char *path = write_plan("code", doc);
    snprintf(cmd, sizeof cmd, "echo {strategy}");
    const char *args[] = {"try", "--plan", path, "--", "sh", "-c", cmd, NULL};
    cli_result r = cli_run(args);
    cr_expect_eq(r.exit_code, 2, "%s", r.err);
    cr_expect(strstr(r.err, "not a strategy vramkit plans"), "%s", r.err);
    cr_expect_neq(access(mark, F_OK), 0, "the plan's text ran as code");
    cli_result_free(&r);
    const char *bad[] = {"try", "--strategies", "fp16,$(id)", "--", "sh", "-c", cmd, NULL};
    r = cli_run(bad);
    cr_expect_eq(r.exit_code, 2, "%s", r.err);
    cr_expect(strstr(r.err, "--strategies: '$(id)' (item 2) has a character other than letters, "
                            "digits and _ . + - :"), "%s", r.err);
    cr_expect_str_empty(r.out);
    cli_result_free(&r);
    rmdir(dir);
}

/* 1 while pid runs (a zombie does not count). */
static int pid_alive(int pid) {
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');
    return p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

/* An attempt that leaves a process outside its group (setsid, and that one's child): try
   ends both before the next attempt, says so, and counts them in JSON. */
Test(cli_try, processes_that_left_the_group_are_ended) {
    const char *args[] = {"try", "--strategies", "fp16", "--", VRAMKIT_CHILD, "escape", "2", NULL};
    cli_result r = cli_run(args);
    cr_expect_eq(r.exit_code, 0, "stderr: %s", r.err);
    cr_expect(strstr(r.out, "[1/1] fp16: success (exit 0)"), "%s", r.out);
    cr_expect(strstr(r.out, " | ended 2 processes it left outside its process group"), "%s", r.out);
    cli_result_free(&r);

    const char *jargs[] = {"try", "--json", "--strategies", "fp16", "--", VRAMKIT_CHILD,
                           "escape", NULL};
    r = cli_run(jargs);
    cr_expect_eq(r.exit_code, 0, "stderr: %s", r.err);
    cJSON *doc = parse_doc(&r);
    const cJSON *a = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "attempts"), 0);
    cr_assert_not_null(a);
    cr_expect_eq(jnum(a, "escaped"), 1.0);
    int g = 0;
    const char *tail = jstr_or_null(a, "stdout_tail");
    cr_assert(tail && sscanf(tail, "escaped %d", &g) == 1, "%s", tail ? tail : "(null)");
    cr_expect(!pid_alive(g), "the escaped process %d still runs", g);
    cJSON_Delete(doc);
    cli_result_free(&r);
}
