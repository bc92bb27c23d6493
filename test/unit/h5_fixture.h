/* h5_fixture.h — HDF5 files for the streamer's tests, written with the HDF5 C API: /features
 * (n x 36 x 7 float32) and /targets (n x 3 int64) in a chosen layout, with bytes from
 * stream_check.h's pattern, plus the datasets the error cases need. Include only when
 * VRAMKIT_HAVE_HDF5 is defined. */
#ifndef VRAMKIT_TEST_H5_FIXTURE_H
#define VRAMKIT_TEST_H5_FIXTURE_H

#include <hdf5.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stream_check.h"

#define H5FX_FEATURE_BYTES (36u * 7u * 4u)
#define H5FX_TARGET_BYTES (3u * 8u)

enum {
    H5FX_CONTIGUOUS = 0,
    H5FX_CHUNKED = 1,     /* chunks of chunk_rows whole samples */
    H5FX_DEFLATE = 2,     /* chunked + deflate level 4 */
    H5FX_SPLIT = 3,       /* chunks of chunk_rows x 18 x 7: a sample spans two chunks */
    H5FX_COMPACT = 4      /* compact layout (small n only) */
};

typedef struct h5fx_opts {
    uint64_t n;           /* samples */
    int layout;           /* H5FX_* for /features; /targets is contiguous unless `both` */
    int both;             /* /targets gets the same layout */
    uint64_t chunk_rows;  /* 0: 64 */
    int big_endian;       /* /features stored as big-endian float32 */
    uint64_t userblock;   /* 0 or a power of two >= 512 */
    int unwritten;        /* /features created but not written (fill value) */
    uint64_t targets_n;   /* 0: n */
} h5fx_opts;

static inline hid_t h5fx_dcpl(const h5fx_opts *o, int rank, const hsize_t *dims) {
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    hsize_t cd[3];
    uint64_t cr = o->chunk_rows ? o->chunk_rows : 64u;
    if (o->layout == H5FX_CONTIGUOUS) return dcpl;
    if (o->layout == H5FX_COMPACT) {
        H5Pset_layout(dcpl, H5D_COMPACT);
        return dcpl;
    }
    cd[0] = (hsize_t)cr;
    for (int i = 1; i < rank; i++) cd[i] = dims[i];
    if (o->layout == H5FX_SPLIT && rank > 1) cd[1] = dims[1] / 2u;
    H5Pset_chunk(dcpl, rank, cd);
    if (o->layout == H5FX_DEFLATE) H5Pset_deflate(dcpl, 4);
    return dcpl;
}

/* Writes the file; returns 0 or -1. Extra objects, for the error cases: /group (a group),
 * /scalar (a scalar float), /empty (0 x 4 float32), /names (n variable-length strings),
 * /records (n compounds with a variable-length string member), /fixed (n compounds
 * {int32 a; double b}), /other (n + 1 float32). */
