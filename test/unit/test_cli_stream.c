/* test_cli_stream.c — `vramkit stream FILE` and `vramkit chunks FILE`, run as the built
 * binary on HDF5 files written here: reports with numbers worked out by hand, --verify's
 * success and failure, and every bad input as one line with its exit code. In a build
 * without HDF5, the FILE forms must say so and exit 3. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_run.h"

#ifndef VRAMKIT_HAVE_HDF5

Test(cli_stream, file_forms_say_hdf5_is_missing) {
    const char *a[] = {"stream", "x.h5", "--dataset", "/a", NULL};
    cli_result r = cli_run(a);
    cr_assert_eq(r.exit_code, 3);
    cr_assert(strstr(r.err, "built without HDF5"), "%s", r.err);
    cr_assert_eq(cli_count_lines(r.err), 1);
    cr_assert_str_empty(r.out);
    cli_result_free(&r);
    const char *b[] = {"chunks", "x.h5", "--dataset", "/a", "--budget", "1GiB", NULL};
    r = cli_run(b);
    cr_assert_eq(r.exit_code, 3);
    cr_assert(strstr(r.err, "built without HDF5"), "%s", r.err);
    cli_result_free(&r);
}

#else

#include <cjson/cJSON.h>

#include <pthread.h>
#include <sys/resource.h>
#include <time.h>

#include "cuda/cuda_device.h"
#include "h5_corrupt.h"
#include "h5_fixture.h"
#include "json_check.h"

static char dir[64];
static char contig[128], deflate[128], chunked[128], bad[128], text[128];

static void setup(void) {
    snprintf(dir, sizeof dir, "/tmp/vk-cli-stream-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    h5fx_opts c = {.n = 1003};
    snprintf(contig, sizeof contig, "%s/contig.h5", dir);
    cr_assert_eq(h5fx_write(contig, &c), 0);
    h5fx_opts d = {.n = 1003, .layout = H5FX_DEFLATE, .chunk_rows = 100};
    snprintf(deflate, sizeof deflate, "%s/deflate.h5", dir);
    cr_assert_eq(h5fx_write(deflate, &d), 0);
    h5fx_opts k = {.n = 1003, .layout = H5FX_CHUNKED, .chunk_rows = 64, .both = 1};
    snprintf(chunked, sizeof chunked, "%s/chunked.h5", dir);
    cr_assert_eq(h5fx_write(chunked, &k), 0);
    h5fx_opts b = {.n = 20, .targets_n = 21};
    snprintf(bad, sizeof bad, "%s/bad.h5", dir);
    cr_assert_eq(h5fx_write(bad, &b), 0);
    snprintf(text, sizeof text, "%s/text.h5", dir);
    FILE *t = fopen(text, "w");
    fputs("hello\n", t);
    fclose(t);
}

static void teardown(void) {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

TestSuite(cli_stream, .init = setup, .fini = teardown, .timeout = 120);

/* ---- stream ---------------------------------------------------------------------------- */

