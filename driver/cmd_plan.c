/* driver/cmd_plan.c — `vramkit plan`: the load-strategy chain of a model (vramkit/strategy.h)
 * with fits / does not fit and why, the chosen strategy, and the placement of every
 * component of a service on devices that other tenants share (vramkit/place.h). Plans are
 * saved and loaded as JSON; device settings come from the command line or the environment
 * (VRAMKIT_DEVICE, VRAMKIT_<COMPONENT>_DEVICE). */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <vramkit/place.h>
#include <vramkit/strategy.h>

#include "cli.h"
#include "cli_model.h"

/* The command named in error lines: "plan", or "try" while cli_plan_model_doc plans for it. */
static const char *plan_cmd = "plan";
#define CMD plan_cmd
#define PLAN_VERSION 1
#define MAX_COMPONENTS VRAM_PLACE_MAX

static void usage(FILE *out) {
    fprintf(out,
            "usage: vramkit plan (--model MODEL | --component NAME=MODEL[@DEVICE] ...)\n"
            "                    [workload options] [--assume-gpu SPEC]... [--host-memory SIZE]\n"
            "                    [--margin SIZE] [--save FILE] [--json]\n"
            "       vramkit plan --load FILE [--assume-gpu SPEC]... [--save FILE] [--json]\n"
            "\n"
            "Decides, before anything is loaded, how to load a model and where each component of\n"
            "a service lives. For --model: every load strategy in the order to try it -- 16-bit\n"
            "on one GPU (bf16 on compute capability >= 8.0, else fp16), int8, int4, 16-bit over\n"
            "several GPUs, 16-bit split by whole blocks between a GPU and the CPU (how many\n"
            "blocks fit on the GPU), CPU fp32 -- with its bytes per device, whether it fits and\n"
            "why, and the first that fits. For --component: each component placed on the GPU\n"
            "with the most room or on the CPU, beside what other processes already hold.\n"
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
            "                         fits, setting, setting_from, reason, reason_text}], and with\n"
            "                         --load, changes\n"
            "\n"
            "Sizes: bytes or with a unit (512MiB, 8GiB, 7.5GB).\n"
            "exit codes: 0 a strategy fits / every component is placed, 1 nothing fits / a\n"
            "            component is not placed, 2 bad usage or input, 3 environment error\n",
            MAX_COMPONENTS, cli_workload_help);
}

enum { OPT_MODEL = 1, OPT_COMPONENT, OPT_ASSUME_GPU, OPT_HOST, OPT_MARGIN, OPT_SAVE, OPT_LOAD, OPT_JSON };

