/* driver/hdf5/h5source.c — HDF5 datasets as a vram_source (h5source.h). This process never
 * calls HDF5: the HDF5 child (h5child.c) describes the file, and reads through H5Dread what
 * must be read that way; what it reports is checked (stream/h5desc.h) before any of it is
 * used. Readers pread the byte ranges of the pread paths without any lock. */
#include "h5source.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/file.h"
#include "util/text.h"

#define DEFAULT_TIMEOUT_S 60.0
#define DEFAULT_MEMORY (UINT64_C(1) << 30)
#define GRACE_S 5.0                       /* the child's own alarm fires first */
#define PIECE_BYTES (UINT64_C(16) << 20) /* rows asked of the child at once */

static int64_t mtime_ns(const struct stat *st) {
    return (int64_t)st->st_mtim.tv_sec * 1000000000 + (int64_t)st->st_mtim.tv_nsec;
}

/* The bounds of the child from the environment. */
static vram_status child_bounds(vram_h5_file *f, char *err, size_t cap) {
    const char *t = getenv("VRAMKIT_H5_TIMEOUT"), *m = getenv("VRAMKIT_H5_MEMORY");
    uint64_t v;
    f->timeout_s = DEFAULT_TIMEOUT_S;
    f->memory_bytes = DEFAULT_MEMORY;
    if (t != NULL && t[0] != '\0') {
        if (vram_parse_u64(t, 86400, &v) != VRAM_OK || v == 0)
            return vram_errorf(err, cap, VRAM_E_INVALID, "VRAMKIT_H5_TIMEOUT: '%s' is not a whole number of "
                               "seconds from 1 to 86400", t);
        f->timeout_s = (double)v;
    }
    if (m != NULL && m[0] != '\0') {
        if (vram_parse_size(m, &v) != VRAM_OK || v < (UINT64_C(16) << 20))
            return vram_errorf(err, cap, VRAM_E_INVALID, "VRAMKIT_H5_MEMORY: '%s' is not a size of at least 16MiB", m);
        f->memory_bytes = v;
    }
    return VRAM_OK;
}

/* Is the file as it was at open (size, modification time, inode)? VRAM_E_IO saying how it
 * changed, else VRAM_OK. */
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

/* A file that changed under HDF5 explains what HDF5 said about it: that change (VRAM_E_IO)
 * in err instead of st and its message. */
static vram_status changed_or(vram_h5_file *f, vram_status st, char *err, size_t cap) {
    char why[VRAM_STREAM_ERR_MAX];
    if (src_check(f, why, sizeof why) == VRAM_OK) return st;
    vram_msgf(err, cap, "%s", why);
    return VRAM_E_IO;
}

/* The child ended (or stopped answering) during `what`: reap it and say so in err. */
static vram_status child_lost(vram_h5_file *f, vram_status recv_st, const char *what, char *err, size_t cap) {
    char how[64];
    int sig = vram_helper_end(&f->child, recv_st == VRAM_E_TIMEOUT ? 0.0 : 1.0, how, sizeof how);
    if (src_check(f, err, cap) != VRAM_OK) return VRAM_E_IO;
    if (recv_st == VRAM_E_TIMEOUT || sig == SIGALRM)
        return vram_errorf(err, cap, VRAM_E_IO, "%s: HDF5 took longer than %.0f s %s and was stopped (a hung file "
                           "system, or a malformed file; VRAMKIT_H5_TIMEOUT sets the limit)",
                           f->path, f->timeout_s, what);
    if (sig != 0)
        return vram_errorf(err, cap, VRAM_E_FORMAT, "%s: HDF5 crashed (%s) %s: the file is malformed (HDF5 runs in "
                           "a child process: the crash cost only that)", f->path, how, what);
    return vram_errorf(err, cap, VRAM_E_IO, "%s: the HDF5 child ('%s " VRAM_H5_CHILD_COMMAND "') ended (%s) %s: "
                       "is it this vramkit's command, with its HDF5 program vramkit-h5 beside it? (VRAMKIT_EXE names "
                       "it)", f->path, f->child_exe, how, what);
}

