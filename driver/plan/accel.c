/* driver/plan/accel.c — see accel.h. What this follows in accelerate (1.15.0,
 * accelerate/utils/modeling.py; transformers 5's copy in integrations/accelerate.py walks the
 * same way):
 *   - infer_auto_device_map walks the model's children in definition order, splitting a
 *     module that does not fit into its children unless its class is in
 *     no_split_module_classes, and moves on to the next device (GPUs by index, then "cpu")
 *     when a module does not fit; it never returns to an earlier device;
 *   - a module fits when used + size <= max_memory[device] - reserve, where reserve is,
 *     on the "main devices" (the first GPU and the cpu), the largest layer (a leaf or an
 *     unsplittable block) among the modules not yet placed; elsewhere 0;
 *   - tied weights go with the first module that holds them (a tied head with the token
 *     embedding) and count once (compute_module_sizes counts a shared tensor once).
 * So the map below is contiguous in that order, and a device's max_memory M reproduces it
 * when L <= M < U: L the most any of its modules needs (used through it + the reserve after
 * it), U what the first module of the next device would need. We take the middle. */
#include "accel.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "models/model_names.h"
#include "plan_doc.h"
#include "util/text.h"

/* ---- the modules transformers builds, by model_type --------------------------------- */

typedef struct acc_item {
    vram_acc_kind kind;
    const char *name; /* a block's: the stack ("model.layers"), the index appended */
} acc_item;

#define ITEMS_END {VRAM_ACC_EMBED, NULL}
static const acc_item decoder_items[] = {{VRAM_ACC_EMBED, "model.embed_tokens"},
                                         {VRAM_ACC_BLOCK, "model.layers"},
                                         {VRAM_ACC_NORM, "model.norm"},
                                         {VRAM_ACC_HEAD, "lm_head"},
                                         ITEMS_END};
static const acc_item gpt2_items[] = {{VRAM_ACC_EMBED, "transformer.wte"},
                                      {VRAM_ACC_POS, "transformer.wpe"},
                                      {VRAM_ACC_BLOCK, "transformer.h"},
                                      {VRAM_ACC_NORM, "transformer.ln_f"},
                                      {VRAM_ACC_HEAD, "lm_head"},
                                      ITEMS_END};
static const acc_item neox_items[] = {{VRAM_ACC_EMBED, "gpt_neox.embed_in"},
                                      {VRAM_ACC_BLOCK, "gpt_neox.layers"},
                                      {VRAM_ACC_NORM, "gpt_neox.final_layer_norm"},
                                      {VRAM_ACC_HEAD, "embed_out"},
                                      ITEMS_END};
static const acc_item t5_items[] = {{VRAM_ACC_EMBED, "shared"},
                                    {VRAM_ACC_TIED, "encoder.embed_tokens"},
                                    {VRAM_ACC_BLOCK, "encoder.block"},
                                    {VRAM_ACC_NORM, "encoder.final_layer_norm"},
                                    {VRAM_ACC_TIED, "decoder.embed_tokens"},
                                    {VRAM_ACC_BLOCK, "decoder.block"},
                                    {VRAM_ACC_NORM, "decoder.final_layer_norm"},
                                    {VRAM_ACC_HEAD, "lm_head"},
                                    ITEMS_END};
static const acc_item m2m_items[] = {{VRAM_ACC_EMBED, "model.shared"},
                                     {VRAM_ACC_TIED, "model.encoder.embed_tokens"},
                                     {VRAM_ACC_BLOCK, "model.encoder.layers"},
                                     {VRAM_ACC_NORM, "model.encoder.layer_norm"},
                                     {VRAM_ACC_TIED, "model.decoder.embed_tokens"},
                                     {VRAM_ACC_BLOCK, "model.decoder.layers"},
                                     {VRAM_ACC_NORM, "model.decoder.layer_norm"},
                                     {VRAM_ACC_HEAD, "lm_head"},
                                     ITEMS_END};

/* model_type -> the names of its *ForCausalLM / *ForConditionalGeneration model and the
 * classes of its blocks (its _no_split_modules), as transformers 5.24 defines them. */
typedef struct acc_row {
    const char *type;
    const acc_item *items;
    const char *cls[2];
} acc_row;

