/* Measured peaks and the calibration file (issue 31, item 5): the peak tracker's reading of a
 * child's `vramkit: peak_bytes=N` lines; `vramkit try` and `vramkit run` measuring a child's
 * process group through the fake NVML (pidfile: "PID BYTES", changed by the child as it runs)
 * and writing one record per attempt under a plan; `vramkit plan --calibration` planning with
 * the measured figure: a strategy that fits on the estimate no longer fits after a try that
 * measured more, and one that measured less still fits; bad lines skipped, bad files refused. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli_run.h"
#include "isolate/peak.h"
#include "json_check.h"
#include "models/model_find.h"
#include "plan/calibration.h"

/* ---- the child's own report -------------------------------------------------------------- */

static vram_peak fed(const char *text, size_t piece) {
    vram_peak p;
    vram_peak_init(&p, NULL, NULL);
    for (size_t i = 0, n = strlen(text); i < n; i += piece)
        vram_peak_output(&p, text + i, n - i < piece ? n - i : piece);
    vram_peak_finish(&p);
    return p;
}

Test(peak, report_lines_in_pieces_of_any_size) {
    const char *text = "loading\nvramkit: peak_bytes=1000\nvramkit: peak_bytes=3000 device=1\r\n"
                       "vramkit: peak_bytes=2000\n";
    for (size_t piece = 1; piece < 8; piece++) {
        vram_peak p = fed(text, piece);
        cr_expect(p.reported);
        cr_expect_eq(p.reported_bytes, 3000u, "the largest is kept (pieces of %zu)", piece);
        cr_expect_eq(p.reported_device, 1);
        cr_expect_eq(vram_peak_bytes(&p), 3000u);
    }
    vram_peak last = fed("vramkit: peak_bytes=77", 3); /* no newline at the end */
    cr_expect(last.reported && last.reported_bytes == 77u && last.reported_device == -1);
}

Test(peak, what_is_not_a_report) {
    static const char *const bad[] = {
        "vramkit: peak_bytes=\n", "vramkit: peak_bytes=12x\n", "vramkit: peak_bytes=-5\n",
        "vramkit: peak_bytes=99999999999999999999999\n", " vramkit: peak_bytes=5\n",
        "vramkit: peak_bytes=5 device=99\n", "vramkit: peak_bytes=5 device=\n",
        "echo vramkit: peak_bytes=5\n", "vramkit: peak_bytes=5 and more\n"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        vram_peak p = fed(bad[i], 4);
        cr_expect(!p.reported, "'%s' is not a report", bad[i]);
        cr_expect_eq(vram_peak_bytes(&p), 0u);
    }
    char longline[400];
    memset(longline, 'x', sizeof longline);
    memcpy(longline, "vramkit: peak_bytes=5", 21);
    longline[sizeof longline - 2] = '\n';
    longline[sizeof longline - 1] = '\0';
    vram_peak p = fed(longline, 50);
    cr_expect(!p.reported, "a long line is not one");
    char buf[256];
    vram_peak_text(&p, buf, sizeof buf);
    cr_expect(strstr(buf, "not known (no NVML") != NULL, "%s", buf);
}

/* ---- the commands, through the fake NVML ---------------------------------------------------- */

static char dir[64];

static void fresh_dir(void) {
    snprintf(dir, sizeof dir, "/tmp/vramkit-cal-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

static void cleanup(void) {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (dir[0]) cr_expect_eq(system(cmd), 0);
}

TestSuite(calibration, .init = fresh_dir, .fini = cleanup);

/* A child that uses `bytes` on the GPU for a while as the fake NVML sees it, then little. */
static void child_script(char *buf, size_t cap, const char *bytes, const char *extra) {
    snprintf(buf, cap, "echo \"$$ %s\" > %s/pid; sleep 0.4; echo \"$$ 5\" > %s/pid; sleep 0.15; %s",
             bytes, dir, dir, extra);
}

static char nvml_env[256];
static const char *fake_env(void) {
    snprintf(nvml_env, sizeof nvml_env, "VRAMKIT_FAKE_NVML=pidfile=%s/pid;procs=4194397:777", dir);
    return nvml_env;
}

/* The one line of a calibration file, parsed (NULL when the file does not hold one line). */
static cJSON *jparse_file(const char *path) {
    char buf[8192];
    FILE *f = fopen(path, "r");
    if (f == NULL) return NULL;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    if (n == 0 || buf[n - 1] != '\n' || strchr(buf, '\n') != buf + n - 1) return NULL;
    return cJSON_Parse(buf);
}

static cJSON *run_json(const char *const *args, const char *const *env, int want_rc) {
    cli_result r = cli_run_env(args, env);
    cr_assert_eq(r.exit_code, want_rc, "%s", r.err);
    cJSON *doc = jparse(r.out);
    cr_assert(cJSON_IsObject(doc), "%s", r.out);
    cli_result_free(&r);
    return doc;
}

static const cJSON *first_attempt_measured(const cJSON *doc) {
    const cJSON *a = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "attempts"), 0);
    const cJSON *m = cJSON_GetObjectItem(a, "measured");
    cr_assert(cJSON_IsObject(m));
    return m;
}

