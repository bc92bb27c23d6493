/* driver/probe/probe.h — capability probes: do the real thing once, in a child process.
 * Attributes can lie (a WSL2 driver reported VMM support, then cuMemSetAccess failed); a
 * probe reserves and maps memory, pins host memory, uses a pool, launches a kernel, and
 * a crash or a sticky error in it costs the child (driver/isolate/isolate.h), never the caller. */
#ifndef VRAMKIT_DRIVER_PROBE_H
#define VRAMKIT_DRIVER_PROBE_H

#include <vramkit/base.h>

struct vram_isolate_result;

typedef enum vram_probe_kind {
    VRAM_PROBE_VMM,     /* reserve + create + map + set access one granule, then undo */
    VRAM_PROBE_PINNED,  /* cudaHostAlloc 64 MiB, touch, free */
    VRAM_PROBE_POOL,    /* cudaMallocAsync / cudaFreeAsync on the default pool */
    VRAM_PROBE_KERNEL,  /* launch a trivial kernel, check its result (missing image) */
    VRAM_PROBE_ALLOC90, /* allocate 90% of free memory, touch it, free */
    VRAM_PROBE_COUNT
} vram_probe_kind;

typedef struct vram_probe_result {
    vram_probe_kind kind;
    int device;
    int ran;            /* 0: not run (build without CUDA, or no device) */
    vram_status status; /* VRAM_OK = the capability works */
    int cuda_error;     /* raw CUDA/CU error number behind a failure, else 0 */
    char detail[192];   /* one line: what was tried, what failed (e.g. "cuMemCreate: CUDA_ERROR_NOT_SUPPORTED") */
    double seconds;     /* the probe's own time as the child measured it; for a child that
                           crashed or timed out, its wall time */
} vram_probe_result;

#define VRAM_PROBE_DEFAULT_TIMEOUT_MS 20000
/* The hidden `vramkit` subcommand that runs a probe in the child: `vramkit __probe KIND DEVICE`. */
#define VRAM_PROBE_COMMAND "__probe"
/* Environment: the program run as the probe child (default: this process's executable,
 * /proc/self/exe). Set it in programs that link the driver library but do not dispatch
 * `__probe` themselves (tests), to the `vramkit` executable. */
#define VRAM_PROBE_EXE_ENV "VRAMKIT_PROBE_EXE"
/* Environment: set to 1 in every probe child; vram_probe_run refuses to run inside one,
 * so a program that does not handle `__probe` cannot recurse. */
#define VRAM_PROBE_CHILD_ENV "VRAMKIT_PROBE_CHILD"
/* Environment, TEST HOOK: when set in the child's environment, the child does not probe
 * but ends as the value says: "segfault" (killed by SIGSEGV, no core), "hang" (sleeps past
 * any timeout), "exit" (exits 5 without a result line), "garbage" (prints a result line
 * that is not JSON), "trap" (CUDA builds: opens the device through the CUDA table, launches
 * a kernel that traps, and reports the sticky error it got and whether later calls were
 * refused). For tests only; nothing else sets it. */
#define VRAM_PROBE_TEST_ENV "VRAMKIT_PROBE_TEST"

/* "vmm", "pinned", "pool", "kernel", "alloc90"; "unknown" outside the enum. Static. */
const char *vram_probe_name(vram_probe_kind k);

/* A probe name back to its kind. Requires: name NULL or NUL-terminated. Guarantees: VRAM_OK
 * and *out set for an exact (case-sensitive) name, else VRAM_E_INVALID and *out untouched. */
vram_status vram_probe_parse_name(const char *name, vram_probe_kind *out);

