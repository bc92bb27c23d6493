/* driver/cli/cmd_plan.c — `vramkit plan`: options in, the plan (driver/plan/planner.h) made, and
 * the strategy chain or the placement printed as text, or the plan document
 * (driver/plan/plan_doc.h) printed and saved, or other tools' settings (driver/plan/emit.h).
 * Plans are loaded with what changed since. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_layout.h"
#include "cli_model.h"
#include "plan/plan_doc.h"
#include "plan/plan_run.h"

#define CMD "plan"

static void usage(FILE *out) {
    fprintf(out,
            "usage: vramkit plan (--model MODEL | --component NAME=MODEL[@DEVICE] ...)\n"
            "                    [workload options] [layout options] [--assume-gpu SPEC]...\n"
            "                    [--host-memory SIZE]\n"
            "                    [--margin SIZE] [--save FILE] [--json]\n"
            "                    [--emit FORMAT]... [--strategy NAME]\n"
            "       vramkit plan --load FILE [--assume-gpu SPEC]... [--save FILE] [--json]\n"
            "                    [--emit FORMAT]... [--strategy NAME]\n"
            "\n"
            "Decides, before anything is loaded, how to load a model and where each component of\n"
            "a service lives. For --model: every load strategy in the order to try it -- 16-bit\n"
            "on one GPU (bf16 on compute capability >= 8.0, else fp16), int8, int4, 16-bit over\n"
            "several GPUs, for a mixture of experts its routed experts in host memory and the\n"
            "rest on one GPU (experts_cpu, as llama.cpp's --cpu-moe), 16-bit split by whole\n"
            "blocks between a GPU and the CPU (how many blocks fit on the GPU), CPU fp32 --\n"
            "with its bytes per device, whether it fits and\n"
            "why, and the first that fits. For --component: each component placed on the GPU\n"
            "with the most room or on the CPU, beside what other processes already hold; each\n"
            "GPU's line adds up its components and what a GPU in use pays once: the CUDA\n"
            "context and the libraries' workspace.\n"
            "\n"
            "models:\n"
            "  --model MODEL          a built-in name (vramkit estimate --list-models), a\n"
            "                         .safetensors/.gguf file, an index, a config.json or a\n"
            "                         directory (headers only)\n"
            "  --component NAME=MODEL[@DEVICE]\n"
            "                         one component of a service (repeat, at most %d); NAME is\n"
            "                         letters, digits, '-' and '_'. DEVICE is auto, cpu, cuda,\n"
            "                         cuda:N (gpu, gpu:N); without @DEVICE the component uses\n"
            "                         VRAMKIT_<NAME>_DEVICE (NAME upper-cased, '-' as '_'), else\n"
            "                         inherits VRAMKIT_DEVICE (default auto)\n"
            "\n"
            "%s"
            "\n"
            "%s"
            "                         (--model only; not with --save, --load or --emit. The\n"
            "                         layout follows the strategies; --json adds it as layout,\n"
            "                         as in vramkit estimate --json; with layout options the\n"
            "                         exit code is the layout's: 0 fits, 1 not)\n"
            "\n"
            "machine:\n"
            "  --assume-gpu SPEC      a GPU: SIZE[,used=SIZE|,free=SIZE][,cc=M.m], e.g.\n"
            "                         8GiB,used=4.7GB,cc=8.9; repeat for several (GPU 0, 1, ...).\n"
            "                         Without it vramkit reads this machine's GPUs through the\n"
            "                         NVIDIA driver (total, free beside other tenants, compute\n"
            "                         capability); with none the plan is for the CPU, and says why\n"
            "  --host-memory SIZE     free host memory (default: MemAvailable of /proc/meminfo)\n"
            "  --margin SIZE          kept free on every device for other tenants' growth\n"
            "                         (default 256MiB; 0 for none)\n"
            "\n"
            "plans:\n"
            "  --save FILE            also write the plan as JSON to FILE (replaced atomically)\n"
            "  --load FILE            plan again from a saved plan's inputs (models, components,\n"
            "                         settings, workload, machine); --assume-gpu replaces its\n"
            "                         machine; says what changed since it was saved\n"
            "  --json                 print the plan as JSON: version, inputs, strategies [{name,\n"
            "                         devices, bytes, per_device [{device, bytes, blocks}], fits,\n"
            "                         reason, reason_text}], chosen (null when none fits),\n"
            "                         placement [{component, model, device, strategy, bytes,\n"
            "                         fits, setting, setting_from, reason, reason_text}], for\n"
            "                         components gpu_use [{device, budget_bytes, used_bytes,\n"
            "                         components, components_bytes, cuda_context_bytes,\n"
            "                         workspace_bytes}] (used = the last three), and with --load,\n"
            "                         changes; notes [{component, note}] when a model's reader\n"
            "                         noted something (one shard of a set read alone, ...).\n"
            "                         Plans saved before gpu_use and notes existed still load\n"
            "\n",
            VRAM_PLACE_MAX, cli_workload_help, cli_layout_help);
    fputs("other tools (repeat --emit for several; the plan's text is not printed, --json\n"
            "adds emit {FORMAT: text} to the plan):\n"
            "  --emit FORMAT          the chosen strategy as another tool's settings, on stdout:\n"
            "                         accelerate  JSON for from_pretrained: max_memory (per GPU\n"
            "                                     index and cpu, bytes: each device's weights\n"
            "                                     by the plan's split, half a block of slack,\n"
            "                                     and on the first GPU and cpu the largest\n"
            "                                     layer accelerate keeps free), device_map\n"
            "                                     (module -> device, from the safetensors\n"
            "                                     tensor names), dtype, quantization_config\n"
            "                                     (bitsandbytes int8 / NF4), notes\n"
            "                         llama.cpp   -ngl (blocks on the GPU, +1 for the output\n"
            "                                     layer when all are), -c (the context sized;\n"
            "                                     x batch with -np), --split-mode and\n"
            "                                     --tensor-split (blocks per GPU) or --main-gpu\n"
            "                         vllm        --gpu-memory-utilization (the plan's budget\n"
            "                                     over the GPU's total, rounded down),\n"
            "                                     --max-model-len, --tensor-parallel-size,\n"
            "                                     --dtype, --quantization bitsandbytes (int4)\n"
            "                         env         shell exports: CUDA_VISIBLE_DEVICES,\n"
            "                                     VRAMKIT_DEVICE or VRAMKIT_<NAME>_DEVICE per\n"
            "                                     component (renumbered as CUDA will see\n"
            "                                     them), PYTORCH_CUDA_ALLOC_CONF with\n"
            "                                     expandable_segments:True only where the VMM\n"
            "                                     probe passed on this machine's GPUs\n"
            "                         llama.cpp and vllm write what they cannot say exactly as\n"
            "                         'note:' lines on stderr; accelerate in notes, env in\n"
            "                         comments. A format that cannot express the plan (a\n"
            "                         component plan outside env, llama.cpp for an\n"
            "                         encoder-decoder or a training plan, vllm for int8,\n"
            "                         gpu_cpu or cpu, ...) is an error (exit 2)\n"
            "  --strategy NAME        emit another strategy of the chain than the chosen one\n"
            "                         (bf16/fp16/16bit, int8, int4, multi_gpu, experts_cpu,\n"
            "                         gpu_cpu, cpu); it must fit (exit 2 otherwise)\n"
            "\n",
          out);
    fputs("Sizes: bytes or with a unit (512MiB, 8GiB, 7.5GB).\n"
            "exit codes: 0 a strategy fits / every component is placed, 1 nothing fits / a\n"
            "            component is not placed, 2 bad usage or input (a model vramkit cannot\n"
            "            count: a malformed file, an index naming a missing shard, a directory\n"
            "            with no model file or only pickled weights; --emit for a strategy that\n"
            "            does not fit or a format that cannot express the plan), 3 environment\n"
            "            error (a file that is there but cannot be read: permissions, I/O)\n",
          out);
}


enum { OPT_JSON = 1 };

static const struct option long_options[] = {
    CLI_WORKLOAD_LONG_OPTIONS,
    CLI_LAYOUT_LONG_OPTIONS,
    {"model", required_argument, NULL, CLI_BY_NAME},
    {"component", required_argument, NULL, CLI_BY_NAME},
    {"assume-gpu", required_argument, NULL, CLI_BY_NAME},
    {"host-memory", required_argument, NULL, CLI_BY_NAME},
    {"margin", required_argument, NULL, CLI_BY_NAME},
    {"save", required_argument, NULL, CLI_BY_NAME},
    {"load", required_argument, NULL, CLI_BY_NAME},
    {"json", no_argument, NULL, OPT_JSON},
    {"emit", required_argument, NULL, CLI_BY_NAME},
    {"strategy", required_argument, NULL, CLI_BY_NAME},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static void print_strategies(FILE *out, const vram_plan *p) {
    char a[32], buf[512], wl[512];
    const vram_plan_component *c = &p->comps[0];
    const vram_candidate *any = &p->chain.cand[VRAM_STRATEGY_CPU];
    fprintf(out, "model: %s (%s%s%s), %.2fM parameters", c->m.label, c->m.source,
            c->m.hf_id[0] ? ", " : "", c->m.hf_id, (double)any->estimate.params / 1e6);
    if (c->m.model.arch.experts != 0) /* a mixture of experts */
        fprintf(out, " (%.2fM active per token: %llu of %llu routed experts)",
                (double)any->estimate.active_params / 1e6,
                (unsigned long long)c->m.model.arch.experts_per_token,
                (unsigned long long)c->m.model.arch.experts);
    fprintf(out, "\n");
    if (c->m.note[0]) fprintf(out, "note: %s\n", c->m.note); /* one shard alone, ... */
    cli_workload_text(&c->m.model, &p->w, &p->chain.cand[0].estimate, wl, sizeof wl);
    fprintf(out, "workload: %s\n\nstrategies, in the order to try them:\n", wl);
    for (int i = 0; i < p->chain.count; i++) {
        const vram_candidate *k = &p->chain.cand[i];
        char where[256] = "";
        size_t n = 0;
        for (int g = 0; g < VRAM_PLAN_MAX_GPUS && n < sizeof where; g++)
            if (k->gpu_mask & (1u << g)) {
                n += (size_t)snprintf(where + n, sizeof where - n, "%sGPU %d %s", n ? " + " : "", g,
                                      vram_fmt_size(k->gpu_bytes[g], a, sizeof a));
                if (k->kind == VRAM_STRATEGY_MULTI_GPU || k->kind == VRAM_STRATEGY_GPU_CPU)
                    n += (size_t)snprintf(where + n, sizeof where - n, " (%llu blocks)",
                                          (unsigned long long)k->gpu_blocks[g]);
            }
        if (k->cpu_bytes && n < sizeof where) {
            n += (size_t)snprintf(where + n, sizeof where - n, "%sCPU %s", n ? " + " : "",
                                  vram_fmt_size(k->cpu_bytes, a, sizeof a));
            if (k->kind == VRAM_STRATEGY_GPU_CPU && n < sizeof where)
                snprintf(where + n, sizeof where - n, " (%llu blocks)",
                         (unsigned long long)k->cpu_blocks);
            else if (k->kind == VRAM_STRATEGY_EXPERTS_CPU && n < sizeof where)
                snprintf(where + n, sizeof where - n, " (routed experts)");
        }
        fprintf(out, "  %d. %-11s %-4s %s\n     %s\n", i + 1, k->name, k->fits ? "yes" : "no",
                where[0] ? where : "-", vram_plan_candidate_text(k, buf, sizeof buf));
    }
    if (p->chain.chosen >= 0)
        fprintf(out, "\nchosen: %s\n", p->chain.cand[p->chain.chosen].name);
    else
        fprintf(out, "\nchosen: none fits\n");
}

