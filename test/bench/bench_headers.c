/* Benchmark: safetensors headers at scale, as files (issue 28, item 6).
 *   one      a single file whose header lists 100,000 tensors (about 11 MB of JSON);
 *   sharded  the same 100,000 tensors in 200 shards with their model.safetensors.index.json
 *            (the form of DeepSeek-V3's 163 shards).
 * Each read runs in a child process of its own (vram_safetensors_read, vram_read_path on the
 * index), which reports its CPU time (getrusage) and its peak resident memory less that of an
 * idle child; the data sections are sparse (ftruncate), so only headers are read. In the same
 * run, when a Python with the safetensors package is given (argument 2, or
 * VRAMKIT_BENCH_PYTHON), the same files are read by safetensors' own reader (safe_open, keys
 * and metadata) and by json.loads of the header bytes, CPU time of the same process.
 * The one file is also read as a user pays for it: `vramkit estimate FILE` (this build's
 * program) run whole, its CPU time (start, linking, the read, the estimate, the exit) from
 * wait4, median of 11 runs (VRAMKIT_BENCH_RUNS). With VRAMKIT_BENCH_BASE naming another
 * vramkit (main built the same way), the two take turns run by run, for an A/B in one run.
 * Reports medians of 5 runs. Usage: bench_headers [tensors] [python]. Exit 0. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../fuzz/gen/model_fixtures.h"
#include "bench_gen.h"
#include "models/model_read.h"

#define RUNS 5
#define SHARDS 200

static void write_file(const char *path, long from, long to, size_t *hdr_bytes) {
    uint64_t data;
    size_t n;
    char *json = bench_header(from, to, &data, &n);
    unsigned char len8[8];
    for (int i = 0; i < 8; i++)
        len8[i] = (unsigned char)((uint64_t)n >> (8 * i));
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || write(fd, len8, 8) != 8 || write(fd, json, n) != (ssize_t)n ||
        ftruncate(fd, (off_t)(8 + n + data)) != 0) {
        perror(path);
        exit(3);
    }
    close(fd);
    free(json);
    if (hdr_bytes) *hdr_bytes += n;
}

static double cpu_s(const struct rusage *r) {
    return (double)r->ru_utime.tv_sec + (double)r->ru_utime.tv_usec * 1e-6 +
           (double)r->ru_stime.tv_sec + (double)r->ru_stime.tv_usec * 1e-6;
}

/* In a child: what (0 idle, 1 one file, 2 the index) read; writes the CPU seconds of the
 * read and the child's peak RSS in KiB to the pipe. */
static void child(int what, const char *path, int fd) {
    struct rusage a, b;
    vram_model m;
    char err[512];
    vram_status st = VRAM_OK;
    getrusage(RUSAGE_SELF, &a);
    if (what == 1) st = vram_safetensors_read(path, &m, err, sizeof err);
    if (what == 2) st = vram_read_path(path, &m, err, sizeof err);
    getrusage(RUSAGE_SELF, &b);
    if (st != VRAM_OK) {
        fprintf(stderr, "bench_headers: %s\n", err);
        _exit(1);
    }
    double r[2] = {cpu_s(&b) - cpu_s(&a), (double)b.ru_maxrss};
    if (write(fd, r, sizeof r) != (ssize_t)sizeof r) _exit(1);
    _exit(0);
}

static void run(int what, const char *path, double *cpu, double *rss_kib) {
    int p[2];
    double r[2] = {0, 0};
    if (pipe(p) != 0) exit(3);
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        child(what, path, p[1]);
    }
    close(p[1]);
    if (read(p[0], r, sizeof r) != (ssize_t)sizeof r) {
        fprintf(stderr, "bench_headers: the child failed\n");
        exit(1);
    }
    close(p[0]);
    int status;
    waitpid(pid, &status, 0);
    *cpu = r[0];
    *rss_kib = r[1];
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void measure(int what, const char *path, double *cpu, double *mem_bytes) {
    double c[RUNS], m[RUNS], idle_c, idle_m;
    run(0, path, &idle_c, &idle_m);
    for (int i = 0; i < RUNS; i++) {
        run(what, path, &c[i], &m[i]);
        m[i] = (m[i] - idle_m) * 1024.0;
    }
    qsort(c, RUNS, sizeof c[0], cmp_double);
    qsort(m, RUNS, sizeof m[0], cmp_double);
    *cpu = c[RUNS / 2];
    *mem_bytes = m[RUNS / 2];
}

