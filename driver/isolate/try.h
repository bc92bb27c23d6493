/* driver/isolate/try.h — `try` as a function: the command run once per strategy of a chain
 * (chain.h), each time in a fresh child (isolate.h), until one attempt succeeds; the core
 * (vramkit/attempt.h) says what each ending means. A native crash, an OOM or a sticky CUDA
 * error costs that attempt only. Its JSON report is written here, for the CLI and Python
 * alike. Prints nothing. */
#ifndef VRAMKIT_DRIVER_ISOLATE_TRY_H
#define VRAMKIT_DRIVER_ISOLATE_TRY_H

#include <signal.h>
#include <stddef.h>

#include <vramkit/attempt.h>

#include "chain.h"
#include "isolate.h"
#include "peak.h"
#include "util/json.h"

struct cJSON;

#define VRAM_TRY_MAX_ENV 16
struct vram_try_attempt;

typedef struct vram_try_opts {
    vram_try_chain chain;
    char *const *command;  /* the program and its arguments, with placeholders */
    int ncommand;
    double timeout_s;      /* per attempt; 0: none */
    double grace_s;        /* SIGTERM -> SIGKILL; 0: VRAM_ISOLATE_DEFAULT_GRACE_S */
    int reap;              /* 1: end what an attempt leaves outside its group too (a subreaper:
                              only for a process with no other children, the vramkit command) */
    const volatile sig_atomic_t *cancel; /* nonzero: stop the running attempt and end */
    const char *self_exe;  /* the vramkit executable: each attempt starts through its shim and
                              guard (exec_shim.h), so it dies with this process, even one killed
                              with SIGKILL, and so does its process group; NULL: directly */
    const char *const *env;  /* "NAME=VALUE" added to each attempt's environment (NULL: none;
                                at most VRAM_TRY_MAX_ENV) */
    /* called as each attempt ends (NULL: nothing), e.g. to print it */
    void (*on_attempt)(void *ctx, int k, const struct vram_try_attempt *a);
    void *ctx;
} vram_try_opts;

/* Applies a chain option (chain.h), "timeout" or "grace" (seconds). VRAM_OK; VRAM_E_INVALID
 * with err; VRAM_E_UNHANDLED for another name. */
vram_status vram_try_set(vram_try_opts *o, const char *name, const char *arg, char *err,
                         size_t cap);

typedef struct vram_try_attempt {
    const char *strategy, *device, *dtype;
    char **argv;                /* substituted, NULL-terminated */
    vram_isolate_result res;
    vram_attempt_outcome outcome;
    vram_attempt_evidence ev;
    struct cJSON *result;       /* the VRAMKIT_RESULT object the child printed, or NULL */
    char result_error[256];     /* why its line was refused, or "" */
    vram_peak measured;         /* its GPU memory peak (NVML, its own report): peak.h */
} vram_try_attempt;

typedef struct vram_try_result {
    vram_try_attempt *attempts; /* attempts[0 .. n) */
    int n;
    int chosen;                 /* the attempt that succeeded, -1 when none */
    int cancelled;              /* *cancel stopped it */
} vram_try_result;

/* Runs the attempts. VRAM_OK with *r (free with vram_try_free), whatever the attempts did;
 * else a status with err: a child that could not be run at all, VRAM_E_NOMEM. */
vram_status vram_try_run(const vram_try_opts *o, vram_try_result *r, char *err, size_t cap);
void vram_try_free(vram_try_result *r);

/* How an attempt ended, in words: "exit 3", "signal 11 SIGSEGV", "timed out after 2 s, sent
 * SIGTERM then SIGKILL; ...", or why it could not start. */
void vram_try_describe_end(const vram_try_opts *o, const vram_try_attempt *a, char *buf,
                           size_t cap);

/* The report as one JSON object: command, source, strategies, skipped, timeout_s, grace_s,
 * attempts (each with `measured`: peak.h), chosen. */
void vram_try_json(vram_json *j, const vram_try_opts *o, const vram_try_result *r);

#endif /* VRAMKIT_DRIVER_ISOLATE_TRY_H */
