/* `vramkit watch`: the built binary over the host's memory (--host) in each format, the
 * no-GPU answer without --host, every bad option (exit 2, one line), --help, a clean stop
 * on SIGINT; and the same command run in process over the mock with scripted free memory,
 * so the warnings inline (text line, CSV row, JSON line) are checked to the byte. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli_run.h"
#include "cuda/cuda_device.h"
#include "json_check.h"
#include "mock_device.h"

#define MB UINT64_C(1000000)
#define GB UINT64_C(1000000000)

static void expect_clean_success(const cli_result *r) {
    cr_assert_eq(r->exit_code, 0, "exit %d, stderr: %s", r->exit_code, r->err);
    cr_expect_str_empty(r->err);
}

/* Line i (0-based) of text, copied into buf; returns buf, or NULL past the end. */
static char *nth_line(const char *text, int i, char *buf, size_t cap) {
    const char *p = text;
    for (int k = 0; k < i; k++) {
        p = strchr(p, '\n');
        if (!p) return NULL;
        p++;
    }
    if (*p == '\0') return NULL;
    const char *e = strchr(p, '\n');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    if (n >= cap) n = cap - 1;
    memcpy(buf, p, n);
    buf[n] = '\0';
    return buf;
}

/* Splits one CSV line (RFC 4180 quoting) into at most max fields; returns the count. */
static int csv_split(const char *line, char fields[][512], int max) {
    int n = 0;
    const char *p = line;
    for (;;) {
        size_t k = 0;
        cr_assert_lt(n, max, "too many fields: %s", line);
        if (*p == '"') {
            p++;
            while (*p && !(*p == '"' && p[1] != '"')) {
                if (*p == '"') p++;
                if (k < 511) fields[n][k++] = *p;
                p++;
            }
            cr_assert_eq(*p, '"', "unterminated quote: %s", line);
            p++;
        } else {
            while (*p && *p != ',') {
                if (k < 511) fields[n][k++] = *p;
                p++;
            }
        }
        fields[n++][k] = '\0';
        if (*p != ',') break;
        p++;
    }
    cr_assert_eq(*p, '\0', "junk after a field: %s", line);
    return n;
}

static const char *const CSV_HEADER =
    "type,elapsed_ms,timestamp,device,name,used_bytes,free_bytes,total_bytes,used_percent,"
    "epoch,epoch_mark,warning,severity,message,recommendation";

/* ---- the binary over the host's memory ------------------------------------------------ */

Test(cli_watch, host_text_two_samples) {
    /* --limit 100: never reached (MemAvailable > 0), so no warning line however full the
     * machine is */
    const char *args[] = {"watch", "--host", "--count", "2", "--interval", "10", "--limit", "100",
                          NULL};
    cli_result r = cli_run(args);
    expect_clean_success(&r);
    char line[512];
    cr_assert_eq(cli_count_lines(r.out), 3, "header + 2 samples:\n%s", r.out);
    nth_line(r.out, 0, line, sizeof line);
    const char *head = "vramkit watch: 1 device (host backend: host0 host (CPU memory)), "
                       "every 10 ms, limit 100%; stops after the count";
    cr_expect_str_eq(line, head);
    for (int i = 1; i <= 2; i++) {
        nth_line(r.out, i, line, sizeof line);
        double t = -1;
        char rest[480];
        cr_assert_eq(sscanf(line, "%lfs  %479[^\n]", &t, rest), 2, "%s", line);
        cr_expect_geq(t, 0.0);
        cr_expect(strncmp(rest, "host0 used ", 11) == 0, "%s", line);
        cr_expect(strstr(rest, ", free ") != NULL, "%s", line);
        cr_expect(strstr(rest, "reserved") == NULL, "watch reserves nothing: %s", line);
    }
    cli_result_free(&r);
}

