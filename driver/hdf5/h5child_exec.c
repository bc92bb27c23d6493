/* driver/hdf5/h5child_exec.c — `vramkit __h5` in the vramkit command: it becomes the HDF5 child
 * program, vramkit-h5, built and installed beside vramkit (h5child.c is its code). HDF5 and what
 * it loads (libcurl, TLS, Kerberos, LDAP: about 40 libraries, ~8 ms of every start,
 * test/bench/RESULTS.md) are linked into vramkit-h5 alone, so the commands that never read an
 * HDF5 file do not load them. The parent starts vramkit-h5 itself where it finds it beside the
 * vramkit it would run (h5source.c); this route serves a VRAMKIT_EXE that names a vramkit with
 * no vramkit-h5 beside its name but one beside the program it links to. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stream/h5desc.h"

int vram_h5_program_beside(const char *exe, char *out, size_t cap) {
    char real[PATH_MAX];
    if (realpath(exe, real) == NULL) return -1;
    char *slash = strrchr(real, '/');
    if (slash != NULL) *slash = '\0';
    if ((size_t)snprintf(out, cap, "%s/" VRAM_H5_PROGRAM, slash != NULL ? real : ".") >= cap) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return 0;
}

int vram_h5_child_main(int argc, char **argv) {
    char path[PATH_MAX];
    if (vram_h5_program_beside("/proc/self/exe", path, sizeof path) != 0) {
        fprintf(stderr, "vramkit: " VRAM_H5_CHILD_COMMAND ": cannot find " VRAM_H5_PROGRAM
                        " beside this program (/proc/self/exe: %s)\n", strerror(errno));
        return 3;
    }
    /* its argv: the program, then ours ("__h5"): its main hands argv + 1 to the child */
    char **args = calloc((size_t)argc + 2, sizeof *args);
    if (args == NULL) return 3;
    args[0] = path;
    for (int i = 0; i < argc; i++) args[i + 1] = argv[i];
    execv(path, args);
    fprintf(stderr, "vramkit: " VRAM_H5_CHILD_COMMAND ": cannot run the HDF5 child program %s: %s (it is built and "
                    "installed beside vramkit)\n", path, strerror(errno));
    free(args);
    return 3;
}
