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
#include "accel.h"
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

/* -ngl as llama.cpp reads it (src/llama-model.cpp, llama_model::load_tensors, commit
 * 00342301): slots 0 .. n_layer, the output layer being slot n_layer;
 * i_gpu_start = max(n_layer + 1 - ngl, 0), so -ngl N offloads the output layer and the last
 * N - 1 blocks: the core's vram_emit_gpu_layers (include/vramkit/emit.h) counts that way. */
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
        /* --tensor-split over the ngl slots (blocks + the output layer, which is the last
           slot): each GPU's blocks, the last GPU's one more */
        fprintf(out, " --split-mode layer --tensor-split ");
        for (int g = 0; g <= last; g++)
            fprintf(out, "%s%llu", g ? "," : "",
                    (unsigned long long)(c->gpu_blocks[g] + (g == last ? 1u : 0u)));
        if (last != c->device)
            note(notes, ncap,
                 "llama.cpp puts the output layer with the last slots, on GPU %d; the plan counted "
                 "it on GPU %d",
                 last, c->device);
    } else if (c->kind != VRAM_STRATEGY_CPU && p->mach.ngpu > 1) {
        fprintf(out, " --split-mode none --main-gpu %d", c->device); /* else it spreads layers */
    }
    if (c->kind == VRAM_STRATEGY_EXPERTS_CPU) fprintf(out, " --cpu-moe"); /* routed experts on the host */
    fprintf(out, "\n");
    /* where -ngl stops short of the whole model, llama.cpp's order of slots decides */
    if (c->kind == VRAM_STRATEGY_MULTI_GPU || (c->kind == VRAM_STRATEGY_GPU_CPU && c->cpu_blocks != 0))
        note(notes, ncap,
             "llama.cpp keeps the token embedding (its input layer) on the host and offloads the "
             "output layer first (-ngl counts it: llama.cpp since its backend-registry loader, "
             "pinned at commit 00342301); builds before it offload the output only when -ngl "
             "exceeds the blocks");
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
             "llama.cpp offloads the last blocks: blocks %llu to %llu and the output layer on "
             "GPU %d, blocks 0 to %llu on the host (the plan counts blocks, which of them does "
             "not change the bytes)",
             (unsigned long long)c->cpu_blocks, (unsigned long long)(c->blocks - 1u), c->device,
             (unsigned long long)(c->cpu_blocks - 1u));
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

/* What vLLM is given. Its start-up (vllm/v1/worker/gpu_worker.py, Worker.init_device and
 * determine_available_memory, vLLM commit 35d5cda): after its CUDA context (and NCCL) exist it
 * measures free memory and refuses to start when free < total x gpu_memory_utilization; that
 * requested memory then holds weights, activations, non-torch memory and the KV cache (exactly
 * kv_cache_memory_bytes when given). So the fraction is, on each GPU, (the plan's budget - the
 * CUDA context) / total, rounded down to hundredths: the context plus the request stay inside
 * the budget, and the request inside what is free once the context exists. --cpu-offload-gb
 * (vllm/model_executor/models/utils.py, maybe_offload_to_cpu): the weights of the first blocks,
 * parameter by parameter, until int(GiB x 2^30) bytes; every block's KV cache stays on the
 * GPU, so it offloads the fewest blocks with which the GPU's part fits the budget. */
typedef struct vllm_plan {
    unsigned frac;           /* hundredths */
    uint64_t kv;             /* --kv-cache-memory-bytes per GPU; 0: not known */
    uint64_t offload_blocks; /* blocks whose weights go to the host */
    uint64_t offload_nano;   /* --cpu-offload-gb in 1e-9 GiB, rounded down */
} vllm_plan;

