/* h5_bases.h — the valid HDF5 files the corruption run starts from, written with the HDF5 C
 * API: every layout and chunk index the library writes (contiguous, compact, chunked with a
 * v1 B-tree, and in the newer format a fixed array, an extensible array, a v2 B-tree, a single
 * chunk, the implicit index), filters (deflate, shuffle, fletcher32, scale-offset), odd types
 * (compound, big-endian, array, opaque, strings, enum), a user block, huge unwritten
 * dimensions, partly written data with a fill value, soft and external links, external
 * storage, a virtual dataset, dense attributes and deep groups. Each names its two datasets
 * and where HDF5 put their object headers and raw chunks, for h5_mutate.h. */
#ifndef VRAMKIT_FUZZ_H5_BASES_H
#define VRAMKIT_FUZZ_H5_BASES_H

#include <hdf5.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define H5B_MAX_ADDR 4096

typedef struct h5b_info {
    const char *name;
    const char *x, *y;       /* the datasets to stream (y may be NULL) */
    uint64_t ohdr[16];       /* object header addresses (relative to the superblock) */
    int nohdr;
    uint64_t chunk[H5B_MAX_ADDR], chunk_len[H5B_MAX_ADDR]; /* raw data, file offsets */
    int nchunk;
} h5b_info;

/* Side files some bases refer to, written once into the work directory beside the bases
 * (the mutated files are written there too, so relative references resolve). */
#define H5B_EXT_TARGET "ext_target.h5"
#define H5B_EXT_RAW "ext_raw.bin"
#define H5B_VDS_SOURCE "vds_source.h5"

static inline void h5b_fill(void *buf, size_t n, unsigned seed) {
    uint8_t *p = (uint8_t *)buf;
    uint32_t x = 2463534242u ^ seed;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        p[i] = (uint8_t)x;
    }
}

/* A finite float pattern (so conversions and scale-offset keep every value). */
static inline void h5b_floats(float *v, size_t n, unsigned seed) {
    for (size_t i = 0; i < n; i++) v[i] = (float)((i * 37u + seed) % 1000u) * 0.25f - 50.0f;
}

static inline hid_t h5b_fapl(int latest) {
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (latest) H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST);
    return fapl;
}

/* Dataset `name` of ftype over space with dcpl, data written from mtype (none when NULL).
 * 0 or -1. */
