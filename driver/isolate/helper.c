/* driver/isolate/helper.c — a helper process over a socket (helper.h). */
#include "helper.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <vramkit/attempt.h>

#include "isolate.h"
#include "util/clock.h"
#include "util/text.h"

extern char **environ;

static int executable(const char *p) { return access(p, X_OK) == 0; }

/* An object in this file: where it was loaded from is where this code was. */
static const char anchor = 0;

int vram_helper_exe_named(char *out, size_t cap) {
    const char *env = getenv("VRAMKIT_EXE");
    Dl_info info;
    if (env != NULL && env[0] != '\0') return (size_t)snprintf(out, cap, "%s", env) < cap;
    /* a shared library (Python's): the vramkit installed or built beside it */
    if (dladdr(&anchor, &info) != 0 && info.dli_fname != NULL && strstr(info.dli_fname, ".so")) {
        char dir[PATH_MAX];
        const char *slash = strrchr(info.dli_fname, '/');
        size_t n = slash ? (size_t)(slash - info.dli_fname) : 1;
        if (n < sizeof dir) {
            memcpy(dir, slash ? info.dli_fname : ".", n);
            dir[n] = '\0';
            static const char *const rel[] = {"vramkit", "bin/vramkit"};
            for (size_t i = 0; i < 2; i++) {
                if ((size_t)snprintf(out, cap, "%s/%s", dir, rel[i]) < cap && executable(out)) return 1;
            }
        }
    }
    return 0;
}

vram_status vram_helper_exe(char *out, size_t cap, char *err, size_t ecap) {
    const char *env = getenv("VRAMKIT_EXE");
    if (vram_helper_exe_named(out, cap)) return VRAM_OK;
    if (env != NULL && env[0] != '\0') return vram_errorf(err, ecap, VRAM_E_IO, "VRAMKIT_EXE is too long");
    ssize_t n = readlink("/proc/self/exe", out, cap - 1);
    if (n <= 0 || (size_t)n >= cap - 1)
        return vram_errorf(err, ecap, VRAM_E_IO, "cannot find the vramkit command to run HDF5 in a child "
                                                  "(/proc/self/exe: %s): set VRAMKIT_EXE",
                           n < 0 ? strerror(errno) : "path too long");
    out[n] = '\0';
    return VRAM_OK;
}

/* fd moved above the descriptors the child gets, close-on-exec. */
static int lift(int fd) {
    if (fd < 0 || fd > VRAM_HELPER_EXTRA_FD) return fd;
    int up = fcntl(fd, F_DUPFD_CLOEXEC, 10);
    close(fd);
    return up;
}

vram_status vram_helper_start(const char *exe, const char *command, int extra_fd, vram_helper *h,
                              char *err, size_t cap) {
    int sv[2] = {-1, -1}, rc;
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    int have_fa = 0, have_attr = 0;
    h->pid = -1;
    h->sock = -1;
    h->status = -1;
    h->owner = getpid();
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return vram_errorf(err, cap, VRAM_E_IO, "cannot make a socket for the HDF5 child: %s", strerror(errno));
    sv[0] = lift(sv[0]);
    sv[1] = lift(sv[1]);
    int extra = extra_fd >= 0 && extra_fd <= VRAM_HELPER_EXTRA_FD ? fcntl(extra_fd, F_DUPFD_CLOEXEC, 10) : extra_fd;
    if (sv[0] < 0 || sv[1] < 0 || (extra_fd >= 0 && extra < 0)) {
        rc = errno;
        goto fail;
    }
    if ((rc = posix_spawn_file_actions_init(&fa)) != 0) goto fail;
    have_fa = 1;
    rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    if (rc == 0) rc = posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    if (rc == 0) rc = posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    if (rc == 0) rc = posix_spawn_file_actions_adddup2(&fa, sv[1], VRAM_HELPER_SOCKET_FD);
    if (rc == 0 && extra >= 0) rc = posix_spawn_file_actions_adddup2(&fa, extra, VRAM_HELPER_EXTRA_FD);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    /* whatever the caller left without close-on-exec stays here */
    if (rc == 0) rc = posix_spawn_file_actions_addclosefrom_np(&fa, VRAM_HELPER_EXTRA_FD + 1);
#endif
    if (rc != 0) goto fail;
    if ((rc = posix_spawnattr_init(&attr)) != 0) goto fail;
    have_attr = 1;
    /* its own process group: a terminal's Ctrl-C is the caller's to handle, not the helper's */
    rc = vram__isolate_spawnattr(&attr);
    if (rc != 0) goto fail;
    {
        const char *argv[] = {exe, command, NULL};
        pid_t pid;
        rc = posix_spawn(&pid, exe, &fa, &attr, (char *const *)argv, environ);
        if (rc != 0) goto fail;
        h->pid = pid;
    }
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    close(sv[1]);
    if (extra != extra_fd) close(extra);
    h->sock = sv[0];
    return VRAM_OK;
fail:
    if (have_fa) posix_spawn_file_actions_destroy(&fa);
    if (have_attr) posix_spawnattr_destroy(&attr);
    if (sv[0] >= 0) close(sv[0]);
    if (sv[1] >= 0) close(sv[1]);
    if (extra >= 0 && extra != extra_fd) close(extra);
    return vram_errorf(err, cap, VRAM_E_IO, "cannot start the HDF5 child '%s %s': %s", exe, command, strerror(rc));
}