static inline int h5fx_write(const char *path, const h5fx_opts *o) {
    uint64_t n = o->n, tn = o->targets_n ? o->targets_n : n;
    int rc = -1;
    hid_t fcpl = H5Pcreate(H5P_FILE_CREATE), f = -1;
    if (o->userblock) H5Pset_userblock(fcpl, (hsize_t)o->userblock);
    f = H5Fcreate(path, H5F_ACC_TRUNC, fcpl, H5P_DEFAULT);
    H5Pclose(fcpl);
    if (f < 0) return -1;
    uint8_t *fb = (uint8_t *)malloc((size_t)(n * H5FX_FEATURE_BYTES + 1));
    uint8_t *tb = (uint8_t *)malloc((size_t)(tn * H5FX_TARGET_BYTES + 1));
    if (!fb || !tb) goto out;
    sc_fill(fb, 0, n, H5FX_FEATURE_BYTES);
    sc_fill(tb, 1, tn, H5FX_TARGET_BYTES);
    {
        hsize_t dims[3] = {(hsize_t)n, 36, 7};
        hid_t sp = H5Screate_simple(3, dims, NULL);
        hid_t dcpl = h5fx_dcpl(o, 3, dims);
        hid_t ft = o->big_endian ? H5T_IEEE_F32BE : H5T_IEEE_F32LE;
        hid_t ds = H5Dcreate2(f, "/features", ft, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
        if (ds < 0) goto out;
        if (!o->unwritten && H5Dwrite(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, fb) < 0) goto out;
        H5Dclose(ds);
        H5Pclose(dcpl);
        H5Sclose(sp);
    }
    {
        hsize_t dims[2] = {(hsize_t)tn, 3};
        h5fx_opts to = *o;
        if (!o->both) to.layout = H5FX_CONTIGUOUS;
        if (to.layout == H5FX_SPLIT) to.layout = H5FX_CHUNKED;
        hid_t sp = H5Screate_simple(2, dims, NULL);
        hid_t dcpl = h5fx_dcpl(&to, 2, dims);
        hid_t ds = H5Dcreate2(f, "/targets", H5T_STD_I64LE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
        if (ds < 0 || H5Dwrite(ds, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, tb) < 0) goto out;
        H5Dclose(ds);
        H5Pclose(dcpl);
        H5Sclose(sp);
    }
    {
        hid_t g = H5Gcreate2(f, "/group", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        H5Gclose(g);
        float one = 1.0f;
        hid_t sc = H5Screate(H5S_SCALAR);
        hid_t ds = H5Dcreate2(f, "/scalar", H5T_IEEE_F32LE, sc, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        H5Dwrite(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, &one);
        H5Dclose(ds);
        H5Sclose(sc);
        hsize_t ed[2] = {0, 4};
        hid_t es = H5Screate_simple(2, ed, NULL);
        ds = H5Dcreate2(f, "/empty", H5T_IEEE_F32LE, es, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        H5Dclose(ds);
        H5Sclose(es);
        hsize_t od[1] = {(hsize_t)(n + 1)};
        hid_t os = H5Screate_simple(1, od, NULL);
        ds = H5Dcreate2(f, "/other", H5T_IEEE_F32LE, os, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        H5Dclose(ds);
        H5Sclose(os);
    }
    {
        hsize_t d1[1] = {(hsize_t)n};
        hid_t sp = H5Screate_simple(1, d1, NULL);
        hid_t vs = H5Tcopy(H5T_C_S1);
        H5Tset_size(vs, H5T_VARIABLE);
        const char **names = (const char **)malloc((size_t)n * sizeof(char *));
        for (uint64_t i = 0; i < n; i++) names[i] = (i % 2) ? "odd" : "even";
        hid_t ds = H5Dcreate2(f, "/names", vs, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        H5Dwrite(ds, vs, H5S_ALL, H5S_ALL, H5P_DEFAULT, names);
        H5Dclose(ds);
        typedef struct {
            int32_t id;
            const char *label;
        } rec;
        rec *recs = (rec *)malloc((size_t)n * sizeof(rec));
        for (uint64_t i = 0; i < n; i++) {
            recs[i].id = (int32_t)i;
            recs[i].label = names[i];
        }
        hid_t ct = H5Tcreate(H5T_COMPOUND, sizeof(rec));
        H5Tinsert(ct, "id", HOFFSET(rec, id), H5T_NATIVE_INT32);
        H5Tinsert(ct, "label", HOFFSET(rec, label), vs);
        ds = H5Dcreate2(f, "/records", ct, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        H5Dwrite(ds, ct, H5S_ALL, H5S_ALL, H5P_DEFAULT, recs);
        H5Dclose(ds);
        H5Tclose(ct);
        typedef struct {
            int32_t a;
            double b;
        } fixed;
        fixed *fx = (fixed *)calloc((size_t)n, sizeof(fixed));
        for (uint64_t i = 0; i < n; i++) {
            fx[i].a = (int32_t)(i * 3u);
            fx[i].b = (double)i * 0.5;
        }
        hid_t ft = H5Tcreate(H5T_COMPOUND, sizeof(fixed));
        H5Tinsert(ft, "a", HOFFSET(fixed, a), H5T_NATIVE_INT32);
        H5Tinsert(ft, "b", HOFFSET(fixed, b), H5T_NATIVE_DOUBLE);
        ds = H5Dcreate2(f, "/fixed", ft, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        H5Dwrite(ds, ft, H5S_ALL, H5S_ALL, H5P_DEFAULT, fx);
        H5Dclose(ds);
        H5Tclose(ft);
        H5Tclose(vs);
        H5Sclose(sp);
        free(names);
        free(recs);
        free(fx);
    }
    rc = 0;
out:
    free(fb);
    free(tb);
    if (H5Fclose(f) < 0) rc = -1;
    return rc;
}

#endif /* VRAMKIT_TEST_H5_FIXTURE_H */
