/* driver/device/snapshot.c — a whole machine, read through the ops table at one moment.
 * Reads in the order a diagnosis needs (versions before devices), stops at the first
 * failure that makes the rest meaningless, and never presents a partial result as whole. */
#include "snapshot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vramkit/cudaerr.h>


/* Records why the snapshot stops. The raw code comes from the backend's own record. */
static vram_status snap_fail(const vram_device_ops *ops, vram_device_snapshot *out,
                             vram_status st) {
    int code = ops->last_error(ops->ctx);
    /* a backend that could not name the status sticky may still have said so in its code */
    if (st != VRAM_E_CUDA_STICKY && code != 0 && vram_cuda_error_class(code) == VRAM_CUDA_STICKY)
        st = VRAM_E_CUDA_STICKY;
    out->status = st;
    out->cuda_error = code;
    return st;
}

static int snap_is_sticky(const vram_device_ops *ops, vram_status st) {
    if (st == VRAM_E_CUDA_STICKY) return 1;
    int code = ops->last_error(ops->ctx);
    return code != 0 && vram_cuda_error_class(code) == VRAM_CUDA_STICKY;
}

/* One attribute as a tristate. Any failure but a sticky one only makes it unknown: an old
 * driver does not know newer attributes, and that says nothing about the device. */
static vram_status snap_attr(const vram_device_ops *ops, int device, int attr,
                             vram_tristate *out) {
    int value = 0;
    vram_status st = ops->attribute(ops->ctx, device, attr, &value);
    if (st == VRAM_OK) {
        *out = value != 0 ? VRAM_YES : VRAM_NO;
        return VRAM_OK;
    }
    *out = VRAM_UNKNOWN;
    return snap_is_sticky(ops, st) ? VRAM_E_CUDA_STICKY : VRAM_OK;
}

static vram_status snap_device(const vram_device_ops *ops, int i, vram_device_info *d) {
    vram_status st = ops->device_info(ops->ctx, i, d);
    if (st != VRAM_OK) return st;
    d->name[VRAM_DEVICE_NAME_MAX - 1] = '\0'; /* whatever the backend wrote */
    d->ordinal = i;
    uint64_t free_bytes = 0, total_bytes = 0;
    st = ops->mem_info(ops->ctx, i, &free_bytes, &total_bytes);
    if (st != VRAM_OK) return st;
    d->free_bytes = free_bytes;
    d->total_bytes = total_bytes;
    const struct {
        int attr;
        vram_tristate *field;
    } attrs[] = {
        {VRAM_ATTR_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, &d->vmm},
        {VRAM_ATTR_HANDLE_TYPE_POSIX_FD_SUPPORTED, &d->vmm_posix_fd},
        {VRAM_ATTR_GPU_DIRECT_RDMA_WITH_VMM_SUPPORTED, &d->vmm_rdma},
        {VRAM_ATTR_MEMORY_POOLS_SUPPORTED, &d->memory_pools},
        {VRAM_ATTR_HOST_REGISTER_SUPPORTED, &d->host_register},
    };
    for (size_t k = 0; k < sizeof attrs / sizeof attrs[0]; k++) {
        st = snap_attr(ops, i, attrs[k].attr, attrs[k].field);
        if (st != VRAM_OK) return st;
    }
    /* a bitmask, not a yes/no: kept as the number, -1 when it cannot be read */
    int types = 0;
    st = ops->attribute(ops->ctx, i, VRAM_ATTR_MEMPOOL_SUPPORTED_HANDLE_TYPES, &types);
    if (st != VRAM_OK && snap_is_sticky(ops, st)) return VRAM_E_CUDA_STICKY;
    d->mempool_handle_types = st == VRAM_OK ? types : -1;
    return VRAM_OK;
}

vram_status vram_snapshot_take(const vram_device_ops *ops, vram_device_snapshot *out) {
    if (out == NULL) return VRAM_E_INVALID;
    memset(out, 0, sizeof *out);
    vram_status st = vram_device_ops_check(ops);
    if (st != VRAM_OK) {
        out->status = st;
        return st;
    }

    int drv = 0, rt = 0, count = 0;
    st = ops->driver_version(ops->ctx, &drv);
    if (st != VRAM_OK) return snap_fail(ops, out, st);
    out->driver_version = drv;
    st = ops->runtime_version(ops->ctx, &rt);
    if (st != VRAM_OK) return snap_fail(ops, out, st);
    out->runtime_version = rt;

    st = ops->device_count(ops->ctx, &count);
    if (st != VRAM_OK) {
        /* cudart says 35 both when the driver is missing and when it is too old; only the
         * version query tells them apart */
        if (drv == 0 && st != VRAM_E_CUDA_STICKY) st = VRAM_E_NO_DRIVER;
        return snap_fail(ops, out, st);
    }
    if (count < 0) {
        out->status = VRAM_E_RANGE;
        return VRAM_E_RANGE;
    }
    int n = count > VRAM_MAX_DEVICES ? VRAM_MAX_DEVICES : count;

    for (int i = 0; i < n; i++) {
        st = snap_device(ops, i, &out->devices[i]);
        if (st != VRAM_OK) {
            memset(&out->devices[i], 0, sizeof out->devices[i]);
            out->device_count = i;
            return snap_fail(ops, out, st);
        }
        out->device_count = i + 1;
    }
    /* complete for the devices it holds, but not the whole machine */
    out->status = count > n ? VRAM_E_RANGE : VRAM_OK;
    return out->status;
}
