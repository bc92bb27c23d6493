/* h5_campaign.c — the standing HDF5 corruption run. Writes the valid files of h5_bases.h,
 * corrupts them (h5_mutate.h) and hands each corrupted file to everything in vramkit that
 * opens HDF5 files: `vramkit chunks FILE`, `vramkit stream FILE --verify` (host
 * memory), and the library's streamer (vram_h5_open + vram_streamer_*, as Python's stream()
 * uses it), each in a process of its own with a wall-clock limit; then reads the same
 * datasets with plain HDF5 (H5Dread of everything, native types) in another process and
 * compares every byte the streamer delivered with exit 0. It counts, per caller: exit codes,
 * deaths by a signal (a crash in the caller), hangs (the limit passed), error output that is
 * not one line, and deliveries whose bytes differ from HDF5's. Seeds (corpus/h5/seeds.txt:
 * FILE DATASET [DATASET]) are replayed first. Exit 0 when nothing failed.
 *
 *   h5_campaign --vramkit EXE --work DIR [--seed S] [--files N] [--seconds T] [--timeout T]
 *               [--corpus DIR] [--keep DIR] [--bases-only] [--verbose]
 * --seed 0 (or none given) takes a new seed and prints it. --keep DIR copies every file that
 * failed (and those plain HDF5 cannot read but vramkit delivered) into DIR with their
 * seeds.txt lines: copy them into test/fuzz/corpus/h5/ to keep them.
 *   h5_campaign --deliver FILE OUT DATASET [DATASET]     (internal: the library's streamer)
 *   h5_campaign --reference FILE OUT DATASET [DATASET]   (internal: plain HDF5)
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "h5_bases.h"
#include "h5_mutate.h"

#include "device/host_device.h"
#include "hdf5/h5source.h"
#include "stream/stream.h"

#define MAX_DELIVER_BYTES (UINT64_C(64) << 20) /* larger datasets are planned, not streamed */
#define EXIT_TOO_LARGE 4

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- the internal modes ------------------------------------------------------------------ */

static int write_out(const char *out, uint8_t *const *buf, const uint64_t *bytes, uint32_t n) {
    FILE *o = fopen(out, "wb");
    if (!o) return 3;
    for (uint32_t d = 0; d < n; d++)
        if (bytes[d] && fwrite(buf[d], (size_t)bytes[d], 1, o) != 1) {
            fclose(o);
            return 3;
        }
    return fclose(o) == 0 ? 0 : 3;
}

static int exit_of(vram_status st) {
    return st == VRAM_E_IO || st == VRAM_E_NOMEM || st == VRAM_E_OOM || st == VRAM_E_TIMEOUT ? 3 : 2;
}

/* vramkit's own path: what a program (or Python's stream()) gets from the library. */
static int deliver(const char *file, const char *out, const char *const *names, uint32_t n) {
    char err[VRAM_STREAM_ERR_MAX];
    vram_h5_file *f = NULL;
    vram_status st = vram_h5_open(file, names, n, &f, err, sizeof err);
    if (st != VRAM_OK) {
        fprintf(stderr, "%s\n", err);
        return exit_of(st);
    }
    uint64_t total = 0, sample = 0;
    for (uint32_t d = 0; d < f->datasets; d++) sample += f->ds[d].row_bytes;
    if (vram__mul_u64(sample, f->samples, &total) != VRAM_OK || total > MAX_DELIVER_BYTES) {
        vram_h5_close(f);
        return EXIT_TOO_LARGE;
    }
    uint8_t *buf[VRAM_STREAM_MAX_DATASETS] = {0};
    uint64_t bytes[VRAM_STREAM_MAX_DATASETS] = {0};
    for (uint32_t d = 0; d < f->datasets; d++) {
        bytes[d] = f->samples * f->ds[d].row_bytes;
        buf[d] = (uint8_t *)calloc(1, (size_t)bytes[d] + 1);
        if (!buf[d]) return 3;
    }
    vram_device_ops ops = vram_host_ops();
    vram_source src = vram_h5_source(f);
    vram_stream_config c;
    memset(&c, 0, sizeof c);
    c.plan.batch = 8;
    c.plan.budget_bytes = vram__max_u64(UINT64_C(1) << 20, 4u * 8u * sample);
    c.readers = 2;
    vram_streamer *s = NULL;
    int rc = 0;
    st = vram_streamer_open(&ops, &src, &c, &s, err, sizeof err);
    if (st != VRAM_OK) {
        fprintf(stderr, "%s\n", err);
        rc = exit_of(st);
    }
    while (rc == 0) {
        vram_batch b;
        st = vram_streamer_next(s, &b);
        if (st != VRAM_OK) {
            fprintf(stderr, "%s\n", vram_streamer_error(s));
            rc = exit_of(st);
            break;
        }
        if (b.done) break;
        for (uint64_t k = 0; k < b.count; k++)
            for (uint32_t d = 0; d < f->datasets; d++) {
                uint64_t rb = f->ds[d].row_bytes;
                memcpy(buf[d] + b.samples[k] * rb, (const uint8_t *)b.data[d] + k * rb, (size_t)rb);
            }
        vram_streamer_release(s, &b);
    }
    if (s) vram_streamer_close(s);
    if (rc == 0) rc = write_out(out, buf, bytes, f->datasets);
    for (uint32_t d = 0; d < f->datasets; d++) free(buf[d]);
    vram_h5_close(f);
    return rc;
}

