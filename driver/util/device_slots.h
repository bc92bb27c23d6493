/* driver/util/device_slots.h — the function slots of the device ops table (vramkit/device.h) as
 * one list, so that a backend fills all of them from its functions' names in one line instead of
 * 25 assignments written again by every backend (cuda, the fork guard, host memory, NVML's
 * adapter). A slot added to the table is added here once, and vram_device_ops_check refuses a
 * table with a slot left NULL. */
#ifndef VRAMKIT_DRIVER_UTIL_DEVICE_SLOTS_H
#define VRAMKIT_DRIVER_UTIL_DEVICE_SLOTS_H

#include <vramkit/device.h>

/* X(t, prefix, slot) for every function slot of vram_device_ops, in the table's order. */
#define VRAM_DEVICE_OPS_SLOTS(X, t, prefix)                                                       \
    X(t, prefix, driver_version) X(t, prefix, runtime_version) X(t, prefix, device_count)          \
    X(t, prefix, device_info) X(t, prefix, mem_info) X(t, prefix, attribute)                       \
    X(t, prefix, set_device) X(t, prefix, release_device) X(t, prefix, dev_alloc)                  \
    X(t, prefix, dev_free) X(t, prefix, host_alloc_pinned) X(t, prefix, host_free_pinned)          \
    X(t, prefix, host_register) X(t, prefix, host_unregister) X(t, prefix, stream_create)          \
    X(t, prefix, stream_destroy) X(t, prefix, stream_sync) X(t, prefix, memcpy_async)              \
    X(t, prefix, event_create) X(t, prefix, event_destroy) X(t, prefix, event_record)              \
    X(t, prefix, event_query) X(t, prefix, event_sync) X(t, prefix, stream_wait_event)             \
    X(t, prefix, last_error)

#define VRAM__DEVICE_OPS_SLOT(t, prefix, slot) (t).slot = prefix##_##slot;

/* Sets every function slot of the table t (an lvalue) to the function prefix_<slot>: the
 * backend names its functions after the slots they fill (cuda_mem_info, fg_mem_info, ...). */
#define VRAM_DEVICE_OPS_FILL(t, prefix) VRAM_DEVICE_OPS_SLOTS(VRAM__DEVICE_OPS_SLOT, t, prefix)

#endif /* VRAMKIT_DRIVER_UTIL_DEVICE_SLOTS_H */
