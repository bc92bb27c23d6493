/* Fuzzes the checks the streaming process applies to what the HDF5 child reports
 * (driver/stream/h5desc.h), the one place where bytes from a process that runs HDF5 on a
 * malformed file come back. First byte even: the rest is a DESCRIBE payload from anywhere;
 * it is refused with one line, or gives datasets named as asked whose every pread range lies
 * inside the file, chunks that do not overlap, and sizes that add up in 64 bits. First byte
 * odd: a description made from the input, as the child would send it, decodes to itself;
 * an error status comes back with its message. No HDF5. */
#include <string.h>

#include "fuzz_common.h"
#include "stream/h5desc.h"

static const char *const names[3] = {"/a", "/b", "/c"};

static int one_line(const char *s) {
    for (; *s; s++)
        if ((unsigned char)*s < 0x20) return 0;
    return 1;
}

static void check_accepted(const vram_h5_dataset *ds, uint32_t n, uint64_t file_bytes, uint64_t samples) {
    for (uint32_t d = 0; d < n; d++) {
        const vram_h5_dataset *x = &ds[d];
        uint64_t rb = x->type_bytes, total, cb;
        FUZZ_CHECK(strcmp(x->name, names[d]) == 0);
        FUZZ_CHECK(x->rank >= 1 && x->rank <= VRAM_H5_MAX_RANK);
        FUZZ_CHECK(x->dims[0] == samples);
        FUZZ_CHECK(one_line(x->type) && one_line(x->layout) && one_line(x->filters) && one_line(x->reason));
        for (int i = 1; i < x->rank; i++) FUZZ_CHECK(vram__mul_u64(rb, x->dims[i], &rb) == VRAM_OK);
        FUZZ_CHECK(rb == x->row_bytes && rb > 0);
        FUZZ_CHECK(vram__mul_u64(rb, x->dims[0], &total) == VRAM_OK);
        switch (x->path) {
        case VRAM_H5_PATH_HDF5: FUZZ_CHECK(x->nchunks == 0 && x->chunk_addr == NULL); break;
        case VRAM_H5_PATH_CONTIGUOUS:
            FUZZ_CHECK(x->nchunks == 0 && x->chunk_addr == NULL);
            FUZZ_CHECK(x->offset <= file_bytes && total <= file_bytes - x->offset);
            break;
        case VRAM_H5_PATH_CHUNKED:
            FUZZ_CHECK(x->chunk_rows >= 1 && x->chunk_addr != NULL);
            FUZZ_CHECK(x->nchunks == vram__div_ceil_u64(x->dims[0], x->chunk_rows));
            FUZZ_CHECK(vram__mul_u64(x->chunk_rows, rb, &cb) == VRAM_OK);
            for (uint64_t k = 0; k < x->nchunks; k++) {
                FUZZ_CHECK(x->chunk_addr[k] <= file_bytes && cb <= file_bytes - x->chunk_addr[k]);
                for (uint64_t j = k + 1; j < x->nchunks && j < k + 64; j++) /* neighbours in the list */
                    FUZZ_CHECK(x->chunk_addr[j] >= x->chunk_addr[k] + cb || x->chunk_addr[k] >= x->chunk_addr[j] + cb);
            }
            break;
        default: FUZZ_CHECK(0);
        }
    }
}

/* Printable bytes from the input into s (cap > 1). */
static void text_from(fuzz_in *in, char *s, size_t cap) {
    size_t n = (size_t)(fuzz_u64(in, 1) % cap);
    for (size_t i = 0; i < n; i++) s[i] = (char)(0x20 + fuzz_u64(in, 1) % 95u);
    s[n] = '\0';
}

