/* service.c — the scripted service of the `vramkit run` tests: `vramkit_service STRATEGY
 * [KEY=VALUE...]` loads, becomes ready, serves and dies as the keys say, so the supervisor
 * can be tested against each way a service ends without a GPU. Keys:
 *   crash=S,S...    under these strategies: segfault while loading
 *   oom=S,...       under these: print PyTorch's CUDA out-of-memory message, exit 1
 *   hang=S,...      under these: never ready (sleeps)
 *   ready=line|regex|port:N|file:PATH   how it says it is ready (default line: prints
 *                   VRAMKIT_READY; regex: prints "Application startup complete." on stderr;
 *                   port: listens on 127.0.0.1:N; file: creates PATH)
 *   die=crash|oom|sticky|exit:N   what it does die_ms (default 100) after ready; default: serve
 *   die.S=...       the same under strategy S only (wins over die=)
 *   die_runs=K      only its first K ready runs die (needs count=)
 *   count=PATH      appends one line per start to PATH (the runs so far are its lines)
 *   pid=PATH        writes its pid to PATH at start
 *   term_exit=N     the exit code after SIGTERM or SIGINT (default 0)
 *   grandchild=1    at ready forks a grandchild that sleeps in its process group; prints
 *                   "service: grandchild PID"
 *   ignore_term=1   SIGTERM and SIGINT are printed and ignored: only SIGKILL ends it
 *   partial=N       after ready, N bytes 'x' on stdout without a line end (flushed), then
 *                   serves (a line that never ends)
 * Always: prints "service: start STRATEGY attempt A" first; at ready "service: fds N" (the
 * descriptors it has open, from /proc/self/fd); on SIGUSR1, SIGUSR2 and SIGHUP prints
 * "service: got SIGNAME" and serves on; on SIGTERM and SIGINT prints it and exits term_exit;
 * ends by itself after 60 s of serving (exit 0), so no test can hang on it. */
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t got[65];

static void on_sig(int s) { got[s] = 1; }

static void nap_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static const char *arg(int argc, char **argv, const char *key) {
    size_t kl = strlen(key);
    for (int i = 2; i < argc; i++)
        if (strncmp(argv[i], key, kl) == 0 && argv[i][kl] == '=') return argv[i] + kl + 1;
    return NULL;
}

/* Is s one of the comma-separated items of list? */
static int listed(const char *list, const char *s) {
    size_t n = strlen(s);
    for (const char *p = list; p && *p;) {
        const char *c = strchr(p, ',');
        size_t l = c ? (size_t)(c - p) : strlen(p);
        if (l == n && strncmp(p, s, n) == 0) return 1;
        if (!c) break;
        p = c + 1;
    }
    return 0;
}

static int count_lines(const char *path) {
    FILE *f = fopen(path, "r");
    int n = 0, c;
    if (!f) return 0;
    while ((c = fgetc(f)) != EOF) n += c == '\n';
    fclose(f);
    return n;
}

static int open_fds(void) {
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    struct dirent *e;
    if (!d) return -1;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.') n++;
    closedir(d);
    return n - 1; /* not the directory's own */
}

