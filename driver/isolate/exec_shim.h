/* driver/isolate/exec_shim.h — the two internal commands that tie a child's life to vramkit's.
 * `vramkit __exec PPID -- PROGRAM ARGS...` is the first thing a child of `try` and `run` runs:
 * it asks the kernel to SIGKILL it when its parent dies (Linux PR_SET_PDEATHSIG, kept across
 * exec), checks that the parent is still PPID (it may have died before the request), then execs
 * PROGRAM in its place (same pid, same group). posix_spawn cannot set the request itself; this
 * keeps the isolation library spawn-only.
 * `vramkit __guard PGID` runs beside each such child, in a process group of its own, with the
 * read end of a pipe that only vramkit holds open as its stdin: the byte 'q' ends it quietly
 * (the attempt ended); end of file means vramkit died (even by SIGKILL), and it kills the
 * child's whole process group (SIGKILL), so the service's own children go too. */
#ifndef VRAMKIT_EXEC_SHIM_H
#define VRAMKIT_EXEC_SHIM_H

#include <stddef.h>

#include "isolate.h"

#define VRAM_EXEC_SHIM_COMMAND "__exec"

/* main() of the internal command; argv[0] is "__exec". Does not return on success; on
 * failure prints "vramkit: cannot start 'PROGRAM': REASON" and returns 127. */
int vram_exec_shim_main(int argc, char **argv);

/* main() of `__guard PGID`: waits on stdin as above. Returns 0, or 2 for bad arguments. */
int vram_guard_main(int argc, char **argv);

/* Runs argv[0 .. n) (argv[0] a program name, searched in PATH as execvp does) as an isolated
 * child (isolate.h) through self_exe's shim and guard; self_exe NULL: directly, without them.
 * The program is looked up here, so one that is missing is NOT_STARTED with its errno, not an
 * exit 127 of the shim. `reap`: vram_try_isolate (descendants that left the group are ended
 * too), else vram_isolate_run. io's argv and guard_exe are set here; the rest is the caller's.
 * Returns what those return. */
vram_status vram_exec_isolated(const char *self_exe, char *const *argv, int n, int reap,
                               vram_isolate_opts *io, vram_isolate_result *res);

#endif