/* Plain HDF5: every dataset whole, in its native type. 0, or 1 when HDF5 refuses. */
static int reference(const char *file, const char *out, const char *const *names, uint32_t n) {
    struct rlimit rl = {UINT64_C(4) << 30, UINT64_C(4) << 30};
    setrlimit(RLIMIT_AS, &rl);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    hid_t f = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) return 1;
    uint8_t *buf[VRAM_STREAM_MAX_DATASETS] = {0};
    uint64_t bytes[VRAM_STREAM_MAX_DATASETS] = {0};
    int rc = 0;
    for (uint32_t d = 0; d < n && rc == 0; d++) {
        hid_t ds = H5Dopen2(f, names[d], H5P_DEFAULT);
        hid_t ft = ds >= 0 ? H5Dget_type(ds) : -1;
        hid_t mt = ft >= 0 ? H5Tget_native_type(ft, H5T_DIR_ASCEND) : -1;
        hid_t sp = ds >= 0 ? H5Dget_space(ds) : -1;
        hssize_t np = sp >= 0 ? H5Sget_simple_extent_npoints(sp) : -1;
        size_t ts = mt >= 0 ? H5Tget_size(mt) : 0;
        if (np < 0 || ts == 0 || (uint64_t)np > MAX_DELIVER_BYTES / ts) {
            rc = 1;
        } else {
            bytes[d] = (uint64_t)np * ts;
            buf[d] = (uint8_t *)calloc(1, (size_t)bytes[d] + 1);
            if (!buf[d] || H5Dread(ds, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf[d]) < 0) rc = 1;
        }
        if (sp >= 0) H5Sclose(sp);
        if (mt >= 0) H5Tclose(mt);
        if (ft >= 0) H5Tclose(ft);
        if (ds >= 0) H5Dclose(ds);
    }
    H5Fclose(f);
    if (rc == 0) rc = write_out(out, buf, bytes, n) == 0 ? 0 : 3;
    for (uint32_t d = 0; d < n; d++) free(buf[d]);
    return rc;
}

/* ---- running one command ------------------------------------------------------------------ */

typedef struct run_result {
    int exit_code; /* -1 when it did not exit */
    int sig;       /* the signal that ended it (not ours), else 0 */
    int hung;      /* the limit passed: we killed its group */
    double seconds;
    int err_lines; /* lines on stderr */
    char err[512]; /* its first line */
} run_result;

static int count_lines(const char *path, char *first, size_t cap) {
    FILE *f = fopen(path, "r");
    int lines = 0, c, at_start = 1;
    size_t n = 0;
    if (first && cap) first[0] = '\0';
    if (!f) return 0;
    while ((c = fgetc(f)) != EOF) {
        if (at_start) lines++;
        at_start = c == '\n';
        if (lines == 1 && c != '\n' && first && n + 1 < cap) {
            first[n++] = (char)c;
            first[n] = '\0';
        }
    }
    fclose(f);
    return lines;
}