Test(cli_stream, help_answers_the_questions) {
    const char *a[] = {"stream", "--help", NULL};
    cli_result r = cli_run(a);
    cr_assert_eq(r.exit_code, 0);
    const char *want[] = {"usage: vramkit stream FILE --dataset PATH", "--batch N", "default 128",
                          "--epochs N", "--shuffle", "--seed S", "--drop-last", "--world auto|W",
                          "--rank R", "--device DEV", "--readers N", "--verify", "--json",
                          "exit codes: 0", "example:", "pread"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        cr_assert(strstr(r.out, want[i]), "--help lacks '%s'", want[i]);
    cr_assert_str_empty(r.err);
    cli_result_free(&r);
    const char *m[] = {"--help", NULL};
    r = cli_run(m);
    cr_assert(strstr(r.out, "  stream "), "the command list names stream");
    cli_result_free(&r);
}

Test(cli_stream, text_report_with_verify) {
    const char *a[] = {"stream", contig, "--dataset", "/features", "--dataset", "/targets", "--batch", "16",
                       "--budget", "200KiB", "--epochs", "2", "--shuffle", "--seed", "3",
                       "--device", "cpu", "--verify", NULL};
    cli_result r = cli_run(a);
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    cr_assert_str_empty(r.err, "no progress bar off a terminal: %s", r.err);
    /* 200 KiB / 2 buffers / 1032 B = 99 rows -> 96 (6 batches of 16); 1003 / 96 -> 11 chunks */
    cr_assert(strstr(r.out, "plan      11 chunks of up to 96 samples (96.75 KiB) in 2 buffers of a "
                            "200.00 KiB budget; 63 batches of 16 per epoch; shuffled, seed 3"),
              "%s", r.out);
    cr_assert(strstr(r.out, "/features  1003 x 36 x 7 float32, 1008 B per sample; contiguous: pread"), "%s", r.out);
    cr_assert(strstr(r.out, "/targets   1003 x 3 int64, 24 B per sample; contiguous: pread"), "%s", r.out);
    cr_assert(strstr(r.out, "device    cpu (host memory), direct staging"), "%s", r.out);
    cr_assert(strstr(r.out, "total     2 epochs, 126 batches, 2006 samples"), "%s", r.out);
    cr_assert(strstr(r.out, "verify    ok: 2006 samples equal HDF5's bytes, in the planned order; "
                            "each of 2 epochs delivered each of the rank's samples once (1003)"),
              "%s", r.out);
    cli_result_free(&r);
}

Test(cli_stream, json_report_on_each_rank) {
    uint64_t checked = 0;
    for (int r3 = 0; r3 < 3; r3++) {
        char rank[4];
        snprintf(rank, sizeof rank, "%d", r3);
        const char *a[] = {"stream", chunked, "--dataset", "/features", "--dataset", "/targets",
                           "--batch", "16", "--budget", "200KiB", "--epochs", "3", "--world", "3",
                           "--rank", rank, "--drop-last", "--shuffle", "--device", "cpu",
                           "--readers", "3", "--verify", "--json", NULL};
        cli_result r = cli_run(a);
        cr_assert_eq(r.exit_code, 0, "%s", r.err);
        cJSON *doc = jparse(r.out);
        const cJSON *plan = jget(doc, "plan");
        cr_assert_eq(jnum(plan, "samples"), 1003);
        cr_assert_eq(jnum(plan, "sample_bytes"), 1032);
        cr_assert_eq(jnum(plan, "samples_per_chunk"), 96);
        cr_assert_eq(jnum(plan, "rank_samples"), 335);          /* ceil(1003 / 3) */
        cr_assert_eq(jnum(plan, "dropped_last"), 15);           /* 335 mod 16 */
        cr_assert_eq(jnum(plan, "batches_per_epoch"), 20);      /* 320 / 16 */
        cr_assert_eq(jnum(plan, "rank"), r3);
        cr_assert_str_eq(jstr(doc, "staging"), "direct");
        cr_assert_eq(jnum(doc, "readers"), 3);
        const cJSON *ds = jget(doc, "datasets");
        cr_assert_eq(cJSON_GetArraySize(ds), 2);
        cr_assert_str_eq(jstr(cJSON_GetArrayItem(ds, 0), "read_path"), "chunked");
        cr_assert_eq(jnum(cJSON_GetArrayItem(ds, 0), "chunks"), 16); /* ceil(1003 / 64) */
        cr_assert_eq(jnum(cJSON_GetArrayItem(ds, 1), "chunk_rows"), 64);
        const cJSON *epochs = jget(doc, "epochs");
        cr_assert_eq(cJSON_GetArraySize(epochs), 3);
        for (int e = 0; e < 3; e++) {
            const cJSON *x = cJSON_GetArrayItem(epochs, e);
            cr_assert_eq(jnum(x, "samples"), 320);
            cr_assert_eq(jnum(x, "bytes_delivered"), 320 * 1032);
            cr_assert_eq(jnum(x, "bytes_read"), 335 * 1032, "every row of every chunk is read once");
            cr_assert_eq(jnum(x, "bytes_gathered"), 320 * 1032);
        }
        const cJSON *v = jget(doc, "verify");
        cr_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v, "ok")));
        cr_assert_eq(jnum(v, "epochs_checked"), 3);
        checked += (uint64_t)jnum(v, "samples_checked");
        cr_assert_gt(jnum(jget(doc, "gbps"), "end_to_end"), 0);
        cJSON_Delete(doc);
        cli_result_free(&r);
    }
    cr_assert_eq(checked, 3 * 3 * 320);
}

