/* driver/device/machine.h — this machine's GPUs and host memory as a plan sees them. GPUs
 * are read through NVML where its numbering is the CUDA runtime's (no CUDA context is made,
 * and the other processes on each GPU are listed by pid, name and bytes), else through the
 * CUDA runtime (the contexts made for reading are released before it returns). */
#ifndef VRAMKIT_DRIVER_MACHINE_H
#define VRAMKIT_DRIVER_MACHINE_H

#include <stddef.h>
#include <stdint.h>

#include <vramkit/device.h>
#include <vramkit/strategy.h>

#include "nvml/nvml.h"

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

/* The same without the view. */
int vram_machine_gpus(vram_gpu_budget *out, int max, char *why, size_t cap);

/* The host's available memory (MemAvailable of /proc/meminfo); 0 when unknown. */
uint64_t vram_machine_host_available(void);

#endif /* VRAMKIT_DRIVER_MACHINE_H */
