/* driver/isolate/exec_shim.c — the pdeathsig shim and the group guard (see exec_shim.h). */
#include "exec_shim.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "chain.h"

/* A pid given as text: > 1, else 0. */
static long parse_pid(const char *text) {
    char *end = NULL;
    long v;
    errno = 0;
    v = strtol(text, &end, 10);
    return errno != 0 || end == text || *end != '\0' || v <= 1 ? 0 : v;
}

int vram_exec_shim_main(int argc, char **argv) {
    long ppid;
    if (argc < 4 || strcmp(argv[2], "--") != 0 || argv[3][0] == '\0') {
        fprintf(stderr, "vramkit: " VRAM_EXEC_SHIM_COMMAND ": internal command of 'vramkit try' "
                        "and 'vramkit run' (usage: " VRAM_EXEC_SHIM_COMMAND " PPID -- PROGRAM ARGS...)\n");
        return 2;
    }
    if ((ppid = parse_pid(argv[1])) == 0) {
        fprintf(stderr, "vramkit: " VRAM_EXEC_SHIM_COMMAND ": '%s' is not a parent pid\n", argv[1]);
        return 2;
    }
#if defined(__linux__) && defined(PR_SET_PDEATHSIG)
    if (prctl(PR_SET_PDEATHSIG, (unsigned long)SIGKILL, 0UL, 0UL, 0UL) != 0) {
        fprintf(stderr, "vramkit: cannot tie '%s' to vramkit's life (prctl): %s\n", argv[3],
                strerror(errno));
        return 127;
    }
#endif
    /* the parent died before the request took effect: its child must not run on (an orphan's
       parent is init or a subreaper, never the pid it was spawned by) */
    if ((long)getppid() != ppid) raise(SIGKILL);
    execvp(argv[3], argv + 3);
    fprintf(stderr, "vramkit: cannot start '%s': %s\n", argv[3], strerror(errno));
    return 127;
}

int vram_guard_main(int argc, char **argv) {
    long pgid;
    char c = 0;
    ssize_t r;
    if (argc != 2 || (pgid = parse_pid(argv[1])) == 0) {
        fprintf(stderr, "vramkit: " VRAM_GUARD_COMMAND ": internal command of 'vramkit try' and "
                        "'vramkit run' (usage: " VRAM_GUARD_COMMAND " PGID)\n");
        return 2;
    }
    /* a terminal's or a group's signal is not for the guard: only vramkit's end is */
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    do {
        r = read(0, &c, 1);
    } while (r < 0 && errno == EINTR);
    if (r == 1 && c == 'q') return 0;
    kill(-(pid_t)pgid, SIGKILL); /* vramkit is gone: so is the service, with its whole group */
    return 0;
}

/* ---- starting a child through them ------------------------------------------------------ */

/* The program `name` would run as (PATH search as execvp does); 0, or an errno. */
static int resolve_program(const char *name, char *out, size_t cap) {
    if (strchr(name, '/')) {
        if (access(name, X_OK) != 0) return errno;
        snprintf(out, cap, "%s", name);
        return 0;
    }
    const char *path = getenv("PATH");
    int err = ENOENT;
    if (path == NULL || path[0] == '\0') path = "/usr/local/bin:/bin:/usr/bin";
    for (const char *p = path;;) {
        const char *colon = strchr(p, ':');
        size_t dl = colon ? (size_t)(colon - p) : strlen(p);
        struct stat sb;
        int w = dl == 0 ? snprintf(out, cap, "%s", name)
                        : snprintf(out, cap, "%.*s/%s", (int)dl, p, name);
        if (w > 0 && (size_t)w < cap && stat(out, &sb) == 0 && S_ISREG(sb.st_mode)) {
            if (access(out, X_OK) == 0) return 0;
            err = EACCES;
        }
        if (!colon) break;
        p = colon + 1;
    }
    return err;
}

vram_status vram_exec_isolated(const char *self_exe, char *const *argv, int n, int reap,
                               vram_isolate_opts *io, vram_isolate_result *res) {
    char ppid[32], prog[PATH_MAX];
    const char **av;
    int k = 0, e;
    vram_status st;
    if (!self_exe) {
        io->argv = (const char *const *)argv;
        io->guard_exe = NULL;
        return reap ? vram_try_isolate(io, res) : vram_isolate_run(io, res);
    }
    /* the program is found here, as posix_spawnp would, so "not found" stays NOT_STARTED
       although the shim is what is spawned */
    if ((e = resolve_program(argv[0], prog, sizeof prog)) != 0) {
        memset(res, 0, sizeof *res);
        res->how = VRAM_ATTEMPT_NOT_STARTED;
        res->exit_code = -1;
        res->pid = -1;
        res->start_errno = e;
        snprintf(res->start_error, sizeof res->start_error, "cannot start '%s': %s", argv[0],
                 strerror(e));
        return VRAM_OK;
    }
    if ((av = (const char **)calloc((size_t)n + 5, sizeof *av)) == NULL) return VRAM_E_NOMEM;
    snprintf(ppid, sizeof ppid, "%ld", (long)getpid());
    av[k++] = self_exe;
    av[k++] = VRAM_EXEC_SHIM_COMMAND;
    av[k++] = ppid;
    av[k++] = "--";
    av[k++] = prog;
    for (int i = 1; i < n; i++) av[k++] = argv[i];
    av[k] = NULL;
    io->argv = av;
    io->guard_exe = self_exe;
    st = reap ? vram_try_isolate(io, res) : vram_isolate_run(io, res);
    free(av);
    return st;
}
