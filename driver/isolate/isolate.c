/* driver/isolate/isolate.c — run one command as an isolated child (see isolate.h).
 * One poll() loop reads both pipes into 64 KiB rings, watches the child through a pidfd
 * (or a short tick where there is none), and walks the timeout: SIGTERM to the group, the
 * grace period, SIGKILL. The child is noticed with waitid(WNOWAIT) and reaped only at the
 * very end, so its pid, which is also its group's id, cannot be reused while we still
 * signal the group. */
#include "isolate.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <dirent.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <cjson/cJSON.h>

#include "util/clock.h"

extern char **environ;

/* The core names signals by their Linux numbers (attempt.h); make sure this platform's
 * <signal.h> uses the same ones, or refuse to build. */
#define VRAM__CHECK_SIGNAL(name, num) \
    _Static_assert(SIG##name == (num), "signal numbers differ from vramkit/attempt.h: SIG" #name);
VRAM_SIGNAL_LIST(VRAM__CHECK_SIGNAL)
#undef VRAM__CHECK_SIGNAL

/* Without a pidfd, the child's end is checked after 1 ms, then at doubling intervals up
 * to this many milliseconds (back to 1 ms whenever its pipes move: an end is near). */
#define ISO_TICK_MS 5
/* How often a cancel flag is looked at (a signal can land just before poll() sleeps). */
#define ISO_CANCEL_MS 100
/* Reads per stream per loop turn, so a child that writes without pause cannot keep the
 * loop from looking at the clock. */
#define ISO_READS_PER_TURN 16
/* How often on_tick runs at least, in milliseconds, when tick_ms is 0. */
#define ISO_HOOK_TICK_MS 100

static void iso_close(int *fd) {
    if (*fd >= 0) {
        close(*fd);
        *fd = -1;
    }
}

/* ---- the VRAMKIT_RESULT scanner ------------------------------------------------------------ */

enum { SCAN_PREFIX, SCAN_AFTER_PREFIX, SCAN_COLLECT, SCAN_SKIP };

static const char iso_prefix[] = VRAM_ISOLATE_RESULT_PREFIX;
#define ISO_PREFIX_LEN (sizeof iso_prefix - 1)

void vram_isolate_scanner_init(vram_isolate_scanner *s) {
    memset(s, 0, sizeof *s);
    s->state = SCAN_PREFIX;
}

void vram_isolate_scanner_free(vram_isolate_scanner *s) {
    free(s->cur);
    free(s->last);
    memset(s, 0, sizeof *s);
    s->state = SCAN_PREFIX;
}

static void scan_append(vram_isolate_scanner *s, const char *p, size_t n) {
    if (s->cur_long || n == 0) return;
    if (n > VRAM_ISOLATE_RESULT_MAX - s->cur_len) {
        s->cur_long = 1;
        return;
    }
    if (s->cur_len + n + 1 > s->cur_cap) {
        size_t cap = s->cur_cap ? s->cur_cap : 256;
        while (cap < s->cur_len + n + 1) cap *= 2;
        if (cap > VRAM_ISOLATE_RESULT_MAX + 1) cap = VRAM_ISOLATE_RESULT_MAX + 1;
        char *b = (char *)realloc(s->cur, cap);
        if (!b) {
            s->no_memory = 1;
            s->cur_long = 1;
            return;
        }
        s->cur = b;
        s->cur_cap = cap;
    }
    memcpy(s->cur + s->cur_len, p, n);
    s->cur_len += n;
}

/* A result line ended: it becomes the last one. */
static void scan_complete(vram_isolate_scanner *s) {
    free(s->last);
    s->last = NULL;
    s->last_len = 0;
    s->last_too_long = s->cur_long;
    if (!s->cur_long) {
        size_t n = s->cur_len;
        if (n > 0 && s->cur[n - 1] == '\r') n--; /* CRLF line ends */
        if (s->cur == NULL) {
            s->last = (char *)malloc(1);
            if (!s->last) s->no_memory = 1;
        } else {
            s->last = s->cur; /* hand the buffer over */
            s->cur = NULL;
            s->cur_cap = 0;
        }
        if (s->last) {
            s->last[n] = '\0';
            s->last_len = n;
        }
    }
    s->cur_len = 0;
    s->cur_long = 0;
    s->state = SCAN_PREFIX;
    s->matched = 0;
}

void vram_isolate_scanner_feed(vram_isolate_scanner *s, const char *data, size_t n) {
    size_t i = 0;
    while (i < n) {
        char c = data[i];
        switch (s->state) {
        case SCAN_PREFIX:
            if (c == iso_prefix[s->matched]) {
                i++;
                if (++s->matched == ISO_PREFIX_LEN) s->state = SCAN_AFTER_PREFIX;
            } else if (c == '\n') {
                i++;
                s->matched = 0;
            } else {
                s->state = SCAN_SKIP;
            }
            break;
        case SCAN_AFTER_PREFIX:
            if (c == '\n') {
                i++;
                scan_complete(s);
            } else if (c == ' ' || c == '\t') {
                i++;
                s->state = SCAN_COLLECT;
            } else if (c == '\r') {
                s->state = SCAN_COLLECT; /* kept, then dropped as the CR of a CRLF */
            } else {
                s->state = SCAN_SKIP;
            }
            break;
        case SCAN_COLLECT: {
            const char *nl = (const char *)memchr(data + i, '\n', n - i);
            size_t take = nl ? (size_t)(nl - (data + i)) : n - i;
            scan_append(s, data + i, take);
            i += take;
            if (nl) {
                i++;
                scan_complete(s);
            }
            break;
        }
        default: { /* SCAN_SKIP: to the end of the line */
            const char *nl = (const char *)memchr(data + i, '\n', n - i);
            if (!nl) {
                i = n;
            } else {
                i = (size_t)(nl - data) + 1;
                s->state = SCAN_PREFIX;
                s->matched = 0;
            }
            break;
        }
        }
    }
}

void vram_isolate_scanner_finish(vram_isolate_scanner *s) {
    if (s->state == SCAN_AFTER_PREFIX || s->state == SCAN_COLLECT) scan_complete(s);
    free(s->cur);
    s->cur = NULL;
    s->cur_len = s->cur_cap = 0;
    s->cur_long = 0;
    s->state = SCAN_PREFIX;
    s->matched = 0;
}

/* ---- parsing the payload ---------------------------------------------------------------- */

static int json_depth(const cJSON *item, int depth, int limit) {
    if (depth > limit) return depth;
    int deepest = depth;
    for (const cJSON *c = item ? item->child : NULL; c; c = c->next) {
        if (c->child) {
            int d = json_depth(c, depth + 1, limit);
            if (d > deepest) deepest = d;
            if (deepest > limit) break;
        }
    }
    return deepest;
}

static const char *json_kind(const cJSON *v) {
    if (cJSON_IsArray(v)) return "an array";
    if (cJSON_IsString(v)) return "a string";
    if (cJSON_IsNumber(v)) return "a number";
    if (cJSON_IsBool(v)) return "a boolean";
    if (cJSON_IsNull(v)) return "null";
    return "not an object";
}

/* Up to 24 bytes of text at `at`, printable ASCII only, for an error message. */
static void snippet(const char *text, size_t len, size_t at, char *out, size_t cap) {
    size_t k = 0;
    for (size_t i = at; i < len && k + 1 < cap && k < 24; i++) {
        unsigned char c = (unsigned char)text[i];
        out[k++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    out[k] = '\0';
}

static int is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

vram_status vram_isolate_parse_result(const char *text, size_t len, cJSON **out, char *err,
                                      size_t cap) {
    char near[32];
    *out = NULL;
    if (cap > 0) err[0] = '\0';
    if (len > VRAM_ISOLATE_RESULT_MAX) {
        if (cap) snprintf(err, cap, "VRAMKIT_RESULT line is longer than %u bytes", VRAM_ISOLATE_RESULT_MAX);
        return VRAM_E_FORMAT;
    }
    size_t b = 0;
    while (b < len && is_blank(text[b])) b++;
    if (b == len) {
        if (cap) snprintf(err, cap, "VRAMKIT_RESULT line is not valid JSON: it is empty");
        return VRAM_E_FORMAT;
    }
    const char *end = NULL;
    cJSON *v = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!v) {
        size_t at = (end && end >= text && end <= text + len) ? (size_t)(end - text) : 0;
        snippet(text, len, at, near, sizeof near);
        if (cap) {
            if (at >= len)
                snprintf(err, cap, "VRAMKIT_RESULT line is not valid JSON: it ends early (%zu bytes)", len);
            else
                snprintf(err, cap, "VRAMKIT_RESULT line is not valid JSON: error at byte %zu near '%s'",
                         at, near);
        }
        return VRAM_E_FORMAT;
    }
    size_t at = (size_t)(end - text);
    while (at < len && is_blank(text[at])) at++;
    if (at < len) {
        snippet(text, len, at, near, sizeof near);
        if (cap)
            snprintf(err, cap, "VRAMKIT_RESULT line is not valid JSON: unexpected text at byte %zu "
                               "after the value: '%s'", at, near);
        cJSON_Delete(v);
        return VRAM_E_FORMAT;
    }
    if (!cJSON_IsObject(v)) {
        if (cap) snprintf(err, cap, "VRAMKIT_RESULT line is not an object (it is %s)", json_kind(v));
        cJSON_Delete(v);
        return VRAM_E_FORMAT;
    }
    if (json_depth(v, 1, VRAM_ISOLATE_RESULT_DEPTH) > VRAM_ISOLATE_RESULT_DEPTH) {
        if (cap) snprintf(err, cap, "VRAMKIT_RESULT object is nested deeper than %d levels",
                          VRAM_ISOLATE_RESULT_DEPTH);
        cJSON_Delete(v);
        return VRAM_E_FORMAT;
    }
    *out = v;
    return VRAM_OK;
}

/* ---- output rings ------------------------------------------------------------------------ */

typedef struct iso_ring {
    char *buf;      /* VRAM_ISOLATE_TAIL_BYTES */
    size_t head;    /* next write position */
    uint64_t total; /* bytes ever written */
} iso_ring;

/* One read into the ring. Returns read()'s result; new bytes are buf[*at, *at + n). */
static ssize_t ring_read(int fd, iso_ring *r, size_t *at) {
    size_t room = VRAM_ISOLATE_TAIL_BYTES - r->head;
    ssize_t n = read(fd, r->buf + r->head, room);
    if (n > 0) {
        *at = r->head;
        r->head = (r->head + (size_t)n) % VRAM_ISOLATE_TAIL_BYTES;
        r->total += (uint64_t)n;
    }
    return n;
}

/* The ring as a plain NUL-terminated buffer, oldest byte first. 0, or -1 without memory. */
static int ring_take(iso_ring *r, vram_isolate_stream *s) {
    size_t cap = VRAM_ISOLATE_TAIL_BYTES;
    size_t len = r->total < cap ? (size_t)r->total : cap;
    s->total = r->total;
    s->len = 0;
    s->data = NULL;
    if (len == 0) return 0;
    s->data = (char *)malloc(len + 1);
    if (!s->data) return -1;
    if (r->total <= cap) {
        memcpy(s->data, r->buf, len);
    } else {
        memcpy(s->data, r->buf + r->head, cap - r->head);
        memcpy(s->data + (cap - r->head), r->buf, r->head);
    }
    s->data[len] = '\0';
    s->len = len;
    return 0;
}

/* ---- spawning ------------------------------------------------------------------------------ */

int vram__isolate_spawnattr(posix_spawnattr_t *attr) {
    /* own process group; no blocked signals; every signal at its default action, since an
     * ignored SIGPIPE or SIGTERM here would otherwise be inherited */
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    sigdelset(&all, SIGKILL);
    sigdelset(&all, SIGSTOP);
    int rc = posix_spawnattr_setflags(attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    if (rc == 0) rc = posix_spawnattr_setpgroup(attr, 0);
    if (rc == 0) rc = posix_spawnattr_setsigmask(attr, &none);
    if (rc == 0) rc = posix_spawnattr_setsigdefault(attr, &all);
    return rc;
}

/* Length of the NAME in "NAME=VALUE", or 0 when the entry has no '=' or an empty name. */
static size_t env_name_len(const char *e) {
    const char *eq = strchr(e, '=');
    return eq ? (size_t)(eq - e) : 0;
}

/* environ without the variables `add` replaces, then `add`. NULL without memory. */
static char **build_env(const char *const *add) {
    size_t n_env = 0, n_add = 0;
    for (char **e = environ; e && *e; e++) n_env++;
    for (const char *const *a = add; a && *a; a++) n_add++;
    char **out = (char **)calloc(n_env + n_add + 1, sizeof *out);
    if (!out) return NULL;
    size_t k = 0;
    for (char **e = environ; e && *e; e++) {
        size_t nl = env_name_len(*e);
        int replaced = 0;
        for (const char *const *a = add; nl && a && *a && !replaced; a++)
            replaced = env_name_len(*a) == nl && strncmp(*a, *e, nl) == 0;
        if (!replaced) out[k++] = *e;
    }
    for (const char *const *a = add; a && *a; a++) {
        /* a later addition of the same name wins: drop earlier ones */
        size_t nl = env_name_len(*a);
        int later = 0;
        for (const char *const *b = a + 1; *b && !later; b++)
            later = env_name_len(*b) == nl && strncmp(*a, *b, nl) == 0;
        if (!later) out[k++] = (char *)*a;
    }
    out[k] = NULL;
    return out;
}

/* A descriptor moved to 3 or above (so dup2 onto 0..2 in the child never meets itself),
 * close-on-exec. Returns the descriptor, or -1 (and closes fd). */
static int fd_high(int fd) {
    if (fd < 0 || fd > 2) return fd;
    int h = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    close(fd);
    return h;
}

static int make_pipe(int p[2]) {
    if (pipe2(p, O_CLOEXEC) != 0) return -1;
    p[0] = fd_high(p[0]);
    p[1] = fd_high(p[1]);
    if (p[0] < 0 || p[1] < 0) {
        iso_close(&p[0]);
        iso_close(&p[1]);
        return -1;
    }
    /* only our end is non-blocking: the child's writes block as usual when the pipe is full */
    int fl = fcntl(p[0], F_GETFL);
    if (fl < 0 || fcntl(p[0], F_SETFL, fl | O_NONBLOCK) != 0) {
        iso_close(&p[0]);
        iso_close(&p[1]);
        return -1;
    }
    return 0;
}

static int valid_seconds(double s) { return isfinite(s) && s >= 0.0 && s <= 1e9; }

static void not_started(vram_isolate_result *res, const char *prog, const char *what, int err) {
    res->how = VRAM_ATTEMPT_NOT_STARTED;
    res->start_errno = err;
    snprintf(res->start_error, sizeof res->start_error, "cannot start '%s': %s%s%s", prog,
             what ? what : "", what ? ": " : "", strerror(err));
}

/* A pidfd for the child (close-on-exec), or -1 where the kernel has none. */
static int open_pidfd(pid_t pid) {
#ifdef SYS_pidfd_open
    long fd = syscall(SYS_pidfd_open, (long)pid, 0L);
    return fd >= 0 ? (int)fd : -1;
#else
    (void)pid;
    return -1;
#endif
}

/* Has the child ended? Looks without reaping it (WNOWAIT). */
static int child_ended(pid_t pid) {
    siginfo_t si;
    memset(&si, 0, sizeof si);
    for (;;) {
        if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0) return si.si_pid == pid;
        if (errno == EINTR) continue;
        return 1; /* ECHILD: someone else reaped it (SIGCHLD ignored); nothing left to wait for */
    }
}

/* Milliseconds from now to `until` for poll(), rounded up; -1 for never. */
static int poll_ms(double now, double until) {
    if (!isfinite(until)) return -1;
    double ms = ceil((until - now) * 1000.0);
    if (ms < 0) return 0;
    if (ms > INT_MAX) return INT_MAX;
    return (int)ms;
}

/* ---- descendants that left the child's process group (reap_descendants) ---------------- */

/* At most this many rounds of killing (each kill reparents the victim's children here) and
 * this many children looked at per round. */
#define ISO_REAP_ROUNDS 64
#define ISO_REAP_MAX 1024

/* The pids of this process's children, from /proc/self/task/TID/children (one file per
 * thread: an orphan goes to whichever thread adopts it). Returns how many (at most max),
 * or -1 when the kernel offers no such file. */
static int list_children(pid_t *pids, int max) {
    DIR *dir = opendir("/proc/self/task");
    struct dirent *de;
    int n = 0, found_file = 0;
    if (dir == NULL) return -1;
    while ((de = readdir(dir)) != NULL && n < max) {
        char path[64];
        FILE *f;
        long v;
        if (de->d_name[0] < '0' || de->d_name[0] > '9') continue;
        snprintf(path, sizeof path, "/proc/self/task/%.20s/children", de->d_name);
        if ((f = fopen(path, "re")) == NULL) continue;
        found_file = 1;
        while (n < max && fscanf(f, "%ld", &v) == 1)
            if (v > 0) pids[n++] = (pid_t)v;
        fclose(f);
    }
    closedir(dir);
    return found_file ? n : -1;
}

/* Kills and reaps every child this process has (after the attempt's own child was reaped,
 * those are processes it left behind outside its group, reparented here by the subreaper
 * flag), round after round until none is left. Returns how many were found, -1 when they
 * cannot be listed. */
static int reap_escaped(void) {
    pid_t pids[ISO_REAP_MAX];
    int found = 0;
    for (int round = 0; round < ISO_REAP_ROUNDS; round++) {
        int n = list_children(pids, ISO_REAP_MAX);
        if (n < 0) return round == 0 ? -1 : found;
        if (n == 0) break;
        for (int i = 0; i < n; i++) kill(pids[i], SIGKILL);
        for (int i = 0; i < n; i++) {
            pid_t w;
            do {
                w = waitpid(pids[i], NULL, 0);
            } while (w < 0 && errno == EINTR);
            if (w == pids[i]) found++;
        }
    }
    return found;
}

/* ---- the guard (guard_exe): the child's group dies with this process ------------------ */

/* Starts `exe __guard PGID` in a group of its own with the read end of a new pipe as its
 * stdin; *wfd gets the write end (close-on-exec: no other child holds it), *gpid its pid.
 * Leaves both -1 when it cannot be started. */
static void start_guard(const char *exe, pid_t pgid, int *wfd, pid_t *gpid) {
    int p[2], rc;
    char num[32];
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    sigset_t none, all;
    *wfd = -1;
    *gpid = -1;
    if (pipe2(p, O_CLOEXEC) != 0) return;
    snprintf(num, sizeof num, "%ld", (long)pgid);
    char *const argv[] = {(char *)exe, (char *)VRAM_GUARD_COMMAND, num, NULL};
    sigemptyset(&none);
    sigfillset(&all);
    sigdelset(&all, SIGKILL);
    sigdelset(&all, SIGSTOP);
    if (posix_spawn_file_actions_init(&fa) != 0) goto fail_pipe;
    if (posix_spawnattr_init(&attr) != 0) {
        posix_spawn_file_actions_destroy(&fa);
        goto fail_pipe;
    }
    rc = posix_spawn_file_actions_adddup2(&fa, p[0], 0);
    if (rc == 0) rc = posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    if (rc == 0) rc = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                                          POSIX_SPAWN_SETSIGDEF);
    if (rc == 0) rc = posix_spawnattr_setpgroup(&attr, 0);
    if (rc == 0) rc = posix_spawnattr_setsigmask(&attr, &none);
    if (rc == 0) rc = posix_spawnattr_setsigdefault(&attr, &all);
    if (rc == 0) rc = posix_spawn(gpid, exe, &fa, &attr, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    if (rc != 0) {
        *gpid = -1;
        goto fail_pipe;
    }
    close(p[0]);
    *wfd = p[1];
    return;
fail_pipe:
    close(p[0]);
    close(p[1]);
}

/* Ends the guard without its kill: SIGKILL (it acts only on end of file, which comes only
 * after this), reaped, then the pipe closed. */
static void stop_guard(int *wfd, pid_t *gpid) {
    if (*gpid > 0) {
        pid_t w;
        kill(*gpid, SIGKILL);
        do {
            w = waitpid(*gpid, NULL, 0);
        } while (w < 0 && errno == EINTR);
    }
    *gpid = -1;
    iso_close(wfd);
}

/* Makes this process a child subreaper (once; it stays for the life of the process). */
static int become_subreaper(void) {
#ifdef PR_SET_CHILD_SUBREAPER
    static int done;
    if (!done && prctl(PR_SET_CHILD_SUBREAPER, 1L, 0L, 0L, 0L) == 0) done = 1;
    return done ? 0 : -1;
#else
    return -1;
#endif
}

vram_status vram_isolate_run(const vram_isolate_opts *o, vram_isolate_result *res) {
    if (o == NULL || res == NULL) return VRAM_E_INVALID;
    memset(res, 0, sizeof *res);
    res->exit_code = -1;
    res->pid = -1;
    if (o->argv == NULL || o->argv[0] == NULL || o->argv[0][0] == '\0') return VRAM_E_INVALID;
    if (!valid_seconds(o->timeout_s) || !valid_seconds(o->grace_s) || !valid_seconds(o->drain_s) ||
        o->tick_ms < 0)
        return VRAM_E_INVALID;
    for (const char *const *a = o->env; a && *a; a++)
        if (env_name_len(*a) == 0) return VRAM_E_INVALID;
#if !(defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 29)))
    if (o->cwd) return VRAM_E_NOT_SUPPORTED;
#endif
    if (o->reap_descendants && become_subreaper() != 0) return VRAM_E_NOT_SUPPORTED;
    const char *prog = o->argv[0];
    double grace = o->grace_s > 0 ? o->grace_s : VRAM_ISOLATE_DEFAULT_GRACE_S;
    double drain = o->drain_s > 0 ? o->drain_s : VRAM_ISOLATE_DEFAULT_DRAIN_S;
    int tick_ms = o->tick_ms > 0 ? o->tick_ms : ISO_HOOK_TICK_MS;

    iso_ring rings[2];
    memset(rings, 0, sizeof rings);
    vram_isolate_scanner scan;
    vram_isolate_scanner_init(&scan);
    int outp[2] = {-1, -1}, errp[2] = {-1, -1}, pidfd = -1, guard_fd = -1;
    pid_t guard_pid = -1;
    char **envp = NULL;
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    int have_fa = 0, have_attr = 0, rc;
    double t0 = vram_now_s();

    rings[0].buf = (char *)malloc(VRAM_ISOLATE_TAIL_BYTES);
    rings[1].buf = (char *)malloc(VRAM_ISOLATE_TAIL_BYTES);
    envp = build_env(o->env);
    if (!rings[0].buf || !rings[1].buf || !envp) {
        not_started(res, prog, "out of memory", ENOMEM);
        goto done;
    }
    if (make_pipe(outp) != 0 || make_pipe(errp) != 0) {
        not_started(res, prog, "pipe", errno);
        goto done;
    }
    if ((rc = posix_spawn_file_actions_init(&fa)) != 0) {
        not_started(res, prog, "spawn set-up", rc);
        goto done;
    }
    have_fa = 1;
    rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    if (rc == 0) rc = posix_spawn_file_actions_adddup2(&fa, outp[1], 1);
    if (rc == 0) rc = posix_spawn_file_actions_adddup2(&fa, errp[1], 2);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    /* nothing but 0, 1, 2 reaches the child, whatever the caller left without CLOEXEC */
    if (rc == 0) rc = posix_spawn_file_actions_addclosefrom_np(&fa, 3);
#endif
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 29))
    if (rc == 0 && o->cwd) rc = posix_spawn_file_actions_addchdir_np(&fa, o->cwd);
#endif
    if (rc != 0) {
        not_started(res, prog, "spawn set-up", rc);
        goto done;
    }
    if ((rc = posix_spawnattr_init(&attr)) != 0) {
        not_started(res, prog, "spawn set-up", rc);
        goto done;
    }
    have_attr = 1;
    rc = vram__isolate_spawnattr(&attr);
    if (rc != 0) {
        not_started(res, prog, "spawn set-up", rc);
        goto done;
    }

    pid_t pid;
    t0 = vram_now_s();
    /* glibc reports a failed exec through the return value (the child is a vfork that
     * shares the error), so "no such program" is known here, not as exit code 127 */
    rc = posix_spawnp(&pid, prog, &fa, &attr, (char *const *)o->argv, envp);
    iso_close(&outp[1]);
    iso_close(&errp[1]);
    if (rc != 0) {
        not_started(res, prog, NULL, rc);
        goto done;
    }
    res->pid = pid;
    if (!o->no_pidfd) pidfd = open_pidfd(pid);
    if (o->guard_exe) start_guard(o->guard_exe, pid, &guard_fd, &guard_pid);

    {
        int fds[2] = {outp[0], errp[0]};
        double deadline = o->timeout_s > 0 ? t0 + o->timeout_s : INFINITY;
        double kill_at = INFINITY, drain_until = INFINITY, ended_at = 0;
        int ended = 0, tick = 1;
        outp[0] = errp[0] = -1; /* owned by fds[] now */
        for (;;) {
            double now = vram_now_s();
            if (!ended && child_ended(pid)) {
                ended = 1;
                ended_at = now;
                drain_until = now + drain;
                iso_close(&pidfd);
            }
            if (!ended && o->on_tick != NULL) {
                int f = o->on_tick(o->hook_ctx, pid);
                if ((f & VRAM_ISOLATE_TICK_NO_TIMEOUT) && !res->sent_term) deadline = INFINITY;
                now = vram_now_s();
            }
            int cancel = o->cancel != NULL && *o->cancel != 0;
            if (!ended && !res->sent_term && (now >= deadline || cancel)) {
                res->cancelled = now < deadline;
                kill(-pid, SIGTERM);
                kill(-pid, SIGCONT); /* a stopped member could not act on SIGTERM */
                res->sent_term = 1;
                kill_at = now + grace;
            }
            if (!ended && res->sent_term && !res->sent_kill && now >= kill_at) {
                kill(-pid, SIGKILL);
                res->sent_kill = 1;
            }
            if (ended && fds[0] < 0 && fds[1] < 0) break;
            if (ended && now >= drain_until) {
                res->leftovers = 1;
                break;
            }

            double until = INFINITY;
            if (ended) until = drain_until;
            else if (!res->sent_term) until = deadline;
            else if (!res->sent_kill) until = kill_at;
            int ms = poll_ms(now, until);
            if (!ended && pidfd < 0 && (ms < 0 || ms > tick)) ms = tick;
            if (o->cancel && !res->sent_term && (ms < 0 || ms > ISO_CANCEL_MS)) ms = ISO_CANCEL_MS;
            if (!ended && o->on_tick != NULL && (ms < 0 || ms > tick_ms)) ms = tick_ms;

            struct pollfd pf[3];
            int np = 0, idx[3];
            for (int k = 0; k < 2; k++) {
                if (fds[k] < 0) continue;
                pf[np].fd = fds[k];
                pf[np].events = POLLIN;
                pf[np].revents = 0;
                idx[np++] = k;
            }
            if (!ended && pidfd >= 0) {
                pf[np].fd = pidfd;
                pf[np].events = POLLIN;
                pf[np].revents = 0;
                idx[np++] = 2;
            }
            int n = poll(pf, (nfds_t)np, ms);
            if (n < 0) {
                if (errno == EINTR) continue;
                /* cannot wait properly: end it rather than spin or hang */
                if (!ended && !res->sent_kill) {
                    kill(-pid, SIGKILL);
                    res->sent_kill = 1;
                }
                usleep(1000);
                continue;
            }
            if (n == 0 && tick < ISO_TICK_MS) tick = tick * 2 > ISO_TICK_MS ? ISO_TICK_MS : tick * 2;
            if (n > 0) tick = 1;
            for (int q = 0; q < np; q++) {
                int k = idx[q];
                if (k == 2 || pf[q].revents == 0) continue;
                for (int r = 0; r < ISO_READS_PER_TURN && fds[k] >= 0; r++) {
                    size_t at = 0;
                    ssize_t got = ring_read(fds[k], &rings[k], &at);
                    if (got > 0) {
                        if (k == 0) vram_isolate_scanner_feed(&scan, rings[0].buf + at, (size_t)got);
                        if (o->on_output != NULL)
                            o->on_output(o->hook_ctx, k + 1, rings[k].buf + at, (size_t)got);
                        continue;
                    }
                    if (got < 0 && errno == EINTR) continue;
                    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
                    iso_close(&fds[k]); /* end of file, or an error: nothing more comes */
                }
            }
        }
        /* The child has ended but is not reaped, so its pid still names its group: nothing
         * else can have taken the number. Whatever it left there dies now. */
        kill(-pid, SIGKILL);
        stop_guard(&guard_fd, &guard_pid);
        iso_close(&fds[0]);
        iso_close(&fds[1]);
        iso_close(&pidfd);
        int status = 0;
        pid_t w;
        do {
            w = waitpid(pid, &status, 0);
        } while (w < 0 && errno == EINTR);
        res->seconds = ended_at - t0;
        if (w == pid && WIFEXITED(status)) {
            res->how = VRAM_ATTEMPT_EXITED;
            res->exit_code = WEXITSTATUS(status);
        } else if (w == pid && WIFSIGNALED(status)) {
            res->how = VRAM_ATTEMPT_SIGNALED;
            res->signal = WTERMSIG(status);
            res->signal_name = vram_signal_name(res->signal);
        } else {
            res->how = VRAM_ATTEMPT_EXITED; /* reaped elsewhere: status unknown */
            res->exit_code = -1;
        }
        if (res->sent_term) res->how = VRAM_ATTEMPT_TIMED_OUT;
        if (o->reap_descendants) res->escaped = reap_escaped();
    }

done:
    if (res->how == VRAM_ATTEMPT_NOT_STARTED) res->seconds = vram_now_s() - t0;
    iso_close(&outp[0]);
    iso_close(&outp[1]);
    iso_close(&errp[0]);
    iso_close(&errp[1]);
    iso_close(&pidfd);
    if (have_fa) posix_spawn_file_actions_destroy(&fa);
    if (have_attr) posix_spawnattr_destroy(&attr);
    free(envp);
    vram_isolate_scanner_finish(&scan);
    if (res->how != VRAM_ATTEMPT_NOT_STARTED) {
        if (ring_take(&rings[0], &res->out) != 0 || ring_take(&rings[1], &res->err) != 0) {
            /* keep what fits: the outcome matters more than the text */
            free(res->out.data);
            free(res->err.data);
            res->out.data = res->err.data = NULL;
            res->out.len = res->err.len = 0;
        }
        res->result_line = scan.last;
        res->result_len = scan.last_len;
        res->result_too_long = scan.last_too_long;
        scan.last = NULL;
    }
    vram_isolate_scanner_free(&scan);
    free(rings[0].buf);
    free(rings[1].buf);
    return VRAM_OK;
}

void vram_isolate_result_free(vram_isolate_result *res) {
    if (!res) return;
    free(res->out.data);
    free(res->err.data);
    free(res->result_line);
    res->out.data = res->err.data = res->result_line = NULL;
    res->out.len = res->err.len = res->result_len = 0;
}

vram_attempt_end vram_isolate_end(const vram_isolate_result *res) {
    vram_attempt_end e;
    memset(&e, 0, sizeof e);
    e.how = res->how;
    e.exit_code = res->exit_code;
    e.signal = res->signal;
    e.tail = res->err.data;
    e.tail_len = res->err.len;
    return e;
}
