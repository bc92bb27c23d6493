/* driver/isolate/service.h — `run` as a function: a service started under a strategy chain
 * (chain.h), as try does, until one strategy becomes ready (a line, a regex, a port, a file);
 * then its supervisor: output passes through line by line, stop signals are forwarded to its
 * process group, a death is restarted or degraded by vramkit/supervise.h's policy, and it
 * ends with the service. Each child runs through the isolation library (isolate.h) and the
 * pdeathsig shim (exec_shim.h), so it dies with its supervisor, even one killed with SIGKILL.
 * What happens is told as events (a struct; their JSON is written here); prints nothing of
 * its own. The process's signal handlers are its own while it runs: one per process. */
#ifndef VRAMKIT_DRIVER_ISOLATE_SERVICE_H
#define VRAMKIT_DRIVER_ISOLATE_SERVICE_H

#include <regex.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <vramkit/supervise.h>

#include "try.h"
#include "util/json.h"

#define VRAM_RUN_DEFAULT_READY_TIMEOUT_S 600.0

typedef enum vram_run_event_kind {
    VRAM_RUN_START,       /* before the first attempt */
    VRAM_RUN_ATTEMPT,     /* a start (restarts included) */
    VRAM_RUN_READY,
    VRAM_RUN_SIGNAL,      /* a signal forwarded to the service's group */
    VRAM_RUN_KILL,        /* still running --grace after a forwarded SIGTERM or SIGINT: SIGKILL
                             sent to its group */
    VRAM_RUN_MEMORY_OVER, /* the service's GPU memory went above the plan's high */
    VRAM_RUN_ENDED,       /* an attempt ended */
    VRAM_RUN_NEXT,        /* the next strategy (before ready) */
    VRAM_RUN_DEGRADE,     /* the next strategy after an OOM or sticky error (--degrade) */
    VRAM_RUN_RESTART,
    VRAM_RUN_EXIT,        /* the supervisor ends with the service */
    VRAM_RUN_GIVE_UP,     /* no strategy became ready, or a crash loop */
    VRAM_RUN_STOPPED      /* a stop signal between attempts (before a start, in a backoff) */
} vram_run_event_kind;

typedef struct vram_run_event {
    vram_run_event_kind kind;
    double elapsed_s;          /* since the supervisor started */
    int attempt;               /* 1, 2, ... over every start */
    const char *strategy;      /* the attempt's (from of next/degrade) */
    const char *device, *dtype;
    int restart;               /* attempt: restarts in a row before it (0: none) */
    const char *how;           /* ready: line|regex|port|file */
    double seconds;            /* ready: after its start; ended: its run; kill: the grace */
    int signal;                /* signal, kill (the stop signal it followed); ended: the one
                                  that ended it (0: none); stopped */
    pid_t pid;
    const vram_try_attempt *a; /* ended: how it ended */
    int ready;                 /* ended: it had become ready */
    double after_ready_s;
    const char *to;            /* next, degrade */
    vram_supervise_why why;    /* next, degrade, exit, give_up */
    uint32_t restart_no, restarts; /* restart: this one, the policy's limit */
    double delay_s;            /* restart */
    int code;                  /* exit, give_up: the exit code */
    int in_backoff;            /* stopped: during a backoff (else before a start) */
    /* GPU memory of the service's group (NVML): ready, ended, memory_over */
    int gpu_known;
    uint64_t gpu_bytes, gpu_peak, predicted_high;
    /* start: NVML, or why the service's memory is not known */
    const char *gpu_memory_unknown;
    /* ended: the attempt's measured peak (peak.h: NVML and the service's own report) */
    const vram_peak *measured;
    int watched;               /* start: a plan's high will be watched */
    /* give_up: each strategy's last outcome before ready (-1: ready earlier), crash loops */
    const int *last_before_ready;
    uint32_t restarts_total, degrades_total;
} vram_run_event;

typedef struct vram_run_opts {
    vram_try_chain chain;
    char *const *command;
    int ncommand;
    const char *ready_regex, *ready_file, *events;
    regex_t re;
    int have_re;
    int ready_port;            /* 0: none */
    double ready_timeout_s, grace_s;
    vram_supervise_config policy;
    const char *self_exe;      /* the vramkit executable the shim runs as (NULL: none, the
                                  children run directly and do not die with a SIGKILLed parent) */
    void (*on_event)(void *ctx, const vram_run_event *e); /* NULL: none */
    int events_on_stdout;      /* on_event writes to stdout, which the service's output shares:
                                  a line of it left unended is ended before each event */
    void *ctx;
} vram_run_opts;

/* Applies a chain option (chain.h), "ready-regex", "ready-port", "ready-file",
 * "ready-timeout", "grace", "restart", "degrade", "backoff", "backoff-max", "stable",
 * "events". VRAM_OK; VRAM_E_INVALID with err; VRAM_E_UNHANDLED for another name. */
vram_status vram_run_set(vram_run_opts *o, const char *name, const char *arg, char *err,
                         size_t cap);
/* After the options: the chain's source, the backoffs in order; the ready timeout resolved. */
vram_status vram_run_check(vram_run_opts *o, char *err, size_t cap);
void vram_run_free(vram_run_opts *o);

/* Runs the service to its end. VRAM_OK with *code the supervisor's exit code: once a service
 * ran, its own (its exit code, or 128 + N when signal N ended it); 1 when no strategy became
 * ready or a crash loop; 128 + N for a stop signal between attempts. Else a status with err: a
 * child that could not be run, VRAM_E_NOMEM. */
vram_status vram_run(const vram_run_opts *o, int *code, char *err, size_t cap);

/* The event as one JSON object: time (UTC), elapsed_s, event and its members (api: the
 * --events lines). Returns 0 for an event that has no JSON form (stopped), else 1. */
int vram_run_event_json(vram_json *j, const vram_run_event *e, const vram_run_opts *o);
/* The event's name in JSON ("ready", "give_up"). */
const char *vram_run_event_name(vram_run_event_kind k);

#endif /* VRAMKIT_DRIVER_ISOLATE_SERVICE_H */
