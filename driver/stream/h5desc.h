/* driver/stream/h5desc.h — what the HDF5 child (`vramkit __h5`, driver/hdf5/h5child.c) tells
 * the process that streams a file, and that process's checks of it. HDF5 runs only in the
 * child; the parent believes nothing it was told until it passes the checks here: counts and
 * lengths bounded, names the ones asked for, sizes that add up in 64 bits, every byte range
 * to be read with pread inside the file. No HDF5 header: this builds, and is fuzzed
 * (test/fuzz/fuzz_h5_desc.c), in every build. */
#ifndef VRAMKIT_DRIVER_H5DESC_H
#define VRAMKIT_DRIVER_H5DESC_H

#include <stddef.h>
#include <stdint.h>

#include <vramkit/base.h>

#define VRAM_H5_MAX_RANK 32
#define VRAM_H5_NAME_MAX 256
/* Chunk addresses the child reports, over all datasets of a file: a dataset past this many
 * reads through HDF5 (32 MiB of addresses). */
#define VRAM_H5_MAX_CHUNKS (UINT64_C(1) << 22)
/* The internal command that runs the child. */
#define VRAM_H5_CHILD_COMMAND "__h5"
/* The HDF5 child program, built and installed beside the vramkit command. */
#define VRAM_H5_PROGRAM "vramkit-h5"

/* How a dataset's rows are read. */
typedef enum vram_h5_path {
    VRAM_H5_PATH_CONTIGUOUS = 1, /* one file offset: row r at offset + r * row_bytes (pread) */
    VRAM_H5_PATH_CHUNKED = 2,    /* chunks of whole rows, each at its file address (pread) */
    VRAM_H5_PATH_HDF5 = 3        /* H5Dread of a hyperslab per range, in the child (reason says why) */
} vram_h5_path;

typedef struct vram_h5_dataset {
    char name[VRAM_H5_NAME_MAX]; /* as the user gave it */
    int rank;
    uint64_t dims[VRAM_H5_MAX_RANK];
    uint64_t type_bytes;   /* bytes of one element in memory (the native type) */
    uint64_t row_bytes;    /* bytes of one sample in memory: type_bytes * dims[1..] */
    char type[96];         /* "float32", "int64", "string[12]", "compound (24 bytes)", ... */
    char layout[16];       /* "contiguous", "chunked", "compact", "virtual" */
    char filters[96];      /* "deflate, shuffle", or "" */
    uint64_t chunk_rows;   /* chunked: samples per HDF5 chunk (0 otherwise) */
    vram_h5_path path;
    char reason[192];      /* VRAM_H5_PATH_HDF5: why ("deflate filter", "type conversion ...") */
    uint64_t offset;       /* CONTIGUOUS: the file offset of row 0 */
    uint64_t nchunks;      /* CHUNKED: chunks along the samples, and their file offsets */
    uint64_t *chunk_addr;
} vram_h5_dataset;

/* ---- messages --------------------------------------------------------------------------
 * A message is a header (magic "VKH5", kind, payload length: 16 bytes, little-endian) and
 * its payload. OPEN (parent -> child: bounds, the file, the datasets), DESCRIBE (child ->
 * parent: a status and message, then each dataset), READ (parent -> child: rows of one
 * dataset), DATA (child -> parent: a status and message, then the rows' bytes). */
enum {
    VRAM_H5_MSG_OPEN = 1,
    VRAM_H5_MSG_DESCRIBE = 2,
    VRAM_H5_MSG_READ = 3,
    VRAM_H5_MSG_DATA = 4
};
#define VRAM_H5_MSG_HEADER 16u
#define VRAM_H5_MSG_MAGIC 0x35484b56u /* "VKH5" */
/* The longest payload of each kind a reader accepts. */
#define VRAM_H5_MAX_OPEN (VRAM_H5_NAME_MAX * 20u + 8192u)
#define VRAM_H5_MAX_DESCRIBE (VRAM_H5_MAX_CHUNKS * 8u + (UINT64_C(1) << 20))
#define VRAM_H5_MAX_MESSAGE 512u /* an error message's bytes */

/* An output buffer that grows; `nomem` once an allocation failed (then nothing more is kept). */
typedef struct vram_h5_wbuf {
    uint8_t *p;
    size_t len, cap;
    int nomem;
} vram_h5_wbuf;

