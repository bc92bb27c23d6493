/* cli_run.h — run the built `vramkit` binary from a test and capture what it did.
 * Stdout and stderr go to temporary files (no pipe can fill and block), the exit status is
 * decoded, and the captured text is returned NUL-terminated for assertions. */
#ifndef VRAMKIT_TEST_CLI_RUN_H
#define VRAMKIT_TEST_CLI_RUN_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct cli_result {
    int exit_code; /* -1 when killed by a signal */
    int signal;
    char *out;
    char *err;
} cli_result;

static char *cli_run__slurp(int fd) {
    off_t n = lseek(fd, 0, SEEK_END);
    char *buf = (char *)malloc((size_t)n + 1);
    if (!buf) return NULL;
    lseek(fd, 0, SEEK_SET);
    off_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, buf + got, (size_t)(n - got));
        if (r <= 0) break;
        got += r;
    }
    buf[got] = '\0';
    return buf;
}

/* Runs VRAMKIT_EXE with argv (NULL-terminated, without argv[0]); env_extra may be NULL
 * or "NAME=value" strings terminated by NULL. */
static cli_result cli_run_env(const char *const *args, const char *const *env_extra) {
    cli_result r = {-1, 0, NULL, NULL};
    char out_path[] = "/tmp/vramkit-out-XXXXXX", err_path[] = "/tmp/vramkit-err-XXXXXX";
    int out_fd = mkstemp(out_path), err_fd = mkstemp(err_path);
    if (out_fd < 0 || err_fd < 0) return r;
    unlink(out_path);
    unlink(err_path);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(out_fd, 1);
        dup2(err_fd, 2);
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0) dup2(devnull, 0);
        /* the launcher's variables of whoever runs the tests (a CI job under Slurm or
         * mpirun) must not change what the commands do: only the test's own count */
        static const char *const launcher_vars[] = {
            "RANK", "WORLD_SIZE", "LOCAL_RANK", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
            "OMPI_COMM_WORLD_LOCAL_RANK", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID",
            "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"};
        for (size_t v = 0; v < sizeof launcher_vars / sizeof launcher_vars[0]; v++)
            unsetenv(launcher_vars[v]);
        /* try and run append measured peaks to the user's cache by default: never from a test */
        setenv("XDG_CACHE_HOME", "/tmp/vramkit-test-cache", 1);
        for (const char *const *e = env_extra; e && *e; e++) putenv((char *)*e);
        const char *argv[64];
        int n = 0;
        argv[n++] = VRAMKIT_EXE;
        for (const char *const *a = args; *a && n < 63; a++) argv[n++] = *a;
        argv[n] = NULL;
        execv(VRAMKIT_EXE, (char *const *)argv);
        _exit(127);
    }
    int status = 0;
    if (pid > 0) waitpid(pid, &status, 0);
    if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
    r.out = cli_run__slurp(out_fd);
    r.err = cli_run__slurp(err_fd);
    close(out_fd);
    close(err_fd);
    return r;
}

static inline cli_result cli_run(const char *const *args) { return cli_run_env(args, NULL); }

static inline void cli_result_free(cli_result *r) {
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}

/* Number of '\n'-terminated lines in s. */
static inline int cli_count_lines(const char *s) {
    int n = 0;
    for (; s && *s; s++) n += (*s == '\n');
    return n;
}

/* Run a command that must fail as bad usage: exit 2, one line on stderr that starts with
 * prefix ("vramkit: plan: ") and contains needle, nothing on stdout. args holds up to 8
 * strings of at most 48 bytes, the unused ones empty (the shape of the parameter tables). */
static inline void cli_expect_usage_error(char (*args)[48], int max, const char *needle,
                                          const char *prefix) {
    const char *argv[16];
    int n = 0;
    while (n < max && n < 15 && args[n][0]) {
        argv[n] = args[n];
        n++;
    }
    argv[n] = NULL;
    cli_result r = cli_run(argv);
    cr_expect_eq(r.exit_code, 2, "%s: exit %d (%s)", needle, r.exit_code, r.err);
    cr_expect(strstr(r.err, needle) != NULL, "stderr lacks '%s': %s", needle, r.err);
    cr_expect_eq(cli_count_lines(r.err), 1, "one line: %s", r.err);
    cr_expect(strncmp(r.err, prefix, strlen(prefix)) == 0, "%s", r.err);
    cr_expect_str_empty(r.out, "no partial output");
    cli_result_free(&r);
}

#endif
