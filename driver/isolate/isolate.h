/* driver/isolate/isolate.h — run one command as an isolated child and report how it ended.
 * posix_spawn (never fork) into a process group of its own, stdin from /dev/null, a
 * wall-clock timeout (SIGTERM to the group, a grace period, SIGKILL), the last 64 KiB of
 * stdout and of stderr, and the child's `VRAMKIT_RESULT {json}` line. A native crash costs
 * the child, not the caller; the caller is left with no zombie and no open descriptor. */
#ifndef VRAMKIT_ISOLATE_H
#define VRAMKIT_ISOLATE_H

#include <signal.h>
#include <spawn.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <vramkit/attempt.h>

struct cJSON;

#define VRAM_ISOLATE_TAIL_BYTES (64u * 1024u)   /* kept of each of stdout and stderr */
#define VRAM_ISOLATE_RESULT_MAX (64u * 1024u)   /* longest VRAMKIT_RESULT payload accepted */
#define VRAM_ISOLATE_RESULT_DEPTH 32            /* deepest nesting of a VRAMKIT_RESULT object */
#define VRAM_ISOLATE_DEFAULT_GRACE_S 2.0        /* SIGTERM -> SIGKILL */
#define VRAM_ISOLATE_DEFAULT_DRAIN_S 0.25       /* reading pipes after the child ended */
#define VRAM_ISOLATE_RESULT_PREFIX "VRAMKIT_RESULT"
#define VRAM_GUARD_COMMAND "__guard"           /* guard_exe's internal command */

/* What to run. Zero-initialise, set argv, and the rest has defaults. */
typedef struct vram_isolate_opts {
    /* Program and arguments, NULL-terminated, argv[0] non-empty. A program name without '/'
     * is searched in this process's PATH; a relative path is resolved in `cwd`. */
    const char *const *argv;
    /* "NAME=VALUE" strings added to this process's environment, replacing variables of the
     * same name; NULL-terminated; NULL for none. */
    const char *const *env;
    /* Working directory of the child; NULL: this process's. */
    const char *cwd;
    /* Wall-clock limit in seconds; 0: none. */
    double timeout_s;
    /* Seconds between SIGTERM and SIGKILL on a timeout; 0: VRAM_ISOLATE_DEFAULT_GRACE_S. */
    double grace_s;
    /* After the child ended, how long to keep reading pipes that something it left behind
     * still holds open before killing its process group; 0: VRAM_ISOLATE_DEFAULT_DRAIN_S. */
    double drain_s;
    /* 1: notice the child's end by checking every few milliseconds instead of through a
     * pidfd (the fallback for kernels before 5.3; tests run both). */
    int no_pidfd;
    /* When not NULL: once *cancel is nonzero (a signal handler sets it), the child is
     * stopped as on a timeout (SIGTERM, grace, SIGKILL) and the result says `cancelled`.
     * It is looked at at least every 100 ms. */
    const volatile sig_atomic_t *cancel;
    /* 1: also end what the child leaves outside its process group (a grandchild that called
     * setsid() or setpgid(), as daemons do, which the group kill misses and which may hold
     * GPU memory). This process becomes a child subreaper (Linux prctl
     * PR_SET_CHILD_SUBREAPER; process-wide, and it stays set), so such descendants are
     * reparented here when their parent ends; once the child has been reaped, every child
     * this process has is killed (SIGKILL) and reaped, round after round, and counted in
     * `escaped`. Only for a process that has no other children while an attempt runs (the
     * `vramkit try` and `vramkit run` commands); VRAM_E_NOT_SUPPORTED where the flag cannot
     * be set. */
    int reap_descendants;
    /* The vramkit executable, or NULL: while the child runs, `guard_exe __guard PGID`
     * (exec_shim.h) runs beside it in a group of its own, holding the read end of a pipe
     * only this process holds open: if this process dies, even by SIGKILL, the guard kills
     * the child's whole process group. It is told to end quietly, and reaped, before the
     * child is reaped (so the group's id cannot have been reused). A guard that cannot be
     * started leaves the child unguarded, nothing else. */
    const char *guard_exe;
    /* Hooks for a caller that stays beside a long-running child (`vramkit run`); all
     * optional. on_output gets every piece of output as it is read (stream 1: stdout, 2:
     * stderr), before the end of the child too (the tails are kept all the same). on_tick
     * runs on every turn of the loop while the child runs, and at least every tick_ms
     * (0: 100), with the child's pid, which is also its process group's id: it may signal
     * the group. It returns VRAM_ISOLATE_TICK_* flags. Both get hook_ctx. */
    void (*on_output)(void *ctx, int stream, const char *data, size_t n);
    int (*on_tick)(void *ctx, pid_t pid);
    void *hook_ctx;
    int tick_ms;
} vram_isolate_opts;

/* on_tick's flags. NO_TIMEOUT: timeout_s no longer applies to this child (it became ready);
 * a timeout already under way (SIGTERM sent) goes on. */
#define VRAM_ISOLATE_TICK_NO_TIMEOUT 1