static const struct option long_options[] = {
    CLI_WORKLOAD_LONG_OPTIONS,
    {"model", required_argument, NULL, OPT_MODEL},
    {"component", required_argument, NULL, OPT_COMPONENT},
    {"assume-gpu", required_argument, NULL, OPT_ASSUME_GPU},
    {"host-memory", required_argument, NULL, OPT_HOST},
    {"margin", required_argument, NULL, OPT_MARGIN},
    {"save", required_argument, NULL, OPT_SAVE},
    {"load", required_argument, NULL, OPT_LOAD},
    {"json", no_argument, NULL, OPT_JSON},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* One component (or the one --model, named "model"). */
typedef struct comp {
    char name[64];
    char model_arg[512];
    char setting_text[32]; /* as given ("" when inherited) */
    char setting_from[128]; /* "command line", "VRAMKIT_X_DEVICE", "VRAMKIT_DEVICE", "default" */
    vram_device_setting setting;
    cli_model m;
    vram_estimate gpu_est, cpu_est;
    vram_dtype gpu_format;
} comp;

typedef struct plan {
    int single; /* --model */
    int loaded; /* components came from --load */
    int ncomp;
    comp comps[MAX_COMPONENTS];
    vram_workload w;
    cli_gpu gpus[CLI_MAX_GPUS];
    int ngpu;
    int gpus_given;
    int gpus_detected;  /* read from this machine (cli_detect_gpus) */
    char no_gpu[128];   /* why there is no GPU, when there is none */
    uint64_t host;
    int host_given;
    uint64_t margin;
    int margin_given;
    char global_text[32];
    vram_device_setting global;
    vram_chain chain;
    vram_placement placed[MAX_COMPONENTS];
    vram_place_summary sum;
    vram_devices dev;
} plan;

/* ---- parsing ---------------------------------------------------------------------------- */

static int parse_setting(const char *what, const char *text, vram_device_setting *out) {
    if (vram_setting_parse(text, strlen(text), out) != VRAM_OK)
        return cli_usage_error(CMD, "%s: '%s' is not a device (auto, cpu, cuda, cuda:N)", what,
                               text);
    return 0;
}

static int add_component(plan *p, const char *spec) {
    const char *eq = strchr(spec, '='), *at;
    comp *c;
    size_t nlen;
    if (p->ncomp == MAX_COMPONENTS)
        return cli_usage_error(CMD, "--component: at most %d components", MAX_COMPONENTS);
    if (eq == NULL || eq == spec)
        return cli_usage_error(CMD, "--component: '%s' is not NAME=MODEL[@DEVICE]", spec);
    nlen = (size_t)(eq - spec);
    c = &p->comps[p->ncomp];
    memset(c, 0, sizeof *c);
    if (nlen >= sizeof c->name)
        return cli_usage_error(CMD, "--component: name in '%s' is longer than %zu bytes", spec,
                               sizeof c->name - 1);
    for (size_t i = 0; i < nlen; i++)
        if (!isalnum((unsigned char)spec[i]) && spec[i] != '-' && spec[i] != '_')
            return cli_usage_error(CMD,
                                   "--component: name '%.*s' may hold only letters, digits, "
                                   "'-' and '_'",
                                   (int)nlen, spec);
    memcpy(c->name, spec, nlen);
    for (int k = 0; k < p->ncomp; k++)
        if (strcmp(p->comps[k].name, c->name) == 0)
            return cli_usage_error(CMD, "--component: '%s' is given twice", c->name);
    at = strrchr(eq + 1, '@');
    if (at != NULL) {
        if ((size_t)(at - eq - 1) >= sizeof c->model_arg || at == eq + 1)
            return cli_usage_error(CMD, "--component: '%s' has no model before '@'", spec);
        memcpy(c->model_arg, eq + 1, (size_t)(at - eq - 1));
        if (strlen(at + 1) >= sizeof c->setting_text || at[1] == '\0')
            return cli_usage_error(CMD, "--component: '%s' has no device after '@'", spec);
        snprintf(c->setting_text, sizeof c->setting_text, "%s", at + 1);
    } else {
        if (strlen(eq + 1) >= sizeof c->model_arg || eq[1] == '\0')
            return cli_usage_error(CMD, "--component: '%s' has no model", spec);
        snprintf(c->model_arg, sizeof c->model_arg, "%s", eq + 1);
    }
    p->ncomp++;
    return 0;
}

/* Resolve each component's device setting: @DEVICE, else VRAMKIT_<NAME>_DEVICE, else the
 * global one (VRAMKIT_DEVICE, default auto). */
static int resolve_settings(plan *p) {
    const char *g = getenv("VRAMKIT_DEVICE");
    int rc;
    p->global.kind = VRAM_SETTING_AUTO;
    p->global.gpu = 0;
    snprintf(p->global_text, sizeof p->global_text, "auto");
    if (g != NULL && g[0] != '\0') {
        if ((rc = parse_setting("VRAMKIT_DEVICE", g, &p->global))) return rc;
        snprintf(p->global_text, sizeof p->global_text, "%.31s", g);
    }
    for (int i = 0; i < p->ncomp; i++) {
        comp *c = &p->comps[i];
        char env[96];
        const char *v;
        if (c->setting_text[0]) {
            char what[96];
            snprintf(what, sizeof what, "--component %s", c->name);
            if ((rc = parse_setting(what, c->setting_text, &c->setting))) return rc;
            snprintf(c->setting_from, sizeof c->setting_from, "%s",
                     p->loaded ? "saved plan" : "command line");
            continue;
        }
        snprintf(env, sizeof env, "VRAMKIT_%s_DEVICE", c->name);
        for (char *q = env; *q; q++) *q = *q == '-' ? '_' : (char)toupper((unsigned char)*q);
        v = p->single ? NULL : getenv(env);
        if (v != NULL && v[0] != '\0') {
            if ((rc = parse_setting(env, v, &c->setting))) return rc;
            snprintf(c->setting_text, sizeof c->setting_text, "%.31s", v);
            snprintf(c->setting_from, sizeof c->setting_from, "%s", env);
        } else {
            c->setting.kind = VRAM_SETTING_INHERIT;
            snprintf(c->setting_from, sizeof c->setting_from, "%s",
                     g != NULL && g[0] ? "VRAMKIT_DEVICE" : "default");
        }
    }
    return 0;
}

/* ---- saved plans ---------------------------------------------------------------------- */

static const char *optimizer_key(vram_optimizer o) {
    switch (o) {
    case VRAM_OPT_SGD_MOMENTUM: return "sgd-momentum";
    case VRAM_OPT_SGD: return "sgd";
    case VRAM_OPT_ADAM_8BIT: return "adam8bit";
    default: return "adamw";
    }
}

static void json_inputs(cli_json *j, const plan *p) {
    const vram_workload *w = &p->w;
    cli_json_key(j, "inputs");
    cli_json_begin_object(j);
    cli_json_key(j, p->single ? "model" : "components");
    if (p->single) {
        cli_json_string(j, p->comps[0].model_arg);
    } else {
        cli_json_begin_array(j);
        for (int i = 0; i < p->ncomp; i++) {
            cli_json_begin_object(j);
            cli_json_key(j, "name");
            cli_json_string(j, p->comps[i].name);
            cli_json_key(j, "model");
            cli_json_string(j, p->comps[i].model_arg);
            cli_json_key(j, "device");
            if (p->comps[i].setting_text[0])
                cli_json_string(j, p->comps[i].setting_text);
            else
                cli_json_null(j);
            cli_json_end_object(j);
        }
        cli_json_end_array(j);
        cli_json_key(j, "global_device");
        cli_json_string(j, p->global_text);
    }
    cli_json_key(j, "workload");
    cli_json_begin_object(j);
    cli_json_key(j, "mode");
    cli_json_string(j, w->mode == VRAM_MODE_TRAIN ? "train" : "infer");
    cli_json_key(j, "format");
    if (w->format != VRAM_DTYPE_NONE) cli_json_string(j, vram_dtype_name(w->format));
    else cli_json_null(j);
    cli_json_key(j, "compute");
    if (w->compute != VRAM_DTYPE_NONE) cli_json_string(j, vram_dtype_name(w->compute));
    else cli_json_null(j);
    cli_json_key(j, "batch");
    cli_json_u64(j, w->batch);
    cli_json_key(j, "seq");
    cli_json_u64(j, w->seq);
    cli_json_key(j, "src_len");
    cli_json_u64(j, w->src_len);
    cli_json_key(j, "tgt_len");
    cli_json_u64(j, w->tgt_len);
    cli_json_key(j, "optimizer");
    cli_json_string(j, optimizer_key(w->optimizer));
    cli_json_key(j, "checkpointing");
    cli_json_bool(j, w->checkpointing);
    cli_json_key(j, "flash_attention");
    cli_json_bool(j, w->flash_attention);
    cli_json_key(j, "grad_accum");
    cli_json_u64(j, w->grad_accum);
    cli_json_key(j, "lora_rank");
    cli_json_u64(j, w->lora_rank);
    cli_json_key(j, "lora_targets");
    cli_json_u64(j, w->lora_targets);
    cli_json_end_object(j);
    cli_json_key(j, "machine");
    cli_json_begin_object(j);
    cli_json_key(j, "gpus");
    cli_json_begin_array(j);
    for (int g = 0; g < p->ngpu; g++) {
        char cc[16];
        cli_json_begin_object(j);
        cli_json_key(j, "total_bytes");
        cli_json_u64(j, p->gpus[g].total);
        cli_json_key(j, "free_bytes");
        cli_json_u64(j, p->gpus[g].free);
        cli_json_key(j, "cc");
        snprintf(cc, sizeof cc, "%d.%d", p->gpus[g].cc_major, p->gpus[g].cc_minor);
        if (p->gpus[g].cc_major) cli_json_string(j, cc);
        else cli_json_null(j);
        cli_json_end_object(j);
    }
    cli_json_end_array(j);
    cli_json_key(j, "gpus_assumed");
    cli_json_bool(j, !p->gpus_detected);
    cli_json_key(j, "no_gpu_reason");
    if (p->ngpu == 0)
        cli_json_string(j, p->no_gpu);
    else
        cli_json_null(j);
    cli_json_key(j, "host_free_bytes");
    cli_json_u64(j, p->host);
    cli_json_key(j, "margin_bytes");
    cli_json_u64(j, vram_devices_margin(&p->dev));
    cli_json_end_object(j);
    cli_json_end_object(j);
}

/* Fill p from a saved plan's inputs; options given on this command line win (machine).
 * Returns 0 or an exit code. saved receives the document (caller frees). */
static int load_plan(plan *p, const char *path, cJSON **saved) {
    cJSON *doc, *in, *x;
    int rc = cli_read_json_file(CMD, "--load", path, (size_t)1 << 24, &doc);
    if (rc) return rc;
#define BAD(...)                                   \
    do {                                           \
        cJSON_Delete(doc);                         \
        return cli_usage_error(CMD, __VA_ARGS__);  \
    } while (0)
    x = cJSON_GetObjectItemCaseSensitive(doc, "version");
    if (!cJSON_IsNumber(x) || x->valuedouble != PLAN_VERSION)
        BAD("--load %s: not a vramkit plan of version %d", path, PLAN_VERSION);
    in = cJSON_GetObjectItemCaseSensitive(doc, "inputs");
    if (!cJSON_IsObject(in)) BAD("--load %s: no \"inputs\" object", path);
    x = cJSON_GetObjectItemCaseSensitive(in, "model");
    if (cJSON_IsString(x)) {
        p->single = 1;
        p->ncomp = 1;
        memset(&p->comps[0], 0, sizeof p->comps[0]);
        snprintf(p->comps[0].name, sizeof p->comps[0].name, "model");
        if (strlen(x->valuestring) >= sizeof p->comps[0].model_arg || !x->valuestring[0])
            BAD("--load %s: inputs.model is empty or too long", path);
        snprintf(p->comps[0].model_arg, sizeof p->comps[0].model_arg, "%s", x->valuestring);
    } else {
        const cJSON *c;
        x = cJSON_GetObjectItemCaseSensitive(in, "components");
        if (!cJSON_IsArray(x) || cJSON_GetArraySize(x) == 0)
            BAD("--load %s: inputs has neither \"model\" nor \"components\"", path);
        cJSON_ArrayForEach(c, x) {
            const cJSON *n = cJSON_GetObjectItemCaseSensitive(c, "name");
            const cJSON *mo = cJSON_GetObjectItemCaseSensitive(c, "model");
            const cJSON *dv = cJSON_GetObjectItemCaseSensitive(c, "device");
            char spec[700];
            int rc;
            if (!cJSON_IsString(n) || !cJSON_IsString(mo) || !(cJSON_IsString(dv) || cJSON_IsNull(dv)))
                BAD("--load %s: a component lacks name, model or device", path);
            if (strlen(n->valuestring) + strlen(mo->valuestring) + 40 > sizeof spec)
                BAD("--load %s: component '%s' is too long", path, n->valuestring);
            snprintf(spec, sizeof spec, "%s=%s%s%s", n->valuestring, mo->valuestring,
                     cJSON_IsString(dv) ? "@" : "", cJSON_IsString(dv) ? dv->valuestring : "");
            if ((rc = add_component(p, spec))) {
                cJSON_Delete(doc);
                return rc;
            }
        }
    }
    x = cJSON_GetObjectItemCaseSensitive(in, "workload");
    if (cJSON_IsObject(x)) {
        static const struct {
            const char *key;
            int code;
        } keys[] = {{"mode", CLI_WL_MODE},         {"format", CLI_WL_FORMAT},
                    {"compute", CLI_WL_COMPUTE},   {"batch", CLI_WL_BATCH},
                    {"seq", CLI_WL_SEQ},           {"src_len", CLI_WL_SRC},
                    {"tgt_len", CLI_WL_TGT},       {"optimizer", CLI_WL_OPTIMIZER},
                    {"grad_accum", CLI_WL_GRAD_ACCUM}, {"lora_rank", CLI_WL_LORA_RANK}};
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(x, keys[k].key);
            char num[32];
            int rc;
            if (v == NULL || cJSON_IsNull(v)) continue;
            if (cJSON_IsNumber(v)) {
                if (v->valuedouble == 0) continue; /* 0 = default */
                if (v->valuedouble < 0 || v->valuedouble > 1e15 ||
                    v->valuedouble != (double)(uint64_t)v->valuedouble)
                    BAD("--load %s: workload.%s is not a whole number", path, keys[k].key);
                snprintf(num, sizeof num, "%llu", (unsigned long long)v->valuedouble);
                rc = cli_workload_option(CMD, keys[k].code, num, &p->w);
            } else if (cJSON_IsString(v)) {
                rc = cli_workload_option(CMD, keys[k].code, v->valuestring, &p->w);
            } else {
                BAD("--load %s: workload.%s has the wrong type", path, keys[k].key);
            }
            if (rc) {
                cJSON_Delete(doc);
                return rc;
            }
        }
        p->w.checkpointing = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(x, "checkpointing"));
        p->w.flash_attention = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(x, "flash_attention"));
        const cJSON *lt = cJSON_GetObjectItemCaseSensitive(x, "lora_targets");
        if (cJSON_IsNumber(lt)) {
            if (lt->valuedouble < 0 || lt->valuedouble > VRAM_LORA_ALL ||
                lt->valuedouble != (double)(uint32_t)lt->valuedouble)
                BAD("--load %s: workload.lora_targets is out of range", path);
            p->w.lora_targets = (uint32_t)lt->valuedouble;
        }
    }
    x = cJSON_GetObjectItemCaseSensitive(in, "machine");
    if (cJSON_IsObject(x)) {
        const cJSON *gs = cJSON_GetObjectItemCaseSensitive(x, "gpus"), *g;
        const cJSON *hf = cJSON_GetObjectItemCaseSensitive(x, "host_free_bytes");
        const cJSON *mg = cJSON_GetObjectItemCaseSensitive(x, "margin_bytes");
        if (!p->gpus_given && cJSON_IsArray(gs)) {
            cJSON_ArrayForEach(g, gs) {
                const cJSON *t = cJSON_GetObjectItemCaseSensitive(g, "total_bytes");
                const cJSON *fr = cJSON_GetObjectItemCaseSensitive(g, "free_bytes");
                const cJSON *cc = cJSON_GetObjectItemCaseSensitive(g, "cc");
                cli_gpu *o;
                if (p->ngpu == CLI_MAX_GPUS) BAD("--load %s: more than %d GPUs", path, CLI_MAX_GPUS);
                if (!cJSON_IsNumber(t) || !cJSON_IsNumber(fr) || t->valuedouble <= 0 ||
                    fr->valuedouble < 0 || fr->valuedouble > t->valuedouble ||
                    t->valuedouble > 1.8e19)
                    BAD("--load %s: a GPU lacks sane total_bytes / free_bytes", path);
                o = &p->gpus[p->ngpu++];
                memset(o, 0, sizeof *o);
                o->total = (uint64_t)t->valuedouble;
                o->free = (uint64_t)fr->valuedouble;
                if (cJSON_IsString(cc)) {
                    unsigned a = 0, b = 0;
                    int nn = 0;
                    if (sscanf(cc->valuestring, "%2u.%1u%n", &a, &b, &nn) != 2 ||
                        cc->valuestring[nn] != '\0')
                        BAD("--load %s: a GPU's cc '%s' is not M.m", path, cc->valuestring);
                    o->cc_major = (int)a;
                    o->cc_minor = (int)b;
                }
            }
        }
        if (!p->host_given && cJSON_IsNumber(hf) && hf->valuedouble >= 0 && hf->valuedouble < 1.8e19) {
            p->host = (uint64_t)hf->valuedouble;
            p->host_given = 1;
        }
        if (!p->margin_given && cJSON_IsNumber(mg) && mg->valuedouble >= 0 && mg->valuedouble < 1.8e19) {
            p->margin = (uint64_t)mg->valuedouble;
            p->margin_given = 1;
        }
    }
