/* driver/cli/cmd_estimate.c — `vramkit estimate MODEL`: the memory a model needs for a
 * workload, term by term with a low/expected/high range (vramkit/estimate.h), and the
 * load preset to use on a GPU (given with --assume-gpu) or on the CPU. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_layout.h"
#include "cli_model.h"
#include "plan/estimating.h"

#define CMD "estimate"

static void usage(FILE *out) {
    fprintf(out,
            "usage: vramkit estimate MODEL [workload options] [layout options]\n"
            "                        [--assume-gpu SPEC] [--margin SIZE] [--json]\n"
            "       vramkit estimate --list-models\n"
            "\n"
            "How much memory MODEL needs, before a single weight is loaded: each term (weights,\n"
            "gradients, optimizer state, master weights, activations, KV cache, logits, CUDA\n"
            "context, library workspace, allocator margin) with a low / expected / high range\n"
            "and the named cause of the range; then the load preset to use (fp16, int8, int4,\n"
            "int4_double, int4_offload, cpu): the highest precision whose expected bytes fit\n"
            "the GPU's free memory minus the margin, and what the next better one lacks.\n"
            "\n"
            "MODEL is a built-in name (--list-models), a .safetensors or .gguf file, a\n"
            "model.safetensors.index.json, a config.json, or a directory holding them. Only\n"
            "headers are read.\n"
            "\n"
            "%s"
            "\n"
            "%s"
            "\n"
            "GPU:\n"
            "  --assume-gpu SPEC      a GPU that is not here: SIZE[,used=SIZE|,free=SIZE][,cc=M.m],\n"
            "                         e.g. 8GiB,used=4.7GB,cc=8.9 (repeat for several; the\n"
            "                         recommendation is for the one with the most free memory).\n"
            "                         Without it vramkit reads this machine's GPUs through the\n"
            "                         NVIDIA driver (total, free beside other tenants, compute\n"
            "                         capability); with none it recommends for the CPU and\n"
            "                         says why.\n"
            "  --margin SIZE          kept free on the GPU for other tenants' growth (default\n"
            "                         256MiB)\n"
            "\n"
            "output:\n"
            "  --json                 one JSON object: model {name, source, family, params,\n"
            "                         [active_params, experts, experts_per_token: a mixture of\n"
            "                         experts], [expert_bytes], blocks, published_format},\n"
            "                         workload {mode, format, compute,\n"
            "                         batch, seq, ...}, terms [{name, bytes, low, high, cause}],\n"
            "                         total {low, expected, high}, notes [...], recommendation\n"
            "                         {device, free_bytes, budget_bytes, chosen, next_better,\n"
            "                         next_short_bytes, presets [{name, gpu_bytes, cpu_bytes,\n"
            "                         fits, reason}]}, and with a layout (given or proposed)\n"
            "                         layout {source, budget_bytes, [proposal {found, tried,\n"
            "                         nearest [{nodes, gpus_per_node, gpus, zero, tp, pp, dp,\n"
            "                         expected_bytes, short_bytes}], lower}], nodes,\n"
            "                         gpus_per_node, gpus, zero, tp, pp, dp, micro_batches,\n"
            "                         offload, stage, stage_blocks, in_flight, gpu_params,\n"
            "                         per_gpu {terms, total}, per_node_host {terms, total},\n"
            "                         fits}\n"
            "  --list-models          the built-in models\n"
            "\n"
            "Sizes: bytes or with a unit (512MiB, 8GiB, 7.5GB).\n"
            "exit codes: 0 estimated, 2 bad usage or input (unknown model, bad option, a model\n"
            "            vramkit cannot count: a malformed file, an index naming a missing shard,\n"
            "            a directory with no model file or only pickled weights), 3 environment\n"
            "            error (a file that is there but cannot be read: permissions, I/O)\n",
            cli_workload_help, cli_layout_help);
}

enum { OPT_JSON = 1, OPT_LIST };

static const struct option long_options[] = {
    CLI_WORKLOAD_LONG_OPTIONS,
    CLI_LAYOUT_LONG_OPTIONS,
    {"assume-gpu", required_argument, NULL, CLI_BY_NAME},
    {"margin", required_argument, NULL, CLI_BY_NAME},
    {"json", no_argument, NULL, OPT_JSON},
    {"list-models", no_argument, NULL, OPT_LIST},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static void print_text(const vram_estimate_report *rep) {
    const vram_model_ref *m = &rep->m;
    const vram_estimate *e = &rep->e;
    const vram_recommendation *r = &rep->r;
    const vram_machine *mc = &rep->machine;
    const int best = rep->best;
    char buf[512], a[32], b[32];
    printf("model: %s (%s%s%s)\n", m->label, m->source, m->hf_id[0] ? ", " : "", m->hf_id);
    printf("  %.2fM parameters", (double)e->params / 1e6);
    if (m->model.arch.experts != 0)
        printf(" (%.2fM active per token: %llu of %llu routed experts)",
               (double)e->active_params / 1e6, (unsigned long long)m->model.arch.experts_per_token,
               (unsigned long long)m->model.arch.experts);
    if (e->expert_bytes != 0) printf(", routed experts %s", vram_fmt_size(e->expert_bytes, a, sizeof a));
    if (e->blocks) printf(", %llu blocks", (unsigned long long)e->blocks);
    printf(", published as %s\n",
           m->model.dtype != VRAM_DTYPE_NONE ? vram_dtype_name(m->model.dtype) : "unknown format");
    if (m->note[0]) printf("  note: %s\n", m->note);
    cli_workload_text(&m->model, &rep->w, e, buf, sizeof buf);
    printf("workload: %s\n\n", buf);
    cli_estimate_table(stdout, e);
    printf("\n");
    if (best >= 0)
        printf("recommended preset for GPU %d (%s: %s free; %s kept as margin): %s\n", best,
               mc->gpus_detected ? "this machine's" : "assumed",
               vram_fmt_size(mc->gpus[best].free, a, sizeof a),
               vram_fmt_size(vram_machine_margin(mc), b, sizeof b), vram_preset_name(r->chosen));
    else
        printf("recommended preset: cpu (no GPU: %s; --assume-gpu SPEC plans for one)\n", mc->no_gpu);
    if (mc->gpus_detected) cli_machine_text(stdout, &mc->view);
    for (int p = 0; p < VRAM_PRESET_COUNT; p++) {
        char g[32], h[32];
        if (r->status[p] != VRAM_OK)
            printf("  %-13s %s\n", vram_preset_name((vram_preset)p), vram_estimate_preset_reason(r, p));
        else if (p == VRAM_PRESET_CPU)
            printf("  %-13s %s on the CPU (%s available)\n", "cpu",
                   vram_fmt_size(r->cpu_bytes[p], g, sizeof g),
                   mc->host ? vram_fmt_size(mc->host, h, sizeof h) : "unknown");
        else if (p == VRAM_PRESET_INT4_OFFLOAD && r->fits[p])
            printf("  %-13s %s on the GPU (%llu of %llu blocks) + %s on the CPU\n", "int4_offload",
                   vram_fmt_size(r->gpu_bytes[p], g, sizeof g), (unsigned long long)r->gpu_blocks,
                   (unsigned long long)r->est[p].blocks, vram_fmt_size(r->cpu_bytes[p], h, sizeof h));
        else
            printf("  %-13s %s on the GPU%s%s\n", vram_preset_name((vram_preset)p),
                   vram_fmt_size(r->gpu_bytes[p], g, sizeof g),
                   best < 0 ? "" : (r->fits[p] ? ": fits" : ": does not fit"),
                   p == VRAM_PRESET_INT4_OFFLOAD && !r->fits[p] ? " (non-block part + 1 block)" : "");
    }
    if (r->next_better >= 0 && best >= 0)
        printf("to use %s instead: %s more free memory\n",
               vram_preset_name((vram_preset)r->next_better), vram_fmt_size(r->next_short, a, sizeof a));
    if (rep->layout.mode != 0) {
        printf("\n");
        cli_layout_text(stdout, &rep->layout);
    }
}

int cmd_estimate(int argc, char **argv) {
    vram_estimate_opts o;
    vram_estimate_report *rep;
    char err[1200];
    int json = 0, c, idx = 0, rc;
    vram_status st;

    memset(&o, 0, sizeof o);
    cli_getopt_reset();
    while ((c = getopt_long(argc, argv, ":h", long_options, &idx)) != -1) {
        switch (c) {
        case 'h':
            usage(stdout);
            return VRAM_EXIT_OK;
        case OPT_LIST:
            cli_model_list(stdout);
            return VRAM_EXIT_OK;
        case OPT_JSON:
            json = 1;
            break;
        case CLI_BY_NAME:
            if ((rc = cli_set(CMD, vram_estimate_set(&o, long_options[idx].name, optarg, err, sizeof err), err)))
                return rc;
            break;
        case ':':
            return cli_usage_error(CMD, "%s needs a value", argv[optind - 1]);
        default:
            return cli_usage_error(CMD, "unknown option '%s' (see vramkit estimate --help)",
                                   argv[optind - 1]);
        }
    }
    if (optind >= argc) return cli_usage_error(CMD, "MODEL is missing (see vramkit estimate --help)");
    if (argc - optind > 1)
        return cli_usage_error(CMD, "one MODEL only; '%s' is extra", argv[optind + 1]);
    o.model = argv[optind];
    if ((rep = calloc(1, sizeof *rep)) == NULL) return cli_error(VRAM_EXIT_ENV, CMD, "out of memory");
    if ((st = vram_estimate_run(&o, rep, err, sizeof err)) != VRAM_OK) {
        rc = cli_fail(CMD, st, err);
    } else if (json) {
        vram_json j;
        vram_json_init(&j, stdout);
        vram_estimate_json(&j, rep);
        vram_json_finish(&j);
        rc = VRAM_EXIT_OK;
    } else {
        print_text(rep);
        rc = VRAM_EXIT_OK;
    }
    free(rep);
    return rc;
}
