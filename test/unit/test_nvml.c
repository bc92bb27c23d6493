/* test_nvml.c — GPU memory without a CUDA context (driver/nvml/nvml.h): the real NVML
 * backend loads a stand-in library (test/mock/fake_nvml.c) with dlopen and answers what it
 * scripts (devices, memory, compute and graphics processes, unknown amounts); an old NVML
 * (first entry points, first process layout) works; a missing library, a library that lacks
 * a function, and a driver/library version mismatch are errors that say so; the device ops
 * adapter; and `vramkit watch` over it: --processes in text and JSON, the fallback to the
 * CUDA runtime when NVML is absent, and the bad combinations; and the seam itself: a scripted
 * table, no library, drives gpustats (what watch samples through). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli_run.h"
#include "json_check.h"
#include "gpustats/gpustats.h"
#include "nvml/nvml.h"

static vram_gpumem_ops open_fake(const char *lib, const char *script) {
    setenv("VRAMKIT_FAKE_NVML", script, 1);
    vram_gpumem_ops m = vram_nvml_ops(lib);
    cr_assert_eq(vram_gpumem_ops_check(&m), VRAM_OK);
    return m;
}

Test(nvml, reads_memory_and_processes) {
    vram_gpumem_ops m = open_fake(VRAMKIT_FAKE_NVML, "devices=2;name=Fake H100;total=85899345920;"
                                                     "used=4700000000;procs=100:4700000000,200:na;"
                                                     "gprocs=300:1048576,100:5;driver=580.65");
    cr_assert_eq(m.open(m.ctx), VRAM_OK, "%s", m.error(m.ctx));
    cr_expect_str_eq(m.source, "nvml");
    int n = 0;
    cr_assert_eq(m.device_count(m.ctx, &n), VRAM_OK);
    cr_expect_eq(n, 2);
    char buf[128];
    cr_assert_eq(m.device_name(m.ctx, 1, buf, sizeof buf), VRAM_OK);
    cr_expect_str_eq(buf, "Fake H100");
    cr_assert_eq(m.driver_version(m.ctx, buf, sizeof buf), VRAM_OK);
    cr_expect_str_eq(buf, "580.65");
    uint64_t total, free_b, used;
    cr_assert_eq(m.memory(m.ctx, 0, &total, &free_b, &used), VRAM_OK);
    cr_expect_eq(total, UINT64_C(85899345920));
    cr_expect_eq(used, UINT64_C(4700000000));
    cr_expect_eq(free_b, total - used);
    vram_gpumem_proc p[8];
    cr_assert_eq(m.processes(m.ctx, 0, p, 8, &n), VRAM_OK);
    cr_assert_eq(n, 3, "pid 100 is listed once (as compute)");
    cr_expect_eq(p[0].pid, 100u);
    cr_expect_eq(p[0].used_bytes, UINT64_C(4700000000));
    cr_expect_eq(p[0].graphics, 0);
    cr_expect_eq(p[1].pid, 200u);
    cr_expect_eq(p[1].used_bytes, VRAM_GPUMEM_UNKNOWN, "NVML's 'not available'");
    cr_expect_eq(p[2].pid, 300u);
    cr_expect_eq(p[2].graphics, 1);
    cr_expect_eq(p[2].used_bytes, UINT64_C(1048576));
    /* cap: only what fits */
    cr_assert_eq(m.processes(m.ctx, 0, p, 1, &n), VRAM_OK);
    cr_expect_eq(n, 1);
    /* a device that is not there */
    cr_expect_eq(m.memory(m.ctx, 2, &total, &free_b, &used), VRAM_E_RANGE);
    cr_expect(strstr(m.error(m.ctx), "nvmlDeviceGetHandleByIndex(2)"), "%s", m.error(m.ctx));
    m.close(m.ctx);
    cr_expect_eq(m.device_count(m.ctx, &n), VRAM_E_STATE, "closed");
}

Test(nvml, an_old_nvml_is_read_through_its_first_entry_points) {
    vram_gpumem_ops m = open_fake(VRAMKIT_FAKE_NVML_OLD, "procs=42:123456,43:na");
    cr_assert_eq(m.open(m.ctx), VRAM_OK, "%s", m.error(m.ctx));
    int n = 0;
    cr_assert_eq(m.device_count(m.ctx, &n), VRAM_OK);
    cr_expect_eq(n, 1);
    vram_gpumem_proc p[4];
    cr_assert_eq(m.processes(m.ctx, 0, p, 4, &n), VRAM_OK);
    cr_assert_eq(n, 2);
    cr_expect_eq(p[0].pid, 42u, "the v1 layout (no instance ids) is read as such");
    cr_expect_eq(p[0].used_bytes, UINT64_C(123456));
    cr_expect_eq(p[1].pid, 43u);
    cr_expect_eq(p[1].used_bytes, VRAM_GPUMEM_UNKNOWN);
    m.close(m.ctx);
}

