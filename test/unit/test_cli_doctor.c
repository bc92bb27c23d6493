/* `vramkit doctor`: on this machine (no NVIDIA driver) a plain "no NVIDIA driver" report
 * and exit 3, text and JSON alike; one clear line and exit 2 for every bad input; and the
 * whole command path over the mock (vram_doctor_cli with the device table, the environment,
 * the platform files and the probes injected), so the report and the exit codes of GPU
 * machines -- a clean H100, user-reports/003's vGPU, a co-tenant, probes that contradict
 * an attribute -- are tested without a GPU. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_run.h"
#include "cli/cli.h"
#include "doctor/doctor.h"
#include "json_check.h"
#include "mock_device.h"

#define GB UINT64_C(1000000000)

/* ---- the built binary, on this machine ------------------------------------------------ */

/* The binary's own view needs a machine without an NVIDIA driver, like the dev box. */
static int machine_has_nvidia_driver(void) { return access("/proc/driver/nvidia/version", F_OK) == 0; }

Test(cli_doctor, no_driver_here_says_so_plainly_and_exits_3) {
    if (machine_has_nvidia_driver()) cr_skip_test("this machine has an NVIDIA driver");
    const char *args[] = {"doctor", NULL};
    const char *env[] = {"CUDA_VISIBLE_DEVICES=0", "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", NULL};
    cli_result r = cli_run_env(args, env);
    cr_assert_eq(r.exit_code, 3, "exit %d signal %d\nstdout:\n%s\nstderr:\n%s", r.exit_code, r.signal, r.out, r.err);
    cr_expect(strncmp(r.out, "vramkit doctor: no NVIDIA driver found: no GPU can be used here\n",
                      strlen("vramkit doctor: no NVIDIA driver found: no GPU can be used here\n")) == 0,
              "headline:\n%s", r.out);
    cr_expect(strstr(r.out, "[error] no_driver") != NULL, "%s", r.out);
    cr_expect(strstr(r.out, "recommendation: use the CPU strategy") != NULL, "%s", r.out);
    cr_expect(strstr(r.out, "\"expandable_segments:True\"") != NULL, "the environment is shown");
    /* no loader error, no crash: one line on stderr that says the same */
    cr_expect_eq(cli_count_lines(r.err), 1, "%s", r.err);
    cr_expect(strncmp(r.err, "vramkit: doctor: no NVIDIA driver found", 39) == 0, "%s", r.err);
    cr_expect(strstr(r.err, "CPU") != NULL, "%s", r.err);
    cli_result_free(&r);
}

