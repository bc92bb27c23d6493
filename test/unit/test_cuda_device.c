/* test_cuda_device.c — the real CUDA backend (driver/cuda/cuda_device.h) where no GPU is needed:
 * the table is complete, a machine without an NVIDIA driver gets VRAM_E_NO_DRIVER from the
 * snapshot and no crash from any slot, bad arguments never reach CUDA, and the one check
 * every CUDA call goes through records errors and retires the backend on a sticky one
 * (driven through the vram__cuda_inject hook). In a build without CUDA: VRAM_E_NOT_BUILT.
 * The GPU side (the snapshot against cudart, allocations, a real trap) is test/hw/hw_device.c. */
#include <criterion/criterion.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <vramkit/cudaerr.h>
#include <vramkit/device.h>

#include "cuda/cuda_device.h"
#include "cuda/forkguard.h"
#include "device/snapshot.h"

#ifdef VRAMKIT_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

Test(cuda_device, null_table_is_invalid) { cr_assert_eq(vram_cuda_ops(NULL), VRAM_E_INVALID); }

#ifndef VRAMKIT_HAVE_CUDA

Test(cuda_device, unsupported_without_cuda) {
    cr_assert_eq(vram_cuda_built(), 0);
    vram_device_ops ops, before;
    memset(&ops, 0x5c, sizeof ops);
    memcpy(&before, &ops, sizeof ops);
    cr_assert_eq(vram_cuda_ops(&ops), VRAM_E_NOT_BUILT);
    cr_assert_eq(memcmp(&ops, &before, sizeof ops), 0, "the table is left untouched");
    cr_assert_eq(vram__cuda_inject(700, "cudaMalloc"), VRAM_E_NOT_BUILT);
    cr_assert_str_eq(vram__cuda_last_call(), "");
}

#else /* VRAMKIT_HAVE_CUDA */

static vram_device_ops ops;
static vram_device_snapshot snap; /* ~20 KiB: static, not on the stack */

static void setup(void) { cr_assert_eq(vram_cuda_ops(&ops), VRAM_OK); }

TestSuite(cuda, .init = setup);

#define CALL(slot, ...) ops.slot(ops.ctx, __VA_ARGS__)

/* What cudart itself says about the driver, asked directly (not through the backend). */
static int direct_driver_version(void) {
    int v = -1;
    cr_assert_eq(cudaDriverGetVersion(&v), cudaSuccess);
    return v;
}

Test(cuda, table_passes_ops_check) {
    cr_assert_eq(vram_cuda_built(), 1);
    cr_assert_eq(vram_device_ops_check(&ops), VRAM_OK);
    cr_assert_str_eq(ops.backend, "cuda");
    cr_assert_eq(ops.flags, 0u, "a GPU's memory is not host memory");
    cr_assert_eq(ops.api_version, VRAM_DEVICE_API_VERSION);
    cr_assert_eq(ops.size, sizeof(vram_device_ops));
    cr_assert_not_null(ops.ctx);
    vram_device_ops again;
    cr_assert_eq(vram_cuda_ops(&again), VRAM_OK);
    cr_assert_eq(memcmp(&again, &ops, sizeof ops), 0, "every fill gives the same table");
    cr_assert_eq(ops.last_error(ops.ctx), 0, "no CUDA call has failed yet");
}

Test(cuda, versions) {
    int v = -1;
    cr_assert_eq(CALL(runtime_version, &v), VRAM_OK);
    cr_assert_eq(v, CUDART_VERSION, "the runtime linked is the one of the headers (13000 = 13.0)");
    cr_assert_geq(v, 13000);
    v = -1;
    cr_assert_eq(CALL(driver_version, &v), VRAM_OK);
    cr_assert_eq(v, direct_driver_version());
    cr_assert_eq(CALL(driver_version, NULL), VRAM_E_INVALID);
    cr_assert_eq(CALL(runtime_version, NULL), VRAM_E_INVALID);
}

