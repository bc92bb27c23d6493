/* driver/device/host_device.h — a vram_device_ops over plain host memory (backend "host").
 * One "device" that is the machine's RAM, so the streamer and the CLI run, and are tested,
 * without a GPU: allocation is malloc, copies are memcpy, streams and events are trivial. */
#ifndef VRAMKIT_DRIVER_HOST_DEVICE_H
#define VRAMKIT_DRIVER_HOST_DEVICE_H

#include <vramkit/device.h>

/* The host table: api_version/size of this build, backend "host", flags
 * VRAM_DEVICE_HOST_MEMORY, ctx NULL, stateless and thread-safe. What it reports:
 *   - device_count 1; device 0 named "host (CPU memory)", cc 0.0, total = physical RAM,
 *     free = MemAvailable (/proc/meminfo; sysconf when that cannot be read), integrated 1
 *     (it *is* system memory), 0 SMs and copy engines, compute mode default;
 *   - driver_version and runtime_version 0: there is no CUDA here;
 *   - attributes: VMM, POSIX-fd handles, RDMA, memory pools no (0); host registration yes
 *     (1: it is a successful no-op); pool handle types 0; any other number
 *     VRAM_E_NOT_SUPPORTED;
 *   - dev_alloc 256-byte aligned, host_alloc_pinned page aligned (both plain heap memory);
 *     memcpy_async copies before returning; event_query always says done; release_device
 *     has nothing to give back; last_error 0.
 * Bad arguments (NULL outputs, device != 0, bad copy kind, NULL pointers with bytes > 0)
 * give VRAM_E_INVALID; a failed allocation VRAM_E_OOM. */
vram_device_ops vram_host_ops(void);

/* Parses the "MemAvailable:" line of /proc/meminfo text into bytes. Requires: text is
 * NUL-terminated. Guarantees: VRAM_OK and *bytes set, VRAM_E_FORMAT when the line is
 * missing or malformed, VRAM_E_OVERFLOW when it does not fit 64 bits (*bytes untouched). */
vram_status vram__host_parse_meminfo(const char *text, uint64_t *bytes);

#endif /* VRAMKIT_DRIVER_HOST_DEVICE_H */
