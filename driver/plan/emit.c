/* driver/plan/emit.c — see emit.h. Option names as the tools document them (the table in
 * test/interop/test_emit_flags.py says from which version). */
#include "emit.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/json.h"
#include "models/model_names.h"
#include "util/text.h"

const char vram_emit_format_names[] = "accelerate, llama.cpp, vllm, env";

const char *vram_emit_format_name(vram_emit_format f) {
    switch (f) {
#define VRAM__EMIT_NAME(id, name) \
    case id:                      \
        return name;
        VRAM_EMIT_FORMAT_LIST(VRAM__EMIT_NAME)
#undef VRAM__EMIT_NAME
    default:
        return "unknown";
    }
}

vram_status vram_emit_format_parse(const char *text, vram_emit_format *out) {
    for (int f = 0; f < VRAM_EMIT_FORMATS; f++)
        if (strcmp(text, vram_emit_format_name((vram_emit_format)f)) == 0) {
            *out = (vram_emit_format)f;
            return VRAM_OK;
        }
    return VRAM_E_INVALID;
}

/* ---- which strategy ----------------------------------------------------------------- */

vram_status vram_emit_pick(const vram_plan *p, const char *strategy, const vram_candidate **out,
                           char *err, size_t cap) {
    char names[256] = "", why[512];
    size_t n = 0;
    *out = NULL;
    if (!p->single) {
        if (strategy != NULL)
            return vram_errorf(err, cap, VRAM_E_INVALID,
                               "--strategy %s: a plan of components has no strategies to choose "
                               "from (they are for --model)",
                               strategy);
        return VRAM_OK;
    }
    if (strategy == NULL) {
        if (p->chain.chosen < 0)
            return vram_errorf(err, cap, VRAM_E_INVALID,
                               "--emit: no strategy fits %s, so there is nothing to emit",
                               p->comps[0].m.label);
        *out = &p->chain.cand[p->chain.chosen];
        return VRAM_OK;
    }
    for (int i = 0; i < p->chain.count; i++) {
        const vram_candidate *k = &p->chain.cand[i];
        if (strcmp(k->name, strategy) == 0 || strcmp(vram_strategy_name(k->kind), strategy) == 0) {
            if (!k->fits)
                return vram_errorf(err, cap, VRAM_E_INVALID,
                                   "--strategy %s does not fit, so there is nothing to emit: %s",
                                   strategy, vram_plan_candidate_text(k, why, sizeof why));
            *out = k;
            return VRAM_OK;
        }
        if (n < sizeof names)
            n += (size_t)snprintf(names + n, sizeof names - n, "%s%s", i ? ", " : "", k->name);
    }
    return vram_errorf(err, cap, VRAM_E_INVALID,
                       "--strategy: '%s' is not a strategy of this plan (%s)", strategy, names);
}

/* ---- the machine ---------------------------------------------------------------------- */

uint32_t vram_emit_gpus(const vram_plan *p, const vram_candidate *c) {
    uint32_t mask = 0;
    if (c != NULL) return c->gpu_mask;
    for (int i = 0; i < p->ncomp; i++)
        if (p->placed[i].fits && p->placed[i].device >= 0 && p->placed[i].device < VRAM_PLAN_MAX_GPUS)
            mask |= 1u << p->placed[i].device;
    return mask;
}

/* ---- helpers -------------------------------------------------------------------------- */

#define FAIL(...) return vram_errorf(err, cap, VRAM_E_INVALID, __VA_ARGS__)

