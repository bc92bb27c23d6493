/* bench_h5_open: what running HDF5 in a child costs when a file is opened (issue 29). For a
 * contiguous dataset and chunked ones of 1,000, 16,000 and 100,000 chunks of whole rows, the
 * median wall time of:
 *   child    vram_h5_open + vram_h5_close: `vramkit __h5` started, the file described (one
 *            walk of the chunk index and HDF5's lookup for every chunk), the description
 *            checked, the child let go;
 *   inline   the same HDF5 calls in this process, no child (H5Fopen, H5Dopen2, shape, type,
 *            H5Ddebug's walk, H5Dget_chunk_storage_size per chunk): what the child adds is
 *            child - inline;
 *   before   what the streamer asked HDF5 in this process before (H5Dget_chunk_info_by_coord
 *            for each chunk: a walk of the whole index per chunk), up to 16,000 chunks.
 * Usage: bench_h5_open [--dir DIR] [--runs N]  (defaults /tmp, 15 runs; files are kept). */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifdef VRAMKIT_HAVE_HDF5
#include <hdf5.h>

#include "hdf5/h5source.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* n rows of 64 float32; chunked in rows of `rows` (0: contiguous). */
static int write_file(const char *path, uint64_t n, uint64_t rows) {
    struct stat st;
    if (stat(path, &st) == 0) return 0;
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t d[2] = {n, 64}, c[2] = {rows, 64};
    hid_t sp = H5Screate_simple(2, d, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    if (rows) H5Pset_chunk(dcpl, 2, c);
    hid_t ds = H5Dcreate2(f, "/x", H5T_IEEE_F32LE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    float *v = (float *)calloc((size_t)(n * 64), sizeof(float));
    int rc = ds >= 0 && v && H5Dwrite(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0 ? 0 : -1;
    free(v);
    H5Dclose(ds);
    H5Pclose(dcpl);
    H5Sclose(sp);
    H5Fclose(f);
    return rc;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef int (*open_fn)(const char *path);

static int child_open(const char *path) {
    const char *names[1] = {"/x"};
    vram_h5_file *f = NULL;
    char err[512];
    if (vram_h5_open(path, names, 1, &f, err, sizeof err) != VRAM_OK) {
        fprintf(stderr, "bench_h5_open: %s\n", err);
        return -1;
    }
    vram_h5_close(f);
    return 0;
}

/* The child's questions, asked here. */
static int inline_open(const char *path) {
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT), d = H5Dopen2(f, "/x", H5P_DEFAULT);
    hid_t sp = H5Dget_space(d), t = H5Dget_type(d), m = H5Tget_native_type(t, H5T_DIR_ASCEND);
    hid_t dcpl = H5Dget_create_plist(d);
    hsize_t dims[2], cd[2];
    H5Sget_simple_extent_dims(sp, dims, NULL);
    int ok = H5Tequal(m, t) > 0;
    if (H5Pget_layout(dcpl) == H5D_CHUNKED && H5Pget_chunk(dcpl, 2, cd) == 2) {
        FILE *null = fopen("/dev/null", "w");
        int saved = dup(1);
        fflush(stdout);
        dup2(fileno(null), 1);
        ok = ok && H5Ddebug(d) >= 0;
        fflush(stdout);
        dup2(saved, 1);
        close(saved);
        fclose(null);
        for (hsize_t k = 0; k * cd[0] < dims[0]; k++) {
            hsize_t off[2] = {k * cd[0], 0}, size = 0;
            ok = ok && H5Dget_chunk_storage_size(d, off, &size) >= 0;
        }
    } else {
        ok = ok && H5Dget_offset(d) != HADDR_UNDEF;
    }
    H5Pclose(dcpl);
    H5Tclose(m);
    H5Tclose(t);
    H5Sclose(sp);
    H5Dclose(d);
    H5Fclose(f);
    return ok ? 0 : -1;
}

/* Before: each chunk's address by coordinate. */
static int before_open(const char *path) {
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT), d = H5Dopen2(f, "/x", H5P_DEFAULT);
    hid_t sp = H5Dget_space(d), dcpl = H5Dget_create_plist(d);
    hsize_t dims[2], cd[2];
    int ok = 1;
    H5Sget_simple_extent_dims(sp, dims, NULL);
    if (H5Pget_layout(dcpl) == H5D_CHUNKED && H5Pget_chunk(dcpl, 2, cd) == 2) {
        for (hsize_t k = 0; k * cd[0] < dims[0]; k++) {
            hsize_t off[2] = {k * cd[0], 0}, size = 0;
            unsigned mask = 0;
            haddr_t a = HADDR_UNDEF;
            ok = ok && H5Dget_chunk_info_by_coord(d, off, &mask, &a, &size) >= 0;
        }
    } else {
        ok = H5Dget_offset(d) != HADDR_UNDEF;
    }
    H5Pclose(dcpl);
    H5Sclose(sp);
    H5Dclose(d);
    H5Fclose(f);
    return ok ? 0 : -1;
}

static double median_s(open_fn fn, const char *path, int runs) {
    double *t = (double *)malloc((size_t)runs * sizeof(double)), m;
    for (int i = 0; i < runs; i++) {
        double t0 = now();
        if (fn(path) != 0) {
            free(t);
            return -1;
        }
        t[i] = now() - t0;
    }
    qsort(t, (size_t)runs, sizeof(double), cmp_d);
    m = t[runs / 2];
    free(t);
    return m;
}

int main(int argc, char **argv) {
    const char *dir = "/tmp";
    int runs = 15;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--dir") == 0) dir = argv[i + 1];
        else if (strcmp(argv[i], "--runs") == 0) runs = atoi(argv[i + 1]);
    }
    if (runs < 1) runs = 1;
    setenv("VRAMKIT_EXE", VRAMKIT_EXE, 0); /* this program is not vramkit: the child is */
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    static const struct { const char *name; uint64_t n, rows; } files[] = {
        {"contiguous", 100000, 0},
        {"1k-chunks", 100000, 100},
        {"16k-chunks", 160000, 10},
        {"100k-chunks", 1000000, 10},
    };
    printf("%-12s %10s %10s %10s %12s\n", "file", "child ms", "inline ms", "before ms", "child-inline");
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/vramkit-bench-h5open-%s.h5", dir, files[i].name);
        if (write_file(path, files[i].n, files[i].rows) != 0) {
            fprintf(stderr, "bench_h5_open: cannot write %s\n", path);
            return 1;
        }
        inline_open(path); /* page cache and the library warm for every column */
        double c = median_s(child_open, path, runs), in = median_s(inline_open, path, runs);
        double b = files[i].n / (files[i].rows ? files[i].rows : files[i].n) <= 16000 ? median_s(before_open, path, 3) : -1;
        if (c < 0 || in < 0) return 1;
        char bs[32] = "-";
        if (b >= 0) snprintf(bs, sizeof bs, "%.2f", b * 1e3);
        printf("%-12s %10.2f %10.2f %10s %9.2f ms\n", files[i].name, c * 1e3, in * 1e3, bs, (c - in) * 1e3);
        fflush(stdout);
    }
    return 0;
}

#else
int main(void) {
    fprintf(stderr, "bench_h5_open: built without HDF5\n");
    return 77;
}
#endif
