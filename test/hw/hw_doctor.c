/* hw_doctor.c — `vramkit doctor` on a real GPU (label hw; exits 77 when no CUDA device can
 * be used). The built binary, with --probe, exits 0 and reports every probe run and passed
 * on every GPU, in JSON and in text; its snapshot names the GPUs cudart names (total memory
 * as cudaMemGetInfo says, what the backend reports); the gathering holds no context on any
 * GPU while its probes run; and a build architecture list that cannot run on the GPU turns
 * into an error-level finding (exit 1). */
#include <cjson/cJSON.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hw_common.h"
#include "hw_context.h"

#include <vramkit/diagnose.h>

#include "cuda/cuda_device.h"
#include "doctor/doctor.h"
#include "probe/probe.h"
#include "device/snapshot.h"

static char exe[PATH_MAX + 32];

/* The built vramkit: <build>/test/hw/hw_doctor -> <build>/driver/vramkit. It is also the
 * probe child of the in-process gathering below. */
static void setup(void) {
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    cr_assert_gt(n, 0);
    self[n] = '\0';
    snprintf(exe, sizeof exe, "%s/../../driver/vramkit", dirname(self));
    cr_assert_eq(access(exe, X_OK), 0, "the vramkit executable is not at %s", exe);
    const char *set = getenv(VRAM_PROBE_EXE_ENV);
    if (set == NULL || set[0] == '\0') cr_assert_eq(setenv(VRAM_PROBE_EXE_ENV, exe, 1), 0);
}

TestSuite(hw_doctor, .init = setup, .timeout = 600);

/* Runs `vramkit doctor ARGS` without the settings that would add findings of their own;
 * returns the exit code and stdout (malloc'd). */
static int run_doctor(const char *args, char **text) {
    char cmd[PATH_MAX + 256];
    snprintf(cmd, sizeof cmd,
             "env -u CUDA_LAUNCH_BLOCKING -u PYTORCH_CUDA_ALLOC_CONF -u PYTORCH_ALLOC_CONF %s doctor %s", exe, args);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p, "%s", cmd);
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    size_t got;
    while ((got = fread(buf + n, 1, cap - n - 1, p)) > 0) {
        n += got;
        if (cap - n < 1024) buf = realloc(buf, cap *= 2);
    }
    buf[n] = '\0';
    int status = pclose(p);
    *text = buf;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static const cJSON *get(const cJSON *o, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    cr_assert_not_null(v, "no '%s'", key);
    return v;
}

Test(hw_doctor, probe_exits_0_and_every_probe_ran_ok) {
    int gpus = 0;
    cr_assert_eq(cudaGetDeviceCount(&gpus), cudaSuccess);
    char *t;
    int rc = run_doctor("--probe --json", &t);
    cJSON *doc = cJSON_Parse(t);
    cr_assert_not_null(doc, "not JSON:\n%s", t);
    cr_expect_eq(rc, 0, "exit %d:\n%s", rc, t);
    cr_expect_str_eq(get(doc, "verdict")->valuestring, "ok");
    cr_expect_eq(get(doc, "usable_gpus")->valueint, gpus);
    cr_expect_eq(get(get(doc, "counts"), "error")->valueint, 0, "%s", t);
    cr_expect_gt(get(get(doc, "driver"), "cuda_version")->valueint, 0);
    const cJSON *devs = get(doc, "devices"), *d;
    cr_assert_eq(cJSON_GetArraySize(devs), gpus);
    cJSON_ArrayForEach(d, devs) {
        const cJSON *probes = get(d, "probes"), *p;
        cr_expect_eq(cJSON_GetArraySize(probes), VRAM_PROBE_COUNT);
        cJSON_ArrayForEach(p, probes) {
            cr_expect(cJSON_IsTrue(get(p, "ran")), "GPU %d probe %s did not run: %s", get(d, "ordinal")->valueint,
                      get(p, "name")->valuestring, get(p, "detail")->valuestring);
            cr_expect(cJSON_IsTrue(get(p, "ok")), "GPU %d probe %s failed: %s", get(d, "ordinal")->valueint,
                      get(p, "name")->valuestring, get(p, "detail")->valuestring);
        }
    }
    cJSON_Delete(doc);
    free(t);
}

Test(hw_doctor, text_report_says_ready) {
    char *t;
    int rc = run_doctor("--probe", &t);
    cr_expect_eq(rc, 0, "%s", t);
    cr_expect(strstr(t, "vramkit doctor: ready: ") != NULL, "%s", t);
    cr_expect(strstr(t, "probes: vmm ok, pinned ok, pool ok, kernel ok, alloc90 ok") != NULL, "%s", t);
    free(t);
}