static run_result run_cmd(const char *const *argv, double limit, const char *work) {
    run_result r;
    char out[4200], err[4200];
    memset(&r, 0, sizeof r);
    r.exit_code = -1;
    snprintf(out, sizeof out, "%s/run.out", work);
    snprintf(err, sizeof err, "%s/run.err", work);
    double t0 = now_s();
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0);
        int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600), e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int in = open("/dev/null", O_RDONLY);
        if (o < 0 || e < 0 || in < 0) _exit(126);
        dup2(in, 0);
        dup2(o, 1);
        dup2(e, 2);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    if (pid < 0) {
        snprintf(r.err, sizeof r.err, "fork: %s", strerror(errno));
        return r;
    }
    setpgid(pid, pid);
    int status = 0;
    for (;;) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid) break;
        if (now_s() - t0 > limit) {
            r.hung = 1;
            kill(-pid, SIGKILL);
            waitpid(pid, &status, 0);
            break;
        }
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    kill(-pid, SIGKILL); /* anything it left behind in its group */
    r.seconds = now_s() - t0;
    if (!r.hung) {
        if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
        if (WIFSIGNALED(status)) r.sig = WTERMSIG(status);
    }
    r.err_lines = count_lines(err, r.err, sizeof r.err);
    return r;
}

static int same_file(const char *a, const char *b) {
    FILE *x = fopen(a, "rb"), *y = fopen(b, "rb");
    int same = x && y;
    while (same) {
        int c = fgetc(x), d = fgetc(y);
        if (c != d) same = 0;
        if (c == EOF || d == EOF) break;
    }
    if (x) fclose(x);
    if (y) fclose(y);
    return same;
}

static int copy_file(const char *from, const char *to) {
    FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
    int rc = a && b ? 0 : -1, c;
    while (rc == 0 && (c = fgetc(a)) != EOF)
        if (fputc(c, b) == EOF) rc = -1;
    if (a) fclose(a);
    if (b && fclose(b) != 0) rc = -1;
    return rc;
}

/* ---- the tallies ------------------------------------------------------------------------- */

enum { T_CHUNKS, T_STREAM, T_LIBRARY, T_REFERENCE, T_COUNT };
static const char *const tool_names[T_COUNT] = {"vramkit chunks", "vramkit stream --verify",
                                                "library stream", "plain HDF5 (reference)"};

typedef struct tally {
    uint64_t runs, exits[8], signals, hangs, bad_lines, crash_msgs, bound_msgs;
    double seconds, max_seconds;
} tally;

typedef struct campaign {
    const char *vramkit, *self, *work, *keep;
    const char *label; /* what was done to the file being checked */
    int kept;          /* it is in --keep already */
    double limit;
    int verbose;
    tally t[T_COUNT];
    uint64_t files, mismatches, delivered_without_reference, too_large, failures;
    uint64_t by_kind_runs[H5M_KINDS + 1];
} campaign;

static void note(campaign *c, int tool, const run_result *r) {
    tally *t = &c->t[tool];
    t->runs++;
    t->seconds += r->seconds;
    if (r->seconds > t->max_seconds) t->max_seconds = r->seconds;
    if (r->hung) t->hangs++;
    else if (r->sig) t->signals++;
    else if (r->exit_code >= 0 && r->exit_code < 8) t->exits[r->exit_code]++;
    if (strstr(r->err, "HDF5 crashed")) t->crash_msgs++;
    if (strstr(r->err, "longer than") || strstr(r->err, "more memory than")) t->bound_msgs++;
}

static void keep_file(campaign *c, const char *file, const char *why, const char *const *names, uint32_t n) {
    if (!c->keep || c->kept) return;
    c->kept = 1;
    char to[4200], man[4200];
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    snprintf(to, sizeof to, "%s/%s_%s", c->keep, why, base);
    if (copy_file(file, to) != 0) return;
    snprintf(man, sizeof man, "%s/seeds.txt", c->keep);
    FILE *m = fopen(man, "a");
    if (m) {
        fprintf(m, "# %s\n%s_%s", c->label ? c->label : "", why, base);
        for (uint32_t d = 0; d < n; d++) fprintf(m, " %s", names[d]);
        fprintf(m, "\n");
        fclose(m);
    }
}

/* Is r a failure of the caller: a signal, a hang, an exit code outside 0..3, or an error
 * that is not exactly one line? */
static const char *caller_failure(const run_result *r, int ok_exit_4) {
    if (r->hung) return "hang";
    if (r->sig) return "signal";
    if (r->exit_code == 0) return NULL;
    if (r->exit_code == EXIT_TOO_LARGE && ok_exit_4) return NULL;
    if (r->exit_code < 1 || r->exit_code > 3) return "exit";
    if (r->err_lines != 1) return "lines";
    return NULL;
}