/* Notes: appended one a line, cut at the buffer's end. */
static void note(char *notes, size_t ncap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void note(char *notes, size_t ncap, const char *fmt, ...) {
    size_t n = strlen(notes);
    va_list ap;
    if (n + 2 >= ncap) return;
    va_start(ap, fmt);
    vsnprintf(notes + n, ncap - n - 1, fmt, ap);
    va_end(ap);
    n = strlen(notes);
    notes[n] = '\n';
    notes[n + 1] = '\0';
}

static const char *torch_dtype(vram_dtype t) {
    switch (t) {
    case VRAM_DTYPE_BF16: return "bfloat16";
    case VRAM_DTYPE_F16: return "float16";
    default: return "float32";
    }
}

/* The tokens the plan sized: the estimate's resolved sequence and batch. */
static vram_status context_of(const vram_candidate *c, uint64_t *seq, uint64_t *batch) {
    *seq = c->estimate.seq;
    *batch = c->estimate.batch ? c->estimate.batch : 1u;
    return *seq == 0 ? VRAM_E_INVALID : VRAM_OK;
}

/* ---- llama.cpp ------------------------------------------------------------------------ */

static vram_status emit_llamacpp(FILE *out, const vram_plan *p, const vram_candidate *c,
                                 char *notes, size_t ncap, char *err, size_t cap) {
    const vram_model *m = &p->comps[0].m.model;
    uint64_t ngl, seq, batch, ctx;
    vram_status st;
    if (c == NULL) FAIL("--emit llama.cpp: a plan of components has no one model to run; plan each with --model");
    if (p->w.mode == VRAM_MODE_TRAIN) FAIL("--emit llama.cpp: llama.cpp runs inference; this plan is for training");
    if (m->arch.family == VRAM_FAMILY_ENCODER_DECODER)
        FAIL("--emit llama.cpp: %s is an encoder-decoder; its plan splits blocks over two stacks, "
             "which -ngl (one stack of layers) cannot express",
             p->comps[0].m.label);
    switch (c->kind) {
    case VRAM_STRATEGY_16BIT:
    case VRAM_STRATEGY_INT8:
    case VRAM_STRATEGY_INT4:
    case VRAM_STRATEGY_MULTI_GPU:
    case VRAM_STRATEGY_GPU_CPU:
    case VRAM_STRATEGY_CPU:
    case VRAM_STRATEGY_EXPERTS_CPU: break;
    default: FAIL("--emit llama.cpp: strategy %s has no llama.cpp form", c->name);
    }
    st = vram_emit_gpu_layers(c, &ngl);
    if (st == VRAM_E_UNHANDLED)
        FAIL("--emit llama.cpp: the block count of %s is unknown, so the layers on the GPU (-ngl) "
             "cannot be said",
             p->comps[0].m.label);
    if (st != VRAM_OK) FAIL("--emit llama.cpp: %s", vram_status_str(st));
    if (context_of(c, &seq, &batch) != VRAM_OK || vram__mul_u64(seq, batch, &ctx) != VRAM_OK)
        FAIL("--emit llama.cpp: the plan sized no context");
    fprintf(out, "-ngl %llu -c %llu", (unsigned long long)ngl, (unsigned long long)ctx);
    if (batch > 1) fprintf(out, " -np %llu", (unsigned long long)batch); /* -c is shared by the slots */
    if (c->kind == VRAM_STRATEGY_MULTI_GPU) {
        int last = 0;
        for (int g = 0; g < VRAM_PLAN_MAX_GPUS; g++)
            if (c->gpu_mask & (1u << g)) last = g;
        fprintf(out, " --split-mode layer --tensor-split ");
        for (int g = 0; g <= last; g++)
            fprintf(out, "%s%llu", g ? "," : "", (unsigned long long)c->gpu_blocks[g]);
        note(notes, ncap,
             "llama.cpp keeps the output layer with the last layers; the plan counted it on GPU %d",
             c->device);
    } else if (c->kind != VRAM_STRATEGY_CPU && p->mach.ngpu > 1) {
        fprintf(out, " --split-mode none --main-gpu %d", c->device); /* else it spreads layers */
    }
    if (c->kind == VRAM_STRATEGY_EXPERTS_CPU) fprintf(out, " --cpu-moe"); /* routed experts on the host */
    fprintf(out, "\n");
    switch (c->kind) {
    case VRAM_STRATEGY_INT8:
        note(notes, ncap, "llama.cpp does not quantise at load: the plan sized 8-bit weights, so "
                          "give it a GGUF of about 8 bits a weight (Q8_0)");
        break;
    case VRAM_STRATEGY_INT4:
        note(notes, ncap, "llama.cpp does not quantise at load: the plan sized 4-bit weights (NF4), "
                          "so give it a GGUF of about 4.5 bits a weight (Q4_0, Q4_K_M)");
        break;
    case VRAM_STRATEGY_GPU_CPU:
        if (c->cpu_blocks == 0) break; /* every block on the GPU: as a single-GPU strategy */
        note(notes, ncap,
             "llama.cpp keeps the output layer on the host while blocks are there; the plan "
             "counted it on GPU %d",
             c->device);
        break;
    case VRAM_STRATEGY_CPU:
        note(notes, ncap, "llama.cpp computes in the GGUF's own format; the plan sized fp32 weights");
        break;
    case VRAM_STRATEGY_EXPERTS_CPU:
        note(notes, ncap, "builds without --cpu-moe take --override-tensor '\\.ffn_.*_exps\\.=CPU' "
                          "(the routed experts' tensors on the host)");
        break;
    default: break;
    }
    return VRAM_OK;
}

/* ---- vLLM ----------------------------------------------------------------------------- */

static vram_status emit_vllm(FILE *out, const vram_plan *p, const vram_candidate *c, char *notes,
                             size_t ncap, char *err, size_t cap) {
    const vram_model *m = &p->comps[0].m.model;
    unsigned frac;
    int tp = 0;
    uint64_t seq, batch;
    vram_status st;
    if (c == NULL) FAIL("--emit vllm: a plan of components has no one model to serve; plan each with --model");
    if (p->w.mode == VRAM_MODE_TRAIN) FAIL("--emit vllm: vLLM serves inference; this plan is for training");
    switch (c->kind) {
    case VRAM_STRATEGY_16BIT:
    case VRAM_STRATEGY_INT4:
    case VRAM_STRATEGY_MULTI_GPU: break;
    case VRAM_STRATEGY_INT8:
        FAIL("--emit vllm: vLLM has no LLM.int8() quantisation at load, which strategy int8 sized");
    case VRAM_STRATEGY_GPU_CPU:
        FAIL("--emit vllm: vLLM keeps every layer on its GPUs; strategy gpu_cpu puts blocks on the host");
    case VRAM_STRATEGY_CPU:
        FAIL("--emit vllm: strategy cpu runs on the host; vLLM's CPU backend is a build of its own");
    default: FAIL("--emit vllm: strategy %s has no vLLM form", c->name);
    }
    for (int g = 0; g < VRAM_PLAN_MAX_GPUS; g++)
        if (c->gpu_mask & (1u << g)) tp++;
    /* a state-space model with no attention block (Mamba) has no attention heads to split */
    if (tp > 1 && m->arch.heads != 0 && m->arch.heads % (uint64_t)tp != 0 &&
        vram__arch_cache_of(m->arch).attn_blocks != 0)
        FAIL("--emit vllm: %d GPUs do not divide the %llu attention heads of %s, which "
             "--tensor-parallel-size needs",
             tp, (unsigned long long)m->arch.heads, p->comps[0].m.label);
    st = vram_emit_gpu_fraction(&p->chain.devices, c->gpu_mask, &frac);
    if (st == VRAM_E_UNHANDLED)
        FAIL("--emit vllm: a GPU's total memory is unknown, so no fraction of it can be said "
             "(give --assume-gpu SIZE)");
    if (st == VRAM_E_RANGE)
        FAIL("--emit vllm: the plan leaves vLLM less than 1%% of a GPU");
    if (st != VRAM_OK) FAIL("--emit vllm: %s", vram_status_str(st));
    if (context_of(c, &seq, &batch) != VRAM_OK) FAIL("--emit vllm: the plan sized no context");
    if (vram__arch_cache_of(m->arch).state != 0)
        note(notes, ncap,
             "vLLM keeps a recurrent state of fixed size for each sequence it runs at once "
             "(--max-num-seqs); the plan counted one for each of the batch's %llu",
             (unsigned long long)batch);
    fprintf(out, "--gpu-memory-utilization %u.%02u --max-model-len %llu --tensor-parallel-size %d",
            frac / 100u, frac % 100u, (unsigned long long)seq, tp);
    if (c->kind == VRAM_STRATEGY_INT4)
        fprintf(out, " --quantization bitsandbytes --dtype %s", torch_dtype(c->estimate.compute));
    else
        fprintf(out, " --dtype %s", torch_dtype(c->format));
    fprintf(out, "\n");
    note(notes, ncap, "vLLM fills its fraction with KV cache: it takes the whole budget, not only "
                      "what the plan estimated");
    if (tp > 1)
        note(notes, ncap, "tensor parallelism shards every layer over the %d GPUs where the plan "
                          "split whole blocks; the fraction is the smallest over them", tp);
    else if (c->device != 0 || p->mach.ngpu > 1)
        note(notes, ncap, "vLLM uses the first visible GPU: run it with CUDA_VISIBLE_DEVICES=%d "
                          "(--emit env)", c->device);
    return VRAM_OK;
}

/* ---- env ------------------------------------------------------------------------------ */

static void env_name(const char *component, char *buf, size_t cap) {
    snprintf(buf, cap, "VRAMKIT_%s_DEVICE", component);
    for (char *q = buf; *q; q++) *q = *q == '-' ? '_' : (char)toupper((unsigned char)*q);
}

static void env_device(FILE *out, const char *var, uint32_t mask, int device) {
    if (device == VRAM_PLAN_CPU)
        fprintf(out, "export %s=cpu\n", var);
    else
        fprintf(out, "export %s=cuda:%d\n", var, vram_emit_visible_index(mask, device));
}

static vram_status emit_env(FILE *out, const vram_plan *p, const vram_candidate *c,
                            const vram_emit_machine *mach, char *err, size_t cap) {
    uint32_t mask = vram_emit_gpus(p, c);
    vram_diag_probe probes[VRAM_PLAN_MAX_GPUS];
    vram_finding_id why = VRAM_FINDING_EXPANDABLE_SEGMENTS_UNVERIFIED;
    size_t n = 0;
    int first = 1;
    if (c == NULL)
        for (int i = 0; i < p->ncomp; i++)
            if (!p->placed[i].fits)
                FAIL("--emit env: component %s is not placed, so the plan has no device for it",
                     p->comps[i].name);
    fprintf(out, "export CUDA_VISIBLE_DEVICES=");
    for (int g = 0; g < VRAM_PLAN_MAX_GPUS; g++)
        if (mask & (1u << g)) {
            if (mach != NULL && mach->visible_set) {
                /* this process saw the GPUs through CUDA_VISIBLE_DEVICES: GPU g is its
                   entry g */
                const char *q = mach->visible;
                size_t len;
                for (int k = 0; k < g && q != NULL; k++) {
                    q = strchr(q, ',');
                    if (q != NULL) q++;
                }
                if (q == NULL)
                    FAIL("--emit env: GPU %d is not an entry of CUDA_VISIBLE_DEVICES='%s'", g,
                         mach->visible);
                len = strcspn(q, ",");
                fprintf(out, "%s%.*s", first ? "" : ",", (int)len, q);
            } else {
                fprintf(out, "%s%d", first ? "" : ",", g);
            }
            first = 0;
            if (mach != NULL) probes[n++] = mach->vmm[g];
        }
    fprintf(out, "\n");
    if (c != NULL) {
        env_device(out, "VRAMKIT_DEVICE", mask, c->kind == VRAM_STRATEGY_CPU ? VRAM_PLAN_CPU : c->device);
    } else {
        for (int i = 0; i < p->ncomp; i++) {
            char var[96];
            env_name(p->comps[i].name, var, sizeof var);
            env_device(out, var, mask, p->placed[i].device);
        }
    }
    if (mask == 0) {
        fprintf(out, "# PYTORCH_CUDA_ALLOC_CONF: not set, the plan uses no GPU\n");
    } else if (n > 0 && vram_emit_expandable(probes, n, &why)) {
        fprintf(out, "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n");
    } else {
        fprintf(out, "# expandable_segments:True left off: %s (%s)\n", vram_finding_name(why),
                why == VRAM_FINDING_EXPANDABLE_SEGMENTS_NO_VMM
                    ? "the VMM probe failed: vramkit doctor --probe says more"
                    : (mach != NULL && mach->no_probe[0] ? mach->no_probe : "no VMM probe ran"));
        fprintf(out, "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:False\n");
    }
    return VRAM_OK;
}

/* ---- accelerate ----------------------------------------------------------------------- */

/* One module of the device_map. */
typedef struct dm_entry {
    char *module;
    int device;
    int block;      /* 1: a block (ordered by index), 0: outside the blocks */
    uint64_t index; /* the block's index over all stacks */
} dm_entry;

typedef struct dm_stack {
    char prefix[256]; /* the name up to the block index: "model.layers." */
    uint64_t count;   /* highest index + 1 */
    uint64_t offset;
} dm_stack;

static int stack_before(const dm_stack *a, const dm_stack *b) {
    int ea = strstr(a->prefix, "encoder") != NULL, eb = strstr(b->prefix, "encoder") != NULL;
    if (ea != eb) return ea; /* an encoder runs before its decoder */
    return strcmp(a->prefix, b->prefix) < 0;
}

static int dm_cmp(const void *x, const void *y) {
    const dm_entry *a = x, *b = y;
    if (a->block != b->block) return a->block - b->block;
    if (a->block && a->index != b->index) return a->index < b->index ? -1 : 1;
    return strcmp(a->module, b->module);
}

#define MAX_STACKS 8

/* The module of a tensor: a block's "model.layers.3", else the name less its last segment.
 * Fills *st_prefix_len with the bytes before the index (0 outside blocks). */
static size_t module_of(const char *name, const vram_tensor_class *k, size_t *idx_at) {
    size_t len = strlen(name), i = k->stack_len;
    *idx_at = 0;
    if (k->in_block) {
        while (i < len && name[i] != '.') i++; /* the container word */
        if (i < len) i++;
        *idx_at = i;
        while (i < len && name[i] >= '0' && name[i] <= '9') i++;
        return i;
    }
    {
        const char *dot = strrchr(name, '.');
        return dot != NULL ? (size_t)(dot - name) : len;
    }
}

/* The device_map of c from the tensor names: blocks by vram_emit_block_device, the rest on
 * the base device, sorted, one entry per module (*out[0 .. *n), free with dm_free). VRAM_OK;
 * VRAM_E_UNHANDLED (why in err) when the names cannot say it; VRAM_E_NOMEM. */
static void dm_free(dm_entry *e, size_t n) {
    for (size_t i = 0; i < n; i++) free(e[i].module);
    free(e);
}

static vram_status device_map(const vram_names *nm, const vram_candidate *c, dm_entry **out,
                              size_t *nout, char *err, size_t cap) {
    dm_stack stacks[MAX_STACKS];
    int nstack = 0, base = c->kind == VRAM_STRATEGY_CPU ? VRAM_PLAN_CPU : c->device;
    dm_entry *e = calloc(nm->n ? nm->n : 1, sizeof *e);
    size_t ne = 0;
    uint64_t total = 0;
    vram_status st = VRAM_OK;
    if (e == NULL) return vram_errorf(err, cap, VRAM_E_NOMEM, "out of memory");
    for (size_t i = 0; i < nm->n && st == VRAM_OK; i++) {
        const char *name = nm->name[i];
        vram_tensor_class k;
        size_t idx_at, end;
        int s;
        if (vram_tensor_classify(name, strlen(name), 0, NULL, &k) != VRAM_OK) {
            st = vram_errorf(err, cap, VRAM_E_UNHANDLED, "tensor %s: block index out of range", name);
            break;
        }
        end = module_of(name, &k, &idx_at);
        e[ne].module = strndup(name, end);
        if (e[ne].module == NULL) {
            st = vram_errorf(err, cap, VRAM_E_NOMEM, "out of memory");
            break;
        }
        e[ne].block = k.in_block;
        e[ne].index = k.block;
        e[ne].device = base;
        if (k.in_block) {
            for (s = 0; s < nstack; s++)
                if (strlen(stacks[s].prefix) == idx_at && strncmp(stacks[s].prefix, name, idx_at) == 0)
                    break;
            if (s == nstack) {
                if (nstack == MAX_STACKS || idx_at >= sizeof stacks[0].prefix) {
                    st = vram_errorf(err, cap, VRAM_E_UNHANDLED,
                                     "the tensor names hold more than %d stacks of blocks",
                                     MAX_STACKS);
                    ne++;
                    break;
                }
                memcpy(stacks[s].prefix, name, idx_at);
                stacks[s].prefix[idx_at] = '\0';
                stacks[s].count = 0;
                nstack++;
            }
            if (k.block >= stacks[s].count) stacks[s].count = k.block + 1u;
            e[ne].device = s; /* the stack, until the offsets are known */
        }
        ne++;
    }
    if (st == VRAM_OK) {
        /* stacks in running order (insertion sort), their offsets, the total */
        for (int a = 1; a < nstack; a++)
            for (int b = a; b > 0 && stack_before(&stacks[b], &stacks[b - 1]); b--) {
                dm_stack t = stacks[b];
                stacks[b] = stacks[b - 1];
                stacks[b - 1] = t;
                for (size_t i = 0; i < ne; i++) /* follow the swap */
                    if (e[i].block) e[i].device = e[i].device == b ? b - 1 : e[i].device == b - 1 ? b : e[i].device;
            }
        for (int s = 0; s < nstack; s++) {
            stacks[s].offset = total;
            total += stacks[s].count;
        }
        if (total != c->blocks)
            st = vram_errorf(err, cap, VRAM_E_UNHANDLED,
                             "the tensor names hold %llu blocks, the plan %llu",
                             (unsigned long long)total, (unsigned long long)c->blocks);
    }
    for (size_t i = 0; i < ne && st == VRAM_OK; i++) {
        int dev;
        if (!e[i].block) continue;
        e[i].index += stacks[e[i].device].offset;
        if (vram_emit_block_device(c, e[i].index, &dev) != VRAM_OK) {
            st = vram_errorf(err, cap, VRAM_E_UNHANDLED, "block %llu has no device in the plan",
                             (unsigned long long)e[i].index);
            break;
        }
        e[i].device = dev;
    }
    if (st != VRAM_OK) {
        dm_free(e, ne);
        return st;
    }
    qsort(e, ne, sizeof *e, dm_cmp);
    *out = e;
    *nout = ne;
    return VRAM_OK;
}

/* What accelerate's answer holds besides max_memory, computed before a byte is written. */
#define ACC_NOTES 4
typedef struct acc_doc {
    const char *notes[ACC_NOTES];
    int nnotes;
    char why[1200];   /* a note of our own words ("no device_map: ...") */
    dm_entry *dm;     /* the device_map (NULL: none) */
    size_t ndm;
} acc_doc;

static vram_status emit_accelerate(vram_json *j, const vram_plan *p, const vram_candidate *c,
                                   char *err, size_t cap) {
    const vram_plan_component *comp = &p->comps[0];
    vram_emit_weights w;
    vram_emit_memory mem;
    uint64_t bp, op;
    acc_doc d;
    char why[1024];
    vram_status st;
    memset(&d, 0, sizeof d);
    if (c == NULL) FAIL("--emit accelerate: a plan of components has no one model to load; plan each with --model");
    if (vram_emit_model_params(&comp->m.model, &bp, &op) != VRAM_OK ||
        vram_emit_weight_split(c, bp, op, &w) != VRAM_OK || vram_emit_max_memory(c, &w, &mem) != VRAM_OK)
        FAIL("--emit accelerate: the weights of %s cannot be split as the plan splits them",
             comp->m.label);
    if (c->kind == VRAM_STRATEGY_MULTI_GPU) {
        int lowest = 0;
        while (!(c->gpu_mask & (1u << lowest))) lowest++;
        if (lowest != c->device)
            d.notes[d.nnotes++] = "max_memory with device_map=\"auto\": accelerate fills GPUs by "
                                  "index, so the embeddings and head the plan put on its base GPU "
                                  "may land on the first; device_map says the plan's split exactly";
    }
    /* the device_map, from the tensor names */
    if (strcmp(comp->m.source, "built-in") == 0 || strcmp(comp->m.source, "config.json") == 0) {
        snprintf(d.why, sizeof d.why,
                 "no device_map: %s is a %s, which has no tensor names; give the model's "
                 "safetensors (or pass max_memory with device_map=\"auto\")",
                 comp->m.label, strcmp(comp->m.source, "built-in") == 0 ? "built-in model" : "config.json");
        d.notes[d.nnotes++] = d.why;
    } else {
        vram_names nm;
        st = vram_model_tensor_names(comp->model_arg, &nm, why, sizeof why);
        if (st == VRAM_OK) {
            st = device_map(&nm, c, &d.dm, &d.ndm, why, sizeof why);
            vram_names_free(&nm);
            if (st == VRAM_E_NOMEM) return vram_errorf(err, cap, st, "--emit accelerate: out of memory");
            if (st != VRAM_OK)
                FAIL("--emit accelerate: no device_map matches the plan's split of %s: %s",
                     comp->m.label, why);
            if (comp->m.model.arch.flags & VRAM_ARCH_TIED)
                d.notes[d.nnotes++] = "tied head: it shares the token embedding's weight and has "
                                      "no tensor of its own, so device_map has no entry for it; "
                                      "from_pretrained places it with the embedding, "
                                      "dispatch_model needs one more entry (lm_head in most "
                                      "models) on the embedding's device";
        } else if (st == VRAM_E_UNHANDLED) {
            snprintf(d.why, sizeof d.why, "no device_map: %s", why);
            d.notes[d.nnotes++] = d.why;
        } else {
            return vram_errorf(err, cap, st == VRAM_E_FORMAT ? VRAM_E_INVALID : st,
                               "--emit accelerate: %s", why);
        }
    }
    vram_json_begin_object(j);
    vram_json_key(j, "max_memory");
    vram_json_begin_object(j);
    for (int g = 0; g < VRAM_PLAN_MAX_GPUS; g++)
        if (c->gpu_mask & (1u << g)) {
            char key[8];
            snprintf(key, sizeof key, "%d", g);
            vram_json_key_u64(j, key, mem.gpu[g]);
        }
    vram_json_key_u64(j, "cpu", mem.cpu);
    vram_json_end_object(j);
    if (d.dm != NULL) {
        vram_json_key(j, "device_map");
        vram_json_begin_object(j);
        for (size_t i = 0; i < d.ndm; i++) {
            if (i > 0 && strcmp(d.dm[i].module, d.dm[i - 1].module) == 0) continue;
            vram_json_key(j, d.dm[i].module);
            if (d.dm[i].device == VRAM_PLAN_CPU) vram_json_string(j, "cpu");
            else vram_json_i64(j, d.dm[i].device);
        }
        vram_json_end_object(j);
        dm_free(d.dm, d.ndm);
    }
    if (c->kind == VRAM_STRATEGY_INT8 || c->kind == VRAM_STRATEGY_INT4) {
        vram_json_key(j, "quantization_config");
        vram_json_begin_object(j);
        if (c->kind == VRAM_STRATEGY_INT8) {
            vram_json_key_bool(j, "load_in_8bit", 1);
        } else {
            vram_json_key_bool(j, "load_in_4bit", 1);
            vram_json_key_string(j, "bnb_4bit_quant_type", "nf4");
            vram_json_key_bool(j, "bnb_4bit_use_double_quant", c->format == VRAM_DTYPE_NF4_DQ);
            vram_json_key_string(j, "bnb_4bit_compute_dtype", torch_dtype(c->estimate.compute));
        }
        vram_json_end_object(j);
        vram_json_key_string(j, "dtype", torch_dtype(c->estimate.compute));
    } else {
        vram_json_key_string(j, "dtype", torch_dtype(c->format));
    }
    if (d.nnotes > 0) {
        vram_json_key(j, "notes");
        vram_json_begin_array(j);
        for (int i = 0; i < d.nnotes; i++) vram_json_string(j, d.notes[i]);
        vram_json_end_array(j);
    }
    vram_json_end_object(j);
    return VRAM_OK;
}

#undef FAIL

/* ---- the entry points ----------------------------------------------------------------- */

static vram_status emit_text(FILE *out, vram_emit_format f, const vram_plan *p,
                             const vram_candidate *c, const vram_emit_machine *mach, char *notes,
                             size_t ncap, char *err, size_t cap) {
    switch (f) {
    case VRAM_EMIT_LLAMACPP: return emit_llamacpp(out, p, c, notes, ncap, err, cap);
    case VRAM_EMIT_VLLM: return emit_vllm(out, p, c, notes, ncap, err, cap);
    case VRAM_EMIT_ENV: return emit_env(out, p, c, mach, err, cap);
    default: return vram_errorf(err, cap, VRAM_E_INVALID, "--emit: unknown format");
    }
}

vram_status vram_emit_write(FILE *out, vram_emit_format f, const vram_plan *p,
                            const vram_candidate *c, const vram_emit_machine *mach, char *notes,
                            size_t ncap, char *err, size_t cap) {
    if (ncap) notes[0] = '\0';
    if (cap) err[0] = '\0';
    if (f == VRAM_EMIT_ACCELERATE) {
        vram_json j;
        vram_status st;
        vram_json_init(&j, out);
        if ((st = emit_accelerate(&j, p, c, err, cap)) == VRAM_OK) vram_json_finish(&j);
        return st;
    }
    return emit_text(out, f, p, c, mach, notes, ncap, err, cap);
}

vram_status vram_emit_json(vram_json *j, vram_emit_format f, const vram_plan *p,
                           const vram_candidate *c, const vram_emit_machine *mach, char *notes,
                           size_t ncap, char *err, size_t cap) {
    char *text = NULL;
    size_t len = 0;
    FILE *m;
    vram_status st;
    if (ncap) notes[0] = '\0';
    if (cap) err[0] = '\0';
    if (f == VRAM_EMIT_ACCELERATE) return emit_accelerate(j, p, c, err, cap);
    if ((m = open_memstream(&text, &len)) == NULL)
        return vram_errorf(err, cap, VRAM_E_NOMEM, "out of memory");
    st = emit_text(m, f, p, c, mach, notes, ncap, err, cap);
    if (fclose(m) != 0 && st == VRAM_OK) st = vram_errorf(err, cap, VRAM_E_NOMEM, "out of memory");
    if (st == VRAM_OK) vram_json_string(j, text);
    free(text);
    return st;
}