/* This machine has no NVIDIA driver: the snapshot says so plainly. */
Test(cuda, snapshot_without_driver_is_no_driver) {
    if (direct_driver_version() != 0) cr_skip_test("an NVIDIA driver is present: test/hw/hw_device.c covers it");
    memset(&snap, 0xA5, sizeof snap);
    cr_assert_eq(vram_snapshot_take(&ops, &snap), VRAM_E_NO_DRIVER);
    cr_assert_eq(snap.status, VRAM_E_NO_DRIVER);
    cr_assert_eq(snap.driver_version, 0);
    cr_assert_eq(snap.runtime_version, CUDART_VERSION);
    cr_assert_eq(snap.device_count, 0);
    cr_assert_eq(snap.cuda_error, 35, "cudaErrorInsufficientDriver, got %d", snap.cuda_error);
    cr_assert_str_eq(vram__cuda_last_call(), "cudaGetDeviceCount");
}

/* Every slot answers, none crashes: those that need the driver say VRAM_E_NO_DRIVER. */
Test(cuda, every_slot_without_driver) {
    if (direct_driver_version() != 0) cr_skip_test("an NVIDIA driver is present: test/hw/hw_device.c covers it");
    int n = 7;
    cr_assert_eq(CALL(device_count, &n), VRAM_E_NO_DRIVER);
    cr_assert_eq(n, 7, "no count is written on failure");
    cr_assert_eq(ops.last_error(ops.ctx), 35);
    vram_device_info info;
    cr_assert_eq(CALL(device_info, 0, &info), VRAM_E_NO_DRIVER);
    uint64_t f = 1, t = 1;
    cr_assert_eq(CALL(mem_info, 0, &f, &t), VRAM_E_NO_DRIVER);
    int v = 0;
    cr_assert_eq(CALL(attribute, 0, VRAM_ATTR_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, &v), VRAM_E_NO_DRIVER);
    cr_assert_eq(CALL(set_device, 0), VRAM_E_NO_DRIVER);
    cr_assert_eq(CALL(release_device, 0), VRAM_E_NO_DRIVER);
    vram_cuda_release(); /* nothing to give back, nothing breaks */
    void *p = (void *)&v;
    cr_assert_eq(CALL(dev_alloc, 0, 4096, &p), VRAM_E_NO_DRIVER);
    cr_assert_null(p, "a failed allocation leaves NULL");
    p = (void *)&v;
    cr_assert_eq(CALL(host_alloc_pinned, 4096, &p), VRAM_E_NO_DRIVER);
    cr_assert_null(p);
    char buf[64];
    cr_assert_eq(CALL(host_register, buf, sizeof buf), VRAM_E_NO_DRIVER);
    vram_stream s = NULL;
    cr_assert_eq(CALL(stream_create, 0, &s), VRAM_E_NO_DRIVER);
    vram_event e = NULL;
    cr_assert_eq(CALL(event_create, &e), VRAM_E_NO_DRIVER);
    cr_assert_eq(CALL(memcpy_async, buf, buf + 32, 16, VRAM_COPY_H2H, NULL), VRAM_E_NO_DRIVER);
    cr_assert_eq(CALL(stream_sync, NULL), VRAM_E_NO_DRIVER);
    /* none of that is sticky: the versions still answer */
    cr_assert_eq(CALL(driver_version, &v), VRAM_OK);
    cr_assert_eq(v, 0);
    cr_assert_eq(ops.last_error(ops.ctx), 35);
}

