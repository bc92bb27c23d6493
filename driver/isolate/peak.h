/* driver/isolate/peak.h — the measured GPU memory peak of one child (try's attempt, run's
 * start): NVML's per-process used memory of the pids in its process group, sampled on isolate's
 * ticks and summed per GPU, the largest kept; and the peak the child reports itself on a line
 * `vramkit: peak_bytes=N [device=K]` (what a PyTorch program prints from
 * torch.cuda.max_memory_reserved()), the largest kept. Prints nothing. */
#ifndef VRAMKIT_DRIVER_ISOLATE_PEAK_H
#define VRAMKIT_DRIVER_ISOLATE_PEAK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <vramkit/base.h>

#include "util/json.h"

struct vram_gpumem_ops;

#define VRAM_PEAK_MAX_GPUS 16
#define VRAM_PEAK_LINE "vramkit: peak_bytes=" /* the child's own report starts so */
#define VRAM_PEAK_EVERY_S 0.1                 /* NVML is read at most this often */

typedef struct vram_peak {
    const struct vram_gpumem_ops *mem; /* an opened NVML table, or NULL: no NVML peak */
    const char *no_nvml;               /* why there is none ("" when mem is set) */
    uint64_t gpu_peak[VRAM_PEAK_MAX_GPUS]; /* the group's largest use on each GPU */
    uint64_t total_peak;               /* the largest sum over the GPUs in one sample */
    uint64_t last_total;               /* the sum of the last sample */
    uint32_t samples;                  /* NVML samples taken */
    int seen;                          /* a sample found the group on some GPU */
    double next_s;                     /* monotonic time of the next sample */
    int reported;                      /* the child printed a peak line */
    uint64_t reported_bytes;           /* the largest it printed */
    int reported_device;               /* its device=K (-1: none given) */
    char line[96];                     /* private: the start of the output line being read */
    size_t line_len;
    int line_skip;                     /* private: this line is too long to be a peak line */
} vram_peak;

/* A fresh tracker over mem (NULL: none; why says so). */
void vram_peak_init(vram_peak *p, const struct vram_gpumem_ops *mem, const char *why);

/* On isolate's tick: when VRAM_PEAK_EVERY_S has passed, reads every GPU's process list and
 * sums the bytes of the processes in `group` (a pid whose process group is group). A failed
 * read counts no sample. */
void vram_peak_tick(vram_peak *p, pid_t group);

/* On isolate's output (stream 1 or 2, in pieces of any size): lines
 * "vramkit: peak_bytes=N" with an optional " device=K" are kept (the largest N). */
void vram_peak_output(vram_peak *p, const char *data, size_t n);
/* The end of the output: a last line without its newline counts. */
void vram_peak_finish(vram_peak *p);

/* The GPU with the largest per-GPU peak, -1 when NVML saw none. */
int vram_peak_gpu(const vram_peak *p);
/* The figure to compare with a plan: the larger of NVML's peak and the child's report; 0 when
 * neither is known. */
uint64_t vram_peak_bytes(const vram_peak *p);

/* The `measured` object: {nvml_peak_bytes|null, nvml_peak_gpu|null, reported_peak_bytes|null,
 * reported_device|null, samples, source ("nvml" | "none"), nvml_unavailable (why, or null)}. */
void vram_peak_json(vram_json *j, const vram_peak *p);
/* The text line: "measured peak: 3.21 GiB on GPU 0 (NVML, 41 samples); the child reported
 * 3.05 GiB" (no newline). */
void vram_peak_text(const vram_peak *p, char *buf, size_t cap);

#endif /* VRAMKIT_DRIVER_ISOLATE_PEAK_H */