static vram_status vllm_settings(const vram_plan *p, const vram_candidate *c, int tp, vllm_plan *v,
                                 char *err, size_t cap) {
    const vram_devices *d = &p->chain.devices;
    uint64_t ctx = c->estimate.term[VRAM_TERM_CUDA_CONTEXT].expected;
    unsigned best = 101;
    memset(v, 0, sizeof *v);
    for (int g = 0; g < d->gpus && g < VRAM_PLAN_MAX_GPUS; g++) {
        uint64_t total = d->gpu[g].total, b = vram_devices_budget(d, g), q;
        if (!(c->gpu_mask & (1u << g))) continue;
        if (total == 0)
            FAIL("--emit vllm: a GPU's total memory is unknown, so no fraction of it can be said "
                 "(give --assume-gpu SIZE)");
        b = b > ctx ? b - ctx : 0u;
        q = b <= UINT64_MAX / 100u ? b * 100u / total : b / (total / 100u + 1u);
        if (q < best) best = (unsigned)q;
    }
    if (best == 0 || best > 100) FAIL("--emit vllm: the plan leaves vLLM less than 1%% of a GPU once its CUDA context is made");
    v->frac = best;
    if (c->estimate.term[VRAM_TERM_KV_CACHE].expected != 0) {
        uint64_t kv = c->estimate.term[VRAM_TERM_KV_CACHE].expected;
        v->kv = kv / (uint64_t)tp + (kv % (uint64_t)tp != 0);
    }
    if (c->kind == VRAM_STRATEGY_GPU_CPU && c->cpu_blocks != 0) {
        vram_emit_weights w;
        uint64_t bp, op, all, budget = vram_devices_budget(d, c->device), over, m;
        if (vram_emit_model_params(&p->comps[0].m.model, &bp, &op) != VRAM_OK ||
            vram_emit_weight_split(c, bp, op, &w) != VRAM_OK || w.block == 0)
            FAIL("--emit vllm: the weights of a block of %s are unknown, so --cpu-offload-gb "
                 "cannot be said", p->comps[0].m.label);
        /* every block on the GPU, weights and KV: what vLLM would need without offloading */
        all = c->fixed_bytes + c->rest_bytes + c->blocks * c->block_bytes;
        over = all > budget ? all - budget : 0u;
        m = over / w.block + (over % w.block != 0);
        if (m > c->blocks)
            FAIL("--emit vllm: vLLM keeps every block's KV cache on the GPU; with the weights of "
                 "all %llu blocks on the host it still needs %llu bytes more than GPU %d's budget",
                 (unsigned long long)c->blocks, (unsigned long long)(over - c->blocks * w.block),
                 c->device);
        v->offload_blocks = m;
        /* GiB in 1e-9 steps, rounded down: int(x * 2^30) never passes the blocks' bytes */
        v->offload_nano = (uint64_t)((long double)(m * w.block) * 1e9L / 1073741824.0L);
    }
    return VRAM_OK;
}