/* Bad arguments are refused before any CUDA call: nothing is recorded. */
Test(cuda, bad_arguments_never_reach_cuda) {
    int v = 0;
    uint64_t f = 0, t = 0;
    void *p = NULL;
    vram_device_info info;
    cr_assert_eq(CALL(device_count, NULL), VRAM_E_INVALID);
    cr_assert_eq(CALL(device_info, -1, &info), VRAM_E_INVALID);
    cr_assert_eq(CALL(device_info, 0, NULL), VRAM_E_INVALID);
    cr_assert_eq(CALL(mem_info, -1, &f, &t), VRAM_E_INVALID);
    cr_assert_eq(CALL(mem_info, 0, NULL, &t), VRAM_E_INVALID);
    cr_assert_eq(CALL(mem_info, 0, &f, NULL), VRAM_E_INVALID);
    cr_assert_eq(CALL(attribute, -1, 102, &v), VRAM_E_INVALID);
    cr_assert_eq(CALL(attribute, 0, 102, NULL), VRAM_E_INVALID);
    cr_assert_eq(CALL(set_device, -2), VRAM_E_INVALID);
    cr_assert_eq(CALL(release_device, -1), VRAM_E_INVALID);
    cr_assert_eq(CALL(dev_alloc, 0, 16, NULL), VRAM_E_INVALID);
    cr_assert_eq(CALL(dev_alloc, -1, 16, &p), VRAM_E_INVALID);
    cr_assert_eq(CALL(dev_free, -1, NULL), VRAM_E_INVALID);
    cr_assert_eq(CALL(host_alloc_pinned, 16, NULL), VRAM_E_INVALID);
    cr_assert_eq(CALL(host_register, NULL, 16), VRAM_E_INVALID);
    cr_assert_eq(CALL(host_register, &v, 0), VRAM_E_INVALID);
    cr_assert_eq(CALL(host_unregister, NULL), VRAM_E_INVALID);
    cr_assert_eq(CALL(stream_create, 0, NULL), VRAM_E_INVALID);
    cr_assert_eq(CALL(stream_create, -1, (vram_stream *)&p), VRAM_E_INVALID);
    cr_assert_eq(ops.stream_destroy(ops.ctx, NULL), VRAM_E_INVALID);
    cr_assert_eq(CALL(memcpy_async, &v, &f, 4, (vram_copy_kind)0, NULL), VRAM_E_INVALID);
    cr_assert_eq(CALL(memcpy_async, &v, &f, 4, (vram_copy_kind)5, NULL), VRAM_E_INVALID);
    cr_assert_eq(CALL(memcpy_async, NULL, &f, 4, VRAM_COPY_H2D, NULL), VRAM_E_INVALID);
    cr_assert_eq(CALL(memcpy_async, &v, NULL, 4, VRAM_COPY_D2H, NULL), VRAM_E_INVALID);
    cr_assert_eq(ops.event_create(ops.ctx, NULL), VRAM_E_INVALID);
    cr_assert_eq(ops.event_destroy(ops.ctx, NULL), VRAM_E_INVALID);
    cr_assert_eq(CALL(event_record, NULL, NULL), VRAM_E_INVALID);
    cr_assert_eq(ops.event_query(ops.ctx, NULL), VRAM_E_INVALID);
    cr_assert_eq(ops.event_sync(ops.ctx, NULL), VRAM_E_INVALID);
    cr_assert_eq(CALL(stream_wait_event, NULL, NULL), VRAM_E_INVALID);
    /* the documented no-ops: nothing to allocate, nothing to free, nothing to copy */
    p = &v;
    cr_assert_eq(CALL(dev_alloc, 0, 0, &p), VRAM_OK);
    cr_assert_null(p);
    p = &v;
    cr_assert_eq(CALL(host_alloc_pinned, 0, &p), VRAM_OK);
    cr_assert_null(p);
    cr_assert_eq(CALL(dev_free, 0, NULL), VRAM_OK);
    cr_assert_eq(ops.host_free_pinned(ops.ctx, NULL), VRAM_OK);
    cr_assert_eq(CALL(memcpy_async, NULL, NULL, 0, VRAM_COPY_H2D, NULL), VRAM_OK);
    /* more than size_t can address is out of memory, not a wrap */
    if (sizeof(size_t) < sizeof(uint64_t)) {
        cr_assert_eq(CALL(dev_alloc, 0, UINT64_MAX, &p), VRAM_E_OOM);
    }
    cr_assert_eq(ops.last_error(ops.ctx), 0, "no CUDA call was made, so none failed");
    cr_assert_str_eq(vram__cuda_last_call(), "");
}

