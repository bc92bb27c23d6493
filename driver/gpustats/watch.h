/* driver/gpustats/watch.h — `watch` as a function: the memory of every GPU (or one, or the
 * host's RAM) sampled round after round through gpustats.h, with vramkit/monitor.h's warnings
 * and, through NVML, the processes on each GPU. The device is read through NVML first (no
 * CUDA context), else the CUDA runtime: device/machine.h decides (vram_machine_memory_ops).
 * The rounds' JSON lines are written here; the pacing and the printing are the caller's.
 * Prints nothing. */
#ifndef VRAMKIT_DRIVER_WATCH_H
#define VRAMKIT_DRIVER_WATCH_H

#include <stddef.h>
#include <stdint.h>

#include <vramkit/device.h>
#include <vramkit/monitor.h>

#include "device/machine.h"
#include "gpustats.h"
#include "util/json.h"

#define VRAM_WATCH_DEFAULT_INTERVAL_MS 1000u
#define VRAM_WATCH_MAX_INTERVAL_MS 86400000u /* a day */

/* Zero means default in every field. */
typedef struct vram_watch_opts {
    uint64_t interval_ms;        /* 0: VRAM_WATCH_DEFAULT_INTERVAL_MS */
    uint64_t count;              /* rounds; 0: until stopped */
    uint64_t epoch_every;        /* samples of a device to an epoch; 0: none */
    int device_given;
    int device;                  /* with device_given: that GPU only */
    int host;                    /* the host's RAM instead */
    int processes;               /* list each GPU's processes (NVML) */
    vram_monitor_config mon;
    const vram_device_ops *ops;  /* a table to read instead (tests: the mock) */
} vram_watch_opts;

/* Applies "interval", "count", "epoch-every", "device", "host", "processes", "limit",
 * "leak-threshold". VRAM_OK; VRAM_E_INVALID with err one line; VRAM_E_UNHANDLED. */
vram_status vram_watch_set(vram_watch_opts *o, const char *name, const char *arg, char *err,
                           size_t cap);

typedef struct vram_watch {
    vram_gpustats *g;
    vram_machine_reader reader; /* NVML or the CUDA runtime */
    int first, last;            /* the devices watched */
    uint64_t round;             /* rounds sampled */
    uint64_t interval_ms;
    uint64_t epoch_every;
} vram_watch;

/* Opens the device. VRAM_OK with *w (close it), and in note ("" when none) a line to show:
 * why NVML is not used. Else a status with err: VRAM_E_NO_DRIVER / VRAM_E_NO_DEVICE /
 * VRAM_E_NOT_BUILT (nothing to watch), VRAM_E_INVALID (a bad setting, a --device past the
 * devices), VRAM_E_NOT_SUPPORTED (--processes without NVML), the backend's failure. */
vram_status vram_watch_open(const vram_watch_opts *o, vram_watch *w, char *note, size_t ncap,
                            char *err, size_t cap);
void vram_watch_close(vram_watch *w);

/* Samples device d for round w->round (an epoch mark every epoch_every rounds); *s the sample
 * and *epoch the epochs it closed before. VRAM_OK, or the backend's failure with err. */
vram_status vram_watch_sample(vram_watch *w, int d, vram_monitor_sample *s, uint64_t *epoch,
                              char *err, size_t cap);

/* The processes on GPU d (NVML). VRAM_OK with procs[0 .. *n), else the failure with err. */
vram_status vram_watch_processes(vram_watch *w, int d, vram_gpumem_proc *procs, int cap_procs,
                                 int *n, char *err, size_t cap);

/* What a round delivers, to whoever writes it down. stamp is the round's UTC time. */
typedef struct vram_watch_sink {
    void (*sample)(void *ctx, const vram_watch *w, const vram_monitor_sample *s, uint64_t epoch,
                   const char *stamp);
    /* with --processes, after each device's sample: its processes procs[0 .. n) */
    void (*processes)(void *ctx, int d, const vram_gpumem_proc *procs, int n, uint64_t time_ms,
                      const char *stamp);
    void (*warning)(void *ctx, const vram_watch *w, const vram_monitor_warning *x,
                    const char *stamp);
    void *ctx;
} vram_watch_sink;

/* One round: every device sampled (and its processes listed, with processes), then the
 * warnings raised. VRAM_OK, or the failure with err ("sample 3: ..."). */
vram_status vram_watch_round(vram_watch *w, int processes, const vram_watch_sink *sink, char *err,
                             size_t cap);

/* The command of a process as /proc shows it; 0 when not visible (another pid namespace, a
 * process gone). */
int vram_watch_command(uint32_t pid, char *buf, size_t cap);

/* Used percent of total. */
double vram_watch_used_percent(uint64_t used, uint64_t total);

/* One JSON line's object: a sample, a warning, a process. */
void vram_watch_sample_json(vram_json *j, const vram_watch *w, const vram_monitor_sample *s,
                            uint64_t epoch, const char *stamp);
void vram_watch_warning_json(vram_json *j, const vram_watch *w, const vram_monitor_warning *x,
                             const char *stamp);
void vram_watch_process_json(vram_json *j, int d, const vram_gpumem_proc *p, uint64_t time_ms,
                             const char *stamp);

#endif /* VRAMKIT_DRIVER_WATCH_H */
