/* h5_corrupt.h — HDF5 files broken on purpose, in one place each, for the tests of what a
 * malformed file may cost (test_stream_h5.c, test_cli_stream.c, the golden fixtures): the
 * size of a dataset's type, or entries of its chunk B-tree. Written by h5_fixture.h first (old-format object headers and v1
 * B-trees, no user block), then patched in place. Include only with VRAMKIT_HAVE_HDF5. */
#ifndef VRAMKIT_TEST_H5_CORRUPT_H
#define VRAMKIT_TEST_H5_CORRUPT_H

#include <hdf5.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../fuzz/h5/h5_mutate.h" /* h5m_le, h5m_put_le */

typedef struct h5k_file {
    uint8_t *b;
    size_t n;
} h5k_file;

static inline int h5k_load(const char *path, h5k_file *f) {
    FILE *in = fopen(path, "rb");
    if (!in) return -1;
    fseek(in, 0, SEEK_END);
    long n = ftell(in);
    fseek(in, 0, SEEK_SET);
    f->b = (uint8_t *)malloc((size_t)n);
    f->n = (size_t)n;
    int rc = f->b && fread(f->b, (size_t)n, 1, in) == 1 ? 0 : -1;
    fclose(in);
    return rc;
}

static inline int h5k_save(const char *path, h5k_file *f) {
    FILE *out = fopen(path, "wb");
    if (!out) return -1;
    int rc = fwrite(f->b, f->n, 1, out) == 1 ? 0 : -1;
    if (fclose(out) != 0) rc = -1;
    free(f->b);
    f->b = NULL;
    return rc;
}

/* The file offset of the data of message `type` in dataset `name`'s (version 1) object
 * header, or 0 when not found. Type 3 is the datatype, 8 the layout. */
static inline uint64_t h5k_message(const char *path, const h5k_file *f, const char *name, unsigned type) {
    H5O_info_t oi;
    hid_t h = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (h < 0) return 0;
    herr_t rc = H5Oget_info_by_name2(h, name, &oi, H5O_INFO_BASIC, H5P_DEFAULT);
    H5Fclose(h);
    if (rc < 0 || oi.addr + 16 > f->n || f->b[oi.addr] != 1) return 0;
    uint64_t end = oi.addr + 16 + h5m_le(f->b + oi.addr + 8, 4), p = oi.addr + 16;
    while (p + 8 <= end && end <= f->n) {
        unsigned t = (unsigned)h5m_le(f->b + p, 2), size = (unsigned)h5m_le(f->b + p + 2, 2);
        if (t == type) return p + 8;
        p += 8u + size;
    }
    return 0;
}

/* Sets the size of dataset `name`'s type to `value`. 0 or -1. */
static inline int h5k_set_type_size(const char *path, const char *name, uint32_t value) {
    h5k_file f;
    if (h5k_load(path, &f) != 0) return -1;
    uint64_t m = h5k_message(path, &f, name, 3);
    if (m == 0) {
        free(f.b);
        return -1;
    }
    h5m_put_le(f.b + m + 4, 4, value); /* class and version, 3 bytes of bit fields, then the size */
    return h5k_save(path, &f);
}

/* The file offset of the v1 B-tree leaf whose first child is chunk 0 of dataset `name`, or
 * 0; f loaded. */
static inline uint64_t h5k_first_leaf(const char *path, const h5k_file *f, const char *name, int rank) {
    hid_t h = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (h < 0) return 0;
    hid_t d = H5Dopen2(h, name, H5P_DEFAULT);
    hsize_t off[32] = {0};
    unsigned mask = 0;
    haddr_t first = HADDR_UNDEF;
    hsize_t size = 0;
    herr_t rc = d >= 0 ? H5Dget_chunk_info_by_coord(d, off, &mask, &first, &size) : -1;
    if (d >= 0) H5Dclose(d);
    H5Fclose(h);
    if (rc < 0 || first == HADDR_UNDEF) return 0;
    uint64_t key = 8u + 8u * (uint64_t)(rank + 1);
    for (size_t p = 0; p + 24 + key + 8 <= f->n; p++) /* "TREE", type 1 (chunks), level 0 */
        if (memcmp(f->b + p, "TREE", 4) == 0 && f->b[p + 4] == 1 && f->b[p + 5] == 0 &&
            h5m_le(f->b + p + 24 + key, 8) == (uint64_t)first)
            return p;
    return 0;
}

/* In the v1 B-tree leaf that indexes chunk `k` of dataset `name` (rank `rank`), sets the
 * last coordinate of chunk k's key (the element offset, always 0) to `value`. HDF5's lookup,
 * which H5Dread uses, then no longer finds chunk k and reads the fill value there, while a
 * walk of the index still lists the chunk at its address. 0 or -1. */
static inline int h5k_set_key_tail(const char *path, const char *name, int rank, uint64_t k, uint64_t value) {
    h5k_file f;
    if (h5k_load(path, &f) != 0) return -1;
    uint64_t leaf = h5k_first_leaf(path, &f, name, rank), key = 8u + 8u * (uint64_t)(rank + 1);
    if (leaf == 0 || k >= h5m_le(f.b + leaf + 6, 2)) {
        free(f.b);
        return -1;
    }
    h5m_put_le(f.b + leaf + 24 + k * (key + 8u) + key - 8u, 8, value);
    return h5k_save(path, &f);
}

/* Swaps entries i and j (key and child) of the same leaf: a walk of the index still lists
 * every chunk once at its address, but HDF5's lookup (a binary search that trusts the keys'
 * order) misses some, and H5Dread reads the fill value for them. 0 or -1. */
static inline int h5k_swap_entries(const char *path, const char *name, int rank, uint64_t i, uint64_t j) {
    h5k_file f;
    if (h5k_load(path, &f) != 0) return -1;
    uint64_t leaf = h5k_first_leaf(path, &f, name, rank), key = 8u + 8u * (uint64_t)(rank + 1), e = key + 8u;
    if (leaf == 0 || i >= h5m_le(f.b + leaf + 6, 2) || j >= h5m_le(f.b + leaf + 6, 2)) {
        free(f.b);
        return -1;
    }
    uint8_t tmp[8 + 8 * 33 + 8];
    memcpy(tmp, f.b + leaf + 24 + i * e, (size_t)e);
    memcpy(f.b + leaf + 24 + i * e, f.b + leaf + 24 + j * e, (size_t)e);
    memcpy(f.b + leaf + 24 + j * e, tmp, (size_t)e);
    return h5k_save(path, &f);
}

/* Points the first child of dataset `name`'s chunk B-tree root (rank `rank`, a root above
 * its leaves: more than 64 chunks) at the root itself: every walk of the index recurses
 * until the stack is gone (SIGSEGV in HDF5 1.10). 0 or -1. */
static inline int h5k_btree_self_loop(const char *path, const char *name, int rank) {
    h5k_file f;
    if (h5k_load(path, &f) != 0) return -1;
    uint64_t m = h5k_message(path, &f, name, 8);
    if (m == 0 || f.b[m] != 3 || f.b[m + 1] != 2) {
        free(f.b);
        return -1;
    }
    uint64_t root = h5m_le(f.b + m + 3, 8), key = 8u + 8u * (uint64_t)(rank + 1);
    if (root + 24 + key + 8 > f.n || memcmp(f.b + root, "TREE", 4) != 0 || f.b[root + 5] == 0) {
        free(f.b);
        return -1;
    }
    h5m_put_le(f.b + root + 24 + key, 8, root);
    return h5k_save(path, &f);
}

#endif /* VRAMKIT_TEST_H5_CORRUPT_H */