/* A description the child could send, from the input; encoded, decoded, compared. */
static void round_trip(fuzz_in *in) {
    static vram_h5_dataset made[3], got[3];
    static uint64_t addr[3][64];
    uint32_t n = 1u + (uint32_t)(fuzz_u64(in, 1) % 3u);
    uint64_t samples = 1u + fuzz_u64(in, 2) % 300u, cursor = fuzz_u64(in, 2), got_samples = 0;
    memset(made, 0, sizeof made);
    memset(got, 0, sizeof got);
    if (fuzz_u64(in, 1) % 8u == 0) { /* an error the child reports */
        static const vram_status sts[] = {VRAM_E_INVALID, VRAM_E_FORMAT, VRAM_E_UNHANDLED, VRAM_E_IO, VRAM_E_NOMEM};
        vram_status st = sts[fuzz_u64(in, 1) % 5u];
        char msg[VRAM_H5_MAX_MESSAGE], err[VRAM_H5_MAX_MESSAGE];
        text_from(in, msg, sizeof msg);
        if (msg[0] == '\0') snprintf(msg, sizeof msg, "x");
        vram_h5_wbuf b = {0};
        vram_h5_describe_encode(&b, st, msg, NULL, 0);
        FUZZ_CHECK(!b.nomem);
        FUZZ_CHECK(vram_h5_describe_decode(b.p + VRAM_H5_MSG_HEADER, b.len - VRAM_H5_MSG_HEADER, names, n, 0, got,
                                           &got_samples, err, sizeof err) == st);
        FUZZ_CHECK(strcmp(err, msg) == 0);
        vram_h5_wbuf_free(&b);
        return;
    }
    for (uint32_t d = 0; d < n; d++) {
        vram_h5_dataset *x = &made[d];
        snprintf(x->name, sizeof x->name, "%s", names[d]);
        x->rank = 1 + (int)(fuzz_u64(in, 1) % 3u);
        x->dims[0] = samples;
        x->type_bytes = 1u + fuzz_u64(in, 1) % 16u;
        x->row_bytes = x->type_bytes;
        for (int i = 1; i < x->rank; i++) {
            x->dims[i] = 1u + fuzz_u64(in, 1) % 5u;
            x->row_bytes *= x->dims[i];
        }
        text_from(in, x->type, sizeof x->type);
        text_from(in, x->layout, sizeof x->layout);
        text_from(in, x->filters, sizeof x->filters);
        x->path = (vram_h5_path)(1 + fuzz_u64(in, 1) % 3u);
        if (x->path == VRAM_H5_PATH_HDF5) text_from(in, x->reason, sizeof x->reason);
        if (x->path == VRAM_H5_PATH_CONTIGUOUS) {
            x->offset = cursor;
            cursor += samples * x->row_bytes + fuzz_u64(in, 1);
        } else if (x->path == VRAM_H5_PATH_CHUNKED) {
            x->chunk_rows = 1u + fuzz_u64(in, 2) % samples;
            x->nchunks = vram__div_ceil_u64(samples, x->chunk_rows);
            if (x->nchunks > 64) {
                x->chunk_rows = vram__div_ceil_u64(samples, 64);
                x->nchunks = vram__div_ceil_u64(samples, x->chunk_rows);
            }
            x->chunk_addr = addr[d];
            for (uint64_t k = 0; k < x->nchunks; k++) { /* in any order, never overlapping */
                uint64_t j = fuzz_u64(in, 1) % (k + 1u);
                addr[d][k] = addr[d][j];
                addr[d][j] = cursor;
                cursor += x->chunk_rows * x->row_bytes + fuzz_u64(in, 1) % 3u;
            }
        }
    }
    uint64_t file_bytes = cursor + fuzz_u64(in, 1);
    vram_h5_wbuf b = {0};
    vram_h5_describe_encode(&b, VRAM_OK, "", made, n);
    FUZZ_CHECK(!b.nomem && b.len >= VRAM_H5_MSG_HEADER);
    uint32_t kind;
    uint64_t len;
    FUZZ_CHECK(vram_h5_parse_header(b.p, &kind, &len) == VRAM_OK && kind == VRAM_H5_MSG_DESCRIBE);
    FUZZ_CHECK(len == b.len - VRAM_H5_MSG_HEADER);
    char err[256];
    vram_status st = vram_h5_describe_decode(b.p + VRAM_H5_MSG_HEADER, (size_t)len, names, n, file_bytes, got,
                                             &got_samples, err, sizeof err);
    FUZZ_CHECK(st == VRAM_OK);
    FUZZ_CHECK(got_samples == samples);
    check_accepted(got, n, file_bytes, got_samples);
    for (uint32_t d = 0; d < n; d++) {
        FUZZ_CHECK(got[d].rank == made[d].rank && got[d].path == made[d].path);
        FUZZ_CHECK(memcmp(got[d].dims, made[d].dims, sizeof got[d].dims) == 0);
        FUZZ_CHECK(strcmp(got[d].type, made[d].type) == 0 && strcmp(got[d].reason, made[d].reason) == 0);
        FUZZ_CHECK(got[d].offset == made[d].offset && got[d].nchunks == made[d].nchunks);
        for (uint64_t k = 0; k < got[d].nchunks; k++) FUZZ_CHECK(got[d].chunk_addr[k] == made[d].chunk_addr[k]);
        vram_h5_dataset_free(&got[d]);
    }
    /* one byte short of the file: a range that ends past it is refused */
    if (file_bytes > 0 && cursor == file_bytes) {
        st = vram_h5_describe_decode(b.p + VRAM_H5_MSG_HEADER, (size_t)len, names, n, file_bytes - 1u, got,
                                     &got_samples, err, sizeof err);
        FUZZ_CHECK(st == VRAM_OK || st == VRAM_E_FORMAT);
        if (st == VRAM_OK)
            for (uint32_t d = 0; d < n; d++) vram_h5_dataset_free(&got[d]);
    }
    vram_h5_wbuf_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static vram_h5_dataset ds[3];
    fuzz_in in = {data, size};
    if (size == 0) return 0;
    uint8_t mode = (uint8_t)fuzz_u64(&in, 1);
    if (mode & 1u) {
        round_trip(&in);
        return 0;
    }
    uint32_t n = 1u + (mode >> 1) % 3u;
    uint64_t file_bytes = fuzz_u64(&in, 4), samples = 0;
    char err[512];
    memset(ds, 0, sizeof ds);
    vram_status st = vram_h5_describe_decode(in.p, in.n, names, n, file_bytes, ds, &samples, err, sizeof err);
    FUZZ_CHECK(one_line(err));
    if (st == VRAM_OK) {
        check_accepted(ds, n, file_bytes, samples);
        for (uint32_t d = 0; d < n; d++) vram_h5_dataset_free(&ds[d]);
    } else {
        FUZZ_CHECK(err[0] != '\0');
        for (uint32_t d = 0; d < n; d++) FUZZ_CHECK(ds[d].chunk_addr == NULL);
    }
    return 0;
}
