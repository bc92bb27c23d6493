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
#include "device/machine.h"

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

enum { OPT_ASSUME_GPU = 1, OPT_MARGIN, OPT_JSON, OPT_LIST };

static const struct option long_options[] = {
    CLI_WORKLOAD_LONG_OPTIONS,
    CLI_LAYOUT_LONG_OPTIONS,
    {"assume-gpu", required_argument, NULL, OPT_ASSUME_GPU},
    {"margin", required_argument, NULL, OPT_MARGIN},
    {"json", no_argument, NULL, OPT_JSON},
    {"list-models", no_argument, NULL, OPT_LIST},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static const char *preset_reason(const vram_recommendation *r, int p) {
    if (r->status[p] == VRAM_E_INVALID) return "needs LoRA (--lora-rank) to train quantised weights";
    if (r->status[p] != VRAM_OK) return vram_status_str(r->status[p]);
    return r->fits[p] ? "fits" : "does not fit";
}

int cmd_estimate(int argc, char **argv) {
    vram_workload w;
    vram_gpu_budget gpus[VRAM_PLAN_MAX_GPUS];
    int ngpu = 0, json = 0, c, rc, best = -1, detected = 0;
    char no_gpu[128] = "";
    vram_machine_view view = {0};
    uint64_t margin = VRAM_PLAN_DEFAULT_MARGIN, budget = 0, host;
    int margin_given = 0;
    vram_devices dev;
    const char *model_arg = NULL;
    vram_model_ref *m;
    vram_estimate e;
    vram_recommendation *r;
    vram_status st;
    char buf[512], a[32], b[32];
    cli_layout_opts lo;
    cli_layout_report lrep;

    memset(&w, 0, sizeof w);
    memset(&lo, 0, sizeof lo);
    cli_getopt_reset();
    while ((c = getopt_long(argc, argv, ":h", long_options, NULL)) != -1) {
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
        case OPT_MARGIN:
            if (vram_parse_size(optarg, &margin) != 0)
                return cli_usage_error(CMD, "--margin: '%s' is not a size", optarg);
            margin_given = 1;
            break;
        case OPT_ASSUME_GPU:
            if (ngpu == VRAM_PLAN_MAX_GPUS)
                return cli_usage_error(CMD, "--assume-gpu: at most %d GPUs", VRAM_PLAN_MAX_GPUS);
            if ((rc = cli_parse_gpu_spec(CMD, optarg, &gpus[ngpu]))) return rc;
            ngpu++;
            break;
        case ':':
            return cli_usage_error(CMD, "%s needs a value", argv[optind - 1]);
        case '?':
            return cli_usage_error(CMD, "unknown option '%s' (see vramkit estimate --help)",
                                   argv[optind - 1]);
        default:
            if (c >= VRAM_WL_BASE && c < VRAM_WL_END) {
                if ((rc = cli_workload_option(CMD, c, optarg, &w))) return rc;
                break;
            }
            if (c >= CLI_LAYOUT_NODES && c < CLI_LAYOUT_END) {
                if ((rc = cli_layout_option(CMD, c, optarg, &lo))) return rc;
                break;
            }
            return cli_usage_error(CMD, "unknown option");
        }
    }
    if (optind >= argc) return cli_usage_error(CMD, "MODEL is missing (see vramkit estimate --help)");
    if (argc - optind > 1)
        return cli_usage_error(CMD, "one MODEL only; '%s' is extra", argv[optind + 1]);
    model_arg = argv[optind];

    m = calloc(1, sizeof *m);
    r = calloc(1, sizeof *r);
    if (m == NULL || r == NULL) {
        free(m);
        free(r);
        return cli_error(VRAM_EXIT_ENV, CMD, "out of memory");
    }
    if ((rc = cli_model_resolve(CMD, model_arg, m))) goto done;
    if (vram_wl_check_model(&w, &m->model, m->label, buf, sizeof buf) != VRAM_OK) {
        rc = cli_usage_error(CMD, "%s", buf);
        goto done;
    }
    st = vram_estimate_model(&m->model, &w, &e);
    if (st != VRAM_OK) {
        switch (vram_estimate_refusal(&m->model, &w)) {
        case VRAM_REFUSAL_LORA_NEEDS_ARCH:
            rc = cli_usage_error(CMD, "%s: LoRA needs the architecture numbers (add config.json)",
                                 m->label);
            break;
        case VRAM_REFUSAL_QUANTISED_TRAINING:
            rc = cli_usage_error(CMD,
                                 "--format %s: quantised weights cannot be trained; add "
                                 "--lora-rank R to train adapters on them",
                                 vram_dtype_name(w.format));
            break;
        case VRAM_REFUSAL_LORA_NOT_TRAINING:
            rc = cli_usage_error(CMD, "--lora-rank: LoRA is for training (--mode train)");
            break;
        case VRAM_REFUSAL_NO_MODEL:
            rc = cli_usage_error(CMD, "%s: nothing to estimate from: %s", m->label,
                                 m->note[0] ? m->note
                                            : "no architecture numbers and no tensor list");
            break;
        default:
            rc = cli_usage_error(CMD, "%s: cannot estimate: %s", m->label, vram_status_str(st));
        }
        goto done;
    }
    /* the recommendation: for the GPU with the largest budget (vram_devices_best_gpu), else
       for the CPU; the margin as given (0: none, the core's one byte), else the default */
    if (ngpu == 0) {
        ngpu = vram_machine_gpus_view(gpus, VRAM_PLAN_MAX_GPUS, &view, no_gpu, sizeof no_gpu);
        detected = ngpu > 0;
    }
    memset(&dev, 0, sizeof dev);
    dev.gpus = ngpu;
    for (int i = 0; i < ngpu; i++) dev.gpu[i] = gpus[i];
    dev.margin = margin_given ? (margin == 0 ? 1u : margin) : 0u;
    best = vram_devices_best_gpu(&dev);
    if (best == VRAM_PLAN_NONE) best = -1;
    else budget = vram_devices_budget(&dev, best);
    st = vram_estimate_recommend(&m->model, &w, budget, r);
    if (st != VRAM_OK) {
        rc = cli_usage_error(CMD, "%s: cannot recommend a preset: %s", m->label,
                             vram_status_str(st));
        goto done;
    }
    /* a layout across GPUs: the one given, or proposed (--nodes alone, or training that does
       not fit the GPU) */
    if ((rc = cli_layout_make(CMD, &lo, &m->model, &w, &e, best >= 0 ? budget : 0u, 1, &lrep)))
        goto done;
    host = vram_machine_host_available();

    if (json) {
        vram_json j;
        vram_json_init(&j, stdout);
        vram_json_begin_object(&j);
        vram_json_key(&j, "model");
        cli_model_json(&j, m, &e);
        vram_json_key(&j, "workload");
        cli_workload_json(&j, &w, &e);
        cli_estimate_json(&j, &e);
        vram_json_key(&j, "recommendation");
        vram_json_begin_object(&j);
        vram_json_key(&j, "device");
        if (best >= 0) {
            snprintf(buf, sizeof buf, "gpu%d", best);
            vram_json_string(&j, buf);
            vram_json_key(&j, "assumed");
            vram_json_bool(&j, !detected);
            vram_json_key(&j, "free_bytes");
            vram_json_u64(&j, gpus[best].free);
            if (detected) cli_machine_json(&j, &view);
        } else {
            vram_json_string(&j, "cpu");
            vram_json_key(&j, "no_gpu_reason");
            vram_json_string(&j, no_gpu);
            vram_json_key(&j, "host_available_bytes");
            vram_json_u64(&j, host);
        }
        vram_json_key(&j, "margin_bytes");
        vram_json_u64(&j, margin);
        vram_json_key(&j, "budget_bytes");
        vram_json_u64(&j, budget);
        vram_json_key(&j, "chosen");
        vram_json_string(&j, vram_preset_name(r->chosen));
        vram_json_key(&j, "next_better");
        if (r->next_better >= 0)
            vram_json_string(&j, vram_preset_name((vram_preset)r->next_better));
        else
            vram_json_null(&j);
        vram_json_key(&j, "next_short_bytes");
        vram_json_u64(&j, r->next_short);
        vram_json_key(&j, "presets");
        vram_json_begin_array(&j);
        for (int p = 0; p < VRAM_PRESET_COUNT; p++) {
            vram_json_begin_object(&j);
            vram_json_key(&j, "name");
            vram_json_string(&j, vram_preset_name((vram_preset)p));
            vram_json_key(&j, "format");
            vram_json_string(&j, vram_dtype_name(r->est[p].format));
            vram_json_key(&j, "gpu_bytes");
            vram_json_u64(&j, r->gpu_bytes[p]);
            vram_json_key(&j, "cpu_bytes");
            vram_json_u64(&j, r->cpu_bytes[p]);
            if (p == VRAM_PRESET_INT4_OFFLOAD && r->fits[p]) {
                vram_json_key(&j, "gpu_blocks");
                vram_json_u64(&j, r->gpu_blocks);
            }
            vram_json_key(&j, "fits");
            vram_json_bool(&j, r->status[p] == VRAM_OK && r->fits[p]);
            vram_json_key(&j, "reason");
            vram_json_string(&j, preset_reason(r, p));
            vram_json_end_object(&j);
        }
        vram_json_end_array(&j);
        vram_json_end_object(&j);
        cli_layout_json(&j, &lrep);
        vram_json_end_object(&j);
        vram_json_finish(&j);
        rc = VRAM_EXIT_OK;
        goto done;
    }

    printf("model: %s (%s%s%s)\n", m->label, m->source, m->hf_id[0] ? ", " : "", m->hf_id);
    printf("  %.2fM parameters", (double)e.params / 1e6);
    if (m->model.arch.experts != 0)
        printf(" (%.2fM active per token: %llu of %llu routed experts)",
               (double)e.active_params / 1e6, (unsigned long long)m->model.arch.experts_per_token,
               (unsigned long long)m->model.arch.experts);
    if (e.expert_bytes != 0)
        printf(", routed experts %s", vram_fmt_size(e.expert_bytes, a, sizeof a));
    if (e.blocks) printf(", %llu blocks", (unsigned long long)e.blocks);
    printf(", published as %s\n",
           m->model.dtype != VRAM_DTYPE_NONE ? vram_dtype_name(m->model.dtype) : "unknown format");
    if (m->note[0]) printf("  note: %s\n", m->note);
    cli_workload_text(&m->model, &w, &e, buf, sizeof buf);
    printf("workload: %s\n\n", buf);
    cli_estimate_table(stdout, &e);
    printf("\n");
    if (best >= 0)
        printf("recommended preset for GPU %d (%s: %s free; %s kept as margin): %s\n", best,
               detected ? "this machine's" : "assumed",
               vram_fmt_size(gpus[best].free, a, sizeof a), vram_fmt_size(margin, b, sizeof b),
               vram_preset_name(r->chosen));
    else
        printf("recommended preset: cpu (no GPU: %s; --assume-gpu SPEC plans for one)\n",
               no_gpu);
    if (detected) cli_machine_text(stdout, &view);
    for (int p = 0; p < VRAM_PRESET_COUNT; p++) {
        char g[32], h[32];
        if (r->status[p] != VRAM_OK) {
            printf("  %-13s %s\n", vram_preset_name((vram_preset)p), preset_reason(r, p));
            continue;
        }
        if (p == VRAM_PRESET_CPU)
            printf("  %-13s %s on the CPU (%s available)\n", "cpu",
                   vram_fmt_size(r->cpu_bytes[p], g, sizeof g),
                   host ? vram_fmt_size(host, h, sizeof h) : "unknown");
        else if (p == VRAM_PRESET_INT4_OFFLOAD && r->fits[p])
            printf("  %-13s %s on the GPU (%llu of %llu blocks) + %s on the CPU\n",
                   "int4_offload", vram_fmt_size(r->gpu_bytes[p], g, sizeof g),
                   (unsigned long long)r->gpu_blocks, (unsigned long long)r->est[p].blocks,
                   vram_fmt_size(r->cpu_bytes[p], h, sizeof h));
        else
            printf("  %-13s %s on the GPU%s%s\n", vram_preset_name((vram_preset)p),
                   vram_fmt_size(r->gpu_bytes[p], g, sizeof g),
                   best < 0 ? "" : (r->fits[p] ? ": fits" : ": does not fit"),
                   p == VRAM_PRESET_INT4_OFFLOAD && !r->fits[p] ? " (non-block part + 1 block)"
                                                                : "");
    }
    if (r->next_better >= 0 && best >= 0)
        printf("to use %s instead: %s more free memory\n",
               vram_preset_name((vram_preset)r->next_better),
               vram_fmt_size(r->next_short, a, sizeof a));
    if (lrep.mode != 0) {
        printf("\n");
        cli_layout_text(stdout, &lrep);
    }
    rc = VRAM_EXIT_OK;
done:
    free(m);
    free(r);
    return rc;
}
