/* vramkit/diagnose.h — what is wrong with this machine for CUDA work, and what to do.
 * Facts in (a device snapshot, the environment variables, the platform, optional probe
 * verdicts, an optional model size), findings out: a stable id, a severity, the numbers
 * behind it and a remedy, most severe first, in the caller's array. Pure: nothing printed. */
#ifndef VRAMKIT_DIAGNOSE_H
#define VRAMKIT_DIAGNOSE_H

#include "base.h"
#include "device.h"

/* The rules, all of them (from the CUDA runtime's documented errors and device attributes,
 * and the way PyTorch parses PYTORCH_CUDA_ALLOC_CONF and CUDA reads CUDA_VISIBLE_DEVICES).
 *
 * Machine. NO_CUDA_IN_BUILD when the snapshot says VRAM_E_NOT_BUILT (the device table of
 * a build without CUDA). NO_DRIVER when the snapshot says VRAM_E_NO_DRIVER, or it failed
 * with the driver version 0 and CUDA 35: cudart reports 35 both without a driver and with
 * one too old; only the version query tells them apart. DRIVER_TOO_OLD when the driver's CUDA major is
 * below the runtime's (the runtime cannot start: every call fails with 35);
 * DRIVER_OLDER_MINOR (warning) when the majors match and the driver is older (minor-version
 * compatibility: most things work, features of the newer minor fail with 801, PTX of the
 * newer toolkit with 222). The minimum drivers: 11.x >= 450.80.02, 12.x >= 525.60.13,
 * 13.x >= 580 (vram_diag_min_driver). DRIVER_MISMATCH on CUDA 803 (libcuda and the kernel
 * module differ). FORWARD_COMPAT_UNSUPPORTED on CUDA 804, or when LD_LIBRARY_PATH holds a
 * forward-compat directory (a path component "compat", or "cuda-compat") and a GPU is a
 * GeForce or TITAN (forward compatibility is for data-centre GPUs); with such a directory
 * and no such GPU, FORWARD_COMPAT_IN_USE (info). FORKED_AFTER_INIT when the caller says
 * this process is a fork of one that had initialised CUDA, or the snapshot says
 * VRAM_E_FORKED. NO_DEVICE when a driver answered but no GPU is visible and
 * CUDA_VISIBLE_DEVICES does not explain it. DEVICE_UNAVAILABLE when the snapshot stopped
 * at a GPU that refused a context (CUDA 46: prohibited, or exclusive and taken; the
 * snapshot holds the GPUs before it, so it is GPU device_count). SNAPSHOT_FAILED for any
 * other failed snapshot (a sticky error, a table of another API version) that none of the
 * above explains.
 *
 * Environment. CUDA_VISIBLE_DEVICES (vram_visible_parse): set but enumerating nothing is
 * VISIBLE_DEVICES_HIDE_ALL (error); enumeration stopping before the last entry is
 * VISIBLE_DEVICES_IGNORED (warning). Existence is judged against physical_gpus when known,
 * else against the snapshot's device count when the driver answered. CUDA_LAUNCH_BLOCKING
 * whose leading integer is not 0 is LAUNCH_BLOCKING (warning: every launch waits).
 * The PyTorch allocator setting (PYTORCH_ALLOC_CONF, else PYTORCH_CUDA_ALLOC_CONF; the
 * caller picks) is parsed as PyTorch does (vram_alloc_conf_parse); one PyTorch would refuse
 * is ALLOC_CONF_INVALID (error: the first CUDA allocation raises).
 *
 * Platform. PLATFORM_WSL2 (warning: pinned memory is limited, capability attributes have
 * been seen to lie); PLATFORM_JETSON (info) for the flag or an integrated GPU;
 * PLATFORM_VGPU (info) for the flag or a GPU named like a vGPU profile ("A40-48C").
 *
 * Each GPU of the snapshot. GPU_TOO_OLD_FOR_RUNTIME when its compute capability is below
 * what the runtime's major still compiles for (11: 3.5, 12: 5.0, 13: 7.5).
 * ARCH_NOT_IN_BUILD when an architecture list is given and nothing in it runs on the GPU
 * (vram_diag_arch_covered).
 * KERNEL_PROBE_FAILED, ALLOC_PROBE_FAILED when those probes ran and failed.
 * COMPUTE_PROHIBITED (error), COMPUTE_EXCLUSIVE (warning: thread or process exclusive).
 * VMM and memory pools are judged by their probe when it ran, else by the attribute ("the
 * probe wins"); a probe that disagrees with a known attribute is PROBE_CONTRADICTS_ATTRIBUTE.
 * With expandable_segments:True: no VMM is EXPANDABLE_SEGMENTS_NO_VMM (error: PyTorch's
 * first allocation fails with "CUDA driver error: operation not supported"); VMM not probed on WSL2,
 * Jetson, a vGPU or with the attribute unknown is EXPANDABLE_SEGMENTS_UNVERIFIED (warning).
 * Without it, no VMM is VMM_UNSUPPORTED (info). With backend:cudaMallocAsync: no pools is
 * ASYNC_ALLOC_NO_POOLS (error), else no pools is POOLS_UNSUPPORTED (info).
 * pinned_use_cuda_host_register:True with host registration unsupported is
 * HOST_REGISTER_CONF_UNSUPPORTED (error). Host registration unsupported or the pinned probe
 * failed is PINNED_UNAVAILABLE (warning). COTENANT (warning) when the memory in use
 * (total - free) is more than cotenant_permille / 1000 of total (default half: "most").
 *
 * Model (model_bytes given and a usable GPU). The usable GPU with the most free memory
 * decides: MODEL_FITS (info) with what is left, or MODEL_DOES_NOT_FIT (error) with the
 * shortfall. A usable GPU: in a snapshot that is OK (or only truncated: VRAM_E_RANGE),
 * not prohibited, not too old for the runtime, and its kernel probe (when run) did not fail.
 *
 * Order. Most severe first; among equals, in VRAM_FINDING_LIST order (root causes first),
 * then by device. */

/* ---- types -------------------------------------------------------------------------- */

#define VRAM_FINDING_EVIDENCE 4          /* numbers a finding carries */
#define VRAM_DIAG_MAX_ARCHS 32           /* entries of a build's architecture list */
#define VRAM_DIAG_PER_DEVICE_MAX 16      /* findings one GPU can raise, at most */
#define VRAM_DIAG_MACHINE_MAX 24         /* findings about the machine, at most */
/* An array this long always holds every finding of one vram_diagnose call. */
#define VRAM_DIAG_MAX_FINDINGS (VRAM_DIAG_MACHINE_MAX + VRAM_DIAG_PER_DEVICE_MAX * VRAM_MAX_DEVICES)
#define VRAM_DIAG_DEFAULT_COTENANT_PERMILLE 500u

typedef enum vram_severity {
    VRAM_SEV_NONE = 0, /* only as "no finding" (vram_findings_worst) */
    VRAM_SEV_INFO = 1,
    VRAM_SEV_WARNING = 2,
    VRAM_SEV_ERROR = 3
} vram_severity;

/* How an evidence number reads. */
typedef enum vram_evidence_unit {
    VRAM_EVU_NONE = 0,     /* slot unused */
    VRAM_EVU_COUNT,        /* a plain integer */
    VRAM_EVU_BYTES,        /* bytes (clamped to INT64_MAX) */
    VRAM_EVU_CUDA_VERSION, /* 13000 = CUDA 13.0; 0 = none */
    VRAM_EVU_CC,           /* compute capability as cc*10: 90 = 9.0 */
    VRAM_EVU_TRISTATE,     /* vram_tristate: -1 unknown, 0 no, 1 yes */
    VRAM_EVU_CUDA_ERROR,   /* a cudaError_t number (vram_cuda_error_name); 0 = none */
    VRAM_EVU_STATUS,       /* a vram_status */
    VRAM_EVU_PROBE,        /* a vram_diag_probe_kind */
    VRAM_EVU_BRANCH,       /* a driver branch (580); 0 = unknown */
    VRAM_EVU_OFFSET,       /* a byte offset into an environment value */
    VRAM_EVU_INDEX,        /* a 0-based position in a list */
    VRAM_EVU_VISIBLE_STOP, /* a vram_visible_stop */
    VRAM_EVU_COMPUTE_MODE, /* a vram_compute_mode */
    VRAM_EVU_DEVICE        /* a GPU index; -1 = none */
} vram_evidence_unit;

typedef struct vram_evidence_spec {
    vram_evidence_unit unit;
    const char *name; /* the key in JSON and the {placeholder} in the summary; NULL unused */
} vram_evidence_spec;

#define VRAM_EV(unit, name) {VRAM_EVU_##unit, name}
#define VRAM_EV_NONE {VRAM_EVU_NONE, NULL}

/* X(id, name, severity, summary, remedy, evidence 0..3). The name is stable (JSON, tests).
 * The summary is a template: the CLI replaces {name} with the evidence of that name. */
