/* driver/isolate/helper.h — a helper process: a child that answers requests over a socket
 * for as long as its caller keeps it (the HDF5 child of driver/hdf5/h5source.h, so that a
 * crash or a memory bomb inside a library costs the child, never the caller). posix_spawn
 * (never fork) of `vramkit COMMAND` into a process group of its own, every signal at its
 * default action, the socket as descriptor 3 and one more descriptor as 4; stdin, stdout and
 * stderr /dev/null; nothing else inherited. Each answer has a deadline; close kills and reaps. */
#ifndef VRAMKIT_ISOLATE_HELPER_H
#define VRAMKIT_ISOLATE_HELPER_H

#include <stddef.h>
#include <sys/types.h>

#include <vramkit/base.h>

/* The helper's descriptors. */
#define VRAM_HELPER_SOCKET_FD 3
#define VRAM_HELPER_EXTRA_FD 4

typedef struct vram_helper {
    pid_t pid;   /* -1 when not running (never started, or reaped) */
    int sock;    /* this side of the socket, -1 when closed */
    int status;  /* waitpid's status once reaped; -1 when not known */
    pid_t owner; /* the process that started it: a fork of it neither talks to it nor ends it */
} vram_helper;

/* The vramkit executable that runs internal commands, into out: $VRAMKIT_EXE when set;
 * else the `vramkit` beside the shared library this code was loaded from (DIR/vramkit, then
 * DIR/bin/vramkit: the build tree and the Python package); else this program
 * (/proc/self/exe: the vramkit command itself). A program of its own that links the driver
 * sets VRAMKIT_EXE. Guarantees: VRAM_OK, or VRAM_E_IO with one line in err. */
vram_status vram_helper_exe(char *out, size_t cap, char *err, size_t ecap);

/* The same without the last resort: 1 and the path in out when $VRAMKIT_EXE is set (and fits)
 * or a `vramkit` is beside the shared library; else 0. For a library in a program that is not
 * vramkit (Python), where /proc/self/exe would be that program. */
int vram_helper_exe_named(char *out, size_t cap);

/* Starts `exe command` with extra_fd (or none: -1) as descriptor 4. Guarantees: VRAM_OK
 * and *h running; or VRAM_E_IO (it could not be started: the reason in err) and *h not
 * running. */
vram_status vram_helper_start(const char *exe, const char *command, int extra_fd, vram_helper *h,
                              char *err, size_t cap);

/* Is this process the one that started h (not a fork of it)? */
int vram_helper_mine(const vram_helper *h);

/* Sends all n bytes. VRAM_E_IO when the helper is gone (no SIGPIPE is raised). */
vram_status vram_helper_send(vram_helper *h, const void *p, size_t n);

/* Receives exactly n bytes before `deadline` (CLOCK_MONOTONIC seconds: vram_now_s, util/clock.h).
 * VRAM_OK; VRAM_E_IO when the helper closed its side (it ended, or is ending) or a read
 * failed; VRAM_E_TIMEOUT when the deadline passed first. */
vram_status vram_helper_recv(vram_helper *h, void *p, size_t n, double deadline);

/* Waits up to `grace` seconds for the helper to end by itself, then kills its process group
 * (SIGKILL), reaps it, and says how it ended into how: "exit 2", "SIGSEGV", "killed after
 * the deadline" (when we killed it). Returns the signal that ended it on its own (SIGSEGV),
 * 0 when it exited or we killed it. Closes the socket. Idempotent. In a fork of the process
 * that started it, only this copy of the socket is closed. */
int vram_helper_end(vram_helper *h, double grace, char *how, size_t cap);

#endif /* VRAMKIT_ISOLATE_HELPER_H */