static void fail(campaign *c, const char *file, const char *tool, const char *what, const run_result *r) {
    c->failures++;
    fprintf(stderr, "FAIL %s: %s: %s (exit %d, signal %d, %.1f s): %s\n", file, tool, what, r ? r->exit_code : 0,
            r ? r->sig : 0, r ? r->seconds : 0.0, r ? r->err : "");
}

/* Every caller on one file. */
static void check_file(campaign *c, const char *file, const char *const *names, uint32_t n, const char *what) {
    char out[4200], ref[4200];
    const char *argv[32];
    int a;
    run_result r;
    const char *bad;
    snprintf(out, sizeof out, "%s/delivered.bin", c->work);
    snprintf(ref, sizeof ref, "%s/reference.bin", c->work);
    c->files++;
    c->label = what;
    c->kept = 0;
    if (c->verbose) fprintf(stderr, "%s: %s\n", file, what);

    a = 0;
    argv[a++] = c->vramkit; argv[a++] = "chunks"; argv[a++] = file;
    for (uint32_t d = 0; d < n; d++) { argv[a++] = "--dataset"; argv[a++] = names[d]; }
    argv[a++] = "--budget"; argv[a++] = "1MiB"; argv[a++] = "--batch"; argv[a++] = "8";
    argv[a] = NULL;
    r = run_cmd(argv, c->limit, c->work);
    note(c, T_CHUNKS, &r);
    if ((bad = caller_failure(&r, 0)) != NULL) {
        fail(c, file, "chunks", bad, &r);
        keep_file(c, file, bad, names, n);
    }

    a = 0;
    argv[a++] = c->self; argv[a++] = "--deliver"; argv[a++] = file; argv[a++] = out;
    for (uint32_t d = 0; d < n; d++) argv[a++] = names[d];
    argv[a] = NULL;
    unlink(out);
    r = run_cmd(argv, c->limit, c->work);
    note(c, T_LIBRARY, &r);
    if ((bad = caller_failure(&r, 1)) != NULL) {
        fail(c, file, "library", bad, &r);
        keep_file(c, file, bad, names, n);
    }
    if (r.exit_code == EXIT_TOO_LARGE) {
        c->too_large++;
        return;
    }
    int delivered = r.exit_code == 0;

    a = 0;
    argv[a++] = c->vramkit; argv[a++] = "stream"; argv[a++] = file;
    for (uint32_t d = 0; d < n; d++) { argv[a++] = "--dataset"; argv[a++] = names[d]; }
    argv[a++] = "--device"; argv[a++] = "cpu"; argv[a++] = "--budget"; argv[a++] = "1MiB";
    argv[a++] = "--batch"; argv[a++] = "8"; argv[a++] = "--readers"; argv[a++] = "2"; argv[a++] = "--verify";
    argv[a] = NULL;
    r = run_cmd(argv, c->limit, c->work);
    note(c, T_STREAM, &r);
    if ((bad = caller_failure(&r, 0)) != NULL) {
        fail(c, file, "stream", bad, &r);
        keep_file(c, file, bad, names, n);
    }

    if (!delivered) return;
    a = 0;
    argv[a++] = c->self; argv[a++] = "--reference"; argv[a++] = file; argv[a++] = ref;
    for (uint32_t d = 0; d < n; d++) argv[a++] = names[d];
    argv[a] = NULL;
    unlink(ref);
    r = run_cmd(argv, c->limit, c->work);
    note(c, T_REFERENCE, &r);
    if (r.exit_code != 0) {
        c->delivered_without_reference++;
        if (c->verbose) fprintf(stderr, "  delivered, plain HDF5 %s\n", r.sig ? "crashed" : r.hung ? "hung" : "refused");
        keep_file(c, file, "noref", names, n);
    } else if (!same_file(out, ref)) {
        c->mismatches++;
        fail(c, file, "library", "bytes differ from HDF5's", NULL);
        keep_file(c, file, "mismatch", names, n);
    }
}

static int write_bytes(const char *path, const uint8_t *p, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    int rc = n && fwrite(p, n, 1, f) != 1 ? -1 : 0;
    return fclose(f) == 0 ? rc : -1;
}

static uint8_t *read_bytes(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *p = (uint8_t *)malloc(len > 0 ? (size_t)len : 1);
    if (p && len > 0 && fread(p, (size_t)len, 1, f) != 1) {
        free(p);
        p = NULL;
    }
    fclose(f);
    *n = len > 0 ? (size_t)len : 0;
    return p;
}