/* `exe estimate path`, run once whole: its CPU seconds (wait4) and its peak RSS in KiB. */
static double command_once(const char *exe, const char *path, double *rss_kib) {
    struct rusage r;
    int status;
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0) dup2(null, 1);
        execl(exe, exe, "estimate", path, (char *)NULL);
        _exit(127);
    }
    if (pid < 0 || wait4(pid, &status, 0, &r) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0) {
        fprintf(stderr, "bench_headers: %s estimate %s failed\n", exe, path);
        exit(1);
    }
    if ((double)r.ru_maxrss > *rss_kib) *rss_kib = (double)r.ru_maxrss;
    return cpu_s(&r);
}

#define CMD_RUNS_MAX 256

/* `vramkit estimate path`, run whole: the median CPU seconds of n runs and the largest peak
 * RSS in KiB. With another vramkit (base, not NULL), the two take turns, n runs each, and
 * base's median and quartiles go to base_q[0 .. 2], this build's to q[0 .. 2]. */
static void command_cpu(const char *path, const char *base, int n, double q[3],
                        double base_q[3], double *rss_kib) {
    static double c[CMD_RUNS_MAX], b[CMD_RUNS_MAX];
    double unused = 0;
    if (n > CMD_RUNS_MAX) n = CMD_RUNS_MAX;
    *rss_kib = 0;
    for (int i = 0; i < n; i++) {
        if (base != NULL) b[i] = command_once(base, path, &unused);
        c[i] = command_once(VRAMKIT_EXE, path, rss_kib);
    }
    qsort(c, (size_t)n, sizeof c[0], cmp_double);
    q[0] = c[n / 4], q[1] = c[n / 2], q[2] = c[(3 * n) / 4];
    if (base != NULL) {
        qsort(b, (size_t)n, sizeof b[0], cmp_double);
        base_q[0] = b[n / 4], base_q[1] = b[n / 2], base_q[2] = b[(3 * n) / 4];
    }
}

static const char py[] =
    "import json, sys, time, os\n"
    "from safetensors import safe_open\n"
    "one, idx = sys.argv[1], sys.argv[2]\n"
    "def med(f):\n"
    "    t = []\n"
    "    for _ in range(5):\n"
    "        a = time.process_time(); f(); t.append(time.process_time() - a)\n"
    "    return sorted(t)[2]\n"
    "def hdr(p):\n"
    "    with open(p, 'rb') as fh:\n"
    "        n = int.from_bytes(fh.read(8), 'little'); return fh.read(n)\n"
    "def st(p):\n"
    "    with safe_open(p, 'np') as f: f.keys(); f.metadata()\n"
    "d = os.path.dirname(idx)\n"
    "shards = sorted(x for x in os.listdir(d) if x.endswith('.safetensors'))\n"
    "h1 = hdr(one); hs = [hdr(os.path.join(d, s)) for s in shards]\n"
    "with open(idx, 'rb') as fh: ib = fh.read()\n"
    "print('%.4f %.4f %.4f %.4f' % (med(lambda: json.loads(h1)), med(lambda: st(one)),\n"
    "      med(lambda: (json.loads(ib), [json.loads(h) for h in hs])),\n"
    "      med(lambda: [st(os.path.join(d, s)) for s in shards])))\n";

