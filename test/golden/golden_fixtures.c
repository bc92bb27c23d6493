/* golden_fixtures.c — writes the HDF5 files the golden CLI cases read into DIR: the same
 * generator as the streamer's unit tests (h5_fixture.h), in each layout the CLI reports
 * differently, and broken ones (h5_corrupt.h): crash.h5 (HDF5 crashes walking /features'
 * chunk index), index.h5 (HDF5's lookup misses chunk 5 of /features that its index lists),
 * bomb.h5 (/targets' type claims 0xFF000004 bytes an element). Usage: golden_fixtures DIR. */
#include <stdio.h>

#include "../unit/h5_corrupt.h"
#include "../unit/h5_fixture.h"

static int write_one(const char *dir, const char *name, h5fx_opts o) {
    char path[4096];
    if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path) return -1;
    if (h5fx_write(path, &o) != 0) {
        fprintf(stderr, "golden_fixtures: cannot write %s\n", path);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: golden_fixtures DIR\n");
        return 2;
    }
    const char *d = argv[1];
    h5fx_opts contig = {.n = 1000, .layout = H5FX_CONTIGUOUS};
    h5fx_opts chunked = {.n = 777, .layout = H5FX_CHUNKED, .both = 1, .chunk_rows = 50};
    h5fx_opts deflate = {.n = 300, .layout = H5FX_DEFLATE, .chunk_rows = 64};
    h5fx_opts split = {.n = 200, .layout = H5FX_SPLIT, .chunk_rows = 32};
    h5fx_opts bigend = {.n = 128, .layout = H5FX_CONTIGUOUS, .big_endian = 1};
    h5fx_opts unwritten = {.n = 64, .layout = H5FX_CHUNKED, .unwritten = 1};
    h5fx_opts mismatch = {.n = 100, .layout = H5FX_CONTIGUOUS, .targets_n = 99};
    if (write_one(d, "contig.h5", contig) || write_one(d, "chunked.h5", chunked) ||
        write_one(d, "deflate.h5", deflate) || write_one(d, "split.h5", split) ||
        write_one(d, "bigend.h5", bigend) || write_one(d, "unwritten.h5", unwritten) ||
        write_one(d, "mismatch.h5", mismatch))
        return 1;
    h5fx_opts loop = {.n = 300, .layout = H5FX_CHUNKED, .chunk_rows = 2};
    h5fx_opts index = {.n = 400, .layout = H5FX_CHUNKED, .chunk_rows = 50};
    h5fx_opts bomb = {.n = 64};
    char p[4096];
    if (write_one(d, "crash.h5", loop) || write_one(d, "index.h5", index) || write_one(d, "bomb.h5", bomb))
        return 1;
    snprintf(p, sizeof p, "%s/crash.h5", d);
    if (h5k_btree_self_loop(p, "/features", 3) != 0) return 1;
    snprintf(p, sizeof p, "%s/index.h5", d);
    if (h5k_set_key_tail(p, "/features", 3, 5, 64) != 0) return 1;
    snprintf(p, sizeof p, "%s/bomb.h5", d);
    if (h5k_set_type_size(p, "/targets", 0xFF000004u) != 0) return 1;
    return 0;
}