#define VRAM_FINDING_LIST(X)                                                                     \
    X(VRAM_FINDING_NO_DRIVER, "no_driver", VRAM_SEV_ERROR,                                       \
      "no NVIDIA driver found: CUDA cannot start (runtime {runtime}, CUDA error {cuda_error})",  \
      "install the NVIDIA driver for this GPU (CUDA 13 needs branch 580 or newer); in a "        \
      "container, start it with the NVIDIA container toolkit (--gpus all) so libcuda.so.1 is "   \
      "mounted. On a machine without an NVIDIA GPU use the CPU strategy: vramkit plan --model "  \
      "MODEL chooses cpu",                                                                       \
      VRAM_EV(CUDA_VERSION, "runtime"), VRAM_EV(CUDA_ERROR, "cuda_error"),                       \
      VRAM_EV(BRANCH, "kernel_module"), VRAM_EV_NONE)                                            \
    X(VRAM_FINDING_NO_CUDA_IN_BUILD, "no_cuda_in_build", VRAM_SEV_ERROR,                         \
      "this program was built without its CUDA parts: it cannot read any GPU",                   \
      "rebuild with the CUDA toolkit installed (nvcc found; cmake -DVRAMKIT_CUDA=ON), or use "    \
      "the CPU strategy",                                                                        \
      VRAM_EV_NONE, VRAM_EV_NONE, VRAM_EV_NONE, VRAM_EV_NONE)                                    \
    X(VRAM_FINDING_DRIVER_TOO_OLD, "driver_too_old", VRAM_SEV_ERROR,                             \
      "the driver supports CUDA {driver}, older than this program's runtime CUDA {runtime}: "    \
      "the runtime cannot start (CUDA error 35, insufficient driver)",                           \
      "install a driver of branch {min_driver} or newer (minimums: CUDA 11.x 450.80.02, 12.x "   \
      "525.60.13, 13.x 580), or use a build made with an older CUDA toolkit",                    \
      VRAM_EV(CUDA_VERSION, "driver"), VRAM_EV(CUDA_VERSION, "runtime"),                         \
      VRAM_EV(BRANCH, "min_driver"), VRAM_EV(BRANCH, "kernel_module"))                           \
    X(VRAM_FINDING_DRIVER_MISMATCH, "driver_mismatch", VRAM_SEV_ERROR,                           \
      "the user-space driver (libcuda) and the kernel module are different versions "            \
      "(CUDA error {cuda_error})",                                                               \
      "reboot after a driver update, or remove the stray libcuda.so from LD_LIBRARY_PATH or "    \
      "the container so both come from one driver install",                                     \
      VRAM_EV(CUDA_ERROR, "cuda_error"), VRAM_EV(BRANCH, "kernel_module"), VRAM_EV_NONE,         \
      VRAM_EV_NONE)                                                                              \
    X(VRAM_FINDING_FORWARD_COMPAT_UNSUPPORTED, "forward_compat_unsupported", VRAM_SEV_ERROR,     \
      "forward-compatibility libraries (cuda-compat) are in use on a GPU that cannot use them "  \
      "(CUDA error {cuda_error}; GPU {gpu})",                                                    \
      "remove the cuda-compat directory from LD_LIBRARY_PATH (entry at byte {path_offset}) and " \
      "install a driver new enough for the runtime instead: forward compatibility works only "   \
      "on data-centre GPUs",                                                                     \
      VRAM_EV(CUDA_ERROR, "cuda_error"), VRAM_EV(DEVICE, "gpu"), VRAM_EV(OFFSET, "path_offset"), \
      VRAM_EV_NONE)                                                                              \
    X(VRAM_FINDING_FORKED_AFTER_INIT, "forked_after_init", VRAM_SEV_ERROR,                       \
      "this process is a fork of one that had initialised CUDA: CUDA cannot work here",          \
      "start workers with spawn/exec (Python multiprocessing: set_start_method(\"spawn\")), or " \
      "initialise CUDA only after the fork, in the child",                                       \
      VRAM_EV_NONE, VRAM_EV_NONE, VRAM_EV_NONE, VRAM_EV_NONE)                                    \
    X(VRAM_FINDING_VISIBLE_DEVICES_HIDE_ALL, "visible_devices_hide_all", VRAM_SEV_ERROR,         \
      "CUDA_VISIBLE_DEVICES hides every GPU: enumeration stops at entry {stop_at} of {entries} " \
      "({stop})",                                                                                \
      "unset CUDA_VISIBLE_DEVICES, or list GPUs that exist, by index from 0 or by UUID "         \
      "(nvidia-smi -L), each once; an empty value or -1 hides all GPUs",                         \
      VRAM_EV(INDEX, "stop_at"), VRAM_EV(VISIBLE_STOP, "stop"), VRAM_EV(COUNT, "entries"),       \
      VRAM_EV(COUNT, "physical_gpus"))                                                           \
    X(VRAM_FINDING_NO_DEVICE, "no_device", VRAM_SEV_ERROR,                                       \
      "the driver answered (CUDA {driver}) but reports no usable GPU (CUDA error {cuda_error})", \
      "check that the GPU is seen by nvidia-smi and that this process (container, cgroup, "      \
      "scheduler) was given it; without a GPU use the CPU strategy: vramkit plan --model MODEL " \
      "chooses cpu",                                                                             \
      VRAM_EV(CUDA_VERSION, "driver"), VRAM_EV(CUDA_ERROR, "cuda_error"), VRAM_EV_NONE,          \
      VRAM_EV_NONE)                                                                              \
    X(VRAM_FINDING_DEVICE_UNAVAILABLE, "device_unavailable", VRAM_SEV_ERROR,                     \
      "GPU {gpu} refused a CUDA context (CUDA error {cuda_error}, devices unavailable): its "    \
      "compute mode is prohibited, or exclusive and held by another process",                   \
      "nvidia-smi -q -d COMPUTE shows the mode and nvidia-smi the process holding it; ask for "  \
      "the default compute mode (nvidia-smi -i N -c DEFAULT) or use another GPU",                \
      VRAM_EV(DEVICE, "gpu"), VRAM_EV(CUDA_ERROR, "cuda_error"), VRAM_EV_NONE, VRAM_EV_NONE)     \
    X(VRAM_FINDING_SNAPSHOT_FAILED, "snapshot_failed", VRAM_SEV_ERROR,                           \
      "the GPUs could not be read: {status} (CUDA error {cuda_error})",                          \
      "run again in a fresh process; a sticky error means the GPU or driver is in a bad state "  \
      "(check dmesg for Xid errors, reset the GPU); report the error number if it persists",     \
      VRAM_EV(STATUS, "status"), VRAM_EV(CUDA_ERROR, "cuda_error"), VRAM_EV_NONE, VRAM_EV_NONE)  \
    X(VRAM_FINDING_GPU_TOO_OLD_FOR_RUNTIME, "gpu_too_old_for_runtime", VRAM_SEV_ERROR,           \
      "compute capability {cc} is below {min_cc}, the oldest that CUDA {runtime} compiles for: " \
      "no kernel of this build can run on it",                                                   \
      "use a build made with an older CUDA toolkit (CUDA 12.x still supports 5.0 and newer), "   \
      "or a newer GPU",                                                                          \
      VRAM_EV(CC, "cc"), VRAM_EV(CC, "min_cc"), VRAM_EV(CUDA_VERSION, "runtime"), VRAM_EV_NONE)  \
    X(VRAM_FINDING_ARCH_NOT_IN_BUILD, "arch_not_in_build", VRAM_SEV_ERROR,                       \
      "compute capability {cc} is not in the build's architectures ({lowest} .. {highest}): "    \
      "kernels fail with 'no kernel image is available' (CUDA error 209)",                       \
      "rebuild with this architecture (CMAKE_CUDA_ARCHITECTURES / -gencode arch=compute_XX,"     \
      "code=sm_XX), or add PTX of an architecture at or below it so the driver can JIT it",      \
      VRAM_EV(CC, "cc"), VRAM_EV(CC, "lowest"), VRAM_EV(CC, "highest"), VRAM_EV_NONE)            \
    X(VRAM_FINDING_KERNEL_PROBE_FAILED, "kernel_probe_failed", VRAM_SEV_ERROR,                   \
      "a trivial kernel could not run on this GPU: {status} (CUDA error {cuda_error})",          \
      "209 means no kernel image for this architecture: rebuild for it; 222 means PTX newer "    \
      "than the driver: update the driver; anything else: check dmesg for Xid errors",           \
      VRAM_EV(STATUS, "status"), VRAM_EV(CUDA_ERROR, "cuda_error"), VRAM_EV_NONE, VRAM_EV_NONE)  \
    X(VRAM_FINDING_COMPUTE_PROHIBITED, "compute_prohibited", VRAM_SEV_ERROR,                     \
      "compute mode is prohibited: no process may create a CUDA context on this GPU",            \
      "ask the administrator to set the default compute mode (nvidia-smi -i N -c DEFAULT), or "  \
      "use another GPU",                                                                         \
      VRAM_EV(COMPUTE_MODE, "mode"), VRAM_EV_NONE, VRAM_EV_NONE, VRAM_EV_NONE)                   \
    X(VRAM_FINDING_EXPANDABLE_SEGMENTS_NO_VMM, "expandable_segments_no_vmm", VRAM_SEV_ERROR,     \
      "PyTorch's expandable_segments:True needs CUDA virtual memory management, which this GPU " \
      "does not offer (attribute {vmm}, probe CUDA error {probe_error}): the first allocation "   \
      "fails with 'CUDA driver error: operation not supported' (801)",                           \
      "set expandable_segments:False in PYTORCH_CUDA_ALLOC_CONF (or remove the setting), or "    \
      "run where VMM works (bare metal, or a vGPU/WSL setup whose probe passes: vramkit doctor " \
      "--probe)",                                                                                \
      VRAM_EV(TRISTATE, "vmm"), VRAM_EV(TRISTATE, "vmm_probe_ok"),                               \
      VRAM_EV(CUDA_ERROR, "probe_error"), VRAM_EV_NONE)                                          \
    X(VRAM_FINDING_ASYNC_ALLOC_NO_POOLS, "async_alloc_no_pools", VRAM_SEV_ERROR,                 \
      "backend:cudaMallocAsync is configured but this GPU has no CUDA memory pools (attribute "   \
      "{pools}, probe CUDA error {probe_error}): allocations fail",                              \
      "remove backend:cudaMallocAsync from the PyTorch allocator setting (the native caching "   \
      "allocator works without pools)",                                                          \
      VRAM_EV(TRISTATE, "pools"), VRAM_EV(TRISTATE, "pool_probe_ok"),                            \
      VRAM_EV(CUDA_ERROR, "probe_error"), VRAM_EV_NONE)                                          \
    X(VRAM_FINDING_HOST_REGISTER_CONF_UNSUPPORTED, "host_register_conf_unsupported",             \
      VRAM_SEV_ERROR,                                                                            \
      "pinned_use_cuda_host_register:True is configured but this GPU does not support "          \
      "registering host memory (attribute {host_register})",                                     \
      "remove pinned_use_cuda_host_register:True from the PyTorch allocator setting",            \
      VRAM_EV(TRISTATE, "host_register"), VRAM_EV_NONE, VRAM_EV_NONE, VRAM_EV_NONE)              \
    X(VRAM_FINDING_ALLOC_CONF_INVALID, "alloc_conf_invalid", VRAM_SEV_ERROR,                     \
      "PyTorch will refuse its allocator setting at byte {offset} (values are case-sensitive: "  \
      "True/False; backend is native or cudaMallocAsync): the first CUDA allocation raises",     \
      "fix the setting: comma-separated key:value pairs, e.g. "                                  \
      "expandable_segments:True,max_split_size_mb:128",                                          \
      VRAM_EV(OFFSET, "offset"), VRAM_EV(COUNT, "pairs_read"), VRAM_EV_NONE, VRAM_EV_NONE)       \
    X(VRAM_FINDING_MODEL_DOES_NOT_FIT, "model_does_not_fit", VRAM_SEV_ERROR,                     \
      "the model needs {need}; the GPU with the most free memory has {free} free: {short} short", \
      "free memory held by other processes (nvidia-smi shows them), or pick a smaller strategy " \
      "(int8, int4, a GPU/CPU split): vramkit plan --model MODEL",                               \
      VRAM_EV(BYTES, "need"), VRAM_EV(BYTES, "free"), VRAM_EV(BYTES, "short"),                   \
      VRAM_EV(BYTES, "total"))                                                                   \
    X(VRAM_FINDING_DRIVER_OLDER_MINOR, "driver_older_minor", VRAM_SEV_WARNING,                   \
      "the driver supports CUDA {driver}, older than the runtime CUDA {runtime}: it runs under " \
      "minor-version compatibility, but features of the newer minor fail with 'operation not "   \
      "supported' (801) and PTX built by the newer toolkit with error 222",                      \
      "update the driver (branch {min_driver} is the minimum for this CUDA major; the newest "   \
      "branch supports every minor)",                                                            \
      VRAM_EV(CUDA_VERSION, "driver"), VRAM_EV(CUDA_VERSION, "runtime"),                         \
      VRAM_EV(BRANCH, "min_driver"), VRAM_EV_NONE)                                               \
    X(VRAM_FINDING_COMPUTE_EXCLUSIVE, "compute_exclusive", VRAM_SEV_WARNING,                     \
      "compute mode is exclusive ({mode}): a second process (a probe, a DataLoader worker that " \
      "touches CUDA, another tenant) fails with 'device busy or unavailable' (46)",              \
      "keep every CUDA user in one process, or ask for the default compute mode "                \
      "(nvidia-smi -i N -c DEFAULT)",                                                            \
      VRAM_EV(COMPUTE_MODE, "mode"), VRAM_EV_NONE, VRAM_EV_NONE, VRAM_EV_NONE)                   \
    X(VRAM_FINDING_PROBE_CONTRADICTS_ATTRIBUTE, "probe_contradicts_attribute", VRAM_SEV_WARNING, \
      "the {probe} attribute says {attribute} but doing it for real says {probe_ok} (CUDA error " \
      "{probe_error}): attributes can lie, the probe wins",                                      \
      "trust the probe: plan as if the capability is what the probe found",                     \
      VRAM_EV(PROBE, "probe"), VRAM_EV(TRISTATE, "attribute"), VRAM_EV(TRISTATE, "probe_ok"),    \
      VRAM_EV(CUDA_ERROR, "probe_error"))                                                        \
    X(VRAM_FINDING_EXPANDABLE_SEGMENTS_UNVERIFIED, "expandable_segments_unverified",             \
      VRAM_SEV_WARNING,                                                                          \
      "expandable_segments:True relies on CUDA virtual memory management, which this platform "  \
      "may lack or misreport (attribute {vmm}); it has not been probed",                         \
      "run vramkit doctor --probe to try VMM for real; if it fails, set "                        \
      "expandable_segments:False",                                                               \
      VRAM_EV(TRISTATE, "vmm"), VRAM_EV_NONE, VRAM_EV_NONE, VRAM_EV_NONE)                        \
    X(VRAM_FINDING_VISIBLE_DEVICES_IGNORED, "visible_devices_ignored", VRAM_SEV_WARNING,         \
      "CUDA_VISIBLE_DEVICES lists {entries} entries but enumeration stops at entry {stop_at} "   \
      "({stop}): only {visible} GPU(s) are visible",                                             \
      "list only GPUs that exist (indices from 0, or UUIDs from nvidia-smi -L), each once; "     \
      "everything from an invalid entry on is ignored",                                            \
      VRAM_EV(COUNT, "entries"), VRAM_EV(INDEX, "stop_at"), VRAM_EV(VISIBLE_STOP, "stop"),       \
      VRAM_EV(COUNT, "visible"))                                                                 \
    X(VRAM_FINDING_LAUNCH_BLOCKING, "launch_blocking", VRAM_SEV_WARNING,                         \
      "CUDA_LAUNCH_BLOCKING is on: every kernel launch waits for the GPU, which serialises "     \
      "copies and compute (a debugging setting)",                                                \
      "unset CUDA_LAUNCH_BLOCKING outside debugging",                                            \
      VRAM_EV_NONE, VRAM_EV_NONE, VRAM_EV_NONE, VRAM_EV_NONE)                                    \
    X(VRAM_FINDING_COTENANT, "cotenant", VRAM_SEV_WARNING,                                       \
      "{used} of {total} is already in use (other processes, this one's CUDA context); "         \
      "{free} is free",                                                                          \
      "free memory is what counts and it moves: leave a margin, plan against free memory "       \
      "(vramkit plan), or ask the other tenants to move",                                        \
      VRAM_EV(BYTES, "used"), VRAM_EV(BYTES, "total"), VRAM_EV(BYTES, "free"),                   \
      VRAM_EV(BYTES, "need"))                                                                    \
    X(VRAM_FINDING_PINNED_UNAVAILABLE, "pinned_unavailable", VRAM_SEV_WARNING,                   \
      "pinned host memory is unavailable or limited (host registration {host_register}, probe "  \
      "CUDA error {probe_error}): host-to-device copies run at pageable speed",                   \
      "use fewer or smaller pinned buffers (WSL2 limits them); streaming falls back to "         \
      "pageable copies",                                                                         \
      VRAM_EV(TRISTATE, "host_register"), VRAM_EV(TRISTATE, "pinned_probe_ok"),                  \
      VRAM_EV(CUDA_ERROR, "probe_error"), VRAM_EV_NONE)                                          \
    X(VRAM_FINDING_ALLOC_PROBE_FAILED, "alloc_probe_failed", VRAM_SEV_WARNING,                   \
      "allocating 90% of the free memory ({free}) failed (CUDA error {probe_error}): the free "   \
      "figure overstates what can be had",                                                       \
      "plan against less than the free figure (a larger --margin), and look for a tenant that "  \
      "grows or a vGPU/MIG limit",                                                               \
      VRAM_EV(BYTES, "free"), VRAM_EV(CUDA_ERROR, "probe_error"), VRAM_EV_NONE, VRAM_EV_NONE)    \
    X(VRAM_FINDING_PLATFORM_WSL2, "platform_wsl2", VRAM_SEV_WARNING,                             \
      "running under WSL2: pinned memory is limited and capability attributes have been seen "   \
      "to lie (VMM reported, then cuMemSetAccess failed)",                                       \
      "run vramkit doctor --probe and trust the probes; keep pinned buffers small",              \
      VRAM_EV_NONE, VRAM_EV_NONE, VRAM_EV_NONE, VRAM_EV_NONE)                                    \
    X(VRAM_FINDING_VMM_UNSUPPORTED, "vmm_unsupported", VRAM_SEV_INFO,                            \
      "no CUDA virtual memory management (attribute {vmm}, probe CUDA error {probe_error})",     \
      "do not turn on allocators that need it (PyTorch expandable_segments)",                    \
      VRAM_EV(TRISTATE, "vmm"), VRAM_EV(CUDA_ERROR, "probe_error"), VRAM_EV_NONE, VRAM_EV_NONE)  \
    X(VRAM_FINDING_POOLS_UNSUPPORTED, "pools_unsupported", VRAM_SEV_INFO,                        \
      "no CUDA memory pools (attribute {pools}, probe CUDA error {probe_error})",                 \
      "do not configure backend:cudaMallocAsync",                                                \
      VRAM_EV(TRISTATE, "pools"), VRAM_EV(CUDA_ERROR, "probe_error"), VRAM_EV_NONE,              \
      VRAM_EV_NONE)                                                                              \
    X(VRAM_FINDING_PLATFORM_JETSON, "platform_jetson", VRAM_SEV_INFO,                            \
      "an integrated GPU (Jetson/Tegra): GPU and CPU share one memory, so free memory moves "    \
      "with everything the CPU does",                                                            \
      "plan with a larger margin; pinned and device memory come from the same pool",             \
      VRAM_EV(DEVICE, "gpu"), VRAM_EV_NONE, VRAM_EV_NONE, VRAM_EV_NONE)                          \
    X(VRAM_FINDING_PLATFORM_VGPU, "platform_vgpu", VRAM_SEV_INFO,                                \
      "a virtual GPU (vGPU profile, GPU {gpu}): VMM and memory pools are often off on vGPU "     \
      "profiles",                                                                                \
      "run vramkit doctor --probe before turning on expandable segments or cudaMallocAsync",     \
      VRAM_EV(DEVICE, "gpu"), VRAM_EV_NONE, VRAM_EV_NONE, VRAM_EV_NONE)                          \
    X(VRAM_FINDING_FORWARD_COMPAT_IN_USE, "forward_compat_in_use", VRAM_SEV_INFO,                \
      "LD_LIBRARY_PATH holds forward-compatibility libraries (entry at byte {path_offset})",     \
      "fine on data-centre GPUs; elsewhere they fail with CUDA error 804",                       \
      VRAM_EV(OFFSET, "path_offset"), VRAM_EV_NONE, VRAM_EV_NONE, VRAM_EV_NONE)                  \
    X(VRAM_FINDING_MODEL_FITS, "model_fits", VRAM_SEV_INFO,                                      \
      "the model needs {need}; this GPU has {free} free: {left} left beside it",                 \
      "keep a margin for other tenants' growth (vramkit plan --margin)",                         \
      VRAM_EV(BYTES, "need"), VRAM_EV(BYTES, "free"), VRAM_EV(BYTES, "left"),                    \
      VRAM_EV(BYTES, "total"))

