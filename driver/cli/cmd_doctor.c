/* driver/cli/cmd_doctor.c — `vramkit doctor`: is this machine fit for CUDA work, and if not,
 * why and what to do. A deviceQuery-style summary of each GPU, then the findings of
 * vramkit/diagnose.h, most severe first, each with its evidence and remedy. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vramkit/cudaerr.h>
#include <vramkit/diagnose.h>

#include "cli.h"
#include "cli_model.h"
#include "doctor/doctor.h"
#include "plan/estimating.h"

#define CMD "doctor"
#define DOCTOR_MARGIN (256u * VRAM_MIB) /* as estimate/plan: kept for other tenants' growth */

static void usage(FILE *out) {
    fprintf(out,
            "usage: vramkit doctor [--probe] [--model MODEL [workload options] | --need SIZE]\n"
            "                      [--arch LIST] [--json]\n"
            "       vramkit doctor --list-models\n"
            "\n"
            "Says whether this machine is fit for CUDA work and, when it is not, why and what to\n"
            "do. First a summary like deviceQuery's: driver and runtime versions, the platform\n"
            "(WSL2, Jetson, vGPU), the CUDA environment variables, and per GPU its name, compute\n"
            "capability, memory (total, free, in use), multiprocessors, copy engines, compute\n"
            "mode and capabilities (virtual memory management, memory pools, host registration).\n"
            "Then the findings, most severe first, each with its evidence and remedy: no driver,\n"
            "a driver too old for the runtime, a GPU architecture the build lacks, PyTorch's\n"
            "expandable_segments:True without VMM (\"CUDA driver error: operation not\n"
            "supported\"), backend:cudaMallocAsync without memory pools, pinned memory\n"
            "unavailable, compute mode prohibited or exclusive, CUDA_LAUNCH_BLOCKING=1,\n"
            "CUDA_VISIBLE_DEVICES hiding GPUs, forward-compat libraries on a GPU that cannot use\n"
            "them, other processes holding most of the memory, a fork after CUDA started.\n"
            "With no usable GPU it says so plainly and recommends the CPU strategy.\n"
            "\n"
            "options:\n"
            "  --probe         also do each capability for real, once, in a child process per\n"
            "                  probe and GPU: map one VMM granule, pin 64 MiB of host memory,\n"
            "                  allocate from a memory pool, launch a trivial kernel, allocate 90%%\n"
            "                  of the free memory. Attributes can lie; a probe's verdict wins\n"
            "                  over the attribute. Takes a few seconds per GPU.\n"
            "  --model MODEL   how much MODEL needs (vramkit estimate's expected total for the\n"
            "                  workload options) and whether that fits beside the memory already\n"
            "                  in use; MODEL is a built-in name (--list-models),\n"
            "                  a .safetensors/.gguf file, an index, a config.json or a directory\n"
            "  --need SIZE     the same with the size given directly (e.g. 7GiB)\n"
            "  --arch LIST     the GPU architectures your program is built for, checked against\n"
            "                  each GPU: e.g. 80,90 (CMake style: machine code and PTX),\n"
            "                  sm_90 (machine code), compute_90 (PTX), 90-real, 90-virtual, 90a\n"
            "                  (default: the architectures of this vramkit build when known)\n"
            "  --json          one JSON object: version, verdict, exit_code, driver {cuda_version,\n"
            "                  kernel_module}, runtime_version, backend, platform {wsl2, jetson,\n"
            "                  vgpu}, environment {NAME: value or null}, snapshot_status,\n"
            "                  usable_gpus, devices [{ordinal, name, cc, total_bytes, free_bytes,\n"
            "                  used_bytes, multiprocessors, copy_engines, integrated, compute_mode,\n"
            "                  vmm, vmm_posix_fd, memory_pools, host_register, probes [{name, ran,\n"
            "                  ok, status, cuda_error, detail, seconds}]}], model {label,\n"
            "                  need_bytes, preset, device}, findings [{id, severity, device,\n"
            "                  summary, evidence {name: number}, evidence_text, remedy}], counts\n"
            "                  {error, warning, info}\n"
            "  --list-models   the built-in models, for --model\n"
            "  -h, --help      this text\n"
            "\n"
            "%s"
            "\n"
            "Environment read: CUDA_VISIBLE_DEVICES, CUDA_LAUNCH_BLOCKING, PYTORCH_ALLOC_CONF (or\n"
            "PYTORCH_CUDA_ALLOC_CONF), LD_LIBRARY_PATH; files: /proc/sys/kernel/osrelease,\n"
            "/proc/version, /etc/nv_tegra_release, /proc/driver/nvidia/version and .../gpus.\n"
            "\n"
            "exit codes: 0 no error-level finding, 1 an error-level finding (the machine is not\n"
            "            fit as it is, or the model does not fit), 2 bad usage or input,\n"
            "            3 no GPU can be used (no driver, no device, every GPU unusable)\n"
            "\n"
            "examples:\n"
            "  vramkit doctor\n"
            "  vramkit doctor --probe --model Qwen/Qwen2.5-7B-Instruct --json\n",
            cli_workload_help);
}

