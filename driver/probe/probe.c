/* driver/probe/probe.c — capability probes, the parent's side and the child's frame.
 * The parent spawns `vramkit __probe KIND DEVICE` through the isolation library and reads
 * its VRAMKIT_RESULT line; a child that crashes, hangs or says nothing is a failed probe
 * with the reason. The child's frame parses its arguments, honours the test hook, runs
 * vram__probe_execute (driver/probe/probe_child.c) and prints the result line. */
#include "probe.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <vramkit/attempt.h>
#include <vramkit/device.h>

#include "cuda/cuda_device.h"
#include "isolate/isolate.h"
#include "util/clock.h"
#include "util/text.h"

#define PROBE_EXE_MAX 4096

static const char *const probe_names[VRAM_PROBE_COUNT] = {"vmm", "pinned", "pool", "kernel", "alloc90"};

const char *vram_probe_name(vram_probe_kind k) {
    if ((int)k < 0 || k >= VRAM_PROBE_COUNT) return "unknown";
    return probe_names[k];
}

vram_status vram_probe_parse_name(const char *name, vram_probe_kind *out) {
    if (name == NULL || out == NULL) return VRAM_E_INVALID;
    for (int k = 0; k < VRAM_PROBE_COUNT; k++) {
        if (strcmp(name, probe_names[k]) == 0) {
            *out = (vram_probe_kind)k;
            return VRAM_OK;
        }
    }
    return VRAM_E_INVALID;
}

/* ---- small helpers --------------------------------------------------------------- */

static void probe_reset(vram_probe_result *out, vram_probe_kind kind, int device) {
    memset(out, 0, sizeof *out);
    out->kind = kind;
    out->device = device;
}

void vram__probe_detail(vram_probe_result *out, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->detail, sizeof out->detail, fmt, ap);
    va_end(ap);
    for (char *p = out->detail; *p != '\0'; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = ' ';
}

static void probe_fail(vram_probe_result *out, int ran, vram_status st, const char *why) {
    out->ran = ran;
    out->status = st;
    vram__probe_detail(out, "%s", why);
}