static double num(const cJSON *o, const char *k) {
    const cJSON *v = cJSON_GetObjectItem(o, k);
    cr_assert(cJSON_IsNumber(v), "%s is a number", k);
    return v->valuedouble;
}

Test(calibration, try_measures_the_group_and_the_report) {
    char script[512], cal[128];
    child_script(script, sizeof script, "3000000000", "echo 'vramkit: peak_bytes=2900000000 device=0'");
    snprintf(cal, sizeof cal, "%s/cal.jsonl", dir);
    const char *env[] = {"VRAMKIT_NVML_LIBRARY=" VRAMKIT_FAKE_NVML, fake_env(), NULL};
    const char *args[] = {"try", "--strategies", "fp16", "--calibration", cal, "--json", "--", "sh",
                          "-c", script, NULL};
    cJSON *doc = run_json(args, env, 0);
    const cJSON *m = first_attempt_measured(doc);
    cr_expect_eq(num(m, "nvml_peak_bytes"), 3000000000.0, "the group's peak, not the other process's");
    cr_expect_eq(num(m, "nvml_peak_gpu"), 0.0);
    cr_expect_eq(num(m, "reported_peak_bytes"), 2900000000.0);
    cr_expect_eq(num(m, "reported_device"), 0.0);
    cr_expect_geq(num(m, "samples"), 2.0);
    cr_expect_str_eq(cJSON_GetObjectItem(m, "source")->valuestring, "nvml");
    cJSON_Delete(doc);
    cr_expect_neq(access(cal, F_OK), 0, "--strategies is no plan: no record");

    /* text: one line under the attempt */
    const char *args2[] = {"try", "--strategies", "fp16", "--", "sh", "-c", script, NULL};
    cli_result r = cli_run_env(args2, env);
    cr_expect_eq(r.exit_code, 0, "%s", r.err);
    cr_expect(strstr(r.out, "      measured peak: 2.79 GiB on GPU 0 (NVML, ") != NULL, "%s", r.out);
    cr_expect(strstr(r.out, "; the child reported 2.70 GiB\n") != NULL, "%s", r.out);
    cli_result_free(&r);
}

Test(calibration, without_nvml_the_report_alone) {
    const char *env[] = {"VRAMKIT_NVML_LIBRARY=", NULL};
    const char *args[] = {"try", "--strategies", "fp16", "--json", "--", "sh", "-c",
                          "echo 'vramkit: peak_bytes=123456'", NULL};
    cJSON *doc = run_json(args, env, 0);
    const cJSON *m = first_attempt_measured(doc);
    cr_expect(cJSON_IsNull(cJSON_GetObjectItem(m, "nvml_peak_bytes")));
    cr_expect_eq(num(m, "reported_peak_bytes"), 123456.0);
    cr_expect_eq(num(m, "samples"), 0.0);
    cr_expect_str_eq(cJSON_GetObjectItem(m, "source")->valuestring, "none");
    cr_expect(strstr(cJSON_GetObjectItem(m, "nvml_unavailable")->valuestring, "VRAMKIT_NVML_LIBRARY") != NULL);
    cJSON_Delete(doc);
}

/* The plan of gpt2 on an assumed 2 GiB GPU: fp16 fits (about 876 MiB expected). */
static cJSON *plan_json(const char *cal, int want_rc) {
    const char *args[] = {"plan", "--model", "gpt2", "--assume-gpu", "2GiB", "--json",
                          cal ? "--calibration" : NULL, cal, NULL};
    return run_json(args, NULL, want_rc);
}

