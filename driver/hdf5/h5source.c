/* driver/hdf5/h5source.c — HDF5 datasets as a vram_source (h5source.h).
 * One control thread asks HDF5 where the bytes are; readers then pread them without HDF5's
 * global lock. Anything HDF5 must transform (filters, type conversion, fill values, external
 * or virtual storage) is read through H5Dread, one hyperslab per range, under our lock. */
#include "h5source.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hdf5.h>

#include "util/text.h"

/* ---- HDF5's error stack, as one line ---------------------------------------------------- */

/* No automatic printing: errors are ours to report (per thread in a thread-safe HDF5). */
static void quiet(void) { H5Eset_auto2(H5E_DEFAULT, NULL, NULL); }

static herr_t walk_cb(unsigned n, const H5E_error2_t *e, void *data) {
    char *out = (char *)data;
    (void)n;
    if (e->desc != NULL && e->desc[0] != '\0') snprintf(out, 160, "%s", e->desc);
    return 0;
}

/* The innermost description of the current error stack, or "". */
static void hdf5_reason(char *out) {
    out[0] = '\0';
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, walk_cb, out);
}

/* ---- types ------------------------------------------------------------------------------ */

/* Why a type cannot be moved as bytes, or NULL when it can. */
static const char *type_problem(hid_t t) {
    H5T_class_t c = H5Tget_class(t);
    switch (c) {
    case H5T_VLEN: return "variable-length sequences";
    case H5T_REFERENCE: return "object references (file addresses)";
    case H5T_TIME: return "the HDF5 time type";
    case H5T_STRING: return H5Tis_variable_str(t) > 0 ? "variable-length strings" : NULL;
    case H5T_ARRAY: {
        hid_t super = H5Tget_super(t);
        const char *p = super >= 0 ? type_problem(super) : "an unreadable array type";
        if (super >= 0) H5Tclose(super);
        return p;
    }
    case H5T_COMPOUND: {
        int n = H5Tget_nmembers(t);
        if (n < 0) return "an unreadable compound type";
        for (int i = 0; i < n; i++) {
            hid_t m = H5Tget_member_type(t, (unsigned)i);
            const char *p = m >= 0 ? type_problem(m) : "an unreadable compound member";
            if (m >= 0) H5Tclose(m);
            if (p != NULL) return p;
        }
        return NULL;
    }
    case H5T_INTEGER:
    case H5T_FLOAT:
    case H5T_BITFIELD:
    case H5T_OPAQUE:
    case H5T_ENUM: return NULL;
    default: return "an unknown type class";
    }
}

static void type_name(hid_t t, char *out, size_t cap) {
    size_t size = H5Tget_size(t);
    H5T_class_t c = H5Tget_class(t);
    const char *be = H5Tget_order(t) == H5T_ORDER_BE ? " big-endian" : "";
    switch (c) {
    case H5T_INTEGER:
        vram_msgf(out, cap, "%sint%zu%s", H5Tget_sign(t) == H5T_SGN_NONE ? "u" : "", size * 8u, be);
        break;
    case H5T_FLOAT: vram_msgf(out, cap, "float%zu%s", size * 8u, be); break;
    case H5T_STRING:
        if (H5Tis_variable_str(t) > 0)
            vram_msgf(out, cap, "variable-length string");
        else
            vram_msgf(out, cap, "string[%zu]", size);
        break;
    case H5T_COMPOUND: vram_msgf(out, cap, "compound (%zu bytes)", size); break;
    case H5T_ARRAY: vram_msgf(out, cap, "array (%zu bytes)", size); break;
    case H5T_ENUM: vram_msgf(out, cap, "enum (%zu bytes)", size); break;
    case H5T_BITFIELD: vram_msgf(out, cap, "bitfield (%zu bytes)", size); break;
    case H5T_OPAQUE: vram_msgf(out, cap, "opaque (%zu bytes)", size); break;
    case H5T_VLEN: vram_msgf(out, cap, "variable-length sequence"); break;
    case H5T_REFERENCE: vram_msgf(out, cap, "reference"); break;
    default: vram_msgf(out, cap, "class %d (%zu bytes)", (int)c, size); break;
    }
}