static void replay(campaign *c, const char *dir) {
    char man[4200], line[1024];
    snprintf(man, sizeof man, "%s/seeds.txt", dir);
    FILE *m = fopen(man, "r");
    if (!m) {
        fprintf(stderr, "h5_campaign: no %s\n", man);
        c->failures++;
        return;
    }
    while (fgets(line, sizeof line, m)) {
        char *tok[4], *save = NULL;
        int nt = 0;
        if (line[0] == '#' || line[0] == '\n') continue;
        for (char *t = strtok_r(line, " \t\n", &save); t && nt < 4; t = strtok_r(NULL, " \t\n", &save)) tok[nt++] = t;
        if (nt < 2) continue;
        char from[4200], to[4200];
        snprintf(from, sizeof from, "%s/%s", dir, tok[0]);
        snprintf(to, sizeof to, "%s/seed.h5", c->work);
        if (copy_file(from, to) != 0) {
            fprintf(stderr, "h5_campaign: cannot copy %s\n", from);
            c->failures++;
            continue;
        }
        check_file(c, to, (const char *const *)tok + 1, (uint32_t)(nt - 1), tok[0]);
    }
    fclose(m);
}

static void report(const campaign *c, double seconds) {
    printf("files %llu (%.1f s); planned only (too large to stream): %llu\n", (unsigned long long)c->files,
           seconds, (unsigned long long)c->too_large);
    for (int t = 0; t < T_COUNT; t++) {
        const tally *x = &c->t[t];
        if (!x->runs) continue;
        printf("  %-26s runs %6llu  exit 0/1/2/3: %llu/%llu/%llu/%llu  signals %llu  hangs %llu", tool_names[t],
               (unsigned long long)x->runs, (unsigned long long)x->exits[0], (unsigned long long)x->exits[1],
               (unsigned long long)x->exits[2], (unsigned long long)x->exits[3], (unsigned long long)x->signals,
               (unsigned long long)x->hangs);
        if (t != T_REFERENCE)
            printf("  'HDF5 crashed' %llu  bounds %llu", (unsigned long long)x->crash_msgs,
                   (unsigned long long)x->bound_msgs);
        printf("  mean %.0f ms, max %.2f s\n", x->runs ? x->seconds / (double)x->runs * 1e3 : 0.0, x->max_seconds);
    }
    printf("  delivered with exit 0, bytes differ from plain HDF5's: %llu\n", (unsigned long long)c->mismatches);
    printf("  delivered with exit 0 where plain HDF5's own read fails: %llu\n",
           (unsigned long long)c->delivered_without_reference);
    printf("failures (signals, hangs, bad exits or messages, differing bytes): %llu\n",
           (unsigned long long)c->failures);
}

static int usage(void) {
    fprintf(stderr, "usage: h5_campaign --vramkit EXE --work DIR [--seed S] [--files N] [--seconds T]\n"
                    "                   [--timeout T] [--corpus DIR] [--keep DIR] [--bases-only] [--verbose]\n");
    return 2;
}

