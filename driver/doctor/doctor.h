/* driver/doctor/doctor.h — gather the facts vramkit/diagnose.h reasons about, from this machine.
 * The device snapshot (through any device table: the CUDA backend, or the mock in tests),
 * the environment, the platform (WSL2, Jetson, the kernel module's version and GPU count),
 * the fork state and, on request, the capability probes run in children. Every source is
 * injectable, so the whole `vramkit doctor` path runs in tests without a GPU. */
#ifndef VRAMKIT_DRIVER_DOCTOR_H
#define VRAMKIT_DRIVER_DOCTOR_H

#include <stdio.h>

#include <vramkit/diagnose.h>

#include "probe/probe.h"

/* Files the platform is read from. NULL fields mean the real ones (in brackets). */
typedef struct vram_doctor_paths {
    const char *osrelease;      /* [/proc/sys/kernel/osrelease]: "microsoft"/"WSL" = WSL */
    const char *proc_version;   /* [/proc/version]: the same words, as a second witness */
    const char *tegra_release;  /* [/etc/nv_tegra_release]: exists on Jetson */
    const char *nvidia_version; /* [/proc/driver/nvidia/version]: the kernel module's version */
    const char *nvidia_gpus;    /* [/proc/driver/nvidia/gpus]: a directory, one entry per GPU */
} vram_doctor_paths;

/* Runs one probe (the signature of vram_probe_run, driver/probe/probe.h). */
typedef vram_status (*vram_doctor_probe_fn)(int device, vram_probe_kind kind, int timeout_ms,
                                            vram_probe_result *out);
/* Reads one environment variable (the signature of getenv). */
typedef const char *(*vram_doctor_getenv_fn)(const char *name);

/* Where the facts come from. Zero-initialise: every zero field means the real machine. */
typedef struct vram_doctor_config {
    const vram_device_ops *ops;      /* NULL: the CUDA backend (vram_cuda_ops); in a build
                                        without it the snapshot is VRAM_E_NOT_BUILT */
    vram_doctor_paths paths;
    vram_doctor_getenv_fn getenv_fn; /* NULL: getenv */
    int probe;                       /* nonzero: run every probe on every GPU */
    vram_doctor_probe_fn probe_fn;   /* NULL: vram_probe_run */
    int probe_timeout_ms;            /* 0: VRAM_PROBE_DEFAULT_TIMEOUT_MS */
    /* called before each probe (device, kind) and once after the last (-1,
       VRAM_PROBE_COUNT), so that a terminal can show progress; NULL: nothing */
    void (*progress)(void *ctx, int device, vram_probe_kind kind);
    void *progress_ctx;
    uint64_t model_bytes;            /* what a model needs on one GPU; 0: none */
    const char *archs;               /* the build's architectures (vram_diag_parse_archs);
                                        NULL: this build's own (VRAMKIT_CUDA_ARCHS) if known */
} vram_doctor_config;

/* Everything gathered. Large (~100 KiB): allocate it. report.facts points into the report
 * itself (snap) and at the strings getenv_fn returned, so it is valid while the report
 * lives and the environment is not changed. */
typedef struct vram_doctor_report {
    vram_device_snapshot snap;
    vram_diag_facts facts;
    int cuda_built;              /* vram_cuda_built() when ops was NULL, else 1 */
    const char *backend;         /* the table's backend name, "" when none */
    const char *alloc_conf_var;  /* "PYTORCH_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF" or NULL */
    const char *archs_source;    /* "option", "build" or NULL (unknown) */
    char kernel_module[32];      /* "580.65.06"; "" when /proc/driver/nvidia/version is absent */
    int probed;                  /* the probes were asked for */
    vram_probe_result probes[VRAM_MAX_DEVICES][VRAM_PROBE_COUNT]; /* ran 0: not run */
    vram_status probe_run[VRAM_MAX_DEVICES][VRAM_PROBE_COUNT];    /* what probe_fn returned */
    vram_status released[VRAM_MAX_DEVICES]; /* release_device before the probes (VRAM_OK when
                                               none was asked for, or when this process held
                                               the context before doctor ran: kept) */
} vram_doctor_report;

/* The diagnose.h probe kind of a driver probe kind; VRAM_DIAG_PROBE_COUNT for none. */
vram_diag_probe_kind vram_doctor_probe_kind(vram_probe_kind k);

/* Gathers the facts. Requires: out valid; cfg NULL (the real machine) or valid.
 * Guarantees: *out filled whatever happens on the device side (a failed snapshot is a fact,
 * not an error): VRAM_OK; VRAM_E_FORMAT when cfg->archs does not parse (nothing else is
 * read); VRAM_E_INVALID for a NULL out. Never touches CUDA in a process forked after CUDA
 * was initialised (the snapshot then says VRAM_E_FORKED). Probes run only on GPUs of the
 * snapshot whose compute mode is not prohibited, after the table's release_device on every
 * GPU of the snapshot: this process holds no context while its children probe. */
vram_status vram_doctor_gather(const vram_doctor_config *cfg, vram_doctor_report *out);

#endif /* VRAMKIT_DRIVER_DOCTOR_H */