/* The same shards from the launcher's variables (--world auto, the default): each of
 * torchrun's three ranks streams and verifies its own, and the report names the launcher. */
Test(cli_stream, ranks_from_the_launcher) {
    uint64_t checked = 0;
    for (int r3 = 0; r3 < 3; r3++) {
        char rank[16], local[24];
        snprintf(rank, sizeof rank, "RANK=%d", r3);
        snprintf(local, sizeof local, "LOCAL_RANK=%d", r3);
        const char *env[] = {rank, "WORLD_SIZE=3", local, "SLURM_PROCID=0", "SLURM_NTASKS=1", NULL};
        const char *a[] = {"stream", chunked, "--dataset", "/features", "--batch", "16", "--budget",
                           "200KiB", "--shuffle", "--device", "cpu", "--verify", "--json", NULL};
        cli_result r = cli_run_env(a, env);
        cr_assert_eq(r.exit_code, 0, "%s", r.err);
        cJSON *doc = jparse(r.out);
        const cJSON *plan = jget(doc, "plan");
        cr_assert_eq(jnum(plan, "world"), 3);
        cr_assert_eq(jnum(plan, "rank"), r3);
        cr_assert_eq(jnum(plan, "local_rank"), r3);
        cr_assert_str_eq(jstr(plan, "launcher"), "torchrun");
        cr_assert_eq(jnum(plan, "rank_samples"), 335);
        checked += (uint64_t)jnum(jget(doc, "verify"), "samples_checked");
        cJSON_Delete(doc);
        cli_result_free(&r);
    }
    cr_assert_eq(checked, 3 * 335);
}

Test(cli_stream, inconsistent_launcher_variables) {
    const char *a[] = {"stream", contig, "--dataset", "/features", "--device", "cpu", NULL};
    const char *env[] = {"OMPI_COMM_WORLD_RANK=4", "OMPI_COMM_WORLD_SIZE=4", NULL};
    cli_result r = cli_run_env(a, env);
    cr_assert_eq(r.exit_code, 2, "%s", r.err);
    cr_assert_str_empty(r.out);
    cr_assert_str_eq(r.err, "vramkit: stream: OMPI_COMM_WORLD_RANK=4 is not below OMPI_COMM_WORLD_SIZE=4 (Open MPI)\n");
    cli_result_free(&r);
}

Test(cli_stream, compressed_data_reads_through_hdf5_and_verifies) {
    const char *a[] = {"stream", deflate, "--dataset", "/features", "--dataset", "/targets", "--batch", "50",
                       "--budget", "1MiB", "--epochs", "2", "--device", "cpu", "--verify", "--json", NULL};
    cli_result r = cli_run(a);
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    cJSON *doc = jparse(r.out);
    const cJSON *f = cJSON_GetArrayItem(jget(doc, "datasets"), 0);
    cr_assert_str_eq(jstr(f, "read_path"), "hdf5");
    cr_assert_str_eq(jstr(f, "reason"), "deflate filter");
    cr_assert_str_eq(jstr(f, "filters"), "deflate");
    cr_assert_eq(jnum(jget(doc, "verify"), "samples_checked"), 2006);
    cJSON_Delete(doc);
    cli_result_free(&r);
}

Test(cli_stream, verify_fails_loudly_on_a_wrong_byte) {
    const char *a[] = {"stream", contig, "--dataset", "/features", "--batch", "16", "--budget", "200KiB",
                       "--device", "cpu", "--verify", NULL};
    const char *env[] = {"VRAMKIT_STREAM_TEST_FLIP=5:1013", NULL}; /* batch 5, row 1, byte 5 */
    cli_result r = cli_run_env(a, env);
    cr_assert_eq(r.exit_code, 1, "%s", r.err);
    cr_assert_str_empty(r.out, "no report when the check fails");
    cr_assert_eq(cli_count_lines(r.err), 1, "%s", r.err);
    cr_assert(strstr(r.err, "vramkit: stream: verify FAILED: epoch 0, batch 5, row 1: /features of sample 81 "
                            "differs from HDF5's bytes at byte 5 of 1008"),
              "%s", r.err);
    cli_result_free(&r);
    /* without --verify nothing notices: the check is what catches it */
    const char *b[] = {"stream", contig, "--dataset", "/features", "--batch", "16", "--budget", "200KiB",
                       "--device", "cpu", NULL};
    r = cli_run_env(b, env);
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    cli_result_free(&r);
}

