/* driver/cli/cmd_doctor.c — `vramkit doctor`: is this machine fit for CUDA work, and if not,
 * why and what to do (doctor/doctor_run.h). A deviceQuery-style summary of each GPU, then the
 * findings of vramkit/diagnose.h, most severe first, each with its evidence and remedy. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_model.h"
#include "doctor/doctor_run.h"

#define CMD "doctor"

static void usage(FILE *out) {
    fprintf(out,
            "usage: vramkit doctor [--probe] [--model MODEL [workload] | --need SIZE] [--arch LIST]\n"
            "                      [--json]\n"
            "       vramkit doctor --list-models\n"
            "\n"
            "Whether this machine is fit for CUDA work and, when it is not, why and what to do: a\n"
            "summary of the driver, runtime, platform, CUDA environment variables and each GPU,\n"
            "then the findings, most severe first, each with its evidence and remedy (no driver,\n"
            "a driver too old, a missing GPU architecture, PYTORCH_CUDA_ALLOC_CONF settings the GPU\n"
            "cannot honour (\"operation not supported\"), CUDA_VISIBLE_DEVICES hiding GPUs, ...).\n"
            "With no usable GPU it says so plainly and recommends the CPU strategy.\n"
            "\n"
            "options:\n"
            "  --probe         do each capability for real, once, in a child per probe and GPU\n"
            "  --model MODEL   what MODEL needs (as vramkit estimate) and whether it fits beside\n"
            "                  what is in use; workload options (--batch, ...) describe its use\n"
            "  --need SIZE     the same with the size given (e.g. 7GiB)\n"
            "  --arch LIST     the architectures a program is built for: 80,90, sm_90, compute_90\n"
            "  --json          one JSON object\n"
            "  --list-models   the built-in models\n"
            "\n"
            "exit codes: 0 no error, 1 an error-level finding, 2 bad usage, 3 no GPU can be used\n"
            "examples:\n"
            "  vramkit doctor --probe\n"
            "  vramkit doctor --model meta-llama/Llama-3.1-8B --batch 4\n"
            "Manual, with every finding and the JSON fields: docs/doctor.md\n");
}

enum { FLAG_JSON = 1u << 0, FLAG_LIST = 1u << 1 };

static vram_status set(void *o, const char *name, const char *arg, char *err, size_t cap) {
    return vram_doctor_set(o, name, arg, err, cap);
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
            vram_doctor_compute_mode_name(g->compute_mode), g->integrated ? ", integrated" : "");
    fprintf(o, "  memory: %s total, %s free, %s in use\n", vram_fmt_size(g->total_bytes, a, sizeof a),
            vram_fmt_size(g->free_bytes, b, sizeof b), vram_fmt_size(used, c, sizeof c));
    fprintf(o, "  VMM %s (POSIX fd handles %s), memory pools %s, host register %s\n",
            vram_doctor_tristate_name(g->vmm), vram_doctor_tristate_name(g->vmm_posix_fd), vram_doctor_tristate_name(g->memory_pools),
            vram_doctor_tristate_name(g->host_register));
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

static void print_text(FILE *o, const vram_doctor_result *r) {
    const vram_doctor_report *rep = &r->rep;
    const vram_finding *fs = r->fs;
    const size_t nf = r->nf;
    const int usable = r->usable, rc = r->exit_code;
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
        fprintf(o, "vramkit doctor: %s: no GPU can be used here\n\n", r->headline);
    else if (rc == VRAM_EXIT_NO)
        fprintf(o, "vramkit doctor: %d error(s) to fix; %d usable GPU(s)\n\n", nerr, usable);
    else
        fprintf(o, "vramkit doctor: ready: %d usable GPU(s), no errors\n\n", usable);

    vram_doctor_cuda_version(s->driver_version, a, sizeof a);
    if (s->driver_version > 0)
        fprintf(o, "driver:   supports CUDA %s", a);
    else if (s->status == VRAM_E_NOT_BUILT)
        fprintf(o, "driver:   not looked for (this build has no CUDA parts)");
    else
        fprintf(o, "driver:   none found (no libcuda answered)");
    if (rep->kernel_module[0]) fprintf(o, ", kernel module %s\n", rep->kernel_module);
    else fprintf(o, ", no NVIDIA kernel module loaded\n");
    vram_doctor_cuda_version(s->runtime_version, b, sizeof b);
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
    if (r->model_given) {
        fprintf(o, "\nmodel: %s needs %s (expected)\n", r->label, vram_fmt_size(r->need, a, sizeof a));
        if (r->rec_ok && r->rec_device >= 0)
            fprintf(o, "  preset that fits GPU %d (its free memory less %s of margin): %s\n", r->rec_device,
                    vram_fmt_size(VRAM_DOCTOR_MARGIN, b, sizeof b), vram_preset_name(r->rec.chosen));
    }

    if (nf == 0) {
        fprintf(o, "\nfindings: none\n");
    } else {
        fprintf(o, "\nfindings, most severe first (%d error(s), %d warning(s), %d info):\n", nerr, nwarn, ninfo);
        for (size_t i = 0; i < nf; i++) {
            char sum[1024], rem[1024], ev[512];
            vram_doctor_finding_text(&fs[i], sum, sizeof sum, rem, sizeof rem, ev, sizeof ev);
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
        if (r->model_given && r->rec_ok)
            fprintf(o, " (%s needs %s on the CPU)", r->label,
                    vram_fmt_size(r->rec.cpu_bytes[VRAM_PRESET_CPU], a, sizeof a));
        fprintf(o, "; vramkit plan --model MODEL plans for the CPU\n");
    }
}

/* ---- the command ------------------------------------------------------------------ */

