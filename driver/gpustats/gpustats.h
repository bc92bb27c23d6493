/* driver/gpustats/gpustats.h — GPU memory statistics for training loops, in process.
 * Open over a device ops table (the CUDA backend by default), take a sample or mark an
 * epoch, read the warnings vramkit/monitor.h raised, and log one line of GPU stats. */
#ifndef VRAMKIT_DRIVER_GPUSTATS_H
#define VRAMKIT_DRIVER_GPUSTATS_H

#include <stddef.h>

#include <vramkit/device.h>
#include <vramkit/monitor.h>

/* A typical loop (error handling shortened):
 *
 *     char err[256];
 *     vram_gpustats *g;
 *     if (vram_gpustats_open(NULL, NULL, &g, err, sizeof err) != VRAM_OK) {
 *         fprintf(stderr, "gpu stats off: %s\n", err);   // e.g. "no NVIDIA driver found"
 *         g = NULL;
 *     }
 *     vram_gpustats_mark_epoch(g);                       // before the first epoch
 *     for (int epoch = 1; epoch <= epochs; epoch++) {
 *         train_one_epoch();                             // vram_gpustats_sample(g) inside,
 *         vram_gpustats_mark_epoch(g);                   //  every N batches, if wanted
 *         char line[256];
 *         vram_gpustats_log_line(g, 0, line, sizeof line); // "gpu0 used 5.21 GiB / ..."
 *         vram_monitor_warning w[8]; size_t n;
 *         vram_gpustats_warnings(g, w, 8, &n);
 *         for (size_t i = 0; i < n; i++) {
 *             vram_gpustats_format_warning(vram_gpustats_label(g), &w[i], 1, line, sizeof line);
 *             log_warning(line);
 *         }
 *     }
 *     vram_gpustats_close(g);
 *
 * A handle is not thread-safe: use it from one thread (or lock around it). Every call
 * accepts a NULL handle and answers VRAM_E_INVALID, so a loop can run with stats off. */

typedef struct vram_gpustats vram_gpustats;

/* Unread warnings kept per handle; past it the oldest are dropped (and counted). */
#define VRAM_GPUSTATS_QUEUE 256
/* "Not known": what vram_gpustats_reserved answers until the caller says otherwise. */
#define VRAM_GPUSTATS_UNKNOWN UINT64_MAX

/* Opens a handle over `ops` (copied; NULL: the CUDA backend of this build, driver/
 * cuda_device.h) watching every device the table reports (at most
 * VRAM_MONITOR_MAX_DEVICES), under the monitor config `cfg` (NULL: all defaults).
 * It calls device_count and device_info (for names), never mem_info: the first sample
 * is the first vram_gpustats_sample.
 * Requires: out valid; err NULL or valid for errcap bytes.
 * Guarantees: VRAM_OK and *out a handle to close; otherwise *out NULL and, when err is
 * given, one line saying why: VRAM_E_NOT_BUILT (a build without CUDA and ops NULL),
 * VRAM_E_VERSION / VRAM_E_INVALID (a table this build cannot use, a bad cfg),
 * VRAM_E_NO_DRIVER, VRAM_E_NO_DEVICE (none, or 0 devices), VRAM_E_NOMEM, or
 * the failing call's status. */
vram_status vram_gpustats_open(const vram_device_ops *ops, const vram_monitor_config *cfg,
                               vram_gpustats **out, char *err, size_t errcap);

/* Releases the handle (NULL is fine). */
void vram_gpustats_close(vram_gpustats *g);

/* What it watches: devices (0 for NULL), the backend name ("cuda", "host", "mock"), the
 * label of the log lines ("gpu" or, for the host backend, "host"), a device's name ("" out
 * of range). */
int vram_gpustats_device_count(const vram_gpustats *g);
const char *vram_gpustats_backend(const vram_gpustats *g);
const char *vram_gpustats_label(const vram_gpustats *g);
const char *vram_gpustats_device_name(const vram_gpustats *g, int device);