Test(cli_watch, host_csv_header_once_and_two_rows) {
    const char *args[] = {"watch", "--host", "--count", "2", "--interval", "10", "--csv",
                          "--limit", "100%", NULL};
    cli_result r = cli_run(args);
    expect_clean_success(&r);
    char line[1024], f[16][512];
    cr_assert_eq(cli_count_lines(r.out), 3, "%s", r.out);
    cr_expect_str_eq(nth_line(r.out, 0, line, sizeof line), CSV_HEADER);
    cr_expect(strstr(r.out + 1, "type,") == NULL, "the header appears once");
    for (int i = 1; i <= 2; i++) {
        nth_line(r.out, i, line, sizeof line);
        cr_assert_eq(csv_split(line, f, 16), 15, "%s", line);
        cr_expect_str_eq(f[0], "sample");
        cr_expect_str_eq(f[3], "0");
        cr_expect_str_eq(f[4], "host (CPU memory)");
        unsigned long long used = strtoull(f[5], NULL, 10), fr = strtoull(f[6], NULL, 10),
                           total = strtoull(f[7], NULL, 10);
        cr_expect_gt(total, 0u);
        cr_expect_eq(used + fr, total, "%s", line);
        cr_expect_eq(strlen(f[2]), 24u, "timestamp %s", f[2]); /* 2024-05-01T12:00:00.123Z */
        cr_expect_eq(f[2][23], 'Z');
        cr_expect_str_eq(f[9], "0");
        cr_expect_str_eq(f[10], "0");
        for (int k = 11; k < 15; k++) cr_expect_str_empty(f[k]);
    }
    cli_result_free(&r);
}

Test(cli_watch, host_json_lines_parse) {
    const char *args[] = {"watch", "--host", "--count", "2", "--interval", "10", "--json",
                          "--limit", "100", NULL};
    cli_result r = cli_run(args);
    expect_clean_success(&r);
    char line[1024];
    cr_assert_eq(cli_count_lines(r.out), 2, "%s", r.out);
    double prev = -1;
    for (int i = 0; i < 2; i++) {
        cJSON *o = jparse(nth_line(r.out, i, line, sizeof line));
        cr_expect_str_eq(jstr(o, "type"), "sample");
        cr_expect_str_eq(jstr(o, "name"), "host (CPU memory)");
        cr_expect_eq(jnum(o, "device"), 0);
        double used = jnum(o, "used_bytes"), fr = jnum(o, "free_bytes"),
               total = jnum(o, "total_bytes");
        cr_expect_gt(total, 0);
        cr_expect_eq(used + fr, total);
        cr_expect_lt(fabs(jnum(o, "used_percent") - used * 100.0 / total), 1e-9);
        cr_expect_geq(jnum(o, "elapsed_ms"), prev);
        prev = jnum(o, "elapsed_ms");
        cr_expect(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(o, "epoch_mark")));
        cr_expect_eq(strlen(jstr(o, "timestamp")), 24u);
        cJSON_Delete(o);
    }
    cr_expect_geq(prev, 10.0, "the second sample comes an interval later");
    cli_result_free(&r);
}

Test(cli_watch, host_epochs_mark_samples) {
    const char *args[] = {"watch", "--host", "--count", "3", "--interval", "1", "--json",
                          "--epoch-every", "2", NULL};
    cli_result r = cli_run(args);
    expect_clean_success(&r);
    char line[1024];
    static const int marks[3] = {1, 0, 1}, epochs[3] = {0, 1, 1};
    int row = 0;
    for (int i = 0; nth_line(r.out, i, line, sizeof line); i++) {
        cJSON *o = jparse(line);
        if (strcmp(jstr(o, "type"), "sample") == 0) {
            cr_assert_lt(row, 3);
            cr_expect_eq(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "epoch_mark")),
                         marks[row], "row %d", row);
            cr_expect_eq(jnum(o, "epoch"), epochs[row], "row %d", row);
            row++;
        }
        cJSON_Delete(o);
    }
    cr_expect_eq(row, 3);
    cli_result_free(&r);
}

/* ---- no GPU, bad input, help ------------------------------------------------------------ */

Test(cli_watch, no_gpu_without_host_exits_3_with_one_line) {
    const char *args[] = {"watch", "--count", "1", "--interval", "10", NULL};
    cli_result r = cli_run(args);
    if (r.exit_code == 0) {
        cli_result_free(&r);
        cr_skip_test("a GPU is present: watch ran");
    }
    cr_expect_eq(r.exit_code, 3, "exit %d: %s", r.exit_code, r.err);
    cr_expect_eq(cli_count_lines(r.err), 1, "%s", r.err);
    cr_expect(strstr(r.err, "nothing to watch; --host watches the host's memory") != NULL, "%s",
              r.err);
    cr_expect_str_empty(r.out, "no partial output");
    if (!vram_cuda_built())
        cr_expect_str_eq(r.err, "vramkit: watch: this vramkit was built without CUDA: nothing "
                                "to watch; --host watches the host's memory\n");
    else if (access("/proc/driver/nvidia", F_OK) != 0)
        cr_expect_str_eq(r.err, "vramkit: watch: no NVIDIA driver: nothing to watch; --host "
                                "watches the host's memory\n");
    cli_result_free(&r);
}