Test(cli_stream, a_batch_larger_than_the_budget_does_not_fit) {
    const char *a[] = {"stream", contig, "--dataset", "/features", "--dataset", "/targets", "--batch", "128",
                       "--budget", "200KiB", "--device", "cpu", NULL};
    cli_result r = cli_run(a);
    cr_assert_eq(r.exit_code, 1, "%s", r.err);
    cr_assert(strstr(r.err, "vramkit: stream: does not fit: a batch of 128 samples x 1032 bytes = 132096 "
                            "bytes does not fit one buffer"), "%s", r.err);
    cr_assert_eq(cli_count_lines(r.err), 1);
    cr_assert_str_empty(r.out);
    cli_result_free(&r);
}

Test(cli_stream, cuda_device_without_a_gpu_is_an_environment_error) {
    vram_device_ops ops;
    int count = 0;
    if (vram_cuda_ops(&ops) == VRAM_OK && ops.device_count(ops.ctx, &count) == VRAM_OK && count > 0)
        cr_skip_test("a GPU is here: nothing to refuse");
    const char *a[] = {"stream", contig, "--dataset", "/features", "--device", "cuda:0", "--budget", "1MiB", NULL};
    cli_result r = cli_run(a);
    cr_assert_eq(r.exit_code, 3, "%s", r.err);
    cr_assert(strstr(r.err, "--device cuda:0: "), "%s", r.err);
    cr_assert_eq(cli_count_lines(r.err), 1);
    cli_result_free(&r);
}

struct bad_case {
    char args[18][48];
    int exit_code;
    char says[160];
};

