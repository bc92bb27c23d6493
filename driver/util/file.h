/* driver/util/file.h — files as vramkit opens and writes them, one way for every part: a path
 * read is opened without blocking on what is not a file (a FIFO, a device) and checked to be a
 * regular file (or a directory where one is expected); a file written is written whole to a
 * fresh temporary beside it (O_CREAT|O_EXCL|O_NOFOLLOW: never through a planted link), synced,
 * then renamed over the target; an append-only log is opened without blocking on a FIFO that
 * has no reader. */
#ifndef VRAMKIT_DRIVER_UTIL_FILE_H
#define VRAMKIT_DRIVER_UTIL_FILE_H

#include <stddef.h>
#include <sys/stat.h>

#include <vramkit/base.h>

#define VRAM_OPEN_NOT_FILE (-2) /* vram_open_read: opened, but of another type */

/* Opens path for reading (close-on-exec) with O_NONBLOCK for the open only, so a FIFO or a
 * device cannot block it, and checks its type with fstat: a regular file, or a directory when
 * want_dir. Returns the descriptor (blocking again) with *sb filled (sb may be NULL); -1 when
 * it cannot be opened (errno as open's, *why its text); VRAM_OPEN_NOT_FILE for another type
 * (nothing left open, *why "a FIFO, not a regular file" and the like). why may be NULL. */
int vram_open_read(const char *path, int want_dir, struct stat *sb, const char **why);

/* Writes data[0, len) to path as a whole: a temporary "path.XXXXXX" created in path's
 * directory with O_CREAT|O_EXCL|O_NOFOLLOW (mode 0666 less the umask, as fopen's), written,
 * fsync'ed, renamed over path (a link at path itself is replaced, not followed), the directory
 * synced. VRAM_OK, or VRAM_E_IO (VRAM_E_INVALID for a path too long) with err one line
 * "WHAT PATH: reason"; no temporary is left behind. */
vram_status vram_write_file(const char *path, const char *what, const void *data, size_t len,
                            char *err, size_t cap);

/* Opens path to append lines to (a log: created 0666 less the umask when missing), without
 * blocking: a FIFO that no process reads is refused (ENXIO) instead of waited for. A regular
 * file, a FIFO or a character device; another type is refused. Returns the descriptor
 * (blocking again, close-on-exec), or -1 with *why (errno kept). */
int vram_open_append(const char *path, const char **why);

#endif
