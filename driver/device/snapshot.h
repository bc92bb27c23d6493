/* driver/device/snapshot.h — take a vram_device_snapshot through a vram_device_ops table.
 * The one place the driver turns the ops table into the numbers the core reasons about
 * (versions, devices, memory, capability attributes), and says why when it could not. */
#ifndef VRAMKIT_DRIVER_SNAPSHOT_H
#define VRAMKIT_DRIVER_SNAPSHOT_H

#include <stddef.h>

#include <vramkit/device.h>

/* Fills *out from `ops`: driver and runtime versions, device count, then for every device
 * device_info, mem_info (its free/total win over device_info's) and the five tristate
 * attributes (VRAM_ATTR_*; a read that fails is VRAM_UNKNOWN, never VRAM_NO).
 * Requires: out valid (NULL gives VRAM_E_INVALID); ops may be anything (it is checked).
 * Guarantees: *out is zeroed first; out->status is the returned status; on failure
 *   out->cuda_error is ops->last_error() (0 when no CUDA call failed), devices[] holds
 *   only complete entries and device_count says how many (the failing one is zero).
 *   Statuses: VRAM_OK; vram_device_ops_check's verdict; VRAM_E_NO_DRIVER when
 *   device_count fails and the driver version is 0; VRAM_E_CUDA_STICKY when any call
 *   (an attribute read included) hits a sticky error; VRAM_E_RANGE when the backend
 *   reports a negative count, or more than VRAM_MAX_DEVICES devices (then the first
 *   VRAM_MAX_DEVICES are complete and device_count is VRAM_MAX_DEVICES); otherwise the
 *   failing call's own status (VRAM_E_NO_DEVICE, VRAM_E_CUDA, ...). A device count of 0
 *   reported as success is a complete snapshot of no devices. */
VRAM_NODISCARD vram_status vram_snapshot_take(const vram_device_ops *ops,
                                              vram_device_snapshot *out);

#endif /* VRAMKIT_DRIVER_SNAPSHOT_H */
