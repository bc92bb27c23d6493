/* driver/nvml/nvml.h — GPU memory read without a CUDA context: device-wide used/free/total
 * and the memory of each process, through NVML (the library nvidia-smi uses), loaded at run
 * time with dlopen so vramkit builds and runs where it is missing. One ops table (the same
 * kind of seam as vramkit/device.h's) so that a test can put a scripted backend behind it;
 * vram_nvml_device_ops() turns it into a device ops table for gpustats/watch. */
#ifndef VRAMKIT_DRIVER_NVML_H
#define VRAMKIT_DRIVER_NVML_H

#include <stddef.h>
#include <stdint.h>

#include <vramkit/device.h>

#define VRAM_GPUMEM_API_VERSION 2u
/* The library loaded when nothing else is asked for; VRAMKIT_NVML_LIBRARY names another
 * (a path, or an empty value: "no NVML", for tests and to rule it out). */
#define VRAM_NVML_LIBRARY "libnvidia-ml.so.1"
#define VRAM_NVML_LIBRARY_ENV "VRAMKIT_NVML_LIBRARY"
/* The most processes listed per device. */
#define VRAM_GPUMEM_MAX_PROCS 256
/* A process's memory NVML cannot see (a container without the pid namespace, Windows WDDM). */
#define VRAM_GPUMEM_UNKNOWN UINT64_MAX

typedef struct vram_gpumem_proc {
    uint32_t pid;
    uint64_t used_bytes; /* VRAM_GPUMEM_UNKNOWN when NVML does not say */
    int graphics;        /* 1: listed as a graphics process, 0: a compute process */
} vram_gpumem_proc;

/* The seam. Every slot returns a vram_status; on failure `error` says why in one line. */
typedef struct vram_gpumem_ops {
    uint32_t api_version; /* VRAM_GPUMEM_API_VERSION */
    uint32_t size;        /* sizeof(vram_gpumem_ops) */
    const char *source;   /* "nvml", "mock": for reports */
    void *ctx;
    /* Loads and initialises. VRAM_E_NOT_SUPPORTED: no library; VRAM_E_VERSION: the library
     * and the kernel driver differ (an upgrade without a reboot) or it lacks a function
     * vramkit needs; VRAM_E_NO_DRIVER: no driver loaded; others: NVML's failure. */
    vram_status (*open)(void *ctx);
    void (*close)(void *ctx);
    vram_status (*driver_version)(void *ctx, char *buf, size_t cap);
    vram_status (*device_count)(void *ctx, int *count);
    vram_status (*device_name)(void *ctx, int device, char *buf, size_t cap);
    vram_status (*memory)(void *ctx, int device, uint64_t *total, uint64_t *free_bytes,
                          uint64_t *used);
    /* Compute then graphics processes (a pid in both is listed once, as compute); at most
     * cap; *n how many were written. */
    vram_status (*processes)(void *ctx, int device, vram_gpumem_proc *out, int cap, int *n);
    const char *(*error)(void *ctx);
    /* Since API 2. The CUDA compute capability; VRAM_E_NOT_SUPPORTED where NVML cannot say. */
    vram_status (*compute_capability)(void *ctx, int device, int *major, int *minor);
    /* Since API 2. *on = 1 when the GPU is in MIG mode (CUDA then numbers its instances, not
     * the GPU); 0 when it is not or the GPU has no MIG (NVML's "not supported"). */
    vram_status (*mig_mode)(void *ctx, int device, int *on);
} vram_gpumem_ops;

/* The NVML backend: `library` (NULL: $VRAMKIT_NVML_LIBRARY, else VRAM_NVML_LIBRARY). One
 * per process is enough; the table points at static state. */
vram_gpumem_ops vram_nvml_ops(const char *library);

/* VRAM_OK when the table was written for this version and every slot is filled. */
vram_status vram_gpumem_ops_check(const vram_gpumem_ops *m);

/* A device ops table over an opened gpumem table: device_count, device_info (name, total,
 * free; nothing else known) and mem_info answer; every other slot VRAM_E_NOT_SUPPORTED.
 * Backend name: m->source. `m` must outlive the table. */
vram_device_ops vram_gpumem_device_ops(const vram_gpumem_ops *m);

#endif
