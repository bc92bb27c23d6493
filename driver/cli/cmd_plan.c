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
#include "plan/emit.h"
#include "plan/plan_doc.h"
#include "plan/planner.h"
#include "plan/workload.h"

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


enum {
    OPT_MODEL = 1,
    OPT_COMPONENT,
    OPT_ASSUME_GPU,
    OPT_HOST,
    OPT_MARGIN,
    OPT_SAVE,
    OPT_LOAD,
    OPT_JSON,
    OPT_EMIT,
    OPT_STRATEGY
};

/* The options that are not inputs of the plan. */
typedef struct plan_opts {
    const char *save, *load, *strategy;
    int json;
    int nemit;
    vram_emit_format emit[VRAM_EMIT_FORMATS]; /* in the order given, each once */
    cli_layout_opts layout;
} plan_opts;

static const struct option long_options[] = {
    CLI_WORKLOAD_LONG_OPTIONS,
    CLI_LAYOUT_LONG_OPTIONS,
    {"model", required_argument, NULL, OPT_MODEL},
    {"component", required_argument, NULL, OPT_COMPONENT},
    {"assume-gpu", required_argument, NULL, OPT_ASSUME_GPU},
    {"host-memory", required_argument, NULL, OPT_HOST},
    {"margin", required_argument, NULL, OPT_MARGIN},
    {"save", required_argument, NULL, OPT_SAVE},
    {"load", required_argument, NULL, OPT_LOAD},
    {"json", no_argument, NULL, OPT_JSON},
    {"emit", required_argument, NULL, OPT_EMIT},
    {"strategy", required_argument, NULL, OPT_STRATEGY},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* A planner or plan-document failure as this command reports it. */
static int fail(vram_status st, const char *err) {
    return cli_error(cli_exit_code(st), CMD,
                     "%s", err);
}

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
    if (p->ngpu == 0)
        fprintf(out, "machine: no GPU (%s; --assume-gpu SPEC plans for one); host %s free\n",
                p->no_gpu, p->host ? vram_fmt_size(p->host, a, sizeof a) : "unknown");
    for (int g = 0; g < p->ngpu; g++) {
        fprintf(out, "GPU %d%s: %s, %s free", g, p->gpus_detected ? "" : " (assumed)",
                vram_fmt_size(p->gpus[g].total, a, sizeof a),
                vram_fmt_size(p->gpus[g].free, b, sizeof b));
        if (p->gpus[g].cc_major) fprintf(out, ", cc %d.%d", p->gpus[g].cc_major, p->gpus[g].cc_minor);
        fprintf(out, "\n");
    }
    if (p->gpus_detected) cli_machine_text(out, &p->view);
    if (p->ngpu)
        fprintf(out, "host: %s free; margin %s per device\n",
                p->host ? vram_fmt_size(p->host, a, sizeof a) : "unknown",
                vram_fmt_size(vram_devices_margin(&p->dev), b, sizeof b));
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
static int parse(int argc, char **argv, vram_plan *p, plan_opts *o) {
    char err[1024];
    int c;
    cli_getopt_reset();
    while ((c = getopt_long(argc, argv, ":h", long_options, NULL)) != -1) {
        switch (c) {
        case 'h':
            usage(stdout);
            return VRAM_EXIT_OK;
        case OPT_MODEL:
            if (vram_plan_set_model(p, optarg, err, sizeof err) != VRAM_OK) return cli_usage_error(CMD, "%s", err);
            break;
        case OPT_COMPONENT:
            if (vram_plan_add_component(p, optarg, err, sizeof err) != VRAM_OK)
                return cli_usage_error(CMD, "%s", err);
            break;
        case OPT_ASSUME_GPU: {
            int rc;
            if (p->ngpu == VRAM_PLAN_MAX_GPUS)
                return cli_usage_error(CMD, "--assume-gpu: at most %d GPUs", VRAM_PLAN_MAX_GPUS);
            if ((rc = cli_parse_gpu_spec(CMD, optarg, &p->gpus[p->ngpu]))) return rc;
            p->ngpu++;
            p->gpus_given = 1;
            break;
        }
        case OPT_HOST:
            if (vram_parse_size(optarg, &p->host) != 0 || p->host == 0)
                return cli_usage_error(CMD, "--host-memory: '%s' is not a size above 0", optarg);
            p->host_given = 1;
            break;
        case OPT_MARGIN:
            if (vram_parse_size(optarg, &p->margin) != 0)
                return cli_usage_error(CMD, "--margin: '%s' is not a size", optarg);
            p->margin_given = 1;
            break;
        case OPT_SAVE: o->save = optarg; break;
        case OPT_LOAD: o->load = optarg; break;
        case OPT_JSON: o->json = 1; break;
        case OPT_EMIT: {
            vram_emit_format f;
            if (vram_emit_format_parse(optarg, &f) != VRAM_OK)
                return cli_usage_error(CMD, "--emit: '%s' is not a format (%s)", optarg,
                                       vram_emit_format_names);
            for (int i = 0; i < o->nemit; i++)
                if (o->emit[i] == f) return cli_usage_error(CMD, "--emit %s is given twice", optarg);
            o->emit[o->nemit++] = f;
            break;
        }
        case OPT_STRATEGY: o->strategy = optarg; break;
        case ':': return cli_usage_error(CMD, "%s needs a value", argv[optind - 1]);
        case '?':
            return cli_usage_error(CMD, "unknown option '%s' (see vramkit plan --help)", argv[optind - 1]);
        default:
            if (c >= VRAM_WL_BASE && c < VRAM_WL_END) {
                if (vram_wl_apply(&p->w, (vram_wl_option)c, optarg, err, sizeof err) != VRAM_OK)
                    return cli_usage_error(CMD, "%s", err);
                break;
            }
            if (c >= CLI_LAYOUT_NODES && c < CLI_LAYOUT_END) {
                int rc = cli_layout_option(CMD, c, optarg, &o->layout);
                if (rc) return rc;
                break;
            }
            return cli_usage_error(CMD, "unknown option");
        }
    }
    if (optind < argc) return cli_usage_error(CMD, "unexpected argument '%s'", argv[optind]);
    if (o->strategy != NULL && o->nemit == 0)
        return cli_usage_error(CMD, "--strategy %s: it chooses what --emit writes; give --emit FORMAT",
                               o->strategy);
    if (cli_layout_any(&o->layout)) {
        const char *flag = o->layout.first ? o->layout.first : "--nodes";
        if (o->nemit > 0)
            return cli_usage_error(CMD, "%s: --emit cannot express a layout across GPUs; drop one of them", flag);
        if (o->save != NULL || o->load != NULL)
            return cli_usage_error(CMD, "%s: layouts are not kept in plan files; drop --%s", flag,
                                   o->save != NULL ? "save" : "load");
        if (!p->single && p->ncomp > 0)
            return cli_usage_error(CMD, "%s: a layout is for one model (--model), not --component", flag);
    }
    return -1;
}

/* Each --emit format of the plan into a string (all or none: an error leaves nothing),
 * its notes beside it. Returns -1, or the exit code after the error line. */
static int emit_all(const vram_plan *p, const plan_opts *o, char **out, char notes[][2048]) {
    const vram_candidate *cand;
    vram_emit_machine mach;
    char err[2048];
    vram_status st;
    if ((st = vram_emit_pick(p, o->strategy, &cand, err, sizeof err)) != VRAM_OK) return fail(st, err);
    memset(&mach, 0, sizeof mach);
    for (int i = 0; i < o->nemit; i++)
        if (o->emit[i] == VRAM_EMIT_ENV) vram_emit_probe_vmm(p, vram_emit_gpus(p, cand), &mach);
    for (int i = 0; i < o->nemit; i++) {
        size_t len = 0;
        FILE *f = open_memstream(&out[i], &len);
        if (f == NULL) return cli_error(VRAM_EXIT_ENV, CMD, "out of memory");
        st = vram_emit_write(f, o->emit[i], p, cand, &mach, notes[i], sizeof notes[i], err,
                             sizeof err);
        if (fclose(f) != 0 && st == VRAM_OK) st = VRAM_E_NOMEM;
        if (st != VRAM_OK) return fail(st, err[0] ? err : "out of memory");
    }
    return -1;
}

/* The emitted text (unless it went into the JSON), a "# --emit FORMAT" line before each when
 * there are several; the notes on stderr. */
static void print_emitted(const plan_opts *o, int with_text, char **text, char notes[][2048]) {
    for (int i = 0; i < o->nemit && with_text; i++) {
        const char *name = vram_emit_format_name(o->emit[i]);
        if (o->nemit > 1) printf("%s# --emit %s\n", i ? "\n" : "", name);
        fputs(text[i], stdout);
    }
    fflush(stdout);
    for (int i = 0; i < o->nemit; i++)
        for (const char *q = notes[i], *nl; *q; q = nl + 1) {
            nl = strchr(q, '\n');
            if (nl == NULL) break;
            fprintf(stderr, "vramkit: plan: note: --emit %s: %.*s\n", vram_emit_format_name(o->emit[i]),
                    (int)(nl - q), q);
        }
}

/* The layout of a --model plan (cli_layout_make) for its model and workload, against the GPU
 * with the most room. Returns -1, or the exit code after the error line. */
static int make_layout(const vram_plan *p, const plan_opts *o, cli_layout_report *rep) {
    vram_estimate e;
    const vram_plan_component *c = &p->comps[0];
    const int best = vram_devices_best_gpu(&p->dev);
    const uint64_t budget = best == VRAM_PLAN_NONE ? 0u : vram_devices_budget(&p->dev, best);
    vram_status st = vram_estimate_model(&c->m.model, &p->w, &e);
    int rc;
    if (st != VRAM_OK) {
        if (!cli_layout_any(&o->layout)) return -1; /* the chain has said why */
        return cli_usage_error(CMD, "%s: cannot estimate for a layout: %s", c->m.label,
                               vram_status_str(st));
    }
    rc = cli_layout_make(CMD, &o->layout, &c->m.model, &p->w, &e, budget, 1, rep);
    return rc ? rc : -1;
}

/* The plan document with "layout" added as its last member. NULL when out of memory. */
static char *attach_layout(const char *doc, const cli_layout_report *rep) {
    char *lay = NULL, *out;
    size_t len = 0, cut;
    const char *end = strrchr(doc, '}');
    FILE *f = open_memstream(&lay, &len);
    vram_json j;
    if (f == NULL || end == NULL) {
        if (f) fclose(f);
        free(lay);
        return NULL;
    }
    vram_json_init(&j, f);
    vram_json_begin_object(&j);
    cli_layout_json(&j, rep);
    vram_json_end_object(&j);
    vram_json_finish(&j);
    if (fclose(f) != 0 || lay == NULL || len < 2) {
        free(lay);
        return NULL;
    }
    cut = (size_t)(end - doc);
    out = malloc(cut + len + 2);
    if (out != NULL) {
        memcpy(out, doc, cut);
        out[cut] = ',';
        memcpy(out + cut + 1, lay + 1, len); /* lay without its '{', with its '}' and newline */
        out[cut + len] = '\0';
    }
    free(lay);
    return out;
}

int cmd_plan(int argc, char **argv) {
    vram_plan *p = calloc(1, sizeof *p);
    vram_change changes[VRAM_PLACE_MAX + 1];
    size_t nch = 0;
    plan_opts o;
    int rc;
    char *text = NULL, *emitted[VRAM_EMIT_FORMATS] = {NULL}, err[4400];
    static char notes[VRAM_EMIT_FORMATS][2048];
    vram_status st;
    cli_layout_report lrep;
    memset(&o, 0, sizeof o);
    memset(&lrep, 0, sizeof lrep);
    if (p == NULL) return cli_error(VRAM_EXIT_ENV, CMD, "out of memory");
    if ((rc = parse(argc, argv, p, &o)) >= 0) goto out;
    if (o.load != NULL) {
        char what[4200];
        if (p->ncomp > 0) {
            rc = cli_usage_error(CMD, "--load takes its models from the plan; drop --model/--component");
            goto out;
        }
        snprintf(what, sizeof what, "--load %s", o.load);
        if ((st = vram_plan_doc_load(o.load, what, p, err, sizeof err)) != VRAM_OK) {
            rc = fail(st, err);
            goto out;
        }
    } else if (p->ncomp == 0) {
        rc = cli_usage_error(CMD, "give --model MODEL or --component NAME=MODEL (see vramkit plan --help)");
        goto out;
    }
    if ((st = vram_plan_make(p, err, sizeof err)) != VRAM_OK) {
        rc = fail(st, err);
        goto out;
    }
    /* a layout across GPUs for a --model plan: the one given, or proposed (--nodes alone, or
       training that does not fit the GPU) */
    if (p->single && (rc = make_layout(p, &o, &lrep)) >= 0) goto out;
    /* at most one change per saved entry, plus the chosen strategy */
    if (vram_plan_changes_since(p, changes, sizeof changes / sizeof changes[0], &nch) != VRAM_OK)
        nch = sizeof changes / sizeof changes[0];
    text = vram_plan_doc_json(p, changes, nch);
    if (text == NULL) {
        rc = cli_error(VRAM_EXIT_ENV, CMD, "out of memory");
        goto out;
    }
    if (o.nemit > 0 && (rc = emit_all(p, &o, emitted, notes)) >= 0) goto out;
    if (o.save != NULL && (st = vram_plan_doc_save(o.save, text, err, sizeof err)) != VRAM_OK) {
        rc = fail(st, err);
        goto out;
    }
    if (o.nemit > 0) {
        if (o.json) {
            char *doc = vram_emit_attach_json(text, o.emit, (const char *const *)emitted, (size_t)o.nemit);
            if (doc == NULL) {
                rc = cli_error(VRAM_EXIT_ENV, CMD, "out of memory");
                goto out;
            }
            fputs(doc, stdout);
            free(doc);
        }
        print_emitted(&o, !o.json, emitted, notes);
        rc = VRAM_EXIT_OK; /* the strategy emitted fits */
        goto out;
    }
    if (o.json && lrep.mode != 0) {
        char *doc = attach_layout(text, &lrep);
        if (doc == NULL) {
            rc = cli_error(VRAM_EXIT_ENV, CMD, "out of memory");
            goto out;
        }
        fputs(doc, stdout);
        free(doc);
    } else if (o.json) {
        fputs(text, stdout);
    } else {
        print_text(stdout, p, changes, nch);
        if (lrep.mode != 0) {
            fputc('\n', stdout);
            cli_layout_text(stdout, &lrep);
        }
    }
    rc = p->single ? (p->chain.chosen >= 0 ? VRAM_EXIT_OK : VRAM_EXIT_NO)
                   : (p->sum.all_fit ? VRAM_EXIT_OK : VRAM_EXIT_NO);
    if (cli_layout_any(&o.layout)) rc = cli_layout_fits(&lrep) ? VRAM_EXIT_OK : VRAM_EXIT_NO;
out:
    for (int i = 0; i < VRAM_EMIT_FORMATS; i++) free(emitted[i]);
    free(text);
    free(p);
    return rc;
}
