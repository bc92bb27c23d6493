/* test_probe.c — capability probes (driver/probe/probe.h) where no GPU is needed: names, argument
 * checks, the hidden `vramkit __probe` command (hidden from --help, bad usage, the result
 * line it prints), the parent's reading of that line, and every way a child can end badly
 * (crash, hang, silence, garbage: the VRAMKIT_PROBE_TEST hook) turning into a failed probe
 * with the reason, never a crash of the caller. On this machine (no driver) a CUDA build's
 * probe reports VRAM_E_NO_DRIVER with ran 0; a build without CUDA, VRAM_E_NOT_BUILT. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <vramkit/attempt.h>

#include "cli_run.h"
#include "cuda/cuda_device.h"
#include "isolate/isolate.h"
#include "probe/probe.h"

#ifdef VRAMKIT_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

static void use_vramkit_as_child(void) {
    /* this test program does not dispatch __probe: the built vramkit is the child */
    cr_assert_eq(setenv(VRAM_PROBE_EXE_ENV, VRAMKIT_EXE, 1), 0);
    cr_assert_eq(unsetenv(VRAM_PROBE_CHILD_ENV), 0);
    cr_assert_eq(unsetenv(VRAM_PROBE_TEST_ENV), 0);
}

TestSuite(probe, .init = use_vramkit_as_child, .timeout = 60);

/* 1 when cudart in this build finds a driver (then the probes really run). */
static int have_driver(void) {
#ifdef VRAMKIT_HAVE_CUDA
    int v = 0;
    return cudaDriverGetVersion(&v) == cudaSuccess && v > 0;
#else
    return 0;
#endif
}

static void assert_one_line(const char *s) {
    cr_assert(strchr(s, '\n') == NULL && strchr(s, '\r') == NULL, "detail is one line: '%s'", s);
    cr_assert_lt(strlen(s), sizeof(((vram_probe_result *)0)->detail));
}

/* ---- names ---------------------------------------------------------------------------- */

Test(probe, names_round_trip) {
    static const char *const want[VRAM_PROBE_COUNT] = {"vmm", "pinned", "pool", "kernel", "alloc90"};
    for (int k = 0; k < VRAM_PROBE_COUNT; k++) {
        cr_assert_str_eq(vram_probe_name((vram_probe_kind)k), want[k]);
        vram_probe_kind back = VRAM_PROBE_COUNT;
        cr_assert_eq(vram_probe_parse_name(want[k], &back), VRAM_OK);
        cr_assert_eq(back, (vram_probe_kind)k);
    }
    cr_assert_str_eq(vram_probe_name(VRAM_PROBE_COUNT), "unknown");
    cr_assert_str_eq(vram_probe_name((vram_probe_kind)-1), "unknown");
    vram_probe_kind k = VRAM_PROBE_POOL;
    cr_assert_eq(vram_probe_parse_name("VMM", &k), VRAM_E_INVALID, "names are case-sensitive");
    cr_assert_eq(vram_probe_parse_name("", &k), VRAM_E_INVALID);
    cr_assert_eq(vram_probe_parse_name("vmm ", &k), VRAM_E_INVALID);
    cr_assert_eq(vram_probe_parse_name(NULL, &k), VRAM_E_INVALID);
    cr_assert_eq(vram_probe_parse_name("vmm", NULL), VRAM_E_INVALID);
    cr_assert_eq(k, VRAM_PROBE_POOL, "untouched on failure");
}

/* ---- the public call ------------------------------------------------------------------ */