int main(int argc, char **argv) {
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    if (argc < 2) {
        fprintf(stderr, "usage: vramkit_service STRATEGY [KEY=VALUE...]\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *s = argv[1];
    const char *v;
    int runs = 0;
    int term_exit = (v = arg(argc, argv, "term_exit")) ? atoi(v) : 0;
    static const int sigs[] = {SIGUSR1, SIGUSR2, SIGHUP, SIGTERM, SIGINT};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) signal(sigs[i], on_sig);

    if ((v = arg(argc, argv, "pid"))) {
        FILE *f = fopen(v, "w");
        if (f) {
            fprintf(f, "%ld\n", (long)getpid());
            fclose(f);
        }
    }
    if ((v = arg(argc, argv, "count"))) {
        FILE *f = fopen(v, "a");
        if (f) {
            fprintf(f, "%s\n", s);
            fclose(f);
        }
        runs = count_lines(v);
    }
    printf("service: start %s attempt %s\n", s, getenv("VRAMKIT_ATTEMPT") ? getenv("VRAMKIT_ATTEMPT") : "?");
    if (listed(arg(argc, argv, "crash"), s)) {
        fprintf(stderr, "service: crashing while loading %s\n", s);
        volatile int *p = NULL;
        *p = 1;
    }
    if (listed(arg(argc, argv, "oom"), s)) {
        fprintf(stderr, "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n");
        return 1;
    }
    if (listed(arg(argc, argv, "hang"), s)) {
        for (int i = 0; i < 6000 && !got[SIGTERM]; i++) nap_ms(10);
        return 0;
    }

    /* ready */
    const char *how = (v = arg(argc, argv, "ready")) ? v : "line";
    int lfd = -1;
    nap_ms(20);
    printf("service: fds %d\n", open_fds());
    if (strcmp(how, "line") == 0) {
        printf("VRAMKIT_READY serving %s\n", s);
    } else if (strcmp(how, "regex") == 0) {
        fprintf(stderr, "INFO: Application startup complete.\n");
    } else if (strncmp(how, "port:", 5) == 0) {
        struct sockaddr_in a;
        int one = 1;
        lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
        memset(&a, 0, sizeof a);
        a.sin_family = AF_INET;
        a.sin_port = htons((uint16_t)atoi(how + 5));
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(lfd, (struct sockaddr *)&a, sizeof a) != 0 || listen(lfd, 8) != 0) {
            perror("service: listen");
            return 4;
        }
        printf("service: listening on %s\n", how + 5);
    } else if (strncmp(how, "file:", 5) == 0) {
        FILE *f = fopen(how + 5, "w");
        if (f) {
            fputs("ready\n", f);
            fclose(f);
        }
    }
    if ((v = arg(argc, argv, "grandchild")) && strcmp(v, "1") == 0) {
        pid_t g = fork();
        if (g == 0) {
            for (int i = 0; i < 6000; i++) nap_ms(10);
            _exit(0);
        }
        printf("service: grandchild %ld\n", (long)g);
    }
    if ((v = arg(argc, argv, "partial"))) {
        for (long i = atol(v); i > 0; i--) putchar('x');
        fflush(stdout);
    }
    int ignore_term = (v = arg(argc, argv, "ignore_term")) && strcmp(v, "1") == 0;

    char die_key[96];
    snprintf(die_key, sizeof die_key, "die.%s", s);
    const char *die = arg(argc, argv, die_key) ? arg(argc, argv, die_key) : arg(argc, argv, "die");
    int die_ms = (v = arg(argc, argv, "die_ms")) ? atoi(v) : 100;
    if (die && (v = arg(argc, argv, "die_runs")) && runs > atoi(v)) die = NULL;
    for (int t = 0; t < 60000; t += 10) {
        for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
            int sg = sigs[i];
            if (!got[sg]) continue;
            got[sg] = 0;
            printf("service: got %s\n", sg == SIGUSR1 ? "SIGUSR1" : sg == SIGUSR2 ? "SIGUSR2"
                                        : sg == SIGHUP ? "SIGHUP" : sg == SIGTERM ? "SIGTERM"
                                                                                  : "SIGINT");
            if ((sg == SIGTERM || sg == SIGINT) && !ignore_term) return term_exit;
        }
        if (lfd >= 0) {
            int c = accept(lfd, NULL, NULL);
            if (c >= 0) close(c);
        }
        if (die && t >= die_ms) {
            fprintf(stderr, "service: dying (%s) under %s\n", die, s);
            if (strcmp(die, "crash") == 0) {
                volatile int *p = NULL;
                *p = 1;
            }
            if (strcmp(die, "oom") == 0) {
                fprintf(stderr, "torch.OutOfMemoryError: CUDA out of memory.\n");
                return 1;
            }
            if (strcmp(die, "sticky") == 0) {
                fprintf(stderr, "CUDA error: an illegal memory access was encountered\n");
                return 1;
            }
            if (strncmp(die, "exit:", 5) == 0) return atoi(die + 5);
        }
        nap_ms(10);
    }
    return 0;
}