static void print_placement(FILE *out, const vram_plan *p) {
    char a[32], b[32], buf[512], st[32];
    fprintf(out, "global device setting: %s\n\nplacement:\n", p->global_text);
    for (int i = 0; i < p->ncomp; i++) {
        const vram_plan_component *c = &p->comps[i];
        const vram_placement *pl = &p->placed[i];
        fprintf(out, "  %-16s %-26s %-4s %s (%s, setting %s from %s)\n", c->name, c->m.label,
                pl->fits ? "yes" : "no", vram_plan_placement_text(pl, buf, sizeof buf),
                pl->device == VRAM_PLAN_CPU ? "cpu fp32" : vram_plan_format_strategy(c->gpu_format),
                vram_plan_setting_text(pl->setting, st, sizeof st), c->setting_from);
        if (c->m.note[0]) fprintf(out, "    note: %s\n", c->m.note);
    }
    for (int g = 0; g < p->sum.gpus; g++) {
        vram_plan_gpu_use u;
        char c1[32], c2[32], c3[32];
        if (vram_plan_gpu_use_of(p, g, &u) != VRAM_OK) continue;
        fprintf(out, "GPU %d: %s used of %s", g, vram_fmt_size(u.used, a, sizeof a),
                vram_fmt_size(u.budget, b, sizeof b));
        if (u.components == 0)
            fprintf(out, " (no component: no CUDA context either)\n");
        else /* the items, so that the sum can be checked */
            fprintf(out, " = %d component%s %s + CUDA context %s + library workspace %s\n",
                    u.components, u.components == 1 ? "" : "s",
                    vram_fmt_size(u.components_bytes, c1, sizeof c1),
                    vram_fmt_size(u.cuda_context, c2, sizeof c2),
                    vram_fmt_size(u.workspace, c3, sizeof c3));
    }
    fprintf(out, "%s\n", p->sum.all_fit ? "every component is placed"
                                        : "not every component could be placed");
}