static const cJSON *strategy(const cJSON *doc, const char *name) {
    const cJSON *s;
    cJSON_ArrayForEach(s, cJSON_GetObjectItem(doc, "strategies"))
        if (strcmp(cJSON_GetObjectItem(s, "name")->valuestring, name) == 0) return s;
    cr_assert_fail("no strategy %s", name);
    return NULL;
}

static void try_model(const char *cal, const char *bytes) {
    char script[512];
    child_script(script, sizeof script, bytes, "true");
    const char *env[] = {"VRAMKIT_NVML_LIBRARY=" VRAMKIT_FAKE_NVML, fake_env(), NULL};
    const char *args[] = {"try", "--model", "gpt2", "--assume-gpu", "2GiB", "--calibration", cal,
                          "--", "sh", "-c", script, NULL};
    cli_result r = cli_run_env(args, env);
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    cr_expect(strstr(r.out, "[1/5] fp16: success") != NULL, "%s", r.out);
    cli_result_free(&r);
}

Test(calibration, a_measured_peak_above_the_budget_changes_the_verdict) {
    char cal[128];
    snprintf(cal, sizeof cal, "%s/cal.jsonl", dir);
    cJSON *before = plan_json(NULL, 0);
    cr_expect_str_eq(cJSON_GetObjectItem(before, "chosen")->valuestring, "fp16");
    cr_expect(cJSON_IsTrue(cJSON_GetObjectItem(strategy(before, "fp16"), "fits")));
    double expected = num(strategy(before, "fp16"), "bytes");
    cJSON_Delete(before);

    try_model(cal, "3000000000"); /* more than the 1.75 GiB budget */
    cJSON *rec = jparse_file(cal);
    cr_assert(cJSON_IsObject(rec), "one record, one line");
    cr_expect_str_eq(cJSON_GetObjectItem(rec, "model")->valuestring, "gpt2");
    cr_expect_str_eq(cJSON_GetObjectItem(rec, "strategy")->valuestring, "fp16");
    cr_expect_str_eq(cJSON_GetObjectItem(rec, "command")->valuestring, "try");
    cr_expect_eq(num(rec, "expected_bytes"), expected, "the plan's expected bytes for fp16");
    cr_expect_eq(num(rec, "measured_bytes"), 3000000000.0);
    cJSON_Delete(rec);

    cJSON *after = plan_json(cal, 0);
    const cJSON *fp16 = strategy(after, "fp16");
    cr_expect(cJSON_IsFalse(cJSON_GetObjectItem(fp16, "fits")), "fp16 no longer fits");
    cr_expect_str_eq(cJSON_GetObjectItem(fp16, "reason")->valuestring, "too_big");
    cr_expect_str_eq(cJSON_GetObjectItem(after, "chosen")->valuestring, "int8");
    const cJSON *c = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(after, "calibration"), "strategies"), 0);
    cr_assert_not_null(c);
    cr_expect_str_eq(cJSON_GetObjectItem(c, "name")->valuestring, "fp16");
    cr_expect_eq(num(c, "expected_bytes"), expected);
    cr_expect_eq(num(c, "measured_bytes"), 3000000000.0);
    cr_expect(cJSON_IsTrue(cJSON_GetObjectItem(c, "fits_before")));
    cr_expect(cJSON_IsFalse(cJSON_GetObjectItem(c, "fits")));
    cJSON_Delete(after);

    /* text */
    const char *args[] = {"plan", "--model", "gpt2", "--assume-gpu", "2GiB", "--calibration", cal, NULL};
    cli_result r = cli_run_env(args, NULL);
    cr_expect_eq(r.exit_code, 0, "%s", r.err);
    cr_expect(strstr(r.out, "chosen: int8\n") != NULL, "%s", r.out);
    cr_expect(strstr(r.out, "fp16        estimate 875.90 MiB, measured 2.79 GiB (NVML 2.79 GiB); "
                            "planned with the measured peak: it no longer fits") != NULL, "%s", r.out);
    cli_result_free(&r);
}