Test(probe, bad_requests) {
    vram_probe_result r;
    cr_assert_eq(vram_probe_run(0, VRAM_PROBE_VMM, 0, NULL), VRAM_E_INVALID);
    cr_assert_eq(vram_probe_run(-1, VRAM_PROBE_VMM, 0, &r), VRAM_E_INVALID);
    cr_assert_eq(r.ran, 0);
    cr_assert_eq(r.status, VRAM_E_INVALID);
    cr_assert_eq(r.device, -1);
    cr_assert_eq(vram_probe_run(0, VRAM_PROBE_COUNT, 0, &r), VRAM_E_INVALID);
    cr_assert_eq(vram_probe_run(0, (vram_probe_kind)-3, 0, &r), VRAM_E_INVALID);
    cr_assert_eq(vram_probe_run(0, VRAM_PROBE_KERNEL, -5, &r), VRAM_E_INVALID);
    cr_assert_eq(r.kind, VRAM_PROBE_KERNEL);
    assert_one_line(r.detail);
    cr_assert_eq(vram__probe_spawn(NULL, NULL, 0, VRAM_PROBE_VMM, 0, &r), VRAM_E_INVALID);
}

/* On this machine: a CUDA build finds no driver (the child says so, ran 0); a build
 * without CUDA spawns nothing and says why. */
Test(probe, every_probe_on_this_machine) {
    for (int k = 0; k < VRAM_PROBE_COUNT; k++) {
        vram_probe_result r;
        memset(&r, 0x5a, sizeof r);
        vram_status st = vram_probe_run(0, (vram_probe_kind)k, 0, &r);
        cr_assert_eq(r.kind, (vram_probe_kind)k);
        cr_assert_eq(r.device, 0);
        assert_one_line(r.detail);
        if (!vram_cuda_built()) {
            cr_assert_eq(st, VRAM_E_NOT_BUILT);
            cr_assert_eq(r.ran, 0);
            cr_assert_eq(r.status, VRAM_E_NOT_BUILT);
            cr_assert(strstr(r.detail, "without the CUDA parts") != NULL, "%s", r.detail);
        } else if (!have_driver()) {
            cr_assert_eq(st, VRAM_E_NO_DRIVER, "%s: %s", vram_status_name(st), r.detail);
            cr_assert_eq(r.ran, 0);
            cr_assert_eq(r.status, VRAM_E_NO_DRIVER);
            cr_assert_eq(r.cuda_error, 35, "cudaErrorInsufficientDriver, got %d", r.cuda_error);
            cr_assert(strstr(r.detail, "no NVIDIA driver found") != NULL, "%s", r.detail);
            cr_assert(strstr(r.detail, "cudaGetDeviceCount") != NULL, "%s", r.detail);
        } else {
            cr_assert_eq(st, VRAM_OK, "%s", r.detail); /* test/hw/hw_device.c checks verdicts */
            cr_assert_eq(r.ran, 1);
        }
    }
}

Test(probe, a_device_that_does_not_exist) {
    if (!vram_cuda_built()) cr_skip_test("no CUDA parts: nothing is spawned");
    vram_probe_result r;
    vram_status st = vram_probe_run(VRAM_MAX_DEVICES - 1, VRAM_PROBE_PINNED, 0, &r);
    cr_assert_eq(r.ran, 0, "%s", r.detail);
    /* without a driver that is what the child finds first */
    cr_assert_eq(st, have_driver() ? VRAM_E_NO_DEVICE : VRAM_E_NO_DRIVER, "%s", r.detail);
    cr_assert_eq(r.status, st);
}

Test(probe, refused_inside_a_probe_child) {
    if (!vram_cuda_built()) cr_skip_test("no CUDA parts: refused earlier, as unsupported");
    cr_assert_eq(setenv(VRAM_PROBE_CHILD_ENV, "1", 1), 0);
    vram_probe_result r;
    cr_assert_eq(vram_probe_run(0, VRAM_PROBE_VMM, 0, &r), VRAM_E_STATE);
    cr_assert_eq(r.ran, 0);
    cr_assert(strstr(r.detail, VRAM_PROBE_EXE_ENV) != NULL, "says what to set: %s", r.detail);
}

/* ---- children that end badly (the test hook), in both builds ------------------------- */

