/* hw_context.h — for the hw tests that check who holds a GPU: whether this process has a
 * primary context on a device, asked through the driver API (reached through cudart, never
 * linked), which answers without creating one. */
#ifndef VRAMKIT_HW_CONTEXT_H
#define VRAMKIT_HW_CONTEXT_H

#include <criterion/criterion.h>
#include <cuda.h> /* types only */
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>
#include <string.h>

static inline void *hw_driver_entry(const char *name, unsigned version) {
    void *fn = NULL;
    enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    cr_assert_eq(cudaGetDriverEntryPointByVersion(name, &fn, version, cudaEnableDefault, &q), cudaSuccess, "%s",
                 name);
    cr_assert_eq(q, cudaDriverEntryPointSuccess, "the driver does not export %s", name);
    return fn;
}

/* 1 when this process holds device's primary context, 0 when not. */
static inline int hw_context_active(int device) {
    PFN_cuDeviceGet_v2000 get_device;
    PFN_cuDevicePrimaryCtxGetState_v7000 get_state;
    void *a = hw_driver_entry("cuDeviceGet", 2000), *b = hw_driver_entry("cuDevicePrimaryCtxGetState", 7000);
    memcpy(&get_device, &a, sizeof a);
    memcpy(&get_state, &b, sizeof b);
    CUdevice dev = 0;
    unsigned flags = 0;
    int active = -1;
    cr_assert_eq(get_device(&dev, device), CUDA_SUCCESS);
    cr_assert_eq(get_state(dev, &flags, &active), CUDA_SUCCESS);
    return active != 0;
}

#endif /* VRAMKIT_HW_CONTEXT_H */