Test(calibration, a_measured_peak_below_the_estimate_still_fits) {
    char cal[128];
    snprintf(cal, sizeof cal, "%s/cal.jsonl", dir);
    try_model(cal, "500000000");
    cJSON *after = plan_json(cal, 0);
    cr_expect_str_eq(cJSON_GetObjectItem(after, "chosen")->valuestring, "fp16");
    const cJSON *fp16 = strategy(after, "fp16");
    const cJSON *c = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(after, "calibration"), "strategies"), 0);
    cr_expect(cJSON_IsTrue(cJSON_GetObjectItem(fp16, "fits")));
    cr_expect(num(fp16, "bytes") > 500000000.0, "planned with the larger: the estimate");
    cr_expect_eq(num(c, "measured_bytes"), 500000000.0);
    cr_expect(cJSON_IsTrue(cJSON_GetObjectItem(c, "applied")) && cJSON_IsTrue(cJSON_GetObjectItem(c, "fits")));
    cJSON_Delete(after);
    /* another workload is another key: nothing applies */
    const char *args[] = {"plan", "--model", "gpt2", "--assume-gpu", "2GiB", "--batch", "4", "--json",
                          "--calibration", cal, NULL};
    cJSON *other = run_json(args, NULL, 0);
    cr_expect_eq(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(other, "calibration"), "strategies")), 0);
    cJSON_Delete(other);
}

/* The key is made of what the defaults resolve to: gpt2's default sequence is its context,
 * 1024, so the default and --seq 1024 are one workload; --seq 512 is another. */
static void key_of(const vram_model_ref *m, vram_workload w, int resolve, char *buf, size_t cap) {
    vram_estimate e;
    cr_assert_eq(vram_estimate_model(&m->model, &w, &e), VRAM_OK);
    vram_calib_workload_key(&w, resolve ? &e : NULL, buf, cap);
}

Test(calibration, a_default_and_its_value_are_one_key) {
    static vram_model_ref m; /* large */
    char err[256], dflt[320], given[320], other[320], train_d[320], train_g[320];
    vram_workload w = {0};
    cr_assert_eq(vram_model_find("gpt2", &m, err, sizeof err), VRAM_OK, "%s", err);
    key_of(&m, w, 1, dflt, sizeof dflt);
    cr_expect(strstr(dflt, " seq=1024 ") != NULL && strstr(dflt, " batch=1 ") != NULL, "%s", dflt);
    cr_expect(strstr(dflt, "logits=last") != NULL, "inference logits resolved: %s", dflt);
    w.seq = 1024;
    w.batch = 1;
    w.logits = VRAM_LOGITS_LAST;
    key_of(&m, w, 1, given, sizeof given);
    cr_expect_str_eq(given, dflt, "the values the defaults resolve to, given, are the same key");
    w.seq = 512;
    key_of(&m, w, 1, other, sizeof other);
    cr_expect_str_neq(other, dflt);
    /* training: the default logits are all of them, and the default accumulation 1 */
    vram_workload t = {0};
    t.mode = VRAM_MODE_TRAIN;
    key_of(&m, t, 1, train_d, sizeof train_d);
    t.logits = VRAM_LOGITS_ALL;
    t.grad_accum = 1;
    t.seq = 1024;
    key_of(&m, t, 1, train_g, sizeof train_g);
    cr_expect_str_eq(train_g, train_d);
    /* without an estimate the defaults stay as such (a saved plan whose model is not here) */
    w.seq = 0;
    key_of(&m, w, 0, other, sizeof other);
    cr_expect(strstr(other, " seq=default ") != NULL, "%s", other);
}

Test(calibration, a_record_applies_to_the_value_its_default_resolved_to) {
    char cal[128];
    snprintf(cal, sizeof cal, "%s/cal.jsonl", dir);
    try_model(cal, "3000000000"); /* the default sequence: gpt2's 1024 */
    cJSON *rec = jparse_file(cal);
    cr_assert(cJSON_IsObject(rec));
    cr_expect(strstr(cJSON_GetObjectItem(rec, "workload")->valuestring, " seq=1024 ") != NULL,
              "%s", cJSON_GetObjectItem(rec, "workload")->valuestring);
    cJSON_Delete(rec);
    static const char *const seqs[] = {"1024", "512"};
    for (int i = 0; i < 2; i++) {
        const char *args[] = {"plan", "--model", "gpt2", "--assume-gpu", "2GiB", "--seq", seqs[i],
                              "--json", "--calibration", cal, NULL};
        cJSON *doc = run_json(args, NULL, 0);
        const cJSON *list = cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "calibration"), "strategies");
        cr_expect_eq(cJSON_GetArraySize(list), i == 0 ? 1 : 0, "--seq %s", seqs[i]);
        cr_expect_str_eq(cJSON_GetObjectItem(doc, "chosen")->valuestring, i == 0 ? "int8" : "fp16",
                         "--seq %s: planned with the measured peak only where it applies", seqs[i]);
        cJSON_Delete(doc);
    }
}