static const acc_row acc_rows[] = {
    {"llama", decoder_items, {"LlamaDecoderLayer", NULL}},
    {"mistral", decoder_items, {"MistralDecoderLayer", NULL}},
    {"mixtral", decoder_items, {"MixtralDecoderLayer", NULL}},
    {"qwen2", decoder_items, {"Qwen2DecoderLayer", NULL}},
    {"qwen2_moe", decoder_items, {"Qwen2MoeDecoderLayer", NULL}},
    {"qwen3", decoder_items, {"Qwen3DecoderLayer", NULL}},
    {"qwen3_moe", decoder_items, {"Qwen3MoeDecoderLayer", NULL}},
    {"olmo2", decoder_items, {"Olmo2DecoderLayer", NULL}},
    {"olmoe", decoder_items, {"OlmoeDecoderLayer", NULL}},
    {"phi3", decoder_items, {"Phi3DecoderLayer", NULL}},
    {"gemma", decoder_items, {"GemmaDecoderLayer", NULL}},
    {"gemma2", decoder_items, {"Gemma2DecoderLayer", NULL}},
    {"granite", decoder_items, {"GraniteDecoderLayer", NULL}},
    {"granitemoe", decoder_items, {"GraniteMoeDecoderLayer", NULL}},
    {"gpt2", gpt2_items, {"GPT2Block", NULL}},
    {"gpt_neox", neox_items, {"GPTNeoXLayer", NULL}},
    {"t5", t5_items, {"T5Block", NULL}},
    {"m2m_100", m2m_items, {"M2M100EncoderLayer", "M2M100DecoderLayer"}},
};

/* The built-in models' model_type (their Hugging Face repositories' config.json). */
static const struct {
    const char *hf_id, *type;
} builtin_types[] = {
    {"openai-community/gpt2", "gpt2"},           {"meta-llama/Meta-Llama-3-8B", "llama"},
    {"mistralai/Mistral-7B-v0.1", "mistral"},    {"Qwen/Qwen2.5-0.5B", "qwen2"},
    {"mistralai/Mistral-Small-Instruct-2409", "mistral"}, {"Qwen/Qwen3-30B-A3B", "qwen3_moe"},
    {"facebook/nllb-200-distilled-600M", "m2m_100"},
};

static const acc_row *row_of(const char *type) {
    for (size_t i = 0; i < sizeof acc_rows / sizeof acc_rows[0]; i++)
        if (strcmp(acc_rows[i].type, type) == 0) return &acc_rows[i];
    return NULL;
}

/* config.json beside the model as given: the file itself, DIR/config.json, or the one in the
 * directory of a .safetensors file or an index. Its model_type into type ("" when none). */
static void model_type_of(const vram_plan_component *comp, char *type, size_t cap) {
    char path[1100], err[256];
    struct stat sb;
    struct cJSON *doc = NULL;
    const cJSON *t;
    type[0] = '\0';
    if (strcmp(comp->m.source, "built-in") == 0) {
        for (size_t i = 0; i < sizeof builtin_types / sizeof builtin_types[0]; i++)
            if (strcmp(builtin_types[i].hf_id, comp->m.hf_id) == 0)
                snprintf(type, cap, "%s", builtin_types[i].type);
        return;
    }
    if (stat(comp->model_arg, &sb) != 0) return;
    if (S_ISDIR(sb.st_mode)) {
        snprintf(path, sizeof path, "%s/config.json", comp->model_arg);
    } else if (strcmp(comp->m.source, "config.json") == 0) {
        snprintf(path, sizeof path, "%s", comp->model_arg);
    } else {
        const char *slash = strrchr(comp->model_arg, '/');
        if (slash == NULL) snprintf(path, sizeof path, "config.json");
        else snprintf(path, sizeof path, "%.*s/config.json", (int)(slash - comp->model_arg), comp->model_arg);
    }
    if (stat(path, &sb) != 0 || vram_plan_read_json(path, path, &doc, err, sizeof err) != VRAM_OK)
        return;
    t = cJSON_GetObjectItemCaseSensitive(doc, "model_type");
    if (cJSON_IsString(t)) snprintf(type, cap, "%s", t->valuestring);
    cJSON_Delete(doc);
}