/* File names are placeholders replaced in the test: @contig, @bad, @text, @missing. */
ParameterizedTestParameters(cli_stream, bad_input) {
    static struct bad_case cases[] = {
        {{"stream", ""}, 2, "FILE is required"},
        {{"stream", "@contig", ""}, 2, "--dataset is required"},
        {{"stream", "@missing", "--dataset", "/features", ""}, 2, "missing.h5: no such file"},
        {{"stream", "@text", "--dataset", "/features", ""}, 2, "text.h5: not an HDF5 file"},
        {{"stream", "@bad", "--dataset", "/nothere", ""}, 2, "no dataset '/nothere' in the file"},
        {{"stream", "@bad", "--dataset", "/group", ""}, 2, "'/group' is a group, not a dataset"},
        {{"stream", "@bad", "--dataset", "/features", "--dataset", "/targets", ""}, 2,
         "'/features' has 20 samples and '/targets' has 21"},
        {{"stream", "@bad", "--dataset", "/names", ""}, 2, "'/names' holds variable-length strings"},
        {{"stream", "@bad", "--dataset", "/records", ""}, 2, "'/records' holds variable-length strings"},
        {{"stream", "@bad", "--dataset", "/empty", ""}, 2, "'/empty' is empty (0 samples)"},
        {{"stream", "@bad", "--dataset", "/scalar", ""}, 2, "'/scalar' is a scalar"},
        {{"stream", "@contig", "--dataset", "/features", "--device", "tpu", ""}, 2,
         "--device: 'tpu' is not cpu or cuda:N"},
        {{"stream", "@contig", "--dataset", "/features", "--world", "2", "--rank", "2", ""}, 2,
         "--rank 2 is not below --world 2"},
        {{"stream", "@contig", "--dataset", "/features", "--seed", "4", ""}, 2, "--seed applies to --shuffle"},
        {{"stream", "@contig", "--dataset", "/features", "--batch", "0", ""}, 2, "--batch: must be at least 1"},
        {{"stream", "@contig", "--dataset", "/features", "--epochs", "x", ""}, 2, "--epochs: 'x'"},
        {{"stream", "@contig", "--dataset", "/features", "--budget", "1GiB", "--fraction", "0.5", ""}, 2,
         "--budget is a fixed size"},
        {{"stream", "@contig", "--dataset", "/features", "--frobnicate", ""}, 2, "unknown option '--frobnicate'"},
        {{"stream", "@contig", "@contig", "--dataset", "/features", ""}, 2, "one FILE only"},
        {{"stream", "@contig", "--dataset", "/features", "--device", "cpu", "--batch", "2000", "--drop-last",
          "--budget", "1GiB", ""}, 2, "drop_last: each rank has 1003 samples, less than one batch of 2000"},
        {{"chunks", "@missing", "--dataset", "/features", "--budget", "1GiB", ""}, 2, "missing.h5: no such file"},
        {{"chunks", "@bad", "--dataset", "/names", "--budget", "1GiB", ""}, 2, "variable-length strings"},
        {{"chunks", "@bad", "--dataset", "/features", "--dataset", "/other", "--budget", "1GiB", ""}, 2,
         "'/features' has 20 samples and '/other' has 21"},
        {{"chunks", "@contig", "--dataset", "/features", ""}, 2, "a budget is required"},
        {{"chunks", "@contig", "--budget", "1GiB", ""}, 2, "needs --dataset PATH"},
        {{"chunks", "--dataset", "/features", "--budget", "1GiB", ""}, 2, "--dataset needs FILE"},
        {{"chunks", "@contig", "--dataset", "/features", "--samples", "5", "--budget", "1GiB", ""}, 2,
         "unexpected argument"},
        {{"chunks", "@contig", "--dataset", "/features", "--assume-gpu", "8GiB", "--budget", "1GiB", ""}, 2,
         "give one of --budget, --free, --assume-gpu"},
        {{"chunks", "@contig", "--dataset", "/features", "--dataset", "/targets", "--batch", "128",
          "--budget", "200KiB", ""}, 1, "does not fit: one batch per buffer needs 2 x 129.00 KiB"},
    };
    return cr_make_param_array(struct bad_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(struct bad_case *c, cli_stream, bad_input) {
    const char *args[19];
    char paths[18][160];
    int n = 0;
    while (n < 18 && c->args[n][0] != '\0') {
        const char *a = c->args[n];
        if (strcmp(a, "@contig") == 0)
            snprintf(paths[n], sizeof paths[n], "%s", contig);
        else if (strcmp(a, "@bad") == 0)
            snprintf(paths[n], sizeof paths[n], "%s", bad);
        else if (strcmp(a, "@text") == 0)
            snprintf(paths[n], sizeof paths[n], "%s", text);
        else if (strcmp(a, "@missing") == 0)
            snprintf(paths[n], sizeof paths[n], "%s/missing.h5", dir);
        else
            snprintf(paths[n], sizeof paths[n], "%s", a);
        args[n] = paths[n];
        n++;
    }
    args[n] = NULL;
    cli_result r = cli_run(args);
    cr_assert_eq(r.signal, 0);
    cr_assert_eq(r.exit_code, c->exit_code, "%s %s: exit %d, stderr: %s", c->args[0], c->args[1],
                 r.exit_code, r.err);
    cr_assert_str_empty(r.out, "stdout must be empty on failure, got: %s", r.out);
    cr_assert_eq(cli_count_lines(r.err), 1, "want one line on stderr, got: %s", r.err);
    char prefix[64];
    snprintf(prefix, sizeof prefix, "vramkit: %s: ", c->args[0]);
    cr_assert(strncmp(r.err, prefix, strlen(prefix)) == 0, "%s", r.err);
    cr_assert(strstr(r.err, c->says), "stderr '%s' does not say '%s'", r.err, c->says);
    cli_result_free(&r);
}

/* ---- malformed files and files that change ---------------------------------------------- */

Test(cli_stream, a_file_hdf5_crashes_on_is_one_line_with_exit_2) {
    /* a chunk B-tree whose root is its own child: vramkit chunks and stream died of SIGSEGV */
    char loop[160];
    snprintf(loop, sizeof loop, "%s/loop.h5", dir);
    h5fx_opts o = {.n = 300, .layout = H5FX_CHUNKED, .chunk_rows = 2};
    cr_assert_eq(h5fx_write(loop, &o), 0);
    cr_assert_eq(h5k_btree_self_loop(loop, "/features", 3), 0);
    const char *a[] = {"chunks", loop, "--dataset", "/features", "--budget", "1MiB", NULL};
    const char *b[] = {"stream", loop, "--dataset", "/features", "--dataset", "/targets", "--device", "cpu",
                       "--budget", "1MiB", "--verify", NULL};
    const char *const *cmds[] = {a, b};
    for (int i = 0; i < 2; i++) {
        cli_result r = cli_run(cmds[i]);
        cr_assert_eq(r.signal, 0, "%s died of signal %d", cmds[i][0], r.signal);
        cr_assert_eq(r.exit_code, 2, "%s: exit %d: %s", cmds[i][0], r.exit_code, r.err);
        cr_assert_eq(cli_count_lines(r.err), 1, "%s", r.err);
        cr_assert_str_empty(r.out);
        char want[320];
        snprintf(want, sizeof want, "vramkit: %s: %s: HDF5 crashed (SIGSEGV) while reading the file's metadata: the "
                 "file is malformed (HDF5 runs in a child process: the crash cost only that)\n", cmds[i][0], loop);
        cr_assert_str_eq(r.err, want);
        cli_result_free(&r);
    }
}

Test(cli_stream, verify_names_the_map_of_samples_it_could_not_allocate) {
    /* 2^40 samples never written: the one-bit-a-sample map needs 128 GiB; the message said
     * it could not check "a chunk of 32.00 MiB" */
    char huge[160];
    snprintf(huge, sizeof huge, "%s/huge.h5", dir);
    hid_t h = H5Fcreate(huge, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t dims[2] = {UINT64_C(1) << 40, 4}, maxd[2] = {H5S_UNLIMITED, 4}, cd[2] = {1024, 4};
    hid_t sp = H5Screate_simple(2, dims, maxd), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 2, cd);
    hid_t ds = H5Dcreate2(h, "/x", H5T_IEEE_F32LE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    cr_assert_geq(ds, 0);
    H5Dclose(ds);
    H5Pclose(dcpl);
    H5Sclose(sp);
    H5Fclose(h);
    /* however much memory this machine lends, 128 GiB is not there */
    struct rlimit rl = {UINT64_C(4) << 30, UINT64_C(4) << 30};
    cr_assert_eq(setrlimit(RLIMIT_AS, &rl), 0);
    const char *a[] = {"stream", huge, "--dataset", "/x", "--device", "cpu", "--budget", "64MiB", "--verify", NULL};
    cli_result r = cli_run(a);
    cr_assert_eq(r.exit_code, 3, "%s", r.err);
    cr_assert_str_eq(r.err, "vramkit: stream: --verify: not enough host memory for the map of samples seen in an "
                            "epoch (128.00 GiB: a bit for each sample)\n");
    cli_result_free(&r);
}

typedef struct cutter {
    const char *path;
    double delay;
    off_t size;
} cutter;

static void *cut_later(void *arg) {
    const cutter *c = (const cutter *)arg;
    struct timespec ts = {(time_t)c->delay, (long)((c->delay - (double)(time_t)c->delay) * 1e9)};
    nanosleep(&ts, NULL);
    if (truncate(c->path, c->size) != 0) perror("truncate");
    return NULL;
}

static double mono(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

Test(cli_stream, a_file_that_shrinks_during_verify_is_an_io_error_not_a_failed_check) {
    /* cut while streaming with --verify, at several moments of the run: HDF5 read zeros
     * past the new end and the check said "verify FAILED ... differs from HDF5's bytes"
     * (exit 1) where the file had changed under the reader (exit 3) */
    char path[160];
    snprintf(path, sizeof path, "%s/shrinks.h5", dir);
    h5fx_opts o = {.n = 60000};
    const char *a[] = {"stream", path, "--dataset", "/features", "--dataset", "/targets", "--device", "cpu",
                       "--budget", "2MiB", "--readers", "2", "--verify", NULL};
    cr_assert_eq(h5fx_write(path, &o), 0);
    double t0 = mono();
    cli_result r = cli_run(a);
    double whole = mono() - t0;
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    cli_result_free(&r);
    int io_errors = 0;
    for (int i = 1; i <= 9; i++) {
        cr_assert_eq(h5fx_write(path, &o), 0);
        struct stat st;
        cr_assert_eq(stat(path, &st), 0);
        cutter c = {path, whole * (double)i / 10.0, st.st_size * 6 / 10};
        pthread_t th;
        cr_assert_eq(pthread_create(&th, NULL, cut_later, &c), 0);
        r = cli_run(a);
        pthread_join(th, NULL);
        cr_assert_null(strstr(r.err, "verify FAILED"), "cut at %.3f s: %s", c.delay, r.err);
        cr_assert(r.exit_code == 0 || r.exit_code == 2 || r.exit_code == 3, "cut at %.3f s: exit %d: %s", c.delay,
                  r.exit_code, r.err);
        if (r.exit_code == 3) {
            io_errors++;
            cr_assert_eq(cli_count_lines(r.err), 1, "%s", r.err);
            cr_assert(strstr(r.err, "truncated") || strstr(r.err, "changed under the reader"), "%s", r.err);
        }
        cli_result_free(&r);
    }
    cr_assert_geq(io_errors, 1, "no cut fell inside a run: the test proved nothing");
}

/* ---- chunks FILE ---------------------------------------------------------------------- */

Test(cli_stream, chunks_file_text_names_each_read_path) {
    const char *a[] = {"chunks", deflate, "--dataset", "/features", "--dataset", "/targets",
                       "--assume-gpu", "16GiB,used=2GiB", NULL};
    cli_result r = cli_run(a);
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    cr_assert(strstr(r.out, "vramkit chunks: 1003 samples of 1.01 KiB (1010.84 KiB), batch 128 (129.00 KiB)"),
              "%s", r.out);
    cr_assert(strstr(r.out, "file            "), "%s", r.out);
    cr_assert(strstr(r.out, "/features  1003 x 36 x 7 float32, 1008 B per sample; hdf5: H5Dread per "
                            "range (deflate filter)"), "%s", r.out);
    cr_assert(strstr(r.out, "/targets   1003 x 3 int64, 24 B per sample; contiguous: pread from offset "),
              "%s", r.out);
    cr_assert(strstr(r.out, "budget          10.50 GiB (75% of 14.00 GiB free"), "%s", r.out);
    cr_assert(strstr(r.out, "chunks          1 of up to 1003 samples"), "%s", r.out);
    cli_result_free(&r);
}

Test(cli_stream, chunks_file_json_is_the_plan_stream_follows) {
    const char *a[] = {"chunks", chunked, "--dataset", "/features", "--dataset", "/targets", "--batch", "16",
                       "--budget", "200KiB", "--shuffle", "--json", NULL};
    cli_result r = cli_run(a);
    cr_assert_eq(r.exit_code, 0, "%s", r.err);
    cJSON *doc = jparse(r.out);
    cr_assert_str_eq(jstr(doc, "file"), chunked);
    cr_assert_eq(jnum(doc, "samples"), 1003);
    cr_assert_eq(jnum(doc, "sample_bytes"), 1032);
    cr_assert_eq(jnum(doc, "samples_per_chunk"), 96);
    cr_assert_eq(jnum(doc, "chunk_count"), 11);
    /* two gather buffers of 16 x 1032 and two orders of 96 rows */
    cr_assert_eq(jnum(doc, "extra_device_bytes"), 2 * 16 * 1032 + 2 * 96 * 8);
    const cJSON *ds = jget(doc, "datasets");
    cr_assert_str_eq(jstr(cJSON_GetArrayItem(ds, 0), "read_path"), "chunked");
    cr_assert_str_eq(jstr(cJSON_GetArrayItem(ds, 1), "name"), "/targets");
    /* stream visits the chunks in the order chunks lists */
    const cJSON *order = jget(doc, "chunk_order");
    const char *s[] = {"stream", chunked, "--dataset", "/features", "--dataset", "/targets", "--batch", "16",
                       "--budget", "200KiB", "--shuffle", "--device", "cpu", "--verify", "--json", NULL};
    cli_result q = cli_run(s);
    cr_assert_eq(q.exit_code, 0, "%s", q.err);
    cJSON *sd = jparse(q.out);
    cr_assert_eq(jnum(jget(sd, "plan"), "chunk_count"), cJSON_GetArraySize(order));
    cr_assert_eq(jnum(jget(sd, "plan"), "samples_per_chunk"), 96);
    cJSON_Delete(sd);
    cli_result_free(&q);
    cJSON_Delete(doc);
    cli_result_free(&r);
}

#endif /* VRAMKIT_HAVE_HDF5 */