static void print_text(FILE *out, const vram_plan *p, const vram_change *ch, size_t nch) {
    char a[32], b[32], buf[512];
    if (p->mach.ngpu == 0)
        fprintf(out, "machine: no GPU (%s; --assume-gpu SPEC plans for one); host %s free\n",
                p->mach.no_gpu, p->mach.host ? vram_fmt_size(p->mach.host, a, sizeof a) : "unknown");
    for (int g = 0; g < p->mach.ngpu; g++) {
        fprintf(out, "GPU %d%s: %s, %s free", g, p->mach.gpus_detected ? "" : " (assumed)",
                vram_fmt_size(p->mach.gpus[g].total, a, sizeof a),
                vram_fmt_size(p->mach.gpus[g].free, b, sizeof b));
        if (p->mach.gpus[g].cc_major) fprintf(out, ", cc %d.%d", p->mach.gpus[g].cc_major, p->mach.gpus[g].cc_minor);
        fprintf(out, "\n");
    }
    if (p->mach.gpus_detected) cli_machine_text(out, &p->mach.view);
    if (p->mach.ngpu)
        fprintf(out, "host: %s free; margin %s per device\n",
                p->mach.host ? vram_fmt_size(p->mach.host, a, sizeof a) : "unknown",
                vram_fmt_size(vram_devices_margin(&p->mach.dev), b, sizeof b));
    if (p->single)
        print_strategies(out, p);
    else
        print_placement(out, p);
    if (p->saved.present) {
        if (nch == 0) fprintf(out, "unchanged since the plan was saved\n");
        for (size_t i = 0; i < nch; i++)
            fprintf(out, "changed since saved: %s\n", vram_plan_change_text(p, &ch[i], buf, sizeof buf));
    }
}