/* ---- opening ----------------------------------------------------------------------------- */

static int64_t mtime_ns(const struct stat *st) {
    return (int64_t)st->st_mtim.tv_sec * 1000000000 + (int64_t)st->st_mtim.tv_nsec;
}

/* pread exactly n bytes at off; VRAM_E_IO with the offset on a short or failed read. */
static vram_status pread_all(const vram_h5_file *f, const vram_h5_dataset *ds, uint64_t off,
                             void *dst, uint64_t n, char *err, size_t cap) {
    uint8_t *p = (uint8_t *)dst;
    uint64_t got = 0;
    while (got < n) {
        size_t want = (size_t)vram__min_u64(n - got, (uint64_t)1 << 30);
        ssize_t r = pread(f->fd, p + got, want, (off_t)(off + got));
        if (r < 0) {
            if (errno == EINTR) continue;
            vram_msgf(err, cap, "%s: %s: read error at offset %llu (%llu bytes): %s", f->path, ds->name,
                (unsigned long long)(off + got), (unsigned long long)(n - got), strerror(errno));
            return VRAM_E_IO;
        }
        if (r == 0) {
            vram_msgf(err, cap,
                "%s: %s: short read at offset %llu: wanted %llu more bytes, the file ends there "
                "(truncated or changed under the reader)",
                f->path, ds->name, (unsigned long long)(off + got), (unsigned long long)(n - got));
            return VRAM_E_IO;
        }
        got += (uint64_t)r;
    }
    return VRAM_OK;
}

/* A hyperslab of whole rows [first, first + count) into dst, in the native type. */
static vram_status h5_read_rows(vram_h5_file *f, uint32_t d, uint64_t first, uint64_t count,
                                void *dst, char *err, size_t cap) {
    vram_h5_dataset *ds = &f->ds[d];
    hsize_t start[VRAM_H5_MAX_RANK], cnt[VRAM_H5_MAX_RANK];
    hid_t fs = -1, ms = -1;
    herr_t rc = -1;
    char why[160] = "";
    if (count == 0) return VRAM_OK;
    for (int i = 0; i < ds->rank; i++) {
        start[i] = 0;
        cnt[i] = (hsize_t)ds->dims[i];
    }
    start[0] = (hsize_t)first;
    cnt[0] = (hsize_t)count;
    pthread_mutex_lock(&f->lock);
    quiet();
    fs = H5Dget_space((hid_t)ds->dset);
    if (fs >= 0 && H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, cnt, NULL) >= 0) {
        ms = H5Screate_simple(ds->rank, cnt, NULL);
        if (ms >= 0) rc = H5Dread((hid_t)ds->dset, (hid_t)ds->memtype, ms, fs, H5P_DEFAULT, dst);
    }
    if (rc < 0) hdf5_reason(why);
    if (ms >= 0) H5Sclose(ms);
    if (fs >= 0) H5Sclose(fs);
    pthread_mutex_unlock(&f->lock);
    if (rc < 0) {
        vram_msgf(err, cap, "%s: %s: HDF5 could not read rows [%llu, %llu)%s%s", f->path, ds->name,
            (unsigned long long)first, (unsigned long long)(first + count), why[0] ? ": " : "", why);
        return VRAM_E_IO;
    }
    return VRAM_OK;
}

vram_status vram_h5_read_plain(vram_h5_file *f, uint32_t d, uint64_t first, uint64_t count,
                               void *dst, char *err, size_t cap) {
    if (f == NULL || d >= f->datasets || first > f->samples || count > f->samples - first) {
        vram_msgf(err, cap, "rows [%llu, %llu) of dataset %u are out of range", (unsigned long long)first,
            (unsigned long long)(first + count), d);
        return VRAM_E_RANGE;
    }
    return h5_read_rows(f, d, first, count, dst, err, cap);
}

