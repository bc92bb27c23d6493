/* driver/hdf5/h5child.c — `vramkit __h5`: the only process in which vramkit calls HDF5.
 * HDF5 crashes, recurses without end and allocates what a malformed file asks for; here that
 * costs this child. It gets the file as descriptor 4 (the very file its parent opened) and
 * a socket as descriptor 3; it bounds its own memory (RLIMIT_AS: its size at start plus
 * what the parent allows HDF5) and time (alarm per request), describes the datasets asked
 * for (stream/h5desc.h: shape, type, layout, filters, the read path, and for the pread paths
 * every byte range, each checked against what HDF5 itself reads), then answers reads through
 * H5Dread until its parent closes the socket.
 *
 * Chunk addresses come from one walk of the chunk index (H5Ddebug's listing: HDF5's own
 * iteration, once, where H5Dget_chunk_info per chunk walks the whole index each time), and
 * are only used where H5Dread's own lookup agrees for every chunk: the lookup
 * (H5Dget_chunk_storage_size) finds each chunk with the size the walk listed, and the walk
 * lists each chunk exactly once, so the chunk the lookup finds is the one listed. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hdf5.h>

#include "isolate/helper.h"
#include "stream/h5desc.h"
#include "stream/stream.h"
#include "util/text.h"

#define SOCK VRAM_HELPER_SOCKET_FD
#define FILE_FD VRAM_HELPER_EXTRA_FD
#define ERR_CAP VRAM_H5_MAX_MESSAGE

typedef struct child {
    char path[4096];
    hid_t file;
    uint32_t n;
    vram_h5_dataset ds[VRAM_STREAM_MAX_DATASETS];
    hid_t dset[VRAM_STREAM_MAX_DATASETS], memtype[VRAM_STREAM_MAX_DATASETS];
    uint64_t file_bytes; /* the parent's size of the file */
    uint64_t base;       /* the user block: file offset = HDF5 address + base */
    uint64_t eoa;        /* HDF5's end of allocated space, as a file offset */
    uint64_t chunks_left;
    uint64_t memory;     /* bytes HDF5 may allocate here */
    hid_t lapl;          /* link (and dataset) access: external links beside the file */
    unsigned timeout_s;
} child;

/* ---- HDF5's error stack ------------------------------------------------------------------ */

static void quiet(void) { H5Eset_auto2(H5E_DEFAULT, NULL, NULL); }

typedef struct stack_info {
    char desc[160];
    int no_memory;
    int io; /* an entry of the low-level I/O class: the file could not be read (the environment) */
} stack_info;

static herr_t walk_cb(unsigned n, const H5E_error2_t *e, void *data) {
    stack_info *s = (stack_info *)data;
    (void)n;
    if (e->desc != NULL && e->desc[0] != '\0') snprintf(s->desc, sizeof s->desc, "%s", e->desc);
    if (e->maj_num == H5E_RESOURCE || e->min_num == H5E_CANTALLOC || e->min_num == H5E_NOSPACE) s->no_memory = 1;
    /* the file driver's read or seek failed; an object header's "read failed" is decoding */
    if (e->maj_num == H5E_IO) s->io = 1;
    return 0;
}

/* The innermost description of the current error stack ("" when none), and whether it
 * says an allocation failed (the memory bound). */
static stack_info hdf5_reason(void) {
    stack_info s;
    memset(&s, 0, sizeof s);
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, walk_cb, &s);
    for (char *p = s.desc; *p; p++)
        if ((unsigned char)*p < 0x20) *p = ' ';
    return s;
}

static void sized(char *out, size_t cap, uint64_t bytes) { vram_fmt_size(bytes, out, cap); }

/* err: "WHAT: REASON" from the error stack, with the memory bound named when HDF5 ran out. */
static vram_status hdf5_failed(const child *c, char *err, vram_status st, const char *what) {
    stack_info s = hdf5_reason();
    if (s.no_memory) {
        char b[32];
        sized(b, sizeof b, c->memory);
        vram_msgf(err, ERR_CAP, "%s: HDF5 asked for more memory than the %s it may use here (VRAMKIT_H5_MEMORY "
                  "raises the bound): the file is malformed or needs more", what, b);
        return VRAM_E_FORMAT;
    }
    vram_msgf(err, ERR_CAP, "%s%s%s", what, s.desc[0] ? ": " : "", s.desc);
    return st;
}

/* As hdf5_failed, for metadata HDF5 could not make sense of while opening: the file is
 * malformed (VRAM_E_FORMAT, exit 2) unless HDF5's stack says a read of it failed (VRAM_E_IO,
 * exit 3). */