/* ---- building the list --------------------------------------------------------------- */

typedef struct acc_list {
    vram_acc_module *mod;
    size_t n, cap;
} acc_list;

static vram_status push(acc_list *l, const char *name, size_t len, vram_acc_kind kind,
                        uint64_t block) {
    for (size_t i = 0; i < l->n; i++) /* one entry per module */
        if (strlen(l->mod[i].name) == len && strncmp(l->mod[i].name, name, len) == 0) return VRAM_OK;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        vram_acc_module *m = realloc(l->mod, cap * sizeof *m);
        if (m == NULL) return VRAM_E_NOMEM;
        l->mod = m;
        l->cap = cap;
    }
    memset(&l->mod[l->n], 0, sizeof l->mod[0]);
    if ((l->mod[l->n].name = strndup(name, len)) == NULL) return VRAM_E_NOMEM;
    l->mod[l->n].kind = kind;
    l->mod[l->n].block = block;
    l->n++;
    return VRAM_OK;
}

static int has_word(const char *name, const char *w) {
    size_t n = strlen(w);
    for (const char *p = strstr(name, w); p != NULL; p = strstr(p + 1, w))
        if ((p == name || p[-1] == '.' || p[-1] == '_') && (p[n] == '\0' || p[n] == '.' || p[n] == '_'))
            return 1;
    return 0;
}

/* What a module outside the blocks is, from its name (safetensors names). */
static vram_acc_kind kind_of_name(const char *name, int have_embed) {
    const char *last = strrchr(name, '.');
    last = last ? last + 1 : name;
    if (strcmp(name, "lm_head") == 0 || strcmp(name, "embed_out") == 0 || strcmp(name, "output") == 0)
        return VRAM_ACC_HEAD;
    if (strstr(last, "pos") != NULL || strcmp(last, "wpe") == 0) return VRAM_ACC_POS;
    if (strstr(last, "embed") != NULL || strcmp(last, "wte") == 0 || strcmp(last, "shared") == 0)
        return have_embed ? VRAM_ACC_TIED : VRAM_ACC_EMBED;
    return VRAM_ACC_NORM;
}

/* The group of a module (accel.h): encoder-decoder stacks by their word. */
static int group_of(const vram_acc_module *m, int encdec) {
    int enc = has_word(m->name, "encoder"), dec = has_word(m->name, "decoder");
    if (m->kind == VRAM_ACC_HEAD) return 3;
    if (encdec && enc) return 1;
    if (encdec && dec) return 2;
    if (m->kind == VRAM_ACC_BLOCK) return 2;
    return m->kind == VRAM_ACC_NORM ? 2 : 0;
}

/* Module order: group, then before / blocks / after within it. */
static int rank_of(const vram_acc_module *m) {
    switch (m->kind) {
    case VRAM_ACC_EMBED: return 0;
    case VRAM_ACC_POS: return 1;
    case VRAM_ACC_TIED: return 2;
    case VRAM_ACC_BLOCK: return 3;
    default: return 4;
    }
}

static int mod_cmp(const void *x, const void *y) {
    const vram_acc_module *a = x, *b = y;
    if (a->group != b->group) return a->group - b->group;
    if (rank_of(a) != rank_of(b)) return rank_of(a) - rank_of(b);
    if (a->block != b->block) return a->block < b->block ? -1 : 1; /* non-blocks: listed order */
    return strcmp(a->name, b->name);
}

/* Modules from the safetensors tensor names: a block's "model.layers.3", else the name less
 * its last segment. Block indices become running order over the stacks (encoder first). */