typedef enum vram_finding_id {
#define VRAM__FINDING_ENUM(id, name, sev, sum, rem, e0, e1, e2, e3) id,
    VRAM_FINDING_LIST(VRAM__FINDING_ENUM)
#undef VRAM__FINDING_ENUM
    VRAM_FINDING_COUNT
} vram_finding_id;

/* One finding. device is the GPU it is about, -1 for the machine. ev[k] means what
 * vram_finding_evidence(id, k) says; unused slots are 0. */
typedef struct vram_finding {
    vram_finding_id id;
    vram_severity severity; /* vram_finding_severity(id), copied */
    int device;
    int64_t ev[VRAM_FINDING_EVIDENCE];
} vram_finding;

/* The probes a caller may have run (driver/doctor/probe.h runs them in children). */
typedef enum vram_diag_probe_kind {
    VRAM_DIAG_PROBE_VMM = 0, /* reserve + create + map + set access one granule */
    VRAM_DIAG_PROBE_PINNED,  /* cudaHostAlloc, touch, free */
    VRAM_DIAG_PROBE_POOL,    /* cudaMallocAsync / cudaFreeAsync on the default pool */
    VRAM_DIAG_PROBE_KERNEL,  /* launch a trivial kernel, check its result */
    VRAM_DIAG_PROBE_ALLOC90, /* allocate 90% of free memory, touch, free */
    VRAM_DIAG_PROBE_COUNT
} vram_diag_probe_kind;