/* Rows through the pread paths. */
static vram_status raw_read_rows(vram_h5_file *f, uint32_t d, uint64_t first, uint64_t count,
                                 void *dst, char *err, size_t cap) {
    const vram_h5_dataset *ds = &f->ds[d];
    uint64_t rb = ds->row_bytes;
    uint8_t *out = (uint8_t *)dst;
    if (ds->path == VRAM_H5_PATH_CONTIGUOUS)
        return pread_all(f, ds, ds->offset + first * rb, dst, count * rb, err, cap);
    /* chunked: row r lives in chunk r / chunk_rows */
    while (count > 0) {
        uint64_t k = first / ds->chunk_rows, in = first % ds->chunk_rows;
        uint64_t take = vram__min_u64(count, ds->chunk_rows - in);
        vram_status st = pread_all(f, ds, ds->chunk_addr[k] + in * rb, out, take * rb, err, cap);
        if (st != VRAM_OK) return st;
        out += take * rb;
        first += take;
        count -= take;
    }
    return VRAM_OK;
}

/* Is the byte image at `base` (row r at base + r*rb, rows [lo, hi) of a chunk starting at
 * row `row0`) what HDF5 reads? Checks the first and last rows. 1 yes, 0 no, -1 error. */
static int confirm_rows(vram_h5_file *f, uint32_t d, uint64_t base, uint64_t row0, uint64_t lo,
                        uint64_t hi) {
    vram_h5_dataset *ds = &f->ds[d];
    uint64_t rb = ds->row_bytes, rows[2] = {lo, hi - 1};
    char e[8];
    int ok = 1;
    uint8_t *a = (uint8_t *)malloc((size_t)rb), *b = (uint8_t *)malloc((size_t)rb);
    if (a == NULL || b == NULL) {
        free(a);
        free(b);
        return -1;
    }
    for (int i = 0; i < 2 && ok == 1; i++) {
        if (pread_all(f, ds, base + (rows[i] - row0) * rb, a, rb, e, sizeof e) != VRAM_OK ||
            h5_read_rows(f, d, rows[i], 1, b, e, sizeof e) != VRAM_OK)
            ok = -1;
        else if (memcmp(a, b, (size_t)rb) != 0)
            ok = 0;
    }
    free(a);
    free(b);
    return ok;
}

