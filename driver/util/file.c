/* driver/util/file.c — see file.h. */
#include "file.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "text.h"

/* "a FIFO", "a directory", ... for a type that is not the one wanted. */
static const char *kind_of(mode_t m) {
    if (S_ISDIR(m)) return "a directory";
    if (S_ISFIFO(m)) return "a FIFO";
    if (S_ISCHR(m)) return "a character device";
    if (S_ISBLK(m)) return "a block device";
    if (S_ISSOCK(m)) return "a socket";
    return "not a regular file";
}

/* Clears O_NONBLOCK again (it was for the open only). */
static int blocking(int fd) {
    int fl = fcntl(fd, F_GETFL);
    return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
}

int vram_open_read(const char *path, int want_dir, struct stat *sb, const char **why) {
    static __thread char text[64];
    struct stat own;
    int fd, e;
    if (sb == NULL) sb = &own;
    fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        e = errno;
        if (why) *why = strerror(e);
        errno = e;
        return -1;
    }
    if (fstat(fd, sb) != 0 || blocking(fd) != 0) {
        e = errno;
        close(fd);
        if (why) *why = strerror(e);
        errno = e;
        return -1;
    }
    if (want_dir ? !S_ISDIR(sb->st_mode) : !S_ISREG(sb->st_mode)) {
        close(fd);
        if (why) {
            const char *k = kind_of(sb->st_mode);
            snprintf(text, sizeof text, "%s%s", k, strncmp(k, "not ", 4) == 0 ? ""
                                                   : want_dir ? ", not a directory"
                                                              : ", not a regular file");
            *why = text;
        }
        errno = want_dir ? ENOTDIR : EINVAL;
        return VRAM_OPEN_NOT_FILE;
    }
    return fd;
}

vram_status vram_write_file(const char *path, const char *what, const void *data, size_t len,
                            char *err, size_t cap) {
    char tmp[PATH_MAX], dir[PATH_MAX];
    const char *p = (const char *)data;
    size_t left = len;
    int fd = -1, e = 0;
    mode_t mask;
    if (snprintf(tmp, sizeof tmp, "%s.XXXXXX", path) >= (int)sizeof tmp ||
        snprintf(dir, sizeof dir, "%s", path) >= (int)sizeof dir)
        return vram_errorf(err, cap, VRAM_E_INVALID, "%s %s: path too long", what, path);
    /* mkstemp's O_CREAT|O_EXCL, and O_NOFOLLOW besides: a link planted at the name is an
       error, never a way to write elsewhere; the mode is fopen's (0666 less the umask) */
    fd = mkostemp(tmp, O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return vram_errorf(err, cap, VRAM_E_IO, "%s %s: %s", what, path, strerror(errno));
    mask = umask(0);
    umask(mask);
    if (fchmod(fd, 0666 & ~mask) != 0) e = errno;
    while (e == 0 && left > 0) {
        ssize_t w = write(fd, p, left);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) {
            e = errno;
            break;
        }
        p += w;
        left -= (size_t)w;
    }
    if (e == 0 && fsync(fd) != 0) e = errno;
    if (close(fd) != 0 && e == 0) e = errno;
    if (e == 0 && rename(tmp, path) != 0) e = errno;
    if (e != 0) {
        unlink(tmp);
        return vram_errorf(err, cap, VRAM_E_IO, "%s %s: %s", what, path, strerror(e));
    }
    /* the rename itself, durable */
    if ((fd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
        fsync(fd);
        close(fd);
    }
    return VRAM_OK;
}

int vram_open_append(const char *path, const char **why) {
    struct stat sb;
    int e, fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, 0666);
    if (fd < 0) {
        e = errno;
        if (why) *why = e == ENXIO ? "a FIFO that no process is reading" : strerror(e);
        errno = e;
        return -1;
    }
    if (fstat(fd, &sb) != 0 || blocking(fd) != 0) {
        e = errno;
        close(fd);
        if (why) *why = strerror(e);
        errno = e;
        return -1;
    }
    if (!S_ISREG(sb.st_mode) && !S_ISFIFO(sb.st_mode) && !S_ISCHR(sb.st_mode)) {
        close(fd);
        if (why) *why = kind_of(sb.st_mode);
        errno = EINVAL;
        return -1;
    }
    return fd;
}