/* try --plan FILE: the saved plan holds the workload as given; its model resolves the key. */
Test(calibration, a_saved_plan_keys_its_records_by_the_resolved_values) {
    char cal[128], saved[128], script[512];
    snprintf(cal, sizeof cal, "%s/cal.jsonl", dir);
    snprintf(saved, sizeof saved, "%s/plan.json", dir);
    const char *save[] = {"plan", "--model", "gpt2", "--assume-gpu", "2GiB", "--save", saved, NULL};
    cli_result r = cli_run_env(save, NULL);
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    cli_result_free(&r);
    child_script(script, sizeof script, "3000000000", "true");
    const char *env[] = {"VRAMKIT_NVML_LIBRARY=" VRAMKIT_FAKE_NVML, fake_env(), NULL};
    const char *args[] = {"try", "--plan", saved, "--calibration", cal, "--", "sh", "-c", script, NULL};
    r = cli_run_env(args, env);
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    cli_result_free(&r);
    cJSON *rec = jparse_file(cal);
    cr_assert(cJSON_IsObject(rec));
    cr_expect(strstr(cJSON_GetObjectItem(rec, "workload")->valuestring, " seq=1024 ") != NULL,
              "%s", cJSON_GetObjectItem(rec, "workload")->valuestring);
    cJSON_Delete(rec);
    const char *plan[] = {"plan", "--model", "gpt2", "--assume-gpu", "2GiB", "--seq", "1024",
                          "--json", "--calibration", cal, NULL};
    cJSON *doc = run_json(plan, NULL, 0);
    cr_expect_str_eq(cJSON_GetObjectItem(doc, "chosen")->valuestring, "int8");
    cJSON_Delete(doc);
}

Test(calibration, bad_lines_are_skipped_and_counted) {
    char cal[128];
    snprintf(cal, sizeof cal, "%s/cal.jsonl", dir);
    FILE *f = fopen(cal, "w");
    cr_assert_not_null(f);
    fputs("not json\n{\"version\":1}\n[1,2]\n{\"version\":2,\"model\":\"gpt2\",\"strategy\":\"fp16\","
          "\"workload\":\"x\",\"measured_bytes\":1}\n", f);
    fclose(f);
    try_model(cal, "3000000000"); /* appended after the bad lines */
    cJSON *after = plan_json(cal, 0);
    const cJSON *c = cJSON_GetObjectItem(after, "calibration");
    cr_expect_eq(num(c, "lines"), 5.0);
    cr_expect_eq(num(c, "bad_lines"), 4.0);
    cr_expect_str_eq(cJSON_GetObjectItem(after, "chosen")->valuestring, "int8", "the good line counts");
    cJSON_Delete(after);
}

Test(calibration, bad_files_and_options) {
    char cal[128], missing[128];
    snprintf(cal, sizeof cal, "%s/cal.jsonl", dir);
    snprintf(missing, sizeof missing, "%s/missing.jsonl", dir);
    /* a directory: one line, exit 2, before anything runs */
    const char *a1[] = {"plan", "--model", "gpt2", "--assume-gpu", "2GiB", "--calibration", dir, NULL};
    cli_result r = cli_run_env(a1, NULL);
    cr_expect_eq(r.exit_code, 2);
    cr_expect(strstr(r.err, "not a regular file") && strchr(r.err, '\n') == r.err + strlen(r.err) - 1, "%s", r.err);
    cr_expect_str_eq(r.out, "");
    cli_result_free(&r);
    char marker[160], script[256];
    snprintf(marker, sizeof marker, "%s/ran", dir);
    snprintf(script, sizeof script, "touch %s", marker);
    const char *a2[] = {"try", "--model", "gpt2", "--assume-gpu", "2GiB", "--calibration", dir, "--",
                        "sh", "-c", script, NULL};
    r = cli_run_env(a2, NULL);
    cr_expect_eq(r.exit_code, 2, "%s", r.err);
    cr_expect(strstr(r.err, "vramkit: try: --calibration ") && strstr(r.err, "not a regular file"), "%s", r.err);
    cr_expect_neq(access(marker, F_OK), 0, "nothing ran");
    cli_result_free(&r);
    /* plan: a missing file is an error; components take none */
    const char *a3[] = {"plan", "--model", "gpt2", "--calibration", missing, NULL};
    r = cli_run_env(a3, NULL);
    cr_expect_eq(r.exit_code, 2);
    cr_expect(strstr(r.err, "--calibration") && strstr(r.err, "No such file"), "%s", r.err);
    cli_result_free(&r);
    const char *a4[] = {"plan", "--component", "a=gpt2", "--calibration", cal, NULL};
    r = cli_run_env(a4, NULL);
    cr_expect_eq(r.exit_code, 2);
    cr_expect(strstr(r.err, "--calibration") && strstr(r.err, "--model"), "%s", r.err);
    cli_result_free(&r);
}

