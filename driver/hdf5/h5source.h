/* driver/hdf5/h5source.h — datasets of an HDF5 file as a vram_source for the streamer.
 * HDF5 is asked only where the bytes are (shape, type, layout, filters, file offsets);
 * unfiltered data in the file's own layout is then read with pread, by many threads at once,
 * and everything else (compressed, converted) with one large hyperslab read per range. */
#ifndef VRAMKIT_DRIVER_H5SOURCE_H
#define VRAMKIT_DRIVER_H5SOURCE_H

#include <pthread.h>
#include <stdint.h>

#include "stream/stream.h"

#define VRAM_H5_MAX_RANK 32
#define VRAM_H5_NAME_MAX 256

/* How a dataset's rows are read. */
typedef enum vram_h5_path {
    VRAM_H5_PATH_CONTIGUOUS = 1, /* one file offset: row r at offset + r * row_bytes (pread) */
    VRAM_H5_PATH_CHUNKED = 2,    /* chunks of whole rows, each at its file address (pread) */
    VRAM_H5_PATH_HDF5 = 3        /* H5Dread of a hyperslab per range (reason says why) */
} vram_h5_path;

typedef struct vram_h5_dataset {
    char name[VRAM_H5_NAME_MAX]; /* as the user gave it */
    int rank;
    uint64_t dims[VRAM_H5_MAX_RANK];
    uint64_t row_bytes;    /* bytes of one sample in memory: native type size * dims[1..] */
    char type[96];         /* "float32", "int64", "string[12]", "compound (24 bytes)", ... */
    char layout[16];       /* "contiguous", "chunked", "compact", "virtual" */
    char filters[96];      /* "deflate, shuffle", or "" */
    uint64_t chunk_rows;   /* chunked: samples per HDF5 chunk (0 otherwise) */
    vram_h5_path path;
    char reason[192];      /* VRAM_H5_PATH_HDF5: why ("deflate filter", "type conversion ...") */
    uint64_t offset;       /* CONTIGUOUS: the file offset of row 0 */
    uint64_t nchunks;      /* CHUNKED: chunks along the samples, and their file offsets */
    uint64_t *chunk_addr;
    int64_t dset, memtype; /* hid_t */
} vram_h5_dataset;

typedef struct vram_h5_file {
    char path[4096];
    int fd;          /* read-only, for pread */
    int64_t file;    /* hid_t */
    uint64_t samples;
    uint32_t datasets;
    vram_h5_dataset ds[VRAM_STREAM_MAX_DATASETS];
    uint64_t file_bytes; /* size at open */
    int64_t mtime_ns;    /* modification time at open */
    uint64_t ino, dev;
    pthread_mutex_t lock; /* around every HDF5 call made while streaming */
} vram_h5_file;

/* Opens `path` and the n datasets named (1 .. VRAM_STREAM_MAX_DATASETS), checks that they
 * can be streamed together and finds each one's read path. Requires: names[0 .. n) valid.
 * Guarantees: VRAM_OK and *out; or one line in err naming the file and dataset, *out NULL:
 *   VRAM_E_INVALID  no such file, not a regular file, no such dataset (or not a dataset), a
 *                   dataset named twice, an empty dataset, different sample counts;
 *   VRAM_E_FORMAT   not an HDF5 file (or one HDF5 cannot open), no sample dimension;
 *   VRAM_E_UNHANDLED  a type that cannot be moved as bytes (variable-length, reference);
 *   VRAM_E_OVERFLOW a sample larger than 64 bits of bytes;
 *   VRAM_E_IO       any other error opening or reading the file (permissions, truncated). */
vram_status vram_h5_open(const char *path, const char *const *names, uint32_t n,
                         vram_h5_file **out, char *err, size_t cap);

/* The source over f (f must outlive it): samples, row bytes, parallel = 1 for the pread
 * paths, a read per path, and a check that the file is unchanged since open (size,
 * modification time, inode). Read errors name the file, the dataset and the offset. */
vram_source vram_h5_source(vram_h5_file *f);

/* Rows [first, first + count) of dataset d through a plain H5Dread of a hyperslab, in the
 * dataset's native type: what any HDF5 program reads (the --verify reference). */
vram_status vram_h5_read_plain(vram_h5_file *f, uint32_t d, uint64_t first, uint64_t count,
                               void *dst, char *err, size_t cap);

/* "contiguous", "chunked", "hdf5". */
const char *vram_h5_path_name(vram_h5_path p);

/* Closes everything; NULL is a no-op. */
void vram_h5_close(vram_h5_file *f);

#endif /* VRAMKIT_DRIVER_H5SOURCE_H */