/* A probe's verdict. ran 0: not run, and the rest means nothing. */
typedef struct vram_diag_probe {
    int ran;
    vram_status status; /* VRAM_OK: the capability works */
    int cuda_error;     /* the CUDA error behind a failure, else 0 */
} vram_diag_probe;

/* One entry of a build's architecture list: cc*10 (90 = 9.0), with machine code (sass)
 * and/or PTX. exact: an arch-specific target (sm_90a) that runs only on that cc. */
typedef struct vram_diag_arch {
    int cc;
    unsigned char sass, ptx, exact;
} vram_diag_arch;

/* Everything the rules look at. Start from vram_diag_facts_init; zero means "unknown" or
 * "default" in every field. Strings are NUL-terminated; NULL means "not set". */
typedef struct vram_diag_facts {
    const vram_device_snapshot *snap; /* required */
    const char *cuda_visible_devices;
    const char *cuda_launch_blocking;
    const char *alloc_conf;      /* PYTORCH_ALLOC_CONF when set, else PYTORCH_CUDA_ALLOC_CONF */
    const char *ld_library_path;
    int wsl2, jetson, vgpu;      /* platform flags (vgpu: also found from GPU names) */
    int forked_after_init;       /* this process is a fork of one that had initialised CUDA */
    int physical_gpus;           /* GPUs the kernel module knows; 0 unknown */
    int driver_branch;           /* kernel module version's major (580); 0 unknown */
    int n_archs;                 /* entries in archs; 0: the build's list is unknown */
    vram_diag_arch archs[VRAM_DIAG_MAX_ARCHS];
    vram_diag_probe probe[VRAM_MAX_DEVICES][VRAM_DIAG_PROBE_COUNT];
    uint64_t model_bytes;        /* what the model needs on one GPU; 0 none given */
    uint32_t cotenant_permille;  /* "most of the memory": in use > this / 1000 of total; 0: 500 */
} vram_diag_facts;

/* PyTorch's allocator setting, as PyTorch reads it. */
typedef struct vram_alloc_conf {
    vram_tristate expandable_segments;  /* UNKNOWN: not set (PyTorch's default: off) */
    vram_tristate pinned_host_register; /* pinned_use_cuda_host_register; UNKNOWN: not set */
    int backend_async;                  /* 1: backend:cudaMallocAsync */
    int pairs;                          /* key:value pairs read (before an error) */
    int unknown_keys;                   /* keys this parser does not know: skipped */
    int valid;                          /* 1: PyTorch accepts it (as far as known keys go) */
    size_t error_at;                    /* !valid: byte offset of the first refused token */
} vram_alloc_conf;

/* Why CUDA_VISIBLE_DEVICES enumeration stopped. */
typedef enum vram_visible_stop {
    VRAM_VISIBLE_COMPLETE = 0,    /* every entry is enumerated */
    VRAM_VISIBLE_INVALID = 1,     /* not an index (empty, negative, no digits) or not a UUID */
    VRAM_VISIBLE_NONEXISTENT = 2, /* an index at or past the GPUs that exist */
    VRAM_VISIBLE_REPEATED = 3     /* an entry named twice: CUDA then enumerates nothing */
} vram_visible_stop;

/* CUDA_VISIBLE_DEVICES as CUDA reads it. */
typedef struct vram_visible {
    int set;                /* the variable is set (even to "") */
    int uuids;              /* the list names GPU-/MIG- UUIDs */
    int entries;            /* comma-separated entries */
    int visible;            /* GPUs it lets CUDA enumerate */
    int stop_at;            /* entry where enumeration stops; -1 when it does not */
    vram_visible_stop stop; /* why */
} vram_visible;

/* ---- the table ---------------------------------------------------------------------- */

/* Stable name of a finding ("no_driver"); "unknown" out of range, never NULL. */
VRAM_DEF const char *vram_finding_name(vram_finding_id id) {
    VRAM_X_NAME(id, VRAM_FINDING_LIST, VRAM_X_COL2, "unknown");
}

/* Severity of a finding; VRAM_SEV_NONE out of range. */
VRAM_DEF vram_severity vram_finding_severity(vram_finding_id id) {
    VRAM_X_NAME(id, VRAM_FINDING_LIST, VRAM_X_COL3, VRAM_SEV_NONE);
}

/* The summary template ({name} placeholders name evidence); NULL out of range. */
VRAM_DEF const char *vram_finding_summary(vram_finding_id id) {
    VRAM_X_NAME(id, VRAM_FINDING_LIST, VRAM_X_COL4, NULL);
}

/* What to do about it (may hold {name} placeholders too); NULL out of range. */
VRAM_DEF const char *vram_finding_remedy(vram_finding_id id) {
    VRAM_X_NAME(id, VRAM_FINDING_LIST, VRAM_X_COL5, NULL);
}

/* Evidence slot k of a finding id: its unit and name; {VRAM_EVU_NONE, NULL} when the slot
 * is unused, k is out of [0, VRAM_FINDING_EVIDENCE) or id out of range. */
VRAM_DEF vram_evidence_spec vram_finding_evidence(vram_finding_id id, int k) {
    vram_evidence_spec none = VRAM_EV_NONE;
    if (k < 0 || k >= VRAM_FINDING_EVIDENCE) return none;
    switch (id) {
#define VRAM__FINDING_EVS(id_, name, sev, sum, rem, e0, e1, e2, e3) \
    case id_: {                                                     \
        const vram_evidence_spec t[VRAM_FINDING_EVIDENCE] = {e0, e1, e2, e3}; \
        return t[k];                                                \
    }
        VRAM_FINDING_LIST(VRAM__FINDING_EVS)
#undef VRAM__FINDING_EVS
    default:
        return none;
    }
}

/* "error", "warning", "info", "none" (VRAM_SEV_NONE); "unknown" out of range, never NULL. */
VRAM_DEF const char *vram_severity_name(vram_severity s) {
    switch (s) {
    case VRAM_SEV_ERROR: return "error";
    case VRAM_SEV_WARNING: return "warning";
    case VRAM_SEV_INFO: return "info";
    case VRAM_SEV_NONE: return "none";
    }
    return "unknown";
}

/* "vmm", "pinned", "pool", "kernel", "alloc90"; "unknown" out of range, never NULL. */
VRAM_DEF const char *vram_diag_probe_name(vram_diag_probe_kind k) {
    switch (k) {
    case VRAM_DIAG_PROBE_VMM: return "vmm";
    case VRAM_DIAG_PROBE_PINNED: return "pinned";
    case VRAM_DIAG_PROBE_POOL: return "pool";
    case VRAM_DIAG_PROBE_KERNEL: return "kernel";
    case VRAM_DIAG_PROBE_ALLOC90: return "alloc90";
    case VRAM_DIAG_PROBE_COUNT: break;
    }
    return "unknown";
}

/* "invalid", "nonexistent", "repeated", "complete"; "unknown" out of range, never NULL. */
VRAM_DEF const char *vram_visible_stop_name(vram_visible_stop s) {
    switch (s) {
    case VRAM_VISIBLE_INVALID: return "invalid";
    case VRAM_VISIBLE_NONEXISTENT: return "nonexistent";
    case VRAM_VISIBLE_REPEATED: return "repeated";
    case VRAM_VISIBLE_COMPLETE: return "complete";
    }
    return "unknown";
}

/* ---- version tables ------------------------------------------------------------------ */

/* Minimum Linux driver for a CUDA version's major (minor-version compatibility): "450.80.02"
 * for 11.x, "525.60.13" for 12.x, "580" for 13.x; NULL for others. cuda_version as
 * cudaRuntimeGetVersion gives it (12040 = 12.4). */
VRAM_DEF const char *vram_diag_min_driver(int cuda_version) {
    switch (cuda_version / 1000) {
    case 11: return "450.80.02";
    case 12: return "525.60.13";
    case 13: return "580";
    default: return NULL;
    }
}

/* The branch (major) of vram_diag_min_driver: 450, 525, 580; 0 when unknown. */
VRAM_DEF int vram_diag_min_driver_branch(int cuda_version) {
    switch (cuda_version / 1000) {
    case 11: return 450;
    case 12: return 525;
    case 13: return 580;
    default: return 0;
    }
}

/* The oldest compute capability (cc*10) a CUDA major compiles for: 35 (11.x), 50 (12.x:
 * Kepler dropped), 75 (13.x: Maxwell, Pascal and Volta dropped); 0 when unknown. */