/* Returns -1 when the options were read, else the exit code. */
static int parse(int argc, char **argv, vram_plan *p, vram_plan_request *o, int *json) {
    char err[1024];
    int c, idx = 0, rc;
    cli_getopt_reset();
    while ((c = getopt_long(argc, argv, ":h", long_options, &idx)) != -1) {
        switch (c) {
        case 'h':
            usage(stdout);
            return VRAM_EXIT_OK;
        case OPT_JSON: *json = 1; break;
        case CLI_BY_NAME:
            if ((rc = cli_set(CMD, vram_plan_set(p, o, long_options[idx].name, optarg, err, sizeof err), err)))
                return rc;
            break;
        case ':': return cli_usage_error(CMD, "%s needs a value", argv[optind - 1]);
        default:
            return cli_usage_error(CMD, "unknown option '%s' (see vramkit plan --help)", argv[optind - 1]);
        }
    }
    if (optind < argc) return cli_usage_error(CMD, "unexpected argument '%s'", argv[optind]);
    return cli_set(CMD, vram_plan_check(p, o, err, sizeof err), err) ? VRAM_EXIT_USAGE : -1;
}

/* The notes of the emitted formats on stderr, one line each. */
static void print_notes(const vram_plan_request *o, char notes[][2048]) {
    for (int i = 0; i < o->nemit; i++)
        for (const char *q = notes[i], *nl; *q; q = nl + 1) {
            nl = strchr(q, '\n');
            if (nl == NULL) break;
            fprintf(stderr, "vramkit: plan: note: --emit %s: %.*s\n", vram_emit_format_name(o->emit[i]),
                    (int)(nl - q), q);
        }
}

