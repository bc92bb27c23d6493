/* hw_nvml.c — on a real GPU, NVML (driver/nvml/nvml.h) against the CUDA runtime: its memory
 * figures agree with cudaMemGetInfo, a process holding 1 GiB is on its process list with at
 * least that much, and `vramkit watch --count 3` reads memory without a CUDA context: its pid
 * never appears on NVML's process list of any GPU while it runs; a plan reads this machine's
 * GPUs through NVML with the CUDA runtime's total and compute capability. */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hw_common.h"

#include "device/machine.h"
#include "nvml/nvml.h"

#define GIB (UINT64_C(1) << 30)
#define MIB (UINT64_C(1) << 20)

static vram_gpumem_ops open_nvml(void) {
    vram_gpumem_ops m = vram_nvml_ops(NULL);
    vram_status st = m.open(m.ctx);
    cr_assert_eq(st, VRAM_OK, "NVML on a GPU machine: %s (%s)", vram_status_name(st), m.error(m.ctx));
    return m;
}

Test(hw_nvml, memory_agrees_with_cuda_and_lists_this_process) {
    vram_gpumem_ops m = open_nvml();
    void *p = NULL;
    VRAM_HW_CUDA(cudaSetDevice(0));
    VRAM_HW_CUDA(cudaMalloc(&p, GIB));
    VRAM_HW_CUDA(cudaMemset(p, 1, GIB));
    VRAM_HW_CUDA(cudaDeviceSynchronize());
    size_t cfree = 0, ctotal = 0;
    VRAM_HW_CUDA(cudaMemGetInfo(&cfree, &ctotal));
    uint64_t total, free_b, used;
    VRAM_HW_OK(m.memory(m.ctx, 0, &total, &free_b, &used));
    /* NVML's 0 is PCI order, CUDA's 0 the fastest: alike on one-GPU machines (ci/gpu.sh) */
    /* NVML's total is the memory on the board, CUDA's what it can hand out: on the first H200
       run 150,754,820,096 against 150,109,880,320 (615 MiB, 0.4%) */
    cr_expect(total >= (uint64_t)ctotal && total - ctotal <= total / 50, "total NVML %llu, CUDA %zu",
              (unsigned long long)total, ctotal);
    uint64_t diff = free_b > cfree ? free_b - cfree : cfree - free_b;
    cr_expect_leq(diff, 256 * MIB, "free NVML %llu, CUDA %zu", (unsigned long long)free_b, cfree);
    vram_gpumem_proc procs[VRAM_GPUMEM_MAX_PROCS];
    int n = 0, found = 0;
    VRAM_HW_OK(m.processes(m.ctx, 0, procs, VRAM_GPUMEM_MAX_PROCS, &n));
    for (int i = 0; i < n; i++)
        if (procs[i].pid == (uint32_t)getpid()) {
            found = 1;
            if (procs[i].used_bytes != VRAM_GPUMEM_UNKNOWN)
                cr_expect_geq(procs[i].used_bytes, GIB, "%llu", (unsigned long long)procs[i].used_bytes);
        }
    cr_expect(found, "this process (%ld) holds 1 GiB and is on the list of %d", (long)getpid(), n);
    VRAM_HW_CUDA(cudaFree(p));
    m.close(m.ctx);
}

/* Runs in a child without any CUDA call of its own (fork before this process touched CUDA
 * would be needed otherwise: the check looks only at vramkit's pid). */
Test(hw_nvml, watch_holds_no_cuda_context) {
    vram_gpumem_ops m = open_nvml();
    int ndev = 0;
    VRAM_HW_OK(m.device_count(m.ctx, &ndev));
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        execl(VRAMKIT_EXE, VRAMKIT_EXE, "watch", "--count", "3", "--interval", "300", (char *)NULL);
        _exit(127);
    }
    int seen = 0, looks = 0, status = 0;
    for (;;) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid) break;
        for (int d = 0; d < ndev; d++) {
            vram_gpumem_proc procs[VRAM_GPUMEM_MAX_PROCS];
            int n = 0;
            if (m.processes(m.ctx, d, procs, VRAM_GPUMEM_MAX_PROCS, &n) != VRAM_OK) continue;
            for (int i = 0; i < n; i++) seen |= procs[i].pid == (uint32_t)pid;
        }
        looks++;
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "watch ended with %d", status);
    cr_expect_gt(looks, 10, "looked while it ran");
    cr_expect(!seen, "vramkit watch (pid %ld) was on NVML's process list: it holds a context",
              (long)pid);
    m.close(m.ctx);
}

/* What plan and estimate read (driver/device/machine.h): through NVML where it numbers the
 * GPUs as CUDA does, with the runtime's total and compute capability for GPU 0. */
Test(hw_nvml, a_plan_reads_the_gpus_through_nvml) {
    vram_gpu_budget g[VRAM_PLAN_MAX_GPUS];
    vram_machine_view v;
    char why[192];
    int n = vram_machine_gpus_view(g, VRAM_PLAN_MAX_GPUS, &v, why, sizeof why);
    cr_assert_gt(n, 0, "%s", why);
    if (getenv("CUDA_VISIBLE_DEVICES") != NULL) { /* NVML cannot number as the runtime does */
        cr_expect_str_eq(v.source, "cuda");
        cr_expect(strstr(v.note, "CUDA_VISIBLE_DEVICES"), "%s", v.note);
        return;
    }
    cr_expect_str_eq(v.source, "nvml", "%s", v.note);
    struct cudaDeviceProp prop;
    size_t cfree = 0, ctotal = 0;
    VRAM_HW_CUDA(cudaSetDevice(0));
    VRAM_HW_CUDA(cudaGetDeviceProperties(&prop, 0));
    VRAM_HW_CUDA(cudaMemGetInfo(&cfree, &ctotal));
    cr_expect(g[0].total >= (uint64_t)ctotal && g[0].total - ctotal <= g[0].total / 50,
              "NVML total %llu, CUDA %zu (see memory_agrees_with_cuda...)",
              (unsigned long long)g[0].total, ctotal);
    cr_expect_eq(g[0].cc_major, prop.major);
    cr_expect_eq(g[0].cc_minor, prop.minor);
    cr_expect_eq(v.tenants_known, 1, "%s", v.note);
    for (int i = 0; i < v.ntenants; i++)
        cr_expect_neq(v.tenants[i].pid, (uint32_t)getpid(), "this process is not its own tenant");
}

/* Inside a program that already holds a context (a framework's), the CUDA runtime fallback
 * gives back only the contexts reading made: the program's memory stays valid. */
Test(hw_nvml, reading_through_cuda_keeps_the_callers_context) {
    void *p = NULL;
    VRAM_HW_CUDA(cudaSetDevice(0));
    VRAM_HW_CUDA(cudaMalloc(&p, 64 * MIB));
    setenv(VRAM_NVML_LIBRARY_ENV, "", 1); /* NVML ruled out: the runtime is read */
    vram_gpu_budget g[VRAM_PLAN_MAX_GPUS];
    vram_machine_view v;
    char why[192];
    cr_assert_gt(vram_machine_gpus_view(g, VRAM_PLAN_MAX_GPUS, &v, why, sizeof why), 0, "%s", why);
    cr_expect_str_eq(v.source, "cuda");
    VRAM_HW_CUDA(cudaMemset(p, 7, 64 * MIB)); /* still this process's memory */
    VRAM_HW_CUDA(cudaDeviceSynchronize());
    VRAM_HW_CUDA(cudaFree(p));
    unsetenv(VRAM_NVML_LIBRARY_ENV);
}

VRAM_HW_MAIN()