struct bad_case {
    char args[10][40];
    char needle[80];
};

ParameterizedTestParameters(cli_watch, bad_options) {
    static struct bad_case cases[] = {
        {{"watch", "--host", "--interval", "0", ""}, "--interval: '0' is not a whole number"},
        {{"watch", "--host", "--interval", "abc", ""}, "--interval: 'abc'"},
        {{"watch", "--host", "--interval", "-5", ""}, "--interval: '-5' is negative"},
        {{"watch", "--host", "--interval", "86400001", ""}, "--interval: '86400001'"},
        {{"watch", "--host", "--interval", ""}, "'--interval' needs a value"},
        {{"watch", "--host", "--count", "0", ""}, "--count: '0'"},
        {{"watch", "--host", "--count", "1.5", ""}, "--count: '1.5'"},
        {{"watch", "--host", "--csv", "--json", ""}, "give --csv or --json, not both"},
        {{"watch", "--host", "--limit", "0", ""}, "--limit: '0' is not a percentage"},
        {{"watch", "--host", "--limit", "101", ""}, "--limit: '101'"},
        {{"watch", "--host", "--limit", "-5", ""}, "--limit: '-5'"},
        {{"watch", "--host", "--limit", "ninety", ""}, "--limit: 'ninety'"},
        {{"watch", "--host", "--limit", "90%x", ""}, "--limit: '90%x'"},
        {{"watch", "--host", "--leak-threshold", "0", ""}, "--leak-threshold: must be more"},
        {{"watch", "--host", "--leak-threshold", "12XB", ""}, "--leak-threshold: '12XB'"},
        {{"watch", "--host", "--leak-threshold", "-1MB", ""}, "--leak-threshold: '-1MB' is neg"},
        {{"watch", "--host", "--epoch-every", "0", ""}, "--epoch-every: '0'"},
        {{"watch", "--host", "--device", "-1", ""}, "--device: '-1' is negative"},
        {{"watch", "--host", "--device", "64", ""}, "--device: '64' is not a whole number"},
        {{"watch", "--host", "--device", "1", ""}, "--device 1: this machine has one host dev"},
        {{"watch", "--host", "--frobnicate", ""}, "unknown option '--frobnicate'"},
        {{"watch", "--host", "stray", ""}, "unexpected argument 'stray'"},
    };
    return cr_make_param_array(struct bad_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct bad_case *c, cli_watch, bad_options) {
    const char *args[11];
    int n = 0;
    while (n < 10 && c->args[n][0] != '\0') {
        args[n] = c->args[n];
        n++;
    }
    args[n] = NULL;
    cli_result r = cli_run(args);
    cr_expect_eq(r.exit_code, 2, "%s: exit %d (%s)", c->needle, r.exit_code, r.err);
    cr_expect(strstr(r.err, c->needle) != NULL, "stderr lacks '%s': %s", c->needle, r.err);
    cr_expect_eq(cli_count_lines(r.err), 1, "one line: %s", r.err);
    cr_expect(strncmp(r.err, "vramkit: watch: ", 16) == 0, "%s", r.err);
    cr_expect_str_empty(r.out, "no partial output");
    cli_result_free(&r);
}

Test(cli_watch, help_answers_the_questions) {
    const char *args[] = {"watch", "--help", NULL};
    cli_result r = cli_run(args);
    expect_clean_success(&r);
    static const char *const must[] = {
        "--interval", "--count", "--csv", "--json", "--limit", "--leak-threshold",
        "--epoch-every", "--device", "--host", "(default 1000)", "(default 90)", "100MB",
        "near_limit", "leak", "rising_floor", "exit codes", "example", "SIGINT", "Ctrl-C",
        "total - free"};
    for (size_t i = 0; i < sizeof must / sizeof must[0]; i++)
        cr_expect(strstr(r.out, must[i]) != NULL, "help lacks %s", must[i]);
    cli_result_free(&r);
    const char *top[] = {"--help", NULL};
    r = cli_run(top);
    cr_expect(strstr(r.out, "  watch ") != NULL, "the command list names watch: %s", r.out);
    cli_result_free(&r);
}

static char *slurp_path(const char *path) {
    int fd = open(path, O_RDONLY);
    if (fd < 0) return NULL;
    char *t = cli_run__slurp(fd);
    close(fd);
    return t;
}

/* ---- SIGINT: a clean stop ------------------------------------------------------------- */

Test(cli_watch, sigint_flushes_and_exits_0) {
    char out_path[] = "/tmp/vramkit-watch-XXXXXX";
    int fd = mkstemp(out_path);
    cr_assert_geq(fd, 0);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd, 1);
        execl(VRAMKIT_EXE, VRAMKIT_EXE, "watch", "--host", "--json", "--interval", "20",
              (char *)NULL);
        _exit(127);
    }
    cr_assert_gt(pid, 0);
    /* wait (up to 20 s, not a timing assertion) until it has printed two samples */
    char *text = NULL;
    for (int tries = 0; tries < 2000; tries++) {
        free(text);
        text = slurp_path(out_path); /* its own offset: the child's stays where it is */
        if (text && cli_count_lines(text) >= 2) break;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    cr_assert(text && cli_count_lines(text) >= 2, "no samples came");
    kill(pid, SIGINT);
    int status = 0;
    waitpid(pid, &status, 0);
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x", status);
    free(text);
    text = slurp_path(out_path);
    size_t len = strlen(text);
    cr_expect_gt(len, 0u);
    cr_expect_eq(text[len - 1], '\n', "the last line is whole");
    char line[1024];
    for (int i = 0; nth_line(text, i, line, sizeof line); i++) {
        cJSON *o = cJSON_Parse(line);
        cr_expect_not_null(o, "line %d is not JSON: %s", i, line);
        cJSON_Delete(o);
    }
    free(text);
    close(fd);
    unlink(out_path);
}

