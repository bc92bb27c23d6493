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
            "usage: vramkit plan --model MODEL [workload] [layout] [machine] [plans]\n"
            "       vramkit plan --component NAME=MODEL[@DEVICE]... [workload] [machine] [plans]\n"
            "       vramkit plan --load FILE [--assume-gpu SPEC]... [--save FILE] [--json]\n"
            "                    [--emit FORMAT]...\n"
            "\n"
            "How to load a model, decided before anything is loaded: each load strategy in the\n"
            "order to try it (16-bit on one GPU, int8, int4, 16-bit over several GPUs, experts on\n"
            "the host, blocks split between a GPU and the CPU, CPU fp32), its bytes per device,\n"
            "whether it fits and why, and the first that fits. For a service of components: each\n"
            "placed on the GPU with the most room or on the CPU, beside the other processes.\n"
            "\n"
            "models:\n"
            "  --model MODEL        a built-in name (vramkit estimate --list-models), a safetensors\n"
            "                       or GGUF file, an index, a config.json or a directory\n"
            "  --component NAME=MODEL[@DEVICE]  one component (repeat, at most %d); DEVICE: auto,\n"
            "                       cpu, cuda:N; without it VRAMKIT_<NAME>_DEVICE, else\n"
            "                       VRAMKIT_DEVICE (default auto)\n"
            "\n"
            "%s%s"
            "machine:\n"
            "  --assume-gpu SPEC    a GPU that is not here: SIZE[,used=SIZE|,free=SIZE][,cc=M.m]\n"
            "                       (repeat for several); default: this machine's GPUs\n"
            "  --host-memory SIZE   free host memory (default: MemAvailable)\n"
            "  --margin SIZE        kept free on every device (default 256MiB; 0 for none)\n"
            "\n"
            "plans:\n"
            "  --json               the plan as one JSON object\n"
            "  --save FILE          also write the plan as JSON to FILE\n"
            "  --load FILE          plan again from a saved plan's inputs; says what changed\n"
            "  --emit FORMAT        the chosen strategy as another tool's settings: %s\n"
            "                       (repeat for several; with --json, added as emit)\n"
            "  --strategy NAME      emit this strategy of the chain instead of the chosen one\n"
            "  --calibration FILE   plan with the peaks 'vramkit try'/'run' measured (same model,\n"
            "                       strategy, workload): the larger of estimate and measured\n"
            "\n"
            "exit codes: 0 a strategy fits (every component placed), 1 not, 2 bad usage or input\n"
            "            (and --emit of what cannot be expressed), 3 environment error\n"
            "Manual, with the JSON fields and what each --emit writes: docs/plan.md\n",
            VRAM_PLACE_MAX, cli_workload_help, cli_layout_help, vram_emit_format_names);
}

enum { FLAG_JSON = 1u << 0 };

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

typedef struct plan_args {
    vram_plan *p;
    vram_plan_request *o;
} plan_args;

static vram_status set(void *ctx, const char *name, const char *arg, char *err, size_t cap) {
    plan_args *x = ctx;
    return vram_plan_set(x->p, x->o, name, arg, err, cap);
}

/* Estimate vs measured for the candidates with records (--calibration). */
static void print_calibration(FILE *out, const vram_plan *p, const vram_calib_plan *c) {
    char a[32], b[32], x[32], y[32];
    int any = 0;
    fprintf(out, "\ncalibration: %s (%d record%s", c->path, c->lines, c->lines == 1 ? "" : "s");
    if (c->bad) fprintf(out, ", %d bad line%s skipped", c->bad, c->bad == 1 ? "" : "s");
    fprintf(out, ")\n");
    for (int i = 0; i < p->chain.count; i++) {
        const vram_calib_cand *k = &c->cand[i];
        if (k->records == 0) continue;
        any = 1;
        fprintf(out, "  %-11s estimate %s, measured %s", p->chain.cand[i].name,
                k->expected ? vram_fmt_size(k->expected, a, sizeof a) : "-",
                vram_fmt_size(k->measured, b, sizeof b));
        if (k->nvml || k->reported)
            fprintf(out, " (%s%s%s%s%s)", k->nvml ? "NVML " : "", k->nvml ? vram_fmt_size(k->nvml, x, sizeof x) : "",
                    k->nvml && k->reported ? ", " : "", k->reported ? "reported " : "",
                    k->reported ? vram_fmt_size(k->reported, y, sizeof y) : "");
        fprintf(out, "; %s\n", !k->applied ? "shown only (not a one-GPU strategy that fits)"
                               : k->fits_before && !p->chain.cand[i].fits ? "planned with the measured peak: it no longer fits"
                               : k->measured > k->expected ? "planned with the measured peak: it still fits"
                                                           : "the estimate covers it");
    }
    if (!any) fprintf(out, "  no record of this model, workload and its strategies\n");
}

/* Returns -1 when the options were read, else the exit code. */
static int parse(int argc, char **argv, vram_plan *p, vram_plan_request *o, int *json) {
    char err[1024];
    plan_args x = {p, o};
    unsigned flags = 0;
    const cli_spec spec = {CMD, CLI_WORKLOAD_OPTIONS CLI_LAYOUT_OPTIONS
                           "model= component= assume-gpu= host-memory= margin= save= load= emit= strategy= "
                           "calibration=",
                           "json", set, &x, usage, NULL, 0, 0};
    int rc = cli_parse(&spec, argc, argv, &flags);
    if (rc >= 0) return rc;
    *json = (flags & FLAG_JSON) != 0;
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
        if (r->calib.used) print_calibration(f, p, &r->calib);
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