static void use_hdf5(vram_h5_dataset *ds, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void use_hdf5(vram_h5_dataset *ds, const char *fmt, ...) {
    va_list ap;
    ds->path = VRAM_H5_PATH_HDF5;
    va_start(ap, fmt);
    vsnprintf(ds->reason, sizeof ds->reason, fmt, ap);
    va_end(ap);
    free(ds->chunk_addr);
    ds->chunk_addr = NULL;
    ds->nchunks = 0;
}

/* The file offsets of a chunked dataset's chunks, when each chunk holds whole rows. */
static void find_chunks(vram_h5_file *f, uint32_t d, hid_t dcpl, uint64_t userblock) {
    vram_h5_dataset *ds = &f->ds[d];
    hsize_t cd[VRAM_H5_MAX_RANK], off[VRAM_H5_MAX_RANK];
    int r = H5Pget_chunk(dcpl, ds->rank, cd);
    if (r != ds->rank) {
        use_hdf5(ds, "the chunk shape cannot be read");
        return;
    }
    for (int i = 1; i < ds->rank; i++) {
        if ((uint64_t)cd[i] != ds->dims[i]) {
            use_hdf5(ds, "its chunks split a sample (chunk dimension %d is %llu, not %llu)", i,
                     (unsigned long long)cd[i], (unsigned long long)ds->dims[i]);
            return;
        }
    }
    ds->chunk_rows = (uint64_t)cd[0];
    ds->nchunks = vram__div_ceil_u64(ds->dims[0], ds->chunk_rows);
    ds->chunk_addr = (uint64_t *)malloc((size_t)ds->nchunks * sizeof(uint64_t));
    if (ds->chunk_addr == NULL) {
        use_hdf5(ds, "no memory for %llu chunk addresses", (unsigned long long)ds->nchunks);
        return;
    }
    memset(off, 0, sizeof off);
    for (uint64_t k = 0; k < ds->nchunks; k++) {
        unsigned mask = 0;
        haddr_t addr = HADDR_UNDEF;
        hsize_t size = 0;
        off[0] = (hsize_t)(k * ds->chunk_rows);
        if (H5Dget_chunk_info_by_coord((hid_t)ds->dset, off, &mask, &addr, &size) < 0) {
            use_hdf5(ds, "HDF5 cannot say where chunk %llu is", (unsigned long long)k);
            return;
        }
        if (addr == HADDR_UNDEF || size == 0) {
            use_hdf5(ds, "chunk %llu was never written (HDF5 supplies the fill value)",
                     (unsigned long long)k);
            return;
        }
        if ((uint64_t)size != ds->chunk_rows * ds->row_bytes) {
            use_hdf5(ds, "chunk %llu holds %llu bytes, not %llu", (unsigned long long)k,
                     (unsigned long long)size, (unsigned long long)(ds->chunk_rows * ds->row_bytes));
            return;
        }
        ds->chunk_addr[k] = (uint64_t)addr;
    }
    /* HDF5 versions differ on whether a chunk address counts the user block: confirm the
     * bytes against H5Dread at the first and the last chunk, with and without it. */
    uint64_t last = ds->nchunks - 1u, last_lo = last * ds->chunk_rows;
    int plain = confirm_rows(f, d, ds->chunk_addr[0], 0, 0, vram__min_u64(ds->chunk_rows, ds->dims[0])) == 1 &&
                confirm_rows(f, d, ds->chunk_addr[last], last_lo, last_lo, ds->dims[0]) == 1;
    int shifted = userblock > 0 &&
                  confirm_rows(f, d, ds->chunk_addr[0] + userblock, 0, 0,
                               vram__min_u64(ds->chunk_rows, ds->dims[0])) == 1 &&
                  confirm_rows(f, d, ds->chunk_addr[last] + userblock, last_lo, last_lo, ds->dims[0]) == 1;
    if (plain == shifted) {
        use_hdf5(ds, plain ? "its chunk addresses are ambiguous (user block)"
                           : "the bytes at its chunk addresses differ from what HDF5 reads");
        return;
    }
    if (shifted)
        for (uint64_t k = 0; k < ds->nchunks; k++) ds->chunk_addr[k] += userblock;
    ds->path = VRAM_H5_PATH_CHUNKED;
}

static void find_offset(vram_h5_file *f, uint32_t d) {
    vram_h5_dataset *ds = &f->ds[d];
    haddr_t a = H5Dget_offset((hid_t)ds->dset);
    if (a == HADDR_UNDEF) {
        use_hdf5(ds, "its storage was never written (HDF5 supplies the fill value)");
        return;
    }
    ds->offset = (uint64_t)a;
    if (confirm_rows(f, d, ds->offset, 0, 0, ds->dims[0]) != 1) {
        use_hdf5(ds, "the bytes at its file offset differ from what HDF5 reads");
        return;
    }
    ds->path = VRAM_H5_PATH_CONTIGUOUS;
}

/* The read path of an opened dataset. */
static void choose_path(vram_h5_file *f, uint32_t d, hid_t dcpl, hid_t ftype, uint64_t userblock) {
    vram_h5_dataset *ds = &f->ds[d];
    H5D_layout_t layout = H5Pget_layout(dcpl);
    int nf = H5Pget_nfilters(dcpl);
    ds->filters[0] = '\0';
    for (int i = 0; i < nf; i++) {
        unsigned flags = 0, cd[8];
        size_t ncd = 8;
        char name[64] = "";
        H5Z_filter_t id = H5Pget_filter2(dcpl, (unsigned)i, &flags, &ncd, cd, sizeof name, name, NULL);
        const char *nm = id == H5Z_FILTER_DEFLATE ? "deflate"
                         : id == H5Z_FILTER_SHUFFLE ? "shuffle"
                         : id == H5Z_FILTER_FLETCHER32 ? "fletcher32"
                         : id == H5Z_FILTER_SZIP ? "szip"
                         : id == H5Z_FILTER_NBIT ? "nbit"
                         : id == H5Z_FILTER_SCALEOFFSET ? "scaleoffset"
                         : name[0] ? name : "filter";
        size_t len = strlen(ds->filters);
        snprintf(ds->filters + len, sizeof ds->filters - len, "%s%s", len ? ", " : "", nm);
    }
    switch (layout) {
    case H5D_CONTIGUOUS: snprintf(ds->layout, sizeof ds->layout, "contiguous"); break;
    case H5D_CHUNKED: snprintf(ds->layout, sizeof ds->layout, "chunked"); break;
    case H5D_COMPACT: snprintf(ds->layout, sizeof ds->layout, "compact"); break;
    case H5D_VIRTUAL: snprintf(ds->layout, sizeof ds->layout, "virtual"); break;
    default: snprintf(ds->layout, sizeof ds->layout, "unknown"); break;
    }
    if (nf > 0) {
        use_hdf5(ds, "%s filter%s", ds->filters, nf > 1 ? "s" : "");
        return;
    }
    if (H5Tequal((hid_t)ds->memtype, ftype) <= 0) {
        char ft[96];
        type_name(ftype, ft, sizeof ft);
        use_hdf5(ds, "type conversion (%s in the file, native in memory)", ft);
        return;
    }
    if (H5Pget_external_count(dcpl) > 0) {
        use_hdf5(ds, "external storage");
        return;
    }
    if (layout == H5D_CONTIGUOUS)
        find_offset(f, d);
    else if (layout == H5D_CHUNKED)
        find_chunks(f, d, dcpl, userblock);
    else
        use_hdf5(ds, "%s layout", ds->layout);
}

/* Opens dataset d and checks it; returns the status and fills err. */
static vram_status open_dataset(vram_h5_file *f, uint32_t d, const char *name, uint64_t userblock,
                                char *err, size_t cap) {
    vram_h5_dataset *ds = &f->ds[d];
    H5O_info_t info;
    hid_t dcpl = -1, ftype = -1, space = -1, dapl = -1;
    hsize_t dims[VRAM_H5_MAX_RANK];
    vram_status st = VRAM_OK;
    const char *problem;
    char why[160];
    snprintf(ds->name, sizeof ds->name, "%s", name);
    ds->dset = -1;
    ds->memtype = -1;
    if (strlen(name) >= sizeof ds->name || name[0] == '\0') {
        vram_msgf(err, cap, "%s: dataset name '%s' is empty or too long", f->path, name);
        return VRAM_E_INVALID;
    }
    if (H5Oget_info_by_name2((hid_t)f->file, name, &info, H5O_INFO_BASIC, H5P_DEFAULT) < 0) {
        vram_msgf(err, cap, "%s: no dataset '%s' in the file", f->path, name);
        return VRAM_E_INVALID;
    }
    if (info.type != H5O_TYPE_DATASET) {
        vram_msgf(err, cap, "%s: '%s' is a %s, not a dataset", f->path, name,
            info.type == H5O_TYPE_GROUP ? "group" : "named datatype");
        return VRAM_E_INVALID;
    }
    dapl = H5Pcreate(H5P_DATASET_ACCESS);
    ds->dset = H5Dopen2((hid_t)f->file, name, dapl >= 0 ? dapl : H5P_DEFAULT);
    if (ds->dset < 0) {
        hdf5_reason(why);
        vram_msgf(err, cap, "%s: cannot open dataset '%s': %s", f->path, name, why[0] ? why : "HDF5 error");
        st = VRAM_E_IO;
        goto out;
    }
    space = H5Dget_space((hid_t)ds->dset);
    ftype = H5Dget_type((hid_t)ds->dset);
    dcpl = H5Dget_create_plist((hid_t)ds->dset);
    if (space < 0 || ftype < 0 || dcpl < 0) {
        vram_msgf(err, cap, "%s: cannot read the shape, type or layout of '%s'", f->path, name);
        st = VRAM_E_IO;
        goto out;
    }
    H5S_class_t sc = H5Sget_simple_extent_type(space);
    ds->rank = H5Sget_simple_extent_ndims(space);
    if (sc != H5S_SIMPLE || ds->rank < 1 || ds->rank > VRAM_H5_MAX_RANK) {
        vram_msgf(err, cap, "%s: '%s' is %s: it has no sample dimension", f->path, name,
            sc == H5S_NULL ? "a null dataspace" : sc == H5S_SCALAR ? "a scalar" : "of no usable shape");
        st = VRAM_E_FORMAT;
        goto out;
    }
    H5Sget_simple_extent_dims(space, dims, NULL);
    for (int i = 0; i < ds->rank; i++) ds->dims[i] = (uint64_t)dims[i];
    type_name(ftype, ds->type, sizeof ds->type);
    if ((problem = type_problem(ftype)) != NULL) {
        vram_msgf(err, cap, "%s: '%s' holds %s (type %s): only fixed-size samples can be moved as bytes",
            f->path, name, problem, ds->type);
        st = VRAM_E_UNHANDLED;
        goto out;
    }
    if (ds->dims[0] == 0) {
        vram_msgf(err, cap, "%s: '%s' is empty (0 samples)", f->path, name);
        st = VRAM_E_INVALID;
        goto out;
    }
    ds->memtype = H5Tget_native_type(ftype, H5T_DIR_ASCEND);
    if (ds->memtype < 0) ds->memtype = H5Tcopy(ftype);
    if (ds->memtype < 0) {
        vram_msgf(err, cap, "%s: '%s': no native type for %s", f->path, name, ds->type);
        st = VRAM_E_UNHANDLED;
        goto out;
    }
    {
        uint64_t rb = (uint64_t)H5Tget_size((hid_t)ds->memtype);
        for (int i = 1; i < ds->rank; i++) {
            if (vram__mul_u64(rb, ds->dims[i], &rb) != VRAM_OK) {
                vram_msgf(err, cap, "%s: one sample of '%s' is more than 2^64 bytes", f->path, name);
                st = VRAM_E_OVERFLOW;
                goto out;
            }
        }
        ds->row_bytes = rb;
        if (rb == 0) {
            vram_msgf(err, cap, "%s: '%s' has samples of 0 bytes (a zero dimension)", f->path, name);
            st = VRAM_E_INVALID;
            goto out;
        }
        uint64_t total;
        if (vram__mul_u64(rb, ds->dims[0], &total) != VRAM_OK) {
            vram_msgf(err, cap, "%s: '%s' is more than 2^64 bytes", f->path, name);
            st = VRAM_E_OVERFLOW;
            goto out;
        }
    }
    choose_path(f, d, dcpl, ftype, userblock);
    if (ds->path == VRAM_H5_PATH_HDF5 && H5Pget_layout(dcpl) == H5D_CHUNKED && dapl >= 0) {
        /* reads cut HDF5 chunks at range edges: keep two chunks decoded (bounded) */
        hsize_t cd[VRAM_H5_MAX_RANK];
        uint64_t cb = (uint64_t)H5Tget_size(ftype);
        if (H5Pget_chunk(dcpl, ds->rank, cd) == ds->rank) {
            for (int i = 0; i < ds->rank; i++) cb = vram__min_u64(cb * (uint64_t)cd[i], UINT64_C(1) << 40);
            size_t bytes = (size_t)vram__max_u64(UINT64_C(1) << 20, vram__min_u64(2u * cb, UINT64_C(64) << 20));
            H5Pset_chunk_cache(dapl, 521, bytes, 1.0);
            H5Dclose((hid_t)ds->dset);
            ds->dset = H5Dopen2((hid_t)f->file, name, dapl);
            if (ds->dset < 0) {
                vram_msgf(err, cap, "%s: cannot reopen dataset '%s'", f->path, name);
                st = VRAM_E_IO;
                goto out;
            }
        }
    }
out:
    if (dcpl >= 0) H5Pclose(dcpl);
    if (ftype >= 0) H5Tclose(ftype);
    if (space >= 0) H5Sclose(space);
    if (dapl >= 0) H5Pclose(dapl);
    return st;
}

void vram_h5_close(vram_h5_file *f) {
    if (f == NULL) return;
    for (uint32_t d = 0; d < VRAM_STREAM_MAX_DATASETS; d++) {
        if (f->ds[d].dset > 0) H5Dclose((hid_t)f->ds[d].dset);
        if (f->ds[d].memtype > 0) H5Tclose((hid_t)f->ds[d].memtype);
        free(f->ds[d].chunk_addr);
    }
    if (f->file > 0) H5Fclose((hid_t)f->file);
    if (f->fd >= 0) close(f->fd);
    pthread_mutex_destroy(&f->lock);
    free(f);
}

vram_status vram_h5_open(const char *path, const char *const *names, uint32_t n,
                         vram_h5_file **out, char *err, size_t cap) {
    vram_h5_file *f;
    struct stat st;
    hid_t fapl = -1, fcpl = -1;
    hsize_t ub = 0;
    char why[160];
    vram_status rc = VRAM_OK;
    if (err && cap) err[0] = '\0';
    if (out == NULL || path == NULL || names == NULL) {
        vram_msgf(err, cap, "NULL argument");
        return VRAM_E_INVALID;
    }
    *out = NULL;
    if (n == 0 || n > VRAM_STREAM_MAX_DATASETS) {
        vram_msgf(err, cap, "%s: %u datasets given: from 1 to %u", path, n, VRAM_STREAM_MAX_DATASETS);
        return VRAM_E_INVALID;
    }
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < i; j++)
            if (strcmp(names[i], names[j]) == 0) {
                vram_msgf(err, cap, "%s: dataset '%s' is given twice", path, names[i]);
                return VRAM_E_INVALID;
            }
    f = (vram_h5_file *)calloc(1, sizeof *f);
    if (f == NULL) {
        vram_msgf(err, cap, "out of host memory");
        return VRAM_E_NOMEM;
    }
    f->fd = -1;
    f->file = -1;
    for (uint32_t d = 0; d < VRAM_STREAM_MAX_DATASETS; d++) f->ds[d].dset = f->ds[d].memtype = -1;
    pthread_mutex_init(&f->lock, NULL);
    if (strlen(path) >= sizeof f->path) {
        vram_msgf(err, cap, "file name too long: %.80s...", path);
        vram_h5_close(f);
        return VRAM_E_INVALID;
    }
    snprintf(f->path, sizeof f->path, "%s", path);
    f->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (f->fd < 0) {
        int e = errno;
        vram_msgf(err, cap, "%s: %s", path, e == ENOENT ? "no such file" : strerror(e));
        vram_h5_close(f);
        return e == ENOENT || e == ENOTDIR ? VRAM_E_INVALID : VRAM_E_IO;
    }
    if (fstat(f->fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        vram_msgf(err, cap, "%s: not a regular file", path);
        vram_h5_close(f);
        return VRAM_E_INVALID;
    }
    f->file_bytes = (uint64_t)st.st_size;
    f->mtime_ns = mtime_ns(&st);
    f->ino = (uint64_t)st.st_ino;
    f->dev = (uint64_t)st.st_dev;

    /* nothing else uses f yet: no lock (the checks below read through h5_read_rows) */
    quiet();
    if (H5Fis_hdf5(path) <= 0) {
        vram_msgf(err, cap, "%s: not an HDF5 file", path);
        rc = VRAM_E_FORMAT;
        goto done;
    }
    fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl >= 0) H5Pset_file_locking(fapl, 0, 1); /* read-only: no locks to take */
    f->file = H5Fopen(path, H5F_ACC_RDONLY, fapl >= 0 ? fapl : H5P_DEFAULT);
    if (f->file < 0) {
        hdf5_reason(why);
        vram_msgf(err, cap, "%s: HDF5 cannot open it%s%s", path, why[0] ? ": " : "", why);
        rc = VRAM_E_FORMAT;
        goto done;
    }
    fcpl = H5Fget_create_plist((hid_t)f->file);
    if (fcpl >= 0) H5Pget_userblock(fcpl, &ub);
    for (uint32_t d = 0; d < n; d++) {
        rc = open_dataset(f, d, names[d], (uint64_t)ub, err, cap);
        if (rc != VRAM_OK) goto done;
        f->datasets = d + 1u;
        if (d == 0) {
            f->samples = f->ds[0].dims[0];
        } else if (f->ds[d].dims[0] != f->samples) {
            vram_msgf(err, cap, "%s: '%s' has %llu samples and '%s' has %llu: datasets streamed together "
                          "must share their first dimension",
                path, f->ds[0].name, (unsigned long long)f->samples, f->ds[d].name,
                (unsigned long long)f->ds[d].dims[0]);
            rc = VRAM_E_INVALID;
            goto done;
        }
    }
done:
    if (fcpl >= 0) H5Pclose(fcpl);
    if (fapl >= 0) H5Pclose(fapl);
    if (rc != VRAM_OK) {
        vram_h5_close(f);
        return rc;
    }
    *out = f;
    return VRAM_OK;
}