static vram_status from_names(const vram_names *nm, acc_list *l, char *err, size_t cap) {
    int have_embed = 0;
    for (size_t i = 0; i < nm->n; i++) {
        const char *name = nm->name[i];
        vram_tensor_class k;
        size_t len = strlen(name), end;
        vram_status st;
        if (vram_tensor_classify(name, len, 0, NULL, &k) != VRAM_OK)
            return vram_errorf(err, cap, VRAM_E_INVALID, "tensor %s: block index out of range", name);
        if (k.in_block) {
            end = k.stack_len;
            while (end < len && name[end] != '.') end++; /* the container word */
            if (end < len) end++;
            while (end < len && name[end] >= '0' && name[end] <= '9') end++;
            st = push(l, name, end, VRAM_ACC_BLOCK, k.block);
        } else {
            const char *dot = strrchr(name, '.');
            char mod[512];
            end = dot != NULL ? (size_t)(dot - name) : len;
            snprintf(mod, sizeof mod, "%.*s", (int)end, name);
            st = push(l, name, end, kind_of_name(mod, 0), 0);
        }
        if (st != VRAM_OK) return vram_errorf(err, cap, st, "out of memory");
    }
    /* the first embedding in running order owns the weight; later ones are tied to it */
    for (size_t i = 0; i < l->n; i++)
        if (l->mod[i].kind == VRAM_ACC_EMBED) {
            if (!has_word(l->mod[i].name, "encoder") && !has_word(l->mod[i].name, "decoder") &&
                !have_embed) {
                have_embed = 1;
                for (size_t j = 0; j < l->n; j++)
                    if (j != i && l->mod[j].kind == VRAM_ACC_EMBED) l->mod[j].kind = VRAM_ACC_TIED;
            }
        }
    return VRAM_OK;
}

static vram_status from_row(const acc_row *row, const vram_model *m, acc_list *l) {
    const vram_arch *a = &m->arch;
    uint64_t enc = a->family == VRAM_FAMILY_ENCODER_DECODER ? a->encoder_layers : 0;
    uint64_t dec = a->family == VRAM_FAMILY_ENCODER_DECODER ? a->decoder_layers : a->layers;
    int stack = 0;
    if (a->family == VRAM_FAMILY_NONE && m->blocks != 0) dec = m->blocks;
    for (const acc_item *it = row->items; it->name != NULL; it++) {
        vram_status st;
        if (it->kind != VRAM_ACC_BLOCK) {
            st = push(l, it->name, strlen(it->name), it->kind, 0);
            if (st != VRAM_OK) return st;
            continue;
        }
        {
            uint64_t n = (row->items == t5_items || row->items == m2m_items) && stack == 0 ? enc : dec;
            for (uint64_t b = 0; b < n; b++) {
                char name[160];
                int len = snprintf(name, sizeof name, "%s.%llu", it->name, (unsigned long long)b);
                if ((st = push(l, name, (size_t)len, VRAM_ACC_BLOCK, b)) != VRAM_OK) return st;
            }
            stack++;
        }
    }
    /* a tied head has no weight of its own */
    if (a->flags & VRAM_ARCH_TIED)
        for (size_t i = 0; i < l->n; i++)
            if (l->mod[i].kind == VRAM_ACC_HEAD) l->mod[i].kind = VRAM_ACC_TIED;
    return VRAM_OK;
}

/* ---- sizes --------------------------------------------------------------------------- */

static uint64_t bytes_per_param(const vram_candidate *c) {
    switch (c->kind) {
    case VRAM_STRATEGY_CPU: return 4;
    default: return c->format == VRAM_DTYPE_F32 ? 4u : 2u; /* quantised kinds: their compute */
    }
}

/* Each module's bytes: from the architecture's count where it is known, else the plan's own
 * weights split (a block, the rest on the first embedding). */