VRAM_DEF int vram_diag_min_cc(int cuda_version) {
    switch (cuda_version / 1000) {
    case 11: return 35;
    case 12: return 50;
    case 13: return 75;
    default: return 0;
    }
}

/* ---- small text helpers (private) ---------------------------------------------------- */

VRAM_DEF int vram__diag_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}
VRAM_DEF int vram__diag_digit(char c) { return c >= '0' && c <= '9'; }

/* Does text[from, to) equal lit, whitespace inside the span ignored (PyTorch drops it)? */
VRAM_DEF int vram__diag_span_eq(const char *text, size_t from, size_t to, const char *lit) {
    size_t j = 0;
    for (size_t i = from; i < to; i++) {
        if (vram__diag_space(text[i])) continue;
        if (lit[j] == '\0' || lit[j] != text[i]) return 0;
        j++;
    }
    return lit[j] == '\0';
}

/* First non-space character of text[from, to) ('\0' when none). */
VRAM_DEF char vram__diag_span_first(const char *text, size_t from, size_t to) {
    for (size_t i = from; i < to; i++)
        if (!vram__diag_space(text[i])) return text[i];
    return '\0';
}

/* Does the NUL-terminated s (at most max bytes) contain lit? */
VRAM_DEF int vram__diag_contains(const char *s, size_t max, const char *lit) {
    for (size_t i = 0; i < max && s[i] != '\0'; i++) {
        size_t j = 0;
        while (lit[j] != '\0' && i + j < max && s[i + j] == lit[j]) j++;
        if (lit[j] == '\0') return 1;
    }
    return 0;
}

/* ---- PYTORCH_CUDA_ALLOC_CONF --------------------------------------------------------- */

/* The allocator tokenizer's separators. */
VRAM_DEF int vram__ac_sep(char c) { return c == ',' || c == ':' || c == '[' || c == ']'; }

/* The next token at or after *pos: a separator (one char) or a word up to the next
 * separator. Returns 0 at the end. Whitespace-only stretches are no token. */
VRAM_DEF int vram__ac_next(const char *t, size_t *pos, size_t *from, size_t *to) {
    size_t i = *pos;
    while (t[i] != '\0' && vram__diag_space(t[i])) i++;
    if (t[i] == '\0') {
        *pos = i;
        return 0;
    }
    *from = i;
    if (vram__ac_sep(t[i])) {
        *to = i + 1;
    } else {
        while (t[i] != '\0' && !vram__ac_sep(t[i])) i++;
        *to = i;
    }
    *pos = *to;
    return 1;
}

/* Reads PyTorch's allocator setting as PyTorch does (c10 AllocatorConfig): tokens split at
 * ',' ':' '[' ']', whitespace dropped everywhere; then key ':' value pairs separated by ','
 * (a trailing ',' is accepted). Booleans (expandable_segments, release_lock_on_cudamalloc,
 * pinned_use_cuda_host_register, pinned_use_background_threads) must be exactly True or
 * False; backend is native or cudaMallocAsync; numeric options must start like a number;
 * roundup_power2_divisions and unknown keys take a word or a [ ... ] list (unknown keys
 * are counted and skipped: newer PyTorch versions add options). A repeated key: the last
 * one wins. Requires: out valid; text NULL (unset) or NUL-terminated.
 * Guarantees: VRAM_OK with out->valid 1; VRAM_E_FORMAT with out->valid 0, error_at the
 * offset of the first token PyTorch refuses (strlen(text) when a token is missing at the
 * end), and the pairs before it applied; VRAM_E_INVALID when out is NULL. */
VRAM_DEF VRAM_NODISCARD vram_status vram_alloc_conf_parse(const char *text, vram_alloc_conf *out) {
    if (out == NULL) return VRAM_E_INVALID;
    out->expandable_segments = VRAM_UNKNOWN;
    out->pinned_host_register = VRAM_UNKNOWN;
    out->backend_async = 0;
    out->pairs = 0;
    out->unknown_keys = 0;
    out->valid = 1;
    out->error_at = 0;
    if (text == NULL) return VRAM_OK;
    size_t pos = 0, kf = 0, kt = 0, vf = 0, vt = 0, sf = 0, st = 0;
    while (vram__ac_next(text, &pos, &kf, &kt)) {
        /* the key */
        if (vram__ac_sep(text[kf])) goto refused_key;
        enum { K_UNKNOWN, K_EXPANDABLE, K_HOSTREG, K_BOOL, K_BACKEND, K_NUMBER, K_LIST };
        int kind = K_UNKNOWN;
        if (vram__diag_span_eq(text, kf, kt, "expandable_segments")) kind = K_EXPANDABLE;
        else if (vram__diag_span_eq(text, kf, kt, "pinned_use_cuda_host_register")) kind = K_HOSTREG;
        else if (vram__diag_span_eq(text, kf, kt, "release_lock_on_cudamalloc") ||
                 vram__diag_span_eq(text, kf, kt, "pinned_use_background_threads"))
            kind = K_BOOL;
        else if (vram__diag_span_eq(text, kf, kt, "backend")) kind = K_BACKEND;
        else if (vram__diag_span_eq(text, kf, kt, "max_split_size_mb") ||
                 vram__diag_span_eq(text, kf, kt, "max_non_split_rounding_mb") ||
                 vram__diag_span_eq(text, kf, kt, "garbage_collection_threshold") ||
                 vram__diag_span_eq(text, kf, kt, "pinned_num_register_threads"))
            kind = K_NUMBER;
        else if (vram__diag_span_eq(text, kf, kt, "roundup_power2_divisions"))
            kind = K_LIST;
        /* ':' */
        if (!vram__ac_next(text, &pos, &sf, &st)) goto refused_end;
        if (text[sf] != ':') {
            kf = sf;
            goto refused_key;
        }
        /* the value */
        if (!vram__ac_next(text, &pos, &vf, &vt)) goto refused_end;
        if (text[vf] == '[') {
            if (kind != K_LIST && kind != K_UNKNOWN) goto refused_value;
            /* a list: skip to the matching ']' (PyTorch lists do not nest) */
            int closed = 0;
            while (vram__ac_next(text, &pos, &sf, &st)) {
                if (text[sf] == ']') {
                    closed = 1;
                    break;
                }
            }
            if (!closed) goto refused_end;
        } else {
            if (vram__ac_sep(text[vf])) goto refused_value;
            switch (kind) {
            case K_EXPANDABLE:
            case K_HOSTREG:
            case K_BOOL: {
                vram_tristate v;
                if (vram__diag_span_eq(text, vf, vt, "True")) v = VRAM_YES;
                else if (vram__diag_span_eq(text, vf, vt, "False")) v = VRAM_NO;
                else goto refused_value;
                if (kind == K_EXPANDABLE) out->expandable_segments = v;
                if (kind == K_HOSTREG) out->pinned_host_register = v;
                break;
            }
            case K_BACKEND:
                if (vram__diag_span_eq(text, vf, vt, "cudaMallocAsync")) out->backend_async = 1;
                else if (vram__diag_span_eq(text, vf, vt, "native")) out->backend_async = 0;
                else goto refused_value;
                break;
            case K_NUMBER: {
                char c = vram__diag_span_first(text, vf, vt);
                if (!(vram__diag_digit(c) || c == '+' || c == '-' || c == '.')) goto refused_value;
                break;
            }
            case K_LIST: {
                char c = vram__diag_span_first(text, vf, vt);
                if (!(vram__diag_digit(c) || c == '+')) goto refused_value;
                break;
            }
            case K_UNKNOWN:
                break;
            }
        }
        if (kind == K_UNKNOWN) out->unknown_keys++;
        out->pairs++;
        /* ',' or the end */
        if (!vram__ac_next(text, &pos, &sf, &st)) break;
        if (text[sf] != ',') {
            kf = sf;
            goto refused_key;
        }
    }
    return VRAM_OK;
refused_value:
    kf = vf;
refused_key:
    out->valid = 0;
    out->error_at = kf;
    return VRAM_E_FORMAT;
refused_end:
    out->valid = 0;
    out->error_at = pos;
    return VRAM_E_FORMAT;
}

/* ---- CUDA_VISIBLE_DEVICES ------------------------------------------------------------ */

/* Reads CUDA_VISIBLE_DEVICES as CUDA does (PyTorch mirrors it in torch.cuda): entries split
 * at ','. When the value starts with "GPU-" or "MIG-" it is a UUID list: enumeration stops
 * at the first entry without that prefix. Otherwise each entry, trimmed, is read like
 * strtoul (an optional sign, then digits; "1gpu" is 1): no digits or a negative value stops
 * enumeration (INVALID), an index >= physical (when physical > 0) stops it (NONEXISTENT).
 * In both forms an entry named twice hides every GPU (REPEATED). Indices past
 * VRAM_MAX_DEVICES entries count as nonexistent. Requires: out valid; text NULL (unset) or
 * NUL-terminated. Guarantees: out filled; visible <= entries; stop_at == -1 exactly when
 * stop is COMPLETE; visible 0 when set and nothing is enumerated. */