/* ---- the source ------------------------------------------------------------------------- */

static vram_status src_read(void *ctx, uint32_t d, uint64_t first, uint64_t count, void *dst,
                            char *err, size_t cap) {
    vram_h5_file *f = (vram_h5_file *)ctx;
    if (d >= f->datasets || first > f->samples || count > f->samples - first) {
        vram_msgf(err, cap, "%s: rows [%llu, %llu) of dataset %u are out of range", f->path,
            (unsigned long long)first, (unsigned long long)(first + count), d);
        return VRAM_E_RANGE;
    }
    if (f->ds[d].path == VRAM_H5_PATH_HDF5) return h5_read_rows(f, d, first, count, dst, err, cap);
    return raw_read_rows(f, d, first, count, dst, err, cap);
}

static vram_status src_check(void *ctx, char *err, size_t cap) {
    vram_h5_file *f = (vram_h5_file *)ctx;
    struct stat st;
    if (fstat(f->fd, &st) != 0) {
        vram_msgf(err, cap, "%s: cannot stat the open file: %s", f->path, strerror(errno));
        return VRAM_E_IO;
    }
    if ((uint64_t)st.st_size < f->file_bytes) {
        vram_msgf(err, cap, "%s: the file was truncated under the reader: %llu bytes at open, %llu now "
                      "(the data from offset %llu on is gone)",
            f->path, (unsigned long long)f->file_bytes, (unsigned long long)st.st_size,
            (unsigned long long)st.st_size);
        return VRAM_E_IO;
    }
    if ((uint64_t)st.st_size != f->file_bytes) {
        vram_msgf(err, cap, "%s: the file changed under the reader: %llu bytes at open, %llu now", f->path,
            (unsigned long long)f->file_bytes, (unsigned long long)st.st_size);
        return VRAM_E_IO;
    }
    if (mtime_ns(&st) != f->mtime_ns || (uint64_t)st.st_ino != f->ino) {
        vram_msgf(err, cap, "%s: the file changed under the reader (modified since it was opened)", f->path);
        return VRAM_E_IO;
    }
    return VRAM_OK;
}

vram_source vram_h5_source(vram_h5_file *f) {
    vram_source s;
    memset(&s, 0, sizeof s);
    s.ctx = f;
    s.samples = f->samples;
    s.datasets = f->datasets;
    for (uint32_t d = 0; d < f->datasets; d++) {
        s.row_bytes[d] = f->ds[d].row_bytes;
        s.parallel[d] = f->ds[d].path != VRAM_H5_PATH_HDF5;
    }
    s.read = src_read;
    s.check = src_check;
    return s;
}
