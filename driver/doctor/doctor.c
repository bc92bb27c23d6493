/* driver/doctor/doctor.c — the facts of `vramkit doctor`, gathered from the machine.
 * Reads the device snapshot, the environment and a few /proc and /etc files, and runs the
 * probes when asked; every source can be replaced (doctor.h), and a missing file or a
 * failed device read is recorded as a fact, never turned into an error of the gathering. */
#include "doctor.h"

#include <ctype.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda/cuda_device.h"
#include "cuda/forkguard.h"
#include "device/snapshot.h"

#define DOCTOR_READ_MAX 4096

/* The first bytes of a small file, NUL-terminated; 0 when it cannot be read. */
static size_t doctor_read(const char *path, char *buf, size_t cap) {
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (f == NULL) return 0;
    size_t n = fread(buf, 1, cap - 1, f);
    fclose(f);
    buf[n] = '\0';
    return n;
}

/* Case-insensitive substring test. */
static int doctor_has(const char *text, const char *word) {
    size_t wn = strlen(word);
    for (const char *p = text; *p; p++) {
        size_t i = 0;
        while (i < wn && p[i] && tolower((unsigned char)p[i]) == tolower((unsigned char)word[i])) i++;
        if (i == wn) return 1;
    }
    return 0;
}

static int doctor_is_wsl(const char *path) {
    char buf[DOCTOR_READ_MAX];
    if (doctor_read(path, buf, sizeof buf) == 0) return 0;
    /* "5.15.90.1-microsoft-standard-WSL2"; WSL1 says "Microsoft" */
    return doctor_has(buf, "microsoft") || strstr(buf, "WSL") != NULL;
}

/* "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  Sun Jul 27 ..." (or "... Open
 * Kernel Module for x86_64  570.133.20 ...") -> "580.65.06", branch 580: the first word after
 * "Module" made of digits and dots with at least one dot. */
static int doctor_kernel_module(const char *path, char *version, size_t cap) {
    char buf[DOCTOR_READ_MAX];
    version[0] = '\0';
    if (doctor_read(path, buf, sizeof buf) == 0) return 0;
    const char *p = strstr(buf, "Module");
    if (p == NULL) return 0;
    p += 6;
    while (*p && *p != '\n') {
        while (*p == ' ' || *p == '\t') p++;
        size_t n = 0, dots = 0;
        while (isdigit((unsigned char)p[n]) || p[n] == '.') dots += p[n++] == '.';
        int word_end = p[n] == '\0' || p[n] == ' ' || p[n] == '\t' || p[n] == '\n';
        if (n > 0 && dots > 0 && isdigit((unsigned char)p[0]) && word_end && n < cap) {
            memcpy(version, p, n);
            version[n] = '\0';
            return atoi(version);
        }
        while (*p && *p != ' ' && *p != '\t' && *p != '\n') p++;
    }
    return 0;
}

/* Entries of /proc/driver/nvidia/gpus (one directory per GPU, by PCI address); 0 unknown. */
static int doctor_count_gpus(const char *path) {
    DIR *d = opendir(path);
    if (d == NULL) return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.') n++;
    closedir(d);
    return n;
}

vram_diag_probe_kind vram_doctor_probe_kind(vram_probe_kind k) {
    switch (k) {
    case VRAM_PROBE_VMM: return VRAM_DIAG_PROBE_VMM;
    case VRAM_PROBE_PINNED: return VRAM_DIAG_PROBE_PINNED;
    case VRAM_PROBE_POOL: return VRAM_DIAG_PROBE_POOL;
    case VRAM_PROBE_KERNEL: return VRAM_DIAG_PROBE_KERNEL;
    case VRAM_PROBE_ALLOC90: return VRAM_DIAG_PROBE_ALLOC90;
    case VRAM_PROBE_COUNT: break;
    }
    return VRAM_DIAG_PROBE_COUNT;
}

static const char *doctor_getenv(const char *name) { return getenv(name); }

/* The architectures this build's kernels were compiled for, when the build says
 * (CMAKE_CUDA_ARCHITECTURES passed as VRAMKIT_CUDA_ARCHS, e.g. "90" or "80;90"). */
static const char *doctor_build_archs(void) {
#ifdef VRAMKIT_CUDA_ARCHS
    return VRAMKIT_CUDA_ARCHS;
#else
    return NULL;
#endif
}

static void doctor_probe_all(const vram_doctor_config *c, vram_doctor_report *r) {
    vram_doctor_probe_fn run = c->probe_fn != NULL ? c->probe_fn : vram_probe_run;
    int n = vram_snapshot_count(&r->snap);
    for (int d = 0; d < n; d++) {
        if (r->snap.devices[d].compute_mode == VRAM_COMPUTE_PROHIBITED) continue;
        for (int k = 0; k < VRAM_PROBE_COUNT; k++) {
            vram_probe_result *p = &r->probes[d][k];
            if (c->progress) c->progress(c->progress_ctx, d, (vram_probe_kind)k);
            memset(p, 0, sizeof *p);
            p->kind = (vram_probe_kind)k;
            p->device = d;
            vram_status st = run(d, (vram_probe_kind)k, c->probe_timeout_ms, p);
            p->detail[sizeof p->detail - 1] = '\0';
            r->probe_run[d][k] = st;
            vram_diag_probe_kind dk = vram_doctor_probe_kind((vram_probe_kind)k);
            if (st == VRAM_OK && p->ran && dk != VRAM_DIAG_PROBE_COUNT) {
                r->facts.probe[d][dk].ran = 1;
                r->facts.probe[d][dk].status = p->status;
                r->facts.probe[d][dk].cuda_error = p->cuda_error;
            } else {
                p->ran = 0; /* could not run: no verdict */
            }
        }
    }
    if (c->progress) c->progress(c->progress_ctx, -1, VRAM_PROBE_COUNT);
}