#undef BAD
    *saved = doc;
    return 0;
}

/* Write text to path atomically (a temporary beside it, then rename). */
static int save_text(const char *path, const char *text) {
    char tmp[4096];
    FILE *f;
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof tmp)
        return cli_usage_error(CMD, "--save %s: path too long", path);
    f = fopen(tmp, "wb");
    if (f == NULL) return cli_error(VRAM_EXIT_ENV, CMD, "--save %s: %s", path, strerror(errno));
    if (fputs(text, f) == EOF || fclose(f) != 0) {
        unlink(tmp);
        return cli_error(VRAM_EXIT_ENV, CMD, "--save %s: write failed", path);
    }
    if (rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return cli_error(VRAM_EXIT_ENV, CMD, "--save %s: %s", path, strerror(e));
    }
    return 0;
}

/* ---- text of reasons -------------------------------------------------------------------- */

static void device_name(int d, char *buf, size_t cap) {
    if (d == VRAM_PLAN_CPU) snprintf(buf, cap, "the host");
    else if (d < 0) snprintf(buf, cap, "no device");
    else snprintf(buf, cap, "GPU %d", d);
}

/* Expand {needed} {available} {device} {status} {bytes} {short_by} {host_short_by}
 * {short_device} in a template. */
static void render(const char *tpl, uint64_t needed, uint64_t available, int device,
                   vram_status status, uint64_t bytes, uint64_t short_by, uint64_t host_short,
                   int short_device, char *out, size_t cap) {
    size_t n = 0;
    out[0] = '\0';
    while (*tpl && n + 1 < cap) {
        char piece[160];
        const char *close;
        if (*tpl == '{' && (close = strchr(tpl, '}')) != NULL) {
            size_t klen = (size_t)(close - tpl - 1);
            const char *k = tpl + 1;
            piece[0] = '\0';
            if (klen == 6 && !strncmp(k, "needed", 6)) cli_format_size(needed, piece, sizeof piece);
            else if (klen == 9 && !strncmp(k, "available", 9)) cli_format_size(available, piece, sizeof piece);
            else if (klen == 6 && !strncmp(k, "device", 6)) device_name(device, piece, sizeof piece);
            else if (klen == 6 && !strncmp(k, "status", 6)) snprintf(piece, sizeof piece, "%s", vram_status_str(status));
            else if (klen == 5 && !strncmp(k, "bytes", 5)) cli_format_size(bytes, piece, sizeof piece);
            else if (klen == 8 && !strncmp(k, "short_by", 8)) cli_format_size(short_by, piece, sizeof piece);
            else if (klen == 13 && !strncmp(k, "host_short_by", 13)) cli_format_size(host_short, piece, sizeof piece);
            else if (klen == 12 && !strncmp(k, "short_device", 12)) device_name(short_device, piece, sizeof piece);
            else snprintf(piece, sizeof piece, "%.*s", (int)klen + 2, tpl);
            n += (size_t)snprintf(out + n, cap - n, "%s", piece);
            if (n >= cap) n = cap - 1;
            tpl = close + 1;
        } else {
            out[n++] = *tpl++;
            out[n] = '\0';
        }
    }
}