static vram_status spawn_hooked(const char *hook, vram_probe_kind kind, int timeout_ms, vram_probe_result *r) {
    char env[64];
    snprintf(env, sizeof env, "%s=%s", VRAM_PROBE_TEST_ENV, hook);
    const char *const envv[] = {env, NULL};
    memset(r, 0x5a, sizeof *r);
    return vram__probe_spawn(VRAMKIT_EXE, envv, 0, kind, timeout_ms, r);
}

Test(probe, child_that_segfaults_is_a_failed_probe) {
    vram_probe_result r;
    cr_assert_eq(spawn_hooked("segfault", VRAM_PROBE_KERNEL, 0, &r), VRAM_OK, "it ran");
    cr_assert_eq(r.ran, 1);
    cr_assert_eq(r.kind, VRAM_PROBE_KERNEL);
    cr_assert_eq(r.status, VRAM_E_CUDA);
    cr_assert_eq(r.cuda_error, 0);
    cr_assert(strstr(r.detail, "killed by SIGSEGV") != NULL, "%s", r.detail);
    cr_assert(strstr(r.detail, "probe test hook: segfault") != NULL, "last stderr line: %s", r.detail);
    cr_assert_geq(r.seconds, 0.0);
    assert_one_line(r.detail);
}

Test(probe, child_that_hangs_times_out) {
    vram_probe_result r;
    cr_assert_eq(spawn_hooked("hang", VRAM_PROBE_ALLOC90, 300, &r), VRAM_OK);
    cr_assert_eq(r.ran, 1);
    cr_assert_eq(r.status, VRAM_E_CUDA);
    cr_assert(strstr(r.detail, "timed out after 0.3 s") != NULL, "%s", r.detail);
    cr_assert_geq(r.seconds, 0.3, "stopped no earlier than the timeout: %.3f", r.seconds);
}

Test(probe, child_that_exits_without_a_result) {
    vram_probe_result r;
    cr_assert_eq(spawn_hooked("exit", VRAM_PROBE_POOL, 0, &r), VRAM_OK);
    cr_assert_eq(r.ran, 1);
    cr_assert_eq(r.status, VRAM_E_CUDA);
    cr_assert_str_eq(r.detail, "probe child exited with code 5 without a result line; "
                               "last stderr line: probe test hook: exit 5");
}

Test(probe, child_that_prints_garbage) {
    vram_probe_result r;
    cr_assert_eq(spawn_hooked("garbage", VRAM_PROBE_VMM, 0, &r), VRAM_OK);
    cr_assert_eq(r.ran, 1);
    cr_assert_eq(r.status, VRAM_E_CUDA);
    cr_assert(strstr(r.detail, "exited with code 0") != NULL, "%s", r.detail);
    cr_assert(strstr(r.detail, "not valid JSON") != NULL, "%s", r.detail);
}

Test(probe, unknown_hook_is_bad_usage_in_the_child) {
    vram_probe_result r;
    cr_assert_eq(spawn_hooked("bogus", VRAM_PROBE_VMM, 0, &r), VRAM_OK);
    cr_assert_eq(r.status, VRAM_E_CUDA);
    cr_assert(strstr(r.detail, "exited with code 2") != NULL, "%s", r.detail);
    cr_assert(strstr(r.detail, "VRAMKIT_PROBE_TEST='bogus' is not a test hook") != NULL, "%s", r.detail);
}

Test(probe, child_that_cannot_start) {
    vram_probe_result r;
    cr_assert_eq(vram__probe_spawn("/nonexistent/vramkit", NULL, 0, VRAM_PROBE_VMM, 0, &r), VRAM_E_IO);
    cr_assert_eq(r.ran, 0);
    cr_assert_eq(r.status, VRAM_E_IO);
    cr_assert(strstr(r.detail, "No such file or directory") != NULL, "%s", r.detail);
}