Test(cli_doctor, json_says_the_same_and_is_one_valid_document) {
    if (machine_has_nvidia_driver()) cr_skip_test("this machine has an NVIDIA driver");
    const char *targs[] = {"doctor", NULL}, *jargs[] = {"doctor", "--json", NULL};
    const char *env[] = {"CUDA_LAUNCH_BLOCKING=1", NULL};
    cli_result t = cli_run_env(targs, env), j = cli_run_env(jargs, env);
    cr_assert_eq(j.exit_code, 3, "%s", j.err);
    cr_expect_eq(t.exit_code, j.exit_code);
    cr_expect_eq(cli_count_lines(j.out), 1);
    cJSON *doc = jparse(j.out);
    cr_expect_str_eq(jstr(doc, "verdict"), "no_gpu");
    cr_expect_str_eq(jstr(doc, "headline"), "no NVIDIA driver found");
    cr_expect_eq(jnum(doc, "exit_code"), 3);
    cr_expect_eq(jnum(doc, "usable_gpus"), 0);
    cr_expect_str_eq(jstr(doc, "snapshot_status"), "VRAM_E_NO_DRIVER");
    cr_expect_eq(jnum(jget(doc, "driver"), "cuda_version"), 0);
    cr_expect_eq(cJSON_GetArraySize(jget(doc, "devices")), 0);
    cr_expect_str_eq(jstr(jget(doc, "environment"), "CUDA_LAUNCH_BLOCKING"), "1");
    cr_expect(cJSON_IsNull(jget(jget(doc, "environment"), "CUDA_VISIBLE_DEVICES")) ||
                  cJSON_IsString(jget(jget(doc, "environment"), "CUDA_VISIBLE_DEVICES")));
    /* every finding of the JSON is in the text, with the same summary and remedy */
    const cJSON *fs = jget(doc, "findings"), *f;
    cr_assert_eq(cJSON_GetArraySize(fs), 2, "no_driver and launch_blocking");
    cr_expect_str_eq(jstr(cJSON_GetArrayItem(fs, 0), "id"), "no_driver");
    cr_expect_str_eq(jstr(cJSON_GetArrayItem(fs, 1), "id"), "launch_blocking");
    cJSON_ArrayForEach(f, fs) {
        char head[128];
        snprintf(head, sizeof head, "[%s] %s", jstr(f, "severity"), jstr(f, "id"));
        cr_expect(strstr(t.out, head) != NULL, "text lacks %s", head);
        cr_expect(strstr(t.out, jstr(f, "summary")) != NULL, "text lacks summary %s", jstr(f, "summary"));
        cr_expect(strstr(t.out, jstr(f, "remedy")) != NULL, "text lacks remedy of %s", jstr(f, "id"));
    }
    const cJSON *nd = cJSON_GetArrayItem(fs, 0);
    cr_expect(strstr(jstr(nd, "summary"), "no NVIDIA driver found") != NULL);
    cr_expect_eq(jnum(jget(nd, "evidence"), "cuda_error"), 35);
    cr_expect_eq(jnum(jget(nd, "evidence"), "runtime"), jnum(doc, "runtime_version"));
    cr_expect_eq(jnum(jget(doc, "counts"), "error"), 1);
    cr_expect_eq(jnum(jget(doc, "counts"), "warning"), 1);
    cJSON_Delete(doc);
    cli_result_free(&t);
    cli_result_free(&j);
}

Test(cli_doctor, help_answers_the_questions) {
    const char *args[] = {"doctor", "--help", NULL};
    cli_result r = cli_run(args);
    cr_assert_eq(r.exit_code, 0);
    cr_expect_str_empty(r.err);
    static const char *const must[] = {"usage: vramkit doctor", "--probe", "--model", "--need", "--arch",
                                       "--json", "--list-models", "exit codes", "3 no GPU can be used",
                                       "examples:", "PYTORCH_CUDA_ALLOC_CONF", "CUDA_VISIBLE_DEVICES",
                                       "operation not", "CPU strategy", "--batch"};
    for (size_t i = 0; i < sizeof must / sizeof must[0]; i++)
        cr_expect(strstr(r.out, must[i]) != NULL, "help lacks '%s'", must[i]);
    cli_result_free(&r);
    const char *top[] = {"--help", NULL};
    r = cli_run(top);
    cr_expect(strstr(r.out, "  doctor ") != NULL, "vramkit --help lists doctor:\n%s", r.out);
    cli_result_free(&r);
}

Test(cli_doctor, list_models) {
    const char *args[] = {"doctor", "--list-models", NULL};
    cli_result r = cli_run(args);
    cr_assert_eq(r.exit_code, 0);
    cr_expect(strstr(r.out, "gpt2") != NULL);
    cli_result_free(&r);
}

typedef struct bad_case {
    char args[8][48];
    char needle[64];
} bad_case;

