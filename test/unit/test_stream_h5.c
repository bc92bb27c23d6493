/* test_stream_h5.c — the HDF5 source (driver/hdf5/h5source.h) under the streamer, on files
 * written here with the HDF5 C API: each layout takes the read path it should (pread for
 * unfiltered data in the file's own layout, HDF5 otherwise, with the reason), delivery is
 * byte-exact on every path, and every bad file or dataset is one clear error. Built into an
 * empty suite when the build has no HDF5. */
#include <criterion/criterion.h>

#ifdef VRAMKIT_HAVE_HDF5

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "deferred_check.h"
#include "h5_corrupt.h"
#include "h5_fixture.h"
#include "hdf5/h5source.h"
#include "device/host_device.h"
#include "stream/stream.h"
#include "stream_check.h"

static char dir[64];

static void mkdir_tmp(void) {
    /* HDF5 runs in a child: this build's vramkit (this test program is not one) */
    setenv("VRAMKIT_EXE", VRAMKIT_EXE, 1);
    snprintf(dir, sizeof dir, "/tmp/vk-stream-h5-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

static void rm_tmp(void) {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

TestSuite(stream_h5, .init = mkdir_tmp, .fini = rm_tmp, .timeout = 120);

static const char *write_file(const char *name, const h5fx_opts *o) {
    static char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    cr_assert_eq(h5fx_write(path, o), 0, "writing %s", path);
    return path;
}

static vram_h5_file *open_ok(const char *path, const char *a, const char *b) {
    const char *names[2] = {a, b};
    vram_h5_file *f = NULL;
    char err[VRAM_STREAM_ERR_MAX];
    vram_status st = vram_h5_open(path, names, b ? 2u : 1u, &f, err, sizeof err);
    cr_assert_eq(st, VRAM_OK, "open %s: %s: %s", path, vram_status_name(st), err);
    return f;
}

/* Streams every epoch of f with cfg and checks every row against the fixture's pattern, in
 * the planner's order. */
static void stream_exact(vram_h5_file *f, vram_stream_config c, const char *what) {
    vram_device_ops ops = vram_host_ops();
    vram_source src = vram_h5_source(f);
    vram_streamer *s = NULL;
    char err[VRAM_STREAM_ERR_MAX];
    cr_assert_eq(vram_streamer_open(&ops, &src, &c, &s, err, sizeof err), VRAM_OK, "%s: %s", what, err);
    sc_walk w;
    const vram_stream_config *rc = vram_streamer_config(s);
    cr_assert_eq(sc_walk_make(vram_streamer_plan(s), rc->epochs, rc->first_epoch, &w), 0);
    uint64_t b = 0;
    for (;; b++) {
        vram_batch bt;
        vram_status st = vram_streamer_next(s, &bt);
        cr_assert_eq(st, VRAM_OK, "%s: %s: %s", what, vram_status_name(st), vram_streamer_error(s));
        if (bt.done) break;
        cr_assert_lt(b, w.batches);
        cr_assert_eq(bt.count, w.start[b + 1] - w.start[b], "%s: batch %llu", what, (unsigned long long)b);
        for (uint64_t k = 0; k < bt.count; k++) {
            uint64_t smp = w.samples[w.start[b] + k];
            cr_assert_eq(bt.samples[k], smp);
            for (uint32_t d = 0; d < src.datasets; d++)
                cr_assert(sc_row_ok((const uint8_t *)bt.data[d] + k * src.row_bytes[d], d, smp,
                                    src.row_bytes[d]),
                          "%s: batch %llu row %llu dataset %u is not sample %llu", what,
                          (unsigned long long)b, (unsigned long long)k, d, (unsigned long long)smp);
        }
        cr_assert_eq(vram_streamer_release(s, &bt), VRAM_OK);
    }
    cr_assert_eq(b, w.batches, "%s", what);
    sc_walk_free(&w);
    cr_assert_eq(vram_streamer_close(s), VRAM_OK);
}

static vram_stream_config cfg(void) {
    vram_stream_config c;
    memset(&c, 0, sizeof c);
    c.plan.batch = 32;
    c.plan.budget_bytes = 2u * 150u * (H5FX_FEATURE_BYTES + H5FX_TARGET_BYTES); /* 128-row chunks */
    c.epochs = 2;
    c.readers = 3;
    c.piece_bytes = 20000; /* several reads per chunk */
    return c;
}

/* ---- read paths ------------------------------------------------------------------------ */

Test(stream_h5, each_layout_takes_its_read_path_and_delivers_exact_bytes) {
    struct {
        const char *name;
        h5fx_opts o;
        vram_h5_path path;
        const char *reason; /* for the HDF5 path */
    } cases[] = {
        {"contiguous.h5", {.n = 1001}, VRAM_H5_PATH_CONTIGUOUS, NULL},
        {"chunked.h5", {.n = 1001, .layout = H5FX_CHUNKED, .chunk_rows = 50}, VRAM_H5_PATH_CHUNKED, NULL},
        {"chunk1.h5", {.n = 333, .layout = H5FX_CHUNKED, .chunk_rows = 1}, VRAM_H5_PATH_CHUNKED, NULL},
        {"deflate.h5", {.n = 1001, .layout = H5FX_DEFLATE, .chunk_rows = 70}, VRAM_H5_PATH_HDF5, "deflate filter"},
        {"split.h5", {.n = 1001, .layout = H5FX_SPLIT, .chunk_rows = 40}, VRAM_H5_PATH_HDF5,
         "its chunks split a sample (chunk dimension 1 is 18, not 36)"},
        {"bigendian.h5", {.n = 1001, .big_endian = 1}, VRAM_H5_PATH_HDF5,
         "type conversion (float32 big-endian in the file, native in memory)"},
        {"ub_contig.h5", {.n = 1001, .userblock = 4096}, VRAM_H5_PATH_CONTIGUOUS, NULL},
        {"ub_chunked.h5", {.n = 1001, .layout = H5FX_CHUNKED, .chunk_rows = 64, .userblock = 1024},
         VRAM_H5_PATH_CHUNKED, NULL},
        {"compact.h5", {.n = 50, .layout = H5FX_COMPACT}, VRAM_H5_PATH_HDF5, "compact layout"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *path = write_file(cases[i].name, &cases[i].o);
        vram_h5_file *f = open_ok(path, "/features", "targets");
        cr_assert_eq(f->samples, cases[i].o.n);
        cr_assert_eq(f->ds[0].row_bytes, H5FX_FEATURE_BYTES);
        cr_assert_eq(f->ds[1].row_bytes, H5FX_TARGET_BYTES);
        cr_assert_eq(f->ds[0].rank, 3);
        cr_assert_eq(f->ds[0].dims[1], 36);
        cr_assert_eq(f->ds[1].dims[1], 3);
        cr_assert_str_eq(f->ds[1].type, "int64");
        cr_assert_eq(f->ds[1].path, VRAM_H5_PATH_CONTIGUOUS);
        cr_assert_eq(f->ds[0].path, cases[i].path, "%s: path %s (%s)", cases[i].name,
                     vram_h5_path_name(f->ds[0].path), f->ds[0].reason);
        if (cases[i].reason)
            cr_assert_str_eq(f->ds[0].reason, cases[i].reason, "%s", cases[i].name);
        if (cases[i].path == VRAM_H5_PATH_CHUNKED) {
            cr_assert_eq(f->ds[0].chunk_rows, cases[i].o.chunk_rows);
            cr_assert_eq(f->ds[0].nchunks, (cases[i].o.n + cases[i].o.chunk_rows - 1) / cases[i].o.chunk_rows);
        }
        for (int shuffle = 0; shuffle < 2; shuffle++)
            for (int staging = VRAM_STAGE_SLABS; staging <= VRAM_STAGE_DIRECT; staging++) {
                char what[96];
                snprintf(what, sizeof what, "%s shuffle %d staging %d", cases[i].name, shuffle, staging);
                vram_stream_config c = cfg();
                c.plan.shuffle = shuffle;
                c.plan.seed = 3;
                c.staging = (vram_stream_staging)staging;
                c.slab_bytes = 50000;
                stream_exact(f, c, what);
            }
        vram_h5_close(f);
    }
}

Test(stream_h5, contiguous_offset_is_where_the_bytes_are) {
    h5fx_opts o = {.n = 77};
    const char *path = write_file("offset.h5", &o);
    vram_h5_file *f = open_ok(path, "/features", NULL);
    /* read the raw bytes at the reported offset, independently of the source */
    int fd = open(path, O_RDONLY);
    uint8_t row[H5FX_FEATURE_BYTES];
    cr_assert_eq(pread(fd, row, sizeof row, (off_t)(f->ds[0].offset + 76u * H5FX_FEATURE_BYTES)),
                 (ssize_t)sizeof row);
    close(fd);
    cr_assert(sc_row_ok(row, 0, 76, H5FX_FEATURE_BYTES));
    vram_h5_close(f);
}

Test(stream_h5, every_combination_of_shuffle_drop_last_and_ranks) {
    h5fx_opts o = {.n = 1003, .layout = H5FX_CHUNKED, .chunk_rows = 37, .both = 1};
    const char *path = write_file("combos.h5", &o);
    vram_h5_file *f = open_ok(path, "/features", "/targets");
    cr_assert_eq(f->ds[1].path, VRAM_H5_PATH_CHUNKED);
    for (int shuffle = 0; shuffle < 2; shuffle++)
        for (int drop = 0; drop < 2; drop++)
            for (uint32_t world = 1; world <= 3; world += 2)
                for (uint32_t rank = 0; rank < world; rank++) {
                    char what[96];
                    snprintf(what, sizeof what, "shuffle %d drop_last %d rank %u/%u", shuffle, drop, rank, world);
                    vram_stream_config c = cfg();
                    c.plan.shuffle = shuffle;
                    c.plan.drop_last = drop;
                    c.plan.world = world;
                    c.plan.rank = rank;
                    c.epochs = 3;
                    stream_exact(f, c, what);
                }
    vram_h5_close(f);
}

/* The device half on the CPU (test_stream_deferred.c) over files: pread paths (contiguous,
 * chunked) and the HDF5 path, shuffled or not, sharded or not, byte-exact on the deferred
 * mock over several seeds, used on the consumer stream and on the host. */
Test(stream_h5, deferred_device_byte_exact_from_each_read_path) {
    struct {
        const char *name;
        h5fx_opts o;
    } files[] = {
        {"d_contig.h5", {.n = 301}},
        {"d_chunked.h5", {.n = 301, .layout = H5FX_CHUNKED, .chunk_rows = 37, .both = 1}},
        {"d_deflate.h5", {.n = 301, .layout = H5FX_DEFLATE, .chunk_rows = 50}},
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        const char *path = write_file(files[i].name, &files[i].o);
        vram_h5_file *f = open_ok(path, "/features", "/targets");
        vram_source src = vram_h5_source(f);
        for (uint64_t seed = 1; seed <= 4; seed++)
            for (int shuffle = 0; shuffle < 2; shuffle++)
                for (uint32_t world = 1; world <= 3; world += 2) {
                    vram_stream_config c = cfg();
                    c.plan.batch = 16;
                    c.plan.budget_bytes = 2u * 50u * (H5FX_FEATURE_BYTES + H5FX_TARGET_BYTES);
                    c.plan.shuffle = shuffle;
                    c.plan.seed = 3;
                    c.plan.world = world;
                    c.plan.rank = world - 1u;
                    c.plan.drop_last = (int)(seed & 1u);
                    c.slab_bytes = 20000; /* several slabs a chunk */
                    c.slabs = 3;
                    dc_result r;
                    dc_mode mode = seed <= 2 ? DC_DEVICE : DC_HOST;
                    cr_assert_eq(dc_run(&src, c, seed, 30, mode, DC_NO_FAULT, &r, NULL), 0, "leaks");
                    cr_assert_eq(r.st, VRAM_OK, "%s seed %llu shuffle %d world %u: %s", files[i].name,
                                 (unsigned long long)seed, shuffle, world, r.first);
                    cr_assert_eq(r.bad_rows + r.bad_meta, 0, "%s seed %llu shuffle %d world %u: %s",
                                 files[i].name, (unsigned long long)seed, shuffle, world, r.first);
                    cr_assert_gt(r.batches, 0);
                }
        vram_h5_close(f);
    }
}

Test(stream_h5, plain_read_matches_the_pattern) {
    h5fx_opts o = {.n = 40, .layout = H5FX_DEFLATE, .chunk_rows = 16};
    const char *path = write_file("plain.h5", &o);
    vram_h5_file *f = open_ok(path, "/features", "/targets");
    uint8_t buf[5 * H5FX_FEATURE_BYTES];
    char err[256];
    cr_assert_eq(vram_h5_read_plain(f, 0, 14, 5, buf, err, sizeof err), VRAM_OK, "%s", err);
    for (int k = 0; k < 5; k++) cr_assert(sc_row_ok(buf + k * H5FX_FEATURE_BYTES, 0, 14u + (uint64_t)k, H5FX_FEATURE_BYTES));
    cr_assert_eq(vram_h5_read_plain(f, 0, 38, 5, buf, err, sizeof err), VRAM_E_RANGE);
    cr_assert_eq(vram_h5_read_plain(f, 2, 0, 1, buf, err, sizeof err), VRAM_E_RANGE);
    vram_h5_close(f);
}

Test(stream_h5, fixed_compounds_and_unwritten_data_take_the_hdf5_path_or_raw_bytes) {
    h5fx_opts o = {.n = 64, .unwritten = 1};
    const char *path = write_file("unwritten.h5", &o);
    vram_h5_file *f = open_ok(path, "/features", "/fixed");
    cr_assert_eq(f->ds[0].path, VRAM_H5_PATH_HDF5);
    cr_assert_str_eq(f->ds[0].reason, "its storage was never written (HDF5 supplies the fill value)");
    cr_assert_eq(f->ds[1].path, VRAM_H5_PATH_CONTIGUOUS, "a fixed compound is bytes: %s", f->ds[1].reason);
    cr_assert_str_eq(f->ds[1].type, "compound (16 bytes)");
    cr_assert_eq(f->ds[1].row_bytes, 16);
    /* the compound's bytes as a C struct */
    vram_source src = vram_h5_source(f);
    uint8_t rows[3 * 16];
    char err[256];
    cr_assert_eq(src.read(src.ctx, 1, 10, 3, rows, err, sizeof err), VRAM_OK, "%s", err);
    for (int k = 0; k < 3; k++) {
        int32_t a;
        double b;
        memcpy(&a, rows + k * 16, 4);
        memcpy(&b, rows + k * 16 + 8, 8);
        cr_assert_eq(a, (10 + k) * 3);
        cr_assert_eq(b, (10 + k) * 0.5);
    }
    /* unwritten features read as the fill value, zeros */
    uint8_t frow[H5FX_FEATURE_BYTES], zero[H5FX_FEATURE_BYTES];
    memset(zero, 0, sizeof zero);
    cr_assert_eq(src.read(src.ctx, 0, 63, 1, frow, err, sizeof err), VRAM_OK, "%s", err);
    cr_assert_arr_eq(frow, zero, sizeof zero);
    vram_h5_close(f);
}

Test(stream_h5, partly_written_chunked_dataset_reads_through_hdf5) {
    h5fx_opts o = {.n = 100, .layout = H5FX_CHUNKED, .chunk_rows = 30};
    const char *path = write_file("partial.h5", &o);
    /* rewrite: a chunked dataset with only its first 30 rows written */
    hid_t fh = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    hsize_t dims[2] = {100, 4}, cd[2] = {30, 4}, start[2] = {0, 0}, cnt[2] = {30, 4};
    hid_t sp = H5Screate_simple(2, dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 2, cd);
    hid_t ds = H5Dcreate2(fh, "/partial", H5T_NATIVE_INT32, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    int32_t v[30 * 4];
    for (int i = 0; i < 120; i++) v[i] = i + 1;
    hid_t ms = H5Screate_simple(2, cnt, NULL);
    H5Sselect_hyperslab(sp, H5S_SELECT_SET, start, NULL, cnt, NULL);
    cr_assert_geq(H5Dwrite(ds, H5T_NATIVE_INT32, ms, sp, H5P_DEFAULT, v), 0);
    H5Sclose(ms);
    H5Dclose(ds);
    H5Pclose(dcpl);
    H5Sclose(sp);
    H5Fclose(fh);
    vram_h5_file *f = open_ok(path, "/partial", NULL);
    cr_assert_eq(f->ds[0].path, VRAM_H5_PATH_HDF5);
    cr_assert_str_eq(f->ds[0].reason, "chunk 1 was never written (HDF5 supplies the fill value)");
    vram_source src = vram_h5_source(f);
    int32_t got[2 * 4];
    char err[256];
    cr_assert_eq(src.read(src.ctx, 0, 29, 2, got, err, sizeof err), VRAM_OK, "%s", err);
    int32_t want[8] = {117, 118, 119, 120, 0, 0, 0, 0};
    cr_assert_arr_eq(got, want, sizeof want);
    vram_h5_close(f);
}

/* ---- errors --------------------------------------------------------------------------- */

Test(stream_h5, bad_files_and_datasets) {
    h5fx_opts o = {.n = 20, .targets_n = 21};
    const char *path = write_file("bad.h5", &o);
    char text[128], sub[128];
    snprintf(text, sizeof text, "%s/text.h5", dir);
    FILE *t = fopen(text, "w");
    fputs("not hdf5\n", t);
    fclose(t);
    snprintf(sub, sizeof sub, "%s/sub", dir);
    mkdir(sub, 0700);
    struct {
        const char *file;
        const char *a, *b;
        vram_status st;
        const char *says;
    } cases[] = {
        {"missing", "/features", NULL, VRAM_E_INVALID, "missing: no such file"},
        {"dir", "/features", NULL, VRAM_E_INVALID, "not a regular file"},
        {"text", "/features", NULL, VRAM_E_FORMAT, "not an HDF5 file"},
        {"bad", "/nothere", NULL, VRAM_E_INVALID, "no dataset '/nothere' in the file"},
        {"bad", "/group/deeper", NULL, VRAM_E_INVALID, "no dataset '/group/deeper' in the file"},
        {"bad", "/group", NULL, VRAM_E_INVALID, "'/group' is a group, not a dataset"},
        {"bad", "/features", "/targets", VRAM_E_INVALID,
         "'/features' has 20 samples and '/targets' has 21: datasets streamed together must share "
         "their first dimension"},
        {"bad", "/features", "/features", VRAM_E_INVALID, "dataset '/features' is given twice"},
        {"bad", "/names", NULL, VRAM_E_UNHANDLED,
         "'/names' holds variable-length strings (type variable-length string): only fixed-size "
         "samples can be moved as bytes"},
        {"bad", "/records", NULL, VRAM_E_UNHANDLED, "'/records' holds variable-length strings (type compound"},
        {"bad", "/empty", NULL, VRAM_E_INVALID, "'/empty' is empty (0 samples)"},
        {"bad", "/scalar", NULL, VRAM_E_FORMAT, "'/scalar' is a scalar: it has no sample dimension"},
        {"bad", "", NULL, VRAM_E_INVALID, "dataset name '' is empty"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char p[160];
        const char *names[2] = {cases[i].a, cases[i].b};
        if (strcmp(cases[i].file, "bad") == 0)
            snprintf(p, sizeof p, "%s", path);
        else if (strcmp(cases[i].file, "text") == 0)
            snprintf(p, sizeof p, "%s", text);
        else if (strcmp(cases[i].file, "dir") == 0)
            snprintf(p, sizeof p, "%s", sub);
        else
            snprintf(p, sizeof p, "%s/missing", dir);
        vram_h5_file *f = (vram_h5_file *)p;
        char err[VRAM_STREAM_ERR_MAX] = "";
        vram_status st = vram_h5_open(p, names, cases[i].b ? 2u : 1u, &f, err, sizeof err);
        cr_assert_eq(st, cases[i].st, "case %zu: %s, want %s (%s)", i, vram_status_name(st),
                     vram_status_name(cases[i].st), err);
        cr_assert_null(f);
        cr_assert(strstr(err, cases[i].says), "case %zu: '%s' does not say '%s'", i, err, cases[i].says);
        cr_assert_null(strchr(err, '\n'), "one line");
    }
}

Test(stream_h5, a_file_truncated_under_the_reader_is_an_io_error_with_the_offset) {
    for (int staging = VRAM_STAGE_SLABS; staging <= VRAM_STAGE_DIRECT; staging++) {
        h5fx_opts o = {.n = 1000};
        char name[32];
        snprintf(name, sizeof name, "trunc%d.h5", staging);
        const char *path = write_file(name, &o);
        vram_h5_file *f = open_ok(path, "/features", NULL);
        uint64_t cut = f->ds[0].offset + 600u * H5FX_FEATURE_BYTES + 100u; /* inside sample 600 */
        cr_assert_eq(truncate(path, (off_t)cut), 0);
        vram_device_ops ops = vram_host_ops();
        vram_source src = vram_h5_source(f);
        vram_stream_config c = cfg();
        c.epochs = 1;
        c.staging = (vram_stream_staging)staging;
        vram_streamer *s = NULL;
        char err[VRAM_STREAM_ERR_MAX];
        cr_assert_eq(vram_streamer_open(&ops, &src, &c, &s, err, sizeof err), VRAM_OK, "%s", err);
        vram_batch b;
        vram_status st = vram_streamer_next(s, &b);
        cr_assert_eq(st, VRAM_E_IO, "no batch from a file changed since open: %s", vram_status_name(st));
        char want[256];
        snprintf(want, sizeof want, "%s: the file was truncated under the reader: %llu bytes at open, "
                 "%llu now (the data from offset %llu on is gone)", path,
                 (unsigned long long)f->file_bytes, (unsigned long long)cut, (unsigned long long)cut);
        cr_assert_str_eq(vram_streamer_error(s), want);
        vram_streamer_close(s);

        /* a read past the cut (a truncation between the check and the read) */
        uint8_t *rows = (uint8_t *)malloc(10u * H5FX_FEATURE_BYTES);
        cr_assert_eq(src.read(src.ctx, 0, 595, 10, rows, err, sizeof err), VRAM_E_IO);
        snprintf(want, sizeof want, "%s: /features: short read at offset %llu: wanted %llu more bytes, "
                 "the file ends there (truncated or changed under the reader)", path,
                 (unsigned long long)cut, (unsigned long long)(f->ds[0].offset + 605u * H5FX_FEATURE_BYTES - cut));
        cr_assert_str_eq(err, want);
        for (int k = 0; k < 5; k++)
            cr_assert(sc_row_ok(rows + k * H5FX_FEATURE_BYTES, 0, 595u + (uint64_t)k, H5FX_FEATURE_BYTES));
        free(rows);
        vram_h5_close(f);
    }
}

Test(stream_h5, a_file_changed_under_the_reader_is_refused) {
    h5fx_opts o = {.n = 300};
    const char *path = write_file("changed.h5", &o);
    vram_h5_file *f = open_ok(path, "/features", "/targets");
    struct timespec ts[2] = {{0, UTIME_OMIT}, {12345, 0}};
    cr_assert_eq(utimensat(AT_FDCWD, path, ts, 0), 0);
    vram_device_ops ops = vram_host_ops();
    vram_source src = vram_h5_source(f);
    vram_stream_config c = cfg();
    vram_streamer *s = NULL;
    char err[VRAM_STREAM_ERR_MAX];
    cr_assert_eq(vram_streamer_open(&ops, &src, &c, &s, err, sizeof err), VRAM_OK, "%s", err);
    vram_batch b;
    cr_assert_eq(vram_streamer_next(s, &b), VRAM_E_IO);
    cr_assert(strstr(vram_streamer_error(s), "the file changed under the reader"), "%s", vram_streamer_error(s));
    vram_streamer_close(s);
    vram_h5_close(f);
}

Test(stream_h5, a_batch_larger_than_the_budget) {
    h5fx_opts o = {.n = 100};
    const char *path = write_file("budget.h5", &o);
    vram_h5_file *f = open_ok(path, "/features", "/targets");
    vram_device_ops ops = vram_host_ops();
    vram_source src = vram_h5_source(f);
    vram_stream_config c = cfg();
    c.plan.budget_bytes = 2u * 32u * 1032u - 1u;
    vram_streamer *s = NULL;
    char err[VRAM_STREAM_ERR_MAX];
    cr_assert_eq(vram_streamer_open(&ops, &src, &c, &s, err, sizeof err), VRAM_E_NOSPACE);
    cr_assert(strstr(err, "does not fit one buffer"), "%s", err);
    vram_h5_close(f);
}

/* ---- malformed files: what HDF5 does with them costs its child, and only bytes HDF5 reads
 * are delivered ---------------------------------------------------------------------------- */

/* No child of this process is left (running or a zombie). */
static void no_child_left(void) {
    errno = 0;
    cr_assert_eq(waitpid(-1, NULL, WNOHANG), -1, "a child of the test is left");
    cr_assert_eq(errno, ECHILD);
}

Test(stream_h5, a_dataset_header_hdf5_cannot_make_sense_of_is_a_malformed_file) {
    /* two files of the HDF5 campaign (test/fuzz/corpus/h5): an external-storage message
     * damaged so that H5Dopen fails on the local heap. Nothing failed to be read: the file is
     * malformed (exit 2), not the environment (exit 3, which a caller may retry). */
    const char *files[] = {"crash_m474_external.h5", "crash_m1333_external.h5"};
    const char *names[1] = {"/x"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[PATH_MAX], want[PATH_MAX + 64];
        snprintf(path, sizeof path, "%s/test/fuzz/corpus/h5/%s", VRAMKIT_SOURCE_DIR, files[i]);
        vram_h5_file *f = NULL;
        char err[VRAM_STREAM_ERR_MAX] = "";
        vram_status st = vram_h5_open(path, names, 1, &f, err, sizeof err);
        cr_assert_eq(st, VRAM_E_FORMAT, "%s: %s: %s", files[i], vram_status_name(st), err);
        cr_assert_null(f);
        snprintf(want, sizeof want, "%s: cannot open dataset '/x': ", path);
        cr_assert(strstr(err, want) == err, "%s", err);
        cr_assert_null(strchr(err, '\n'), "one line");
    }
    no_child_left();
}

Test(stream_h5, a_crash_inside_hdf5_is_one_line_and_costs_only_the_child) {
    /* the root of /features' chunk B-tree is its own first child: HDF5 1.10 recurses until
     * the stack is gone as soon as it walks the index (this process died of it before) */
    h5fx_opts o = {.n = 300, .layout = H5FX_CHUNKED, .chunk_rows = 2};
    const char *path = write_file("loop.h5", &o);
    cr_assert_eq(h5k_btree_self_loop(path, "/features", 3), 0);
    const char *names[1] = {"/features"};
    vram_h5_file *f = NULL;
    char err[VRAM_STREAM_ERR_MAX], want[256];
    vram_status st = vram_h5_open(path, names, 1, &f, err, sizeof err);
    cr_assert_eq(st, VRAM_E_FORMAT, "%s: %s", vram_status_name(st), err);
    cr_assert_null(f);
    snprintf(want, sizeof want, "%s: HDF5 crashed (SIGSEGV) while reading the file's metadata: the file is "
             "malformed", path);
    cr_assert(strstr(err, want) == err, "%s", err);
    cr_assert_null(strchr(err, '\n'), "one line");
    no_child_left();
    /* the other dataset of the same file is still read (another child, another walk) */
    f = open_ok(path, "/targets", NULL);
    cr_assert_eq(f->ds[0].path, VRAM_H5_PATH_CONTIGUOUS);
    vram_h5_close(f);
    no_child_left();
}

Test(stream_h5, a_memory_bomb_is_refused_and_the_child_bounded) {
    /* /targets' type claims 0xFF000004 bytes an element: reading it made HDF5 allocate 4 GB
     * in this process (8.8 s, 4.2 GB RSS) before it gave up. No number is that wide: the
     * child refuses the file at open, as HDF5 2.0 does */
    h5fx_opts o = {.n = 64};
    const char *path = write_file("bomb.h5", &o);
    cr_assert_eq(h5k_set_type_size(path, "/targets", 0xFF000004u), 0);
    const char *both[2] = {"/features", "/targets"};
    vram_h5_file *f = NULL;
    char err[VRAM_STREAM_ERR_MAX];
    cr_assert_eq(vram_h5_open(path, both, 2, &f, err, sizeof err), VRAM_E_FORMAT, "%s", err);
    cr_assert(strstr(err, "'/targets' has a type of a number wider than 16 bytes"), "%s", err);
    struct rusage ru;
    cr_assert_eq(getrusage(RUSAGE_SELF, &ru), 0);
    cr_assert_lt(ru.ru_maxrss, 512L * 1024L, "this process grew to %ld KiB", ru.ru_maxrss);
    /* what HDF5 allocates in the child is bounded all the same: one deflated chunk of 40 MB
     * cannot be decoded within 16 MiB (a valid file: the bound, not the file, is at fault) */
    h5fx_opts big = {.n = 40000, .layout = H5FX_DEFLATE, .chunk_rows = 40000};
    path = write_file("bigchunk.h5", &big);
    setenv("VRAMKIT_H5_MEMORY", "16MiB", 1);
    f = open_ok(path, "/features", "/targets");
    cr_assert_eq(f->ds[0].path, VRAM_H5_PATH_HDF5, "%s", f->ds[0].reason);
    vram_source src = vram_h5_source(f);
    uint8_t rows[4 * H5FX_FEATURE_BYTES];
    vram_status st = src.read(src.ctx, 0, 0, 4, rows, err, sizeof err);
    cr_assert_eq(st, VRAM_E_FORMAT, "%s: %s", vram_status_name(st), err);
    cr_assert(strstr(err, "/features: HDF5 could not read rows [0, 4): HDF5 asked for more memory than the "
                          "16.00 MiB it may use here (VRAMKIT_H5_MEMORY raises the bound)"), "%s", err);
    vram_h5_close(f);
    unsetenv("VRAMKIT_H5_MEMORY"); /* the default, 1 GiB, is enough */
    f = open_ok(path, "/features", "/targets");
    src = vram_h5_source(f);
    cr_assert_eq(src.read(src.ctx, 0, 0, 4, rows, err, sizeof err), VRAM_OK, "%s", err);
    vram_h5_close(f);
    setenv("VRAMKIT_H5_MEMORY", "1", 1);
    const char *names[1] = {"/features"};
    cr_assert_eq(vram_h5_open(path, names, 1, &f, err, sizeof err), VRAM_E_INVALID);
    cr_assert_str_eq(err, "VRAMKIT_H5_MEMORY: '1' is not a size of at least 16MiB");
    unsetenv("VRAMKIT_H5_MEMORY");
    no_child_left();
}

/* Dataset `name` whole, as a plain H5Dread in this process reads it (native type). */
static uint8_t *hdf5s_bytes(const char *path, const char *name) {
    hid_t h = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t ds = H5Dopen2(h, name, H5P_DEFAULT);
    hid_t ft = H5Dget_type(ds), mt = H5Tget_native_type(ft, H5T_DIR_ASCEND), sp = H5Dget_space(ds);
    uint8_t *b = (uint8_t *)malloc((size_t)H5Sget_simple_extent_npoints(sp) * H5Tget_size(mt));
    cr_assert_geq(H5Dread(ds, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, b), 0, "plain HDF5 reads %s", name);
    H5Sclose(sp);
    H5Tclose(mt);
    H5Tclose(ft);
    H5Dclose(ds);
    H5Fclose(h);
    return b;
}

/* Every row of dataset d as the source delivers it equals `want` (HDF5's), byte for byte. */
static void delivered_is(vram_h5_file *f, uint32_t d, const uint8_t *want, const char *what) {
    uint64_t rb = f->ds[d].row_bytes;
    uint8_t *got = (uint8_t *)malloc((size_t)(f->samples * rb));
    char err[VRAM_STREAM_ERR_MAX];
    vram_source src = vram_h5_source(f);
    for (uint64_t r = 0; r < f->samples; r += 37) {
        uint64_t n = r + 37 <= f->samples ? 37 : f->samples - r;
        cr_assert_eq(src.read(src.ctx, d, r, n, got + r * rb, err, sizeof err), VRAM_OK, "%s", err);
    }
    for (uint64_t r = 0; r < f->samples; r++)
        cr_assert_arr_eq(got + r * rb, want + r * rb, (size_t)rb, "%s: %s of sample %llu differs from HDF5's", what,
                         f->ds[d].name, (unsigned long long)r);
    free(got);
}

Test(stream_h5, a_chunk_index_that_hdf5s_lookup_disagrees_with_is_read_through_hdf5) {
    struct {
        const char *name, *reason;
    } cases[] = {
        /* chunk 5's key holds a stray element offset: the index walk still lists the chunk
         * at its address, H5Dread's lookup no longer finds it and reads the fill value;
         * pread delivered the chunk's bytes there, with exit 0 */
        {"key_tail.h5", "its chunk index lists a chunk outside the dataset (at sample 250)"},
        /* chunks 3 and 4 swapped in the leaf: each listed once at its own address, but the
         * lookup's binary search misses one of them */
        {"swapped.h5", "its chunk index is inconsistent (HDF5's lookup finds 0 bytes for chunk"},
    };
    for (size_t i = 0; i < 2; i++) {
        h5fx_opts o = {.n = 1001, .layout = H5FX_CHUNKED, .chunk_rows = 50};
        const char *path = write_file(cases[i].name, &o);
        if (i == 0)
            cr_assert_eq(h5k_set_key_tail(path, "/features", 3, 5, 64), 0);
        else
            cr_assert_eq(h5k_swap_entries(path, "/features", 3, 3, 4), 0);
        uint8_t *fw = hdf5s_bytes(path, "/features"), *tw = hdf5s_bytes(path, "/targets");
        vram_h5_file *f = open_ok(path, "/features", "/targets");
        delivered_is(f, 0, fw, cases[i].name);
        delivered_is(f, 1, tw, cases[i].name);
        free(fw);
        free(tw);
        cr_assert_eq(f->ds[0].path, VRAM_H5_PATH_HDF5, "%s: %s", cases[i].name, vram_h5_path_name(f->ds[0].path));
        cr_assert(strstr(f->ds[0].reason, cases[i].reason) == f->ds[0].reason, "%s: %s", cases[i].name,
                  f->ds[0].reason);
        vram_h5_close(f);
    }
    /* untouched, the same file is chunked and read with pread */
    h5fx_opts o = {.n = 1001, .layout = H5FX_CHUNKED, .chunk_rows = 50};
    const char *path = write_file("intact.h5", &o);
    uint8_t *fw = hdf5s_bytes(path, "/features");
    vram_h5_file *f = open_ok(path, "/features", NULL);
    cr_assert_eq(f->ds[0].path, VRAM_H5_PATH_CHUNKED);
    delivered_is(f, 0, fw, "intact");
    free(fw);
    vram_h5_close(f);
}

Test(stream_h5, hdf5s_bytes_of_a_file_that_shrank_are_an_io_error) {
    /* HDF5 reads zeros past the end of a truncated file: --verify compared them with the
     * rows streamed before the cut and called the stream wrong */
    h5fx_opts o = {.n = 1000, .layout = H5FX_DEFLATE, .chunk_rows = 100};
    const char *path = write_file("shrinks.h5", &o);
    vram_h5_file *f = open_ok(path, "/features", "/targets");
    uint8_t *rows = (uint8_t *)malloc(10u * H5FX_FEATURE_BYTES);
    char err[VRAM_STREAM_ERR_MAX], want[512];
    cr_assert_eq(vram_h5_read_plain(f, 1, 990, 10, rows, err, sizeof err), VRAM_OK, "%s", err);
    cr_assert_eq(truncate(path, (off_t)(f->file_bytes / 2u)), 0);
    vram_status st = vram_h5_read_plain(f, 1, 990, 10, rows, err, sizeof err);
    cr_assert_eq(st, VRAM_E_IO, "%s: %s", vram_status_name(st), err);
    snprintf(want, sizeof want, "%s: the file was truncated under the reader: %llu bytes at open, %llu now",
             path, (unsigned long long)f->file_bytes, (unsigned long long)(f->file_bytes / 2u));
    cr_assert(strstr(err, want) == err, "%s", err);
    st = vram_h5_read_plain(f, 0, 0, 10, rows, err, sizeof err);
    cr_assert_eq(st, VRAM_E_IO, "%s: %s", vram_status_name(st), err);
    free(rows);
    vram_h5_close(f);
}

Test(stream_h5, a_fork_reads_through_a_child_of_its_own_and_leaves_its_parents) {
    h5fx_opts o = {.n = 300, .layout = H5FX_DEFLATE, .chunk_rows = 64};
    const char *path = write_file("fork.h5", &o);
    vram_h5_file *f = open_ok(path, "/features", NULL);
    cr_assert_eq(f->ds[0].path, VRAM_H5_PATH_HDF5);
    vram_source src = vram_h5_source(f);
    uint8_t row[H5FX_FEATURE_BYTES];
    char err[VRAM_STREAM_ERR_MAX];
    pid_t pid = fork();
    if (pid == 0) { /* reads, then closes its copy */
        int ok = src.read(src.ctx, 0, 7, 1, row, err, sizeof err) == VRAM_OK && sc_row_ok(row, 0, 7, sizeof row);
        vram_h5_close(f);
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the fork could not read");
    /* the parent's child was neither used nor ended by the fork */
    cr_assert_eq(src.read(src.ctx, 0, 299, 1, row, err, sizeof err), VRAM_OK, "%s", err);
    cr_assert(sc_row_ok(row, 0, 299, sizeof row));
    vram_h5_close(f);
    no_child_left();
}

Test(stream_h5, the_hdf5_child_is_found_or_named) {
    h5fx_opts o = {.n = 10};
    const char *path = write_file("child.h5", &o);
    const char *names[1] = {"/features"};
    vram_h5_file *f = NULL;
    char err[VRAM_STREAM_ERR_MAX];
    /* a program that is not vramkit ends without answering */
    setenv("VRAMKIT_EXE", "/bin/true", 1);
    cr_assert_eq(vram_h5_open(path, names, 1, &f, err, sizeof err), VRAM_E_IO);
    cr_assert(strstr(err, "the HDF5 child ('/bin/true __h5') ended (exit 0) while reading the file's metadata: "
                          "is it this vramkit's command, with its HDF5 program vramkit-h5 beside it? "
                          "(VRAMKIT_EXE names it)"), "%s", err);
    /* vramkit without vramkit-h5 beside it (HDF5 is linked into that program alone): the
       child says so and exits 3 */
    char lone[128], cmd[512];
    snprintf(lone, sizeof lone, "%s/lone", dir);
    snprintf(cmd, sizeof cmd, "mkdir -p %s && cp %s %s/vramkit", lone, VRAMKIT_EXE, lone);
    cr_assert_eq(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "%s/vramkit", lone);
    setenv("VRAMKIT_EXE", cmd, 1);
    cr_assert_eq(vram_h5_open(path, names, 1, &f, err, sizeof err), VRAM_E_IO);
    cr_assert(strstr(err, "ended (exit 3) while reading the file's metadata: is it this vramkit's command, with "
                          "its HDF5 program vramkit-h5 beside it?"), "%s", err);
    /* vramkit-h5 beside the vramkit named is started itself, not through `vramkit __h5` (one
       exec less an open): a stand-in vramkit that cannot run the child is never run */
    char pair[128], h5[PATH_MAX], line[2 * PATH_MAX];
    snprintf(pair, sizeof pair, "%s/pair", dir);
    snprintf(h5, sizeof h5, "%s", VRAMKIT_EXE);
    cr_assert_not_null(strrchr(h5, '/'));
    strcpy(strrchr(h5, '/') + 1, VRAM_H5_PROGRAM);
    snprintf(line, sizeof line, "mkdir -p %s && printf '#!/bin/sh\nexit 9\n' >%s/vramkit && chmod +x %s/vramkit && "
             "ln -s %s %s/" VRAM_H5_PROGRAM, pair, pair, pair, h5, pair);
    cr_assert_eq(system(line), 0);
    snprintf(cmd, sizeof cmd, "%s/vramkit", pair);
    setenv("VRAMKIT_EXE", cmd, 1);
    cr_assert_eq(vram_h5_open(path, names, 1, &f, err, sizeof err), VRAM_OK, "%s", err);
    vram_h5_close(f);
    f = NULL;
    setenv("VRAMKIT_EXE", "/nonexistent/vramkit", 1);
    cr_assert_eq(vram_h5_open(path, names, 1, &f, err, sizeof err), VRAM_E_IO);
    cr_assert(strstr(err, "cannot start the HDF5 child '/nonexistent/vramkit __h5': No such file or directory"),
              "%s", err);
    setenv("VRAMKIT_EXE", VRAMKIT_EXE, 1);
    setenv("VRAMKIT_H5_TIMEOUT", "0", 1);
    cr_assert_eq(vram_h5_open(path, names, 1, &f, err, sizeof err), VRAM_E_INVALID);
    cr_assert_str_eq(err, "VRAMKIT_H5_TIMEOUT: '0' is not a whole number of seconds from 1 to 86400");
    unsetenv("VRAMKIT_H5_TIMEOUT");
    cr_assert_null(f);
    no_child_left();
}

#endif /* VRAMKIT_HAVE_HDF5 */