VRAM_DEF void vram_visible_parse(const char *text, int physical, vram_visible *out) {
    out->set = text != NULL;
    out->uuids = 0;
    out->entries = 0;
    out->visible = 0;
    out->stop_at = -1;
    out->stop = VRAM_VISIBLE_COMPLETE;
    if (text == NULL) return;
    int uuid = (text[0] == 'G' && text[1] == 'P' && text[2] == 'U' && text[3] == '-') ||
               (text[0] == 'M' && text[1] == 'I' && text[2] == 'G' && text[3] == '-');
    out->uuids = uuid;
    size_t seen_from[VRAM_MAX_DEVICES], seen_len[VRAM_MAX_DEVICES];
    int64_t seen_idx[VRAM_MAX_DEVICES];
    int accepted = 0, stopped = 0;
    size_t i = 0;
    for (;;) {
        size_t from = i;
        while (text[i] != '\0' && text[i] != ',') i++;
        size_t to = i;
        int entry = out->entries;
        if (out->entries < INT32_MAX) out->entries++;
        if (!stopped) {
            vram_visible_stop why = VRAM_VISIBLE_COMPLETE;
            if (uuid) {
                /* raw entries, as PyTorch compares them */
                if (!(to - from >= 4 && (text[from] == 'G' || text[from] == 'M') &&
                      text[from + 3] == '-' &&
                      ((text[from] == 'G' && text[from + 1] == 'P' && text[from + 2] == 'U') ||
                       (text[from] == 'M' && text[from + 1] == 'I' && text[from + 2] == 'G')) &&
                      text[from] == text[0]))
                    why = VRAM_VISIBLE_INVALID;
                for (int k = 0; k < accepted && why == VRAM_VISIBLE_COMPLETE; k++) {
                    if (seen_len[k] != to - from) continue;
                    size_t j = 0;
                    while (j < seen_len[k] && text[seen_from[k] + j] == text[from + j]) j++;
                    if (j == seen_len[k]) why = VRAM_VISIBLE_REPEATED;
                }
                if (why == VRAM_VISIBLE_COMPLETE && accepted >= VRAM_MAX_DEVICES)
                    why = VRAM_VISIBLE_NONEXISTENT;
                if (why == VRAM_VISIBLE_COMPLETE) {
                    seen_from[accepted] = from;
                    seen_len[accepted] = to - from;
                    accepted++;
                }
            } else {
                size_t p = from;
                while (p < to && vram__diag_space(text[p])) p++;
                int neg = 0;
                if (p < to && (text[p] == '+' || text[p] == '-')) {
                    neg = text[p] == '-';
                    p++;
                }
                int64_t v = 0;
                int digits = 0;
                while (p < to && vram__diag_digit(text[p])) {
                    if (v < INT64_C(100000000000000)) v = v * 10 + (text[p] - '0');
                    p++;
                    digits++;
                }
                if (digits == 0 || (neg && v != 0)) {
                    why = VRAM_VISIBLE_INVALID;
                } else {
                    for (int k = 0; k < accepted; k++)
                        if (seen_idx[k] == v) why = VRAM_VISIBLE_REPEATED;
                    if (why == VRAM_VISIBLE_COMPLETE &&
                        ((physical > 0 && v >= physical) || accepted >= VRAM_MAX_DEVICES))
                        why = VRAM_VISIBLE_NONEXISTENT;
                }
                if (why == VRAM_VISIBLE_COMPLETE) seen_idx[accepted++] = v;
            }
            if (why != VRAM_VISIBLE_COMPLETE) {
                stopped = 1;
                out->stop = why;
                out->stop_at = entry;
            }
        }
        if (text[i] == '\0') break;
        i++; /* past ',' */
    }
    out->visible = out->stop == VRAM_VISIBLE_REPEATED ? 0 : accepted;
}

/* ---- LD_LIBRARY_PATH and names ------------------------------------------------------- */

/* Does LD_LIBRARY_PATH hold a forward-compatibility directory: an entry (split at ':' or
 * ';') with a path component "compat" or containing "cuda-compat"? Returns 1 and the
 * entry's byte offset in *at (when at is not NULL), else 0. NULL is 0. */
VRAM_DEF int vram_diag_compat_on_path(const char *ld_library_path, size_t *at) {
    if (ld_library_path == NULL) return 0;
    const char *s = ld_library_path;
    size_t i = 0;
    for (;;) {
        size_t from = i;
        while (s[i] != '\0' && s[i] != ':' && s[i] != ';') i++;
        size_t to = i;
        int hit = 0;
        for (size_t c = from; c < to && !hit; c++) {
            /* a component is compat: '/'-bounded (or entry-bounded) "compat" */
            if ((c == from || s[c - 1] == '/') && c + 6 <= to && s[c] == 'c' && s[c + 1] == 'o' &&
                s[c + 2] == 'm' && s[c + 3] == 'p' && s[c + 4] == 'a' && s[c + 5] == 't' &&
                (c + 6 == to || s[c + 6] == '/'))
                hit = 1;
            /* or "cuda-compat" anywhere in it */
            if (c + 11 <= to && s[c] == 'c' && s[c + 1] == 'u' && s[c + 2] == 'd' &&
                s[c + 3] == 'a' && s[c + 4] == '-' && s[c + 5] == 'c' && s[c + 6] == 'o' &&
                s[c + 7] == 'm' && s[c + 8] == 'p' && s[c + 9] == 'a' && s[c + 10] == 't')
                hit = 1;
        }
        if (hit) {
            if (at != NULL) *at = from;
            return 1;
        }
        if (s[i] == '\0') return 0;
        i++;
    }
}

/* Is this a vGPU profile's name: "GRID ..." or ending in "-<1 to 3 digits><A|B|C|Q>"
 * ("NVIDIA A40-48C", "GRID T4-16Q", "NVIDIA A100-4-20C")? name: NUL-terminated within
 * VRAM_DEVICE_NAME_MAX bytes, or NULL (0). */
VRAM_DEF int vram_diag_is_vgpu_name(const char *name) {
    if (name == NULL) return 0;
    size_t n = 0;
    while (n < VRAM_DEVICE_NAME_MAX && name[n] != '\0') n++;
    while (n > 0 && name[n - 1] == ' ') n--;
    if (n >= 5 && name[0] == 'G' && name[1] == 'R' && name[2] == 'I' && name[3] == 'D' &&
        name[4] == ' ')
        return 1;
    if (n < 3) return 0;
    char last = name[n - 1];
    if (last != 'A' && last != 'B' && last != 'C' && last != 'Q') return 0;
    size_t d = n - 1, digits = 0;
    while (d > 0 && vram__diag_digit(name[d - 1])) {
        d--;
        digits++;
    }
    return digits >= 1 && digits <= 3 && d > 1 && name[d - 1] == '-'; /* a model before '-' */
}

/* Is this a consumer GPU (GeForce, TITAN), where forward compatibility does not work? */
VRAM_DEF int vram_diag_is_consumer_name(const char *name) {
    if (name == NULL) return 0;
    return vram__diag_contains(name, VRAM_DEVICE_NAME_MAX, "GeForce") ||
           vram__diag_contains(name, VRAM_DEVICE_NAME_MAX, "TITAN");
}

/* ---- the build's architectures -------------------------------------------------------- */

/* Parses an architecture list into f->archs (replacing it): entries separated by ',', ';'
 * or spaces, each one of: "90" or "9.0" (machine code and PTX, as CMake's
 * CMAKE_CUDA_ARCHITECTURES means it), "90-real" / "sm_90" (machine code), "90-virtual" /
 * "compute_90" (PTX), "90a" / "sm_90a" (machine code for exactly 9.0). Compute capability
 * must be 1.0 .. 19.9. Requires: f valid, text NUL-terminated. Guarantees: VRAM_OK with
 * n_archs >= 1; VRAM_E_FORMAT for an empty list or a bad entry, VRAM_E_RANGE for more
 * than VRAM_DIAG_MAX_ARCHS entries (then f->n_archs is 0); VRAM_E_INVALID for NULL. */
VRAM_DEF VRAM_NODISCARD vram_status vram_diag_parse_archs(const char *text, vram_diag_facts *f) {
    if (text == NULL || f == NULL) return VRAM_E_INVALID;
    f->n_archs = 0;
    size_t i = 0;
    for (;;) {
        while (text[i] == ',' || text[i] == ';' || text[i] == ' ') i++;
        if (text[i] == '\0') break;
        size_t from = i;
        while (text[i] != '\0' && text[i] != ',' && text[i] != ';' && text[i] != ' ') i++;
        size_t to = i, p = from;
        int sass = 1, ptx = 1, exact = 0;
        if (to - p > 3 && text[p] == 's' && text[p + 1] == 'm' && text[p + 2] == '_') {
            ptx = 0;
            p += 3;
        } else if (to - p > 8 && vram__diag_span_eq(text, p, p + 8, "compute_")) {
            sass = 0;
            p += 8;
        }
        int cc = 0, nd = 0;
        while (p < to && vram__diag_digit(text[p]) && nd < 3) {
            cc = cc * 10 + (text[p] - '0');
            p++;
            nd++;
        }
        if (p < to && text[p] == '.' && nd >= 1 && nd <= 2) { /* "9.0" */
            p++;
            if (!(p < to && vram__diag_digit(text[p]))) goto bad;
            cc = cc * 10 + (text[p] - '0');
            p++;
        } else if (nd < 2) {
            goto bad;
        }
        if (p < to && (text[p] == 'a' || text[p] == 'f')) {
            exact = text[p] == 'a';
            ptx = 0;
            p++;
        }
        if (p < to && sass && ptx) {
            if (to - p == 5 && vram__diag_span_eq(text, p, to, "-real")) ptx = 0;
            else if (to - p == 8 && vram__diag_span_eq(text, p, to, "-virtual")) sass = 0;
            else goto bad;
            p = to;
        }
        if (p != to || cc < 10 || cc > 199) goto bad;
        if (f->n_archs >= VRAM_DIAG_MAX_ARCHS) {
            f->n_archs = 0;
            return VRAM_E_RANGE;
        }
        f->archs[f->n_archs].cc = cc;
        f->archs[f->n_archs].sass = (unsigned char)sass;
        f->archs[f->n_archs].ptx = (unsigned char)ptx;
        f->archs[f->n_archs].exact = (unsigned char)exact;
        f->n_archs++;
    }
    if (f->n_archs == 0) return VRAM_E_FORMAT;
    return VRAM_OK;
bad:
    f->n_archs = 0;
    return VRAM_E_FORMAT;
}

/* Can a GPU of compute capability cc (cc*10) run the build? Machine code for X.Y runs on
 * X.Z with Z >= Y (same major); arch-specific code only on exactly X.Y; PTX for X.Y is
 * compiled by the driver for any cc >= X.Y. Returns 1 yes, 0 no, -1 when the list is
 * empty (unknown). Requires: f valid. */
VRAM_DEF int vram_diag_arch_covered(const vram_diag_facts *f, int cc) {
    if (f->n_archs <= 0) return -1;
    int n = f->n_archs > VRAM_DIAG_MAX_ARCHS ? VRAM_DIAG_MAX_ARCHS : f->n_archs;
    for (int i = 0; i < n; i++) {
        const vram_diag_arch *a = &f->archs[i];
        if (a->ptx && a->cc <= cc) return 1;
        if (a->sass && a->exact && a->cc == cc) return 1;
        if (a->sass && !a->exact && a->cc / 10 == cc / 10 && a->cc <= cc) return 1;
    }
    return 0;
}