Test(nvml, missing_library) {
    vram_gpumem_ops m = open_fake("/nonexistent/libnvidia-ml.so.1", "");
    cr_expect_eq(m.open(m.ctx), VRAM_E_NOT_SUPPORTED);
    cr_expect(strstr(m.error(m.ctx), "cannot load /nonexistent/libnvidia-ml.so.1"), "%s",
              m.error(m.ctx));
    int n = 7;
    cr_expect_eq(m.device_count(m.ctx, &n), VRAM_E_STATE);
    cr_expect_eq(n, 7);
    m.close(m.ctx); /* closing what never opened is fine */
}

Test(nvml, empty_environment_rules_it_out) {
    setenv(VRAM_NVML_LIBRARY_ENV, "", 1);
    vram_gpumem_ops m = vram_nvml_ops(NULL);
    cr_expect_eq(m.open(m.ctx), VRAM_E_NOT_SUPPORTED);
    cr_expect(strstr(m.error(m.ctx), "ruled out"), "%s", m.error(m.ctx));
}

Test(nvml, a_library_without_a_needed_function_is_a_version_error) {
    vram_gpumem_ops m = open_fake(VRAMKIT_FAKE_NVML_BAD, "");
    cr_expect_eq(m.open(m.ctx), VRAM_E_VERSION);
    cr_expect(strstr(m.error(m.ctx), "lacks nvmlDeviceGetMemoryInfo"), "%s", m.error(m.ctx));
}

Test(nvml, driver_library_mismatch_and_no_driver) {
    vram_gpumem_ops m = open_fake(VRAMKIT_FAKE_NVML, "init=mismatch");
    cr_expect_eq(m.open(m.ctx), VRAM_E_VERSION);
    cr_expect(strstr(m.error(m.ctx), "Driver/library version mismatch"), "%s", m.error(m.ctx));
    cr_expect(strstr(m.error(m.ctx), "without a reboot"), "%s", m.error(m.ctx));
    m = open_fake(VRAMKIT_FAKE_NVML, "init=nodriver");
    cr_expect_eq(m.open(m.ctx), VRAM_E_NO_DRIVER);
    cr_expect(strstr(m.error(m.ctx), "Driver Not Loaded"), "%s", m.error(m.ctx));
}

Test(nvml, ops_check) {
    vram_gpumem_ops m = vram_nvml_ops(NULL);
    cr_expect_eq(vram_gpumem_ops_check(NULL), VRAM_E_INVALID);
    m.api_version = 99;
    cr_expect_eq(vram_gpumem_ops_check(&m), VRAM_E_VERSION);
    m = vram_nvml_ops(NULL);
    m.processes = NULL;
    cr_expect_eq(vram_gpumem_ops_check(&m), VRAM_E_INVALID);
}

Test(nvml, device_ops_adapter) {
    vram_gpumem_ops m = open_fake(VRAMKIT_FAKE_NVML, "devices=3;total=1000;used=250;name=G");
    cr_assert_eq(m.open(m.ctx), VRAM_OK);
    vram_device_ops d = vram_gpumem_device_ops(&m);
    cr_assert_eq(vram_device_ops_check(&d), VRAM_OK);
    cr_expect_str_eq(d.backend, "nvml");
    int n = 0;
    cr_assert_eq(d.device_count(d.ctx, &n), VRAM_OK);
    cr_expect_eq(n, 3);
    vram_device_info info;
    cr_assert_eq(d.device_info(d.ctx, 2, &info), VRAM_OK);
    cr_expect_str_eq(info.name, "G");
    cr_expect_eq(info.total_bytes, 1000u);
    cr_expect_eq(info.free_bytes, 750u);
    cr_expect_eq(info.vmm, VRAM_UNKNOWN, "not known through NVML");
    uint64_t f = 0, t = 0;
    cr_assert_eq(d.mem_info(d.ctx, 1, &f, &t), VRAM_OK);
    cr_expect_eq(f, 750u);
    cr_expect_eq(t, 1000u);
    void *p = &n;
    cr_expect_eq(d.dev_alloc(d.ctx, 0, 16, &p), VRAM_E_NOT_SUPPORTED, "no context: no memory");
    cr_expect_null(p);
    m.close(m.ctx);
}

/* ---- vramkit watch over it ------------------------------------------------------------------- */