Test(calibration, default_file_and_none) {
    char xdg[160], def[200], script[256];
    snprintf(xdg, sizeof xdg, "XDG_CACHE_HOME=%s/cache", dir);
    snprintf(def, sizeof def, "%s/cache/vramkit/calibration.jsonl", dir);
    snprintf(script, sizeof script, "echo 'vramkit: peak_bytes=1234'");
    const char *env[] = {xdg, NULL};
    const char *a1[] = {"try", "--model", "gpt2", "--assume-gpu", "2GiB", "--calibration", "none", "--",
                        "sh", "-c", script, NULL};
    cli_result r = cli_run_env(a1, env);
    cr_expect_eq(r.exit_code, 0, "%s", r.err);
    cli_result_free(&r);
    cr_expect_neq(access(def, F_OK), 0, "none: no file");
    const char *a2[] = {"try", "--model", "gpt2", "--assume-gpu", "2GiB", "--", "sh", "-c", script, NULL};
    r = cli_run_env(a2, env);
    cr_expect_eq(r.exit_code, 0, "%s", r.err);
    cli_result_free(&r);
    cJSON *rec = jparse_file(def);
    cr_assert(cJSON_IsObject(rec), "the default file under $XDG_CACHE_HOME/vramkit");
    cr_expect_eq(num(rec, "measured_bytes"), 1234.0);
    cr_expect(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetObjectItem(rec, "measured"), "nvml_peak_bytes")));
    cJSON_Delete(rec);
}

Test(calibration, run_measures_each_start) {
    char cal[128], events[128], script[512];
    snprintf(cal, sizeof cal, "%s/cal.jsonl", dir);
    snprintf(events, sizeof events, "%s/ev", dir);
    child_script(script, sizeof script, "3000000000", "echo VRAMKIT_READY; echo 'vramkit: peak_bytes=42'");
    const char *env[] = {"VRAMKIT_NVML_LIBRARY=" VRAMKIT_FAKE_NVML, fake_env(), NULL};
    const char *args[] = {"run", "--model", "gpt2", "--assume-gpu", "2GiB", "--calibration", cal,
                          "--events", events, "--", "sh", "-c", script, NULL};
    cli_result r = cli_run_env(args, env);
    cr_expect_eq(r.exit_code, 0, "%s", r.err);
    cr_expect(strstr(r.err, "vramkit: run: fp16: measured peak: 2.79 GiB on GPU 0 (NVML, ") != NULL, "%s", r.err);
    cli_result_free(&r);
    cJSON *rec = jparse_file(cal);
    cr_assert(cJSON_IsObject(rec));
    cr_expect_str_eq(cJSON_GetObjectItem(rec, "command")->valuestring, "run");
    cr_expect_eq(num(rec, "measured_bytes"), 3000000000.0);
    cr_expect_eq(num(cJSON_GetObjectItem(rec, "measured"), "reported_peak_bytes"), 42.0);
    cJSON_Delete(rec);
    /* the ended event carries it too */
    FILE *f = fopen(events, "r");
    char line[8192];
    int found = 0;
    cr_assert_not_null(f);
    while (fgets(line, sizeof line, f)) {
        cJSON *e = cJSON_Parse(line);
        if (e && strcmp(cJSON_GetObjectItem(e, "event")->valuestring, "ended") == 0) {
            found = 1;
            cr_expect_eq(num(cJSON_GetObjectItem(e, "measured"), "nvml_peak_bytes"), 3000000000.0);
        }
        cJSON_Delete(e);
    }
    fclose(f);
    cr_expect(found);
}