static vram_status hdf5_open_failed(const child *c, char *err, const char *what) {
    return hdf5_failed(c, err, hdf5_reason().io ? VRAM_E_IO : VRAM_E_FORMAT, what);
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

/* Why a number type can only come from a corrupt file, or NULL: no integer or float that any
 * program writes is wider than 16 bytes or has bits past its size (HDF5 2.0 refuses these as
 * "unusually large # of unused bits"; 1.10 converts garbage that differs from run to run). */
static const char *type_corrupt(hid_t t) {
    H5T_class_t c = H5Tget_class(t);
    if (c == H5T_ARRAY || c == H5T_ENUM) {
        hid_t super = H5Tget_super(t);
        const char *p = super >= 0 ? type_corrupt(super) : "an unreadable base type";
        if (super >= 0) H5Tclose(super);
        return p;
    }
    if (c == H5T_COMPOUND) {
        int n = H5Tget_nmembers(t);
        size_t whole = H5Tget_size(t);
        for (int i = 0; i < n; i++) {
            hid_t m = H5Tget_member_type(t, (unsigned)i);
            size_t at = H5Tget_member_offset(t, (unsigned)i), msize = m >= 0 ? H5Tget_size(m) : 0;
            const char *p = m >= 0 ? type_corrupt(m) : "an unreadable compound member";
            if (p == NULL && (msize > whole || at > whole - msize)) /* HDF5 2.0 refuses these */
                p = "a compound whose member extends outside it";
            if (m >= 0) H5Tclose(m);
            if (p != NULL) return p;
        }
        return NULL;
    }
    if (c != H5T_INTEGER && c != H5T_FLOAT && c != H5T_BITFIELD) return NULL;
    size_t size = H5Tget_size(t), prec = H5Tget_precision(t);
    int off = H5Tget_offset(t);
    if (size == 0 || size > 16) return "a number wider than 16 bytes";
    if (prec == 0 || off < 0 || prec + (size_t)off > size * 8u) return "a number whose bits lie past its size";
    return NULL;
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

/* ---- reads ------------------------------------------------------------------------------- */

/* A hyperslab of whole rows [first, first + count) of dataset d into dst, native type. */
static vram_status read_rows(child *c, uint32_t d, uint64_t first, uint64_t count, void *dst, char *err) {
    vram_h5_dataset *ds = &c->ds[d];
    hsize_t start[VRAM_H5_MAX_RANK], cnt[VRAM_H5_MAX_RANK];
    hid_t fs = -1, ms = -1;
    herr_t rc = -1;
    if (count == 0) return VRAM_OK;
    for (int i = 0; i < ds->rank; i++) {
        start[i] = 0;
        cnt[i] = (hsize_t)ds->dims[i];
    }
    start[0] = (hsize_t)first;
    cnt[0] = (hsize_t)count;
    fs = H5Dget_space(c->dset[d]);
    if (fs >= 0 && H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, cnt, NULL) >= 0) {
        ms = H5Screate_simple(ds->rank, cnt, NULL);
        if (ms >= 0) rc = H5Dread(c->dset[d], c->memtype[d], ms, fs, H5P_DEFAULT, dst);
    }
    vram_status st = VRAM_OK;
    if (rc < 0) {
        char what[ERR_CAP];
        vram_msgf(what, sizeof what, "%s: %s: HDF5 could not read rows [%llu, %llu)", c->path, ds->name,
                  (unsigned long long)first, (unsigned long long)(first + count));
        st = hdf5_failed(c, err, VRAM_E_IO, what);
    }
    if (ms >= 0) H5Sclose(ms);
    if (fs >= 0) H5Sclose(fs);
    return st;
}

static int pread_all(int fd, void *dst, uint64_t n, uint64_t off) {
    uint8_t *p = (uint8_t *)dst;
    while (n > 0) {
        ssize_t r = pread(fd, p, (size_t)vram__min_u64(n, UINT64_C(1) << 30), (off_t)off);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        p += r;
        n -= (uint64_t)r;
        off += (uint64_t)r;
    }
    return 0;
}

/* Are the bytes at file offset `base` (row r at base + (r - row0) * rb) for rows lo and
 * hi - 1 what H5Dread reads? 1 yes, 0 no, -1 error. */
static int confirm_rows(child *c, uint32_t d, uint64_t base, uint64_t row0, uint64_t lo, uint64_t hi) {
    vram_h5_dataset *ds = &c->ds[d];
    uint64_t rb = ds->row_bytes, rows[2] = {lo, hi - 1};
    char e[ERR_CAP];
    int ok = 1;
    uint8_t *a = (uint8_t *)malloc((size_t)rb), *b = (uint8_t *)malloc((size_t)rb);
    if (a == NULL || b == NULL) ok = -1;
    for (int i = 0; i < 2 && ok == 1; i++) {
        if (pread_all(FILE_FD, a, rb, base + (rows[i] - row0) * rb) != 0 ||
            read_rows(c, d, rows[i], 1, b, e) != VRAM_OK)
            ok = -1;
        else if (memcmp(a, b, (size_t)rb) != 0)
            ok = 0;
    }
    free(a);
    free(b);
    return ok;
}

/* ---- read paths --------------------------------------------------------------------------- */

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

/* One record of the chunk index. */
typedef struct chunk_rec {
    unsigned mask;
    uint64_t bytes, addr;
    uint64_t coord[VRAM_H5_MAX_RANK + 1];
} chunk_rec;

/* Every record of d's chunk index, from one walk: HDF5's listing (H5Ddebug) written to a
 * memory file and read back. *out malloc'd (count records). 0, or -1 when the listing could
 * not be had or read (nothing is then concluded from it). */
static int list_chunks(child *c, uint32_t d, chunk_rec **out, uint64_t *count, uint64_t max) {
    vram_h5_dataset *ds = &c->ds[d];
    int mfd = memfd_create("vramkit-h5-chunks", MFD_CLOEXEC), saved = -1, rc = -1;
    FILE *in = NULL;
    chunk_rec *recs = NULL;
    uint64_t n = 0, cap = 0;
    char line[1024];
    hid_t space = H5Dget_space(c->dset[d]);
    hsize_t listed = 0;
    herr_t nr = space >= 0 ? H5Dget_num_chunks(c->dset[d], space, &listed) : -1;
    if (space >= 0) H5Sclose(space);
    *out = NULL;
    *count = 0;
    if (nr >= 0 && listed == 0) { /* no index at all (nothing written): H5Ddebug would crash on it */
        if (mfd >= 0) close(mfd);
        return 0;
    }
    if (mfd < 0 || nr < 0) {
        if (mfd >= 0) close(mfd);
        return -1;
    }
    fflush(stdout);
    saved = dup(1);
    if (saved < 0 || dup2(mfd, 1) < 0) goto out;
    herr_t hr = H5Ddebug(c->dset[d]);
    fflush(stdout);
    dup2(saved, 1);
    if (hr < 0 || lseek(mfd, 0, SEEK_SET) != 0 || (in = fdopen(mfd, "r")) == NULL) goto out;
    mfd = -1; /* in owns it */
    rc = 0;
    while (fgets(line, sizeof line, in)) {
        char *p = line;
        while (*p == ' ' || *p == '\t') p++;
        if (strncmp(p, "0x", 2) != 0) continue; /* headings, the index's own address */
        chunk_rec r;
        unsigned long long bytes, addr;
        int used = 0;
        memset(&r, 0, sizeof r);
        if (sscanf(p, "0x%x %llu %llu [%n", &r.mask, &bytes, &addr, &used) != 3 || used == 0) {
            rc = -1;
            break;
        }
        r.bytes = bytes;
        r.addr = addr;
        p += used;
        int k = 0;
        for (; k <= ds->rank; k++) {
            char *end;
            errno = 0;
            unsigned long long v = strtoull(p, &end, 10);
            if (end == p || errno != 0) break;
            r.coord[k] = v;
            p = end;
            if (*p == ',') p += 2;
        }
        if (k != ds->rank + 1 || *p != ']') {
            rc = -1;
            break;
        }
        if (n == max) { /* more records than chunks: enough to know the index is wrong */
            n++;
            break;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 1024;
            if (cap > max) cap = max;
            chunk_rec *nr = (chunk_rec *)realloc(recs, (size_t)cap * sizeof *recs);
            if (nr == NULL) {
                rc = -1;
                break;
            }
            recs = nr;
        }
        recs[n++] = r;
    }
out:
    if (saved >= 0) close(saved);
    if (in) fclose(in);
    if (mfd >= 0) close(mfd);
    if (rc != 0) {
        free(recs);
        return -1;
    }
    *out = recs;
    *count = n;
    return 0;
}

/* The file offsets of a chunked dataset's chunks, when each chunk holds whole rows and
 * HDF5's lookup agrees with its index for every one. */
static void find_chunks(child *c, uint32_t d, hid_t dcpl) {
    vram_h5_dataset *ds = &c->ds[d];
    hsize_t cd[VRAM_H5_MAX_RANK];
    chunk_rec *recs = NULL;
    uint64_t nrec = 0;
    uint8_t *seen = NULL;
    if (H5Pget_chunk(dcpl, ds->rank, cd) != ds->rank) {
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
    uint64_t cb;
    if (cd[0] == 0 || vram__mul_u64((uint64_t)cd[0], ds->row_bytes, &cb) != VRAM_OK) {
        use_hdf5(ds, "a chunk of %llu samples", (unsigned long long)cd[0]);
        return;
    }
    ds->chunk_rows = (uint64_t)cd[0];
    ds->nchunks = vram__div_ceil_u64(ds->dims[0], ds->chunk_rows);
    if (ds->nchunks > c->chunks_left) {
        use_hdf5(ds, "more than %llu chunks", (unsigned long long)VRAM_H5_MAX_CHUNKS);
        return;
    }
    if (list_chunks(c, d, &recs, &nrec, ds->nchunks) != 0) {
        use_hdf5(ds, "its chunk index cannot be listed");
        return;
    }
    ds->chunk_addr = (uint64_t *)malloc((size_t)ds->nchunks * sizeof(uint64_t));
    seen = (uint8_t *)calloc((size_t)(ds->nchunks / 8u + 1u), 1);
    if (ds->chunk_addr == NULL || seen == NULL) {
        use_hdf5(ds, "no memory for %llu chunk addresses", (unsigned long long)ds->nchunks);
        goto out;
    }
    /* the walk: each chunk of whole rows once, unfiltered, of its size, inside the file */
    for (uint64_t i = 0; i < nrec; i++) {
        const chunk_rec *r = &recs[i];
        int whole = r->coord[0] % ds->chunk_rows == 0 && r->coord[0] / ds->chunk_rows < ds->nchunks;
        for (int k = 1; k <= ds->rank; k++) whole = whole && r->coord[k] == 0;
        uint64_t k = whole ? r->coord[0] / ds->chunk_rows : 0, end;
        if (!whole || (seen[k / 8u] & (1u << (k % 8u)))) {
            use_hdf5(ds, "its chunk index lists a chunk %s (at sample %llu)", whole ? "twice" : "outside the dataset",
                     (unsigned long long)r->coord[0]);
            goto out;
        }
        seen[k / 8u] |= (uint8_t)(1u << (k % 8u));
        if (r->mask != 0 || r->bytes != cb) {
            use_hdf5(ds, "its chunk index gives chunk %llu %llu bytes%s, not %llu", (unsigned long long)k,
                     (unsigned long long)r->bytes, r->mask ? " and a filter mask" : "", (unsigned long long)cb);
            goto out;
        }
        if (vram__add_u64(r->addr, c->base, &ds->chunk_addr[k]) != VRAM_OK ||
            vram__add_u64(ds->chunk_addr[k], cb, &end) != VRAM_OK || end > c->eoa || end > c->file_bytes) {
            use_hdf5(ds, "its chunk index puts chunk %llu past the end of the file", (unsigned long long)k);
            goto out;
        }
    }
    if (nrec < ds->nchunks) {
        uint64_t k = 0;
        while (k < ds->nchunks && (seen[k / 8u] & (1u << (k % 8u)))) k++;
        use_hdf5(ds, "chunk %llu was never written (HDF5 supplies the fill value)", (unsigned long long)k);
        goto out;
    }
    /* the lookup H5Dread uses finds every chunk, with the size listed: with each chunk
     * listed once, the chunk it finds is the listed one */
    for (uint64_t k = 0; k < ds->nchunks; k++) {
        hsize_t off[VRAM_H5_MAX_RANK], size = 0;
        memset(off, 0, sizeof off);
        off[0] = (hsize_t)(k * ds->chunk_rows);
        if (H5Dget_chunk_storage_size(c->dset[d], off, &size) < 0 || (uint64_t)size != cb) {
            use_hdf5(ds, "its chunk index is inconsistent (HDF5's lookup finds %llu bytes for chunk %llu, "
                     "its index lists %llu)", (unsigned long long)size, (unsigned long long)k,
                     (unsigned long long)cb);
            goto out;
        }
    }
    /* and H5Dread reads those bytes: the first and last rows of the first and last chunks */
    uint64_t last = ds->nchunks - 1u, last_lo = last * ds->chunk_rows;
    int ok = confirm_rows(c, d, ds->chunk_addr[0], 0, 0, vram__min_u64(ds->chunk_rows, ds->dims[0])) == 1 &&
             confirm_rows(c, d, ds->chunk_addr[last], last_lo, last_lo, ds->dims[0]) == 1;
    if (!ok) {
        use_hdf5(ds, "the bytes at its chunk addresses differ from what HDF5 reads");
        goto out;
    }
    c->chunks_left -= ds->nchunks;
    ds->path = VRAM_H5_PATH_CHUNKED;
out:
    free(recs);
    free(seen);
}

/* The bytes a chunk stored by the last filter of the pipeline (the first HDF5 decodes) must
 * hold for that filter to stay inside them, or 0 when not known. HDF5 1.10 decodes
 * scale-offset and n-bit data from the chunk without looking at its size, and delivers what
 * lies past it. */
static uint64_t filter_needs(const chunk_rec *r, H5Z_filter_t last, const unsigned *cd, size_t ncd, uint64_t base) {
    if (last == H5Z_FILTER_FLETCHER32) return 4; /* its checksum */
    if (last == H5Z_FILTER_SCALEOFFSET && ncd >= 8) {
        /* 21 bytes of header (minbits first, 4 bytes little-endian), then the packed values */
        uint8_t h[4];
        uint64_t nelmts = cd[2], size = cd[4];
        if (pread_all(FILE_FD, h, 4, r->addr + base) != 0) return UINT64_MAX;
        uint64_t minbits = (uint64_t)h[0] | (uint64_t)h[1] << 8 | (uint64_t)h[2] << 16 | (uint64_t)h[3] << 24;
        if (minbits > size * 8u) return UINT64_MAX;
        return 21u + (minbits == size * 8u ? nelmts * size : (nelmts * minbits + 7u) / 8u);
    }
    if (last == H5Z_FILTER_NBIT && ncd >= 8 && cd[3] == 1u) /* atomic: precision bits a value */
        return cd[1] ? (uint64_t)cd[2] * cd[4] : ((uint64_t)cd[2] * cd[6] + 7u) / 8u;
    return 1;
}

static int cmp_rank; /* the dimensions compared by cmp_coord (the child is one thread) */
static int cmp_coord(const void *pa, const void *pb) {
    const chunk_rec *x = pa, *y = pb;
    for (int k = 0; k < cmp_rank; k++)
        if (x->coord[k] != y->coord[k]) return x->coord[k] < y->coord[k] ? -1 : 1;
    return 0;
}

/* A filtered chunk HDF5 would decode out of bounds, a chunk index that lists two chunks for
 * one place or a chunk off the chunk grid: NULL, or why the dataset is refused. */
static const char *check_filtered(child *c, uint32_t d, H5Z_filter_t last, const unsigned *cd, size_t ncd, char *why,
                                  size_t cap) {
    vram_h5_dataset *ds = &c->ds[d];
    chunk_rec *recs = NULL;
    uint64_t nrec = 0;
    const char *bad = NULL;
    hsize_t shape[VRAM_H5_MAX_RANK];
    hid_t dcpl = H5Dget_create_plist(c->dset[d]);
    int have_shape = dcpl >= 0 && H5Pget_chunk(dcpl, ds->rank, shape) == ds->rank;
    if (dcpl >= 0) H5Pclose(dcpl);
    if (list_chunks(c, d, &recs, &nrec, VRAM_H5_MAX_CHUNKS) != 0) return NULL; /* nothing concluded */
    cmp_rank = ds->rank;
    if (nrec > 1) qsort(recs, (size_t)nrec, sizeof recs[0], cmp_coord);
    for (uint64_t i = 0; i < nrec && !bad; i++) {
        uint64_t end, need = filter_needs(&recs[i], last, cd, ncd, c->base);
        int k = 0;
        if (i > 0 && cmp_coord(&recs[i - 1], &recs[i]) == 0) { /* two chunks for one place */
            vram_msgf(why, cap, "%s: '%s': its chunk index lists two chunks at sample %llu (the file is corrupt)",
                      c->path, ds->name, (unsigned long long)recs[i].coord[0]);
            bad = why;
            break;
        } /* a chunk starts at a multiple of the chunk shape, inside the dataset */
        while (have_shape && k < ds->rank && shape[k] != 0 && recs[i].coord[k] % shape[k] == 0 &&
               recs[i].coord[k] < ds->dims[k])
            k++;
        if (have_shape && k < ds->rank) { /* HDF5 2.0: "bad coordinate offset" */
            vram_msgf(why, cap, "%s: '%s': a chunk of its index starts at %llu in dimension %d, not at a multiple "
                      "of the chunk shape's %llu inside the dataset (the file is corrupt)", c->path, ds->name,
                      (unsigned long long)recs[i].coord[k], k, (unsigned long long)shape[k]);
            bad = why;
        } else if (recs[i].bytes < need) {
            vram_msgf(why, cap, "%s: '%s': the chunk at sample %llu holds %llu bytes, too few for its filters "
                      "(the file is corrupt)", c->path, ds->name, (unsigned long long)recs[i].coord[0],
                      (unsigned long long)recs[i].bytes);
            bad = why;
        } else if (vram__add_u64(recs[i].addr, c->base, &end) != VRAM_OK ||
                   vram__add_u64(end, recs[i].bytes, &end) != VRAM_OK || end > c->eoa) {
            vram_msgf(why, cap, "%s: '%s': the chunk at sample %llu lies past the end of the file (the file is "
                      "corrupt or truncated)", c->path, ds->name, (unsigned long long)recs[i].coord[0]);
            bad = why;
        }
    }
    free(recs);
    return bad;
}

static void find_offset(child *c, uint32_t d) {
    vram_h5_dataset *ds = &c->ds[d];
    haddr_t a = H5Dget_offset(c->dset[d]);
    uint64_t total = ds->dims[0] * ds->row_bytes, end; /* checked at open */
    if (a == HADDR_UNDEF) {
        use_hdf5(ds, "its storage was never written (HDF5 supplies the fill value)");
        return;
    }
    ds->offset = (uint64_t)a;
    if ((uint64_t)H5Dget_storage_size(c->dset[d]) != total) {
        use_hdf5(ds, "its storage holds %llu bytes, not %llu", (unsigned long long)H5Dget_storage_size(c->dset[d]),
                 (unsigned long long)total);
        return;
    }
    if (vram__add_u64(ds->offset, total, &end) != VRAM_OK || end > c->eoa || end > c->file_bytes) {
        use_hdf5(ds, "its storage lies past the end of the file");
        return;
    }
    if (confirm_rows(c, d, ds->offset, 0, 0, ds->dims[0]) != 1) {
        use_hdf5(ds, "the bytes at its file offset differ from what HDF5 reads");
        return;
    }
    ds->path = VRAM_H5_PATH_CONTIGUOUS;
}

static const char *filter_name(H5Z_filter_t id, const char *name) {
    return id == H5Z_FILTER_DEFLATE ? "deflate"
           : id == H5Z_FILTER_SHUFFLE ? "shuffle"
           : id == H5Z_FILTER_FLETCHER32 ? "fletcher32"
           : id == H5Z_FILTER_SZIP ? "szip"
           : id == H5Z_FILTER_NBIT ? "nbit"
           : id == H5Z_FILTER_SCALEOFFSET ? "scaleoffset"
           : name[0] ? name : "filter";
}

/* The parameters HDF5 stored for its scale-offset and n-bit filters describe the dataset's
 * own chunks and type: HDF5 1.10 decodes with them unchecked, and with parameters that do
 * not match it leaves part of its output uninitialised (different bytes on every read).
 * NULL, or which filter does not match. */
static const char *filter_params_problem(const vram_h5_dataset *ds, H5Z_filter_t id, const unsigned *cd, size_t ncd,
                                         hid_t dcpl, hid_t ftype) {
    hsize_t chunk[VRAM_H5_MAX_RANK];
    uint64_t nelmts = 1;
    H5T_class_t cls = H5Tget_class(ftype);
    size_t size = H5Tget_size(ftype);
    unsigned order = H5Tget_order(ftype) == H5T_ORDER_BE ? 1u : 0u;
    int atomic = cls == H5T_INTEGER || cls == H5T_FLOAT;
    if (H5Pget_chunk(dcpl, ds->rank, chunk) != ds->rank) return "its chunk shape cannot be read";
    for (int i = 0; i < ds->rank; i++) nelmts *= (uint64_t)chunk[i];
    if (id == H5Z_FILTER_SCALEOFFSET) {
        if (ncd < 8 || cd[2] != nelmts || !atomic || cd[3] != (cls == H5T_FLOAT ? 1u : 0u) || cd[4] != size ||
            cd[6] != order)
            return "scaleoffset";
    } else if (id == H5Z_FILTER_NBIT) {
        if (ncd < 4 || cd[2] != nelmts) return "nbit";
        if (atomic && (ncd < 8 || cd[3] != 1u || cd[4] != size || cd[5] != order || cd[6] == 0 ||
                       (uint64_t)cd[6] + cd[7] > (uint64_t)size * 8u))
            return "nbit";
    }
    return NULL;
}

/* The read path of an opened dataset; VRAM_OK, or an error that refuses the file. */
static vram_status choose_path(child *c, uint32_t d, hid_t dcpl, hid_t ftype, int other_file, char *err) {
    vram_h5_dataset *ds = &c->ds[d];
    H5D_layout_t layout = H5Pget_layout(dcpl);
    int nf = H5Pget_nfilters(dcpl);
    H5Z_filter_t last = -1;
    unsigned last_cd[32];
    size_t last_ncd = 0;
    ds->filters[0] = '\0';
    for (int i = 0; i < nf; i++) {
        unsigned flags = 0, cd[32];
        size_t ncd = 32;
        char name[64] = "";
        H5Z_filter_t id = H5Pget_filter2(dcpl, (unsigned)i, &flags, &ncd, cd, sizeof name, name, NULL);
        for (char *p = name; *p; p++)
            if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f) *p = '?';
        size_t len = strlen(ds->filters);
        snprintf(ds->filters + len, sizeof ds->filters - len, "%s%s", len ? ", " : "", filter_name(id, name));
        last = id;
        last_ncd = ncd < 32 ? ncd : 32;
        memcpy(last_cd, cd, last_ncd * sizeof cd[0]);
        const char *bad = layout == H5D_CHUNKED ? filter_params_problem(ds, id, cd, ncd < 32 ? ncd : 32, dcpl, ftype) : NULL;
        if (bad != NULL) {
            vram_msgf(err, ERR_CAP, "%s: '%s': the parameters of its %s filter do not match its chunks or type "
                      "(the file is corrupt)", c->path, ds->name, bad);
            return VRAM_E_FORMAT;
        }
    }
    switch (layout) {
    case H5D_CONTIGUOUS: snprintf(ds->layout, sizeof ds->layout, "contiguous"); break;
    case H5D_CHUNKED: snprintf(ds->layout, sizeof ds->layout, "chunked"); break;
    case H5D_COMPACT: snprintf(ds->layout, sizeof ds->layout, "compact"); break;
    case H5D_VIRTUAL: snprintf(ds->layout, sizeof ds->layout, "virtual"); break;
    default: snprintf(ds->layout, sizeof ds->layout, "unknown"); break;
    }
    if (layout == H5D_COMPACT) { /* HDF5 1.10 reads the data buffer for as long as the shape says */
        uint64_t need = H5Tget_size(ftype), have = (uint64_t)H5Dget_storage_size(c->dset[d]);
        for (int i = 0; i < ds->rank; i++)
            if (vram__mul_u64(need, ds->dims[i], &need) != VRAM_OK) need = UINT64_MAX;
        if (have != need) {
            vram_msgf(err, ERR_CAP, "%s: '%s': its compact data holds %llu bytes where its shape and type need "
                      "%llu (the file is corrupt)", c->path, ds->name, (unsigned long long)have,
                      (unsigned long long)need);
            return VRAM_E_FORMAT;
        }
    }
    if (layout == H5D_CHUNKED && nf == 0 && !other_file) {
        /* unfiltered chunks are stored whole: a first chunk of another size means a type or
         * layout that does not match the data (HDF5 1.10 reads past the chunk; 2.0 refuses) */
        hsize_t cd[VRAM_H5_MAX_RANK], off[VRAM_H5_MAX_RANK], listed = 0, size = 0;
        haddr_t addr = HADDR_UNDEF;
        unsigned mask = 0;
        uint64_t need = H5Tget_size(ftype);
        hid_t space = H5Dget_space(c->dset[d]);
        int got = H5Pget_chunk(dcpl, ds->rank, cd) == ds->rank && space >= 0 &&
                  H5Dget_num_chunks(c->dset[d], space, &listed) >= 0 && listed > 0 &&
                  H5Dget_chunk_info(c->dset[d], space, 0, off, &mask, &addr, &size) >= 0;
        if (space >= 0) H5Sclose(space);
        for (int i = 0; got && i < ds->rank; i++)
            if (vram__mul_u64(need, (uint64_t)cd[i], &need) != VRAM_OK) need = UINT64_MAX;
        if (got && (uint64_t)size != need) {
            vram_msgf(err, ERR_CAP, "%s: '%s': its first chunk holds %llu bytes where its chunk shape and type "
                      "need %llu (the file is corrupt)", c->path, ds->name, (unsigned long long)size,
                      (unsigned long long)need);
            return VRAM_E_FORMAT;
        }
    }
    if (other_file) {
        use_hdf5(ds, "it lives in another file (an external link)");
        return VRAM_OK;
    }
    if (nf > 0) {
        use_hdf5(ds, "%s filter%s", ds->filters, nf > 1 ? "s" : "");
        char why[ERR_CAP];
        if (layout == H5D_CHUNKED && check_filtered(c, d, last, last_cd, last_ncd, why, sizeof why) != NULL) {
            vram_msgf(err, ERR_CAP, "%s", why);
            return VRAM_E_FORMAT;
        }
        return VRAM_OK;
    }
    if (H5Tequal(c->memtype[d], ftype) <= 0) {
        char ft[96];
        type_name(ftype, ft, sizeof ft);
        use_hdf5(ds, "type conversion (%s in the file, native in memory)", ft);
        return VRAM_OK;
    }
    if (H5Pget_external_count(dcpl) > 0) {
        use_hdf5(ds, "external storage");
        return VRAM_OK;
    }
    if (layout == H5D_CONTIGUOUS)
        find_offset(c, d);
    else if (layout == H5D_CHUNKED)
        find_chunks(c, d, dcpl);
    else
        use_hdf5(ds, "%s layout", ds->layout);
    return VRAM_OK;
}

/* Opens dataset d and describes it. */
static vram_status open_dataset(child *c, uint32_t d, const char *name, unsigned long root_fileno, char *err) {
    vram_h5_dataset *ds = &c->ds[d];
    H5O_info_t info;
    hid_t dcpl = -1, ftype = -1, space = -1, dapl = -1;
    hsize_t dims[VRAM_H5_MAX_RANK];
    vram_status st = VRAM_OK;
    const char *problem;
    char what[ERR_CAP];
    snprintf(ds->name, sizeof ds->name, "%s", name);
    if (strlen(name) >= sizeof ds->name || name[0] == '\0') {
        vram_msgf(err, ERR_CAP, "%s: dataset name '%s' is empty or too long", c->path, name);
        return VRAM_E_INVALID;
    }
    if (H5Oget_info_by_name2(c->file, name, &info, H5O_INFO_BASIC, c->lapl >= 0 ? c->lapl : H5P_DEFAULT) < 0) {
        if (hdf5_reason().no_memory) {
            vram_msgf(what, sizeof what, "%s: '%s'", c->path, name);
            return hdf5_failed(c, err, VRAM_E_FORMAT, what);
        }
        vram_msgf(err, ERR_CAP, "%s: no dataset '%s' in the file", c->path, name);
        return VRAM_E_INVALID;
    }
    if (info.type != H5O_TYPE_DATASET) {
        vram_msgf(err, ERR_CAP, "%s: '%s' is a %s, not a dataset", c->path, name,
                  info.type == H5O_TYPE_GROUP ? "group" : "named datatype");
        return VRAM_E_INVALID;
    }
    dapl = c->lapl >= 0 ? H5Pcopy(c->lapl) : H5Pcreate(H5P_DATASET_ACCESS);
    c->dset[d] = H5Dopen2(c->file, name, dapl >= 0 ? dapl : H5P_DEFAULT);
    if (c->dset[d] < 0) {
        vram_msgf(what, sizeof what, "%s: cannot open dataset '%s'", c->path, name);
        st = hdf5_open_failed(c, err, what);
        goto out;
    }
    space = H5Dget_space(c->dset[d]);
    ftype = H5Dget_type(c->dset[d]);
    dcpl = H5Dget_create_plist(c->dset[d]);
    if (space < 0 || ftype < 0 || dcpl < 0) {
        vram_msgf(what, sizeof what, "%s: cannot read the shape, type or layout of '%s'", c->path, name);
        st = hdf5_open_failed(c, err, what);
        goto out;
    }
    H5S_class_t sc = H5Sget_simple_extent_type(space);
    ds->rank = H5Sget_simple_extent_ndims(space);
    if (sc != H5S_SIMPLE || ds->rank < 1 || ds->rank > VRAM_H5_MAX_RANK) {
        vram_msgf(err, ERR_CAP, "%s: '%s' is %s: it has no sample dimension", c->path, name,
                  sc == H5S_NULL ? "a null dataspace" : sc == H5S_SCALAR ? "a scalar" : "of no usable shape");
        st = VRAM_E_FORMAT;
        goto out;
    }
    hsize_t maxdims[VRAM_H5_MAX_RANK];
    H5Sget_simple_extent_dims(space, dims, maxdims);
    for (int i = 0; i < ds->rank; i++) {
        ds->dims[i] = (uint64_t)dims[i];
        if (maxdims[i] != H5S_UNLIMITED && dims[i] > maxdims[i]) { /* HDF5 2.0 refuses these */
            vram_msgf(err, ERR_CAP, "%s: '%s': dimension %d is %llu, more than its maximum %llu (the file is "
                      "corrupt)", c->path, name, i, (unsigned long long)dims[i], (unsigned long long)maxdims[i]);
            st = VRAM_E_FORMAT;
            goto out;
        }
    }
    type_name(ftype, ds->type, sizeof ds->type);
    if ((problem = type_problem(ftype)) != NULL) {
        vram_msgf(err, ERR_CAP, "%s: '%s' holds %s (type %s): only fixed-size samples can be moved as bytes",
                  c->path, name, problem, ds->type);
        st = VRAM_E_UNHANDLED;
        goto out;
    }
    if ((problem = type_corrupt(ftype)) != NULL) {
        vram_msgf(err, ERR_CAP, "%s: '%s' has a type of %s (type %s): the file is corrupt", c->path, name,
                  problem, ds->type);
        st = VRAM_E_FORMAT;
        goto out;
    }
    if (ds->dims[0] == 0) {
        vram_msgf(err, ERR_CAP, "%s: '%s' is empty (0 samples)", c->path, name);
        st = VRAM_E_INVALID;
        goto out;
    }
    /* what any program reads: the native type (a type HDF5 finds none for is not read as bytes
     * it would not deliver) */
    c->memtype[d] = H5Tget_native_type(ftype, H5T_DIR_ASCEND);
    if (c->memtype[d] < 0) {
        vram_msgf(err, ERR_CAP, "%s: '%s': no native type for %s", c->path, name, ds->type);
        st = VRAM_E_UNHANDLED;
        goto out;
    }
    {
        uint64_t rb = (uint64_t)H5Tget_size(c->memtype[d]), total;
        ds->type_bytes = rb;
        for (int i = 1; i < ds->rank; i++) {
            if (vram__mul_u64(rb, ds->dims[i], &rb) != VRAM_OK) {
                vram_msgf(err, ERR_CAP, "%s: one sample of '%s' is more than 2^64 bytes", c->path, name);
                st = VRAM_E_OVERFLOW;
                goto out;
            }
        }
        ds->row_bytes = rb;
        if (rb == 0) {
            vram_msgf(err, ERR_CAP, "%s: '%s' has samples of 0 bytes (a zero dimension)", c->path, name);
            st = VRAM_E_INVALID;
            goto out;
        }
        if (vram__mul_u64(rb, ds->dims[0], &total) != VRAM_OK) {
            vram_msgf(err, ERR_CAP, "%s: '%s' is more than 2^64 bytes", c->path, name);
            st = VRAM_E_OVERFLOW;
            goto out;
        }
    }
    if ((st = choose_path(c, d, dcpl, ftype, info.fileno != root_fileno, err)) != VRAM_OK) goto out;
    if (ds->path == VRAM_H5_PATH_HDF5 && H5Pget_layout(dcpl) == H5D_CHUNKED && dapl >= 0) {
        /* reads cut HDF5 chunks at range edges: keep two chunks decoded (bounded) */
        hsize_t cd[VRAM_H5_MAX_RANK];
        uint64_t cb = (uint64_t)H5Tget_size(ftype);
        if (H5Pget_chunk(dcpl, ds->rank, cd) == ds->rank) {
            for (int i = 0; i < ds->rank; i++) cb = vram__min_u64(cb * (uint64_t)cd[i], UINT64_C(1) << 40);
            size_t bytes = (size_t)vram__max_u64(UINT64_C(1) << 20, vram__min_u64(2u * cb, UINT64_C(64) << 20));
            H5Pset_chunk_cache(dapl, 521, bytes, 1.0);
            H5Dclose(c->dset[d]);
            c->dset[d] = H5Dopen2(c->file, name, dapl);
            if (c->dset[d] < 0) {
                vram_msgf(what, sizeof what, "%s: cannot reopen dataset '%s'", c->path, name);
                st = hdf5_open_failed(c, err, what);
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

/* The whole description: the file, then each dataset. */
static vram_status describe(child *c, const char *const *names, char *err) {
    hid_t fapl = -1, fcpl = -1;
    hsize_t ub = 0;
    haddr_t eoa = HADDR_UNDEF;
    H5O_info_t root;
    vram_status rc = VRAM_OK;
    char path_for_hdf5[64];
    quiet();
    /* HDF5 opens the file its parent checked (descriptor 4), not whatever the name now is */
    snprintf(path_for_hdf5, sizeof path_for_hdf5, "/proc/self/fd/%d", FILE_FD);
    if (access(path_for_hdf5, R_OK) != 0) snprintf(path_for_hdf5, sizeof path_for_hdf5, "%s", "");
    const char *hpath = path_for_hdf5[0] ? path_for_hdf5 : c->path;
    if (H5Fis_hdf5(hpath) <= 0) {
        if (hdf5_reason().no_memory) return hdf5_failed(c, err, VRAM_E_FORMAT, c->path);
        vram_msgf(err, ERR_CAP, "%s: not an HDF5 file", c->path);
        return VRAM_E_FORMAT;
    }
    fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl >= 0) H5Pset_file_locking(fapl, 0, 1); /* read-only: no locks to take */
    c->file = H5Fopen(hpath, H5F_ACC_RDONLY, fapl >= 0 ? fapl : H5P_DEFAULT);
    if (c->file < 0) {
        char what[ERR_CAP];
        vram_msgf(what, sizeof what, "%s: HDF5 cannot open it", c->path);
        rc = hdf5_failed(c, err, VRAM_E_FORMAT, what);
        goto done;
    }
    /* external links are found beside the file's own name, as any HDF5 program finds them */
    c->lapl = H5Pcreate(H5P_DATASET_ACCESS);
    if (c->lapl >= 0 && path_for_hdf5[0]) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", c->path);
        char *slash = strrchr(dir, '/');
        if (slash == dir) slash[1] = '\0';
        else if (slash) *slash = '\0';
        else snprintf(dir, sizeof dir, ".");
        H5Pset_elink_prefix(c->lapl, dir);
    }
    fcpl = H5Fget_create_plist(c->file);
    if (fcpl >= 0) H5Pget_userblock(fcpl, &ub);
    c->base = (uint64_t)ub;
    if (H5Fget_eoa(c->file, &eoa) < 0 || eoa == HADDR_UNDEF || vram__add_u64((uint64_t)eoa, c->base, &c->eoa) != VRAM_OK)
        c->eoa = 0; /* nothing can be read with pread */
    if (H5Oget_info_by_name2(c->file, "/", &root, H5O_INFO_BASIC, H5P_DEFAULT) < 0) root.fileno = 0;
    for (uint32_t d = 0; d < c->n; d++) {
        rc = open_dataset(c, d, names[d], root.fileno, err);
        if (rc != VRAM_OK) goto done;
        if (d > 0 && c->ds[d].dims[0] != c->ds[0].dims[0]) {
            vram_msgf(err, ERR_CAP, "%s: '%s' has %llu samples and '%s' has %llu: datasets streamed together "
                      "must share their first dimension",
                      c->path, c->ds[0].name, (unsigned long long)c->ds[0].dims[0], c->ds[d].name,
                      (unsigned long long)c->ds[d].dims[0]);
            rc = VRAM_E_INVALID;
            goto done;
        }
    }
done:
    if (fcpl >= 0) H5Pclose(fcpl);
    if (fapl >= 0) H5Pclose(fapl);
    return rc;
}

/* ---- the conversation ---------------------------------------------------------------------- */

static int read_all(int fd, void *p, size_t n) {
    uint8_t *b = (uint8_t *)p;
    while (n > 0) {
        ssize_t r = read(fd, b, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        b += r;
        n -= (size_t)r;
    }
    return 0;
}

static int send_buf(const vram_h5_wbuf *b) {
    const uint8_t *p = b->p;
    size_t n = b->len;
    if (b->nomem) return -1;
    while (n > 0) {
        ssize_t w = send(SOCK, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Reads one message: 0 with *payload malloc'd, 1 at the end of the conversation, -1 on junk. */
static int next_message(uint32_t *kind, uint8_t **payload, uint64_t *len) {
    uint8_t hdr[VRAM_H5_MSG_HEADER];
    ssize_t r;
    *payload = NULL;
    do
        r = read(SOCK, hdr, 1);
    while (r < 0 && errno == EINTR);
    if (r == 0) return 1;
    if (r < 0 || read_all(SOCK, hdr + 1, sizeof hdr - 1) != 0) return -1;
    if (vram_h5_parse_header(hdr, kind, len) != VRAM_OK || *kind == VRAM_H5_MSG_DESCRIBE || *kind == VRAM_H5_MSG_DATA)
        return -1;
    *payload = (uint8_t *)malloc((size_t)*len + 1);
    if (*payload == NULL || read_all(SOCK, *payload, (size_t)*len) != 0) return -1;
    return 0;
}

/* Caps this process's address space at its size now plus `more` bytes. */
static void bound_memory(uint64_t more) {
    unsigned long long pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%llu", &pages) != 1) pages = 0;
        fclose(f);
    }
    uint64_t now = (uint64_t)pages * (uint64_t)sysconf(_SC_PAGESIZE), lim;
    if (vram__add_u64(now, more, &lim) != VRAM_OK) return;
    struct rlimit rl = {(rlim_t)lim, (rlim_t)lim};
    setrlimit(RLIMIT_AS, &rl);
}

static int serve_read(child *c, const uint8_t *p, uint64_t len) {
    vram_h5_rbuf r = {p, (size_t)len, 0, 0};
    uint32_t d = vram_h5_get_u32(&r);
    uint64_t first = vram_h5_get_u64(&r), count = vram_h5_get_u64(&r), bytes = 0;
    char err[ERR_CAP] = "";
    vram_status st = VRAM_OK;
    uint8_t *buf = NULL;
    if (r.bad || d >= c->n || first > c->ds[0].dims[0] || count > c->ds[0].dims[0] - first ||
        vram__mul_u64(count, c->ds[d].row_bytes, &bytes) != VRAM_OK)
        return -1;
    buf = (uint8_t *)malloc(bytes ? (size_t)bytes : 1);
    if (buf == NULL) {
        char b[32];
        sized(b, sizeof b, bytes);
        vram_msgf(err, sizeof err, "%s: %s: no memory in the HDF5 child for %s of rows", c->path, c->ds[d].name, b);
        st = VRAM_E_NOMEM;
    } else {
        alarm(c->timeout_s);
        st = read_rows(c, d, first, count, buf, err);
        alarm(0);
    }
    vram_h5_wbuf w = {0};
    size_t at = vram_h5_begin_msg(&w, VRAM_H5_MSG_DATA);
    vram_h5_put_u32(&w, (uint32_t)(int32_t)st);
    vram_h5_put_str(&w, st == VRAM_OK ? "" : err);
    if (st != VRAM_OK) bytes = 0;
    vram_h5_put_u64(&w, bytes);
    vram_h5_end_msg(&w, at, bytes); /* the rows follow, sent from where they are */
    int rc = send_buf(&w);
    vram_h5_wbuf_free(&w);
    if (rc == 0 && bytes) {
        vram_h5_wbuf data = {buf, (size_t)bytes, (size_t)bytes, 0};
        rc = send_buf(&data);
    }
    free(buf);
    return rc;
}

int vram_h5_child_main(int argc, char **argv) {
    static child c;
    uint32_t kind;
    uint8_t *p = NULL;
    uint64_t len;
    struct stat st;
    (void)argv;
    if (argc != 1 || fstat(SOCK, &st) != 0 || !S_ISSOCK(st.st_mode) || fstat(FILE_FD, &st) != 0) {
        fprintf(stderr, "vramkit: " VRAM_H5_CHILD_COMMAND ": internal command of 'vramkit stream' and "
                        "'vramkit chunks' (the process that reads HDF5 files)\n");
        return 2;
    }
    struct rlimit core = {0, 0};
    setrlimit(RLIMIT_CORE, &core); /* a crash here leaves no core file behind */
    if (next_message(&kind, &p, &len) != 0 || kind != VRAM_H5_MSG_OPEN) return 2;

    vram_h5_rbuf r = {p, (size_t)len, 0, 0};
    static char names_buf[VRAM_STREAM_MAX_DATASETS][VRAM_H5_NAME_MAX];
    const char *names[VRAM_STREAM_MAX_DATASETS];
    c.memory = vram_h5_get_u64(&r);
    c.timeout_s = vram_h5_get_u32(&r);
    c.file_bytes = vram_h5_get_u64(&r);
    c.n = vram_h5_get_u32(&r);
    vram_h5_get_str(&r, c.path, sizeof c.path);
    if (c.n == 0 || c.n > VRAM_STREAM_MAX_DATASETS) return 2;
    for (uint32_t d = 0; d < c.n; d++) {
        vram_h5_get_str(&r, names_buf[d], sizeof names_buf[d]);
        names[d] = names_buf[d];
        c.dset[d] = c.memtype[d] = -1;
    }
    if (r.bad || r.at != r.len) return 2;
    free(p);
    c.chunks_left = VRAM_H5_MAX_CHUNKS;
    c.lapl = -1;
    bound_memory(c.memory);

    char err[ERR_CAP] = "";
    alarm(c.timeout_s);
    vram_status s = describe(&c, names, err);
    alarm(0);
    vram_h5_wbuf w = {0};
    vram_h5_describe_encode(&w, s, s == VRAM_OK ? "" : err, c.ds, c.n);
    if (w.nomem) {
        vram_h5_wbuf_free(&w);
        vram_msgf(err, sizeof err, "%s: no memory in the HDF5 child to describe the file", c.path);
        vram_h5_describe_encode(&w, VRAM_E_NOMEM, err, c.ds, 0);
    }
    if (send_buf(&w) != 0 || s != VRAM_OK) return 0;
    vram_h5_wbuf_free(&w);
    for (uint32_t d = 0; d < c.n; d++) { /* the parent has them; nothing here needs them */
        free(c.ds[d].chunk_addr);
        c.ds[d].chunk_addr = NULL;
    }
    for (;;) {
        int m = next_message(&kind, &p, &len);
        if (m == 1) return 0;
        if (m != 0 || kind != VRAM_H5_MSG_READ || serve_read(&c, p, len) != 0) return 2;
        free(p);
    }
}