/* Runs one probe in a child process (driver/isolate/isolate.h: posix_spawn of this executable,
 * /proc/self/exe or VRAMKIT_PROBE_EXE, with the hidden subcommand), so a crash or a sticky
 * error costs the child. timeout_ms 0 = default 20000. A crash/timeout of the child is a
 * failed probe with the reason in detail, never a crash of the caller. Returns VRAM_OK when
 * the probe RAN (whatever its verdict, which is in out->status), else why it could not run.
 * Requires: out valid. Guarantees: *out is always filled when out is not NULL (kind, device,
 * ran, status, detail); statuses:
 *   VRAM_OK            ran == 1, out->status the verdict (VRAM_OK: the capability works;
 *                      a crash or a timeout of the child: VRAM_E_CUDA, or what its stderr
 *                      names: VRAM_E_OOM, VRAM_E_CUDA_STICKY, VRAM_E_NOT_SUPPORTED);
 *   VRAM_E_INVALID     NULL out, a kind outside the enum, a negative device or timeout;
 *   VRAM_E_NOT_BUILT a build without the CUDA parts (nothing is spawned);
 *   VRAM_E_NO_DRIVER, VRAM_E_NO_DEVICE, ... the child could not open the device (no driver,
 *                      no such device): out->status says the same, out->cuda_error why;
 *   VRAM_E_STATE       called inside a probe child (VRAMKIT_PROBE_CHILD is set);
 *   VRAM_E_IO          the child could not be started (detail says why). */
vram_status vram_probe_run(int device, vram_probe_kind kind, int timeout_ms, vram_probe_result *out);

/* The hidden subcommand's body: `vramkit __probe KIND DEVICE` (argv[0] is "__probe"). Runs
 * the probe in this process and prints `VRAMKIT_RESULT {json}` on stdout. Exit codes:
 * 0 the capability works, 1 it does not, 2 bad usage (one stderr line), 3 the probe could not
 * run (no CUDA parts, no driver, no such device). Programs that embed the driver library
 * and want probes from their own executable dispatch `__probe` to it. */
int vram_probe_child_main(int argc, char **argv);
/* Its exit codes (the same numbers as the CLI's). */
enum {
    VRAM_PROBE_EXIT_WORKS = 0,  /* the capability works */
    VRAM_PROBE_EXIT_FAILS = 1,  /* it does not */
    VRAM_PROBE_EXIT_USAGE = 2,  /* bad usage: one line on stderr */
    VRAM_PROBE_EXIT_NOT_RUN = 3 /* the probe could not run */
};

/* ---- private: exposed for the tests ------------------------------------------------- */

/* vram_probe_run with an explicit program and extra "NAME=VALUE" environment entries
 * (NULL-terminated, may be NULL); the CUDA-less build spawns too. */
vram_status vram__probe_spawn(const char *exe, const char *const *env, int device,
                              vram_probe_kind kind, int timeout_ms, vram_probe_result *out);

/* Fills *out from a child's VRAMKIT_RESULT payload (text[0, len)). The payload must be an
 * object {"probe": name, "device": int, "ran": bool, "status": "VRAM_..." name,
 * "cuda_error": int, "detail": string, "seconds": number} whose probe and device are the
 * expected ones. Guarantees: VRAM_OK and *out filled (detail truncated to fit, NUL-
 * terminated), or VRAM_E_FORMAT with a one-line reason in err (cap bytes, may be 0) and *out
 * untouched. */
vram_status vram__probe_parse_result(const char *text, size_t len, vram_probe_kind kind,
                                     int device, vram_probe_result *out, char *err, size_t cap);

/* Turns how the child ended into the probe's result (*out's kind and device already set):
 * the result line when there is a valid one, else a failed probe saying how the child died
 * (signal, timeout, exit code, a bad result line, the last stderr line). Returns what
 * vram_probe_run returns for it. */
vram_status vram__probe_interpret(const struct vram_isolate_result *res, int timeout_ms,
                                  vram_probe_result *out);

/* The probe itself, in this process (driver/probe/probe_child.c; a stub without CUDA).
 * Fills *out (kind and device set by the caller). */
void vram__probe_execute(vram_probe_kind kind, int device, vram_probe_result *out);
/* The "trap" test hook's body (CUDA builds; the stub reports VRAM_E_NOT_BUILT). */
void vram__probe_trap(int device, vram_probe_result *out);
/* printf into out->detail, kept to one line whatever went into it (the parent and the child). */
void vram__probe_detail(vram_probe_result *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif /* VRAMKIT_DRIVER_PROBE_H */