static void cand_reason(const vram_candidate *c, char *buf, size_t cap) {
    render(vram_reason_text(c->reason), c->needed, c->available, c->reason_device, c->status, 0,
           0, 0, VRAM_PLAN_NONE, buf, cap);
}

static void place_reason(const vram_placement *pl, char *buf, size_t cap) {
    render(vram_place_reason_text(pl->reason), pl->needed, 0, pl->device, VRAM_OK, pl->bytes,
           pl->short_by, pl->host_short_by, pl->short_device, buf, cap);
}

static uint64_t cand_total(const vram_candidate *c) {
    uint64_t t = c->cpu_bytes;
    for (int g = 0; g < VRAM_PLAN_MAX_GPUS; g++) t += c->gpu_bytes[g];
    return t;
}

static const char *setting_text(vram_device_setting s, char *buf, size_t cap) {
    switch (s.kind) {
    case VRAM_SETTING_CPU: snprintf(buf, cap, "cpu"); break;
    case VRAM_SETTING_GPU: snprintf(buf, cap, "cuda:%d", s.gpu); break;
    case VRAM_SETTING_AUTO: snprintf(buf, cap, "auto"); break;
    default: snprintf(buf, cap, "inherit"); break;
    }
    return buf;
}

/* ---- the plan -------------------------------------------------------------------------- */

