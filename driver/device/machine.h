/* driver/device/machine.h — this machine's GPUs and host memory as a plan sees them. GPUs
 * are read through NVML where its numbering is the CUDA runtime's (no CUDA context is made,
 * and the other processes on each GPU are listed by pid, name and bytes), else through the
 * CUDA runtime (the contexts made for reading are released before it returns). */
#ifndef VRAMKIT_DRIVER_MACHINE_H
#define VRAMKIT_DRIVER_MACHINE_H

#include <stddef.h>
#include <stdint.h>

#include <vramkit/base.h>

#include <vramkit/device.h>
#include <vramkit/strategy.h>

#include "nvml/nvml.h"
#include "util/json.h"

/* The most other processes kept (all GPUs together); more are counted, not kept. */
#define VRAM_MACHINE_MAX_TENANTS 32

/* A process other than this one holding memory on one of the GPUs. */
typedef struct vram_machine_tenant {
    int gpu;        /* cuda:N */
    uint32_t pid;
    uint64_t bytes; /* VRAM_GPUMEM_UNKNOWN where NVML cannot say (another pid namespace) */
    char name[32];  /* its /proc/PID/comm; "" where it cannot be read (another namespace) */
} vram_machine_tenant;

/* How the GPUs were read, and who else holds memory on them. */
typedef struct vram_machine_view {
    const char *source;  /* "nvml", "cuda" (the runtime), or "" when no GPU was read */
    char note[192];      /* why NVML was not the source; "" when it was */
    int tenants_known;   /* 1: the process lists were read (NVML was the source) */
    int ntenants;        /* kept in tenants[] */
    int tenants_more;    /* listed beyond VRAM_MACHINE_MAX_TENANTS */
    vram_machine_tenant tenants[VRAM_MACHINE_MAX_TENANTS];
} vram_machine_view;

/* May NVML's GPU n stand for the CUDA runtime's cuda:n? NVML numbers every GPU by PCI bus;
 * the runtime numbers only those CUDA_VISIBLE_DEVICES lists, fastest first unless
 * CUDA_DEVICE_ORDER=PCI_BUS_ID (equal GPUs keep their PCI order). So: yes when
 * `visible_devices` is NULL (unset) and there is one GPU, or the order is PCI_BUS_ID, or all
 * `names` are equal; else 0 with why[0 .. cap) saying which rule stood in the way.
 * `names` holds `count` names. */
int vram_machine_nvml_numbering(const char *visible_devices, const char *device_order, int count,
                                const char *const *names, char *why, size_t cap);

/* The CUDA runtime as the fallback reads it: the table (NULL: a build without CUDA), which
 * devices' contexts are alive before reading (NULL: none), and the release of the contexts
 * reading made, keeping those alive before (NULL: nothing is released). */
typedef struct vram_machine_cuda {
    const vram_device_ops *ops;
    uint64_t (*live)(void);
    void (*release_except)(uint64_t keep);
} vram_machine_cuda;

/* This machine's GPUs (at most `max`; GPU n is cuda:n): total, free beside the other tenants
 * and compute capability, through `mem` (NVML; NULL: not available) when it opens, numbers
 * the GPUs as CUDA does (vram_machine_nvml_numbering over $CUDA_VISIBLE_DEVICES and
 * $CUDA_DEVICE_ORDER) and no GPU is in MIG mode; otherwise through `cuda`, giving back after
 * reading the contexts it made (a context alive before, a framework's in this process, is
 * kept). `view` (may be NULL) says which and lists the tenants. Returns how many GPUs; 0
 * with why[0 .. cap) saying why (the CUDA runtime's reason: no NVIDIA driver, no GPU, a
 * build without CUDA, ...). NVML is opened and left open (one per process: nvml.h). Prints
 * nothing. */
int vram_machine_gpus_from(const vram_gpumem_ops *mem, const vram_machine_cuda *cuda,
                           vram_gpu_budget *out, int max, vram_machine_view *view, char *why,
                           size_t cap);

/* vram_machine_gpus_from over this build's NVML backend and CUDA backend. */
int vram_machine_gpus_view(vram_gpu_budget *out, int max, vram_machine_view *view, char *why,
                           size_t cap);

/* The device table to read this machine's GPUs' memory through (vramkit watch): NVML first
 * (no CUDA context; GPUs numbered as nvidia-smi does), else the CUDA runtime (a context on
 * each GPU). With vram_machine_gpus_from, the one place where NVML-then-CUDA is decided. */