static void sizes(vram_acc_map *map, const vram_plan *p, const vram_candidate *c) {
    const vram_model *m = &p->comps[0].m.model;
    vram_param_count pc;
    uint64_t B = bytes_per_param(c), norms = 0, total = 0, nenc = 0, ndec = 0;
    vram_acc_module *first = NULL;
    for (size_t i = 0; i < map->n; i++) {
        if (map->mod[i].kind == VRAM_ACC_NORM) norms++;
        if (map->mod[i].kind == VRAM_ACC_EMBED && first == NULL) first = &map->mod[i];
        if (map->mod[i].kind == VRAM_ACC_BLOCK) *(map->mod[i].group == 1 ? &nenc : &ndec) += 1;
    }
    if (m->arch.family != VRAM_FAMILY_NONE && vram_arch_params(&m->arch, &pc) == VRAM_OK &&
        pc.block_count == nenc + ndec) {
        int encdec = m->arch.family == VRAM_FAMILY_ENCODER_DECODER;
        uint64_t avg = pc.block_count ? pc.blocks / pc.block_count : 0;
        /* a decoder's parameters beyond model.h's pattern are per block (q/k norms, sinks,
           gates: model_arch.h's VRAM__HAS_*) when they divide evenly over the blocks */
        if (!encdec && pc.block_count != 0 && pc.extra % pc.block_count == 0)
            avg += pc.extra / pc.block_count;
        for (size_t i = 0; i < map->n; i++) {
            vram_acc_module *x = &map->mod[i];
            uint64_t n = 0;
            switch (x->kind) {
            case VRAM_ACC_EMBED: n = x == first ? m->arch.vocab * m->arch.hidden : 0; break;
            case VRAM_ACC_POS: n = m->arch.positions * m->arch.hidden; break;
            case VRAM_ACC_BLOCK:
                n = !encdec ? avg : x->group == 1 ? pc.encoder_block : pc.decoder_block;
                break;
            case VRAM_ACC_NORM: n = norms ? pc.final_norms / norms : 0; break;
            case VRAM_ACC_HEAD: n = pc.head; break;
            default: n = 0;
            }
            x->bytes = n * B;
            total += n;
        }
        if (encdec && strcmp(map->model_type, "t5") == 0 && pc.extra % 2 == 0) {
            /* T5's relative position buckets x heads: in each stack's first block */
            uint64_t seen[3] = {0, 0, 0};
            for (size_t i = 0; i < map->n; i++) {
                vram_acc_module *x = &map->mod[i];
                if (x->kind != VRAM_ACC_BLOCK || x->group < 1 || x->group > 2 || seen[x->group]++)
                    continue;
                x->bytes += pc.extra / 2 * B;
                total += pc.extra / 2;
            }
        }
        if (first != NULL && pc.total > total) first->bytes += (pc.total - total) * B;
        return;
    }
    {
        vram_emit_weights w;
        uint64_t bp, op;
        if (vram_emit_model_params(m, &bp, &op) != VRAM_OK ||
            vram_emit_weight_split(c, bp, op, &w) != VRAM_OK)
            return;
        for (size_t i = 0; i < map->n; i++)
            if (map->mod[i].kind == VRAM_ACC_BLOCK) map->mod[i].bytes = w.block;
        if (first != NULL) first->bytes = w.rest;
    }
}

/* ---- devices ------------------------------------------------------------------------- */

vram_status vram_acc_block_device(const vram_candidate *c, uint64_t b, int *device) {
    uint64_t seen = 0;
    if (c->kind != VRAM_STRATEGY_MULTI_GPU) return vram_emit_block_device(c, b, device);
    if (b >= c->blocks) return VRAM_E_INVALID;
    for (int g = 0; g < VRAM_PLAN_MAX_GPUS; g++) {
        if (!(c->gpu_mask & (1u << g))) continue;
        seen += c->gpu_blocks[g];
        if (b < seen) {
            *device = g;
            return VRAM_OK;
        }
    }
    return VRAM_E_INVALID;
}

/* accelerate's order of devices: GPUs by index, the cpu last. */
static int dev_rank(int d) { return d == VRAM_PLAN_CPU ? VRAM_PLAN_MAX_GPUS : d; }

static uint64_t *mem_of(vram_emit_memory *m, int d) { return d == VRAM_PLAN_CPU ? &m->cpu : &m->gpu[d]; }

/* max_memory, device by device (the rule at the top of this file). Tied modules are not
 * walked: accelerate places them with the embedding that holds their weight. */