static cli_result watch_with(const char *lib, const char *script, const char *const *args) {
    static char e1[512], e2[1024];
    const char *env[3] = {e1, e2, NULL};
    snprintf(e1, sizeof e1, "VRAMKIT_NVML_LIBRARY=%s", lib);
    snprintf(e2, sizeof e2, "VRAMKIT_FAKE_NVML=%s", script);
    return cli_run_env(args, env);
}

Test(nvml_watch, processes_in_text) {
    char script[256];
    /* this test's own pid (its command is known), and one beyond any pid_max (not visible) */
    snprintf(script, sizeof script, "devices=1;name=Fake GPU;total=8589934592;used=5046586573;"
                                    "procs=%ld:4700000000,4194399:na",
             (long)getpid());
    const char *args[] = {"watch", "--count", "1", "--processes", NULL};
    cli_result r = watch_with(VRAMKIT_FAKE_NVML, script, args);
    cr_expect_eq(r.exit_code, 0, "%s", r.err);
    cr_expect_str_eq(r.err, "", "NVML is used: nothing to say");
    cr_expect(strstr(r.out, "(nvml backend: gpu0 Fake GPU)"), "%s", r.out);
    cr_expect(strstr(r.out, "gpu0 used 4.70 GiB / 8.00 GiB"), "%s", r.out);
    char want[128];
    snprintf(want, sizeof want, "\n            pid %ld test_nvml compute used 4.38 GiB\n",
             (long)getpid());
    cr_expect(strstr(r.out, want), "'%s' in %s", want, r.out);
    cr_expect(strstr(r.out, "\n            pid 4194399 ? compute used unknown\n"), "%s", r.out);
    cli_result_free(&r);
}

