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
            "usage: vramkit estimate MODEL [workload] [layout] [--assume-gpu SPEC]... [--margin SIZE]\n"
            "                        [--json]\n"
            "       vramkit estimate --list-models\n"
            "\n"
            "How much memory MODEL needs, term by term with a low / expected / high range, before\n"
            "a weight is loaded; and the load preset to use (fp16, int8, int4, int4_double,\n"
            "int4_offload, cpu) on the GPU with the most room. MODEL: a built-in name, a\n"
            "safetensors or GGUF file, an index, a config.json, or a directory (headers only).\n"
            "\n"
            "%s%s"
            "machine:\n"
            "  --assume-gpu SPEC    a GPU that is not here: SIZE[,used=SIZE|,free=SIZE][,cc=M.m]\n"
            "                       (repeat for several); default: this machine's GPUs, else the CPU\n"
            "  --margin SIZE        kept free on the GPU (default 256MiB)\n"
            "  --json               the estimate as one JSON object\n"
            "  --list-models        the built-in models\n"
            "\n"
            "exit codes: 0 estimated, 2 bad usage or input, 3 environment error\n"
            "Sizes: bytes or 512MiB, 8GiB, 7.5GB. Manual, with the JSON fields: docs/estimate.md\n",
            cli_workload_help, cli_layout_help);
}

enum { FLAG_JSON = 1u << 0, FLAG_LIST = 1u << 1 };

static vram_status set(void *o, const char *name, const char *arg, char *err, size_t cap) {
    return vram_estimate_set(o, name, arg, err, cap);
}

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
    unsigned flags = 0;
    int rc;
    vram_status st;
    const cli_spec spec = {CMD, CLI_WORKLOAD_OPTIONS CLI_LAYOUT_OPTIONS "assume-gpu= margin=",
                           "json list-models", set, &o, usage, NULL, 0, 0};

    memset(&o, 0, sizeof o);
    if ((rc = cli_parse(&spec, argc, argv, &flags)) >= 0) return rc;
    if (flags & FLAG_LIST) {
        cli_model_list(stdout);
        return VRAM_EXIT_OK;
    }
    if (optind >= argc) return cli_usage_error(CMD, "MODEL is missing (see vramkit estimate --help)");
    if (argc - optind > 1)
        return cli_usage_error(CMD, "one MODEL only; '%s' is extra", argv[optind + 1]);
    o.model = argv[optind];
    if ((rep = calloc(1, sizeof *rep)) == NULL) return cli_error(VRAM_EXIT_ENV, CMD, "out of memory");
    if ((st = vram_estimate_run(&o, rep, err, sizeof err)) != VRAM_OK) {
        rc = cli_fail(CMD, st, err);
    } else if (flags & FLAG_JSON) {
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