/* Samples one device (mem_info: used = total - free, every process's memory) at the
 * monotonic time since open and feeds it to the monitor; `epoch_mark` nonzero marks the end
 * of an epoch (vramkit/monitor.h). Raised warnings go to the queue.
 * Guarantees: VRAM_OK; VRAM_E_INVALID (g NULL), VRAM_E_RANGE (no such device), or the
 * backend's failure (VRAM_E_CUDA_STICKY, ...), with vram_gpustats_error saying which call
 * failed; a failed sample changes nothing. */
vram_status vram_gpustats_sample_device(vram_gpustats *g, int device, int epoch_mark);
/* vram_gpustats_sample_device on every device, without / with an epoch mark. Stops at the
 * first failure and returns it. */
vram_status vram_gpustats_sample(vram_gpustats *g);
vram_status vram_gpustats_mark_epoch(vram_gpustats *g);

/* Moves up to cap unread warnings, oldest first, to out; the rest stay for the next call.
 * Requires: out valid for cap entries (NULL when cap is 0), n valid.
 * Guarantees: VRAM_OK with *n moved; VRAM_E_INVALID for NULL arguments (*n 0). */
vram_status vram_gpustats_warnings(vram_gpustats *g, vram_monitor_warning *out, size_t cap,
                                   size_t *n);
/* Unread warnings, and warnings dropped because the queue was full (0 for NULL). */
size_t vram_gpustats_pending(const vram_gpustats *g);
uint64_t vram_gpustats_dropped(const vram_gpustats *g);

/* The last sample of a device. VRAM_OK; VRAM_E_STATE before its first sample;
 * VRAM_E_RANGE / VRAM_E_INVALID. */
vram_status vram_gpustats_last(const vram_gpustats *g, int device, vram_monitor_sample *out);
/* The monitor's state of a device (NULL when out of range or g is NULL). */
const vram_monitor_device *vram_gpustats_state(const vram_gpustats *g, int device);

/* What this process has reserved on a device, when the caller knows it (its allocator's
 * pool): the CUDA runtime does not say, so it is VRAM_GPUSTATS_UNKNOWN until set (and
 * setting VRAM_GPUSTATS_UNKNOWN forgets it). Out-of-range devices are ignored. */
void vram_gpustats_set_reserved(vram_gpustats *g, int device, uint64_t bytes);
uint64_t vram_gpustats_reserved(const vram_gpustats *g, int device);

/* One log line of a device's last sample, e.g.
 *   "gpu0 used 5.21 GiB / 80.00 GiB (6.5%), free 74.79 GiB, reserved by this process unknown"
 * (the reserved figure when set). Guarantees: VRAM_OK; VRAM_E_BUFFER when cap is too small
 * (buf holds a NUL-terminated prefix); VRAM_E_STATE before the device's first sample;
 * VRAM_E_RANGE / VRAM_E_INVALID. */
vram_status vram_gpustats_log_line(const vram_gpustats *g, int device, char *buf, size_t cap);

/* The formatting underneath, usable without a handle. Like snprintf: the length the whole
 * text needs (buf holds a NUL-terminated prefix when it is >= cap), or -1 for NULL s/w or
 * label. Sizes are binary (GiB); a threshold that is a whole number of decimal MB prints as
 * such ("100 MB"), as it was most likely given.
 *   sample: "LABELn used U / T (P%), free F" then, with show_reserved, ", reserved by this
 *           process R" (R "unknown" for VRAM_GPUSTATS_UNKNOWN);
 *   warning: "LABELn SEVERITY NAME: SUMMARY" then, with recommendation, "; recommendation:
 *           TEXT" (vramkit/monitor.h's table, placeholders filled). */
int vram_gpustats_format_sample(const char *label, const vram_monitor_sample *s,
                                uint64_t reserved, int show_reserved, char *buf, size_t cap);
int vram_gpustats_format_warning(const char *label, const vram_monitor_warning *w,
                                 int recommendation, char *buf, size_t cap);
/* The warning's summary alone, placeholders filled (same return convention). */
int vram_gpustats_format_summary(const vram_monitor_warning *w, char *buf, size_t cap);

/* A one-line description of the last failure of the handle ("" when none). */
const char *vram_gpustats_error(const vram_gpustats *g);

#endif /* VRAMKIT_DRIVER_GPUSTATS_H */