int main(int argc, char **argv) {
    long tensors = argc > 1 ? strtol(argv[1], NULL, 10) : 100000;
    const char *python = argc > 2 ? argv[2] : getenv("VRAMKIT_BENCH_PYTHON");
    char dir[64], one[128], sdir[128], idx[160], path[200];
    size_t one_bytes = 0, shard_bytes = 0;
    if (tensors < SHARDS || tensors > 10000000) {
        fprintf(stderr, "usage: %s [tensors (%d..10000000)] [python]\n", argv[0], SHARDS);
        return 2;
    }
    if (fx_tmpdir(dir) == NULL) return 3;
    snprintf(one, sizeof one, "%s/model.safetensors", dir);
    write_file(one, 0, tensors, &one_bytes);
    snprintf(sdir, sizeof sdir, "%s/sharded", dir);
    mkdir(sdir, 0700);
    /* the shards and the index's weight_map */
    size_t cap = (size_t)tensors * 96 + 256, n = 0;
    char *index = malloc(cap);
    if (index == NULL) return 3;
    n += (size_t)snprintf(index + n, cap - n, "{\"metadata\":{},\"weight_map\":{");
    for (int s = 0; s < SHARDS; s++) {
        long from = tensors * s / SHARDS, to = tensors * (s + 1) / SHARDS;
        snprintf(path, sizeof path, "%s/model-%05d-of-%05d.safetensors", sdir, s + 1, SHARDS);
        write_file(path, from, to, &shard_bytes);
        for (long i = from; i < to; i++)
            n += (size_t)snprintf(index + n, cap - n,
                                  "%s\"model.layers.%ld.%s.weight\":\"model-%05d-of-%05d.safetensors\"",
                                  i ? "," : "", i / 10, bench_parts[i % 10], s + 1, SHARDS);
    }
    n += (size_t)snprintf(index + n, cap - n, "}}");
    snprintf(idx, sizeof idx, "%s/model.safetensors.index.json", sdir);
    if (fx_write_file(idx, index, n) != 0) return 3;
    free(index);

    double c1, m1, c2, m2, cc, cm, q[3], bq[3];
    const char *base = getenv("VRAMKIT_BENCH_BASE");
    const char *runs = getenv("VRAMKIT_BENCH_RUNS");
    if (base != NULL && base[0] == '\0') base = NULL;
    measure(1, one, &c1, &m1);
    measure(2, idx, &c2, &m2);
    const int nruns = runs != NULL && atoi(runs) > 0 ? atoi(runs) : 11;
    command_cpu(one, base, nruns, q, bq, &cm);
    cc = q[1];
    printf("one file: %ld tensors, %zu bytes of header\n", tensors, one_bytes);
    printf("  vramkit  %.4f s CPU, peak memory %.1f MB above an idle child (%.2f x the header)\n",
           c1, m1 / 1e6, m1 / (double)one_bytes);
    printf("  vramkit estimate FILE, the whole command: %.4f s CPU (median of %d; quartiles "
           "%.4f-%.4f), peak RSS %.1f MB\n",
           cc, nruns, q[0], q[2], cm * 1024.0 / 1e6);
    if (base != NULL)
        printf("  %s estimate FILE, in turns with it: %.4f s CPU (quartiles %.4f-%.4f); this "
               "build / that one %.2f\n",
               base, bq[1], bq[0], bq[2], cc / bq[1]);
    printf("sharded: %d shards, %zu bytes of headers and a %zu-byte index\n", SHARDS,
           shard_bytes, n);
    printf("  vramkit  %.4f s CPU, peak memory %.1f MB above an idle child\n", c2, m2 / 1e6);
    if (python != NULL && python[0] != '\0') {
        char cmd[1024];
        char script[160];
        snprintf(script, sizeof script, "%s/bench.py", dir);
        if (fx_write_file(script, py, strlen(py)) != 0) return 3;
        snprintf(cmd, sizeof cmd, "'%s' '%s' '%s' '%s'", python, script, one, idx);
        FILE *f = popen(cmd, "r");
        double j1 = 0, s1 = 0, j2 = 0, s2 = 0;
        if (f != NULL && fscanf(f, "%lf %lf %lf %lf", &j1, &s1, &j2, &s2) == 4) {
            printf("same run, %s:\n", python);
            printf("  one file: json.loads %.4f s (vramkit %.2f x, the whole command %.2f x), "
                   "safetensors safe_open %.4f s (vramkit %.2f x, the whole command %.2f x)\n",
                   j1, c1 / j1, cc / j1, s1, c1 / s1, cc / s1);
            printf("  sharded:  json.loads of the index and every header %.4f s (vramkit "
                   "%.2f x), safe_open of every shard %.4f s (vramkit %.2f x)\n",
                   j2, c2 / j2, s2, c2 / s2);
        } else {
            printf("  (python comparison not run: %s has no safetensors package?)\n", python);
        }
        if (f != NULL) pclose(f);
    }
    fx_rmtree(dir);
    return 0;
}
