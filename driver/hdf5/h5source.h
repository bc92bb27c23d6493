/* driver/hdf5/h5source.h — datasets of an HDF5 file as a vram_source for the streamer.
 * HDF5 runs in a child process only (`vramkit __h5`, h5child.c): a crash, an endless walk or
 * a memory bomb inside HDF5 on a malformed file costs that child, never the caller. The child
 * says where the bytes are (shape, type, layout, filters, file offsets: stream/h5desc.h, each
 * checked here against the file); unfiltered data in the file's own layout is then read with
 * pread, by many threads at once, and everything else (compressed, converted) by the child,
 * one H5Dread per range.
 *
 * The child: the `vramkit` found by isolate/helper.h (VRAMKIT_EXE, the one beside the
 * shared library, or this program); its memory bounded to VRAMKIT_H5_MEMORY (a size, default
 * 1 GiB, beyond its size at start) and each of its answers to VRAMKIT_H5_TIMEOUT seconds
 * (default 60). It runs while a dataset reads through HDF5, and is started again when
 * vram_h5_read_plain needs it; a program that links the driver and is not vramkit sets
 * VRAMKIT_EXE. */
#ifndef VRAMKIT_DRIVER_H5SOURCE_H
#define VRAMKIT_DRIVER_H5SOURCE_H

#include <pthread.h>
#include <stdint.h>

#include "stream/h5desc.h"
#include "stream/stream.h"
#include "isolate/helper.h"

typedef struct vram_h5_file {
    char path[4096];
    int fd;          /* read-only, for pread */
    uint64_t samples;
    uint32_t datasets;
    vram_h5_dataset ds[VRAM_STREAM_MAX_DATASETS];
    uint64_t file_bytes; /* size at open */
    int64_t mtime_ns;    /* modification time at open */
    uint64_t ino, dev;
    /* the HDF5 child: HDF5 runs there and only there (running while a dataset reads through
     * HDF5, or --verify asks for HDF5's bytes; started again after it ended) */
    vram_helper child;
    double timeout_s;          /* for each answer of the child */
    uint64_t memory_bytes;     /* what HDF5 may allocate in it */
    char child_exe[4096];
    pthread_mutex_t lock;      /* around every exchange with the child */
} vram_h5_file;

/* Opens `path` and the n datasets named (1 .. VRAM_STREAM_MAX_DATASETS), checks that they
 * can be streamed together and finds each one's read path. Requires: names[0 .. n) valid.
 * Chunk addresses are used only where HDF5's own lookup (what H5Dread uses) finds every chunk
 * listed by one walk of the index, once, with its unfiltered size, inside the file; anything
 * less reads through HDF5 (the reason says why).
 * Guarantees: VRAM_OK and *out; or one line in err naming the file and dataset, *out NULL:
 *   VRAM_E_INVALID  no such file, not a regular file, no such dataset (or not a dataset), a
 *                   dataset named twice, an empty dataset, different sample counts, a bad
 *                   VRAMKIT_H5_MEMORY or VRAMKIT_H5_TIMEOUT;
 *   VRAM_E_FORMAT   not an HDF5 file (or one HDF5 cannot open), no sample dimension, a file
 *                   HDF5 crashed on ("HDF5 crashed (SIGSEGV) while reading the file's
 *                   metadata: the file is malformed ..."), one that asked for more memory than
 *                   the bound, filters whose parameters or chunks HDF5 would decode out of
 *                   bounds, a report of the child that fails its checks;
 *   VRAM_E_UNHANDLED  a type that cannot be moved as bytes (variable-length, reference, no
 *                   native type);
 *   VRAM_E_OVERFLOW a sample larger than 64 bits of bytes;
 *   VRAM_E_IO       any other error opening or reading the file (permissions, truncated, the
 *                   file changed while it was opened), the time bound passed, the child could
 *                   not be started or is not vramkit's. */
vram_status vram_h5_open(const char *path, const char *const *names, uint32_t n,
                         vram_h5_file **out, char *err, size_t cap);

/* The source over f (f must outlive it): samples, row bytes, parallel = 1 for the pread
 * paths, a read per path, and a check that the file is unchanged since open (size,
 * modification time, inode). Read errors name the file, the dataset and the offset; a read
 * through HDF5 that crashes or outgrows the bounds is VRAM_E_FORMAT, one past the time bound
 * VRAM_E_IO (as at open). */
vram_source vram_h5_source(vram_h5_file *f);

/* Rows [first, first + count) of dataset d through a plain H5Dread of a hyperslab in the
 * child, in the dataset's native type: what any HDF5 program reads (the --verify reference).
 * A file that changed since open is VRAM_E_IO (what HDF5 read of it is not the file's). */
vram_status vram_h5_read_plain(vram_h5_file *f, uint32_t d, uint64_t first, uint64_t count,
                               void *dst, char *err, size_t cap);

/* "contiguous", "chunked", "hdf5". */
const char *vram_h5_path_name(vram_h5_path p);

/* Closes everything; NULL is a no-op. */
void vram_h5_close(vram_h5_file *f);

#endif /* VRAMKIT_DRIVER_H5SOURCE_H */