/* Receives the header of a message of `kind` with at most `max` bytes of payload. */
static vram_status recv_header(vram_h5_file *f, uint32_t want, uint64_t max, uint64_t *len, const char *what,
                               char *err, size_t cap) {
    uint8_t hdr[VRAM_H5_MSG_HEADER];
    uint32_t kind;
    vram_status st = vram_helper_recv(&f->child, hdr, sizeof hdr, vram_now_s() + f->timeout_s + GRACE_S);
    if (st != VRAM_OK) return child_lost(f, st, what, err, cap);
    if (vram_h5_parse_header(hdr, &kind, len) != VRAM_OK || kind != want || *len > max) {
        vram_helper_end(&f->child, 0.0, NULL, 0);
        return vram_errorf(err, cap, VRAM_E_FORMAT, "%s: the HDF5 child's answer %s is not a message it may send "
                           "(HDF5 misbehaved on this file: it is malformed)", f->path, what);
    }
    return VRAM_OK;
}

/* exe (the vramkit command the child would be started as, `vramkit __h5`) replaced by the HDF5
 * program beside the file it names, vramkit-h5, which `vramkit __h5` would exec: one exec less
 * (~1-3 ms of every open, test/bench/RESULTS.md). Unchanged where there is none (a VRAMKIT_EXE
 * that is not a vramkit: its answer is what the caller sees), or where exe is that program. */
static void h5_program_beside(char *exe, size_t cap) {
    char beside[PATH_MAX];
    if (vram_h5_program_beside(exe, beside, sizeof beside) == 0 && access(beside, X_OK) == 0 &&
        strlen(beside) < cap)
        memcpy(exe, beside, strlen(beside) + 1);
}

/* Starts the child and has it describe the n datasets into ds[] (zeroed). */
static vram_status child_start(vram_h5_file *f, const char *const *names, uint32_t n, vram_h5_dataset *ds,
                               uint64_t *samples, char *err, size_t cap) {
    static const char what[] = "while reading the file's metadata";
    vram_status st = vram_helper_start(f->child_exe, VRAM_H5_CHILD_COMMAND, f->fd, &f->child, err, cap);
    if (st != VRAM_OK) return st;
    vram_h5_wbuf w = {0};
    size_t at = vram_h5_begin_msg(&w, VRAM_H5_MSG_OPEN);
    vram_h5_put_u64(&w, f->memory_bytes);
    vram_h5_put_u32(&w, (uint32_t)f->timeout_s);
    vram_h5_put_u64(&w, f->file_bytes);
    vram_h5_put_u32(&w, n);
    vram_h5_put_str(&w, f->path);
    for (uint32_t d = 0; d < n; d++) vram_h5_put_str(&w, names[d]);
    vram_h5_end_msg(&w, at, 0);
    st = w.nomem ? VRAM_E_NOMEM : vram_helper_send(&f->child, w.p, w.len);
    vram_h5_wbuf_free(&w);
    if (st == VRAM_E_NOMEM) {
        vram_helper_end(&f->child, 0.0, NULL, 0);
        return vram_errorf(err, cap, VRAM_E_NOMEM, "out of host memory");
    }
    /* a child that is not ours ends without reading: its answer tells */
    uint64_t len;
    if ((st = recv_header(f, VRAM_H5_MSG_DESCRIBE, VRAM_H5_MAX_DESCRIBE, &len, what, err, cap)) != VRAM_OK) return st;
    uint8_t *p = (uint8_t *)malloc(len ? (size_t)len : 1);
    if (p == NULL) {
        vram_helper_end(&f->child, 0.0, NULL, 0);
        return vram_errorf(err, cap, VRAM_E_NOMEM, "out of host memory for the description of %s", f->path);
    }
    st = vram_helper_recv(&f->child, p, (size_t)len, vram_now_s() + f->timeout_s + GRACE_S);
    if (st != VRAM_OK) {
        free(p);
        return child_lost(f, st, what, err, cap);
    }
    char why[VRAM_STREAM_ERR_MAX];
    st = vram_h5_describe_decode(p, (size_t)len, names, n, f->file_bytes, ds, samples, why, sizeof why);
    free(p);
    if (st == VRAM_E_FORMAT && strncmp(why, "the HDF5 child", 14) == 0)
        vram_msgf(err, cap, "%s: %s (HDF5 misbehaved on this file: it is malformed)", f->path, why);
    else if (st != VRAM_OK)
        vram_msgf(err, cap, "%s", why);
    if (st != VRAM_OK) vram_helper_end(&f->child, 0.0, NULL, 0);
    return st == VRAM_OK ? VRAM_OK : changed_or(f, st, err, cap);
}

