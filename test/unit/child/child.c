/* child.c — the test child: `vramkit_child MODE [ARG]` ends the way MODE says, so the
 * isolation library and `vramkit try` can be tested against every kind of end without a GPU.
 * Core dumps are turned off first (a crash test must not write cores). Modes:
 *   segfault            killed by SIGSEGV (a real invalid write)
 *   abort               abort() -> SIGABRT
 *   sigbus              touches a mapped page past the end of a truncated file -> SIGBUS
 *   sigkill             kills itself with SIGKILL (what the kernel's OOM killer does)
 *   sigterm             kills itself with SIGTERM (a signal that is not a crash)
 *   exit N              exits with code N (default 3)
 *   exit3               exits with code 3
 *   oom                 prints PyTorch's "CUDA out of memory" to stderr, exits 1
 *   illegal             prints "an illegal memory access was encountered", exits 1
 *   not-supported       prints "CUDA driver error: operation not supported", exits 1
 *   sleep [SECONDS]     sleeps (default 60): past any test timeout
 *   ignore-term         ignores SIGTERM, then sleeps 60 s: needs SIGKILL
 *   term-exit           on SIGTERM prints "got SIGTERM" and exits 0; sleeps 60 s
 *   grandchild          forks a grandchild that keeps stdout/stderr open and sleeps 60 s,
 *                       prints "grandchild PID" on stdout, and exits 0 at once
 *   grandchild-closed   same, but the grandchild closes its stdout/stderr first
 *   escape [2]          forks a grandchild that leaves the process group (setsid), with "2"
 *                       forks a great-grandchild from there too; the grandchild prints
 *                       "escaped PID [PID2]" on stdout, both close stdout/stderr and sleep
 *                       60 s; the child exits 0 at once
 *   flood [MB]          writes MB (default 100) MiB to stderr, ends with "flood done\n", exits 0
 *   flood-out [MB]      the same to stdout
 *   close-stdout        closes stdout and stderr at once, sleeps 0.2 s, exits 0
 *   bad-result          prints "VRAMKIT_RESULT {not json" on stdout, exits 0
 *   not-object          prints "VRAMKIT_RESULT [1, 2]" on stdout, exits 0
 *   result              prints a valid VRAMKIT_RESULT line split across two writes with a
 *                       pause between them, then more output, exits 0
 *   crash-unless-cpu S  segfaults unless S is "cpu"; for cpu prints a VRAMKIT_RESULT, exits 0
 *   crash-unless W S    segfaults unless S is W (after printing "crashing: S is not W" to
 *                       stderr); exits 0 when it is
 *   env                 prints VRAMKIT_STRATEGY/DEVICE/DTYPE, TEST_VAR and the cwd, exits 0
 *   args ...            prints each argument on its own line, exits 0
 *   fds                 prints how many descriptors it has open (/proc/self/fd), exits 0
 *   stdin               reads stdin: prints "eof" when it is empty at once, exits 0 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static void nap(double s) {
    struct timespec ts;
    ts.tv_sec = (time_t)s;
    ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static void write_all(int fd, const char *p, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w <= 0) return;
        p += w;
        n -= (size_t)w;
    }
}

static void say(int fd, const char *s) { write_all(fd, s, strlen(s)); }

static void segfault(void) {
    signal(SIGSEGV, SIG_DFL);
    volatile int *volatile p = NULL;
    *p = 1;
    raise(SIGSEGV); /* in case the write did not fault */
}

static void sigbus(void) {
    char path[] = "/tmp/vramkit-child-XXXXXX";
    int fd = mkstemp(path);
    if (fd >= 0) {
        unlink(path);
        if (ftruncate(fd, 4096) == 0) {
            volatile char *m = (volatile char *)mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            if (m != MAP_FAILED && ftruncate(fd, 0) == 0) m[0] = 1; /* past the end: SIGBUS */
        }
    }
    raise(SIGBUS);
}

static void flood(int fd, double mb) {
    static char line[1024];
    memset(line, 'x', sizeof line - 1);
    line[sizeof line - 1] = '\n';
    size_t total = (size_t)(mb * 1024.0 * 1024.0);
    for (size_t done = 0; done < total; done += sizeof line) write_all(fd, line, sizeof line);
    say(fd, "flood done\n");
}

static void grandchild(int close_them) {
    pid_t g = fork();
    if (g == 0) {
        if (close_them) {
            close(1);
            close(2);
        }
        nap(60);
        _exit(0);
    }
    char buf[64];
    snprintf(buf, sizeof buf, "grandchild %d\n", (int)g);
    say(1, buf);
}

static void escape(int twice) {
    if (fork() != 0) return; /* the child: done */
    setsid();
    pid_t gg = -1;
    if (twice && (gg = fork()) == 0) {
        close(1);
        close(2);
        nap(60);
        _exit(0);
    }
    char buf[64];
    if (twice)
        snprintf(buf, sizeof buf, "escaped %d %d\n", (int)getpid(), (int)gg);
    else
        snprintf(buf, sizeof buf, "escaped %d\n", (int)getpid());
    say(1, buf);
    close(1);
    close(2);
    nap(60);
    _exit(0);
}

static void on_term(int sig) {
    (void)sig;
    say(1, "got SIGTERM\n");
    _exit(0);
}

