/* driver/isolate/exec_shim.h — `vramkit __exec PPID -- PROGRAM ARGS...`: the first thing a
 * supervised child of `vramkit run` runs. It asks the kernel to SIGKILL it when its parent
 * dies (Linux PR_SET_PDEATHSIG, kept across exec), checks that the parent is still PPID (it
 * may have died before the request), then execs PROGRAM in its place (same pid, same group).
 * posix_spawn cannot set the request itself; this keeps the isolation library spawn-only. */
#ifndef VRAMKIT_EXEC_SHIM_H
#define VRAMKIT_EXEC_SHIM_H

#define VRAM_EXEC_SHIM_COMMAND "__exec"

/* main() of the internal command; argv[0] is "__exec". Does not return on success; on
 * failure prints "vramkit: run: cannot start 'PROGRAM': REASON" and returns 127. */
int vram_exec_shim_main(int argc, char **argv);

#endif