enum { OPT_PROBE = 1, OPT_MODEL, OPT_NEED, OPT_ARCH, OPT_JSON, OPT_LIST };

static const struct option long_options[] = {
    CLI_WORKLOAD_LONG_OPTIONS,
    {"probe", no_argument, NULL, OPT_PROBE},
    {"model", required_argument, NULL, OPT_MODEL},
    {"need", required_argument, NULL, OPT_NEED},
    {"arch", required_argument, NULL, OPT_ARCH},
    {"json", no_argument, NULL, OPT_JSON},
    {"list-models", no_argument, NULL, OPT_LIST},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* ---- evidence as text ------------------------------------------------------------ */

static const char *compute_mode_name(long long m) {
    switch (m) {
    case VRAM_COMPUTE_DEFAULT: return "default";
    case VRAM_COMPUTE_EXCLUSIVE_THREAD: return "exclusive thread";
    case VRAM_COMPUTE_PROHIBITED: return "prohibited";
    case VRAM_COMPUTE_EXCLUSIVE_PROCESS: return "exclusive process";
    default: return "unknown";
    }
}

static const char *tristate_name(long long v) { return v == VRAM_YES ? "yes" : v == VRAM_NO ? "no" : "unknown"; }

static void cuda_version_text(long long v, char *buf, size_t cap) {
    if (v <= 0)
        snprintf(buf, cap, "none");
    else
        snprintf(buf, cap, "%lld.%lld", v / 1000, (v % 1000) / 10);
}

static void evidence_text(vram_evidence_unit unit, int64_t v, char *buf, size_t cap) {
    long long x = (long long)v;
    switch (unit) {
    case VRAM_EVU_BYTES: vram_fmt_size(v < 0 ? 0u : (uint64_t)v, buf, cap); return;
    case VRAM_EVU_CUDA_VERSION: cuda_version_text(x, buf, cap); return;
    case VRAM_EVU_CC:
        if (x <= 0) snprintf(buf, cap, "unknown");
        else snprintf(buf, cap, "%lld.%lld", x / 10, x % 10);
        return;
    case VRAM_EVU_TRISTATE: snprintf(buf, cap, "%s", tristate_name(x)); return;
    case VRAM_EVU_CUDA_ERROR: {
        const char *n = x > 0 && x < 100000 ? vram_cuda_error_name((int)x) : NULL;
        if (x == 0) snprintf(buf, cap, "none");
        else if (n != NULL) snprintf(buf, cap, "%lld (%s)", x, n);
        else snprintf(buf, cap, "%lld", x);
        return;
    }
    case VRAM_EVU_STATUS: snprintf(buf, cap, "%s", vram_status_str((vram_status)x)); return;
    case VRAM_EVU_PROBE: {
        const char *n = x >= 0 && x < VRAM_DIAG_PROBE_COUNT ? vram_diag_probe_name((vram_diag_probe_kind)x) : NULL;
        snprintf(buf, cap, "%s", n ? n : "unknown");
        return;
    }
    case VRAM_EVU_BRANCH:
        if (x <= 0) snprintf(buf, cap, "unknown");
        else snprintf(buf, cap, "%lld", x);
        return;
    case VRAM_EVU_VISIBLE_STOP: snprintf(buf, cap, "%s", vram_visible_stop_name((vram_visible_stop)x)); return;
    case VRAM_EVU_COMPUTE_MODE: snprintf(buf, cap, "%s", compute_mode_name(x)); return;
    case VRAM_EVU_DEVICE:
        if (x < 0) snprintf(buf, cap, "none");
        else snprintf(buf, cap, "%lld", x);
        return;
    case VRAM_EVU_COUNT:
    case VRAM_EVU_OFFSET:
    case VRAM_EVU_INDEX: snprintf(buf, cap, "%lld", x); return;
    case VRAM_EVU_NONE: break;
    }
    buf[0] = '\0';
}

/* A finding's evidence value by the name its templates use. */
static int evidence_value(void *ctx, const char *key, size_t klen, char *val, size_t cap) {
    const vram_finding *f = ctx;
    for (int k = 0; k < VRAM_FINDING_EVIDENCE; k++) {
        vram_evidence_spec s = vram_finding_evidence(f->id, k);
        if (s.name != NULL && strlen(s.name) == klen && strncmp(s.name, key, klen) == 0) {
            evidence_text(s.unit, f->ev[k], val, cap);
            return 1;
        }
    }
    return 0;
}

/* A template with {name} placeholders filled from the finding's evidence. */
static void expand(const char *tmpl, const vram_finding *f, char *buf, size_t cap) {
    vram_expand(tmpl, evidence_value, (void *)f, buf, cap);
}

/* "name=value, ..." of a finding's evidence. */
static void evidence_line(const vram_finding *f, char *buf, size_t cap) {
    size_t n = 0;
    buf[0] = '\0';
    for (int k = 0; k < VRAM_FINDING_EVIDENCE; k++) {
        vram_evidence_spec s = vram_finding_evidence(f->id, k);
        if (s.name == NULL) continue;
        char val[128];
        evidence_text(s.unit, f->ev[k], val, sizeof val);
        int w = snprintf(buf + n, cap - n, "%s%s %s", n ? ", " : "", s.name, val);
        if (w < 0 || (size_t)w >= cap - n) break;
        n += (size_t)w;
    }
}

/* ---- the verdict ------------------------------------------------------------------ */

typedef struct doctor_model {
    int given;        /* --model or --need */
    char label[512];  /* the model's name, or "--need" */
    uint64_t need;    /* expected bytes */
    int rec_ok;       /* r is filled */
    vram_recommendation *r;
    int rec_device;   /* GPU the preset is for; -1: the CPU */
} doctor_model;

/* One line for the case no GPU can be used, from the most severe finding. */
static const char *no_gpu_headline(const vram_finding *fs, size_t n) {
    for (size_t i = 0; i < n; i++) {
        switch (fs[i].id) {
        case VRAM_FINDING_NO_CUDA_IN_BUILD: return "this vramkit was built without CUDA";
        case VRAM_FINDING_NO_DRIVER: return "no NVIDIA driver found";
        case VRAM_FINDING_DRIVER_TOO_OLD: return "the NVIDIA driver is too old for this build's CUDA runtime";
        case VRAM_FINDING_VISIBLE_DEVICES_HIDE_ALL: return "CUDA_VISIBLE_DEVICES hides every GPU";
        case VRAM_FINDING_NO_DEVICE: return "no NVIDIA GPU is visible";
        case VRAM_FINDING_FORKED_AFTER_INIT: return "CUDA cannot work in this forked process";
        case VRAM_FINDING_DEVICE_UNAVAILABLE:
        case VRAM_FINDING_COMPUTE_PROHIBITED: return "the GPU refuses CUDA contexts (compute mode)";
        default: break;
        }
    }
    return "no GPU can be used";
}


/* ---- text ------------------------------------------------------------------------- */

static void print_env(FILE *o, const char *name, const char *value) {
    if (value == NULL) fprintf(o, "  %-24s not set\n", name);
    else fprintf(o, "  %-24s \"%s\"\n", name, value);
}

static void print_device(FILE *o, const vram_doctor_report *rep, int d) {
    const vram_device_info *g = &rep->snap.devices[d];
    char a[32], b[32], c[32];
    uint64_t used = g->total_bytes > g->free_bytes ? g->total_bytes - g->free_bytes : 0;
    fprintf(o, "GPU %d: %s\n", d, g->name[0] ? g->name : "(no name)");
    fprintf(o, "  compute capability %d.%d, %d multiprocessors, %d copy engines, compute mode %s%s\n",
            g->cc_major, g->cc_minor, g->multiprocessors, g->copy_engines,
            compute_mode_name(g->compute_mode), g->integrated ? ", integrated" : "");
    fprintf(o, "  memory: %s total, %s free, %s in use\n", vram_fmt_size(g->total_bytes, a, sizeof a),
            vram_fmt_size(g->free_bytes, b, sizeof b), vram_fmt_size(used, c, sizeof c));
    fprintf(o, "  VMM %s (POSIX fd handles %s), memory pools %s, host register %s\n",
            tristate_name(g->vmm), tristate_name(g->vmm_posix_fd), tristate_name(g->memory_pools),
            tristate_name(g->host_register));
    if (!rep->probed) {
        fprintf(o, "  probes: not run (--probe runs them)\n");
        return;
    }
    fprintf(o, "  probes:");
    for (int k = 0; k < VRAM_PROBE_COUNT; k++) {
        const vram_probe_result *p = &rep->probes[d][k];
        const char *name = vram_probe_name((vram_probe_kind)k);
        if (!p->ran)
            fprintf(o, "%s %s not run (%s)", k ? "," : "", name,
                    g->compute_mode == VRAM_COMPUTE_PROHIBITED ? "compute mode prohibited"
                                                              : vram_status_str(rep->probe_run[d][k]));
        else if (p->status == VRAM_OK)
            fprintf(o, "%s %s ok", k ? "," : "", name);
        else
            fprintf(o, "%s %s FAILED", k ? "," : "", name);
    }
    fputc('\n', o);
    for (int k = 0; k < VRAM_PROBE_COUNT; k++) {
        const vram_probe_result *p = &rep->probes[d][k];
        if ((p->ran && p->status != VRAM_OK) || (!p->ran && p->detail[0]))
            fprintf(o, "    %s: %s\n", vram_probe_name((vram_probe_kind)k),
                    p->detail[0] ? p->detail : vram_status_str(p->status));
    }
}

static void print_text(FILE *o, const vram_doctor_report *rep, const vram_finding *fs, size_t nf,
                       const doctor_model *m, int usable, int rc, const char *headline) {
    const vram_diag_facts *f = &rep->facts;
    const vram_device_snapshot *s = &rep->snap;
    char a[32], b[32];
    int nerr = 0, nwarn = 0, ninfo = 0;
    for (size_t i = 0; i < nf; i++) {
        nerr += fs[i].severity == VRAM_SEV_ERROR;
        nwarn += fs[i].severity == VRAM_SEV_WARNING;
        ninfo += fs[i].severity == VRAM_SEV_INFO;
    }
    if (rc == VRAM_EXIT_ENV)
        fprintf(o, "vramkit doctor: %s: no GPU can be used here\n\n", headline);
    else if (rc == VRAM_EXIT_NO)
        fprintf(o, "vramkit doctor: %d error(s) to fix; %d usable GPU(s)\n\n", nerr, usable);
    else
        fprintf(o, "vramkit doctor: ready: %d usable GPU(s), no errors\n\n", usable);

    cuda_version_text(s->driver_version, a, sizeof a);
    if (s->driver_version > 0)
        fprintf(o, "driver:   supports CUDA %s", a);
    else if (s->status == VRAM_E_NOT_BUILT)
        fprintf(o, "driver:   not looked for (this build has no CUDA parts)");
    else
        fprintf(o, "driver:   none found (no libcuda answered)");
    if (rep->kernel_module[0]) fprintf(o, ", kernel module %s\n", rep->kernel_module);
    else fprintf(o, ", no NVIDIA kernel module loaded\n");
    cuda_version_text(s->runtime_version, b, sizeof b);
    fprintf(o, "runtime:  CUDA %s (this build; backend %s", s->runtime_version ? b : "unknown",
            rep->backend[0] ? rep->backend : "none");
    if (f->n_archs > 0) {
        fprintf(o, "; architectures");
        for (int i = 0; i < f->n_archs; i++)
            fprintf(o, "%s%d.%d%s%s", i ? "," : " ", f->archs[i].cc / 10, f->archs[i].cc % 10,
                    f->archs[i].sass ? (f->archs[i].exact ? "a" : "") : "",
                    f->archs[i].sass && f->archs[i].ptx ? "" : (f->archs[i].ptx ? " (PTX)" : " (SASS)"));
        fprintf(o, " from the %s", rep->archs_source ? rep->archs_source : "build");
    }
    fprintf(o, ")\n");
    fprintf(o, "platform: %s%s%s%s\n", f->wsl2 ? "WSL2 " : "", f->jetson ? "Jetson " : "",
            f->vgpu ? "vGPU " : "", f->wsl2 || f->jetson || f->vgpu ? "" : "Linux");
    if (f->physical_gpus > 0) fprintf(o, "          the kernel module knows %d GPU(s)\n", f->physical_gpus);
    fprintf(o, "environment:\n");
    print_env(o, "CUDA_VISIBLE_DEVICES", f->cuda_visible_devices);
    print_env(o, "CUDA_LAUNCH_BLOCKING", f->cuda_launch_blocking);
    print_env(o, rep->alloc_conf_var ? rep->alloc_conf_var : "PYTORCH_CUDA_ALLOC_CONF", f->alloc_conf);
    print_env(o, "LD_LIBRARY_PATH", f->ld_library_path);
    fputc('\n', o);

    int n = vram_snapshot_count(s);
    if (n == 0) {
        fprintf(o, "GPUs: none (%s)\n", vram_status_str(s->status));
    } else {
        for (int d = 0; d < n; d++) print_device(o, rep, d);
        if (s->status != VRAM_OK)
            fprintf(o, "(the GPUs after these could not be read: %s)\n", vram_status_str(s->status));
    }
    if (m->given) {
        fprintf(o, "\nmodel: %s needs %s (expected)\n", m->label, vram_fmt_size(m->need, a, sizeof a));
        if (m->rec_ok && m->rec_device >= 0)
            fprintf(o, "  preset that fits GPU %d (its free memory less %s of margin): %s\n", m->rec_device,
                    vram_fmt_size(DOCTOR_MARGIN, b, sizeof b), vram_preset_name(m->r->chosen));
    }

    if (nf == 0) {
        fprintf(o, "\nfindings: none\n");
    } else {
        fprintf(o, "\nfindings, most severe first (%d error(s), %d warning(s), %d info):\n", nerr, nwarn, ninfo);
        for (size_t i = 0; i < nf; i++) {
            char sum[1024], rem[1024], ev[512];
            expand(vram_finding_summary(fs[i].id), &fs[i], sum, sizeof sum);
            expand(vram_finding_remedy(fs[i].id), &fs[i], rem, sizeof rem);
            evidence_line(&fs[i], ev, sizeof ev);
            if (fs[i].device >= 0)
                fprintf(o, "  [%s] %s, GPU %d\n", vram_severity_name(fs[i].severity),
                        vram_finding_name(fs[i].id), fs[i].device);
            else
                fprintf(o, "  [%s] %s\n", vram_severity_name(fs[i].severity), vram_finding_name(fs[i].id));
            fprintf(o, "    %s\n", sum);
            if (ev[0]) fprintf(o, "    evidence: %s\n", ev);
            fprintf(o, "    remedy: %s\n", rem);
        }
    }
    if (usable == 0) {
        fprintf(o, "\nrecommendation: use the CPU strategy: no GPU can be used here");
        if (m->given && m->rec_ok)
            fprintf(o, " (%s needs %s on the CPU)", m->label,
                    vram_fmt_size(m->r->cpu_bytes[VRAM_PRESET_CPU], a, sizeof a));
        fprintf(o, "; vramkit plan --model MODEL plans for the CPU\n");
    }
}

/* ---- JSON ------------------------------------------------------------------------- */

static void json_env(vram_json *j, const char *name, const char *value) {
    vram_json_key(j, name);
    vram_json_string(j, value); /* NULL is null */
}

static void print_json(FILE *o, const vram_doctor_report *rep, const vram_finding *fs, size_t nf,
                       const doctor_model *m, int usable, int rc, const char *headline) {
    const vram_diag_facts *f = &rep->facts;
    const vram_device_snapshot *s = &rep->snap;
    vram_json j;
    vram_json_init(&j, o);
    vram_json_begin_object(&j);
    vram_json_key(&j, "version");
    vram_json_string(&j, VRAM_VERSION_STRING);
    vram_json_key(&j, "verdict");
    vram_json_string(&j, rc == VRAM_EXIT_ENV ? "no_gpu" : rc == VRAM_EXIT_NO ? "errors" : "ok");
    vram_json_key(&j, "headline");
    if (rc == VRAM_EXIT_ENV) vram_json_string(&j, headline);
    else vram_json_null(&j);
    vram_json_key(&j, "exit_code");
    vram_json_i64(&j, rc);
    vram_json_key(&j, "driver");
    vram_json_begin_object(&j);
    vram_json_key(&j, "cuda_version");
    vram_json_i64(&j, s->driver_version);
    vram_json_key(&j, "kernel_module");
    if (rep->kernel_module[0]) vram_json_string(&j, rep->kernel_module);
    else vram_json_null(&j);
    vram_json_end_object(&j);
    vram_json_key(&j, "runtime_version");
    vram_json_i64(&j, s->runtime_version);
    vram_json_key(&j, "backend");
    vram_json_string(&j, rep->backend[0] ? rep->backend : NULL);
    vram_json_key(&j, "cuda_built");
    vram_json_bool(&j, rep->cuda_built);
    vram_json_key(&j, "archs");
    vram_json_begin_array(&j);
    for (int i = 0; i < f->n_archs; i++) {
        vram_json_begin_object(&j);
        vram_json_key(&j, "cc");
        vram_json_i64(&j, f->archs[i].cc);
        vram_json_key(&j, "sass");
        vram_json_bool(&j, f->archs[i].sass);
        vram_json_key(&j, "ptx");
        vram_json_bool(&j, f->archs[i].ptx);
        vram_json_end_object(&j);
    }
    vram_json_end_array(&j);
    vram_json_key(&j, "platform");
    vram_json_begin_object(&j);
    vram_json_key(&j, "wsl2");
    vram_json_bool(&j, f->wsl2);
    vram_json_key(&j, "jetson");
    vram_json_bool(&j, f->jetson);
    vram_json_key(&j, "vgpu");
    vram_json_bool(&j, f->vgpu);
    vram_json_key(&j, "physical_gpus");
    if (f->physical_gpus > 0) vram_json_i64(&j, f->physical_gpus);
    else vram_json_null(&j);
    vram_json_end_object(&j);
    vram_json_key(&j, "environment");
    vram_json_begin_object(&j);
    json_env(&j, "CUDA_VISIBLE_DEVICES", f->cuda_visible_devices);
    json_env(&j, "CUDA_LAUNCH_BLOCKING", f->cuda_launch_blocking);
    json_env(&j, rep->alloc_conf_var ? rep->alloc_conf_var : "PYTORCH_CUDA_ALLOC_CONF", f->alloc_conf);
    json_env(&j, "LD_LIBRARY_PATH", f->ld_library_path);
    vram_json_end_object(&j);
    vram_json_key(&j, "snapshot_status");
    vram_json_string(&j, vram_status_name(s->status));
    vram_json_key(&j, "snapshot_cuda_error");
    vram_json_i64(&j, s->cuda_error);
    vram_json_key(&j, "usable_gpus");
    vram_json_i64(&j, usable);

    vram_json_key(&j, "devices");
    vram_json_begin_array(&j);
    int n = vram_snapshot_count(s);
    for (int d = 0; d < n; d++) {
        const vram_device_info *g = &s->devices[d];
        vram_json_begin_object(&j);
        vram_json_key(&j, "ordinal");
        vram_json_i64(&j, d);
        vram_json_key(&j, "name");
        vram_json_string(&j, g->name);
        vram_json_key(&j, "cc");
        vram_json_i64(&j, vram_device_cc(g));
        vram_json_key(&j, "total_bytes");
        vram_json_u64(&j, g->total_bytes);
        vram_json_key(&j, "free_bytes");
        vram_json_u64(&j, g->free_bytes);
        vram_json_key(&j, "used_bytes");
        vram_json_u64(&j, g->total_bytes > g->free_bytes ? g->total_bytes - g->free_bytes : 0);
        vram_json_key(&j, "multiprocessors");
        vram_json_i64(&j, g->multiprocessors);
        vram_json_key(&j, "copy_engines");
        vram_json_i64(&j, g->copy_engines);
        vram_json_key(&j, "integrated");
        vram_json_bool(&j, g->integrated);
        vram_json_key(&j, "compute_mode");
        vram_json_string(&j, compute_mode_name(g->compute_mode));
        const struct {
            const char *name;
            vram_tristate v;
        } caps[] = {{"vmm", g->vmm},
                    {"vmm_posix_fd", g->vmm_posix_fd},
                    {"memory_pools", g->memory_pools},
                    {"host_register", g->host_register}};
        for (size_t k = 0; k < sizeof caps / sizeof caps[0]; k++) {
            vram_json_key(&j, caps[k].name);
            if (caps[k].v == VRAM_UNKNOWN) vram_json_null(&j);
            else vram_json_bool(&j, caps[k].v == VRAM_YES);
        }
        vram_json_key(&j, "probes");
        vram_json_begin_array(&j);
        if (rep->probed) {
            for (int k = 0; k < VRAM_PROBE_COUNT; k++) {
                const vram_probe_result *p = &rep->probes[d][k];
                vram_json_begin_object(&j);
                vram_json_key(&j, "name");
                vram_json_string(&j, vram_probe_name((vram_probe_kind)k));
                vram_json_key(&j, "ran");
                vram_json_bool(&j, p->ran);
                vram_json_key(&j, "ok");
                if (p->ran) vram_json_bool(&j, p->status == VRAM_OK);
                else vram_json_null(&j);
                vram_json_key(&j, "status");
                vram_json_string(&j, vram_status_name(p->ran ? p->status : rep->probe_run[d][k]));
                vram_json_key(&j, "cuda_error");
                vram_json_i64(&j, p->cuda_error);
                vram_json_key(&j, "detail");
                vram_json_string(&j, p->detail);
                vram_json_key(&j, "seconds");
                vram_json_double(&j, p->seconds);
                vram_json_end_object(&j);
            }
        }
        vram_json_end_array(&j);
        vram_json_end_object(&j);
    }
    vram_json_end_array(&j);

    vram_json_key(&j, "model");
    if (!m->given) {
        vram_json_null(&j);
    } else {
        vram_json_begin_object(&j);
        vram_json_key(&j, "label");
        vram_json_string(&j, m->label);
        vram_json_key(&j, "need_bytes");
        vram_json_u64(&j, m->need);
        vram_json_key(&j, "preset");
        if (m->rec_ok) vram_json_string(&j, vram_preset_name(m->r->chosen));
        else vram_json_null(&j);
        vram_json_key(&j, "device");
        if (m->rec_ok && m->rec_device >= 0) vram_json_i64(&j, m->rec_device);
        else if (m->rec_ok) vram_json_string(&j, "cpu");
        else vram_json_null(&j);
        vram_json_end_object(&j);
    }

    int counts[4] = {0, 0, 0, 0};
    vram_json_key(&j, "findings");
    vram_json_begin_array(&j);
    for (size_t i = 0; i < nf; i++) {
        char sum[1024], rem[1024], ev[512];
        expand(vram_finding_summary(fs[i].id), &fs[i], sum, sizeof sum);
        expand(vram_finding_remedy(fs[i].id), &fs[i], rem, sizeof rem);
        evidence_line(&fs[i], ev, sizeof ev);
        if (fs[i].severity >= VRAM_SEV_INFO && fs[i].severity <= VRAM_SEV_ERROR) counts[fs[i].severity]++;
        vram_json_begin_object(&j);
        vram_json_key(&j, "id");
        vram_json_string(&j, vram_finding_name(fs[i].id));
        vram_json_key(&j, "severity");
        vram_json_string(&j, vram_severity_name(fs[i].severity));
        vram_json_key(&j, "device");
        if (fs[i].device >= 0) vram_json_i64(&j, fs[i].device);
        else vram_json_null(&j);
        vram_json_key(&j, "summary");
        vram_json_string(&j, sum);
        vram_json_key(&j, "evidence");
        vram_json_begin_object(&j);
        for (int k = 0; k < VRAM_FINDING_EVIDENCE; k++) {
            vram_evidence_spec sp = vram_finding_evidence(fs[i].id, k);
            if (sp.name == NULL) continue;
            vram_json_key(&j, sp.name);
            vram_json_i64(&j, fs[i].ev[k]);
        }
        vram_json_end_object(&j);
        vram_json_key(&j, "evidence_text");
        vram_json_string(&j, ev);
        vram_json_key(&j, "remedy");
        vram_json_string(&j, rem);
        vram_json_end_object(&j);
    }
    vram_json_end_array(&j);
    vram_json_key(&j, "counts");
    vram_json_begin_object(&j);
    vram_json_key(&j, "error");
    vram_json_i64(&j, counts[VRAM_SEV_ERROR]);
    vram_json_key(&j, "warning");
    vram_json_i64(&j, counts[VRAM_SEV_WARNING]);
    vram_json_key(&j, "info");
    vram_json_i64(&j, counts[VRAM_SEV_INFO]);
    vram_json_end_object(&j);
    vram_json_end_object(&j);
    vram_json_finish(&j);
}

/* ---- the command ------------------------------------------------------------------ */

int vram_doctor_cli(int argc, char **argv, const vram_doctor_config *base, FILE *out) {
    vram_doctor_config cfg;
    vram_workload w;
    doctor_model m;
    const char *model_arg = NULL, *arch_arg = NULL;
    int json = 0, probe = 0, workload_given = 0, c, rc, idx = 0;
    uint64_t need = 0;
    int need_given = 0;

    if (out == NULL) out = stdout;
    memset(&cfg, 0, sizeof cfg);
    if (base != NULL) cfg = *base;
    memset(&w, 0, sizeof w);
    memset(&m, 0, sizeof m);
    m.rec_device = -1;
    cli_getopt_reset();
    while ((c = getopt_long(argc, argv, ":h", long_options, &idx)) != -1) {
        switch (c) {
        case 'h':
            usage(out);
            return VRAM_EXIT_OK;
        case OPT_LIST:
            cli_model_list(out);
            return VRAM_EXIT_OK;
        case OPT_PROBE:
            probe = 1;
            break;
        case OPT_JSON:
            json = 1;
            break;
        case OPT_MODEL:
            model_arg = optarg;
            break;
        case OPT_NEED:
            if ((rc = cli_opt_size(CMD, "need", optarg, 0, CLI_OPT_BRIEF, &need))) return rc;
            need_given = 1;
            break;
        case OPT_ARCH: {
            vram_diag_facts *tmp = calloc(1, sizeof *tmp);
            if (tmp == NULL) return cli_error(VRAM_EXIT_ENV, CMD, "out of memory");
            vram_status st = vram_diag_parse_archs(optarg, tmp);
            free(tmp);
            if (st != VRAM_OK)
                return cli_usage_error(CMD,
                                       "--arch: '%s' is not an architecture list (e.g. 80,90 or "
                                       "sm_90,compute_90; at most %d entries)",
                                       optarg, VRAM_DIAG_MAX_ARCHS);
            arch_arg = optarg;
            break;
        }
        case CLI_BY_NAME: {
            char err[512];
            if ((rc = cli_set(CMD, vram_workload_set(&w, long_options[idx].name, optarg, err, sizeof err), err)))
                return rc;
            workload_given = 1;
            break;
        }
        case ':':
            return cli_usage_error(CMD, "%s needs a value", argv[optind - 1]);
        case '?':
            return cli_usage_error(CMD, "unknown option '%s' (see vramkit doctor --help)", argv[optind - 1]);
        default:
            return cli_usage_error(CMD, "unknown option");
        }
    }
    if (optind < argc)
        return cli_usage_error(CMD, "unexpected argument '%s' (a model goes after --model)", argv[optind]);
    if (model_arg != NULL && need_given)
        return cli_usage_error(CMD, "--model and --need both say what the model needs: give one");
    if (workload_given && model_arg == NULL)
        return cli_usage_error(CMD, "workload options describe a --model: give --model MODEL");

    vram_model_ref *cm = NULL;
    vram_doctor_report *rep = NULL;
    vram_finding *fs = NULL;
    m.r = calloc(1, sizeof *m.r);
    rep = calloc(1, sizeof *rep);
    fs = calloc(VRAM_DIAG_MAX_FINDINGS, sizeof *fs);
    if (m.r == NULL || rep == NULL || fs == NULL) {
        rc = cli_error(VRAM_EXIT_ENV, CMD, "out of memory");
        goto done;
    }

    /* the model's need, before anything touches the GPU */
    vram_estimate e;
    if (model_arg != NULL) {
        cm = calloc(1, sizeof *cm);
        if (cm == NULL) {
            rc = cli_error(VRAM_EXIT_ENV, CMD, "out of memory");
            goto done;
        }
        if ((rc = cli_model_resolve(CMD, model_arg, cm))) goto done;
        vram_status st = vram_estimate_model(&cm->model, &w, &e);
        if (st != VRAM_OK) {
            rc = cli_usage_error(CMD, "%s: cannot estimate what it needs: %s", cm->label, vram_status_str(st));
            goto done;
        }
        m.given = 1;
        m.need = e.expected;
        snprintf(m.label, sizeof m.label, "%s", cm->label);
    } else if (need_given) {
        m.given = 1;
        m.need = need;
        snprintf(m.label, sizeof m.label, "the model (--need)");
    }

    cfg.probe = cfg.probe || probe;
    cfg.model_bytes = m.need;
    if (arch_arg != NULL) cfg.archs = arch_arg;
    if (base == NULL) cfg.progress = probe && !json && isatty(STDERR_FILENO);
    if (vram_doctor_gather(&cfg, rep) != VRAM_OK) {
        rc = cli_usage_error(CMD, "the architecture list '%s' does not parse", cfg.archs ? cfg.archs : "");
        goto done;
    }

    size_t nf = 0, total = 0;
    vram_status st = vram_diagnose(&rep->facts, fs, VRAM_DIAG_MAX_FINDINGS, &nf, &total);
    if (st != VRAM_OK) {
        rc = cli_error(VRAM_EXIT_ENV, CMD, "diagnosis failed: %s", vram_status_str(st));
        goto done;
    }
    int usable = vram_diag_usable_gpus(&rep->facts);

    /* the preset for a --model: on the usable GPU with the most free memory, else the CPU */
    if (cm != NULL) {
        uint64_t budget = 0;
        int best = -1;
        for (int d = 0; d < vram_snapshot_count(&rep->snap); d++)
            if (vram_diag_gpu_usable(&rep->facts, d) &&
                (best < 0 || rep->snap.devices[d].free_bytes > rep->snap.devices[best].free_bytes))
                best = d;
        if (best >= 0)
            budget = rep->snap.devices[best].free_bytes > DOCTOR_MARGIN
                         ? rep->snap.devices[best].free_bytes - DOCTOR_MARGIN
                         : 0;
        if (vram_estimate_recommend(&cm->model, &w, budget, m.r) == VRAM_OK) {
            m.rec_ok = 1;
            m.rec_device = m.r->chosen == VRAM_PRESET_CPU ? -1 : best;
        }
    }

    vram_severity worst = vram_findings_worst(fs, nf);
    rc = usable == 0 ? VRAM_EXIT_ENV : worst == VRAM_SEV_ERROR ? VRAM_EXIT_NO : VRAM_EXIT_OK;
    const char *headline = no_gpu_headline(fs, nf);
    if (json)
        print_json(out, rep, fs, nf, &m, usable, rc, headline);
    else
        print_text(out, rep, fs, nf, &m, usable, rc, headline);
    fflush(out);
    if (rc == VRAM_EXIT_ENV)
        cli_error(rc, CMD, "%s: no GPU can be used here; use the CPU strategy (vramkit plan --model MODEL)",
                  headline);

done:
    free(cm);
    free(m.r);
    free(rep);
    free(fs);
    return rc;
}

int cmd_doctor(int argc, char **argv) { return vram_doctor_cli(argc, argv, NULL, NULL); }