static void max_memory(vram_acc_map *map, const vram_candidate *c) {
    int main_gpu = -1, prev = -1;
    uint64_t slack = 0;
    size_t n = 0;
    size_t *walk = calloc(map->n + 1, sizeof *walk);
    uint64_t *after = calloc(map->n + 1, sizeof *after); /* largest module after the k-th */
    map->exact = 1;
    for (int g = 0; g < VRAM_PLAN_MAX_GPUS; g++)
        if (c->gpu_mask & (1u << g) && main_gpu < 0) main_gpu = g;
    for (size_t i = 0; i < map->n; i++) {
        if (map->mod[i].kind == VRAM_ACC_BLOCK && map->mod[i].bytes / 2 > slack)
            slack = map->mod[i].bytes / 2;
        if (walk != NULL && map->mod[i].kind != VRAM_ACC_TIED) walk[n++] = i;
    }
    if (walk == NULL || after == NULL) { /* no memory for the tables: generous, not exact */
        map->exact = 0;
        for (size_t i = 0; i < map->n; i++) {
            *mem_of(&map->mem, map->mod[i].device) += 2 * map->mod[i].bytes + slack;
            *mem_of(&map->weights, map->mod[i].device) += map->mod[i].bytes;
        }
        free(walk);
        free(after);
        return;
    }
    for (size_t k = n; k-- > 0;) {
        uint64_t b = map->mod[walk[k]].bytes;
        after[k] = b > after[k + 1] ? b : after[k + 1];
    }
    for (size_t k = 0; k < n;) {
        int d = map->mod[walk[k]].device, main = d == VRAM_PLAN_CPU || d == main_gpu;
        uint64_t used = 0, lo = 0, hi = UINT64_MAX;
        size_t j = k;
        if (dev_rank(d) <= prev) map->exact = 0; /* accelerate never goes back to a device */
        prev = dev_rank(d);
        for (; j < n && map->mod[walk[j]].device == d; j++) {
            uint64_t need;
            used += map->mod[walk[j]].bytes;
            need = used + (main ? after[j + 1] : 0);
            if (need > lo) lo = need;
        }
        if (j < n) hi = used + map->mod[walk[j]].bytes + (main ? after[j + 1] : 0);
        *mem_of(&map->weights, d) += used;
        if (hi == UINT64_MAX) {
            *mem_of(&map->mem, d) = lo + slack;
        } else if (hi > lo + 1) {
            *mem_of(&map->mem, d) = lo + (hi - lo) / 2;
        } else {
            *mem_of(&map->mem, d) = lo;
            map->exact = 0;
        }
        k = j;
    }
    free(walk);
    free(after);
}

/* ---- the map ------------------------------------------------------------------------- */

void vram_acc_map_free(vram_acc_map *m) {
    for (size_t i = 0; i < m->n; i++) free(m->mod[i].name);
    free(m->mod);
    m->mod = NULL;
    m->n = 0;
}

