/* The flat C API (driver/api/api.h) that the Python package loads, called as ctypes does. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "../../driver/api/api.h"

/* What a caller's earlier calls leave on the stack: words that are neither NULL nor a valid
 * "NAME=value" (the pytest process on the GPU machine, after its CUDA tests, left such words
 * where vram_api_try kept its "env" list when the options had none). noinline, so its frame
 * lies where the next call's will. */
static const char not_an_env[] = "no-equals-sign";
__attribute__((noinline)) static void scribble_stack(void) {
    volatile const char *words[8192];
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) words[i] = not_an_env;
    __asm__ volatile("" : : "r"(words) : "memory");
}

__attribute__((noinline)) static int call_try(const char *options, char **out, char **err) {
    scribble_stack();
    return vram_api_try(options, out, err);
}

Test(api, try_without_env_is_not_what_the_stack_held) {
    /* options without "env": the attempts get the caller's environment and vramkit's variables,
       nothing read from uninitialised memory */
    for (int round = 0; round < 3; round++) {
        char *out = NULL, *err = NULL;
        int rc = call_try("{\"command\": [\"sh\", \"-c\", \"test {strategy} = int8\"], "
                          "\"strategies\": \"fp16,int8\"}",
                          &out, &err);
        cr_assert_eq(rc, 0, "round %d: rc %d, err: %s", round, rc, err ? err : "(none)");
        cr_assert_not_null(out);
        cr_assert(strstr(out, "\"chosen\": \"int8\"") || strstr(out, "\"chosen\":\"int8\""),
                  "round %d: %s", round, out);
        vram_api_free(out);
        vram_api_free(err);
    }
}

Test(api, try_with_env_passes_it_to_each_attempt) {
    char *out = NULL, *err = NULL;
    int rc = call_try("{\"command\": [\"sh\", \"-c\", \"test \\\"$VK_T\\\" = yes\"], "
                      "\"strategies\": \"cpu\", \"env\": [\"VK_T=yes\"]}",
                      &out, &err);
    cr_assert_eq(rc, 0, "rc %d, err: %s", rc, err ? err : "(none)");
    vram_api_free(out);
    vram_api_free(err);
}

Test(api, try_with_a_bad_env_entry_is_a_clear_error) {
    char *out = NULL, *err = NULL;
    int rc = call_try("{\"command\": [\"true\"], \"strategies\": \"cpu\", \"env\": [1]}", &out, &err);
    cr_assert_eq(rc, 2);
    cr_assert_not_null(err);
    cr_assert(strstr(err, "env: give a list of strings") != NULL, "%s", err);
    vram_api_free(out);
    vram_api_free(err);
}

/* ---- every operation, good and bad options: what the Python package passes through ctypes.
 * Run under valgrind by the memcheck label (test/memcheck/), where an uninitialised read or a
 * leak on any of these paths fails even when the answer looks right. */

typedef struct api_case {
    int (*op)(const char *, char **, char **);
    const char *options;
    int rc;          /* the exit code */
    const char *has; /* in *out when there is one (rc 0, or 1 with a document), else in *err */
} api_case;

static void api_check(const api_case *k) {
    char *out = NULL, *err = NULL;
    int rc = k->op(k->options, &out, &err);
    cr_assert_eq(rc, k->rc, "%s: rc %d, err: %s", k->options, rc, err ? err : "(none)");
    if (rc == 0 || (rc == 1 && out != NULL)) { /* "no" is an answer, or (chunks) an error line */
        cr_assert_not_null(out, "%s: no document", k->options);
        cr_assert(strstr(out, k->has) != NULL, "%s: '%s' not in %s", k->options, k->has, out);
    } else {
        cr_assert_null(out, "%s: a document with an error: %s", k->options, out);
        cr_assert_not_null(err, "%s: no error line", k->options);
        cr_assert(strstr(err, k->has) != NULL, "%s: '%s' not in %s", k->options, k->has, err);
    }
    vram_api_free(out);
    vram_api_free(err);
}