Test(hw_doctor, gathered_snapshot_names_what_cudart_names) {
    static vram_doctor_report rep;
    cr_assert_eq(vram_doctor_gather(NULL, &rep), VRAM_OK);
    cr_assert_eq(rep.snap.status, VRAM_OK, "%s", vram_status_str(rep.snap.status));
    int gpus = 0;
    cr_assert_eq(cudaGetDeviceCount(&gpus), cudaSuccess);
    cr_assert_eq(rep.snap.device_count, gpus);
    for (int i = 0; i < gpus; i++) {
        struct cudaDeviceProp prop;
        cr_assert_eq(cudaGetDeviceProperties(&prop, i), cudaSuccess);
        cr_expect_str_eq(rep.snap.devices[i].name, prop.name);
        cr_expect_eq(rep.snap.devices[i].cc_major, prop.major);
        cr_expect_eq(rep.snap.devices[i].cc_minor, prop.minor);
        /* the backend reports cudaMemGetInfo's total (which can be below totalGlobalMem) */
        size_t free_b = 0, total_b = 0;
        cr_assert_eq(cudaSetDevice(i), cudaSuccess);
        cr_assert_eq(cudaMemGetInfo(&free_b, &total_b), cudaSuccess);
        cr_expect_eq(rep.snap.devices[i].total_bytes, (uint64_t)total_b, "GPU %d: total %llu, cudaMemGetInfo %llu", i,
                     (unsigned long long)rep.snap.devices[i].total_bytes, (unsigned long long)total_b);
        cr_expect_leq(rep.snap.devices[i].total_bytes, (uint64_t)prop.totalGlobalMem);
    }
    cr_expect_eq(vram_diag_usable_gpus(&rep.facts), gpus);
}

/* Stands in for the probe children: notes which GPUs this process holds while they run. */
static int held_during_probes;
static vram_status note_contexts(int device, vram_probe_kind kind, int timeout_ms, vram_probe_result *out) {
    (void)device;
    (void)kind;
    (void)timeout_ms;
    int n = 0;
    cr_assert_eq(cudaGetDeviceCount(&n), cudaSuccess);
    for (int d = 0; d < n; d++) held_during_probes += hw_context_active(d);
    out->ran = 0;
    return VRAM_E_NOT_BUILT;
}

Test(hw_doctor, no_context_is_held_while_the_probes_run) {
    static vram_doctor_report rep;
    vram_doctor_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.probe = 1;
    cfg.probe_fn = note_contexts;
    held_during_probes = 0;
    cr_assert_eq(vram_doctor_gather(&cfg, &rep), VRAM_OK);
    cr_assert_eq(rep.snap.status, VRAM_OK, "%s", vram_status_str(rep.snap.status));
    for (int d = 0; d < rep.snap.device_count; d++) cr_expect_eq(rep.released[d], VRAM_OK, "GPU %d", d);
    cr_expect_eq(held_during_probes, 0, "the probes ran beside %d context(s) of the doctor", held_during_probes);
    /* and the check means something: a snapshot alone does hold them */
    vram_device_ops ops;
    static vram_device_snapshot snap;
    cr_assert_eq(vram_cuda_ops(&ops), VRAM_OK);
    cr_assert_eq(vram_snapshot_take(&ops, &snap), VRAM_OK);
    cr_expect_eq(hw_context_active(0), 1, "a snapshot takes GPU 0's context");
    cr_assert_eq(ops.release_device(ops.ctx, 0), VRAM_OK);
    cr_expect_eq(hw_context_active(0), 0, "release_device gives it back");
    cr_assert_eq(ops.release_device(ops.ctx, 0), VRAM_OK, "twice is fine");
    cr_expect_eq(hw_context_active(0), 0, "and makes none");
}

Test(hw_doctor, an_architecture_the_gpu_cannot_run_is_an_error) {
    struct cudaDeviceProp prop;
    cr_assert_eq(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
    /* machine code for an older major than the GPU's: never runs on it */
    char args[64];
    snprintf(args, sizeof args, "--json --arch sm_%d0", prop.major - 1);
    char *t;
    int rc = run_doctor(args, &t);
    cr_expect_eq(rc, 1, "%s", t);
    cr_expect(strstr(t, "\"arch_not_in_build\"") != NULL, "%s", t);
    free(t);
    snprintf(args, sizeof args, "--json --arch %d%d", prop.major, prop.minor);
    rc = run_doctor(args, &t);
    cr_expect_eq(rc, 0, "%s", t);
    free(t);
}

VRAM_HW_MAIN()