/* The child running again for a read (after it was let go, or lost): it must describe the
 * same datasets. Caller holds the lock. */
static vram_status child_ensure(vram_h5_file *f, char *err, size_t cap) {
    /* in a fork of the process that opened the file, that process's child stays its own */
    if (f->child.pid > 0 && !vram_helper_mine(&f->child)) vram_helper_end(&f->child, 0.0, NULL, 0);
    if (f->child.pid > 0) return VRAM_OK;
    const char *names[VRAM_STREAM_MAX_DATASETS];
    vram_h5_dataset *again = (vram_h5_dataset *)calloc(VRAM_STREAM_MAX_DATASETS, sizeof *again);
    uint64_t samples = 0;
    if (again == NULL) return vram_errorf(err, cap, VRAM_E_NOMEM, "out of host memory");
    for (uint32_t d = 0; d < f->datasets; d++) names[d] = f->ds[d].name;
    vram_status st = child_start(f, names, f->datasets, again, &samples, err, cap);
    for (uint32_t d = 0; d < f->datasets && st == VRAM_OK; d++)
        if (samples != f->samples || again[d].row_bytes != f->ds[d].row_bytes || again[d].path != f->ds[d].path)
            st = vram_errorf(err, cap, VRAM_E_IO, "%s: the file changed under the reader (HDF5 now describes "
                             "'%s' differently)", f->path, f->ds[d].name);
    for (uint32_t d = 0; d < f->datasets; d++) vram_h5_dataset_free(&again[d]);
    free(again);
    if (st != VRAM_OK) vram_helper_end(&f->child, 0.0, NULL, 0);
    return st;
}