/* The name of a component's GPU format as the strategies call it: fp16, bf16, int8, ... */
static const char *gpu_strategy_name(vram_dtype t) {
    if (t == VRAM_DTYPE_F16) return "fp16";
    if (t == VRAM_DTYPE_NF4) return "int4";
    return vram_dtype_name(t);
}

static int build_devices(plan *p) {
    if (p->ngpu == 0 && !p->gpus_given && !p->loaded) {
        p->ngpu = cli_detect_gpus(p->gpus, CLI_MAX_GPUS, p->no_gpu, sizeof p->no_gpu);
        p->gpus_detected = p->ngpu > 0;
    } else if (p->ngpu == 0) {
        snprintf(p->no_gpu, sizeof p->no_gpu, "%s",
                 p->loaded ? "none in the saved plan" : "none given");
    }
    memset(&p->dev, 0, sizeof p->dev);
    p->dev.gpus = p->ngpu;
    for (int g = 0; g < p->ngpu; g++) {
        p->dev.gpu[g].total = p->gpus[g].total;
        p->dev.gpu[g].free = p->gpus[g].free;
        p->dev.gpu[g].cc_major = p->gpus[g].cc_major;
        p->dev.gpu[g].cc_minor = p->gpus[g].cc_minor;
    }
    p->dev.host_free = p->host_given ? p->host : cli_host_available();
    p->host = p->dev.host_free;
    p->dev.margin = p->margin_given ? (p->margin == 0 ? 1u : p->margin) : 0u;
    if (vram_devices_check(&p->dev) != VRAM_OK)
        return cli_usage_error(CMD, "the machine described is not valid");
    return 0;
}

/* Estimate a component on a GPU (16-bit unless --format says otherwise; bf16 when every
 * GPU is cc >= 8.0) and on the CPU (fp32). */
static int estimate_component(plan *p, comp *c) {
    vram_workload gw = p->w, cw = p->w;
    vram_status st;
    int bf16 = p->ngpu > 0;
    for (int g = 0; g < p->ngpu; g++) bf16 = bf16 && p->gpus[g].cc_major >= 8;
    if (gw.format == VRAM_DTYPE_NONE) gw.format = bf16 ? VRAM_DTYPE_BF16 : VRAM_DTYPE_F16;
    gw.cpu = 0;
    c->gpu_format = gw.format;
    st = vram_estimate_model(&c->m.model, &gw, &c->gpu_est);
    if (st != VRAM_OK)
        return cli_usage_error(CMD, "component %s (%s): cannot estimate with %s weights: %s",
                               c->name, c->m.label, vram_dtype_name(gw.format),
                               st == VRAM_E_INVALID && gw.mode == VRAM_MODE_TRAIN && !gw.lora_rank
                                   ? "quantised weights need --lora-rank to train"
                                   : vram_status_str(st));
    cw.format = VRAM_DTYPE_F32;
    cw.compute = VRAM_DTYPE_NONE;
    cw.cpu = 1;
    st = vram_estimate_model(&c->m.model, &cw, &c->cpu_est);
    if (st != VRAM_OK)
        return cli_usage_error(CMD, "component %s (%s): cannot estimate on the CPU: %s", c->name,
                               c->m.label, vram_status_str(st));
    return 0;
}

static int run_plan(plan *p) {
    int rc;
    vram_component vc[MAX_COMPONENTS];
    if ((rc = build_devices(p))) return rc;
    if ((rc = resolve_settings(p))) return rc;
    for (int i = 0; i < p->ncomp; i++)
        if ((rc = cli_model_resolve(CMD, p->comps[i].model_arg, &p->comps[i].m))) return rc;
    if (p->single) {
        vram_status st = vram_strategy_chain(&p->comps[0].m.model, &p->w, &p->dev, &p->chain);
        if (st != VRAM_OK)
            return cli_usage_error(CMD, "%s: cannot plan: %s%s", p->comps[0].m.label,
                                   vram_status_str(st),
                                   p->w.lora_rank && p->w.mode != VRAM_MODE_TRAIN
                                       ? " (LoRA is for training: --mode train)"
                                       : "");
    }
    for (int i = 0; i < p->ncomp; i++) {
        comp *c = &p->comps[i];
        if (p->single) {
            /* the placement of a single model follows its chosen strategy */
            continue;
        }
        if ((rc = estimate_component(p, c))) return rc;
        if (vram_component_from_estimates(&c->gpu_est, &c->cpu_est, &vc[i]) != VRAM_OK)
            return cli_usage_error(CMD, "component %s: bad estimate", c->name);
        vc[i].setting = c->setting;
    }
    if (!p->single) {
        vram_status st = vram_place(&p->dev, p->global, 0, vc, (size_t)p->ncomp, p->placed, &p->sum);
        if (st != VRAM_OK)
            return cli_usage_error(CMD, "cannot place the components: %s", vram_status_str(st));
    }
    return 0;
}

/* ---- output ----------------------------------------------------------------------------- */

