/* Special files where vramkit expects a file (issue 29): a FIFO given as a plan (plan --load,
 * try --plan), as a model's config.json, as a safetensors shard that an index names, as a GGUF,
 * and as --events with no reader. Each is one line naming the path and what it is, never a
 * wait: every command runs under alarm(), so a regression fails (SIGALRM) instead of hanging the
 * suite. Nothing here opens a FIFO's other end. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../fuzz/gen/model_fixtures.h"

#define LIMIT_S 20 /* far more than any of these takes; a hang ends here */

typedef struct run_result {
    int code, signal;
    char err[2048], out[2048];
} run_result;

static void slurp_fd(int fd, char *buf, size_t cap) {
    ssize_t n = pread(fd, buf, cap - 1, 0);
    buf[n > 0 ? n : 0] = '\0';
}

/* The built vramkit with args (NULL-terminated), killed by SIGALRM after LIMIT_S. */
static run_result run_limited(const char *const *args) {
    run_result r = {-1, 0, "", ""};
    char op[] = "/tmp/vramkit-fifo-out-XXXXXX", ep[] = "/tmp/vramkit-fifo-err-XXXXXX";
    int o = mkstemp(op), e = mkstemp(ep);
    cr_assert(o >= 0 && e >= 0);
    unlink(op);
    unlink(ep);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        const char *argv[32];
        int n = 0;
        int z = open("/dev/null", O_RDONLY);
        dup2(z, 0);
        dup2(o, 1);
        dup2(e, 2);
        argv[n++] = VRAMKIT_EXE;
        for (const char *const *a = args; *a && n < 31; a++) argv[n++] = *a;
        argv[n] = NULL;
        alarm(LIMIT_S); /* kept across exec: SIGALRM ends a command that waits forever */
        execv(VRAMKIT_EXE, (char *const *)argv);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFEXITED(status)) r.code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
    slurp_fd(o, r.out, sizeof r.out);
    slurp_fd(e, r.err, sizeof r.err);
    close(o);
    close(e);
    return r;
}

static char dir[64];

static void make_dir(void) {
    snprintf(dir, sizeof dir, "/tmp/vramkit-fifo-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

static void rm_dir(void) {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}

TestSuite(cli_fifo, .init = make_dir, .fini = rm_dir);

static const char *at(const char *name) {
    static char paths[4][256];
    static int next;
    char *p = paths[next++ % 4];
    snprintf(p, sizeof paths[0], "%s/%s", dir, name);
    return p;
}

static const char *fifo(const char *name) {
    const char *p = at(name);
    cr_assert_eq(mkfifo(p, 0600), 0, "mkfifo %s", p);
    return p;
}

static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    cr_assert_eq(fclose(f), 0);
}

/* exit `code`, one line on stderr that names `path` and says `what`, nothing on stdout. */
static void expect_refused(const run_result *r, int code, const char *path, const char *what) {
    cr_expect_eq(r->signal, 0, "it waited on the FIFO (signal %d): %s", r->signal, r->err);
    cr_expect_eq(r->code, code, "exit %d: %s", r->code, r->err);
    cr_expect(strstr(r->err, path) != NULL, "names %s: %s", path, r->err);
    cr_expect(strstr(r->err, what) != NULL, "says '%s': %s", what, r->err);
    const char *nl = strchr(r->err, '\n');
    cr_expect(nl != NULL && nl[1] == '\0', "one line: %s", r->err);
    cr_expect_str_empty(r->out);
}

Test(cli_fifo, plan_load) {
    const char *p = fifo("plan.json");
    const char *args[] = {"plan", "--load", p, NULL};
    run_result r = run_limited(args);
    expect_refused(&r, 2, p, "a FIFO, not a regular file");
}

Test(cli_fifo, try_plan) {
    const char *p = fifo("plan.json");
    const char *args[] = {"try", "--plan", p, "--", "true", NULL};
    run_result r = run_limited(args);
    expect_refused(&r, 2, p, "a FIFO, not a regular file");
}

Test(cli_fifo, config_json) {
    mkdir(at("model"), 0700);
    const char *p = fifo("model/config.json");
    const char *args[] = {"plan", "--model", p, "--assume-gpu", "8GiB", NULL};
    run_result r = run_limited(args);
    expect_refused(&r, 3, p, "not a regular file");
    /* in a model directory, a FIFO is not taken for its config.json */
    const char *dir_args[] = {"plan", "--model", at("model"), "--assume-gpu", "8GiB", NULL};
    r = run_limited(dir_args);
    expect_refused(&r, 2, at("model"), "no model files here");
}

Test(cli_fifo, a_shard_named_by_the_index) {
    mkdir(at("model"), 0700);
    write_text(at("model/config.json"), FX_CFG_GPT2);
    write_text(at("model/model.safetensors.index.json"),
               "{\"metadata\": {}, \"weight_map\": {\"wte.weight\": \"model-00001-of-00001.safetensors\"}}");
    const char *p = fifo("model/model-00001-of-00001.safetensors");
    const char *args[] = {"plan", "--model", at("model"), "--assume-gpu", "8GiB", NULL};
    run_result r = run_limited(args);
    expect_refused(&r, 3, "model-00001-of-00001.safetensors", "a FIFO, not a regular file");
    (void)p;
}

Test(cli_fifo, gguf) {
    const char *p = fifo("model.gguf");
    const char *args[] = {"estimate", p, "--assume-gpu", "8GiB", NULL};
    run_result r = run_limited(args);
    expect_refused(&r, 3, p, "not a regular file");
}

Test(cli_fifo, events_with_no_reader) {
    const char *p = fifo("events");
    const char *args[] = {"run", "--strategies", "a", "--events", p, "--", "true", NULL};
    run_result r = run_limited(args);
    expect_refused(&r, 3, p, "a FIFO that no process is reading");
}

/* the HDF5 file of chunks and stream is opened in this process (the HDF5 child gets the
 * descriptor), so it is checked here first */
Test(cli_fifo, chunks_file) {
    const char *p = fifo("data.h5");
    const char *args[] = {"chunks", p, "--dataset", "/x", "--budget", "1MiB", NULL};
    run_result r = run_limited(args);
    expect_refused(&r, 2, p, "a FIFO, not a regular file");
}

Test(cli_fifo, stream_file) {
    const char *p = fifo("data.h5");
    const char *args[] = {"stream", p, "--dataset", "/x", "--device", "cpu", "--budget", "1MiB", NULL};
    run_result r = run_limited(args);
    expect_refused(&r, 2, p, "a FIFO, not a regular file");
}