/* Rows [first, first + count) of dataset d read by the child with H5Dread, in pieces. */
static vram_status child_read(vram_h5_file *f, uint32_t d, uint64_t first, uint64_t count, void *dst,
                              char *err, size_t cap) {
    const vram_h5_dataset *ds = &f->ds[d];
    uint64_t rb = ds->row_bytes, per = vram__max_u64(1u, PIECE_BYTES / rb);
    uint8_t *out = (uint8_t *)dst;
    vram_status st = VRAM_OK;
    char what[160];
    pthread_mutex_lock(&f->lock);
    st = child_ensure(f, err, cap);
    while (st == VRAM_OK && count > 0) {
        uint64_t take = vram__min_u64(count, per), bytes = take * rb, len;
        vram_msgf(what, sizeof what, "reading rows [%llu, %llu) of %s", (unsigned long long)first,
                  (unsigned long long)(first + take), ds->name);
        vram_h5_wbuf w = {0};
        size_t at = vram_h5_begin_msg(&w, VRAM_H5_MSG_READ);
        vram_h5_put_u32(&w, d);
        vram_h5_put_u64(&w, first);
        vram_h5_put_u64(&w, take);
        vram_h5_end_msg(&w, at, 0);
        st = w.nomem ? VRAM_E_NOMEM : vram_helper_send(&f->child, w.p, w.len);
        vram_h5_wbuf_free(&w);
        if (st == VRAM_E_NOMEM) {
            vram_msgf(err, cap, "out of host memory");
            break;
        }
        if (st != VRAM_OK) {
            st = child_lost(f, st, what, err, cap);
            break;
        }
        if ((st = recv_header(f, VRAM_H5_MSG_DATA, 16u + VRAM_H5_MAX_MESSAGE + bytes, &len, what, err, cap)) != VRAM_OK)
            break;
        /* status, message, byte count; then exactly the rows asked for, or none */
        uint8_t head[8 + VRAM_H5_MAX_MESSAGE + 8];
        double deadline = vram_now_s() + f->timeout_s + GRACE_S;
        if ((st = vram_helper_recv(&f->child, head, 8, deadline)) != VRAM_OK) {
            st = child_lost(f, st, what, err, cap);
            break;
        }
        vram_h5_rbuf r = {head, 8, 0, 0};
        int32_t cst = (int32_t)vram_h5_get_u32(&r);
        uint32_t mlen = vram_h5_get_u32(&r);
        if (mlen >= VRAM_H5_MAX_MESSAGE || len != 16u + mlen + (cst == VRAM_OK ? bytes : 0u)) {
            vram_helper_end(&f->child, 0.0, NULL, 0);
            st = vram_errorf(err, cap, VRAM_E_FORMAT, "%s: the HDF5 child's answer %s does not hold what was asked "
                             "(HDF5 misbehaved on this file: it is malformed)", f->path, what);
            break;
        }
        if ((st = vram_helper_recv(&f->child, head + 8, mlen + 8u, deadline)) != VRAM_OK) {
            st = child_lost(f, st, what, err, cap);
            break;
        }
        char msg[VRAM_H5_MAX_MESSAGE];
        r.len = 16u + mlen;
        r.at = 4;
        vram_h5_get_str(&r, msg, sizeof msg);
        uint64_t nbytes = vram_h5_get_u64(&r);
        if (r.bad || (cst == VRAM_OK && nbytes != bytes) || (cst != VRAM_OK && (nbytes != 0 || msg[0] == '\0'))) {
            vram_helper_end(&f->child, 0.0, NULL, 0);
            st = vram_errorf(err, cap, VRAM_E_FORMAT, "%s: the HDF5 child's answer %s does not hold what was asked "
                             "(HDF5 misbehaved on this file: it is malformed)", f->path, what);
            break;
        }
        if (cst != VRAM_OK) {
            st = (vram_status)cst == VRAM_E_FORMAT || (vram_status)cst == VRAM_E_NOMEM ? (vram_status)cst : VRAM_E_IO;
            vram_msgf(err, cap, "%s", msg);
            st = changed_or(f, st, err, cap);
            break;
        }
        if ((st = vram_helper_recv(&f->child, out, (size_t)bytes, deadline + (double)bytes / 1e8)) != VRAM_OK) {
            st = child_lost(f, st, what, err, cap);
            break;
        }
        out += bytes;
        first += take;
        count -= take;
    }
    pthread_mutex_unlock(&f->lock);
    return st;
}

/* ---- opening ----------------------------------------------------------------------------- */

static int needs_child(const vram_h5_file *f) {
    for (uint32_t d = 0; d < f->datasets; d++)
        if (f->ds[d].path == VRAM_H5_PATH_HDF5) return 1;
    return 0;
}

void vram_h5_close(vram_h5_file *f) {
    if (f == NULL) return;
    vram_helper_end(&f->child, 0.0, NULL, 0);
    for (uint32_t d = 0; d < VRAM_STREAM_MAX_DATASETS; d++) vram_h5_dataset_free(&f->ds[d]);
    if (f->fd >= 0) close(f->fd);
    pthread_mutex_destroy(&f->lock);
    free(f);
}