vram_status vram_doctor_gather(const vram_doctor_config *cfg, vram_doctor_report *out) {
    if (out == NULL) return VRAM_E_INVALID;
    vram_doctor_config zero;
    memset(&zero, 0, sizeof zero);
    const vram_doctor_config *c = cfg != NULL ? cfg : &zero;
    memset(out, 0, sizeof *out);
    out->backend = "";
    vram_diag_facts *f = &out->facts;
    vram_diag_facts_init(f, &out->snap);

    /* the build's architectures first: a bad list is the caller's error, nothing is read */
    const char *archs = c->archs != NULL ? c->archs : doctor_build_archs();
    if (archs != NULL) {
        if (vram_diag_parse_archs(archs, f) != VRAM_OK) {
            if (c->archs != NULL) return VRAM_E_FORMAT;
            f->n_archs = 0; /* a build-time list this parser does not read: unknown */
        } else {
            out->archs_source = c->archs != NULL ? "option" : "build";
        }
    }

    /* the environment */
    vram_doctor_getenv_fn env = c->getenv_fn != NULL ? c->getenv_fn : doctor_getenv;
    f->cuda_visible_devices = env("CUDA_VISIBLE_DEVICES");
    f->cuda_launch_blocking = env("CUDA_LAUNCH_BLOCKING");
    f->ld_library_path = env("LD_LIBRARY_PATH");
    /* PyTorch reads PYTORCH_ALLOC_CONF first and falls back to the CUDA-specific name */
    if ((f->alloc_conf = env("PYTORCH_ALLOC_CONF")) != NULL) {
        out->alloc_conf_var = "PYTORCH_ALLOC_CONF";
    } else if ((f->alloc_conf = env("PYTORCH_CUDA_ALLOC_CONF")) != NULL) {
        out->alloc_conf_var = "PYTORCH_CUDA_ALLOC_CONF";
    }

    /* the platform */
    const vram_doctor_paths *p = &c->paths;
    f->wsl2 = doctor_is_wsl(p->osrelease ? p->osrelease : "/proc/sys/kernel/osrelease") ||
              doctor_is_wsl(p->proc_version ? p->proc_version : "/proc/version");
    f->jetson = access(p->tegra_release ? p->tegra_release : "/etc/nv_tegra_release", F_OK) == 0;
    f->driver_branch = doctor_kernel_module(
        p->nvidia_version ? p->nvidia_version : "/proc/driver/nvidia/version", out->kernel_module,
        sizeof out->kernel_module);
    f->physical_gpus = doctor_count_gpus(p->nvidia_gpus ? p->nvidia_gpus : "/proc/driver/nvidia/gpus");
    f->model_bytes = c->model_bytes;

    /* the devices: never through CUDA in a fork of a process that had initialised it */
    f->forked_after_init = vram_fork_guard_tripped();
    vram_device_ops cuda;
    const vram_device_ops *ops = c->ops;
    uint64_t keep = 0; /* this process's contexts from before (a framework's): never released */
    out->cuda_built = 1;
    if (ops == NULL) {
        out->cuda_built = vram_cuda_built();
        if (vram_cuda_ops(&cuda) == VRAM_OK) ops = &cuda;
        if (ops != NULL && !f->forked_after_init) keep = vram_cuda_live_contexts();
    }
    if (f->forked_after_init) {
        out->snap.status = VRAM_E_FORKED;
    } else if (ops == NULL) {
        out->snap.status = VRAM_E_NOT_BUILT; /* a build without the CUDA parts */
    } else {
        out->backend = ops->backend != NULL ? ops->backend : "";
        vram_status st = vram_snapshot_take(ops, &out->snap);
        (void)st; /* kept in out->snap.status: a failed snapshot is a fact */
    }

    out->probed = c->probe != 0;
    if (c->probe) {
        /* the snapshot took a context on every GPU it read: give them back before the
         * children probe, or each GPU runs them beside ~0.5 GiB of ours, and one in
         * exclusive-process mode refuses them all ("device busy") */
        if (ops != NULL && !f->forked_after_init)
            for (int d = 0; d < vram_snapshot_count(&out->snap); d++)
                if (d >= 64 || !(keep >> d & 1u))
                    out->released[d] = ops->release_device(ops->ctx, d);
        doctor_probe_all(c, out);
    }
    /* the contexts the snapshot made are given back: the report needs none of them, and a
       doctor run inside another program (the Python package) must not keep GPU memory */
    if (ops == &cuda && !f->forked_after_init) vram_cuda_release_except(keep);
    return VRAM_OK;
}