void vram_h5_put_u32(vram_h5_wbuf *b, uint32_t v);
void vram_h5_put_u64(vram_h5_wbuf *b, uint64_t v);
void vram_h5_put_bytes(vram_h5_wbuf *b, const void *p, size_t n);
/* A string: its length (u32), then its bytes (no NUL). */
void vram_h5_put_str(vram_h5_wbuf *b, const char *s);
/* A message header for a payload to follow; vram_h5_end_msg fills in its length: what was
 * put since, plus `extra` bytes to be sent after the buffer. */
size_t vram_h5_begin_msg(vram_h5_wbuf *b, uint32_t kind);
void vram_h5_end_msg(vram_h5_wbuf *b, size_t at, uint64_t extra);
void vram_h5_wbuf_free(vram_h5_wbuf *b);

/* A reader over a payload; `bad` once anything ran past the end or failed a bound. */
typedef struct vram_h5_rbuf {
    const uint8_t *p;
    size_t len, at;
    int bad;
} vram_h5_rbuf;

uint32_t vram_h5_get_u32(vram_h5_rbuf *r);
uint64_t vram_h5_get_u64(vram_h5_rbuf *r);
/* A string into out[0 .. cap): refused (bad) when it does not fit or holds a byte below
 * 0x20 (a NUL, a line break: messages are one line). */
void vram_h5_get_str(vram_h5_rbuf *r, char *out, size_t cap);

/* Parses a message header: VRAM_OK with kind and payload length, VRAM_E_FORMAT for a wrong
 * magic, an unknown kind or a payload longer than that kind's maximum. */
vram_status vram_h5_parse_header(const uint8_t hdr[VRAM_H5_MSG_HEADER], uint32_t *kind, uint64_t *len);

/* ---- DESCRIBE ------------------------------------------------------------------------- */

/* The child's side: status and message, then (VRAM_OK) the n datasets, CHUNKED ones with
 * their chunk addresses. */
void vram_h5_describe_encode(vram_h5_wbuf *b, vram_status st, const char *msg, const vram_h5_dataset *ds,
                             uint32_t n);

/* The parent's side. Requires: p[0 .. len) a DESCRIBE payload, names[0 .. n) the datasets
 * asked for (1 <= n <= 16), ds[0 .. n) zeroed, file_bytes the file's size.
 * Guarantees: the child's status: VRAM_OK with ds[] filled and *samples set, every check
 * below passed, chunk_addr allocated for CHUNKED datasets (free with vram_h5_dataset_free);
 * or the child's error status with its message in err ("" for none); or VRAM_E_FORMAT with
 * "the HDF5 child's report fails a check: WHAT" in err when anything does not hold:
 *   - the payload parses to its end, strings fit their fields and are one line;
 *   - n datasets, named as asked, rank 1 .. 32, type_bytes > 0, row_bytes ==
 *     type_bytes * dims[1] * ... without overflow, dims[0] * row_bytes without overflow,
 *     every dims[0] equal (the samples);
 *   - a known path; CONTIGUOUS: offset + dims[0] * row_bytes <= file_bytes; CHUNKED:
 *     chunk_rows >= 1, nchunks == ceil(dims[0] / chunk_rows) <= VRAM_H5_MAX_CHUNKS over
 *     all, each chunk's chunk_rows * row_bytes bytes inside the file, no two overlapping;
 *   - a status the child may report (VRAM_E_INVALID, _FORMAT, _UNHANDLED, _OVERFLOW, _IO,
 *     _NOMEM) with a message when it is not VRAM_OK.
 * On failure every ds[] is freed and zeroed. */
vram_status vram_h5_describe_decode(const uint8_t *p, size_t len, const char *const *names, uint32_t n,
                                    uint64_t file_bytes, vram_h5_dataset *ds, uint64_t *samples,
                                    char *err, size_t cap);

void vram_h5_dataset_free(vram_h5_dataset *ds);

/* main() of `vramkit __h5`, argv[0] "__h5" (driver/hdf5/h5child.c; without HDF5 it says so and
 * returns 3). Internal: the parent starts it through isolate/helper.h. */
int vram_h5_child_main(int argc, char **argv);

/* The HDF5 child program's path, vramkit-h5 beside the file exe names once symlinks are
 * resolved (exe "/proc/self/exe": this program's), into out. 0, or -1 with errno set (the
 * path cannot be resolved; ENAMETOOLONG past cap). Whether it exists is the caller's check.
 * (driver/hdf5/h5child_exec.c) */
int vram_h5_program_beside(const char *exe, char *out, size_t cap);

#endif /* VRAMKIT_DRIVER_H5DESC_H */