vram_status vram_h5_open(const char *path, const char *const *names, uint32_t n,
                         vram_h5_file **out, char *err, size_t cap) {
    vram_h5_file *f;
    struct stat st;
    vram_status rc;
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
    for (uint32_t i = 0; i < n; i++) {
        if (names[i] == NULL || names[i][0] == '\0' || strlen(names[i]) >= VRAM_H5_NAME_MAX) {
            vram_msgf(err, cap, "%s: dataset name '%.80s' is empty or too long", path, names[i] ? names[i] : "");
            return VRAM_E_INVALID;
        }
        for (uint32_t j = 0; j < i; j++)
            if (strcmp(names[i], names[j]) == 0) {
                vram_msgf(err, cap, "%s: dataset '%s' is given twice", path, names[i]);
                return VRAM_E_INVALID;
            }
    }
    f = (vram_h5_file *)calloc(1, sizeof *f);
    if (f == NULL) {
        vram_msgf(err, cap, "out of host memory");
        return VRAM_E_NOMEM;
    }
    f->fd = -1;
    f->child.pid = -1;
    f->child.sock = -1;
    pthread_mutex_init(&f->lock, NULL);
    if (strlen(path) >= sizeof f->path) {
        vram_msgf(err, cap, "file name too long: %.80s...", path);
        vram_h5_close(f);
        return VRAM_E_INVALID;
    }
    snprintf(f->path, sizeof f->path, "%s", path);
    const char *why = NULL;
    f->fd = vram_open_read(path, 0, &st, &why); /* a FIFO or a device never blocks the open */
    if (f->fd == VRAM_OPEN_NOT_FILE) {
        f->fd = -1;
        vram_msgf(err, cap, "%s: %s", path, why ? why : "not a regular file");
        vram_h5_close(f);
        return VRAM_E_INVALID;
    }
    if (f->fd < 0) {
        int e = errno;
        vram_msgf(err, cap, "%s: %s", path, e == ENOENT ? "no such file" : strerror(e));
        vram_h5_close(f);
        return e == ENOENT || e == ENOTDIR ? VRAM_E_INVALID : VRAM_E_IO;
    }
    f->file_bytes = (uint64_t)st.st_size;
    f->mtime_ns = mtime_ns(&st);
    f->ino = (uint64_t)st.st_ino;
    f->dev = (uint64_t)st.st_dev;
    if ((rc = child_bounds(f, err, cap)) == VRAM_OK &&
        (rc = vram_helper_exe(f->child_exe, sizeof f->child_exe, err, cap)) == VRAM_OK) {
        h5_program_beside(f->child_exe, sizeof f->child_exe);
        if ((rc = child_start(f, names, n, f->ds, &f->samples, err, cap)) == VRAM_OK)
            rc = src_check(f, err, cap); /* a description of the file as it was */
    }
    if (rc != VRAM_OK) {
        vram_h5_close(f);
        return rc;
    }
    f->datasets = n;
    /* nothing to read through HDF5: no child while streaming (--verify starts one again) */
    if (!needs_child(f)) vram_helper_end(&f->child, 0.0, NULL, 0);
    *out = f;
    return VRAM_OK;
}

/* ---- the source ------------------------------------------------------------------------- */

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

static vram_status src_read(void *ctx, uint32_t d, uint64_t first, uint64_t count, void *dst,
                            char *err, size_t cap) {
    vram_h5_file *f = (vram_h5_file *)ctx;
    if (d >= f->datasets || first > f->samples || count > f->samples - first) {
        vram_msgf(err, cap, "%s: rows [%llu, %llu) of dataset %u are out of range", f->path,
            (unsigned long long)first, (unsigned long long)(first + count), d);
        return VRAM_E_RANGE;
    }
    if (f->ds[d].path == VRAM_H5_PATH_HDF5) return child_read(f, d, first, count, dst, err, cap);
    return raw_read_rows(f, d, first, count, dst, err, cap);
}

vram_status vram_h5_read_plain(vram_h5_file *f, uint32_t d, uint64_t first, uint64_t count,
                               void *dst, char *err, size_t cap) {
    if (f == NULL || d >= f->datasets || first > f->samples || count > f->samples - first) {
        vram_msgf(err, cap, "rows [%llu, %llu) of dataset %u are out of range", (unsigned long long)first,
            (unsigned long long)(first + count), d);
        return VRAM_E_RANGE;
    }
    vram_status st = child_read(f, d, first, count, dst, err, cap);
    /* HDF5 reads zeros past the end of a file that shrank: that is the file's fault, and
     * what was read is not HDF5's bytes of the file that was opened */
    if (st == VRAM_OK) st = src_check(f, err, cap);
    return st;
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