static inline int h5b_dataset(hid_t loc, const char *name, hid_t ftype, hid_t mtype, hid_t space, hid_t dcpl,
                              const void *data) {
    hid_t d = H5Dcreate2(loc, name, ftype, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    int rc = d >= 0 && (data == NULL || H5Dwrite(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0) ? 0 : -1;
    if (d >= 0) H5Dclose(d);
    return rc;
}

/* Writes rank-2 float32 x (n x w) and int64 y (n) with the given creation lists, and closes
 * them (H5P_DEFAULT stays). */
static inline int h5b_xy(hid_t f, uint64_t n, unsigned w, hid_t xdcpl, hid_t ydcpl, const hsize_t *xmax,
                         const hsize_t *ymax, hid_t xtype) {
    hsize_t xd[2] = {n, w}, yd[1] = {n};
    hid_t xs = H5Screate_simple(2, xd, xmax), ys = H5Screate_simple(1, yd, ymax);
    float *xv = (float *)malloc((size_t)(n * w) * sizeof(float));
    int64_t *yv = (int64_t *)malloc((size_t)n * sizeof(int64_t));
    int rc = -1;
    if (xv && yv) {
        h5b_floats(xv, (size_t)(n * w), 1);
        for (uint64_t i = 0; i < n; i++) yv[i] = (int64_t)(i * 1000003u) - 7;
        rc = h5b_dataset(f, "x", xtype, H5T_NATIVE_FLOAT, xs, xdcpl, xv) |
             h5b_dataset(f, "y", H5T_STD_I64LE, H5T_NATIVE_INT64, ys, ydcpl, yv);
    }
    free(xv);
    free(yv);
    H5Sclose(xs);
    H5Sclose(ys);
    if (xdcpl != H5P_DEFAULT) H5Pclose(xdcpl);
    if (ydcpl != H5P_DEFAULT) H5Pclose(ydcpl);
    return rc;
}

/* int64 y (n) beside an x written otherwise. */
static inline int h5b_y(hid_t f, uint64_t n) {
    hsize_t yd[1] = {n};
    int64_t *y = (int64_t *)malloc((size_t)n * sizeof(int64_t));
    hid_t ys = H5Screate_simple(1, yd, NULL);
    for (uint64_t i = 0; y && i < n; i++) y[i] = (int64_t)(i * i) - 5;
    int rc = y ? h5b_dataset(f, "y", H5T_STD_I64LE, H5T_NATIVE_INT64, ys, H5P_DEFAULT, y) : -1;
    H5Sclose(ys);
    free(y);
    return rc;
}

static inline hid_t h5b_chunked(int rank, const hsize_t *cd) {
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, rank, cd);
    return dcpl;
}

/* Where HDF5 put the named object's header and (a dataset) its raw data. */
static inline void h5b_locate(hid_t f, const char *name, h5b_info *info) {
    H5O_info_t oi;
    if (H5Oget_info_by_name2(f, name, &oi, H5O_INFO_BASIC, H5P_DEFAULT) < 0) return;
    if (info->nohdr < 16) info->ohdr[info->nohdr++] = (uint64_t)oi.addr;
    if (oi.type != H5O_TYPE_DATASET) return;
    hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
    if (d < 0) return;
    hid_t dcpl = H5Dget_create_plist(d);
    H5D_layout_t lay = H5Pget_layout(dcpl);
    if (lay == H5D_CONTIGUOUS) {
        haddr_t a = H5Dget_offset(d);
        if (a != HADDR_UNDEF && info->nchunk < H5B_MAX_ADDR) {
            info->chunk[info->nchunk] = (uint64_t)a;
            info->chunk_len[info->nchunk++] = (uint64_t)H5Dget_storage_size(d);
        }
    } else if (lay == H5D_CHUNKED) {
        hid_t sp = H5Dget_space(d);
        hsize_t n = 0;
        if (H5Dget_num_chunks(d, sp, &n) >= 0) {
            for (hsize_t i = 0; i < n && info->nchunk < H5B_MAX_ADDR; i++) {
                hsize_t off[32];
                unsigned mask;
                haddr_t a;
                hsize_t size;
                if (H5Dget_chunk_info(d, sp, i, off, &mask, &a, &size) >= 0 && a != HADDR_UNDEF) {
                    info->chunk[info->nchunk] = (uint64_t)a;
                    info->chunk_len[info->nchunk++] = (uint64_t)size;
                }
            }
        }
        H5Sclose(sp);
    }
    H5Pclose(dcpl);
    H5Dclose(d);
}

/* ---- the bases ---------------------------------------------------------------------------- */

typedef int (*h5b_writer)(hid_t f, int variant);

static int h5b_w_contig(hid_t f, int variant) {
    (void)variant;
    return h5b_xy(f, 100, 6, H5P_DEFAULT, H5P_DEFAULT, NULL, NULL, H5T_IEEE_F32LE);
}

static int h5b_w_chunked(hid_t f, int variant) { /* 150 chunks: a two-level v1 B-tree */
    hsize_t cx[2] = {4, 6}, cy[1] = {16};
    (void)variant;
    return h5b_xy(f, 600, 6, h5b_chunked(2, cx), h5b_chunked(1, cy), NULL, NULL, H5T_IEEE_F32LE);
}

/* The chunk indexes of the newer format: 0 a fixed array, 1 an extensible array, 2 a v2
 * B-tree, 3 a single chunk, 4 the implicit index. */
static int h5b_w_latest_index(hid_t f, int which) {
    hsize_t cx[2] = {8, 6}, cy[1] = {32}, unl2[2] = {H5S_UNLIMITED, 6}, unlb[2] = {H5S_UNLIMITED, H5S_UNLIMITED},
            unl1[1] = {H5S_UNLIMITED};
    hid_t a = h5b_chunked(2, cx), b = h5b_chunked(1, cy);
    const hsize_t *xm = NULL, *ym = NULL;
    if (which == 1) { xm = unl2; ym = unl1; }            /* extensible array */
    if (which == 2) { xm = unlb; ym = unl1; }            /* v2 B-tree for x */
    if (which == 3) {                                    /* single chunk */
        hsize_t all[2] = {200, 6}, ally[1] = {200};
        H5Pset_chunk(a, 2, all);
        H5Pset_chunk(b, 1, ally);
    }
    if (which == 4) {                                    /* implicit: allocated early */
        H5Pset_alloc_time(a, H5D_ALLOC_TIME_EARLY);
        H5Pset_alloc_time(b, H5D_ALLOC_TIME_EARLY);
    }
    return h5b_xy(f, 200, 6, a, b, xm, ym, H5T_IEEE_F32LE);
}

/* 0 shuffle + deflate, 1 fletcher32, 2 n-bit and scale-offset. */
static int h5b_w_filters(hid_t f, int which) {
    hsize_t cx[2] = {16, 6}, cy[1] = {32};
    hid_t a = h5b_chunked(2, cx), b = h5b_chunked(1, cy);
    if (which == 0) {
        H5Pset_shuffle(a);
        H5Pset_deflate(a, 6);
        H5Pset_deflate(b, 1);
    } else if (which == 1) {
        H5Pset_fletcher32(a);
        H5Pset_fletcher32(b);
    } else {
        H5Pset_scaleoffset(b, H5Z_SO_INT, H5Z_SO_INT_MINBITS_DEFAULT);
        H5Pset_nbit(a);
    }
    return h5b_xy(f, 300, 6, a, b, NULL, NULL, H5T_IEEE_F32LE);
}

static int h5b_w_types(hid_t f, int variant) { /* x: compound; y: big-endian double */
    typedef struct { int32_t a; double b; char s[5]; } rec;
    enum { N = 120 };
    rec v[N];
    double y[N];
    hsize_t d[1] = {N};
    (void)variant;
    memset(v, 0, sizeof v);
    for (int i = 0; i < N; i++) {
        v[i].a = i * 3;
        v[i].b = i * 0.5;
        snprintf(v[i].s, sizeof v[i].s, "%d", i);
        y[i] = i * 0.125;
    }
    hid_t st = H5Tcopy(H5T_C_S1);
    H5Tset_size(st, 5);
    hid_t ct = H5Tcreate(H5T_COMPOUND, sizeof(rec));
    H5Tinsert(ct, "a", HOFFSET(rec, a), H5T_NATIVE_INT32);
    H5Tinsert(ct, "b", HOFFSET(rec, b), H5T_NATIVE_DOUBLE);
    H5Tinsert(ct, "s", HOFFSET(rec, s), st);
    hid_t sp = H5Screate_simple(1, d, NULL);
    int rc = h5b_dataset(f, "x", ct, ct, sp, H5P_DEFAULT, v) | h5b_dataset(f, "y", H5T_IEEE_F64BE, H5T_NATIVE_DOUBLE, sp,
                                                                         H5P_DEFAULT, y);
    H5Sclose(sp);
    H5Tclose(ct);
    H5Tclose(st);
    return rc;
}

static int h5b_w_types2(hid_t f, int variant) { /* x: array of 3 uint16 (chunked); y: opaque 6 */
    enum { N = 90 };
    uint16_t v[N][3];
    uint8_t o[N][6];
    hsize_t d[1] = {N}, ad[1] = {3}, cd[1] = {10};
    (void)variant;
    h5b_fill(v, sizeof v, 3);
    h5b_fill(o, sizeof o, 4);
    hid_t at = H5Tarray_create2(H5T_STD_U16LE, 1, ad);
    hid_t ot = H5Tcreate(H5T_OPAQUE, 6);
    H5Tset_tag(ot, "six bytes");
    hid_t sp = H5Screate_simple(1, d, NULL), dcpl = h5b_chunked(1, cd);
    int rc = h5b_dataset(f, "x", at, at, sp, dcpl, v) | h5b_dataset(f, "y", ot, ot, sp, H5P_DEFAULT, o);
    H5Pclose(dcpl);
    H5Sclose(sp);
    H5Tclose(at);
    H5Tclose(ot);
    return rc;
}

static int h5b_w_compact(hid_t f, int variant) {
    hid_t a = H5Pcreate(H5P_DATASET_CREATE), b = H5Pcreate(H5P_DATASET_CREATE);
    (void)variant;
    H5Pset_layout(a, H5D_COMPACT);
    H5Pset_layout(b, H5D_COMPACT);
    return h5b_xy(f, 40, 6, a, b, NULL, NULL, H5T_IEEE_F32LE);
}

static int h5b_w_huge(hid_t f, int variant) { /* 2^40 samples, never written */
    hsize_t dx[2] = {UINT64_C(1) << 40, 4}, mx[2] = {H5S_UNLIMITED, 4}, cx[2] = {1024, 4};
    hsize_t dy[1] = {UINT64_C(1) << 40}, my[1] = {H5S_UNLIMITED}, cy[1] = {4096};
    (void)variant;
    hid_t a = h5b_chunked(2, cx), b = h5b_chunked(1, cy);
    hid_t sx = H5Screate_simple(2, dx, mx), sy = H5Screate_simple(1, dy, my);
    int rc = h5b_dataset(f, "x", H5T_IEEE_F32LE, -1, sx, a, NULL) | h5b_dataset(f, "y", H5T_STD_I32LE, -1, sy, b, NULL);
    H5Sclose(sx);
    H5Sclose(sy);
    H5Pclose(a);
    H5Pclose(b);
    return rc;
}

static int h5b_w_partial(hid_t f, int variant) { /* chunked, a fill value, half written */
    hsize_t d[2] = {200, 6}, cd[2] = {25, 6}, start[2] = {0, 0}, cnt[2] = {100, 6};
    float fill = 9.5f, v[100 * 6];
    (void)variant;
    hid_t dcpl = h5b_chunked(2, cd);
    H5Pset_fill_value(dcpl, H5T_NATIVE_FLOAT, &fill);
    hid_t sp = H5Screate_simple(2, d, NULL), ms = H5Screate_simple(2, cnt, NULL);
    hid_t x = H5Dcreate2(f, "x", H5T_IEEE_F32LE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    h5b_floats(v, 600, 5);
    H5Sselect_hyperslab(sp, H5S_SELECT_SET, start, NULL, cnt, NULL);
    int rc = x >= 0 && H5Dwrite(x, H5T_NATIVE_FLOAT, ms, sp, H5P_DEFAULT, v) >= 0 ? 0 : -1;
    H5Dclose(x);
    H5Sclose(ms);
    H5Sclose(sp);
    H5Pclose(dcpl);
    return rc | h5b_y(f, 200);
}

static int h5b_w_links(hid_t f, int variant) { /* x: a soft link into a group; y external */
    (void)variant;
    hid_t g = H5Gcreate2(f, "g", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    int rc = h5b_xy(g, 80, 6, H5P_DEFAULT, H5P_DEFAULT, NULL, NULL, H5T_IEEE_F32LE);
    H5Gclose(g);
    if (H5Lcreate_soft("/g/x", f, "x", H5P_DEFAULT, H5P_DEFAULT) < 0) rc = -1;
    if (H5Lcreate_external(H5B_EXT_TARGET, "/y", f, "y", H5P_DEFAULT, H5P_DEFAULT) < 0) rc = -1;
    if (H5Lcreate_soft("/loop", f, "loop", H5P_DEFAULT, H5P_DEFAULT) < 0) rc = -1;
    return rc;
}

static int h5b_w_external(hid_t f, int variant) { /* x's raw data in a side file */
    hsize_t d[2] = {64, 6};
    float v[64 * 6];
    (void)variant;
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_external(dcpl, H5B_EXT_RAW, 0, sizeof v);
    hid_t sp = H5Screate_simple(2, d, NULL);
    h5b_floats(v, 64 * 6, 7);
    int rc = h5b_dataset(f, "x", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, sp, dcpl, v) | h5b_y(f, 64);
    H5Sclose(sp);
    H5Pclose(dcpl);
    return rc;
}

static int h5b_w_virtual(hid_t f, int variant) { /* x: a virtual dataset over a side file */
    hsize_t d[2] = {50, 6};
    (void)variant;
    hid_t vsp = H5Screate_simple(2, d, NULL), ssp = H5Screate_simple(2, d, NULL);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_virtual(dcpl, vsp, H5B_VDS_SOURCE, "/x", ssp);
    int rc = h5b_dataset(f, "x", H5T_IEEE_F32LE, -1, vsp, dcpl, NULL) | h5b_y(f, 50);
    H5Pclose(dcpl);
    H5Sclose(vsp);
    H5Sclose(ssp);
    return rc;
}

static int h5b_w_dense(hid_t f, int variant) { /* many attributes and links: heaps, v2 B-trees */
    hsize_t cx[2] = {10, 6}, cy[1] = {20};
    hid_t a = h5b_chunked(2, cx), b = h5b_chunked(1, cy);
    (void)variant;
    hid_t g = H5Gcreate2(f, "deep", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hid_t g2 = H5Gcreate2(g, "er", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    int rc = h5b_xy(g2, 100, 6, a, b, NULL, NULL, H5T_IEEE_F32LE); /* closes a and b */
    hid_t x = H5Dopen2(g2, "x", H5P_DEFAULT);
    hid_t as = H5Screate(H5S_SCALAR);
    for (int i = 0; i < 30 && x >= 0; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "attr%02d", i);
        hid_t at = H5Acreate2(x, nm, H5T_STD_I32LE, as, H5P_DEFAULT, H5P_DEFAULT);
        if (at >= 0) {
            H5Awrite(at, H5T_NATIVE_INT, &i);
            H5Aclose(at);
        }
    }
    for (int i = 0; i < 40; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "g%02d", i);
        hid_t gg = H5Gcreate2(g, nm, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        if (gg >= 0) H5Gclose(gg);
    }
    H5Sclose(as);
    if (x >= 0) H5Dclose(x);
    H5Gclose(g2);
    H5Gclose(g);
    return rc;
}

typedef struct h5b_base {
    const char *name;
    h5b_writer write;
    int variant;        /* the writer's */
    int latest;         /* the newest file format (checksummed structures) */
    uint64_t userblock; /* 0 or the user block's size */
    const char *x, *y;
} h5b_base;

static const h5b_base h5b_bases[] = {
    {"contig", h5b_w_contig, 0, 0, 0, "/x", "/y"},
    {"chunked", h5b_w_chunked, 0, 0, 0, "/x", "/y"},
    {"chunked_latest", h5b_w_chunked, 0, 1, 0, "/x", "/y"},
    {"fixed_array", h5b_w_latest_index, 0, 1, 0, "/x", "/y"},
    {"ext_array", h5b_w_latest_index, 1, 1, 0, "/x", "/y"},
    {"btree2", h5b_w_latest_index, 2, 1, 0, "/x", "/y"},
    {"single_chunk", h5b_w_latest_index, 3, 1, 0, "/x", "/y"},
    {"implicit", h5b_w_latest_index, 4, 1, 0, "/x", "/y"},
    {"deflate", h5b_w_filters, 0, 0, 0, "/x", "/y"},
    {"fletcher32", h5b_w_filters, 1, 0, 0, "/x", "/y"},
    {"scaleoffset", h5b_w_filters, 2, 0, 0, "/x", "/y"},
    {"types", h5b_w_types, 0, 0, 0, "/x", "/y"},
    {"types2", h5b_w_types2, 0, 1, 0, "/x", "/y"},
    {"compact", h5b_w_compact, 0, 0, 0, "/x", "/y"},
    {"userblock", h5b_w_chunked, 0, 0, 1024, "/x", "/y"},
    {"huge", h5b_w_huge, 0, 0, 0, "/x", "/y"},
    {"partial", h5b_w_partial, 0, 0, 0, "/x", "/y"},
    {"links", h5b_w_links, 0, 0, 0, "/x", "/y"},
    {"external", h5b_w_external, 0, 0, 0, "/x", "/y"},
    {"virtual", h5b_w_virtual, 0, 1, 0, "/x", "/y"},
    {"dense", h5b_w_dense, 0, 1, 0, "/deep/er/x", "/deep/er/y"},
};
#define H5B_COUNT (sizeof h5b_bases / sizeof h5b_bases[0])

/* The side files, into dir. Returns 0 or -1. */
static inline int h5b_side_files(const char *dir) {
    char p[4096];
    int rc = 0;
    if ((size_t)snprintf(p, sizeof p, "%s/%s", dir, H5B_EXT_TARGET) >= sizeof p) return -1;
    hid_t f = H5Fcreate(p, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (f < 0 || h5b_xy(f, 80, 6, H5P_DEFAULT, H5P_DEFAULT, NULL, NULL, H5T_IEEE_F32LE) != 0) rc = -1;
    if (f >= 0) H5Fclose(f);
    if ((size_t)snprintf(p, sizeof p, "%s/%s", dir, H5B_VDS_SOURCE) >= sizeof p) return -1;
    f = H5Fcreate(p, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (f < 0 || h5b_xy(f, 50, 6, H5P_DEFAULT, H5P_DEFAULT, NULL, NULL, H5T_IEEE_F32LE) != 0) rc = -1;
    if (f >= 0) H5Fclose(f);
    if ((size_t)snprintf(p, sizeof p, "%s/%s", dir, H5B_EXT_RAW) >= sizeof p) return -1;
    FILE *raw = fopen(p, "wb");
    if (raw) {
        float v[64 * 6];
        h5b_floats(v, 64 * 6, 7);
        if (fwrite(v, sizeof v, 1, raw) != 1) rc = -1;
        fclose(raw);
    } else {
        rc = -1;
    }
    return rc;
}

/* Writes base b as dir/base_NAME.h5 and fills info. Returns 0 or -1. */
static inline int h5b_write(const char *dir, const h5b_base *b, h5b_info *info, char *path, size_t cap) {
    memset(info, 0, sizeof *info);
    info->name = b->name;
    info->x = b->x;
    info->y = b->y;
    snprintf(path, cap, "%s/base_%s.h5", dir, b->name);
    hid_t fapl = h5b_fapl(b->latest), fcpl = H5Pcreate(H5P_FILE_CREATE);
    if (b->userblock) H5Pset_userblock(fcpl, b->userblock);
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, fcpl, fapl);
    H5Pclose(fcpl);
    H5Pclose(fapl);
    if (f < 0) return -1;
    int rc = b->write(f, b->variant);
    H5Fclose(f);
    if (rc != 0) return -1;
    f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) return -1;
    h5b_locate(f, "/", info);
    h5b_locate(f, b->x, info);
    if (b->y) h5b_locate(f, b->y, info);
    if (strchr(b->x + 1, '/')) { /* the groups on the way */
        char g[256];
        snprintf(g, sizeof g, "%s", b->x);
        for (char *s = strrchr(g, '/'); s && s != g; s = strrchr(g, '/')) {
            *s = '\0';
            h5b_locate(f, g, info);
        }
    }
    H5Fclose(f);
    /* (with a user block, HDF5 1.10 reports chunk addresses without it: those regions are
     * then off by its size, which only moves where a mutation lands) */
    return 0;
}

#endif /* VRAMKIT_FUZZ_H5_BASES_H */