static vram_status emit_vllm(FILE *out, const vram_plan *p, const vram_candidate *c, char *notes,
                             size_t ncap, char *err, size_t cap) {
    const vram_model *m = &p->comps[0].m.model;
    vllm_plan v;
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
    case VRAM_STRATEGY_GPU_CPU: break; /* --cpu-offload-gb */
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
    if (context_of(c, &seq, &batch) != VRAM_OK) FAIL("--emit vllm: the plan sized no context");
    st = vllm_settings(p, c, tp, &v, err, cap);
    if (st != VRAM_OK) return st;
    if (vram__arch_cache_of(m->arch).state != 0)
        note(notes, ncap,
             "vLLM keeps a recurrent state of fixed size for each sequence it runs at once "
             "(--max-num-seqs); the plan counted one for each of the batch's %llu",
             (unsigned long long)batch);
    fprintf(out, "--gpu-memory-utilization %u.%02u --max-model-len %llu --tensor-parallel-size %d",
            v.frac / 100u, v.frac % 100u, (unsigned long long)seq, tp);
    if (v.kv != 0) fprintf(out, " --kv-cache-memory-bytes %llu", (unsigned long long)v.kv);
    if (v.offload_blocks != 0)
        fprintf(out, " --cpu-offload-gb %llu.%09llu", (unsigned long long)(v.offload_nano / 1000000000u),
                (unsigned long long)(v.offload_nano % 1000000000u));
    if (c->kind == VRAM_STRATEGY_INT4)
        fprintf(out, " --quantization bitsandbytes --dtype %s", torch_dtype(c->estimate.compute));
    else
        fprintf(out, " --dtype %s", torch_dtype(c->format));
    fprintf(out, "\n");
    if (v.kv != 0)
        note(notes, ncap, "--kv-cache-memory-bytes is the plan's KV cache for the batch of %llu "
                          "(per GPU); vLLM then skips its own profiling (vLLM 0.11 and later; "
                          "older builds fill the fraction with KV cache)",
             (unsigned long long)batch);
    else
        note(notes, ncap, "vLLM fills its fraction with KV cache: it takes the whole budget, not only "
                          "what the plan estimated");
    if (v.offload_blocks != 0)
        note(notes, ncap,
             "vLLM offloads the weights of the first blocks and keeps every block's KV cache on the "
             "GPU: %llu blocks' weights on the host where the plan put %llu whole blocks there",
             (unsigned long long)v.offload_blocks, (unsigned long long)c->cpu_blocks);
    if (tp > 1)
        note(notes, ncap, "tensor parallelism shards every layer over the %d GPUs where the plan "
                          "split whole blocks; the fraction is the smallest over them, and NCCL's "
                          "buffers (made before vLLM measures free memory) are not in the plan", tp);
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
    if (mask == 0)
        fprintf(out, "# CUDA_VISIBLE_DEVICES empty: the plan uses no GPU, so the process sees none "
                     "(CUDA reports no device)\n");
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

static void json_device(vram_json *j, int device) {
    if (device == VRAM_PLAN_CPU) vram_json_string(j, "cpu");
    else vram_json_i64(j, device);
}

/* {"0": n, ..., "cpu": n} over the GPUs of mask and the host. */
static void json_memory(vram_json *j, const char *key, const vram_emit_memory *m, uint32_t mask) {
    vram_json_key(j, key);
    vram_json_begin_object(j);
    for (int g = 0; g < VRAM_PLAN_MAX_GPUS; g++)
        if (mask & (1u << g)) {
            char k[8];
            snprintf(k, sizeof k, "%d", g);
            vram_json_key_u64(j, k, m->gpu[g]);
        }
    vram_json_key_u64(j, "cpu", m->cpu);
    vram_json_end_object(j);
}

#define ACC_NOTES 4

static vram_status emit_accelerate(vram_json *j, const vram_plan *p, const vram_candidate *c,
                                   char *err, size_t cap) {
    const vram_plan_component *comp = &p->comps[0];
    vram_acc_map map;
    vram_emit_memory mem;
    char notes[ACC_NOTES][1200], why[1024], dev[16];
    int nnotes = 0, have_map;
    vram_status st;
    if (c == NULL) FAIL("--emit accelerate: a plan of components has no one model to load; plan each with --model");
    st = vram_acc_map_make(p, c, &map, why, sizeof why);
    if (st == VRAM_E_NOMEM || st == VRAM_E_IO) return vram_errorf(err, cap, st, "--emit accelerate: %s", why);
    if (st == VRAM_E_INVALID || st == VRAM_E_FORMAT)
        FAIL("--emit accelerate: no device_map matches the plan's split of %s: %s", comp->m.label, why);
    have_map = st == VRAM_OK;
    if (have_map) {
        mem = map.mem;
        if (map.moved_to != VRAM_PLAN_NONE) {
            char base[16];
            snprintf(notes[nnotes++], sizeof notes[0],
                     "accelerate keeps the modules after the last block (%llu bytes: the final "
                     "norm, an untied head) with that block, on %s; the plan counted them on %s",
                     (unsigned long long)map.moved,
                     vram_plan_device_name(map.moved_to, dev, sizeof dev),
                     vram_plan_device_name(c->kind == VRAM_STRATEGY_CPU ? VRAM_PLAN_CPU : c->device,
                                           base, sizeof base));
        }
        if (!map.exact)
            snprintf(notes[nnotes++], sizeof notes[0],
                     "no max_memory makes accelerate's infer_auto_device_map walk land exactly on "
                     "this split (a device's range is empty); pass device_map");
        if (map.no_split[0][0] == '\0')
            snprintf(notes[nnotes++], sizeof notes[0],
                     "no_split_module_classes: model type '%s' is not in vramkit's table; give "
                     "infer_auto_device_map the model's _no_split_modules",
                     map.model_type[0] ? map.model_type : "unknown");
    } else {
        vram_emit_weights w;
        uint64_t bp, op;
        if (vram_emit_model_params(&comp->m.model, &bp, &op) != VRAM_OK ||
            vram_emit_weight_split(c, bp, op, &w) != VRAM_OK || vram_emit_max_memory(c, &w, &mem) != VRAM_OK)
            FAIL("--emit accelerate: the weights of %s cannot be split as the plan splits them",
                 comp->m.label);
        snprintf(notes[nnotes++], sizeof notes[0], "%s", why);
    }
    if (c->kind == VRAM_STRATEGY_INT8 || c->kind == VRAM_STRATEGY_INT4)
        snprintf(notes[nnotes++], sizeof notes[0],
                 "max_memory counts the weights at their 16-bit size; bitsandbytes counts the "
                 "quantised ones smaller, which leaves more room on the GPU");
    vram_json_begin_object(j);
    json_memory(j, "max_memory", &mem, c->gpu_mask);
    if (have_map) {
        vram_json_key(j, "device_map");
        vram_json_begin_object(j);
        for (size_t i = 0; i < map.n; i++) {
            vram_json_key(j, map.mod[i].name);
            json_device(j, map.mod[i].device);
        }
        vram_json_end_object(j);
        if (map.no_split[0][0] != '\0') {
            vram_json_key(j, "no_split_module_classes");
            vram_json_begin_array(j);
            for (int k = 0; k < 2; k++)
                if (map.no_split[k][0] != '\0') vram_json_string(j, map.no_split[k]);
            vram_json_end_array(j);
        }
        json_memory(j, "weights", &map.weights, c->gpu_mask);
        vram_acc_map_free(&map);
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
    if (nnotes > 0) {
        vram_json_key(j, "notes");
        vram_json_begin_array(j);
        for (int i = 0; i < nnotes; i++) vram_json_string(j, notes[i]);
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