int main(int argc, char **argv) {
    if (argc >= 5 && (strcmp(argv[1], "--deliver") == 0 || strcmp(argv[1], "--reference") == 0)) {
        uint32_t n = (uint32_t)(argc - 4);
        if (n > 2) return 2;
        return strcmp(argv[1], "--deliver") == 0 ? deliver(argv[2], argv[3], (const char *const *)argv + 4, n)
                                                 : reference(argv[2], argv[3], (const char *const *)argv + 4, n);
    }
    campaign c;
    memset(&c, 0, sizeof c);
    c.limit = 30;
    uint64_t seed = 0, files = 0;
    double seconds = 0;
    const char *corpus = NULL;
    int bases_only = 0;
    static char self[4096];
    ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
    if (sl <= 0) return 3;
    self[sl] = '\0';
    c.self = self;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--vramkit") == 0 && v) c.vramkit = argv[++i];
        else if (strcmp(argv[i], "--work") == 0 && v) c.work = argv[++i];
        else if (strcmp(argv[i], "--keep") == 0 && v) c.keep = argv[++i];
        else if (strcmp(argv[i], "--corpus") == 0 && v) corpus = argv[++i];
        else if (strcmp(argv[i], "--seed") == 0 && v) seed = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--files") == 0 && v) files = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--seconds") == 0 && v) seconds = atof(argv[++i]);
        else if (strcmp(argv[i], "--timeout") == 0 && v) c.limit = atof(argv[++i]);
        else if (strcmp(argv[i], "--bases-only") == 0) bases_only = 1;
        else if (strcmp(argv[i], "--verbose") == 0) c.verbose = 1;
        else return usage();
    }
    if (!c.vramkit || !c.work) return usage();
    if (seed == 0) { /* a new run each time, repeatable from what it prints */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        seed = ((uint64_t)ts.tv_sec * 1000003u) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 20);
        if (seed == 0) seed = 1;
    }
    printf("h5_campaign: seed %llu\n", (unsigned long long)seed);
    fflush(stdout);
    mkdir(c.work, 0700);
    if (c.keep) mkdir(c.keep, 0700);
    /* relative references (external storage, external links) resolve beside the files */
    static char work[4096], keep[4096], vk[4096], corpus_abs[4096];
    if ((corpus && (corpus = realpath(corpus, corpus_abs)) == NULL) || !realpath(c.work, work) || (c.keep && !realpath(c.keep, keep)) || !realpath(c.vramkit, vk) || chdir(work) != 0) {
        fprintf(stderr, "h5_campaign: cannot use %s, %s or %s\n", c.work, c.keep ? c.keep : "-", c.vramkit);
        return 3;
    }
    c.work = work;
    c.vramkit = vk;
    if (c.keep) c.keep = keep;
    /* the library's HDF5 child is this build's vramkit; a hang is the caller's limit */
    setenv("VRAMKIT_EXE", c.vramkit, 1);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    double t0 = now_s();
    h5b_info *info = (h5b_info *)calloc(H5B_COUNT, sizeof *info);
    h5m_file *base = (h5m_file *)calloc(H5B_COUNT, sizeof *base);
    if (!info || !base || h5b_side_files(c.work) != 0) {
        fprintf(stderr, "h5_campaign: cannot write the side files into %s\n", c.work);
        return 3;
    }
    if (corpus) replay(&c, corpus);
    for (size_t b = 0; b < H5B_COUNT; b++) {
        char path[4200];
        if (h5b_write(c.work, &h5b_bases[b], &info[b], path, sizeof path) != 0) {
            fprintf(stderr, "h5_campaign: cannot write base %s\n", h5b_bases[b].name);
            return 3;
        }
        base[b].bytes = read_bytes(path, &base[b].len);
        if (!base[b].bytes) return 3;
        h5m_scan(&base[b], info[b].ohdr, info[b].nohdr, info[b].chunk, info[b].chunk_len, info[b].nchunk);
        const char *names[2] = {info[b].x, info[b].y};
        check_file(&c, path, names, info[b].y ? 2u : 1u, "pristine");
        if (c.verbose) {
            fprintf(stderr, "  base %s: %zu bytes, %d regions\n", h5b_bases[b].name, base[b].len, base[b].nr);
        }
    }
    if (!bases_only) {
        h5m_rng rng = {seed};
        uint8_t *buf = NULL;
        for (uint64_t i = 0; (files == 0 || i < files) && (seconds <= 0 || now_s() - t0 < seconds); i++) {
            if (files == 0 && seconds <= 0) break;
            size_t b = (size_t)h5m_below(&rng, H5B_COUNT);
            h5m_file m = base[b];
            free(buf);
            buf = (uint8_t *)malloc(base[b].len + 1);
            if (!buf) return 3;
            memcpy(buf, base[b].bytes, base[b].len);
            m.bytes = buf;
            char what[600] = "", one[160];
            int nmut = 1 + (int)h5m_below(&rng, 3);
            for (int k = 0; k < nmut; k++) {
                one[0] = '\0';
                h5m_mutate(&m, base[b].len, &rng, one, sizeof one);
                size_t wl = strlen(what);
                snprintf(what + wl, sizeof what - wl, "%s%s", wl ? "; " : "", one);
            }
            char path[4200];
            snprintf(path, sizeof path, "%s/m%llu_%s.h5", c.work, (unsigned long long)i, h5b_bases[b].name);
            if (write_bytes(path, m.bytes, m.len) != 0) return 3;
            const char *names[2] = {info[b].x, info[b].y};
            char label[800];
            snprintf(label, sizeof label, "%s: %s", h5b_bases[b].name, what);
            check_file(&c, path, names, info[b].y ? 2u : 1u, label);
            unlink(path);
        }
        free(buf);
    }
    report(&c, now_s() - t0);
    for (size_t b = 0; b < H5B_COUNT; b++) free(base[b].bytes);
    free(base);
    free(info);
    return c.failures ? 1 : 0;
}