/* ---- in process, over the mock: warnings inline ---------------------------------------- */

/* used on device 0 (total 100 GB), one value per sample, every sample an epoch mark:
 * s1 10 GB opens epoch 1; s2 10.05 GB (+50 MB); s3 10.25 GB (+200 MB: leak, epoch 2);
 * s4 95 GB (near_limit; leak still the same run); s5 95 GB (flat). */
static const uint64_t script_used[5] = {10 * GB, 10 * GB + 50 * MB, 10 * GB + 250 * MB,
                                        95 * GB, 95 * GB};

/* Runs `vramkit watch ARGS` in process over the scripted mock; returns what it printed. */
static char *watch_mock(int *rc, const char *fmt_flag) {
    vram_mock m;
    uint64_t free_seq[5];
    vram_mock_init(&m, 1);
    vram_mock_set_memory(&m, 0, 100 * GB, 100 * GB);
    for (int i = 0; i < 5; i++) free_seq[i] = 100 * GB - script_used[i];
    cr_assert_eq(vram_mock_script_free(&m, 0, free_seq, 5), 0);
    vram_device_ops ops = vram_mock_ops(&m);
    char a[9][24] = {"watch", "--count", "5", "--interval", "1", "--epoch-every", "1"};
    char *argv[10];
    int argc = 7;
    if (fmt_flag) strcpy(a[argc++], fmt_flag);
    for (int i = 0; i < argc; i++) argv[i] = a[i];
    argv[argc] = NULL;
    FILE *out = tmpfile();
    cr_assert_not_null(out);
    *rc = cmd_watch_ops(argc, argv, &ops, out);
    cr_expect_eq(vram_mock_calls(&m, VRAM_MOCK_OP_MEM_INFO), 5u, "one mem_info per sample");
    cr_expect_eq(vram_mock_fini(&m, stderr), 0u);
    char *text = cli_run__slurp(fileno(out));
    fclose(out);
    return text;
}