/* The check: recoverable errors are recorded and leave the backend usable. */
Test(cuda, recoverable_errors_are_recorded_not_sticky) {
    cr_assert_eq(vram__cuda_inject(2, "cudaMalloc"), VRAM_E_OOM);
    cr_assert_eq(ops.last_error(ops.ctx), 2);
    cr_assert_str_eq(vram__cuda_last_call(), "cudaMalloc");
    int v = -1;
    cr_assert_eq(CALL(runtime_version, &v), VRAM_OK, "an OOM does not retire the backend");
    cr_assert_eq(ops.last_error(ops.ctx), 2, "a later success does not clear the record");

    /* a driver API call is named without the table it came through */
    cr_assert_eq(vram__cuda_inject(801, "api->cuMemCreate"), VRAM_E_NOT_SUPPORTED);
    cr_assert_eq(ops.last_error(ops.ctx), 801);
    cr_assert_str_eq(vram__cuda_last_call(), "cuMemCreate");

    /* "not ready" is a query's answer: nothing recorded */
    cr_assert_eq(vram__cuda_inject(600, "cudaEventQuery"), VRAM_E_NOT_READY);
    cr_assert_eq(ops.last_error(ops.ctx), 801);
    cr_assert_str_eq(vram__cuda_last_call(), "cuMemCreate");

    cr_assert_eq(vram__cuda_inject(100, "cudaGetDeviceCount"), VRAM_E_NO_DEVICE);
    cr_assert_eq(vram__cuda_inject(209, "cudaLaunchKernel"), VRAM_E_CUDA, "no kernel image: setup, generic");
    cr_assert_eq(vram__cuda_inject(1, "cudaMemcpyAsync"), VRAM_E_CUDA, "invalid value: not in the table");
    cr_assert_eq(vram__cuda_inject(0, "cudaMalloc"), VRAM_OK);
    cr_assert_eq(ops.last_error(ops.ctx), 1);
    cr_assert_eq(CALL(runtime_version, &v), VRAM_OK);
}

/* 35 and 34 mean "no driver" only while the driver version reads 0. */
Test(cuda, insufficient_driver_is_no_driver_only_without_one) {
    vram_status want = direct_driver_version() == 0 ? VRAM_E_NO_DRIVER : VRAM_E_CUDA;
    cr_assert_eq(vram__cuda_inject(35, "cudaGetDeviceCount"), want);
    cr_assert_eq(vram__cuda_inject(34, "cudaGetDeviceCount"), want);
    cr_assert_eq(vram__cuda_inject(36, "cudaGetDeviceCount"), VRAM_E_CUDA, "newer driver needed: generic");
}

/* A sticky error retires the backend: every slot refuses from then on, and the snapshot says
 * why, with the code. */
Test(cuda, sticky_error_retires_the_backend) {
    cr_assert_eq(vram__cuda_inject(700, "cudaStreamSynchronize"), VRAM_E_CUDA_STICKY);
    cr_assert_eq(ops.last_error(ops.ctx), 700);
    cr_assert_str_eq(vram__cuda_last_call(), "cudaStreamSynchronize");
    int v = 0;
    uint64_t f = 0, t = 0;
    void *p = &v;
    vram_device_info info;
    vram_stream s = NULL;
    vram_event e = NULL;
    cr_assert_eq(CALL(driver_version, &v), VRAM_E_CUDA_STICKY);
    cr_assert_eq(CALL(runtime_version, &v), VRAM_E_CUDA_STICKY);
    cr_assert_eq(CALL(device_count, &v), VRAM_E_CUDA_STICKY);
    cr_assert_eq(CALL(device_info, 0, &info), VRAM_E_CUDA_STICKY);
    cr_assert_eq(CALL(mem_info, 0, &f, &t), VRAM_E_CUDA_STICKY);
    cr_assert_eq(CALL(attribute, 0, 102, &v), VRAM_E_CUDA_STICKY);
    cr_assert_eq(CALL(set_device, 0), VRAM_E_CUDA_STICKY);
    cr_assert_eq(CALL(dev_alloc, 0, 0, &p), VRAM_E_CUDA_STICKY, "refused before the size-0 shortcut");
    cr_assert_eq(CALL(dev_free, 0, NULL), VRAM_E_CUDA_STICKY);
    cr_assert_eq(CALL(host_alloc_pinned, 64, &p), VRAM_E_CUDA_STICKY);
    cr_assert_eq(ops.host_free_pinned(ops.ctx, NULL), VRAM_E_CUDA_STICKY);
    cr_assert_eq(CALL(host_register, &v, sizeof v), VRAM_E_CUDA_STICKY);
    cr_assert_eq(CALL(host_unregister, &v), VRAM_E_CUDA_STICKY);
    cr_assert_eq(CALL(stream_create, 0, &s), VRAM_E_CUDA_STICKY);
    cr_assert_eq(ops.stream_destroy(ops.ctx, (vram_stream)&v), VRAM_E_CUDA_STICKY);
    cr_assert_eq(CALL(stream_sync, NULL), VRAM_E_CUDA_STICKY);
    cr_assert_eq(CALL(memcpy_async, &v, &f, 4, VRAM_COPY_H2H, NULL), VRAM_E_CUDA_STICKY);
    cr_assert_eq(CALL(event_create, &e), VRAM_E_CUDA_STICKY);
    cr_assert_eq(ops.event_destroy(ops.ctx, (vram_event)&v), VRAM_E_CUDA_STICKY);
    cr_assert_eq(CALL(event_record, (vram_event)&v, NULL), VRAM_E_CUDA_STICKY);
    cr_assert_eq(ops.event_query(ops.ctx, (vram_event)&v), VRAM_E_CUDA_STICKY);
    cr_assert_eq(ops.event_sync(ops.ctx, (vram_event)&v), VRAM_E_CUDA_STICKY);
    cr_assert_eq(CALL(stream_wait_event, NULL, (vram_event)&v), VRAM_E_CUDA_STICKY);
    cr_assert_eq(ops.last_error(ops.ctx), 700, "the sticky code stays on record");

    memset(&snap, 0xA5, sizeof snap);
    cr_assert_eq(vram_snapshot_take(&ops, &snap), VRAM_E_CUDA_STICKY);
    cr_assert_eq(snap.cuda_error, 700);
    cr_assert_eq(snap.device_count, 0);

    /* a second table of this process is retired too: the context is per process */
    vram_device_ops other;
    cr_assert_eq(vram_cuda_ops(&other), VRAM_OK);
    cr_assert_eq(other.runtime_version(other.ctx, &v), VRAM_E_CUDA_STICKY);
}

