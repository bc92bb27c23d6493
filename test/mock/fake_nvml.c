/* fake_nvml.c — a stand-in for libnvidia-ml.so.1, loaded by the real NVML backend
 * (driver/nvml/nvml.c) through dlopen, so the loader, the entry-point fallbacks and every
 * answer are tested on machines without a GPU. Built three ways:
 *   vramkit_fake_nvml      a current NVML (_v2 init/count/handle, _v3 process lists)
 *   vramkit_fake_nvml_old  FAKE_NVML_OLD: an old one (nvmlInit, nvmlDeviceGetCount, the
 *                          first process-list layout without instance ids)
 *   vramkit_fake_nvml_bad  FAKE_NVML_BAD: lacks nvmlDeviceGetMemoryInfo
 * What it answers comes from $VRAMKIT_FAKE_NVML, ';'-separated KEY=VALUE:
 *   init=ok|mismatch|nodriver   nvmlInit's answer (default ok)
 *   devices=N                   how many GPUs (default 1)
 *   name=TEXT                   their name (default "Fake GPU")
 *   names=A,B,...               GPU n's name is the n-th (wins over name=)
 *   cc=MAJOR.MINOR              their compute capability (default 9.0; absent from _old)
 *   mig=1                       MIG mode on (default: "not supported", a GPU without MIG)
 *   total=BYTES used=BYTES      each GPU's memory (default 8 GiB, 1 GiB); free = total - used
 *   procs=PID:BYTES,...         compute processes on each GPU (BYTES "na": not available)
 *   gprocs=PID:BYTES,...        graphics processes
 *   driver=TEXT                 the driver version (default "999.99")
 *   pidfile=PATH pidbytes=N     one more compute process: the pid written in PATH (when the
 *                               file is there), using N bytes (the `vramkit run` tests); a
 *                               second number in PATH ("PID BYTES") wins over N, so a child
 *                               can change its use over time (the measured-peak tests) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int nv_return;
typedef void *nv_device;
typedef struct { unsigned long long total, free, used; } nv_memory;
typedef struct { unsigned int pid; unsigned long long used; } nv_proc_v1;
typedef struct { unsigned int pid; unsigned long long used; unsigned int gi, ci; } nv_proc;

#define EXPORT __attribute__((visibility("default")))

static char devs[4][1] = {{0}, {0}, {0}, {0}};

/* The value of KEY in the script, copied into buf; NULL when absent. */
static const char *val(const char *key, char *buf, size_t cap) {
    const char *s = getenv("VRAMKIT_FAKE_NVML");
    size_t kl = strlen(key);
    for (const char *p = s; p && *p;) {
        const char *semi = strchr(p, ';');
        size_t l = semi ? (size_t)(semi - p) : strlen(p);
        if (l > kl && strncmp(p, key, kl) == 0 && p[kl] == '=') {
            size_t n = l - kl - 1 < cap - 1 ? l - kl - 1 : cap - 1;
            memcpy(buf, p + kl + 1, n);
            buf[n] = '\0';
            return buf;
        }
        if (!semi) break;
        p = semi + 1;
    }
    return NULL;
}

static unsigned long long num(const char *key, unsigned long long dflt) {
    char b[64];
    return val(key, b, sizeof b) ? strtoull(b, NULL, 10) : dflt;
}

static int device_count(void) { return (int)num("devices", 1); }

static nv_return do_init(void) {
    char b[32];
    const char *i = val("init", b, sizeof b);
    if (i && strcmp(i, "mismatch") == 0) return 18;
    if (i && strcmp(i, "nodriver") == 0) return 9;
    return 0;
}

EXPORT const char *nvmlErrorString(nv_return r) {
    switch (r) {
    case 0: return "Success";
    case 9: return "Driver Not Loaded";
    case 18: return "Driver/library version mismatch";
    case 7: return "Insufficient Size";
    default: return "Unknown Error";
    }
}
EXPORT nv_return nvmlShutdown(void) { return 0; }
EXPORT nv_return nvmlSystemGetDriverVersion(char *v, unsigned int n) {
    char b[64];
    snprintf(v, n, "%s", val("driver", b, sizeof b) ? b : "999.99");
    return 0;
}
static nv_return get_handle(unsigned int i, nv_device *h) {
    if ((int)i >= device_count() || i >= 4) return 2;
    *h = devs[i];
    return 0;
}
static int index_of(nv_device h) { return (int)((char(*)[1])h - devs); }