ParameterizedTestParameters(cli_doctor, bad_usage) {
    static bad_case cases[] = {
        {{"doctor", "--bogus"}, "unknown option '--bogus'"},
        {{"doctor", "--model"}, "--model needs a value"},
        {{"doctor", "--need"}, "--need needs a value"},
        {{"doctor", "--need", "0"}, "--need: '0'"},
        {{"doctor", "--need", "lots"}, "--need: 'lots'"},
        {{"doctor", "--arch", "9"}, "--arch: '9'"},
        {{"doctor", "--arch", "sm_90,banana"}, "--arch: 'sm_90,banana'"},
        {{"doctor", "--arch", ","}, "--arch: ','"},
        {{"doctor", "--batch", "4"}, "give --model MODEL"},
        {{"doctor", "gpt2"}, "unexpected argument 'gpt2'"},
        {{"doctor", "--model", "gpt2", "--need", "1GiB"}, "give one"},
        {{"doctor", "--model", "no-such-model-xyz"}, "no-such-model-xyz"},
        {{"doctor", "--model", "gpt2", "--batch", "0"}, "--batch"},
    };
    return cr_make_param_array(bad_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(bad_case *c, cli_doctor, bad_usage) {
    cli_expect_usage_error(c->args, 8, c->needle, "vramkit: doctor: ");
}

/* ---- the command path over the mock ----------------------------------------------------- */

static vram_mock m;
static vram_device_ops ops;
static vram_doctor_config cfg;
static char tmpdir[64];
static const char *env_names[8], *env_values[8];
static int n_env;

static const char *fake_getenv(const char *name) {
    for (int i = 0; i < n_env; i++)
        if (strcmp(env_names[i], name) == 0) return env_values[i];
    return NULL;
}

static void setenv_fake(const char *name, const char *value) {
    env_names[n_env] = name;
    env_values[n_env] = value;
    n_env++;
}

static char path_osrelease[128], path_version[128], path_tegra[128], path_nvver[128], path_gpus[128];

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    fclose(f);
}

/* A mock machine of n GPUs, no environment, platform files that do not exist yet. */
static void start(int n) {
    vram_mock_init(&m, n);
    ops = vram_mock_ops(&m);
    memset(&cfg, 0, sizeof cfg);
    cfg.ops = &ops;
    cfg.getenv_fn = fake_getenv;
    n_env = 0;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/vramkit-doctor-XXXXXX");
    cr_assert_not_null(mkdtemp(tmpdir));
    snprintf(path_osrelease, sizeof path_osrelease, "%s/osrelease", tmpdir);
    snprintf(path_version, sizeof path_version, "%s/version", tmpdir);
    snprintf(path_tegra, sizeof path_tegra, "%s/nv_tegra_release", tmpdir);
    snprintf(path_nvver, sizeof path_nvver, "%s/nvidia_version", tmpdir);
    snprintf(path_gpus, sizeof path_gpus, "%s/gpus", tmpdir);
    cfg.paths.osrelease = path_osrelease;
    cfg.paths.proc_version = path_version;
    cfg.paths.tegra_release = path_tegra;
    cfg.paths.nvidia_version = path_nvver;
    cfg.paths.nvidia_gpus = path_gpus;
    cfg.archs = "90"; /* not whatever this build was configured with */
}

static void finish(void) {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    cr_expect_eq(system(cmd), 0);
    cr_assert_eq(vram_mock_fini(&m, stderr), 0);
}

/* Runs `vramkit doctor ARGS...` in this process over cfg; returns the exit code and the
 * report in *text (malloc'd). */
static int doctor(char **text, ...) {
    char *argv[16];
    int argc = 0;
    argv[argc++] = (char *)"doctor";
    va_list ap;
    va_start(ap, text);
    const char *a;
    while ((a = va_arg(ap, const char *)) != NULL && argc < 15) argv[argc++] = (char *)a;
    va_end(ap);
    argv[argc] = NULL;
    FILE *f = tmpfile();
    cr_assert_not_null(f);
    int rc = cli_doctor_with(argc, argv, &cfg, f);
    long n = ftell(f);
    rewind(f);
    *text = malloc((size_t)n + 1);
    size_t got = fread(*text, 1, (size_t)n, f);
    (*text)[got] = '\0';
    fclose(f);
    return rc;
}

static int has(const char *text, const char *needle) { return strstr(text, needle) != NULL; }

static const cJSON *finding(const cJSON *doc, const char *id) {
    const cJSON *f;
    cJSON_ArrayForEach(f, jget(doc, "findings")) {
        if (strcmp(jstr(f, "id"), id) == 0) return f;
    }
    return NULL;
}

Test(cli_doctor_mock, clean_h100_is_ready) {
    start(1);
    write_file(path_nvver, "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  Sun Jul 27 06:54:38 UTC 2025\n"
                           "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n");
    mkdir(path_gpus, 0755);
    char one[256];
    snprintf(one, sizeof one, "%s/0000:01:00.0", path_gpus);
    mkdir(one, 0755);
    char *t;
    int rc = doctor(&t, NULL);
    cr_expect_eq(rc, 0, "%s", t);
    cr_expect(has(t, "vramkit doctor: ready: 1 usable GPU(s), no errors"), "%s", t);
    cr_expect(has(t, "GPU 0: Mock H100"), "%s", t);
    cr_expect(has(t, "compute capability 9.0, 132 multiprocessors, 3 copy engines, compute mode default"), "%s", t);
    cr_expect(has(t, "memory: 80.00 GiB total, 80.00 GiB free, 0 B in use"), "%s", t);
    cr_expect(has(t, "VMM yes (POSIX fd handles yes), memory pools yes, host register yes"), "%s", t);
    cr_expect(has(t, "driver:   supports CUDA 13.0, kernel module 580.65.06"), "%s", t);
    cr_expect(has(t, "the kernel module knows 1 GPU(s)"), "%s", t);
    cr_expect(has(t, "probes: not run (--probe runs them)"), "%s", t);
    cr_expect(has(t, "findings: none"), "%s", t);
    cr_expect(!has(t, "recommendation: use the CPU"), "%s", t);
    free(t);
    rc = doctor(&t, "--json", NULL);
    cr_expect_eq(rc, 0);
    cJSON *doc = jparse(t);
    cr_expect_str_eq(jstr(doc, "verdict"), "ok");
    cr_expect_str_eq(jstr(jget(doc, "driver"), "kernel_module"), "580.65.06");
    cr_expect_eq(jnum(jget(doc, "platform"), "physical_gpus"), 1);
    const cJSON *d0 = cJSON_GetArrayItem(jget(doc, "devices"), 0);
    cr_expect_str_eq(jstr(d0, "name"), "Mock H100");
    cr_expect_eq(jnum(d0, "cc"), 90);
    cr_expect_eq(jnum(d0, "total_bytes"), 80.0 * (1 << 30));
    cr_expect_eq(jnum(d0, "multiprocessors"), 132);
    cr_expect(cJSON_IsTrue(jget(d0, "vmm")));
    cr_expect_eq(cJSON_GetArraySize(jget(doc, "findings")), 0);
    cJSON_Delete(doc);
    free(t);
    finish();
}

Test(cli_doctor_mock, vgpu_with_expandable_segments_user_report_003) {
    start(1);
    vram_mock_set_name(&m, 0, "NVIDIA A40-48C");
    vram_mock_set_attr(&m, 0, VRAM_ATTR_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 0);
    m.dev[0].info.cc_major = 8;
    m.dev[0].info.cc_minor = 6;
    setenv_fake("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True");
    cfg.archs = "80,86";
    char *t;
    int rc = doctor(&t, NULL);
    cr_expect_eq(rc, 1, "%s", t);
    cr_expect(has(t, "vramkit doctor: 1 error(s) to fix; 1 usable GPU(s)"), "%s", t);
    cr_expect(has(t, "[error] expandable_segments_no_vmm, GPU 0"), "%s", t);
    cr_expect(has(t, "'CUDA driver error: operation not supported' (801)"), "%s", t);
    cr_expect(has(t, "(attribute no, probe CUDA error none)"), "%s", t);
    cr_expect(has(t, "remedy: set expandable_segments:False in PYTORCH_CUDA_ALLOC_CONF"), "%s", t);
    cr_expect(has(t, "[info] platform_vgpu"), "%s", t);
    /* the error is listed before the info */
    cr_expect(strstr(t, "[error]") < strstr(t, "[info]"), "%s", t);
    free(t);
    /* PYTORCH_ALLOC_CONF wins over the CUDA-specific name, as in PyTorch */
    setenv_fake("PYTORCH_ALLOC_CONF", "expandable_segments:False");
    rc = doctor(&t, NULL);
    cr_expect_eq(rc, 0, "%s", t);
    cr_expect(has(t, "PYTORCH_ALLOC_CONF       \"expandable_segments:False\""), "%s", t);
    cr_expect(has(t, "[info] vmm_unsupported, GPU 0"), "%s", t);
    free(t);
    finish();
}

/* Scripted probes: every probe works except the kinds in `failing`. */
static unsigned failing;
static int probe_calls;
static vram_status fake_probe(int device, vram_probe_kind kind, int timeout_ms, vram_probe_result *out) {
    (void)timeout_ms;
    probe_calls++;
    out->kind = kind;
    out->device = device;
    out->ran = 1;
    out->seconds = 0.25;
    if (failing & (1u << kind)) {
        out->status = VRAM_E_NOT_SUPPORTED;
        out->cuda_error = 801;
        snprintf(out->detail, sizeof out->detail, "cuMemCreate: CUDA_ERROR_NOT_SUPPORTED");
    } else {
        out->status = VRAM_OK;
    }
    return VRAM_OK;
}

static vram_status unsupported_probe(int device, vram_probe_kind kind, int timeout_ms, vram_probe_result *out) {
    (void)device;
    (void)kind;
    (void)timeout_ms;
    out->ran = 0;
    snprintf(out->detail, sizeof out->detail, "this build has no CUDA parts");
    return VRAM_E_NOT_BUILT;
}

Test(cli_doctor_mock, probes_all_ok) {
    start(2);
    cfg.probe_fn = fake_probe;
    failing = 0;
    probe_calls = 0;
    char *t;
    int rc = doctor(&t, "--probe", NULL);
    cr_expect_eq(rc, 0, "%s", t);
    cr_expect_eq(probe_calls, 2 * VRAM_PROBE_COUNT, "every probe on every GPU");
    cr_expect(has(t, "probes: vmm ok, pinned ok, pool ok, kernel ok, alloc90 ok"), "%s", t);
    free(t);
    rc = doctor(&t, "--probe", "--json", NULL);
    cJSON *doc = jparse(t);
    const cJSON *p, *probes = jget(cJSON_GetArrayItem(jget(doc, "devices"), 1), "probes");
    cr_expect_eq(cJSON_GetArraySize(probes), VRAM_PROBE_COUNT);
    cJSON_ArrayForEach(p, probes) {
        cr_expect(cJSON_IsTrue(jget(p, "ran")) && cJSON_IsTrue(jget(p, "ok")), "%s", jstr(p, "name"));
        cr_expect_eq(jnum(p, "seconds"), 0.25);
    }
    cJSON_Delete(doc);
    free(t);
    /* without --probe none runs */
    probe_calls = 0;
    rc = doctor(&t, NULL);
    cr_expect_eq(probe_calls, 0);
    free(t);
    finish();
}

/* A probe that notes how many GPUs this process holds a context on while it runs. */
static int contexts_during_probes;
static vram_status context_probe(int device, vram_probe_kind kind, int timeout_ms, vram_probe_result *out) {
    int held = vram_mock_contexts(&m);
    if (held > contexts_during_probes) contexts_during_probes = held;
    return fake_probe(device, kind, timeout_ms, out);
}

Test(cli_doctor_mock, no_context_is_held_while_the_probes_run) {
    start(3);
    m.dev[2].info.compute_mode = VRAM_COMPUTE_PROHIBITED; /* never had one */
    cfg.probe_fn = context_probe;
    failing = 0;
    probe_calls = 0;
    contexts_during_probes = -1;
    char *t;
    int rc = doctor(&t, "--probe", NULL);
    cr_expect_eq(rc, 1, "the prohibited GPU is an error-level finding: %s", t);
    cr_assert_eq(probe_calls, 2 * VRAM_PROBE_COUNT);
    cr_assert_eq(m.dev[0].contexts_made + m.dev[1].contexts_made, 2, "the snapshot read both GPUs");
    cr_assert_eq(contexts_during_probes, 0, "the probes ran beside contexts this process held");
    cr_assert_eq(m.dev[0].releases + m.dev[1].releases, 2);
    cr_assert_eq(m.dev[2].releases, 0, "nothing held there, nothing to give back");
    free(t);
    /* the gathering records what each release said */
    static vram_doctor_report rep;
    cfg.probe = 1;
    cr_assert_eq(vram_doctor_gather(&cfg, &rep), VRAM_OK);
    for (int d = 0; d < 3; d++) cr_assert_eq(rep.released[d], VRAM_OK, "GPU %d", d);
    /* without --probe nothing needs giving back */
    uint64_t before = m.dev[0].releases;
    cfg.probe = 0;
    rc = doctor(&t, NULL);
    cr_assert_eq(m.dev[0].releases, before);
    free(t);
    finish();
}

Test(cli_doctor_mock, probe_contradicts_the_attribute) {
    start(1); /* the attribute says VMM yes */
    cfg.probe_fn = fake_probe;
    failing = 1u << VRAM_PROBE_VMM;
    setenv_fake("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True");
    char *t;
    int rc = doctor(&t, "--probe", "--json", NULL);
    cr_expect_eq(rc, 1, "%s", t);
    cJSON *doc = jparse(t);
    const cJSON *c = finding(doc, "probe_contradicts_attribute");
    cr_assert_not_null(c, "%s", t);
    cr_expect(has(jstr(c, "summary"), "the vmm attribute says yes but doing it for real says no"), "%s",
              jstr(c, "summary"));
    cr_expect(has(jstr(c, "summary"), "the probe wins"));
    const cJSON *e = finding(doc, "expandable_segments_no_vmm");
    cr_assert_not_null(e);
    cr_expect_eq(jnum(jget(e, "evidence"), "probe_error"), 801);
    const cJSON *p0 = cJSON_GetArrayItem(jget(cJSON_GetArrayItem(jget(doc, "devices"), 0), "probes"), 0);
    cr_expect_str_eq(jstr(p0, "name"), "vmm");
    cr_expect(cJSON_IsFalse(jget(p0, "ok")));
    cr_expect_str_eq(jstr(p0, "detail"), "cuMemCreate: CUDA_ERROR_NOT_SUPPORTED");
    cJSON_Delete(doc);
    free(t);
    rc = doctor(&t, "--probe", NULL);
    cr_expect(has(t, "probes: vmm FAILED, pinned ok"), "%s", t);
    cr_expect(has(t, "    vmm: cuMemCreate: CUDA_ERROR_NOT_SUPPORTED"), "%s", t);
    free(t);
    finish();
}

Test(cli_doctor_mock, probes_that_cannot_run_are_not_verdicts) {
    start(1);
    cfg.probe_fn = unsupported_probe;
    char *t;
    int rc = doctor(&t, "--probe", NULL);
    cr_expect_eq(rc, 0, "%s", t);
    cr_expect(has(t, "vmm not run (this vramkit was built without the part this needs)"), "%s", t);
    cr_expect(has(t, "findings: none"), "%s", t);
    free(t);
    finish();
}

Test(cli_doctor_mock, cotenant_and_need) {
    start(1);
    vram_mock_set_name(&m, 0, "NVIDIA GeForce RTX 3070");
    vram_mock_set_memory(&m, 0, 8 * GB, 3300000000u);
    m.dev[0].info.cc_major = 8;
    m.dev[0].info.cc_minor = 6;
    cfg.archs = "86";
    char *t;
    int rc = doctor(&t, "--need", "4GB", NULL);
    cr_expect_eq(rc, 1, "%s", t);
    cr_expect(has(t, "[error] model_does_not_fit, GPU 0"), "%s", t);
    cr_expect(has(t, "the model needs 3.73 GiB; the GPU with the most free memory has 3.07 GiB free: 667.57 MiB short"),
              "%s", t);
    cr_expect(has(t, "[warning] cotenant, GPU 0"), "%s", t);
    cr_expect(has(t, "4.38 GiB of 7.45 GiB is already in use (other processes, this one's CUDA context); 3.07 GiB is free"), "%s", t);
    free(t);
    rc = doctor(&t, "--need", "2.5GB", "--json", NULL);
    cr_expect_eq(rc, 0, "%s", t);
    cJSON *doc = jparse(t);
    const cJSON *f = finding(doc, "model_fits");
    cr_assert_not_null(f, "%s", t);
    cr_expect_eq(jnum(jget(f, "evidence"), "left"), 800000000.0);
    cr_expect_eq(jnum(jget(finding(doc, "cotenant"), "evidence"), "used"), 4700000000.0);
    cr_expect_eq(jnum(jget(doc, "model"), "need_bytes"), 2500000000.0);
    cJSON_Delete(doc);
    free(t);
    finish();
}

Test(cli_doctor_mock, model_gives_need_and_preset) {
    start(1);
    char *t;
    int rc = doctor(&t, "--model", "gpt2", "--json", NULL);
    cr_expect_eq(rc, 0, "%s", t);
    cJSON *doc = jparse(t);
    const cJSON *mo = jget(doc, "model");
    cr_expect_str_eq(jstr(mo, "label"), "gpt2");
    cr_expect_gt(jnum(mo, "need_bytes"), 120e6 * 2, "at least its fp16 weights");
    cr_expect_lt(jnum(mo, "need_bytes"), 8e9);
    cr_expect_str_eq(jstr(mo, "preset"), "fp16");
    cr_expect_eq(jnum(mo, "device"), 0);
    const cJSON *f = finding(doc, "model_fits");
    cr_assert_not_null(f);
    cr_expect_eq(jnum(jget(f, "evidence"), "need"), jnum(mo, "need_bytes"));
    cJSON_Delete(doc);
    free(t);
    finish();
}

Test(cli_doctor_mock, no_driver_recommends_the_cpu_with_the_model) {
    start(1);
    vram_mock_no_driver(&m);
    char *t;
    int rc = doctor(&t, "--model", "gpt2", NULL);
    cr_expect_eq(rc, 3, "%s", t);
    cr_expect(has(t, "vramkit doctor: no NVIDIA driver found: no GPU can be used here"), "%s", t);
    cr_expect(has(t, "recommendation: use the CPU strategy: no GPU can be used here (gpt2 needs"), "%s", t);
    free(t);
    finish();
}

Test(cli_doctor_mock, prohibited_gpu_is_not_usable) {
    start(1);
    m.dev[0].info.compute_mode = VRAM_COMPUTE_PROHIBITED;
    cfg.probe_fn = fake_probe;
    probe_calls = 0;
    char *t;
    int rc = doctor(&t, "--probe", NULL);
    cr_expect_eq(rc, 3, "%s", t);
    cr_expect_eq(probe_calls, 0, "no probe on a prohibited GPU");
    cr_expect(has(t, "the GPU refuses CUDA contexts (compute mode)"), "%s", t);
    cr_expect(has(t, "[error] compute_prohibited, GPU 0"), "%s", t);
    cr_expect(has(t, "vmm not run (compute mode prohibited)"), "%s", t);
    free(t);
    finish();
}

Test(cli_doctor_mock, visible_devices_names_a_missing_gpu) {
    start(0); /* CUDA_VISIBLE_DEVICES=7 on a one-GPU machine: CUDA sees nothing */
    mkdir(path_gpus, 0755);
    char one[256];
    snprintf(one, sizeof one, "%s/0000:01:00.0", path_gpus);
    mkdir(one, 0755);
    setenv_fake("CUDA_VISIBLE_DEVICES", "7");
    char *t;
    int rc = doctor(&t, "--json", NULL);
    cr_expect_eq(rc, 3, "%s", t);
    cJSON *doc = jparse(t);
    cr_expect_str_eq(jstr(doc, "headline"), "CUDA_VISIBLE_DEVICES hides every GPU");
    const cJSON *f = finding(doc, "visible_devices_hide_all");
    cr_assert_not_null(f, "%s", t);
    cr_expect_eq(jnum(jget(f, "evidence"), "physical_gpus"), 1);
    cr_expect_str_eq(jstr(f, "evidence_text"), "stop_at 0, stop nonexistent, entries 1, physical_gpus 1");
    cr_expect_null(finding(doc, "no_device"));
    cJSON_Delete(doc);
    free(t);
    finish();
}

Test(cli_doctor_mock, platform_files) {
    start(1);
    write_file(path_osrelease, "5.15.153.1-microsoft-standard-WSL2\n");
    write_file(path_tegra, "# R35 (release), REVISION: 4.1\n");
    char *t;
    int rc = doctor(&t, "--json", NULL);
    cr_expect_eq(rc, 0, "%s", t);
    cJSON *doc = jparse(t);
    cr_expect(cJSON_IsTrue(jget(jget(doc, "platform"), "wsl2")));
    cr_expect(cJSON_IsTrue(jget(jget(doc, "platform"), "jetson")));
    cr_expect_not_null(finding(doc, "platform_wsl2"));
    cr_expect_not_null(finding(doc, "platform_jetson"));
    cJSON_Delete(doc);
    free(t);
    /* /proc/version is a second witness; other kernels are not WSL */
    unlink(path_osrelease);
    unlink(path_tegra);
    write_file(path_version, "Linux version 6.1.0-18-amd64 (debian-kernel@lists.debian.org)\n");
    rc = doctor(&t, NULL);
    cr_expect(has(t, "platform: Linux"), "%s", t);
    free(t);
    write_file(path_version, "Linux version 5.15.90.1-microsoft-standard-WSL2 (oe-user@oe-host)\n");
    rc = doctor(&t, NULL);
    cr_expect(has(t, "platform: WSL2"), "%s", t);
    free(t);
    finish();
}

Test(cli_doctor_mock, gather_reports_what_it_found) {
    start(1);
    setenv_fake("LD_LIBRARY_PATH", "/usr/local/cuda/compat");
    setenv_fake("CUDA_LAUNCH_BLOCKING", "1");
    write_file(path_nvver, "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.133.20  Release Build\n");
    static vram_doctor_report rep;
    cr_assert_eq(vram_doctor_gather(&cfg, &rep), VRAM_OK);
    cr_expect_str_eq(rep.backend, "mock");
    cr_expect_str_eq(rep.kernel_module, "570.133.20");
    cr_expect_eq(rep.facts.driver_branch, 570);
    cr_expect_str_eq(rep.facts.ld_library_path, "/usr/local/cuda/compat");
    cr_expect_str_eq(rep.facts.cuda_launch_blocking, "1");
    cr_expect_null(rep.facts.alloc_conf);
    cr_expect_null(rep.alloc_conf_var);
    cr_expect_eq(rep.facts.physical_gpus, 0, "no gpus directory: unknown");
    cr_expect_eq(rep.snap.status, VRAM_OK);
    cr_expect(rep.facts.snap == &rep.snap);
    cr_expect_str_eq(rep.archs_source, "option");
    cr_expect_eq(rep.facts.n_archs, 1);
    /* a bad list is refused before anything is read */
    cfg.archs = "nine";
    cr_expect_eq(vram_doctor_gather(&cfg, &rep), VRAM_E_FORMAT);
    cr_expect_eq(vram_doctor_gather(&cfg, NULL), VRAM_E_INVALID);
    /* the probe kinds map one to one */
    for (int k = 0; k < VRAM_PROBE_COUNT; k++)
        cr_expect_str_eq(vram_diag_probe_name(vram_doctor_probe_kind((vram_probe_kind)k)),
                         vram_probe_name((vram_probe_kind)k));
    cr_expect_eq(vram_doctor_probe_kind(VRAM_PROBE_COUNT), VRAM_DIAG_PROBE_COUNT);
    finish();
}