/* ---- facts ------------------------------------------------------------------------------ */

/* Zeroes *f (every field unknown / default / not set) and points it at snap.
 * Requires: f valid. */
VRAM_DEF void vram_diag_facts_init(vram_diag_facts *f, const vram_device_snapshot *snap) {
    unsigned char *p = (unsigned char *)f;
    for (size_t i = 0; i < sizeof *f; i++) p[i] = 0;
    f->snap = snap;
}

/* Devices the snapshot holds, 0 when f or its snapshot is NULL. */
VRAM_DEF int vram__diag_count(const vram_diag_facts *f) {
    if (f == NULL || f->snap == NULL) return 0;
    return vram_snapshot_count(f->snap);
}

/* Is GPU d usable (see "Model" above)? 0 for a d out of the snapshot. */
VRAM_DEF int vram_diag_gpu_usable(const vram_diag_facts *f, int d) {
    if (d < 0 || d >= vram__diag_count(f)) return 0;
    const vram_device_snapshot *s = f->snap;
    if (s->status != VRAM_OK && s->status != VRAM_E_RANGE) return 0;
    if (f->forked_after_init) return 0;
    const vram_device_info *g = &s->devices[d];
    if (g->compute_mode == VRAM_COMPUTE_PROHIBITED) return 0;
    int min_cc = vram_diag_min_cc(s->runtime_version), cc = vram_device_cc(g);
    if (min_cc > 0 && cc > 0 && cc < min_cc) return 0;
    const vram_diag_probe *k = &f->probe[d][VRAM_DIAG_PROBE_KERNEL];
    if (k->ran && k->status != VRAM_OK) return 0;
    return 1;
}

/* How many GPUs can be used; 0 means "use the CPU". */
VRAM_DEF int vram_diag_usable_gpus(const vram_diag_facts *f) {
    int n = 0, c = vram__diag_count(f);
    for (int d = 0; d < c; d++) n += vram_diag_gpu_usable(f, d);
    return n;
}

/* ---- findings ---------------------------------------------------------------------------- */

/* Sorts before: more severe, then lower id, then lower device. */
VRAM_DEF int vram__diag_before(const vram_finding *a, const vram_finding *b) {
    if (a->severity != b->severity) return a->severity > b->severity;
    if (a->id != b->id) return a->id < b->id;
    return a->device < b->device;
}

VRAM_DEF int64_t vram__diag_i64(uint64_t v) { return v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v; }

/* The sink vram_diagnose fills: keeps the cap most severe, sorted, and counts them all. */
typedef struct vram__diag_sink {
    vram_finding *out;
    size_t cap, n, total;
} vram__diag_sink;

VRAM_DEF void vram__diag_push(vram__diag_sink *k, vram_finding_id id, int device, int64_t e0,
                              int64_t e1, int64_t e2, int64_t e3) {
    vram_finding f;
    unsigned char *z = (unsigned char *)&f; /* padding too: findings compare as bytes */
    for (size_t i = 0; i < sizeof f; i++) z[i] = 0;
    f.id = id;
    f.severity = vram_finding_severity(id);
    f.device = device;
    f.ev[0] = e0;
    f.ev[1] = e1;
    f.ev[2] = e2;
    f.ev[3] = e3;
    /* unused slots stay 0 whatever the caller passed */
    for (int s = 0; s < VRAM_FINDING_EVIDENCE; s++)
        if (vram_finding_evidence(id, s).unit == VRAM_EVU_NONE) f.ev[s] = 0;
    k->total++;
    size_t pos = k->n;
    while (pos > 0 && vram__diag_before(&f, &k->out[pos - 1])) pos--;
    if (pos >= k->cap) return; /* less severe than everything kept */
    size_t last = k->n < k->cap ? k->n : k->cap - 1;
    for (size_t i = last; i > pos; i--) k->out[i] = k->out[i - 1];
    k->out[pos] = f;
    if (k->n < k->cap) k->n++;
}

/* The effective capability: the probe's verdict when it ran, else the attribute. */
VRAM_DEF vram_tristate vram__diag_cap(const vram_diag_probe *p, vram_tristate attr) {
    if (p->ran) return p->status == VRAM_OK ? VRAM_YES : VRAM_NO;
    return attr;
}

VRAM_DEF int64_t vram__diag_probe_ok(const vram_diag_probe *p) {
    if (!p->ran) return VRAM_UNKNOWN;
    return p->status == VRAM_OK ? VRAM_YES : VRAM_NO;
}

/* The rules of one GPU. */
VRAM_DEF void vram__diag_device(const vram_diag_facts *f, const vram_alloc_conf *ac, int d,
                                vram__diag_sink *k) {
    const vram_device_snapshot *s = f->snap;
    const vram_device_info *g = &s->devices[d];
    const vram_diag_probe *pr = f->probe[d];
    int cc = vram_device_cc(g), min_cc = vram_diag_min_cc(s->runtime_version);
    if (min_cc > 0 && cc > 0 && cc < min_cc)
        vram__diag_push(k, VRAM_FINDING_GPU_TOO_OLD_FOR_RUNTIME, d, cc, min_cc, s->runtime_version, 0);
    if (cc > 0 && vram_diag_arch_covered(f, cc) == 0) {
        int lo = 0, hi = 0, n = f->n_archs > VRAM_DIAG_MAX_ARCHS ? VRAM_DIAG_MAX_ARCHS : f->n_archs;
        for (int i = 0; i < n; i++) {
            if (lo == 0 || f->archs[i].cc < lo) lo = f->archs[i].cc;
            if (f->archs[i].cc > hi) hi = f->archs[i].cc;
        }
        vram__diag_push(k, VRAM_FINDING_ARCH_NOT_IN_BUILD, d, cc, lo, hi, 0);
    }
    const vram_diag_probe *kp = &pr[VRAM_DIAG_PROBE_KERNEL];
    if (kp->ran && kp->status != VRAM_OK)
        vram__diag_push(k, VRAM_FINDING_KERNEL_PROBE_FAILED, d, kp->status, kp->cuda_error, 0, 0);
    if (g->compute_mode == VRAM_COMPUTE_PROHIBITED)
        vram__diag_push(k, VRAM_FINDING_COMPUTE_PROHIBITED, d, g->compute_mode, 0, 0, 0);
    else if (g->compute_mode == VRAM_COMPUTE_EXCLUSIVE_THREAD ||
             g->compute_mode == VRAM_COMPUTE_EXCLUSIVE_PROCESS)
        vram__diag_push(k, VRAM_FINDING_COMPUTE_EXCLUSIVE, d, g->compute_mode, 0, 0, 0);

    /* attributes against probes: the probe wins */
    const vram_diag_probe *vp = &pr[VRAM_DIAG_PROBE_VMM], *pp = &pr[VRAM_DIAG_PROBE_POOL],
                          *hp = &pr[VRAM_DIAG_PROBE_PINNED], *ap = &pr[VRAM_DIAG_PROBE_ALLOC90];
    vram_tristate vmm = vram__diag_cap(vp, g->vmm), pools = vram__diag_cap(pp, g->memory_pools);
    if (vp->ran && g->vmm != VRAM_UNKNOWN && g->vmm != vmm)
        vram__diag_push(k, VRAM_FINDING_PROBE_CONTRADICTS_ATTRIBUTE, d, VRAM_DIAG_PROBE_VMM, g->vmm,
                        vmm, vp->cuda_error);
    if (pp->ran && g->memory_pools != VRAM_UNKNOWN && g->memory_pools != pools)
        vram__diag_push(k, VRAM_FINDING_PROBE_CONTRADICTS_ATTRIBUTE, d, VRAM_DIAG_PROBE_POOL,
                        g->memory_pools, pools, pp->cuda_error);

    int vgpu = f->vgpu || vram_diag_is_vgpu_name(g->name);
    if (ac->expandable_segments == VRAM_YES) {
        if (vmm == VRAM_NO)
            vram__diag_push(k, VRAM_FINDING_EXPANDABLE_SEGMENTS_NO_VMM, d, g->vmm,
                            vram__diag_probe_ok(vp), vp->ran ? vp->cuda_error : 0, 0);
        else if (!vp->ran && (g->vmm == VRAM_UNKNOWN || f->wsl2 || f->jetson || g->integrated || vgpu))
            vram__diag_push(k, VRAM_FINDING_EXPANDABLE_SEGMENTS_UNVERIFIED, d, g->vmm, 0, 0, 0);
    } else if (vmm == VRAM_NO) {
        vram__diag_push(k, VRAM_FINDING_VMM_UNSUPPORTED, d, g->vmm, vp->ran ? vp->cuda_error : 0, 0, 0);
    }
    if (ac->backend_async && pools == VRAM_NO)
        vram__diag_push(k, VRAM_FINDING_ASYNC_ALLOC_NO_POOLS, d, g->memory_pools,
                        vram__diag_probe_ok(pp), pp->ran ? pp->cuda_error : 0, 0);
    else if (pools == VRAM_NO)
        vram__diag_push(k, VRAM_FINDING_POOLS_UNSUPPORTED, d, g->memory_pools,
                        pp->ran ? pp->cuda_error : 0, 0, 0);
    if (ac->pinned_host_register == VRAM_YES && g->host_register == VRAM_NO)
        vram__diag_push(k, VRAM_FINDING_HOST_REGISTER_CONF_UNSUPPORTED, d, g->host_register, 0, 0, 0);
    if (g->host_register == VRAM_NO || (hp->ran && hp->status != VRAM_OK))
        vram__diag_push(k, VRAM_FINDING_PINNED_UNAVAILABLE, d, g->host_register,
                        vram__diag_probe_ok(hp), hp->ran ? hp->cuda_error : 0, 0);
    if (ap->ran && ap->status != VRAM_OK)
        vram__diag_push(k, VRAM_FINDING_ALLOC_PROBE_FAILED, d, vram__diag_i64(g->free_bytes),
                        ap->cuda_error, 0, 0);

    /* another tenant: in use > permille/1000 of total, computed without overflow */
    if (g->total_bytes > 0) {
        uint64_t total = g->total_bytes, free_b = g->free_bytes > total ? total : g->free_bytes;
        uint64_t used = total - free_b;
        uint64_t pm = f->cotenant_permille == 0 ? VRAM_DIAG_DEFAULT_COTENANT_PERMILLE : f->cotenant_permille;
        if (pm > 1000u) pm = 1000u;
        uint64_t threshold = total / 1000u * pm + total % 1000u * pm / 1000u;
        if (used > threshold)
            vram__diag_push(k, VRAM_FINDING_COTENANT, d, vram__diag_i64(used), vram__diag_i64(total),
                            vram__diag_i64(free_b), vram__diag_i64(f->model_bytes));
    }
}