/* The answer into memory first (an emitter may still refuse; then nothing is printed and
 * nothing saved), then saved, then printed. */
static int answer(const vram_plan *p, const vram_plan_request *o, const vram_plan_result *r, int json) {
    static char notes[VRAM_EMIT_FORMATS][2048];
    char err[4400], *out = NULL;
    size_t len = 0;
    vram_status st = VRAM_OK;
    int rc = VRAM_EXIT_OK;
    FILE *f = open_memstream(&out, &len);
    if (f == NULL) return cli_error(VRAM_EXIT_ENV, CMD, "out of memory");
    memset(notes, 0, sizeof notes);
    if (json) {
        vram_json j;
        vram_json_init(&j, f);
        if ((st = vram_plan_result_json(&j, p, o, r, notes, err, sizeof err)) == VRAM_OK) vram_json_finish(&j);
    } else if (o->nemit > 0) {
        st = vram_plan_emit_text(f, p, o, r, notes, err, sizeof err);
    } else {
        print_text(f, p, r->changes, r->nch);
        if (r->layout.mode != 0) {
            fputc('\n', f);
            cli_layout_text(f, &r->layout);
        }
    }
    if (fclose(f) != 0 && st == VRAM_OK) st = vram_errorf(err, sizeof err, VRAM_E_NOMEM, "out of memory");
    if (st == VRAM_OK && o->save != NULL) st = vram_plan_save(p, r, o->save, err, sizeof err);
    if (st != VRAM_OK) {
        rc = cli_fail(CMD, st, err);
    } else {
        fputs(out, stdout);
        fflush(stdout);
        print_notes(o, notes);
        rc = vram_plan_yes(p, o, r) ? VRAM_EXIT_OK : VRAM_EXIT_NO;
    }
    free(out);
    return rc;
}

int cmd_plan(int argc, char **argv) {
    vram_plan *p = calloc(1, sizeof *p);
    vram_plan_result *r = calloc(1, sizeof *r);
    vram_plan_request o;
    char err[4400];
    int rc, json = 0;
    vram_status st;
    memset(&o, 0, sizeof o);
    if (p == NULL || r == NULL) {
        rc = cli_error(VRAM_EXIT_ENV, CMD, "out of memory");
    } else if ((rc = parse(argc, argv, p, &o, &json)) < 0) {
        if ((st = vram_plan_run(p, &o, r, err, sizeof err)) != VRAM_OK)
            rc = cli_fail(CMD, st, err);
        else
            rc = answer(p, &o, r, json);
    }
    free(r);
    free(p);
    return rc;
}