vram_status vram_acc_map_make(const vram_plan *p, const vram_candidate *c, vram_acc_map *out,
                              char *err, size_t cap) {
    const vram_plan_component *comp = &p->comps[0];
    const vram_model *m = &comp->m.model;
    const acc_row *row;
    acc_list l = {0};
    vram_status st = VRAM_OK;
    uint64_t blocks = 0;
    int base = c->kind == VRAM_STRATEGY_CPU ? VRAM_PLAN_CPU : c->device, encdec;
    int last_block_dev = base, first_embed_dev = base;
    memset(out, 0, sizeof *out);
    out->moved_to = VRAM_PLAN_NONE;
    model_type_of(comp, out->model_type, sizeof out->model_type);
    row = row_of(out->model_type);
    if (strcmp(comp->m.source, "file") == 0 || strcmp(comp->m.source, "directory") == 0) {
        vram_names nm;
        st = vram_model_tensor_names(comp->model_arg, &nm, err, cap);
        if (st == VRAM_OK) {
            st = from_names(&nm, &l, err, cap);
            vram_names_free(&nm);
            out->names_from = 1;
            /* a tied head has no tensor: the row names it */
            if (st == VRAM_OK && row != NULL && (m->arch.flags & VRAM_ARCH_TIED))
                for (const acc_item *it = row->items; it->name != NULL; it++)
                    if (it->kind == VRAM_ACC_HEAD &&
                        (st = push(&l, it->name, strlen(it->name), VRAM_ACC_TIED, 0)) != VRAM_OK)
                        st = vram_errorf(err, cap, st, "out of memory");
        } else if (st != VRAM_E_UNHANDLED) {
            return st;
        }
    }
    if (out->names_from == 0) {
        if (row == NULL) {
            return vram_errorf(err, cap, VRAM_E_UNHANDLED,
                               "no device_map: neither tensor names nor a model type vramkit "
                               "knows the modules of (%s) name %s's modules",
                               out->model_type[0] ? out->model_type : "none", comp->m.label);
        }
        if ((st = from_row(row, m, &l)) != VRAM_OK)
            st = vram_errorf(err, cap, st, "out of memory");
        out->names_from = 2;
    }
    out->mod = l.mod;
    out->n = l.n;
    if (st != VRAM_OK) {
        vram_acc_map_free(out);
        return st;
    }
    if (row != NULL) {
        snprintf(out->no_split[0], sizeof out->no_split[0], "%s", row->cls[0]);
        if (row->cls[1] != NULL) snprintf(out->no_split[1], sizeof out->no_split[1], "%s", row->cls[1]);
    }
    /* accelerate's order: groups, then before / blocks / after; blocks numbered over stacks */
    /* two stacks: the family says so, or the names hold an encoder's and a decoder's blocks */
    encdec = m->arch.family == VRAM_FAMILY_ENCODER_DECODER;
    if (!encdec) {
        int enc = 0, dec = 0;
        for (size_t i = 0; i < out->n; i++)
            if (out->mod[i].kind == VRAM_ACC_BLOCK) {
                enc |= has_word(out->mod[i].name, "encoder");
                dec |= has_word(out->mod[i].name, "decoder");
            }
        encdec = enc && dec;
    }
    for (size_t i = 0; i < out->n; i++) {
        out->mod[i].group = group_of(&out->mod[i], encdec);
        if (out->mod[i].kind != VRAM_ACC_BLOCK) out->mod[i].block = i; /* keeps the listed order */
    }
    qsort(out->mod, out->n, sizeof *out->mod, mod_cmp);
    for (size_t i = 0; i < out->n; i++)
        if (out->mod[i].kind == VRAM_ACC_BLOCK) out->mod[i].block = blocks++;
    if (blocks != c->blocks) {
        vram_acc_map_free(out);
        return vram_errorf(err, cap, VRAM_E_INVALID, "the %s hold %llu blocks, the plan %llu",
                           out->names_from == 1 ? "tensor names" : "model type's modules",
                           (unsigned long long)blocks, (unsigned long long)c->blocks);
    }
    sizes(out, p, c);
    /* devices: blocks by the plan; what precedes a block goes with it, what follows with the
       block before; tied modules with the embedding that owns the weight */
    for (size_t i = 0; i < out->n; i++)
        if (out->mod[i].kind == VRAM_ACC_BLOCK) {
            int d;
            if (vram_acc_block_device(c, out->mod[i].block, &d) != VRAM_OK) {
                vram_acc_map_free(out);
                return vram_errorf(err, cap, VRAM_E_INVALID, "block %llu has no device in the plan",
                                   (unsigned long long)out->mod[i].block);
            }
            out->mod[i].device = d;
        }
    for (size_t i = out->n; i-- > 0;) { /* before a block: the next block's device */
        vram_acc_module *x = &out->mod[i];
        if (x->kind == VRAM_ACC_BLOCK) last_block_dev = x->device;
        else if (rank_of(x) < 3 && x->group < 3) x->device = last_block_dev;
    }
    last_block_dev = base;
    for (size_t i = 0; i < out->n; i++) { /* after: the last block's device */
        vram_acc_module *x = &out->mod[i];
        if (x->kind == VRAM_ACC_BLOCK) last_block_dev = x->device;
        else if (rank_of(x) >= 3 || x->group == 3) x->device = last_block_dev;
        else if (x->bytes == 0 && x->kind != VRAM_ACC_TIED && i > 0) x->device = out->mod[i - 1].device;
    }
    for (size_t i = 0; i < out->n; i++)
        if (out->mod[i].kind == VRAM_ACC_EMBED) {
            first_embed_dev = out->mod[i].device;
            break;
        }
    for (size_t i = 0; i < out->n; i++) {
        vram_acc_module *x = &out->mod[i];
        if (x->kind == VRAM_ACC_TIED) x->device = first_embed_dev;
        if ((x->kind == VRAM_ACC_NORM || x->kind == VRAM_ACC_HEAD) && x->group >= 2 &&
            x->device != base) {
            out->moved += x->bytes;
            out->moved_to = x->device;
        }
    }
    max_memory(out, c);
    return VRAM_OK;
}