static int count_fds(void) {
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    struct dirent *e;
    if (!d) return -1;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.') n++;
    closedir(d);
    return n - 1; /* the directory's own descriptor */
}

int main(int argc, char **argv) {
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    const char *mode = argc > 1 ? argv[1] : "";
    const char *arg = argc > 2 ? argv[2] : NULL;
    if (strcmp(mode, "segfault") == 0) {
        say(2, "about to segfault\n");
        segfault();
    } else if (strcmp(mode, "abort") == 0) {
        abort();
    } else if (strcmp(mode, "sigbus") == 0) {
        sigbus();
    } else if (strcmp(mode, "sigkill") == 0) {
        raise(SIGKILL);
    } else if (strcmp(mode, "sigterm") == 0) {
        raise(SIGTERM);
    } else if (strcmp(mode, "exit") == 0) {
        return arg ? atoi(arg) : 3;
    } else if (strcmp(mode, "exit3") == 0) {
        return 3;
    } else if (strcmp(mode, "oom") == 0) {
        say(2, "Traceback (most recent call last):\n"
               "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has "
               "a total capacity of 15.77 GiB of which 1.20 GiB is free.\n");
        return 1;
    } else if (strcmp(mode, "illegal") == 0) {
        say(2, "RuntimeError: CUDA error: an illegal memory access was encountered\n"
               "CUDA kernel errors might be asynchronously reported at some other API call\n");
        return 1;
    } else if (strcmp(mode, "not-supported") == 0) {
        say(2, "RuntimeError: CUDA driver error: operation not supported\n");
        return 1;
    } else if (strcmp(mode, "sleep") == 0) {
        nap(arg ? atof(arg) : 60);
        return 0;
    } else if (strcmp(mode, "ignore-term") == 0) {
        signal(SIGTERM, SIG_IGN);
        nap(60);
        return 0;
    } else if (strcmp(mode, "term-exit") == 0) {
        signal(SIGTERM, on_term);
        nap(60);
        return 0;
    } else if (strcmp(mode, "grandchild") == 0 || strcmp(mode, "grandchild-closed") == 0) {
        grandchild(strcmp(mode, "grandchild-closed") == 0);
        return 0;
    } else if (strcmp(mode, "escape") == 0) {
        escape(arg != NULL && strcmp(arg, "2") == 0);
        return 0;
    } else if (strcmp(mode, "flood") == 0) {
        flood(2, arg ? atof(arg) : 100);
        return 0;
    } else if (strcmp(mode, "flood-out") == 0) {
        flood(1, arg ? atof(arg) : 100);
        return 0;
    } else if (strcmp(mode, "close-stdout") == 0) {
        close(1);
        close(2);
        nap(0.2);
        return 0;
    } else if (strcmp(mode, "bad-result") == 0) {
        say(1, "loading\nVRAMKIT_RESULT {not json\n");
        return 0;
    } else if (strcmp(mode, "not-object") == 0) {
        say(1, "VRAMKIT_RESULT [1, 2]\n");
        return 0;
    } else if (strcmp(mode, "result") == 0) {
        say(1, "VRAMKIT_RESULT {\"stale\": true}\nloading\nVRAMKIT_RES");
        nap(0.05);
        say(1, "ULT {\"peak_bytes\": 123456789, \"device\": \"cuda:0\"}\n");
        say(1, "done\n");
        return 0;
    } else if (strcmp(mode, "crash-unless-cpu") == 0) {
        if (arg && strcmp(arg, "cpu") == 0) {
            say(1, "VRAMKIT_RESULT {\"device\": \"cpu\", \"peak_bytes\": 0}\n");
            return 0;
        }
        char buf[128];
        snprintf(buf, sizeof buf, "crashing: strategy %s is not cpu\n", arg ? arg : "(none)");
        say(2, buf);
        segfault();
    } else if (strcmp(mode, "crash-unless") == 0) {
        const char *got = argc > 3 ? argv[3] : "(none)";
        if (arg && strcmp(arg, got) == 0) return 0;
        char buf[256];
        snprintf(buf, sizeof buf, "crashing: %s is not %s\n", got, arg ? arg : "(none)");
        say(2, buf);
        segfault();
    } else if (strcmp(mode, "env") == 0) {
        const char *names[] = {"VRAMKIT_STRATEGY", "VRAMKIT_DEVICE", "VRAMKIT_DTYPE", "TEST_VAR"};
        char cwd[4096];
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
            const char *v = getenv(names[i]);
            printf("%s=%s\n", names[i], v ? v : "(unset)");
        }
        printf("cwd=%s\n", getcwd(cwd, sizeof cwd) ? cwd : "?");
        return 0;
    } else if (strcmp(mode, "args") == 0) {
        for (int i = 2; i < argc; i++) printf("%s\n", argv[i]);
        return 0;
    } else if (strcmp(mode, "fds") == 0) {
        printf("fds %d\n", count_fds());
        return 0;
    } else if (strcmp(mode, "stdin") == 0) {
        char c;
        printf(read(0, &c, 1) == 0 ? "eof\n" : "data\n");
        return 0;
    }
    fprintf(stderr, "vramkit_child: unknown mode '%s'\n", mode);
    return 64;
}
