/* driver/cuda/cuda_internal.h — what the CUDA backend and the probe child share (CUDA
 * builds only): the one checking macro every CUDA call goes through, the process-wide
 * error state behind it, and the driver API entry points reached through cudart. */
#ifndef VRAMKIT_DRIVER_CUDA_INTERNAL_H
#define VRAMKIT_DRIVER_CUDA_INTERNAL_H

#include <cuda.h> /* types and enums only: nothing from libcuda is linked */
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include <vramkit/base.h>

/* Driver API functions, as cudaGetDriverEntryPointByVersion returned them for the ABI
 * version their typedef names; NULL when the driver does not export one. */
typedef struct vram__cuda_api {
    PFN_cuDeviceGet_v2000 cuDeviceGet;
    PFN_cuDeviceGetAttribute_v2000 cuDeviceGetAttribute;
    PFN_cuGetErrorName_v6000 cuGetErrorName;
    PFN_cuDevicePrimaryCtxGetState_v7000 cuDevicePrimaryCtxGetState;
    PFN_cuMemGetAllocationGranularity_v10020 cuMemGetAllocationGranularity;
    PFN_cuMemAddressReserve_v10020 cuMemAddressReserve;
    PFN_cuMemAddressFree_v10020 cuMemAddressFree;
    PFN_cuMemCreate_v10020 cuMemCreate;
    PFN_cuMemRelease_v10020 cuMemRelease;
    PFN_cuMemMap_v10020 cuMemMap;
    PFN_cuMemUnmap_v10020 cuMemUnmap;
    PFN_cuMemSetAccess_v10020 cuMemSetAccess;
} vram__cuda_api;

/* The entry points, looked up once per process after the runtime is initialised.
 * Guarantees: VRAM_OK and *api set (entries the driver lacks are NULL), or the status of
 * the runtime's initialisation failure (VRAM_E_NO_DRIVER, VRAM_E_NO_DEVICE, ...), the same
 * on every call. */
vram_status vram__cuda_driver_api(const vram__cuda_api **api);

/* VRAM_E_FORKED in a fork of a process that initialised CUDA, VRAM_E_CUDA_STICKY once a
 * sticky error was seen, else VRAM_OK: the gate at the top of every slot. */
vram_status vram__cuda_enter(void);

/* The check behind VRAM_CUDA_CALL. `code` is the call's cudaError_t or CUresult; `call`
 * its name (a static string; "api->cuMemCreate" is recorded as "cuMemCreate").
 * It follows the core's vram_cuda_verdict_of (the kernels' check does too). Guarantees: 0
 * gives VRAM_OK (and, for any call but the two version queries, notes that CUDA is
 * initialised in this process: driver/cuda/forkguard.h); 600 (not ready) gives VRAM_E_NOT_READY,
 * records nothing and is cleared from cudart's own last-error slot; any other code is
 * recorded as the last error and call, a sticky one marks the process (every later
 * vram__cuda_enter fails), a non-sticky one is cleared from cudart's last-error slot, and
 * the status is vram_status_from_cuda's, or VRAM_E_NO_DRIVER for 34/35 while the driver
 * version is 0. */
vram_status vram__cuda_check(int code, const char *call);

/* The last recorded error number (0 when none). */
int vram__cuda_last_error(void);

/* A name for an error number as the API of `call` spells it: cudaGetErrorName for a cuda*
 * call, cuGetErrorName for a cu* call ("CUDA_ERROR_NOT_SUPPORTED"), the core's table when
 * neither knows it, else "unknown error". Static storage, never NULL. */
const char *vram__cuda_error_text(int code, const char *call);

/* Every CUDA call: VRAM_CUDA_CALL(cudaMalloc, (&p, n)) or VRAM_CUDA_CALL(api->cuMemMap, (...)). */
#define VRAM_CUDA_CALL(fn, args) vram__cuda_check((int)(fn args), #fn)

/* Returns from the enclosing slot when the backend is unusable (sticky, forked). */
#define VRAM_CUDA_ENTER()                          \
    do {                                           \
        vram_status vram__enter_ = vram__cuda_enter(); \
        if (vram__enter_ != VRAM_OK) return vram__enter_; \
    } while (0)

#endif /* VRAMKIT_DRIVER_CUDA_INTERNAL_H */