/* The real child, no hook: its own verdict on this machine comes through the result line. */
Test(probe, real_child_reports_through_the_result_line) {
    vram_probe_result r;
    vram_status st = vram__probe_spawn(VRAMKIT_EXE, NULL, 0, VRAM_PROBE_KERNEL, 0, &r);
    if (have_driver()) cr_skip_test("a driver is present: test/hw/hw_device.c checks the verdicts");
    vram_status want = vram_cuda_built() ? VRAM_E_NO_DRIVER : VRAM_E_NOT_BUILT;
    cr_assert_eq(st, want, "%s: %s", vram_status_name(st), r.detail);
    cr_assert_eq(r.status, want);
    cr_assert_eq(r.ran, 0);
    cr_assert_lt(r.seconds, 20.0);
}

/* ---- the hidden command ---------------------------------------------------------------- */

Test(probe, hidden_from_help) {
    const char *args[] = {"--help", NULL};
    cli_result r = cli_run(args);
    cr_assert_eq(r.exit_code, 0);
    cr_assert(strstr(r.out, "try") != NULL, "the listing is there: %s", r.out);
    cr_assert(strstr(r.out, "__probe") == NULL, "the internal command is not listed: %s", r.out);
    cr_assert(strstr(r.out, "(null)") == NULL, "%s", r.out);
    cli_result_free(&r);
}

Test(probe, hidden_command_help) {
    const char *args[] = {VRAM_PROBE_COMMAND, "--help", NULL};
    cli_result r = cli_run(args);
    cr_assert_eq(r.exit_code, 0);
    cr_assert(strstr(r.out, "usage: vramkit __probe KIND DEVICE") != NULL, "%s", r.out);
    cr_assert(strstr(r.out, "Internal") != NULL, "%s", r.out);
    cr_assert(strstr(r.out, "exit codes") != NULL, "%s", r.out);
    cr_assert_str_empty(r.err);
    cli_result_free(&r);
}

struct bad_usage {
    char args[8][48];
    char needle[64];
};