/* The last bytes a child wrote to one stream. */
typedef struct vram_isolate_stream {
    char *data;     /* data[0, len), then a NUL for convenience (data may hold NULs too);
                       NULL when nothing was written */
    size_t len;     /* <= VRAM_ISOLATE_TAIL_BYTES */
    uint64_t total; /* bytes written in all; total > len means the start was dropped */
} vram_isolate_stream;

typedef struct vram_isolate_result {
    /* EXITED, SIGNALED, TIMED_OUT (the timeout fired, whatever the child did next), or
     * NOT_STARTED. */
    vram_attempt_how how;
    int exit_code;           /* when it exited (a timed-out child may exit on SIGTERM), else -1 */
    int signal;              /* the signal that killed it (timed out too), else 0 */
    const char *signal_name; /* "SIGSEGV"; NULL when no signal or an unknown number */
    int start_errno;         /* NOT_STARTED: the errno */
    char start_error[256];   /* NOT_STARTED: "cannot start 'prog': No such file or directory" */
    double seconds;          /* wall time from the spawn to the child's end */
    pid_t pid;               /* the child's pid (and process group), -1 when not started */
    int sent_term, sent_kill; /* the runner signalled the group on the timeout */
    int cancelled;           /* stopped because *opts->cancel was set (how == TIMED_OUT) */
    int leftovers;           /* the pipes were still held open after the child ended (by
                                processes it left behind), so its group was killed early */
    int escaped;             /* reap_descendants: processes it left outside its group, found
                                after it ended, killed if still running, and reaped (-1: they
                                could not be listed: no /proc/self/task/TID/children) */
    vram_isolate_stream out, err;
    /* The last `VRAMKIT_RESULT` line of stdout: its payload after the prefix and one blank,
     * without the line end; NUL-terminated; NULL when there was none. */
    char *result_line;
    size_t result_len;
    int result_too_long; /* the last such line was longer than VRAM_ISOLATE_RESULT_MAX */
} vram_isolate_result;

/* Runs the command to its end. Requires: opts, res valid.
 * Guarantees: VRAM_OK with *res filled whenever the command was tried, including when it
 * could not be started (how == NOT_STARTED, with errno and its text); VRAM_E_INVALID for
 * bad options (no argv[0], a negative or non-finite time, an env entry without NAME=);
 * VRAM_E_NOT_SUPPORTED for `cwd` where the C library cannot change directory in posix_spawn,
 * and for reap_descendants where this process cannot become a child subreaper.
 * The child runs in its own process group; when it ends, anything left in that group is
 * killed. No descriptor opened here stays open, and the child is always reaped. Requires
 * SIGCHLD not to be ignored (else the kernel reaps the child and its status is lost). Free
 * with vram_isolate_result_free. */
vram_status vram_isolate_run(const vram_isolate_opts *opts, vram_isolate_result *res);

/* Frees what vram_isolate_run allocated; the result can be freed twice. */
void vram_isolate_result_free(vram_isolate_result *res);

/* The view the core classifies (vramkit/attempt.h): how it ended, and the stderr tail. */
vram_attempt_end vram_isolate_end(const vram_isolate_result *res);

/* Parses a VRAMKIT_RESULT payload (text[0, len), need not be NUL-terminated).
 * Guarantees: VRAM_OK with *out a cJSON object (free with cJSON_Delete); otherwise
 * VRAM_E_FORMAT, *out NULL and a one-line reason in err ("VRAMKIT_RESULT line is not valid
 * JSON: ...", "... is not an object ...", "... is longer than ...", "... nested deeper
 * than ..."). err may be NULL when cap is 0. */
vram_status vram_isolate_parse_result(const char *text, size_t len, struct cJSON **out,
                                      char *err, size_t cap);

/* ---- finding the VRAMKIT_RESULT line in a stream (used by vram_isolate_run) ------------ */

/* Follows a byte stream in pieces of any size and keeps the last line that starts with
 * "VRAMKIT_RESULT" followed by a blank, a line end or the end of the stream. Memory is
 * bounded by 2 x VRAM_ISOLATE_RESULT_MAX whatever the stream holds. */
typedef struct vram_isolate_scanner {
    int state;           /* private */
    size_t matched;      /* private: prefix bytes seen at this line's start */
    char *cur;           /* private: the payload being collected */
    size_t cur_len, cur_cap;
    int cur_long;
    char *last;          /* the last complete payload (NUL-terminated), or NULL */
    size_t last_len;
    int last_too_long;   /* the last result line was too long (then last is NULL) */
    int no_memory;       /* an allocation failed: lines were lost */
} vram_isolate_scanner;

void vram_isolate_scanner_init(vram_isolate_scanner *s);
void vram_isolate_scanner_feed(vram_isolate_scanner *s, const char *data, size_t n);
/* The end of the stream: a last line without a newline counts. */
void vram_isolate_scanner_finish(vram_isolate_scanner *s);
void vram_isolate_scanner_free(vram_isolate_scanner *s);

/* Private (isolate.c, helper.c): sets attr (initialised) for a child of ours: its own process
 * group, no signal blocked, every signal at its default action. 0 or posix_spawn's error. */
int vram__isolate_spawnattr(posix_spawnattr_t *attr);

#endif /* VRAMKIT_ISOLATE_H */