Test(nvml_watch, processes_in_json) {
    const char *args[] = {"watch", "--count", "2", "--interval", "5", "--processes", "--json", NULL};
    cli_result r = watch_with(VRAMKIT_FAKE_NVML, "devices=2;gprocs=4194398:1048576", args);
    cr_expect_eq(r.exit_code, 0, "%s", r.err);
    int samples = 0, procs = 0;
    char *save = NULL;
    for (char *line = strtok_r(r.out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        cJSON *o = jparse(line);
        const char *type = jstr(o, "type");
        if (strcmp(type, "sample") == 0) samples++;
        if (strcmp(type, "process") == 0) {
            procs++;
            cr_expect_eq(jnum(o, "pid"), 4194398);
            cr_expect_str_eq(jstr(o, "kind"), "graphics");
            cr_expect_eq(jnum(o, "used_bytes"), 1048576);
            cr_expect(jis_null(o, "command"));
            cr_expect(jnum(o, "device") == 0 || jnum(o, "device") == 1);
        }
        cJSON_Delete(o);
    }
    cr_expect_eq(samples, 4, "2 samples of 2 GPUs");
    cr_expect_eq(procs, 4, "one process listed after each sample");
    cli_result_free(&r);
}

Test(nvml_watch, without_nvml_processes_is_exit_3_and_says_why) {
    const char *args[] = {"watch", "--count", "1", "--processes", NULL};
    cli_result r = watch_with("/nonexistent/libnvidia-ml.so.1", "", args);
    cr_expect_eq(r.exit_code, 3);
    cr_expect_str_eq(r.out, "");
    cr_expect(strstr(r.err, "vramkit: watch: --processes needs NVML: cannot load "
                            "/nonexistent/libnvidia-ml.so.1"),
              "%s", r.err);
    cr_expect_eq(cli_count_lines(r.err), 1, "%s", r.err);
    cli_result_free(&r);
    r = watch_with(VRAMKIT_FAKE_NVML, "init=mismatch", args);
    cr_expect_eq(r.exit_code, 3);
    cr_expect(strstr(r.err, "Driver/library version mismatch"), "%s", r.err);
    cli_result_free(&r);
}

/* NVML absent: watch still works through the CUDA runtime where there is one, and says so;
 * here (no GPU in CI) the CUDA runtime fails as before, with the same message as without
 * any NVML knowledge. An NVML that is there but unusable is named in the error. */
Test(nvml_watch, fallback_when_nvml_is_absent) {
    const char *args[] = {"watch", "--count", "1", NULL};
    cli_result plain = watch_with("", "", args);
    cli_result missing = watch_with("/nonexistent/libnvidia-ml.so.1", "", args);
    cr_expect_eq(missing.exit_code, plain.exit_code);
    cr_expect_str_eq(missing.err, plain.err, "a missing NVML changes nothing");
    if (plain.exit_code == 0)
        cr_expect(strstr(plain.err, "NVML not used (NVML is ruled out"), "%s", plain.err);
    else
        cr_expect_eq(plain.exit_code, 3, "%s", plain.err);
    cli_result_free(&missing);
    cli_result bad = watch_with(VRAMKIT_FAKE_NVML, "init=mismatch", args);
    if (plain.exit_code != 0) {
        cr_expect_eq(bad.exit_code, 3);
        cr_expect(strstr(bad.err, "NVML cannot be used (NVML cannot start: Driver/library version "
                                  "mismatch"),
                  "%s", bad.err);
        cr_expect_eq(cli_count_lines(bad.err), 1, "%s", bad.err);
    }
    cli_result_free(&bad);
    cli_result_free(&plain);
}

Test(nvml_watch, bad_combinations) {
    const char *a1[] = {"watch", "--processes", "--host", NULL};
    cli_result r = cli_run(a1);
    cr_expect_eq(r.exit_code, 2);
    cr_expect_str_eq(r.err, "vramkit: watch: --processes lists GPU processes: it does not go with --host\n");
    cr_expect_str_eq(r.out, "");
    cli_result_free(&r);
    const char *a2[] = {"watch", "--processes", "--csv", NULL};
    r = cli_run(a2);
    cr_expect_eq(r.exit_code, 2);
    cr_expect_str_eq(r.err, "vramkit: watch: --processes goes with text or --json output, not --csv\n");
    cli_result_free(&r);
}

/* ---- the seam without any library: a scripted table ------------------------------------------ */

typedef struct script {
    uint64_t used;
    int fail_memory;
} script;

static vram_status s_open(void *c) { (void)c; return VRAM_OK; }
static void s_close(void *c) { (void)c; }
static vram_status s_driver(void *c, char *b, size_t n) { (void)c; snprintf(b, n, "1.0"); return VRAM_OK; }
static vram_status s_count(void *c, int *n) { (void)c; *n = 1; return VRAM_OK; }
static vram_status s_name(void *c, int d, char *b, size_t n) { (void)c; (void)d; snprintf(b, n, "Scripted"); return VRAM_OK; }
static vram_status s_memory(void *c, int d, uint64_t *t, uint64_t *f, uint64_t *u) {
    script *s = c;
    (void)d;
    if (s->fail_memory) return VRAM_E_CUDA_STICKY;
    *t = 1000;
    *u = s->used;
    *f = 1000 - s->used;
    return VRAM_OK;
}
static vram_status s_procs(void *c, int d, vram_gpumem_proc *o, int cap, int *n) {
    (void)c; (void)d; (void)o; (void)cap;
    *n = 0;
    return VRAM_OK;
}
static const char *s_error(void *c) { (void)c; return "scripted failure"; }
static vram_status s_cc(void *c, int d, int *ma, int *mi) { (void)c; (void)d; *ma = 8; *mi = 9; return VRAM_OK; }
static vram_status s_mig(void *c, int d, int *on) { (void)c; (void)d; *on = 0; return VRAM_OK; }

/* gpustats (what watch samples through) over a scripted gpumem table: the samples follow the
 * script, and a failing read is reported as the backend's failure. */
Test(nvml, a_scripted_table_drives_gpustats) {
    script sc = {100, 0};
    vram_gpumem_ops m = {VRAM_GPUMEM_API_VERSION, sizeof m, "mock", &sc, s_open, s_close,
                         s_driver, s_count, s_name, s_memory, s_procs, s_error, s_cc, s_mig};
    cr_assert_eq(vram_gpumem_ops_check(&m), VRAM_OK);
    vram_device_ops d = vram_gpumem_device_ops(&m);
    vram_gpustats *g = NULL;
    char err[256];
    cr_assert_eq(vram_gpustats_open(&d, NULL, &g, err, sizeof err), VRAM_OK, "%s", err);
    cr_expect_str_eq(vram_gpustats_backend(g), "mock");
    cr_expect_str_eq(vram_gpustats_device_name(g, 0), "Scripted");
    vram_monitor_sample s;
    cr_assert_eq(vram_gpustats_sample(g), VRAM_OK);
    cr_assert_eq(vram_gpustats_last(g, 0, &s), VRAM_OK);
    cr_expect_eq(s.used_bytes, 100u);
    sc.used = 950;
    cr_assert_eq(vram_gpustats_sample(g), VRAM_OK);
    cr_assert_eq(vram_gpustats_last(g, 0, &s), VRAM_OK);
    cr_expect_eq(s.used_bytes, 950u);
    cr_expect_gt(vram_gpustats_pending(g), 0u, "95%% used: near_limit");
    sc.fail_memory = 1;
    cr_expect_eq(vram_gpustats_sample(g), VRAM_E_CUDA_STICKY);
    vram_gpustats_close(g);
}