ParameterizedTestParameters(probe, hidden_command_bad_usage) {
    static struct bad_usage cases[] = {
        {{"__probe"}, "expected KIND DEVICE, got 0 arguments"},
        {{"__probe", "vmm"}, "expected KIND DEVICE, got 1 argument "},
        {{"__probe", "vmm", "0", "extra"}, "got 3 arguments"},
        {{"__probe", "nope", "0"}, "unknown probe 'nope'"},
        {{"__probe", "VMM", "0"}, "unknown probe 'VMM'"},
        {{"__probe", "vmm", "-1"}, "device '-1' is not a number from 0 to 63"},
        {{"__probe", "vmm", "64"}, "device '64' is not a number from 0 to 63"},
        {{"__probe", "vmm", "x"}, "device 'x'"},
    };
    return cr_make_param_array(struct bad_usage, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct bad_usage *c, probe, hidden_command_bad_usage) {
    cli_expect_usage_error(c->args, 8, c->needle, "vramkit: __probe: ");
}

Test(probe, hidden_command_empty_device) {
    const char *args[] = {VRAM_PROBE_COMMAND, "vmm", "", NULL};
    cli_result r = cli_run(args);
    cr_assert_eq(r.exit_code, 2);
    cr_assert_str_eq(r.err, "vramkit: __probe: device '' is not a number from 0 to 63\n");
    cr_assert_str_empty(r.out);
    cli_result_free(&r);
}

/* What the child prints on this machine: one parseable result line, exit 3 (could not run). */
Test(probe, hidden_command_result_line) {
    if (have_driver()) cr_skip_test("a driver is present: the verdict is the hw test's");
    const char *args[] = {VRAM_PROBE_COMMAND, "alloc90", "0", NULL};
    cli_result r = cli_run(args);
    cr_assert_eq(r.exit_code, 3, "could not run: %s%s", r.out, r.err);
    cr_assert_eq(cli_count_lines(r.out), 1, "%s", r.out);
    cr_assert(strncmp(r.out, "VRAMKIT_RESULT {", 16) == 0, "%s", r.out);
    vram_probe_result p;
    char err[160];
    size_t len = strlen(r.out) - strlen("VRAMKIT_RESULT ") - 1;
    cr_assert_eq(vram__probe_parse_result(r.out + strlen("VRAMKIT_RESULT "), len, VRAM_PROBE_ALLOC90, 0, &p,
                                          err, sizeof err),
                 VRAM_OK, "%s", err);
    cr_assert_eq(p.ran, 0);
    cr_assert_eq(p.status, vram_cuda_built() ? VRAM_E_NO_DRIVER : VRAM_E_NOT_BUILT);
    cr_assert(strstr(r.out, vram_cuda_built() ? "\"status\":\"VRAM_E_NO_DRIVER\"" : "\"status\":\"VRAM_E_NOT_BUILT\"") !=
                  NULL,
              "%s", r.out);
    cli_result_free(&r);
}

/* ---- reading the result line ---------------------------------------------------------- */

#define GOOD "{\"probe\":\"pool\",\"device\":2,\"ran\":true,\"status\":\"VRAM_E_NOT_SUPPORTED\"," \
             "\"cuda_error\":801,\"detail\":\"pool: cudaDeviceGetDefaultMemPool: cudaErrorNotSupported\"," \
             "\"seconds\":0.25}"

Test(probe, parse_a_good_line) {
    vram_probe_result r;
    memset(&r, 0, sizeof r);
    char err[160];
    cr_assert_eq(vram__probe_parse_result(GOOD, strlen(GOOD), VRAM_PROBE_POOL, 2, &r, err, sizeof err), VRAM_OK,
                 "%s", err);
    cr_assert_eq(r.kind, VRAM_PROBE_POOL);
    cr_assert_eq(r.device, 2);
    cr_assert_eq(r.ran, 1);
    cr_assert_eq(r.status, VRAM_E_NOT_SUPPORTED);
    cr_assert_eq(r.cuda_error, 801);
    cr_assert_str_eq(r.detail, "pool: cudaDeviceGetDefaultMemPool: cudaErrorNotSupported");
    cr_assert_float_eq(r.seconds, 0.25, 1e-12);
}

Test(probe, parse_keeps_detail_to_one_bounded_line) {
    char line[1024], detail[400];
    memset(detail, 'd', sizeof detail - 1);
    detail[sizeof detail - 1] = '\0';
    detail[10] = '\\'; /* becomes "\n" in JSON: a line break in the text */
    detail[11] = 'n';
    snprintf(line, sizeof line,
             "{\"probe\":\"vmm\",\"device\":0,\"ran\":true,\"status\":\"VRAM_OK\",\"cuda_error\":0,"
             "\"detail\":\"%s\",\"seconds\":1}",
             detail);
    vram_probe_result r;
    char err[160];
    cr_assert_eq(vram__probe_parse_result(line, strlen(line), VRAM_PROBE_VMM, 0, &r, err, sizeof err), VRAM_OK,
                 "%s", err);
    cr_assert_eq(strlen(r.detail), sizeof r.detail - 1, "truncated to fit");
    cr_assert_eq(r.detail[10], ' ', "the line break is a blank");
    assert_one_line(r.detail);
}

struct bad_line {
    char line[200];
    char why[64];
};

ParameterizedTestParameters(probe, parse_rejects) {
    static struct bad_line cases[] = {
        {"{not json", "not valid JSON"},
        {"[1,2]", "not an object"},
        {"{\"probe\":\"vmm\",\"device\":2,\"ran\":true,\"status\":\"VRAM_OK\",\"cuda_error\":0,\"detail\":\"\",\"seconds\":0}",
         "does not name the probe"},
        {"{\"probe\":\"pool\",\"device\":1,\"ran\":true,\"status\":\"VRAM_OK\",\"cuda_error\":0,\"detail\":\"\",\"seconds\":0}",
         "does not name the device"},
        {"{\"probe\":\"pool\",\"device\":2,\"ran\":1,\"status\":\"VRAM_OK\",\"cuda_error\":0,\"detail\":\"\",\"seconds\":0}",
         "no boolean \"ran\""},
        {"{\"probe\":\"pool\",\"device\":2,\"ran\":true,\"status\":\"OK\",\"cuda_error\":0,\"detail\":\"\",\"seconds\":0}",
         "no known \"status\""},
        {"{\"probe\":\"pool\",\"device\":2,\"ran\":false,\"status\":\"VRAM_OK\",\"cuda_error\":0,\"detail\":\"\",\"seconds\":0}",
         "did not run, yet succeeded"},
        {"{\"probe\":\"pool\",\"device\":2,\"ran\":true,\"status\":\"VRAM_OK\",\"cuda_error\":-1,\"detail\":\"\",\"seconds\":0}",
         "\"cuda_error\""},
        {"{\"probe\":\"pool\",\"device\":2,\"ran\":true,\"status\":\"VRAM_OK\",\"cuda_error\":1.5,\"detail\":\"\",\"seconds\":0}",
         "\"cuda_error\""},
        {"{\"probe\":\"pool\",\"device\":2,\"ran\":true,\"status\":\"VRAM_OK\",\"cuda_error\":0,\"detail\":3,\"seconds\":0}",
         "no \"detail\""},
        {"{\"probe\":\"pool\",\"device\":2,\"ran\":true,\"status\":\"VRAM_OK\",\"cuda_error\":0,\"detail\":\"\",\"seconds\":-1}",
         "no \"seconds\""},
        {"{\"probe\":\"pool\",\"device\":2,\"ran\":true,\"status\":\"VRAM_OK\",\"cuda_error\":0,\"detail\":\"\"}",
         "no \"seconds\""},
    };
    return cr_make_param_array(struct bad_line, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct bad_line *c, probe, parse_rejects) {
    vram_probe_result r;
    memset(&r, 0x3c, sizeof r);
    vram_probe_result before = r;
    char err[160];
    cr_assert_eq(vram__probe_parse_result(c->line, strlen(c->line), VRAM_PROBE_POOL, 2, &r, err, sizeof err),
                 VRAM_E_FORMAT);
    cr_assert(strstr(err, c->why) != NULL, "reason '%s' lacks '%s'", err, c->why);
    cr_assert_eq(memcmp(&r, &before, sizeof r), 0, "untouched on failure");
}

/* ---- how a child ended, without spawning one ------------------------------------------- */

static vram_isolate_result ended(vram_attempt_how how, int code, int sig, const char *stderr_text) {
    vram_isolate_result res;
    memset(&res, 0, sizeof res);
    res.how = how;
    res.exit_code = how == VRAM_ATTEMPT_EXITED ? code : -1;
    res.signal = sig;
    res.signal_name = sig == 11 ? "SIGSEGV" : sig == 6 ? "SIGABRT" : NULL;
    res.seconds = 1.5;
    res.pid = 4242;
    if (stderr_text != NULL) {
        res.err.data = (char *)stderr_text;
        res.err.len = strlen(stderr_text);
        res.err.total = res.err.len;
    }
    return res;
}

static vram_probe_result fresh(vram_probe_kind k, int device) {
    vram_probe_result r;
    memset(&r, 0, sizeof r);
    r.kind = k;
    r.device = device;
    return r;
}

Test(probe, interpret_a_report_then_a_crash) {
    vram_isolate_result res = ended(VRAM_ATTEMPT_SIGNALED, 0, 11, "");
    res.result_line = (char *)GOOD;
    res.result_len = strlen(GOOD);
    vram_probe_result r = fresh(VRAM_PROBE_POOL, 2);
    cr_assert_eq(vram__probe_interpret(&res, 0, &r), VRAM_OK);
    cr_assert_eq(r.status, VRAM_E_NOT_SUPPORTED, "the verdict reported stands");
    cr_assert_eq(r.cuda_error, 801);
    cr_assert(strstr(r.detail, "(then killed by SIGSEGV)") != NULL, "%s", r.detail);
}

Test(probe, interpret_stderr_naming_an_oom) {
    vram_isolate_result res = ended(VRAM_ATTEMPT_EXITED, 1, 0, "warming up\nRuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n");
    vram_probe_result r = fresh(VRAM_PROBE_ALLOC90, 0);
    cr_assert_eq(vram__probe_interpret(&res, 0, &r), VRAM_OK);
    cr_assert_eq(r.ran, 1);
    cr_assert_eq(r.status, VRAM_E_OOM);
    cr_assert_float_eq(r.seconds, 1.5, 1e-12);
    cr_assert(strstr(r.detail, "last stderr line: RuntimeError: CUDA out of memory") != NULL, "%s", r.detail);
}

Test(probe, interpret_stderr_naming_a_sticky_error) {
    vram_isolate_result res =
        ended(VRAM_ATTEMPT_SIGNALED, 0, 6, "terminate called: an illegal memory access was encountered\n");
    vram_probe_result r = fresh(VRAM_PROBE_KERNEL, 0);
    cr_assert_eq(vram__probe_interpret(&res, 0, &r), VRAM_OK);
    cr_assert_eq(r.status, VRAM_E_CUDA_STICKY);
    cr_assert_eq(r.cuda_error, 700);
    cr_assert(strstr(r.detail, "killed by SIGABRT before reporting") != NULL, "%s", r.detail);
}

Test(probe, interpret_an_unnamed_signal_and_a_default_timeout) {
    vram_isolate_result res = ended(VRAM_ATTEMPT_SIGNALED, 0, 40, NULL);
    vram_probe_result r = fresh(VRAM_PROBE_VMM, 0);
    cr_assert_eq(vram__probe_interpret(&res, 0, &r), VRAM_OK);
    cr_assert_str_eq(r.detail, "probe child killed by signal 40 before reporting");
    res = ended(VRAM_ATTEMPT_TIMED_OUT, 0, 15, "\n\n");
    r = fresh(VRAM_PROBE_VMM, 0);
    cr_assert_eq(vram__probe_interpret(&res, 0, &r), VRAM_OK);
    cr_assert_str_eq(r.detail, "probe child timed out after 20.0 s and was killed");
}

Test(probe, interpret_a_result_line_too_long_and_not_started) {
    vram_isolate_result res = ended(VRAM_ATTEMPT_EXITED, 0, 0, NULL);
    res.result_too_long = 1;
    vram_probe_result r = fresh(VRAM_PROBE_VMM, 0);
    cr_assert_eq(vram__probe_interpret(&res, 0, &r), VRAM_OK);
    cr_assert(strstr(r.detail, "longer than 65536 bytes") != NULL, "%s", r.detail);
    res = ended(VRAM_ATTEMPT_NOT_STARTED, 0, 0, NULL);
    snprintf(res.start_error, sizeof res.start_error, "cannot start 'x': Permission denied");
    r = fresh(VRAM_PROBE_VMM, 0);
    cr_assert_eq(vram__probe_interpret(&res, 0, &r), VRAM_E_IO);
    cr_assert_eq(r.ran, 0);
    cr_assert_str_eq(r.detail, "cannot start 'x': Permission denied");
}

Test(probe, interpret_a_child_that_could_not_run) {
    static const char line[] = "{\"probe\":\"vmm\",\"device\":0,\"ran\":false,\"status\":\"VRAM_E_NO_DEVICE\","
                               "\"cuda_error\":100,\"detail\":\"no device\",\"seconds\":0.01}";
    vram_isolate_result res = ended(VRAM_ATTEMPT_EXITED, 3, 0, NULL);
    res.result_line = (char *)line;
    res.result_len = strlen(line);
    vram_probe_result r = fresh(VRAM_PROBE_VMM, 0);
    cr_assert_eq(vram__probe_interpret(&res, 0, &r), VRAM_E_NO_DEVICE, "why it could not run");
    cr_assert_eq(r.ran, 0);
    cr_assert_eq(r.cuda_error, 100);
    cr_assert_float_eq(r.seconds, 0.01, 1e-12);
}