/* Runs every rule on the facts. Fills out[0 .. cap) with the cap most severe findings,
 * sorted (see "Order"), and says how many it kept and how many exist.
 * Requires: f valid with f->snap valid; out valid for cap entries (NULL when cap is 0);
 * count valid; total NULL or valid.
 * Guarantees: VRAM_OK when every finding fit (*count == *total); VRAM_E_BUFFER when more
 * exist than cap (*count == cap, out holds the most severe, nothing written past cap);
 * VRAM_E_INVALID for a NULL f, snapshot, count, or out with cap > 0 (nothing written).
 * *total <= VRAM_DIAG_MAX_FINDINGS. Deterministic; reads nothing but *f. */
VRAM_DEF VRAM_NODISCARD vram_status vram_diagnose(const vram_diag_facts *f, vram_finding *out,
                                                  size_t cap, size_t *count, size_t *total) {
    if (f == NULL || f->snap == NULL || count == NULL || (out == NULL && cap > 0)) return VRAM_E_INVALID;
    vram__diag_sink k;
    k.out = out;
    k.cap = cap;
    k.n = 0;
    k.total = 0;
    const vram_device_snapshot *s = f->snap;
    int n = vram_snapshot_count(s), drv = s->driver_version, rt = s->runtime_version;
    int code = s->cuda_error;

    /* the driver */
    int no_cuda = s->status == VRAM_E_NOT_BUILT;
    int failed = s->status != VRAM_OK && s->status != VRAM_E_RANGE;
    int no_driver = s->status == VRAM_E_NO_DRIVER || (failed && !no_cuda && drv == 0 && code == 35);
    int forked = f->forked_after_init || s->status == VRAM_E_FORKED;
    int too_old = !no_driver && drv > 0 && rt > 0 && drv / 1000 < rt / 1000;
    int mismatch = code == 803;
    size_t compat_at = 0;
    int compat = vram_diag_compat_on_path(f->ld_library_path, &compat_at);
    int consumer = -1;
    for (int d = 0; d < n && consumer < 0; d++)
        if (vram_diag_is_consumer_name(s->devices[d].name)) consumer = d;
    int compat_bad = code == 804 || (compat && consumer >= 0);
    if (no_cuda) vram__diag_push(&k, VRAM_FINDING_NO_CUDA_IN_BUILD, -1, 0, 0, 0, 0);
    if (no_driver)
        vram__diag_push(&k, VRAM_FINDING_NO_DRIVER, -1, rt, code, f->driver_branch, 0);
    if (too_old)
        vram__diag_push(&k, VRAM_FINDING_DRIVER_TOO_OLD, -1, drv, rt, vram_diag_min_driver_branch(rt),
                        f->driver_branch);
    else if (!no_driver && drv > 0 && rt > 0 && drv / 1000 == rt / 1000 && drv < rt)
        vram__diag_push(&k, VRAM_FINDING_DRIVER_OLDER_MINOR, -1, drv, rt,
                        vram_diag_min_driver_branch(rt), 0);
    if (mismatch) vram__diag_push(&k, VRAM_FINDING_DRIVER_MISMATCH, -1, code, f->driver_branch, 0, 0);
    if (compat_bad)
        vram__diag_push(&k, VRAM_FINDING_FORWARD_COMPAT_UNSUPPORTED, -1, code, consumer,
                        compat ? vram__diag_i64(compat_at) : -1, 0);
    else if (compat)
        vram__diag_push(&k, VRAM_FINDING_FORWARD_COMPAT_IN_USE, -1, vram__diag_i64(compat_at), 0, 0, 0);
    if (forked) vram__diag_push(&k, VRAM_FINDING_FORKED_AFTER_INIT, -1, 0, 0, 0, 0);

    /* CUDA_VISIBLE_DEVICES, judged against the GPUs that exist */
    vram_visible vis;
    vram_visible_parse(f->cuda_visible_devices, f->physical_gpus, &vis);
    int driver_answered = !no_driver && !too_old && !forked &&
                          (s->status == VRAM_OK || s->status == VRAM_E_NO_DEVICE);
    if (vis.set && f->physical_gpus <= 0 && driver_answered && n < vis.visible) {
        /* the entries from n on name GPUs CUDA did not find */
        vis.stop = VRAM_VISIBLE_NONEXISTENT;
        vis.stop_at = n;
        vis.visible = n;
    }
    int hide_all = vis.set && vis.visible == 0;
    if (hide_all)
        vram__diag_push(&k, VRAM_FINDING_VISIBLE_DEVICES_HIDE_ALL, -1, vis.stop_at, vis.stop,
                        vis.entries, f->physical_gpus);
    else if (vis.set && vis.stop != VRAM_VISIBLE_COMPLETE)
        vram__diag_push(&k, VRAM_FINDING_VISIBLE_DEVICES_IGNORED, -1, vis.entries, vis.stop_at,
                        vis.stop, vis.visible);

    /* a GPU that refused a context stops the snapshot at it: it is devices[n] */
    int unavailable = !no_driver && !too_old && !forked && s->status != VRAM_OK && code == 46;
    if (unavailable) vram__diag_push(&k, VRAM_FINDING_DEVICE_UNAVAILABLE, -1, n, code, 0, 0);

    /* no device, or a snapshot that failed for a reason nothing above explains */
    if (unavailable) {
        /* explained */
    } else if (!no_driver && !too_old && !forked && !hide_all && !mismatch && !compat_bad &&
        (s->status == VRAM_E_NO_DEVICE || (s->status == VRAM_OK && n == 0)))
        vram__diag_push(&k, VRAM_FINDING_NO_DEVICE, -1, drv, code, 0, 0);
    else if (!no_cuda && !no_driver && !too_old && !forked && !mismatch && !compat_bad &&
             s->status != VRAM_OK && s->status != VRAM_E_RANGE && s->status != VRAM_E_NO_DEVICE)
        vram__diag_push(&k, VRAM_FINDING_SNAPSHOT_FAILED, -1, s->status, code, 0, 0);

    /* the environment */
    if (f->cuda_launch_blocking != NULL) {
        const char *p = f->cuda_launch_blocking;
        while (vram__diag_space(*p)) p++;
        if (*p == '+') p++;
        int on = 0;
        while (vram__diag_digit(*p)) on |= *p++ != '0';
        if (on) vram__diag_push(&k, VRAM_FINDING_LAUNCH_BLOCKING, -1, 0, 0, 0, 0);
    }
    vram_alloc_conf ac;
    if (vram_alloc_conf_parse(f->alloc_conf, &ac) != VRAM_OK)
        vram__diag_push(&k, VRAM_FINDING_ALLOC_CONF_INVALID, -1, vram__diag_i64(ac.error_at),
                        ac.pairs, 0, 0);

    /* the platform */
    if (f->wsl2) vram__diag_push(&k, VRAM_FINDING_PLATFORM_WSL2, -1, 0, 0, 0, 0);
    int integrated = -1, vgpu_dev = -1;
    for (int d = 0; d < n; d++) {
        if (integrated < 0 && s->devices[d].integrated) integrated = d;
        if (vgpu_dev < 0 && vram_diag_is_vgpu_name(s->devices[d].name)) vgpu_dev = d;
    }
    if (f->jetson || integrated >= 0)
        vram__diag_push(&k, VRAM_FINDING_PLATFORM_JETSON, -1, integrated, 0, 0, 0);
    if (f->vgpu || vgpu_dev >= 0)
        vram__diag_push(&k, VRAM_FINDING_PLATFORM_VGPU, -1, vgpu_dev, 0, 0, 0);

    /* each GPU */
    for (int d = 0; d < n; d++) vram__diag_device(f, &ac, d, &k);

    /* the model, on the usable GPU with the most free memory */
    if (f->model_bytes > 0) {
        int best = -1;
        for (int d = 0; d < n; d++)
            if (vram_diag_gpu_usable(f, d) &&
                (best < 0 || s->devices[d].free_bytes > s->devices[best].free_bytes))
                best = d;
        if (best >= 0) {
            uint64_t fr = s->devices[best].free_bytes, need = f->model_bytes;
            int64_t tot = vram__diag_i64(s->devices[best].total_bytes);
            if (need <= fr)
                vram__diag_push(&k, VRAM_FINDING_MODEL_FITS, best, vram__diag_i64(need),
                                vram__diag_i64(fr), vram__diag_i64(fr - need), tot);
            else
                vram__diag_push(&k, VRAM_FINDING_MODEL_DOES_NOT_FIT, best, vram__diag_i64(need),
                                vram__diag_i64(fr), vram__diag_i64(need - fr), tot);
        }
    }

    *count = k.n;
    if (total != NULL) *total = k.total;
    return k.total > cap ? VRAM_E_BUFFER : VRAM_OK;
}

/* The most severe severity among n findings; VRAM_SEV_NONE when n is 0 or list is NULL. */
VRAM_DEF vram_severity vram_findings_worst(const vram_finding *list, size_t n) {
    vram_severity w = VRAM_SEV_NONE;
    if (list == NULL) return w;
    for (size_t i = 0; i < n; i++)
        if (list[i].severity > w) w = list[i].severity;
    return w;
}

#endif /* VRAMKIT_DIAGNOSE_H */
