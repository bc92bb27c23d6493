/* driver/isolate/exec_shim.c — the pdeathsig shim of `vramkit run` (see exec_shim.h). */
#include "exec_shim.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

int vram_exec_shim_main(int argc, char **argv) {
    char *end = NULL;
    long ppid;
    if (argc < 4 || strcmp(argv[2], "--") != 0 || argv[3][0] == '\0') {
        fprintf(stderr, "vramkit: " VRAM_EXEC_SHIM_COMMAND ": internal command of 'vramkit run' "
                        "(usage: " VRAM_EXEC_SHIM_COMMAND " PPID -- PROGRAM ARGS...)\n");
        return 2;
    }
    errno = 0;
    ppid = strtol(argv[1], &end, 10);
    if (errno != 0 || end == argv[1] || *end != '\0' || ppid <= 1) {
        fprintf(stderr, "vramkit: " VRAM_EXEC_SHIM_COMMAND ": '%s' is not a parent pid\n", argv[1]);
        return 2;
    }
#if defined(__linux__) && defined(PR_SET_PDEATHSIG)
    if (prctl(PR_SET_PDEATHSIG, (unsigned long)SIGKILL, 0UL, 0UL, 0UL) != 0) {
        fprintf(stderr, "vramkit: run: cannot tie '%s' to vramkit's life (prctl): %s\n", argv[3],
                strerror(errno));
        return 127;
    }
#endif
    /* the parent died before the request took effect: its child must not run on */
    if ((long)getppid() != ppid) raise(SIGKILL);
    execvp(argv[3], argv + 3);
    fprintf(stderr, "vramkit: run: cannot start '%s': %s\n", argv[3], strerror(errno));
    return 127;
}
