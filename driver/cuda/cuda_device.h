/* driver/cuda/cuda_device.h — the real device: vram_device_ops over the CUDA runtime.
 * cudart is linked statically and loads libcuda itself at run time; the driver API
 * (cuDeviceGetAttribute, cuMem*) is reached through cudaGetDriverEntryPointByVersion, never
 * linked, so a machine without an NVIDIA driver still runs vramkit and gets a clear answer. */
#ifndef VRAMKIT_DRIVER_CUDA_DEVICE_H
#define VRAMKIT_DRIVER_CUDA_DEVICE_H

#include <vramkit/device.h>

/* 1 when this build has the CUDA parts (VRAMKIT_HAVE_CUDA), else 0. */
int vram_cuda_built(void);

/* Fills *ops with the CUDA backend (backend "cuda"). Requires: ops valid (NULL gives
 * VRAM_E_INVALID). Guarantees: VRAM_OK and a table that passes vram_device_ops_check, or
 * VRAM_E_NOT_BUILT (ops untouched) in a build without the CUDA parts. flags is 0 (device
 * memory is the GPU's). Loading never fails and touches no GPU: CUDA starts on the first
 * call that needs it.
 * What the table does:
 *   - every CUDA call goes through one check that records the raw error (last_error: a
 *     cudaError_t, or a CUresult for driver API calls; the numbers in vramkit/cudaerr.h
 *     mean the same in both) and classifies it; the status is vram_status_from_cuda's,
 *     except that error 35 (insufficient driver) or 34 (stub libcuda) while the driver
 *     version reads 0 is VRAM_E_NO_DRIVER;
 *   - with no driver, driver_version gives VRAM_OK and 0, and device_count (like every call
 *     that needs the driver) VRAM_E_NO_DRIVER, so vram_snapshot_take reports VRAM_E_NO_DRIVER;
 *   - a sticky error (vram_cuda_error_class == VRAM_CUDA_STICKY) marks the backend unusable
 *     for the rest of the process: every later call returns VRAM_E_CUDA_STICKY and
 *     last_error keeps the sticky code. The state is per process (one CUDA runtime), shared
 *     by every table this function fills; the slots are thread-safe as cudart is;
 *   - in a process forked after CUDA was initialised here (driver/cuda/forkguard.h), every slot
 *     returns VRAM_E_FORKED and last_error VRAM_FORK_GUARD_CUDA_CODE;
 *   - slots that take a device (device_info, mem_info, dev_alloc, dev_free, stream_create)
 *     work on that device and leave the calling thread's current device as it was;
 *     set_device changes it (cudaSetDevice). mem_info and device_info create the device's
 *     primary context (as any cudaMemGetInfo does): on a GPU in compute mode "prohibited"
 *     mem_info fails (cudaErrorDevicesUnavailable, 46) and device_info reports free 0;
 *   - attribute reads the CUdevice_attribute number through cuDeviceGetAttribute; when the
 *     driver does not export it, the numbers cudart shares (99, 115, 119) fall back to
 *     cudaDeviceGetAttribute and others are VRAM_E_NOT_SUPPORTED; an unknown number is the
 *     driver's CUDA_ERROR_INVALID_VALUE (VRAM_E_CUDA, last_error 1);
 *   - release_device resets the device's primary context (cudaDeviceReset) when it is alive
 *     (cuDevicePrimaryCtxGetState), and creates none when it is not; the calling thread's
 *     current device is then selected again if its context still lives, else it stays
 *     `device` (selecting another would create that one's context again);
 *   - host_alloc_pinned is cudaHostAlloc(portable), host_register cudaHostRegister(portable),
 *     streams are cudaStreamNonBlocking (never ordered with the legacy default stream: only
 *     events order them), events have timing disabled; event_query answers VRAM_E_NOT_READY without recording an error;
 *     size 0 allocations succeed with NULL; bytes beyond size_t are VRAM_E_OOM; NULL
 *     outputs, negative devices, bad copy kinds, and NULL stream/event handles where one is
 *     needed are VRAM_E_INVALID without any CUDA call. */
vram_status vram_cuda_ops(vram_device_ops *ops);

/* Releases the primary context of every device that has one (the table's release_device
 * on each), so that a process that only looked (plan, estimate, try --model before it
 * starts its attempts) holds no GPU memory while other processes load. Pointers, streams
 * and events made through the table are invalid afterwards. Nothing to do without the CUDA
 * parts, a driver, or a device. */
void vram_cuda_release(void);

/* The devices whose primary context is alive now in this process (bit d for device d; a
 * device past 63, or one whose state cannot be read, counts as alive), read without creating
 * any; 0 without the CUDA parts, a driver or a device. With vram_cuda_release_except, a
 * caller that looks at the GPUs from inside someone's process (the Python package) gives
 * back only the contexts it made: a context that was alive before (a framework's) is kept. */
uint64_t vram_cuda_live_contexts(void);
/* vram_cuda_release for the devices whose bit in `keep` is clear. */
void vram_cuda_release_except(uint64_t keep);

/* Test hook, private: passes a raw CUDA error number through the very check every CUDA call
 * of this backend goes through (as if `call` had returned it), so the recording and the
 * sticky rule can be tested without a GPU. Returns what a slot would return. In a build
 * without the CUDA parts: VRAM_E_NOT_BUILT, nothing recorded. */
vram_status vram__cuda_inject(int code, const char *call);

/* The name of the last CUDA call that failed ("cudaMalloc", "cuMemCreate"), or "" when
 * none has; static storage. For one-line reports (the probes). */
const char *vram__cuda_last_call(void);

#endif /* VRAMKIT_DRIVER_CUDA_DEVICE_H */