Test(api, estimate_plan_chunks_on_good_and_bad_options) {
    const api_case cases[] = {
        {vram_api_estimate, "{\"model\": \"gpt2\", \"assume_gpu\": \"8GiB\"}", 0, "\"params\""},
        {vram_api_estimate, "{\"model\": \"gpt2\", \"mode\": \"train\", \"batch\": 4, \"seq\": 512, "
                            "\"checkpointing\": true, \"flash_attention\": false, \"assume-gpu\": \"24GiB\"}",
         0, "\"params\""},
        {vram_api_estimate, "{\"model\": \"no-such-model\", \"assume_gpu\": \"8GiB\"}", 2, "no-such-model"},
        {vram_api_estimate, "{\"model\": \"gpt2\", \"bogus\": 1}", 2, "unknown option 'bogus'"},
        {vram_api_estimate, "{\"model\": 7}", 2, "model: give it as a string"},
        {vram_api_estimate, "{\"model\": \"gpt2\", \"batch\": {}}", 2, "give a string, a number"},
        {vram_api_estimate, "{\"model\": \"gpt2\", \"assume_gpu\": \"8 lbs\"}", 2, "8 lbs"},
        {vram_api_estimate, "[1, 2]", 2, "not a JSON object"},
        {vram_api_estimate, "{\"model\": \"gpt2\", ", 2, "not a JSON object"},
        {vram_api_estimate, "{\"an_option_name_longer_than_any_buffer_holds_for_its_spelling_x\": 1}", 2,
         "unknown option"},
        {vram_api_plan, "{\"model\": \"gpt2\", \"assume_gpu\": \"8GiB\", \"host_memory\": \"16GiB\", "
                        "\"emit\": [\"accelerate\", \"llama.cpp\", \"vllm\", \"env\"]}",
         0, "\"emit\""},
        {vram_api_plan, "{\"model\": \"Mistral-Small-22B\", \"assume_gpu\": \"4GiB\", \"host_memory\": \"8GiB\"}",
         1, "\"chosen\""},
        {vram_api_plan, "{\"model\": \"gpt2\", \"emit\": \"yaml\", \"assume_gpu\": \"8GiB\"}", 2, "yaml"},
        {vram_api_plan, "{\"load\": \"/nonexistent/vramkit-plan.json\"}", 2, "vramkit-plan.json"},
        {vram_api_plan, "{}", 2, "plan"},
        {vram_api_chunks, "{\"samples\": 1000, \"sample_bytes\": \"1KiB\", \"batch\": 32, \"budget\": \"100KiB\", "
                          "\"shuffle\": true}",
         0, "\"chunks\""},
        {vram_api_chunks, "{\"samples\": 1000, \"sample_bytes\": \"1KiB\", \"batch\": 32, \"budget\": \"1KiB\"}", 1,
         "does not fit"},
        {vram_api_chunks, "{\"samples\": 1000, \"sample_bytes\": \"1KiB\", \"batch\": 32}", 2, "budget"},
        {vram_api_chunks, "{\"file\": \"/nonexistent/x.h5\", \"dataset\": [\"/x\"], \"budget\": \"1MiB\"}", 2,
         "/nonexistent/x.h5: no such file"},
        {vram_api_chunks, "{\"samples\": -1, \"sample_bytes\": \"1KiB\", \"batch\": 32, \"budget\": \"1MiB\"}", 2,
         "samples"},
        {vram_api_doctor, "{\"bogus\": true}", 2, "unknown option 'bogus'"},
        {vram_api_try, "{\"command\": [], \"strategies\": \"cpu\"}", 2, "the command is empty"},
        {vram_api_try, "{\"command\": [\"\"], \"strategies\": \"cpu\"}", 2, "the program is empty"},
        {vram_api_try, "{\"command\": \"true\", \"strategies\": \"cpu\"}", 2, "give a list of strings"},
        {vram_api_try, "{\"command\": [\"true\"], \"strategies\": \"fp16,,cpu\"}", 2, "strateg"},
        {vram_api_try, "{\"command\": [\"true\"]}", 2, "try"},
        {vram_api_try, "{\"command\": [\"./no-such-program\"], \"strategies\": \"cpu\"}", 1, "\"chosen\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) api_check(&cases[i]);
}

Test(api, doctor_answers_with_a_document) {
    char *out = NULL, *err = NULL;
    int rc = vram_api_doctor("{}", &out, &err);
    /* 0 fine, 1 an error-level finding, 3 no GPU can be used: each with the document */
    cr_assert(rc == 0 || rc == 1 || rc == 3, "rc %d, err: %s", rc, err ? err : "(none)");
    cr_assert_not_null(out, "rc %d, err: %s", rc, err ? err : "(none)");
    cr_assert(strstr(out, "\"verdict\"") != NULL, "%s", out);
    vram_api_free(out);
    vram_api_free(err);
}

Test(api, watch_of_the_host_rounds_and_errors) {
    vram_api_watch *w = NULL;
    char *out = NULL, *err = NULL;
    int rc = vram_api_watch_open("{\"host\": true, \"interval\": 20, \"limit\": 99}", &w, &err);
    cr_assert_eq(rc, 0, "rc %d, err: %s", rc, err ? err : "(none)");
    cr_assert_not_null(w);
    cr_assert_eq(vram_api_watch_interval_ms(w), 20);
    vram_api_free(err);
    for (int round = 0; round < 2; round++) {
        rc = vram_api_watch_round(w, &out, &err);
        cr_assert_eq(rc, 0, "rc %d, err: %s", rc, err ? err : "(none)");
        cr_assert(out && strstr(out, "\"used_bytes\""), "%s", out ? out : "(none)");
        vram_api_free(out);
        vram_api_free(err);
    }
    vram_api_watch_close(w);
    vram_api_watch_close(NULL);
    w = NULL;
    err = NULL;
    rc = vram_api_watch_open("{\"host\": true, \"interval\": 0}", &w, &err);
    cr_assert_eq(rc, 2);
    cr_assert_null(w);
    cr_assert(err && strstr(err, "--interval"), "%s", err ? err : "(none)");
    vram_api_free(err);
}

Test(api, sizes_world_and_local_gpu) {
    uint64_t v = 0;
    uint32_t world = 0, rank = 9;
    char err[256];
    cr_assert_eq(vram_api_parse_size("7.5GB", &v), 0);
    cr_assert_eq(v, 7500000000ull);
    cr_assert_eq(vram_api_parse_size("256MiB", &v), 0);
    cr_assert_eq(v, 256ull << 20);
    cr_assert_neq(vram_api_parse_size("lots", &v), 0);
    cr_assert_neq(vram_api_parse_size("99999999999999999999999", &v), 0);
    cr_assert_neq(vram_api_parse_size(NULL, &v), 0);
    unsetenv("RANK");
    unsetenv("WORLD_SIZE");
    unsetenv("OMPI_COMM_WORLD_SIZE");
    unsetenv("PMI_SIZE");
    unsetenv("SLURM_NTASKS");
    cr_assert_eq(vram_api_world(&world, &rank, err, sizeof err), 0, "%s", err);
    cr_assert_eq(world, 1);
    cr_assert_eq(rank, 0);
    cr_assert_neq(vram_api_world(NULL, &rank, err, sizeof err), 0);
    cr_assert_str_eq(vram_api_status_name(0), "VRAM_OK");
    cr_assert_eq(vram_api_version(), VRAM_API_VERSION);
    cr_assert_geq(vram_api_host_budget(), VRAM_API_HOST_BUDGET_MIN);
    cr_assert_leq(vram_api_host_budget(), VRAM_API_HOST_BUDGET_MAX);
}

#ifdef VRAMKIT_HAVE_HDF5
#include <unistd.h>

#include "h5_fixture.h"

static void api_h5(char *path, size_t cap, int layout) {
    h5fx_opts o;
    memset(&o, 0, sizeof o);
    o.n = 300;
    o.layout = layout;
    o.chunk_rows = 50;
    snprintf(path, cap, "/tmp/vramkit-api-%d-%d.h5", (int)getpid(), layout);
    cr_assert_eq(h5fx_write(path, &o), 0, "writing %s", path);
}

static vram_api_stream_opts api_stream_opts(uint64_t batch) {
    vram_api_stream_opts o;
    memset(&o, 0, sizeof o);
    o.size = sizeof o;
    o.batch = batch;
    o.device = -1;
    o.readers = 2;
    o.budget_bytes = 256u << 10;
    return o;
}

Test(api, stream_next_release_skip_take_and_close) {
    static const char *const names[] = {"/features", "/targets"};
    char path[128], err[512];
    vram_api_stream *s = NULL;
    vram_api_stream_opts o = api_stream_opts(32);
    vram_api_batch b;
    api_h5(path, sizeof path, H5FX_CHUNKED);
    cr_assert_eq(vram_api_stream_open(path, names, 2, &o, &s, err, sizeof err), 0, "%s", err);
    cr_assert_eq(vram_api_stream_datasets(s), 2);
    cr_assert_eq(vram_api_stream_row_bytes(s, 0), H5FX_FEATURE_BYTES);
    cr_assert_str_eq(vram_api_stream_type(s, 1), "int64");
    cr_assert_eq(vram_api_stream_rank(s, 0), 3);
    cr_assert_eq(vram_api_stream_dim(s, 0, 1), 36);
    cr_assert_eq(vram_api_stream_dim(s, 0, 7), 0);
    cr_assert_eq(vram_api_stream_row_bytes(s, 5), 0);
    cr_assert_eq(vram_api_stream_rank_samples(s), 300);
    cr_assert_eq(vram_api_stream_batches_per_epoch(s), 10);
    cr_assert_eq(vram_api_stream_device(s), -1);
    cr_assert_eq(vram_api_stream_world(s), 1);
    cr_assert_str_eq(vram_api_stream_launcher(s), "");
    cr_assert_eq(vram_api_stream_budget(s), 256u << 10);
    cr_assert_gt(vram_api_stream_chunk_rows(s), 0);
    memset(&b, 0, sizeof b);
    b.size = sizeof b;
    cr_assert_eq(vram_api_stream_release(s, err, sizeof err), VRAM_E_STATE);
    cr_assert_eq(vram_api_stream_next(s, &b, err, sizeof err), 0, "%s", err);
    cr_assert_eq(b.count, 32);
    cr_assert(b.held);
    cr_assert_eq(b.samples[0], 0);
    cr_assert(sc_row_ok(b.data[0], 0, 0, H5FX_FEATURE_BYTES));
    cr_assert_eq(vram_api_stream_next(s, &b, err, sizeof err), VRAM_E_STATE);
    cr_assert(strstr(err, "still held") != NULL, "%s", err);
    cr_assert_eq(vram_api_stream_order(s, NULL, 0, err, sizeof err), 0, "%s", err);
    cr_assert_eq(vram_api_stream_release(s, err, sizeof err), 0, "%s", err);
    uint64_t skipped = 0;
    cr_assert_eq(vram_api_stream_skip(s, 3, &skipped, err, sizeof err), 0, "%s", err);
    cr_assert_eq(skipped, 3);
    /* copy out the next batch, then keep the rest: unshuffled host memory allows it */
    static unsigned char feat[32 * H5FX_FEATURE_BYTES], targ[32 * H5FX_TARGET_BYTES];
    uint64_t samples[32];
    vram_api_take t;
    memset(&t, 0, sizeof t);
    t.size = sizeof t;
    t.mode = VRAM_API_TAKE_COPY;
    t.samples_out = (uint64_t)(uintptr_t)samples;
    t.dst[0] = (uint64_t)(uintptr_t)feat;
    t.dst[1] = (uint64_t)(uintptr_t)targ;
    cr_assert_eq(vram_api_stream_take(s, &t), 0, "%s", t.err);
    cr_assert_eq(t.count, 32);
    cr_assert_eq(t.index, 4);
    cr_assert_eq(samples[0], 128);
    cr_assert(sc_row_ok(feat, 0, 128, H5FX_FEATURE_BYTES));
    vram_api_keep *keeps[16];
    int nkeeps = 0;
    for (;;) {
        memset(&t, 0, sizeof t);
        t.size = sizeof t;
        t.mode = VRAM_API_TAKE_KEEP;
        t.may_detach = 1;
        cr_assert_eq(vram_api_stream_take(s, &t), 0, "%s", t.err);
        if (t.done) break;
        if (t.keep) {
            cr_assert_lt(nkeeps, 16);
            keeps[nkeeps++] = (vram_api_keep *)(uintptr_t)t.keep;
        }
    }
    cr_assert_gt(nkeeps, 0);
    vram_api_keep_release(keeps[0]);
    t.mode = 9;
    cr_assert_eq(vram_api_stream_take(s, &t), VRAM_E_INVALID);
    t.size = 1;
    cr_assert_eq(vram_api_stream_take(s, &t), VRAM_E_VERSION);
    cr_assert_eq(vram_api_stream_close(s), 0);
    /* the keeps outlive their stream: their memory is theirs now */
    for (int i = 1; i < nkeeps; i++) vram_api_keep_release(keeps[i]);
    vram_api_keep_release(NULL);
    cr_assert_eq(vram_api_stream_close(NULL), 0);
    unlink(path);
}

Test(api, stream_batch_zero_is_the_default_batch) {
    static const char *const names[] = {"/features"};
    char path[128], err[512];
    vram_api_stream *s = NULL;
    vram_api_stream_opts o = api_stream_opts(0);
    vram_api_batch b;
    api_h5(path, sizeof path, H5FX_CONTIGUOUS);
    cr_assert_eq(vram_api_stream_open(path, names, 1, &o, &s, err, sizeof err), 0, "%s", err);
    /* 300 samples in batches of 128: 128, 128, 44 */
    cr_assert_eq(vram_api_stream_batches_per_epoch(s), 3);
    memset(&b, 0, sizeof b);
    b.size = sizeof b;
    cr_assert_eq(vram_api_stream_next(s, &b, err, sizeof err), 0, "%s", err);
    cr_assert_eq(b.count, 128);
    cr_assert_eq(vram_api_stream_release(s, err, sizeof err), 0, "%s", err);
    cr_assert_eq(vram_api_stream_close(s), 0);
    unlink(path);
}

Test(api, stream_errors_name_the_input) {
    static const char *const names[] = {"/features", "/nope"};
    char path[128], err[512];
    vram_api_stream *s = NULL;
    vram_api_stream_opts o = api_stream_opts(32);
    api_h5(path, sizeof path, H5FX_CONTIGUOUS);
    cr_assert_neq(vram_api_stream_open(path, names, 2, &o, &s, err, sizeof err), 0);
    cr_assert_null(s);
    cr_assert(strstr(err, "/nope") != NULL, "%s", err);
    cr_assert_neq(vram_api_stream_open("/nonexistent/x.h5", names, 1, &o, &s, err, sizeof err), 0);
    cr_assert(strstr(err, "/nonexistent/x.h5") != NULL, "%s", err);
    cr_assert_neq(vram_api_stream_open(path, names, 0, &o, &s, err, sizeof err), 0);
    cr_assert(strstr(err, "no dataset") != NULL, "%s", err);
    o.size = 8;
    cr_assert_eq(vram_api_stream_open(path, names, 1, &o, &s, err, sizeof err), VRAM_E_VERSION);
    o = api_stream_opts(32);
    o.budget_bytes = 1024; /* a batch of 32 rows of 1 KiB does not fit */
    cr_assert_neq(vram_api_stream_open(path, names, 1, &o, &s, err, sizeof err), 0);
    cr_assert(err[0] != '\0');
    /* a file that is not HDF5 */
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("not an HDF5 file", f);
    fclose(f);
    o = api_stream_opts(32);
    cr_assert_neq(vram_api_stream_open(path, names, 1, &o, &s, err, sizeof err), 0);
    cr_assert(strstr(err, path) != NULL, "%s", err);
    cr_assert_neq(vram_api_stream_open(NULL, names, 1, &o, &s, err, sizeof err), 0);
    cr_assert_neq(vram_api_stream_skip(NULL, 1, NULL, err, sizeof err), 0);
    cr_assert_neq(vram_api_stream_next(NULL, NULL, err, sizeof err), 0);
    cr_assert_neq(vram_api_stream_release(NULL, err, sizeof err), 0);
    cr_assert_neq(vram_api_stream_order(NULL, NULL, 0, err, sizeof err), 0);
    unlink(path);
}
#endif /* VRAMKIT_HAVE_HDF5 */