static int probe_status_from_name(const char *name, vram_status *out) {
#define PROBE_STATUS_CMP(n, v, t)          \
    if (strcmp(name, #n) == 0) {           \
        *out = n;                          \
        return 1;                          \
    }
    VRAM_STATUS_LIST(PROBE_STATUS_CMP)
#undef PROBE_STATUS_CMP
    return 0;
}

/* The last non-blank line of a child's stderr tail, into buf (printable ASCII only). */
static const char *probe_last_line(const vram_isolate_stream *s, char *buf, size_t cap) {
    buf[0] = '\0';
    if (s->data == NULL || s->len == 0 || cap < 2) return buf;
    size_t end = s->len;
    while (end > 0 && (s->data[end - 1] == '\n' || s->data[end - 1] == '\r' ||
                       s->data[end - 1] == ' ' || s->data[end - 1] == '\t'))
        end--;
    size_t start = end;
    while (start > 0 && s->data[start - 1] != '\n') start--;
    size_t n = end - start, o = 0;
    for (size_t i = 0; i < n && o + 1 < cap; i++) {
        unsigned char c = (unsigned char)s->data[start + i];
        buf[o++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
    }
    buf[o] = '\0';
    return buf;
}

/* ---- reading the child's result line ---------------------------------------------- */

static vram_status probe_bad(char *err, size_t cap, const char *why) {
    if (cap > 0) snprintf(err, cap, "probe result line %s", why);
    return VRAM_E_FORMAT;
}

vram_status vram__probe_parse_result(const char *text, size_t len, vram_probe_kind kind,
                                     int device, vram_probe_result *out, char *err, size_t cap) {
    if (cap > 0) err[0] = '\0';
    if (out == NULL || (text == NULL && len > 0)) return VRAM_E_INVALID;
    cJSON *root = NULL;
    if (vram_isolate_parse_result(text != NULL ? text : "", len, &root, err, cap) != VRAM_OK)
        return VRAM_E_FORMAT;
    vram_status st = VRAM_E_FORMAT;
    const cJSON *probe = cJSON_GetObjectItemCaseSensitive(root, "probe");
    const cJSON *dev = cJSON_GetObjectItemCaseSensitive(root, "device");
    const cJSON *ran = cJSON_GetObjectItemCaseSensitive(root, "ran");
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(root, "status");
    const cJSON *code = cJSON_GetObjectItemCaseSensitive(root, "cuda_error");
    const cJSON *detail = cJSON_GetObjectItemCaseSensitive(root, "detail");
    const cJSON *secs = cJSON_GetObjectItemCaseSensitive(root, "seconds");
    vram_status verdict = VRAM_OK;
    if (!cJSON_IsString(probe) || strcmp(probe->valuestring, vram_probe_name(kind)) != 0) {
        probe_bad(err, cap, "does not name the probe that was asked for");
    } else if (!cJSON_IsNumber(dev) || dev->valuedouble != (double)device) {
        probe_bad(err, cap, "does not name the device that was asked for");
    } else if (!cJSON_IsBool(ran)) {
        probe_bad(err, cap, "has no boolean \"ran\"");
    } else if (!cJSON_IsString(status) || !probe_status_from_name(status->valuestring, &verdict)) {
        probe_bad(err, cap, "has no known \"status\"");
    } else if (cJSON_IsFalse(ran) && verdict == VRAM_OK) {
        probe_bad(err, cap, "says the probe did not run, yet succeeded");
    } else if (!cJSON_IsNumber(code) || !(code->valuedouble >= 0.0) ||
               code->valuedouble > (double)INT_MAX || code->valuedouble != floor(code->valuedouble)) {
        probe_bad(err, cap, "has no \"cuda_error\" number from 0 to INT_MAX");
    } else if (!cJSON_IsString(detail)) {
        probe_bad(err, cap, "has no \"detail\" text");
    } else if (!cJSON_IsNumber(secs) || !isfinite(secs->valuedouble) || secs->valuedouble < 0.0) {
        probe_bad(err, cap, "has no \"seconds\" number >= 0");
    } else {
        out->kind = kind;
        out->device = device;
        out->ran = cJSON_IsTrue(ran) ? 1 : 0;
        out->status = verdict;
        out->cuda_error = (int)code->valuedouble;
        vram__probe_detail(out, "%s", detail->valuestring);
        out->seconds = secs->valuedouble;
        st = VRAM_OK;
    }
    cJSON_Delete(root);
    return st;
}

/* ---- how the child ended ---------------------------------------------------------- */

vram_status vram__probe_interpret(const vram_isolate_result *res, int timeout_ms,
                                  vram_probe_result *out) {
    if (res == NULL || out == NULL) return VRAM_E_INVALID;
    char line[128];
    if (res->how == VRAM_ATTEMPT_NOT_STARTED) {
        probe_fail(out, 0, VRAM_E_IO, res->start_error[0] != '\0' ? res->start_error
                                                                  : "the probe child could not be started");
        return VRAM_E_IO;
    }
    char why[160];
    why[0] = '\0';
    if (res->result_line != NULL) {
        vram_probe_result r = *out;
        if (vram__probe_parse_result(res->result_line, res->result_len, out->kind, out->device, &r,
                                     why, sizeof why) == VRAM_OK) {
            *out = r;
            if (res->how == VRAM_ATTEMPT_SIGNALED) {
                /* reported, then died (in CUDA's teardown, say): the verdict stands */
                size_t n = strlen(out->detail);
                snprintf(out->detail + n, sizeof out->detail - n, " (then killed by %s)",
                         res->signal_name != NULL ? res->signal_name : "a signal");
            }
            return out->ran ? VRAM_OK : out->status;
        }
    } else if (res->result_too_long) {
        snprintf(why, sizeof why, "probe result line is longer than %u bytes", VRAM_ISOLATE_RESULT_MAX);
    }

    /* no usable result: the probe ran and failed; say how the child ended */
    vram_attempt_end end = vram_isolate_end(res);
    vram_attempt_evidence ev;
    memset(&ev, 0, sizeof ev);
    vram_attempt_outcome o = vram_attempt_explain(&end, &ev);
    out->ran = 1;
    out->cuda_error = ev.cuda_code;
    out->status = o == VRAM_ATTEMPT_OOM             ? VRAM_E_OOM
                  : o == VRAM_ATTEMPT_CUDA_STICKY   ? VRAM_E_CUDA_STICKY
                  : o == VRAM_ATTEMPT_NOT_SUPPORTED ? VRAM_E_NOT_SUPPORTED
                                                    : VRAM_E_CUDA;
    out->seconds = res->seconds;
    probe_last_line(&res->err, line, sizeof line);
    const char *sep = line[0] != '\0' ? "; last stderr line: " : "";
    if (res->how == VRAM_ATTEMPT_TIMED_OUT) {
        vram__probe_detail(out, "probe child timed out after %.1f s and was killed%s%s",
                           (timeout_ms > 0 ? timeout_ms : VRAM_PROBE_DEFAULT_TIMEOUT_MS) / 1000.0, sep, line);
    } else if (res->how == VRAM_ATTEMPT_SIGNALED) {
        char num[32];
        snprintf(num, sizeof num, "signal %d", res->signal);
        vram__probe_detail(out, "probe child killed by %s before reporting%s%s",
                           res->signal_name != NULL ? res->signal_name : num, sep, line);
    } else if (why[0] != '\0') {
        vram__probe_detail(out, "probe child exited with code %d: %s", res->exit_code, why);
    } else {
        vram__probe_detail(out, "probe child exited with code %d without a result line%s%s",
                           res->exit_code, sep, line);
    }
    return VRAM_OK;
}

/* ---- the parent ------------------------------------------------------------------- */

static vram_status probe_check_args(int device, vram_probe_kind kind, int timeout_ms,
                                    vram_probe_result *out) {
    if (out == NULL) return VRAM_E_INVALID;
    probe_reset(out, kind, device);
    if ((int)kind < 0 || kind >= VRAM_PROBE_COUNT || device < 0 || timeout_ms < 0) {
        probe_fail(out, 0, VRAM_E_INVALID, "invalid probe request (kind, device or timeout out of range)");
        return VRAM_E_INVALID;
    }
    return VRAM_OK;
}

vram_status vram__probe_spawn(const char *exe, const char *const *env, int device,
                              vram_probe_kind kind, int timeout_ms, vram_probe_result *out) {
    vram_status st = probe_check_args(device, kind, timeout_ms, out);
    if (st != VRAM_OK) return st;
    if (exe == NULL || exe[0] == '\0') {
        probe_fail(out, 0, VRAM_E_INVALID, "no program to run as the probe child");
        return VRAM_E_INVALID;
    }
    char dev[16];
    snprintf(dev, sizeof dev, "%d", device);
    const char *argv[] = {exe, VRAM_PROBE_COMMAND, vram_probe_name(kind), dev, NULL};
    enum { MAX_ENV = 16 };
    const char *envv[MAX_ENV + 2];
    size_t ne = 0;
    for (; env != NULL && env[ne] != NULL; ne++) {
        if (ne == MAX_ENV) {
            probe_fail(out, 0, VRAM_E_INVALID, "too many environment entries for the probe child");
            return VRAM_E_INVALID;
        }
        envv[ne] = env[ne];
    }
    envv[ne++] = VRAM_PROBE_CHILD_ENV "=1";
    envv[ne] = NULL;

    vram_isolate_opts io;
    memset(&io, 0, sizeof io);
    io.argv = argv;
    io.env = envv;
    io.timeout_s = (timeout_ms > 0 ? timeout_ms : VRAM_PROBE_DEFAULT_TIMEOUT_MS) / 1000.0;
    vram_isolate_result res;
    memset(&res, 0, sizeof res);
    st = vram_isolate_run(&io, &res);
    if (st != VRAM_OK) {
        probe_fail(out, 0, st, "the probe child could not be run (isolation refused the options)");
        vram_isolate_result_free(&res);
        return st;
    }
    st = vram__probe_interpret(&res, timeout_ms, out);
    vram_isolate_result_free(&res);
    return st;
}

vram_status vram_probe_run(int device, vram_probe_kind kind, int timeout_ms, vram_probe_result *out) {
    vram_status st = probe_check_args(device, kind, timeout_ms, out);
    if (st != VRAM_OK) return st;
    if (!vram_cuda_built()) {
        probe_fail(out, 0, VRAM_E_NOT_BUILT, "this vramkit was built without the CUDA parts: nothing to probe");
        return VRAM_E_NOT_BUILT;
    }
    const char *inside = getenv(VRAM_PROBE_CHILD_ENV);
    if (inside != NULL && inside[0] != '\0') {
        probe_fail(out, 0, VRAM_E_STATE,
                   "probe requested inside a probe child: the program run as the child does not "
                   "handle '" VRAM_PROBE_COMMAND "'; set " VRAM_PROBE_EXE_ENV " to the vramkit executable");
        return VRAM_E_STATE;
    }
    const char *exe = getenv(VRAM_PROBE_EXE_ENV);
    char self[PROBE_EXE_MAX];
    if (exe == NULL || exe[0] == '\0') {
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        if (n <= 0 || (size_t)n >= sizeof self - 1) {
            out->status = VRAM_E_IO;
            vram__probe_detail(out, "cannot find this program (/proc/self/exe): %s",
                               n < 0 ? strerror(errno) : "path too long");
            return VRAM_E_IO;
        }
        self[n] = '\0';
        exe = self;
    }
    return vram__probe_spawn(exe, NULL, device, kind, timeout_ms, out);
}

/* ---- the child -------------------------------------------------------------------- */

static void probe_child_usage(FILE *f) {
    fprintf(f,
            "usage: vramkit " VRAM_PROBE_COMMAND " KIND DEVICE\n"
            "\n"
            "Internal: the child process of `vramkit doctor --probe`. Runs one capability probe\n"
            "on CUDA device DEVICE (0 to %d) and prints one line 'VRAMKIT_RESULT {json}' on\n"
            "stdout: probe, device, ran, status, cuda_error, detail, seconds.\n"
            "KIND: vmm (reserve, create, map and access one VMM granule), pinned (64 MiB of\n"
            "pinned host memory), pool (cudaMallocAsync on the default pool), kernel (launch a\n"
            "trivial kernel and check its output), alloc90 (allocate, touch and free 90%% of\n"
            "free memory).\n"
            "\n"
            "exit codes: 0 the capability works, 1 it does not, 2 bad usage,\n"
            "            3 the probe could not run (no CUDA parts, no driver, no such device)\n",
            VRAM_MAX_DEVICES - 1);
}

static void probe_print(const vram_probe_result *r) {
    cJSON *o = cJSON_CreateObject();
    if (o == NULL) return;
    cJSON_AddStringToObject(o, "probe", vram_probe_name(r->kind));
    cJSON_AddNumberToObject(o, "device", r->device);
    cJSON_AddBoolToObject(o, "ran", r->ran != 0);
    cJSON_AddStringToObject(o, "status", vram_status_name(r->status));
    cJSON_AddNumberToObject(o, "cuda_error", r->cuda_error);
    cJSON_AddStringToObject(o, "detail", r->detail);
    cJSON_AddNumberToObject(o, "seconds", r->seconds);
    char *text = cJSON_PrintUnformatted(o);
    if (text != NULL) printf("%s %s\n", VRAM_ISOLATE_RESULT_PREFIX, text);
    fflush(stdout);
    cJSON_free(text);
    cJSON_Delete(o);
}

/* One line "vramkit: __probe: ..." on stderr; the child's exit code for bad usage. */
static int child_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int child_usage_error(const char *fmt, ...) {
    va_list ap;
    fprintf(stderr, "vramkit: " VRAM_PROBE_COMMAND ": ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return VRAM_PROBE_EXIT_USAGE;
}

/* The test hook (VRAMKIT_PROBE_TEST): ends the child as asked. Returns -1 when the hook is
 * not set, else an exit code. */
static int probe_test_hook(const char *hook, vram_probe_kind kind, int device) {
    if (hook == NULL || hook[0] == '\0') return -1;
    if (strcmp(hook, "segfault") == 0) {
        struct rlimit no_core = {0, 0};
        (void)setrlimit(RLIMIT_CORE, &no_core);
        fprintf(stderr, "probe test hook: segfault\n");
        fflush(stderr);
        signal(SIGSEGV, SIG_DFL); /* past any sanitizer's handler */
        raise(SIGSEGV);
        return 1;
    }
    if (strcmp(hook, "hang") == 0) {
        fprintf(stderr, "probe test hook: hang\n");
        fflush(stderr);
        for (;;) pause();
    }
    if (strcmp(hook, "exit") == 0) {
        fprintf(stderr, "probe test hook: exit 5\n");
        return 5;
    }
    if (strcmp(hook, "garbage") == 0) {
        printf("%s {not json\n", VRAM_ISOLATE_RESULT_PREFIX);
        fflush(stdout);
        return 0;
    }
    if (strcmp(hook, "trap") == 0) {
        vram_probe_result r;
        probe_reset(&r, kind, device);
        double t0 = vram_now_s();
        vram__probe_trap(device, &r);
        r.seconds = vram_now_s() - t0;
        probe_print(&r);
        return r.ran ? (r.status == VRAM_OK ? VRAM_PROBE_EXIT_WORKS : VRAM_PROBE_EXIT_FAILS) : VRAM_PROBE_EXIT_NOT_RUN;
    }
    return child_usage_error("%s='%s' is not a test hook (segfault, hang, exit, garbage, trap)",
                           VRAM_PROBE_TEST_ENV, hook);
}

int vram_probe_child_main(int argc, char **argv) {
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        probe_child_usage(stdout);
        return VRAM_PROBE_EXIT_WORKS;
    }
    if (argc != 3)
        return child_usage_error("expected KIND DEVICE, got %d argument%s (run 'vramkit "
                               VRAM_PROBE_COMMAND " --help')", argc - 1, argc == 2 ? "" : "s");
    vram_probe_kind kind;
    if (vram_probe_parse_name(argv[1], &kind) != VRAM_OK)
        return child_usage_error("unknown probe '%s' (expected vmm, pinned, pool, kernel or alloc90)",
                               argv[1]);
    uint64_t dev = 0;
    if (vram_parse_u64(argv[2], VRAM_MAX_DEVICES - 1, &dev) != 0)
        return child_usage_error("device '%s' is not a number from 0 to %d", argv[2],
                               VRAM_MAX_DEVICES - 1);
    int hooked = probe_test_hook(getenv(VRAM_PROBE_TEST_ENV), kind, (int)dev);
    if (hooked >= 0) return hooked;

    vram_probe_result r;
    probe_reset(&r, kind, (int)dev);
    double t0 = vram_now_s();
    vram__probe_execute(kind, (int)dev, &r);
    r.seconds = vram_now_s() - t0;
    probe_print(&r);
    if (!r.ran) return VRAM_PROBE_EXIT_NOT_RUN;
    return r.status == VRAM_OK ? VRAM_PROBE_EXIT_WORKS : VRAM_PROBE_EXIT_FAILS;
}

/* ---- without the CUDA parts ------------------------------------------------------- */

#ifndef VRAMKIT_HAVE_CUDA
void vram__probe_execute(vram_probe_kind kind, int device, vram_probe_result *out) {
    probe_reset(out, kind, device);
    probe_fail(out, 0, VRAM_E_NOT_BUILT, "this vramkit was built without the CUDA parts: nothing to probe");
}

void vram__probe_trap(int device, vram_probe_result *out) {
    probe_reset(out, out->kind, device);
    probe_fail(out, 0, VRAM_E_NOT_BUILT, "this vramkit was built without the CUDA parts: nothing to trap");
}
#endif