static void write_json(cli_json *j, const plan *p, const cJSON *saved) {
    char buf[512], sb[32];
    cli_json_begin_object(j);
    cli_json_key(j, "version");
    cli_json_u64(j, PLAN_VERSION);
    json_inputs(j, p);
    cli_json_key(j, "strategies");
    cli_json_begin_array(j);
    if (p->single) {
        for (int i = 0; i < p->chain.count; i++) {
            const vram_candidate *c = &p->chain.cand[i];
            cli_json_begin_object(j);
            cli_json_key(j, "name");
            cli_json_string(j, c->name);
            cli_json_key(j, "format");
            cli_json_string(j, vram_dtype_name(c->format));
            cli_json_key(j, "devices");
            cli_json_begin_array(j);
            for (int g = 0; g < VRAM_PLAN_MAX_GPUS; g++)
                if (c->gpu_mask & (1u << g)) {
                    snprintf(sb, sizeof sb, "gpu%d", g);
                    cli_json_string(j, sb);
                }
            if (c->cpu_bytes) cli_json_string(j, "cpu");
            cli_json_end_array(j);
            cli_json_key(j, "bytes");
            cli_json_u64(j, cand_total(c));
            cli_json_key(j, "per_device");
            cli_json_begin_array(j);
            for (int g = 0; g < VRAM_PLAN_MAX_GPUS; g++)
                if (c->gpu_mask & (1u << g)) {
                    cli_json_begin_object(j);
                    snprintf(sb, sizeof sb, "gpu%d", g);
                    cli_json_key(j, "device");
                    cli_json_string(j, sb);
                    cli_json_key(j, "bytes");
                    cli_json_u64(j, c->gpu_bytes[g]);
                    cli_json_key(j, "blocks");
                    cli_json_u64(j, c->gpu_blocks[g]);
                    cli_json_end_object(j);
                }
            if (c->cpu_bytes) {
                cli_json_begin_object(j);
                cli_json_key(j, "device");
                cli_json_string(j, "cpu");
                cli_json_key(j, "bytes");
                cli_json_u64(j, c->cpu_bytes);
                cli_json_key(j, "blocks");
                cli_json_u64(j, c->cpu_blocks);
                cli_json_end_object(j);
            }
            cli_json_end_array(j);
            cli_json_key(j, "fits");
            cli_json_bool(j, c->fits);
            cli_json_key(j, "reason");
            cli_json_string(j, vram_reason_name(c->reason));
            cand_reason(c, buf, sizeof buf);
            cli_json_key(j, "reason_text");
            cli_json_string(j, buf);
            cli_json_end_object(j);
        }
    }
    cli_json_end_array(j);
    cli_json_key(j, "chosen");
    if (p->single && p->chain.chosen >= 0)
        cli_json_string(j, p->chain.cand[p->chain.chosen].name);
    else if (p->single)
        cli_json_null(j);
    else
        cli_json_bool(j, p->sum.all_fit);
    cli_json_key(j, "placement");
    cli_json_begin_array(j);
    if (p->single) {
        if (p->chain.chosen >= 0) {
            const vram_candidate *c = &p->chain.cand[p->chain.chosen];
            for (int g = 0; g < VRAM_PLAN_MAX_GPUS; g++)
                if (c->gpu_mask & (1u << g)) {
                    cli_json_begin_object(j);
                    cli_json_key(j, "component");
                    cli_json_string(j, "model");
                    cli_json_key(j, "model");
                    cli_json_string(j, p->comps[0].m.label);
                    snprintf(sb, sizeof sb, "gpu%d", g);
                    cli_json_key(j, "device");
                    cli_json_string(j, sb);
                    cli_json_key(j, "strategy");
                    cli_json_string(j, c->name);
                    cli_json_key(j, "bytes");
                    cli_json_u64(j, c->gpu_bytes[g]);
                    cli_json_key(j, "fits");
                    cli_json_bool(j, 1);
                    cli_json_end_object(j);
                }
            if (c->cpu_bytes) {
                cli_json_begin_object(j);
                cli_json_key(j, "component");
                cli_json_string(j, "model");
                cli_json_key(j, "model");
                cli_json_string(j, p->comps[0].m.label);
                cli_json_key(j, "device");
                cli_json_string(j, "cpu");
                cli_json_key(j, "strategy");
                cli_json_string(j, c->name);
                cli_json_key(j, "bytes");
                cli_json_u64(j, c->cpu_bytes);
                cli_json_key(j, "fits");
                cli_json_bool(j, 1);
                cli_json_end_object(j);
            }
        }
    } else {
        for (int i = 0; i < p->ncomp; i++) {
            const comp *c = &p->comps[i];
            const vram_placement *pl = &p->placed[i];
            cli_json_begin_object(j);
            cli_json_key(j, "component");
            cli_json_string(j, c->name);
            cli_json_key(j, "model");
            cli_json_string(j, c->m.label);
            cli_json_key(j, "device");
            if (pl->device == VRAM_PLAN_CPU) {
                cli_json_string(j, "cpu");
            } else if (pl->device >= 0) {
                snprintf(sb, sizeof sb, "gpu%d", pl->device);
                cli_json_string(j, sb);
            } else {
                cli_json_null(j);
            }
            cli_json_key(j, "strategy");
            cli_json_string(j, pl->device == VRAM_PLAN_CPU ? "cpu" : gpu_strategy_name(c->gpu_format));
            cli_json_key(j, "bytes");
            cli_json_u64(j, pl->bytes);
            cli_json_key(j, "fits");
            cli_json_bool(j, pl->fits);
            cli_json_key(j, "setting");
            cli_json_string(j, setting_text(pl->setting, sb, sizeof sb));
            cli_json_key(j, "setting_from");
            cli_json_string(j, c->setting_from);
            cli_json_key(j, "short_by_bytes");
            cli_json_u64(j, pl->short_by ? pl->short_by : pl->host_short_by);
            cli_json_key(j, "reason");
            cli_json_string(j, vram_place_reason_name(pl->reason));
            place_reason(pl, buf, sizeof buf);
            cli_json_key(j, "reason_text");
            cli_json_string(j, buf);
            cli_json_end_object(j);
        }
    }
    cli_json_end_array(j);
    if (saved != NULL) {
        /* what changed since the plan was saved: the chosen strategy and each placement */
        const cJSON *sc = cJSON_GetObjectItemCaseSensitive(saved, "chosen");
        const cJSON *sp = cJSON_GetObjectItemCaseSensitive(saved, "placement"), *e;
        cli_json_key(j, "changes");
        cli_json_begin_array(j);
        if (p->single) {
            const char *now = p->chain.chosen >= 0 ? p->chain.cand[p->chain.chosen].name : NULL;
            const char *then = cJSON_IsString(sc) ? sc->valuestring : NULL;
            if ((now == NULL) != (then == NULL) || (now && then && strcmp(now, then) != 0)) {
                snprintf(buf, sizeof buf, "chosen: %s -> %s", then ? then : "none", now ? now : "none");
                cli_json_string(j, buf);
            }
        } else {
            cJSON_ArrayForEach(e, sp) {
                const cJSON *cn = cJSON_GetObjectItemCaseSensitive(e, "component");
                const cJSON *dv = cJSON_GetObjectItemCaseSensitive(e, "device");
                const cJSON *ft = cJSON_GetObjectItemCaseSensitive(e, "fits");
                if (!cJSON_IsString(cn)) continue;
                for (int i = 0; i < p->ncomp; i++) {
                    char now[32];
                    const vram_placement *pl = &p->placed[i];
                    if (strcmp(p->comps[i].name, cn->valuestring) != 0) continue;
                    if (pl->device == VRAM_PLAN_CPU) snprintf(now, sizeof now, "cpu");
                    else if (pl->device >= 0) snprintf(now, sizeof now, "gpu%d", pl->device);
                    else snprintf(now, sizeof now, "none");
                    const char *then = cJSON_IsString(dv) ? dv->valuestring : "none";
                    int then_fits = cJSON_IsTrue(ft);
                    if (strcmp(now, then) != 0 || then_fits != pl->fits) {
                        snprintf(buf, sizeof buf, "%s: %s%s -> %s%s", p->comps[i].name, then,
                                 then_fits ? "" : " (not placed)", now,
                                 pl->fits ? "" : " (not placed)");
                        cli_json_string(j, buf);
                    }
                }
            }
        }
        cli_json_end_array(j);
    }
    cli_json_end_object(j);
}