typedef struct vram_machine_reader {
    vram_gpumem_ops nvml;     /* NVML's table */
    int nvml_open;            /* NVML is open and ops reads through it */
    vram_status nvml_status;  /* what opening NVML said (VRAM_E_NOT_SUPPORTED: not there) */
    char why_not_nvml[192];   /* why not NVML ("" when it is the source) */
    vram_device_ops ops;      /* the table to read: over NVML, or the CUDA backend */
    vram_status ops_status;   /* VRAM_OK, or why the CUDA backend cannot be had */
} vram_machine_reader;

/* Opens NVML and makes ops over it; where NVML cannot be opened, ops is the CUDA backend. */
void vram_machine_reader_open(vram_machine_reader *r);
/* NVML opened, but its table cannot be used (why): closes it, and ops is the CUDA backend. */
void vram_machine_reader_fallback(vram_machine_reader *r, const char *why);
void vram_machine_reader_close(vram_machine_reader *r);

/* The same without the view. */
int vram_machine_gpus(vram_gpu_budget *out, int max, char *why, size_t cap);

/* The host's available memory (MemAvailable of /proc/meminfo); 0 when unknown. */
uint64_t vram_machine_host_available(void);

/* How the GPUs were read and the other processes on them, as members of the open JSON object:
 * gpu_source, gpu_source_note, tenants ([{gpu, pid, name, bytes}], or null when not known)
 * and tenants_more (when known). For GPUs read here only. */
void vram_machine_view_json(vram_json *j, const vram_machine_view *v);

/* ---- the machine an estimate or a plan is for: built here, and only here --------------- */

/* A GPU described in words, as --assume-gpu takes it: SIZE[,used=SIZE|,free=SIZE][,cc=M.m]
 * ("8GiB,used=4.7GB,cc=8.9"). VRAM_OK with *out, or VRAM_E_INVALID with err one line naming
 * the spec and what is wrong (a bad size, used or free above the size, an unknown key, a bad
 * compute capability). */
vram_status vram_gpu_spec_parse(const char *text, vram_gpu_budget *out, char *err, size_t cap);

/* The GPUs (given, or read here), the host's available memory (given, or read) and the
 * margin (given, or the default). Zero-initialise, set what was given, then
 * vram_machine_make. */
typedef struct vram_machine {
    /* given */
    vram_gpu_budget gpus[VRAM_PLAN_MAX_GPUS];
    int ngpu;
    int gpus_given;    /* the GPUs were given (--assume-gpu): this machine's are not read */
    int host_given;    /* host was given; else this machine's available memory */
    uint64_t host;
    int margin_given;  /* margin was given (0 = none); else the default */
    uint64_t margin;
    /* made by vram_machine_make */
    int gpus_detected; /* the GPUs were read from this machine */
    vram_machine_view view; /* how they were read, and the other processes on them */
    char no_gpu[128];  /* why there is no GPU, when there is none */
    vram_devices dev;  /* what the core plans on (margin in its form: 1 byte for none) */
} vram_machine;

/* One more GPU from a spec (vram_gpu_spec_parse); sets gpus_given. VRAM_E_INVALID with err
 * for a bad spec or more than VRAM_PLAN_MAX_GPUS. */
vram_status vram_machine_add_gpu(vram_machine *m, const char *spec, char *err, size_t cap);

/* Applies option `name` with its value: "assume-gpu" (vram_machine_add_gpu), "margin" (a size,
 * 0 for none), "host-memory" (a size above 0). VRAM_OK; VRAM_E_INVALID with err one line
 * naming the option; VRAM_E_UNHANDLED for another name. */
vram_status vram_machine_set(vram_machine *m, const char *name, const char *arg, char *err,
                             size_t cap);

/* Reads what was not given: this machine's GPUs (NVML, else the CUDA runtime) unless GPUs were
 * given or `no_read` is set (then no_read, e.g. "none in the saved plan", is the reason for no
 * GPU when there is none), the host's memory unless given; resolves the margin. VRAM_OK, or
 * VRAM_E_INVALID with err when the machine described is not valid. */
vram_status vram_machine_make(vram_machine *m, const char *no_read, char *err, size_t cap);

/* The margin as a byte count: the one given (0 for none), else the default. */
uint64_t vram_machine_margin(const vram_machine *m);

/* The GPU with the most room after the margin (vram_devices_best_gpu), -1 when none; and its
 * budget (free less the margin; 0 without a GPU). */
int vram_machine_best(const vram_machine *m, uint64_t *budget);

#endif /* VRAMKIT_DRIVER_MACHINE_H */