/* Every code the core's table calls sticky is sticky through the check (by hand: the list
 * of the reference, cuda-diagnostics.md, with 214 and 220), and nothing else is. */
Test(cuda, sticky_codes) {
    static const int sticky[] = {700, 702, 710, 714, 715, 716, 717, 718, 719, 721, 226, 911, 214, 220, 810};
    for (size_t i = 0; i < sizeof sticky / sizeof sticky[0]; i++)
        cr_assert_eq(vram__cuda_inject(sticky[i], "cudaDeviceSynchronize"), VRAM_E_CUDA_STICKY, "code %d",
                     sticky[i]);
    cr_assert_eq(ops.last_error(ops.ctx), 810);
}

Test(cuda, not_sticky_codes) {
    static const int plain[] = {2, 701, 801, 209, 222, 803, 804, 1, 46, 999};
    int v = 0;
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++) {
        cr_assert_neq(vram__cuda_inject(plain[i], "cudaMalloc"), VRAM_E_CUDA_STICKY, "code %d", plain[i]);
        cr_assert_eq(CALL(runtime_version, &v), VRAM_OK, "still usable after %d", plain[i]);
    }
}

/* Forked after CUDA was initialised here: every slot says so, no CUDA call is made. */
static int child_status(pid_t pid) {
    int status = 0;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status), "the child ended by signal %d", WTERMSIG(status));
    return WEXITSTATUS(status);
}

Test(cuda, fork_after_init_is_refused) {
    /* a version query is no initialisation: a fork after it may still use CUDA */
    cr_assert_eq(vram__cuda_inject(0, "cudaDriverGetVersion"), VRAM_OK);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        int v = -1;
        _exit(ops.runtime_version(ops.ctx, &v) == VRAM_OK && v == CUDART_VERSION ? 0 : 1);
    }
    cr_assert_eq(child_status(pid), 0, "a fork before initialisation works");

    /* the first success of a call that needs the driver counts as initialisation */
    cr_assert_eq(vram__cuda_inject(0, "cudaGetDeviceCount"), VRAM_OK);
    pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        int v = -1;
        void *p = NULL;
        int ok = ops.runtime_version(ops.ctx, &v) == VRAM_E_FORKED && v == -1 &&
                 ops.dev_alloc(ops.ctx, 0, 16, &p) == VRAM_E_FORKED &&
                 ops.last_error(ops.ctx) == VRAM_FORK_GUARD_CUDA_CODE;
        _exit(ok ? 0 : 1);
    }
    cr_assert_eq(child_status(pid), 0, "the forked child is refused with VRAM_E_FORKED");
    int v = -1;
    cr_assert_eq(CALL(runtime_version, &v), VRAM_OK, "the parent itself is unaffected");
}

#endif /* VRAMKIT_HAVE_CUDA */