/* One line per probe on a terminal, rubbed out at the end. */
static void show_probe(void *ctx, int device, vram_probe_kind kind) {
    (void)ctx;
    if (device < 0)
        fprintf(stderr, "\r%60s\r", "");
    else
        fprintf(stderr, "\rvramkit: doctor: probing GPU %d: %-8s", device, vram_probe_name(kind));
    fflush(stderr);
}

int cli_doctor_with(int argc, char **argv, const vram_doctor_config *base, FILE *out) {
    vram_doctor_opts o;
    vram_doctor_result *r;
    char err[1200];
    unsigned flags = 0;
    int json, rc;
    vram_status st;

    if (out == NULL) out = stdout;
    memset(&o, 0, sizeof o);
    if (base != NULL) o.cfg = *base;
    const cli_spec spec = {CMD, CLI_WORKLOAD_OPTIONS "probe model= need= arch=", "json list-models",
                           set, &o, usage, out, 0, 0};
    if ((rc = cli_parse(&spec, argc, argv, &flags)) >= 0) return rc;
    if (flags & FLAG_LIST) {
        cli_model_list(out);
        return VRAM_EXIT_OK;
    }
    json = (flags & FLAG_JSON) != 0;
    if (optind < argc)
        return cli_usage_error(CMD, "unexpected argument '%s' (a model goes after --model)", argv[optind]);
    if ((rc = cli_set(CMD, vram_doctor_check(&o, err, sizeof err), err))) return rc;
    if (base == NULL && o.probe && !json && isatty(STDERR_FILENO)) o.cfg.progress = show_probe;
    if ((r = calloc(1, sizeof *r)) == NULL) return cli_error(VRAM_EXIT_ENV, CMD, "out of memory");
    if ((st = vram_doctor_run(&o, r, err, sizeof err)) != VRAM_OK) {
        rc = cli_fail(CMD, st, err);
    } else {
        if (json) {
            vram_json j;
            vram_json_init(&j, out);
            vram_doctor_json(&j, r);
            vram_json_finish(&j);
        } else {
            print_text(out, r);
        }
        fflush(out);
        rc = r->exit_code;
        if (rc == VRAM_EXIT_ENV)
            cli_error(rc, CMD, "%s: no GPU can be used here; use the CPU strategy (vramkit plan --model MODEL)",
                      r->headline);
    }
    free(r);
    return rc;
}

int cmd_doctor(int argc, char **argv) { return cli_doctor_with(argc, argv, NULL, NULL); }