EXPORT nv_return nvmlDeviceGetName(nv_device h, char *name, unsigned int n) {
    char b[96];
    if (val("names", b, sizeof b)) {
        const char *p = b;
        for (int i = index_of(h); i > 0 && p; i--) {
            p = strchr(p, ',');
            if (p) p++;
        }
        if (p) {
            size_t l = strcspn(p, ",");
            snprintf(name, n, "%.*s", (int)l, p);
            return 0;
        }
    }
    snprintf(name, n, "%s", val("name", b, sizeof b) ? b : "Fake GPU");
    return 0;
}
#ifndef FAKE_NVML_BAD
EXPORT nv_return nvmlDeviceGetMemoryInfo(nv_device h, nv_memory *m) {
    (void)h;
    m->total = num("total", 8ULL << 30);
    m->used = num("used", 1ULL << 30);
    m->free = m->total - m->used;
    return 0;
}
#endif

/* The list of KEY into out (v1 or current layout). */
static nv_return list(const char *key, unsigned int *count, void *out, int v1) {
    char b[512];
    unsigned n = 0;
    const char *s = val(key, b, sizeof b);
    unsigned cap = *count;
    for (const char *p = s; p && *p;) {
        unsigned pid = (unsigned)strtoul(p, NULL, 10);
        const char *colon = strchr(p, ':');
        unsigned long long used = ~0ULL;
        if (colon && strncmp(colon + 1, "na", 2) != 0) used = strtoull(colon + 1, NULL, 10);
        if (n < cap) {
            if (v1) {
                ((nv_proc_v1 *)out)[n].pid = pid;
                ((nv_proc_v1 *)out)[n].used = used;
            } else {
                ((nv_proc *)out)[n].pid = pid;
                ((nv_proc *)out)[n].used = used;
                ((nv_proc *)out)[n].gi = ((nv_proc *)out)[n].ci = 0xffffffffu;
            }
        }
        n++;
        const char *comma = strchr(p, ',');
        if (!comma) break;
        p = comma + 1;
    }
    char pb[256];
    if (!v1 && strcmp(key, "procs") == 0 && val("pidfile", pb, sizeof pb)) {
        FILE *f = fopen(pb, "r");
        long pid = 0;
        unsigned long long bytes = num("pidbytes", 0), b2;
        if (f) {
            if (fscanf(f, "%ld", &pid) != 1) pid = 0;
            else if (fscanf(f, "%llu", &b2) == 1) bytes = b2;
            fclose(f);
        }
        if (pid > 0) {
            if (n < cap) {
                ((nv_proc *)out)[n].pid = (unsigned)pid;
                ((nv_proc *)out)[n].used = bytes;
                ((nv_proc *)out)[n].gi = ((nv_proc *)out)[n].ci = 0xffffffffu;
            }
            n++;
        }
    }
    *count = n;
    return n > cap ? 7 : 0;
}

#ifndef FAKE_NVML_OLD
EXPORT nv_return nvmlDeviceGetCudaComputeCapability(nv_device h, int *major, int *minor) {
    char b[32];
    (void)h;
    *major = 9;
    *minor = 0;
    if (val("cc", b, sizeof b) && sscanf(b, "%d.%d", major, minor) != 2) return 999;
    return 0;
}
EXPORT nv_return nvmlDeviceGetMigMode(nv_device h, unsigned int *current, unsigned int *pending) {
    char b[8];
    (void)h;
    if (!val("mig", b, sizeof b)) return 3; /* NVML_ERROR_NOT_SUPPORTED */
    *current = *pending = (unsigned)atoi(b);
    return 0;
}
#endif

#ifdef FAKE_NVML_OLD
EXPORT nv_return nvmlInit(void) { return do_init(); }
EXPORT nv_return nvmlDeviceGetCount(unsigned int *n) { *n = (unsigned)device_count(); return 0; }
EXPORT nv_return nvmlDeviceGetHandleByIndex(unsigned int i, nv_device *h) { return get_handle(i, h); }
EXPORT nv_return nvmlDeviceGetComputeRunningProcesses(nv_device h, unsigned int *c, nv_proc_v1 *p) {
    (void)h;
    return list("procs", c, p, 1);
}
EXPORT nv_return nvmlDeviceGetGraphicsRunningProcesses(nv_device h, unsigned int *c, nv_proc_v1 *p) {
    (void)h;
    return list("gprocs", c, p, 1);
}
#else
EXPORT nv_return nvmlInit_v2(void) { return do_init(); }
EXPORT nv_return nvmlDeviceGetCount_v2(unsigned int *n) { *n = (unsigned)device_count(); return 0; }
EXPORT nv_return nvmlDeviceGetHandleByIndex_v2(unsigned int i, nv_device *h) { return get_handle(i, h); }
EXPORT nv_return nvmlDeviceGetComputeRunningProcesses_v3(nv_device h, unsigned int *c, nv_proc *p) {
    (void)h;
    return list("procs", c, p, 0);
}
EXPORT nv_return nvmlDeviceGetGraphicsRunningProcesses_v3(nv_device h, unsigned int *c, nv_proc *p) {
    (void)h;
    return list("gprocs", c, p, 0);
}
#endif