static void print_text(FILE *out, const plan *p, const cJSON *doc_now, const cJSON *saved) {
    char a[32], b[32], buf[512], wl[512];
    if (p->ngpu == 0)
        fprintf(out, "machine: no GPU (%s; --assume-gpu SPEC plans for one); host %s free\n",
                p->no_gpu, p->host ? cli_format_size(p->host, a, sizeof a) : "unknown");
    for (int g = 0; g < p->ngpu; g++) {
        fprintf(out, "GPU %d%s: %s, %s free", g, p->gpus_detected ? "" : " (assumed)",
                cli_format_size(p->gpus[g].total, a, sizeof a),
                cli_format_size(p->gpus[g].free, b, sizeof b));
        if (p->gpus[g].cc_major) fprintf(out, ", cc %d.%d", p->gpus[g].cc_major, p->gpus[g].cc_minor);
        fprintf(out, "\n");
    }
    if (p->ngpu)
        fprintf(out, "host: %s free; margin %s per device\n",
                p->host ? cli_format_size(p->host, a, sizeof a) : "unknown",
                cli_format_size(vram_devices_margin(&p->dev), b, sizeof b));
    if (p->single) {
        const comp *c = &p->comps[0];
        const vram_candidate *any = &p->chain.cand[VRAM_STRATEGY_CPU];
        fprintf(out, "model: %s (%s%s%s), %.2fM parameters\n", c->m.label, c->m.source,
                c->m.hf_id[0] ? ", " : "", c->m.hf_id, (double)any->estimate.params / 1e6);
        cli_workload_text(&c->m.model, &p->w, &p->chain.cand[0].estimate, wl, sizeof wl);
        fprintf(out, "workload: %s\n\nstrategies, in the order to try them:\n", wl);
        for (int i = 0; i < p->chain.count; i++) {
            const vram_candidate *k = &p->chain.cand[i];
            char where[256] = "";
            size_t n = 0;
            for (int g = 0; g < VRAM_PLAN_MAX_GPUS && n < sizeof where; g++)
                if (k->gpu_mask & (1u << g)) {
                    n += (size_t)snprintf(where + n, sizeof where - n, "%sGPU %d %s", n ? " + " : "",
                                          g, cli_format_size(k->gpu_bytes[g], a, sizeof a));
                    if (k->kind == VRAM_STRATEGY_MULTI_GPU || k->kind == VRAM_STRATEGY_GPU_CPU)
                        n += (size_t)snprintf(where + n, sizeof where - n, " (%llu blocks)",
                                              (unsigned long long)k->gpu_blocks[g]);
                }
            if (k->cpu_bytes && n < sizeof where) {
                n += (size_t)snprintf(where + n, sizeof where - n, "%sCPU %s", n ? " + " : "",
                                      cli_format_size(k->cpu_bytes, a, sizeof a));
                if (k->kind == VRAM_STRATEGY_GPU_CPU && n < sizeof where)
                    snprintf(where + n, sizeof where - n, " (%llu blocks)",
                             (unsigned long long)k->cpu_blocks);
            }
            cand_reason(k, buf, sizeof buf);
            fprintf(out, "  %d. %-9s %-4s %s\n     %s\n", i + 1, k->name,
                    k->fits ? "yes" : "no", where[0] ? where : "-", buf);
        }
        if (p->chain.chosen >= 0)
            fprintf(out, "\nchosen: %s\n", p->chain.cand[p->chain.chosen].name);
        else
            fprintf(out, "\nchosen: none fits\n");
    } else {
        fprintf(out, "global device setting: %s\n\nplacement:\n", p->global_text);
        for (int i = 0; i < p->ncomp; i++) {
            const comp *c = &p->comps[i];
            const vram_placement *pl = &p->placed[i];
            char st[32];
            place_reason(pl, buf, sizeof buf);
            fprintf(out, "  %-16s %-26s %-4s %s (%s, setting %s from %s)\n", c->name, c->m.label,
                    pl->fits ? "yes" : "no", buf,
                    pl->device == VRAM_PLAN_CPU ? "cpu fp32" : gpu_strategy_name(c->gpu_format),
                    setting_text(pl->setting, st, sizeof st), c->setting_from);
        }
        for (int g = 0; g < p->sum.gpus; g++)
            fprintf(out, "GPU %d: %s used of %s (%d components)\n", g,
                    cli_format_size(p->sum.gpu[g].used, a, sizeof a),
                    cli_format_size(p->sum.gpu[g].budget, b, sizeof b), p->sum.gpu[g].components);
        fprintf(out, "%s\n", p->sum.all_fit ? "every component is placed"
                                            : "not every component could be placed");
    }
    if (saved != NULL) {
        const cJSON *ch = cJSON_GetObjectItemCaseSensitive(doc_now, "changes"), *e;
        if (cJSON_GetArraySize(ch) == 0)
            fprintf(out, "unchanged since the plan was saved\n");
        cJSON_ArrayForEach(e, ch) fprintf(out, "changed since saved: %s\n", e->valuestring);
    }
}