Test(cli_watch, mock_json_warning_lines) {
    int rc = -1;
    char *text = watch_mock(&rc, "--json");
    char line[2048];
    cr_assert_eq(rc, 0);
    static const char *const types[] = {"sample", "sample", "sample", "warning",
                                        "sample", "warning", "sample"};
    cr_assert_eq(cli_count_lines(text), 7, "%s", text);
    for (int i = 0; i < 7; i++) {
        cJSON *o = jparse(nth_line(text, i, line, sizeof line));
        cr_expect_str_eq(jstr(o, "type"), types[i], "line %d", i);
        cr_expect_str_eq(jstr(o, "name"), "Mock H100");
        if (i == 3) {
            cr_expect_str_eq(jstr(o, "id"), "leak");
            cr_expect_str_eq(jstr(o, "severity"), "warning");
            cr_expect_eq(jnum(o, "growth_bytes"), 200e6);
            cr_expect_eq(jnum(o, "from_bytes"), 10.05e9);
            cr_expect_eq(jnum(o, "to_bytes"), 10.25e9);
            cr_expect_eq(jnum(o, "threshold_bytes"), 100e6);
            cr_expect_eq(jnum(o, "epoch"), 2);
            /* 200e6 B = 190.73 MiB; 10.05e9 B = 9.36 GiB; 10.25e9 B = 9.55 GiB */
            cr_expect_str_eq(jstr(o, "message"),
                             "suspected leak: used grew by 190.73 MiB over epoch 2 "
                             "(9.36 GiB -> 9.55 GiB), more than the 100 MB threshold");
            cr_expect(strlen(jstr(o, "recommendation")) > 40);
        }
        if (i == 5) {
            cr_expect_str_eq(jstr(o, "id"), "near_limit");
            cr_expect_eq(jnum(o, "limit_percent"), 90);
            cr_expect_eq(jnum(o, "threshold_bytes"), 90e9);
            cr_expect_eq(jnum(o, "used_bytes"), 95e9);
            cr_expect_eq(jnum(o, "epoch"), 3);
        }
        if (i == 6) {
            cr_expect_eq(jnum(o, "epoch"), 4);
            cr_expect_eq(jnum(o, "used_percent"), 95);
        }
        cJSON_Delete(o);
    }
    free(text);
}

Test(cli_watch, mock_csv_warning_rows) {
    int rc = -1;
    char *text = watch_mock(&rc, "--csv");
    char line[2048], f[16][512];
    cr_assert_eq(rc, 0);
    cr_assert_eq(cli_count_lines(text), 8, "%s", text);
    cr_expect_str_eq(nth_line(text, 0, line, sizeof line), CSV_HEADER);
    nth_line(text, 4, line, sizeof line);
    cr_assert_eq(csv_split(line, f, 16), 15, "%s", line);
    cr_expect_str_eq(f[0], "warning");
    cr_expect_str_eq(f[4], "Mock H100");
    cr_expect_str_eq(f[5], "10250000000");
    cr_expect_str_eq(f[9], "2");
    cr_expect_str_eq(f[11], "leak");
    cr_expect_str_eq(f[12], "warning");
    cr_expect_str_eq(f[13], "suspected leak: used grew by 190.73 MiB over epoch 2 "
                            "(9.36 GiB -> 9.55 GiB), more than the 100 MB threshold");
    cr_expect(strncmp(f[14], "look for tensors kept across epochs", 35) == 0, "%s", f[14]);
    nth_line(text, 6, line, sizeof line);
    cr_assert_eq(csv_split(line, f, 16), 15, "%s", line);
    cr_expect_str_eq(f[11], "near_limit");
    cr_expect_str_eq(f[8], "95.00");
    nth_line(text, 1, line, sizeof line);
    cr_assert_eq(csv_split(line, f, 16), 15, "%s", line);
    cr_expect_str_eq(f[0], "sample");
    cr_expect_str_eq(f[5], "10000000000");
    cr_expect_str_eq(f[6], "90000000000");
    cr_expect_str_eq(f[7], "100000000000");
    cr_expect_str_eq(f[8], "10.00");
    cr_expect_str_eq(f[10], "1");
    free(text);
}

Test(cli_watch, mock_text_warning_lines) {
    int rc = -1;
    char *text = watch_mock(&rc, NULL);
    char line[2048];
    cr_assert_eq(rc, 0);
    cr_assert_eq(cli_count_lines(text), 8, "%s", text);
    cr_expect(strstr(nth_line(text, 0, line, sizeof line),
                     "an epoch every 1 samples, leak threshold 100 MB per epoch") != NULL,
              "%s", line);
    cr_expect(strstr(nth_line(text, 1, line, sizeof line),
                     "gpu0 used 9.31 GiB / 93.13 GiB (10.0%), free 83.82 GiB  | epoch 1 starts"),
              "%s", line);
    cr_expect(strstr(nth_line(text, 2, line, sizeof line), "| epoch 1 ends") != NULL, "%s", line);
    cr_expect(strstr(nth_line(text, 4, line, sizeof line),
                     "gpu0 warning leak: suspected leak: used grew by 190.73 MiB over epoch 2 "
                     "(9.36 GiB -> 9.55 GiB), more than the 100 MB threshold; recommendation: "
                     "look for tensors kept across epochs") != NULL,
              "%s", line);
    cr_expect(strstr(nth_line(text, 6, line, sizeof line),
                     "gpu0 warning near_limit: 88.48 GiB of 93.13 GiB in use (95.0%), at or "
                     "above the 90% limit; 4.66 GiB free; recommendation: ") != NULL,
              "%s", line);
}