int vram_helper_mine(const vram_helper *h) { return h->owner == getpid(); }

vram_status vram_helper_send(vram_helper *h, const void *p, size_t n) {
    const uint8_t *b = (const uint8_t *)p;
    if (!vram_helper_mine(h)) return VRAM_E_IO;
    while (n > 0) {
        if (h->sock < 0) return VRAM_E_IO;
        ssize_t w = send(h->sock, b, n, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR) continue;
            return VRAM_E_IO;
        }
        b += w;
        n -= (size_t)w;
    }
    return VRAM_OK;
}

vram_status vram_helper_recv(vram_helper *h, void *p, size_t n, double deadline) {
    uint8_t *b = (uint8_t *)p;
    if (!vram_helper_mine(h)) return VRAM_E_IO;
    while (n > 0) {
        if (h->sock < 0) return VRAM_E_IO;
        double left = deadline - vram_now_s();
        if (left <= 0) return VRAM_E_TIMEOUT;
        struct pollfd pf = {h->sock, POLLIN, 0};
        int ms = left > 1e6 ? 1000000000 : (int)(left * 1000.0) + 1;
        int pr = poll(&pf, 1, ms);
        if (pr < 0) {
            if (errno == EINTR) continue;
            return VRAM_E_IO;
        }
        if (pr == 0) continue; /* the deadline is checked above */
        ssize_t r = recv(h->sock, b, n, 0);
        if (r < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            return VRAM_E_IO;
        }
        if (r == 0) return VRAM_E_IO;
        b += r;
        n -= (size_t)r;
    }
    return VRAM_OK;
}

int vram_helper_end(vram_helper *h, double grace, char *how, size_t cap) {
    int sig = 0, killed = 0, status = 0;
    if (h->sock >= 0) {
        close(h->sock);
        h->sock = -1;
    }
    if (h->pid > 0 && !vram_helper_mine(h)) { /* a fork's copy: the child is its parent's */
        h->pid = -1;
        if (how && cap) vram_msgf(how, cap, "left to the process that started it");
        return 0;
    }
    if (h->pid > 0) {
        double until = vram_now_s() + grace;
        pid_t w;
        for (;;) {
            w = waitpid(h->pid, &status, WNOHANG);
            if (w != 0 || vram_now_s() >= until) break;
            struct timespec ts = {0, 2000000};
            nanosleep(&ts, NULL);
        }
        if (w == 0) { /* still running: ours to end */
            kill(-h->pid, SIGKILL);
            kill(h->pid, SIGKILL);
            killed = 1;
            do
                w = waitpid(h->pid, &status, 0);
            while (w < 0 && errno == EINTR);
        }
        kill(-h->pid, SIGKILL); /* anything it left in its group */
        h->status = w == h->pid ? status : -1;
        h->pid = -1;
    }
    if (h->status >= 0 && WIFSIGNALED(h->status) && !killed) sig = WTERMSIG(h->status);
    if (how && cap) {
        if (killed)
            vram_msgf(how, cap, "killed after the deadline");
        else if (h->status < 0)
            vram_msgf(how, cap, "ended (its status is unknown)");
        else if (WIFEXITED(h->status))
            vram_msgf(how, cap, "exit %d", WEXITSTATUS(h->status));
        else if (vram_signal_name(sig) != NULL)
            vram_msgf(how, cap, "%s", vram_signal_name(sig));
        else
            vram_msgf(how, cap, "signal %d", sig);
    }
    return sig;
}