int cmd_plan(int argc, char **argv) {
    plan *p = calloc(1, sizeof *p);
    const char *save = NULL, *load = NULL;
    int json = 0, c, rc = 0;
    cJSON *saved = NULL, *now = NULL;
    char *text = NULL;
    size_t tlen = 0;
    FILE *mem = NULL;
    if (p == NULL) return cli_error(VRAM_EXIT_ENV, CMD, "out of memory");
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", long_options, NULL)) != -1) {
        switch (c) {
        case 'h':
            usage(stdout);
            goto out;
        case OPT_MODEL:
            if (p->single) { rc = cli_usage_error(CMD, "--model: one model only"); goto out; }
            if (p->ncomp > 0) { rc = cli_usage_error(CMD, "--model and --component do not mix"); goto out; }
            if (!optarg[0] || strlen(optarg) >= sizeof p->comps[0].model_arg) {
                rc = cli_usage_error(CMD, "--model: '%s' is empty or too long", optarg);
                goto out;
            }
            p->single = 1;
            p->ncomp = 1;
            snprintf(p->comps[0].name, sizeof p->comps[0].name, "model");
            snprintf(p->comps[0].model_arg, sizeof p->comps[0].model_arg, "%s", optarg);
            break;
        case OPT_COMPONENT:
            if (p->single) { rc = cli_usage_error(CMD, "--model and --component do not mix"); goto out; }
            if ((rc = add_component(p, optarg))) goto out;
            break;
        case OPT_ASSUME_GPU:
            if (p->ngpu == CLI_MAX_GPUS) { rc = cli_usage_error(CMD, "--assume-gpu: at most %d GPUs", CLI_MAX_GPUS); goto out; }
            if ((rc = cli_parse_gpu_spec(CMD, optarg, &p->gpus[p->ngpu]))) goto out;
            p->ngpu++;
            p->gpus_given = 1;
            break;
        case OPT_HOST:
            if (cli_parse_size(optarg, &p->host) != 0 || p->host == 0) {
                rc = cli_usage_error(CMD, "--host-memory: '%s' is not a size above 0", optarg);
                goto out;
            }
            p->host_given = 1;
            break;
        case OPT_MARGIN:
            if (cli_parse_size(optarg, &p->margin) != 0) { rc = cli_usage_error(CMD, "--margin: '%s' is not a size", optarg); goto out; }
            p->margin_given = 1;
            break;
        case OPT_SAVE: save = optarg; break;
        case OPT_LOAD: load = optarg; break;
        case OPT_JSON: json = 1; break;
        case ':':
            rc = cli_usage_error(CMD, "%s needs a value", argv[optind - 1]);
            goto out;
        case '?':
            rc = cli_usage_error(CMD, "unknown option '%s' (see vramkit plan --help)", argv[optind - 1]);
            goto out;
        default:
            if (c >= CLI_WL_BASE && c < CLI_WL_END) {
                if ((rc = cli_workload_option(CMD, c, optarg, &p->w))) goto out;
                break;
            }
            rc = cli_usage_error(CMD, "unknown option");
            goto out;
        }
    }
    if (optind < argc) { rc = cli_usage_error(CMD, "unexpected argument '%s'", argv[optind]); goto out; }
    if (load != NULL) {
        if (p->ncomp > 0) { rc = cli_usage_error(CMD, "--load takes its models from the plan; drop --model/--component"); goto out; }
        if ((rc = load_plan(p, load, &saved))) goto out;
        p->loaded = 1;
    } else if (p->ncomp == 0) {
        rc = cli_usage_error(CMD, "give --model MODEL or --component NAME=MODEL (see vramkit plan --help)");
        goto out;
    }
    if ((rc = run_plan(p))) goto out;

    /* the JSON document is built once: printed, saved, and compared */
    mem = open_memstream(&text, &tlen);
    if (mem == NULL) { rc = cli_error(VRAM_EXIT_ENV, CMD, "out of memory"); goto out; }
    {
        cli_json j;
        cli_json_init(&j, mem);
        write_json(&j, p, saved);
        cli_json_finish(&j);
    }
    if (fclose(mem) != 0) { mem = NULL; rc = cli_error(VRAM_EXIT_ENV, CMD, "out of memory"); goto out; }
    mem = NULL;
    now = cJSON_Parse(text);
    if (save != NULL && (rc = save_text(save, text))) goto out;
    if (json)
        fputs(text, stdout);
    else
        print_text(stdout, p, now, saved);
    rc = p->single ? (p->chain.chosen >= 0 ? VRAM_EXIT_OK : VRAM_EXIT_NO)
                   : (p->sum.all_fit ? VRAM_EXIT_OK : VRAM_EXIT_NO);
out:
    if (mem) fclose(mem);
    free(text);
    cJSON_Delete(saved);
    cJSON_Delete(now);
    free(p);
    return rc;
}

/* The plan of one model on the given GPUs (none: no GPU) with the default workload, as the
 * JSON document `vramkit plan --model MODEL --save FILE` writes. For `vramkit try --model`. */
int cli_plan_model_doc(const char *model, const cli_gpu *gpus, int ngpu, cJSON **doc) {
    plan *p = calloc(1, sizeof *p);
    char *text = NULL;
    size_t tlen = 0;
    FILE *mem;
    int rc;
    *doc = NULL;
    if (p == NULL) return cli_error(VRAM_EXIT_ENV, CMD, "out of memory");
    if (model[0] == '\0' || strlen(model) >= sizeof p->comps[0].model_arg || ngpu < 0 ||
        ngpu > CLI_MAX_GPUS) {
        free(p);
        return cli_usage_error("try", "--model: '%s' is empty or too long", model);
    }
    plan_cmd = "try";
    p->single = 1;
    p->ncomp = 1;
    snprintf(p->comps[0].name, sizeof p->comps[0].name, "model");
    snprintf(p->comps[0].model_arg, sizeof p->comps[0].model_arg, "%s", model);
    for (int g = 0; g < ngpu; g++) p->gpus[g] = gpus[g];
    p->ngpu = ngpu;
    p->gpus_given = ngpu > 0;
    if ((rc = run_plan(p)) == 0) {
        mem = open_memstream(&text, &tlen);
        if (mem == NULL) {
            rc = cli_error(VRAM_EXIT_ENV, CMD, "out of memory");
        } else {
            cli_json j;
            cli_json_init(&j, mem);
            write_json(&j, p, NULL);
            cli_json_finish(&j);
            if (fclose(mem) != 0 || (*doc = cJSON_Parse(text)) == NULL)
                rc = cli_error(VRAM_EXIT_ENV, CMD, "out of memory");
        }
    }
    free(text);
    free(p);
    plan_cmd = "plan";
    return rc;
}
