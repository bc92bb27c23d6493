/* driver/models/model_config.c — Hugging Face config.json to architecture numbers (vram_arch).
 * The model_type names a row of the architecture table (model_arch.c), which both readers
 * share; a key the file leaves out takes the default of the transformers config class that
 * reads it (named beside each row), so vramkit reads a config the way transformers would
 * build the model from it. The rows' counts are checked against transformers' own classes
 * (test/models/).
 *
 * Decoders of the table's own pattern (cfg_decoder): Llama, Mistral, Qwen2/3, Gemma 1/2/3,
 * Phi-3, Apertus (xIELU MLP), Cohere2 (parallel block, tied), the mixtures of experts
 * (Mixtral, Qwen2/3-MoE, DeepSeek-V2/V3, gpt-oss, OLMoE, Phi-3.5-MoE, Granite-MoE, GLM-4.5,
 * ERNIE-4.5, Llama 4's text model, Qwen3-Next) and the state-space models and hybrids
 * (Mamba, Falcon-Mamba, Mamba-2, Jamba, Granite-4.0-H, Falcon-H1, LFM2): common keys, then
 * the experts (cfg_experts), the recurrent mixer (cfg_mixer), the sliding window (cfg_swa),
 * and the parameters beyond the pattern from the row (vram__arch_extra). phi3's fused
 * gate_up_proj counts as gate + up.
 *
 * gpt2 (GPT2Config): n_layer 12, n_embd 768, n_head 12, n_inner null -> 4 x n_embd,
 *   n_positions 1024 (learned: positions and context), vocab_size 50257, tie_word_embeddings
 *   true (PretrainedConfig); PLAIN MLP, LAYER norm, biases everywhere, FINAL_NORM (ln_f).
 * gpt_neox (GPTNeoXConfig): num_hidden_layers 44, hidden_size 6144, num_attention_heads 64,
 *   intermediate_size 24576, vocab_size 50432, max_position_embeddings 2048 (rotary),
 *   tie_word_embeddings false, attention_bias true (q,k,v,o); MLP biases; PLAIN, LAYER,
 *   FINAL_NORM; two norms per block (use_parallel_residual shares none).
 * phi, falcon, gptj, gpt_bigcode: see cfg_phi, cfg_falcon, cfg_gptj and cfg_bigcode (parallel
 *   blocks with one norm, multi-query attention, heads with a bias).
 * codegen (CodeGenConfig): read as gptj (the same keys, defaults and block).
 * opt, bloom, gpt_neo, mpt, xglm, gpt_neox_japanese, openai-gpt, ctrl: the classic decoders
 *   (cfg_opt, cfg_bloom, cfg_gpt_neo, cfg_mpt, cfg_xglm, cfg_neox_jp, cfg_gpt1): each class's
 *   keys (and its attribute_map's other names) and defaults, their positions (learned,
 *   sinusoidal or ALiBi), norms and biases; what their arch cannot describe is refused.
 * whisper: see cfg_whisper (an audio encoder-decoder: 1500 source frames, 448 target tokens).
 * vit, clip_vision_model, siglip_vision_model: see cfg_vision and cfg_vit (an encoder whose
 *   sequence is the image's patches, no vocabulary); clip, siglip: cfg_dual (the text tower
 *   is the arch, the vision tower's parameters extra); llava, qwen2_vl, qwen2_5_vl, qwen3_vl,
 *   gemma3, mistral3, llama4, qwen2_audio: cfg_vlm (the language model of text_config is the
 *   arch, the vision or audio tower and projector extra, m->image_tokens per image).
 * modernbert: cfg_modernbert (an encoder: no KV cache; its MaskedLM head tied).
 *
 * Encoder-only (family ENCODER), PLAIN MLP, LAYER norm, biases everywhere, EMB_NORM:
 *   bert (BertConfig): layers 12, hidden 768, heads 12, intermediate 3072, vocab 30522,
 *     max_position_embeddings 512 (learned: positions; context the same), type_vocab_size 2.
 *   roberta (RobertaConfig): as bert, vocab 50265. xlm-roberta (XLMRobertaConfig): as bert.
 *     Both offset positions by padding_idx + 1 = 2, so context = max_position_embeddings - 2.
 *   distilbert (DistilBertConfig): n_layers 6, dim 768, n_heads 12, hidden_dim 3072, vocab
 *     30522, max_position_embeddings 512 (a table even when sinusoidal_pos_embds fills it),
 *     no token types.
 *   The head follows architectures[0] (the class the checkpoint was saved from):
 *     *ForMaskedLM      the vocabulary head is the word embedding (TIED unless
 *                       tie_word_embeddings is false); extra_params = its transform
 *                       hidden^2 + hidden (dense) + 2 x hidden (LayerNorm) + vocab (bias)
 *     *Model            NO_HEAD; bert/roberta/xlm-roberta keep their pooler: extra_params =
 *                       hidden^2 + hidden (distilbert has none)
 *     *ForSequenceClassification  NO_HEAD; extra_params = hidden^2 + hidden (pooler,
 *                       RoBERTa's dense or DistilBERT's pre_classifier) + hidden x labels +
 *                       labels, labels = entries of id2label, else num_labels, else 2
 *     *ForTokenClassification     NO_HEAD; extra_params = hidden x labels + labels
 *     anything else     NO_HEAD, extra_params 0, with a note
 *
 * Encoder-decoder (family ENCODER_DECODER): encoder_layers, decoder_layers, d_model,
 *   encoder_attention_heads, encoder_ffn_dim (intermediate), decoder_ffn_dim
 *   (decoder_intermediate), vocab_size, max_position_embeddings (context); one embedding
 *   shared by both stacks and, when tie_word_embeddings is absent or true (PretrainedConfig),
 *   the head (TIED); PLAIN MLP, LAYER norm, biases everywhere:
 *   m2m_100 (M2M100Config; NLLB's configs say m2m_100): vocab 128112, d_model 1024, 12 + 12
 *     layers, 16 heads, ffn 4096 + 4096, max_position_embeddings 1024; sinusoidal positions
 *     (positions 0); FINAL_NORM (each stack's layer_norm).
 *   bart (BartConfig): the same defaults with vocab 50265; learned positions offset by 2
 *     (positions = max_position_embeddings + 2), EMB_NORM (layernorm_embedding), no final
 *     norm. positions and EMB_NORM describe the encoder's; the decoder's own table and norm
 *     ((max_position_embeddings + 2) x d_model + 2 x d_model) are in extra_params.
 *   t5 (T5Config): num_layers 6, num_decoder_layers null -> num_layers, d_model 512, num_heads
 *     8, d_kv 64 (head_dim), d_ff 2048, vocab 32128, feed_forward_proj "relu" ("gated-*":
 *     GATED), tie_word_embeddings true; RMS norm, no biases, FINAL_NORM; relative position
 *     buckets (relative_attention_num_buckets 32) x heads in each stack's first block, in
 *     extra_params; context from n_positions when present.
 *   mt5 (MT5Config): as t5 with vocab 250112, d_ff 1024, num_layers 8, num_heads 6,
 *     feed_forward_proj "gated-gelu", tie_word_embeddings false.
 *
 * Mixtures of experts: the table's rows say which key counts the experts, the top-k, the
 * routed and shared widths and which blocks route (model_arch.h vram__moe); a top-k above the
 * expert count is an error; DeepSeek's moe_layer_freq routes block i from
 * first_k_dense_replace on when i % moe_layer_freq == 0 (its own code's rule; a note when it
 * is not 1, since transformers' classes ignore it). gpt_oss's routed experts are MXFP4 when quantization_config.quant_method
 * is "mxfp4" (expert_format). Other mixture-of-experts types (dbrx, nllb-moe,
 * switch_transformers), and any config of a type without experts in its row with an expert
 * count key (num_local_experts, num_experts, n_routed_experts, moe_num_experts) above 1, are
 * not modelled: family NONE with a note (a tensor list, when present, is still counted).
 *
 * Fallback for a model_type not in the table, on the keys present, with a note saying so:
 *   a key that says the model has what no guessed reading counts (cfg_unseen: Mamba/SSM or
 *     linear-attention keys, per-layer embeddings or widths, recurrent, looped or mixed
 *     blocks, latent attention, a nested vision/audio tower, factorized embeddings, adapters,
 *     a layer_types entry that is no attention block) -> family NONE, the key named;
 *   d_model, encoder_layers, decoder_layers, encoder_attention_heads, encoder_ffn_dim and
 *     vocab_size all present -> read as m2m_100 (no position table assumed);
 *   num_hidden_layers, hidden_size, num_attention_heads, intermediate_size and vocab_size all
 *     present -> read as bert when the class is an encoder's (ForMaskedLM, For*Classification,
 *     ForQuestionAnswering, ForMultipleChoice, ForPreTraining) or is_decoder is false with no
 *     generating class (no KV cache); else as llama (gated MLP, RMS norm, no biases), untied
 *     unless tie_word_embeddings is true (untied counts the larger model);
 *   otherwise family NONE. Nothing is guessed from a partial set of keys. A guess sets
 *   m->guess_low and m->guess_high to the fewest and most parameters the keys allow
 *   (cfg_guess_range: plain or gated MLP, tied or untied head, biases or none, norms without
 *   weights or two LayerNorms a block, a dense transform before the head or none), which the
 *   estimate's range spans, and the note says what it was read as and that range.
 *
 * torch_dtype (or "dtype", transformers >= 4.56): float32, float16, bfloat16, float64,
 * float8_e4m3fn, float8_e5m2 (a "torch." prefix is allowed); "auto", null or another name
 * leave m->dtype NONE. quantization_config.quant_method "fp8" makes it float8_e4m3fn. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "model_arch.h"
#include "model_config.h"
#include "util/json.h"

typedef struct cfg {
    const cJSON *doc;
    const char *label;
    char *err;
    size_t errcap;
} cfg;

static const cJSON *cfg_get(const cfg *c, const char *key) {
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(c->doc, key);
    return cJSON_IsNull(j) ? NULL : j;
}

static int cfg_has(const cfg *c, const char *key) { return cfg_get(c, key) != NULL; }

/* A number's item: *j NULL when absent or null; an error when it is not a number. */
static vram_status cfg_number(const cfg *c, const char *key, const cJSON **j) {
    *j = cfg_get(c, key);
    if (*j != NULL && !cJSON_IsNumber(*j))
        return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label, "%s is %s, not a number", key,
                          vram__json_type(*j));
    return VRAM_OK;
}

/* The value readers below (cfg_num, cfg_bool, cfg_int, ...) write their output on every path,
 * def on an error: callers chain them in one condition and use the outputs after it, and an
 * output left unwritten on a path the compiler cannot rule out (it cannot see that vram__fail
 * never returns VRAM_OK) is what -Wmaybe-uninitialized reports at -O3. */

/* An architecture number: absent or null -> def; else an exact integer in [min, limit]. */
static vram_status cfg_num(const cfg *c, const char *key, uint64_t def, uint64_t min,
                           uint64_t limit, uint64_t *out) {
    char num[40];
    const cJSON *j;
    vram_status st = cfg_number(c, key, &j);
    *out = def;
    if (st != VRAM_OK || j == NULL) return st;
    double v = j->valuedouble;
    uint64_t u;
    if (v < 0)
        return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label,
                          "%s is %s: negative, not a positive integer", key,
                          vram__fmt_double(v, num));
    if (v > (double)limit)
        return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label,
                          "%s is %s, over the limit of %llu", key, vram__fmt_double(v, num),
                          (unsigned long long)limit);
    if (!vram__json_exact_u64(v, &u))
        return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label, "%s is %s, not an integer",
                          key, vram__fmt_double(v, num));
    if (u < min)
        return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label,
                          "%s is %llu, not a positive integer", key, (unsigned long long)u);
    *out = u;
    return VRAM_OK;
}

static vram_status cfg_bool(const cfg *c, const char *key, int def, int *out) {
    const cJSON *j = cfg_get(c, key);
    *out = def;
    if (j == NULL) return VRAM_OK;
    if (!cJSON_IsBool(j))
        return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label, "%s is %s, not true or false",
                          key, vram__json_type(j));
    *out = cJSON_IsTrue(j);
    return VRAM_OK;
}

/* A parameter count for a note: "2.78B", "241.7M", "52.1K". */
static const char *cfg_params_text(uint64_t n, char *buf, size_t cap) {
    if (n >= 1000000000u) snprintf(buf, cap, "%.2fB", (double)n / 1e9);
    else if (n >= 1000000u) snprintf(buf, cap, "%.1fM", (double)n / 1e6);
    else snprintf(buf, cap, "%.1fK", (double)n / 1e3);
    return buf;
}

/* heads and kv heads agree with each other and with hidden when head_dim is not given. */
static vram_status cfg_heads_check(const cfg *c, const vram_arch *a, const char *hidden_key,
                                   const char *heads_key) {
    if (a->kv_heads != 0 && a->heads % a->kv_heads != 0)
        return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label,
                          "%s %llu is not a multiple of num_key_value_heads %llu", heads_key,
                          (unsigned long long)a->heads, (unsigned long long)a->kv_heads);
    if (a->kv_heads > a->heads)
        return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label,
                          "num_key_value_heads %llu is more than %s %llu",
                          (unsigned long long)a->kv_heads, heads_key, (unsigned long long)a->heads);
    if (a->head_dim == 0 && a->hidden % a->heads != 0)
        return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label,
                          "%s %llu is not a multiple of %s %llu (and no head_dim is given)",
                          hidden_key, (unsigned long long)a->hidden, heads_key,
                          (unsigned long long)a->heads);
    return VRAM_OK;
}

/* The six keys most config classes share, with the class's defaults: num_hidden_layers,
 * hidden_size, num_attention_heads, intermediate_size, vocab_size and
 * max_position_embeddings (-> context). */
static vram_status cfg_common(const cfg *c, uint64_t layers, uint64_t hidden, uint64_t heads,
                              uint64_t inter, uint64_t vocab, uint64_t max_pos, vram_arch *a) {
    vram_status st;
    if ((st = cfg_num(c, "num_hidden_layers", layers, 1, VRAM_LIMIT_LAYERS, &a->layers)) ||
        (st = cfg_num(c, "hidden_size", hidden, 1, VRAM_LIMIT_HIDDEN, &a->hidden)) ||
        (st = cfg_num(c, "num_attention_heads", heads, 1, VRAM_LIMIT_HEADS, &a->heads)) ||
        (st = cfg_num(c, "intermediate_size", inter, 1, VRAM_LIMIT_INTERMEDIATE,
                      &a->intermediate)) ||
        (st = cfg_num(c, "vocab_size", vocab, 1, VRAM_LIMIT_VOCAB, &a->vocab)))
        return st;
    return cfg_num(c, "max_position_embeddings", max_pos, 1, VRAM_LIMIT_CONTEXT, &a->context);
}

/* ---- decoders ------------------------------------------------------------------------ */

/* A signed integer in [min, max], min < 0 (ERNIE's moe_layer_end_index: -1 = the last
 * block): a negative one here, the others as cfg_num reads them. */
static vram_status cfg_int(const cfg *c, const char *key, int64_t def, int64_t min, int64_t max,
                           int64_t *out) {
    char num[40];
    const cJSON *j = cfg_get(c, key);
    uint64_t u;
    vram_status st;
    *out = def;
    if (cJSON_IsNumber(j) && j->valuedouble < 0) {
        const double v = j->valuedouble;
        if (v < (double)min || v != (double)(int64_t)v)
            return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label,
                              "%s is %s, not an integer in %lld..%lld", key,
                              vram__fmt_double(v, num), (long long)min, (long long)max);
        *out = (int64_t)v;
        return VRAM_OK;
    }
    if ((st = cfg_num(c, key, def < 0 ? 0u : (uint64_t)def, 0, (uint64_t)max, &u)) != VRAM_OK)
        return st;
    *out = j == NULL ? def : (int64_t)u;
    return VRAM_OK;
}

/* A list of block indices (mlp_only_layers, moe_layers): absent or null -> *n = 0 and
 * *present = 0; each entry an integer in 0..layers-1 (an error names the entry). in_list,
 * when not NULL, marks the blocks listed (layers entries). */
static vram_status cfg_block_list(const cfg *c, const char *key, uint64_t layers,
                                  unsigned char *in_list, uint64_t *n, int *present) {
    char num[40];
    const cJSON *l = cfg_get(c, key), *e;
    uint64_t u;
    *n = 0;
    *present = l != NULL;
    if (l == NULL) return VRAM_OK;
    if (!cJSON_IsArray(l))
        return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label,
                          "%s is %s, not a list of block indices", key, vram__json_type(l));
    cJSON_ArrayForEach(e, l) {
        if (!cJSON_IsNumber(e))
            return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label,
                              "%s holds %s, not a block index", key, vram__json_type(e));
        if (e->valuedouble < 0 || e->valuedouble >= (double)layers ||
            !vram__json_exact_u64(e->valuedouble, &u))
            return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label,
                              "%s holds %s, not a block index in 0..%llu", key,
                              vram__fmt_double(e->valuedouble, num),
                              (unsigned long long)(layers - 1));
        if (in_list != NULL && !in_list[u]) {
            in_list[u] = 1;
            (*n)++;
        } else if (in_list == NULL) {
            (*n)++;
        }
    }
    return VRAM_OK;
}

/* A per-block list (layer_types, mlp_layer_types) of n entries where there are `layers`
 * blocks: the error. */
static vram_status cfg_per_block(const cfg *c, const char *key, uint64_t n, uint64_t layers) {
    return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label,
                      "%s has %llu entries, not one per block (%llu)", key, (unsigned long long)n,
                      (unsigned long long)layers);
}

/* layer_types (absent: *given 0): one entry per block; a block whose entry is a recurrent
 * mixer's word ("mamba", "linear_attention", "conv") counts in *mixers, one with attention
 * ("attention", "full_attention", "sliding_attention") in *sliding when it slides. Anything
 * else, or a list of another length, is an error. */
static vram_status cfg_layer_types(const cfg *c, uint64_t layers, int *given, uint64_t *mixers,
                                   uint64_t *sliding) {
    char q[VRAM__QUOTE_CAP];
    static const char *const mix_words[] = {"mamba", "linear_attention", "conv"};
    static const char *const attn_words[] = {"attention", "full_attention", "sliding_attention",
                                             "chunked_attention"};
    const cJSON *lt = cfg_get(c, "layer_types"), *e;
    uint64_t i = 0;
    *given = 0;
    *mixers = *sliding = 0;
    if (lt == NULL) return VRAM_OK;
    if (!cJSON_IsArray(lt))
        return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label,
                          "layer_types is %s, not a list", vram__json_type(lt));
    cJSON_ArrayForEach(e, lt) {
        int known = 0;
        for (size_t k = 0; cJSON_IsString(e) && k < 4; k++) {
            if (k < 3 && strcmp(e->valuestring, mix_words[k]) == 0) {
                (*mixers)++;
                known = 1;
            }
            if (strcmp(e->valuestring, attn_words[k]) == 0) {
                *sliding += k >= 2; /* sliding, or Llama 4's chunks: a window either way */
                known = 1;
            }
        }
        if (!known)
            return vram__fail(
                c->err, c->errcap, VRAM_E_FORMAT, c->label,
                "layer_types[%llu] is %s, not a kind of block vramkit knows (\"full_attention\", "
                "\"sliding_attention\", \"chunked_attention\", \"attention\", \"mamba\", "
                "\"linear_attention\", \"conv\")",
                (unsigned long long)i,
                cJSON_IsString(e) ? vram__quote(e->valuestring, strlen(e->valuestring), q)
                                  : vram__json_type(e));
        i++;
    }
    if (i != layers) return cfg_per_block(c, "layer_types", i, layers);
    *given = 1;
    return VRAM_OK;
}

/* Sliding-window attention: which blocks attend over the last sliding_window tokens only,
 * as transformers builds them (and as llama.cpp's hard-coded patterns agree), by the row's
 * rule (model_arch.h):
 *   gpt_oss      sliding_window 128, layer_types default: blocks 0, 2, 4, ... sliding
 *                (GptOssConfig: (i + 1) % 2 != 0)
 *   gemma2       sliding_window 4096, blocks 0, 2, 4, ... (Gemma2Config's layer_types;
 *                older modeling_gemma2.py: `not bool(layer_idx % 2)`)
 *   gemma3_text  sliding_window 4096, sliding_window_pattern 6: every block but each 6th,
 *   cohere2      (i + 1) % pattern != 0 (Gemma3TextConfig; Cohere2Config with pattern 4)
 *   exaone_moe   the same with 4, or its string of L (sliding) and G, one a block, repeated
 *                ("LLLG", as EXAONE's published configs write it beside layer_types)
 *   mistral      sliding_window 4096 (MistralConfig): every block; null: none (v0.2 on)
 *   qwen2, qwen3 only with use_sliding_window (default false; else sliding_window is
 *                None): the blocks from max_window_layers (default 28) on (Qwen2Config,
 *                Qwen3Config)
 *   llama4_text  attention_chunk_size 8192 (null: none), every block but each 4th: those
 *                no_rope_layers marks 1 (Llama4TextConfig: chunked_attention where the
 *                block has rotary embeddings); after a prefill a chunked block keeps at
 *                most a chunk, as a sliding one keeps its window
 * A layer_types list, when present, says it per block (cfg_layer_types). sliding_window
 * null: no window. Other types: none. */
static vram_status cfg_swa(const cfg *c, const vram__arch_row *r, vram_arch *a) {
    uint64_t def = r->window, window = 0, every = r->every, from = 0, wl = 0, typed = 0, mixers;
    uint64_t listed = 0; /* sliding blocks a per-block key says (EXAONE's letters, Llama 4's
                            no_rope_layers), when have_list */
    int use = 1, have_types = 0, have_list = 0;
    vram_status st;
    switch (r->swa) {
    case VRAM__SWA_EVERY: break;
    case VRAM__SWA_PATTERN: {
        /* a number, or EXAONE's string of L (local: sliding) and G (global), one a block,
           repeated: "LLLG" is 4 */
        const cJSON *jp = cfg_get(c, "sliding_window_pattern");
        if (cJSON_IsString(jp)) {
            const char *p = jp->valuestring;
            const size_t n = strlen(p);
            char q[VRAM__QUOTE_CAP];
            if (n == 0 || n > VRAM_LIMIT_LAYERS || strspn(p, "LG") != n)
                return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label,
                                  "sliding_window_pattern is %s, not a number or a string of L "
                                  "(sliding) and G (global)",
                                  vram__quote(p, n, q));
            for (uint64_t i = 0; i < a->layers; i++) listed += p[i % n] == 'L';
            have_list = 1;
            break;
        }
        if ((st = cfg_num(c, "sliding_window_pattern", r->every, 1, VRAM_LIMIT_LAYERS, &every)) !=
            VRAM_OK)
            return st;
        break;
    }
    case VRAM__SWA_ALL: every = 0; break;
    case VRAM__SWA_CHUNKED: {
        const cJSON *nr = cfg_get(c, "no_rope_layers"), *e;
        uint64_t n = 0;
        if (nr == NULL) break; /* the default: all but each every-th */
        if (!cJSON_IsArray(nr))
            return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label,
                              "no_rope_layers is %s, not a list", vram__json_type(nr));
        cJSON_ArrayForEach(e, nr) {
            if (!cJSON_IsNumber(e) || (e->valuedouble != 0 && e->valuedouble != 1))
                return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label,
                                  "no_rope_layers[%llu] is not 0 or 1", (unsigned long long)n);
            listed += e->valuedouble == 1; /* chunked (unless layer_types says) */
            n++;
        }
        if (n != a->layers) return cfg_per_block(c, "no_rope_layers", n, a->layers);
        have_list = 1;
        break;
    }
    case VRAM__SWA_QWEN:
        every = 0;
        if ((st = cfg_bool(c, "use_sliding_window", 0, &use)) ||
            (st = cfg_num(c, "max_window_layers", 28, 0, VRAM_LIMIT_LAYERS, &from)))
            return st;
        break;
    default: return VRAM_OK;
    }
    if ((st = cfg_layer_types(c, a->layers, &have_types, &mixers, &typed)) != VRAM_OK) return st;
    const char *wkey = r->swa == VRAM__SWA_CHUNKED ? "attention_chunk_size" : "sliding_window";
    const cJSON *jw = cJSON_GetObjectItemCaseSensitive(c->doc, wkey);
    if (!use || cJSON_IsNull(jw)) return VRAM_OK; /* no window */
    if ((st = cfg_num(c, wkey, def, 1, VRAM_LIMIT_CONTEXT, &window)) != VRAM_OK) return st;
    if (have_types)
        wl = typed;
    else if (have_list)
        wl = listed;
    else if (every != 0)
        wl = a->layers - a->layers / every; /* all but each every-th (every 1: none) */
    else
        wl = a->layers > from ? a->layers - from : 0u;
    a->sliding_window = wl != 0 ? window : 0u;
    a->window_layers = wl;
    return VRAM_OK;
}

/* A rank that may be null on purpose (DeepSeek-V2-Lite's q_lora_rank: no q compression):
 * null -> 0, absent -> def. */
static vram_status cfg_rank(const cfg *c, const char *key, uint64_t def, uint64_t *out) {
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(c->doc, key);
    if (j != NULL && cJSON_IsNull(j)) {
        *out = 0;
        return VRAM_OK;
    }
    return cfg_num(c, key, def, 1, VRAM_LIMIT_HIDDEN, out);
}

/* gpt-oss's quantization_config.quant_method "mxfp4": its routed experts are MXFP4. */
static int cfg_mxfp4(const cfg *c) {
    const cJSON *q = cfg_get(c, "quantization_config");
    const cJSON *m = cJSON_IsObject(q) ? cJSON_GetObjectItemCaseSensitive(q, "quant_method") : NULL;
    return cJSON_IsString(m) && strcmp(m->valuestring, "mxfp4") == 0;
}

/* DeepSeek's latent attention (vram_arch): q_lora_rank (null: q projected directly),
 * kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim; head_dim = nope + rope. */
static vram_status cfg_mla(const cfg *c, const vram__arch_row *r, vram_arch *a) {
    vram_status st;
    uint64_t nope = 0;
    if ((st = cfg_rank(c, "q_lora_rank", r->q_lora, &a->q_lora_rank)) ||
        (st = cfg_num(c, "kv_lora_rank", r->kv_lora, 1, VRAM_LIMIT_HIDDEN, &a->kv_lora_rank)) ||
        (st = cfg_num(c, "qk_nope_head_dim", r->nope, 1, VRAM_LIMIT_HIDDEN, &nope)) ||
        (st = cfg_num(c, "qk_rope_head_dim", r->rope, 1, VRAM_LIMIT_HIDDEN, &a->rope_dim)) ||
        (st = cfg_num(c, "v_head_dim", r->v, 1, VRAM_LIMIT_HIDDEN, &a->v_head_dim)))
        return st;
    a->head_dim = nope + a->rope_dim;
    if (a->head_dim > VRAM_LIMIT_HIDDEN / a->heads || a->v_head_dim > VRAM_LIMIT_HIDDEN / a->heads)
        return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label,
                          "%llu heads of qk_nope_head_dim + qk_rope_head_dim %llu (or "
                          "v_head_dim %llu) are over the width limit of %llu",
                          (unsigned long long)a->heads, (unsigned long long)a->head_dim,
                          (unsigned long long)a->v_head_dim,
                          (unsigned long long)VRAM_LIMIT_HIDDEN);
    return VRAM_OK;
}

/* A list of one word a block, each `yes` or `no` (mlp_layer_types' "sparse" / "dense",
 * indexer_types' "full" / "shared"): *yes_n the `yes` ones. Absent: *present 0, *yes_n
 * unchanged; not a list, another word, or not one per block: an error naming the key. */
static vram_status cfg_word_per_block(const cfg *c, const char *key, const char *yes,
                                      const char *no, uint64_t layers, uint64_t *yes_n,
                                      int *present) {
    const cJSON *lt = cfg_get(c, key), *e;
    uint64_t i = 0, n = 0;
    *present = lt != NULL;
    if (lt == NULL) return VRAM_OK;
    if (!cJSON_IsArray(lt))
        return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label, "%s is %s, not a list", key,
                          vram__json_type(lt));
    cJSON_ArrayForEach(e, lt) {
        const int y = cJSON_IsString(e) && strcmp(e->valuestring, yes) == 0;
        if (!y && !(cJSON_IsString(e) && strcmp(e->valuestring, no) == 0))
            return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label,
                              "%s[%llu] is not \"%s\" or \"%s\"", key, (unsigned long long)i, no,
                              yes);
        n += y;
        i++;
    }
    if (i != layers) return cfg_per_block(c, key, i, layers);
    *yes_n = n;
    return VRAM_OK;
}

/* mlp_layer_types (DeepseekV32Config; transformers' modeling builds by it when given): one
 * "dense" or "sparse" a block; *moe_n the sparse ones. Absent: *moe_n unchanged. */
static vram_status cfg_mlp_layer_types(const cfg *c, uint64_t layers, uint64_t *moe_n) {
    int present;
    return cfg_word_per_block(c, "mlp_layer_types", "sparse", "dense", layers, moe_n, &present);
}

/* How many blocks route to experts, by the row's rule (model_arch.h vram__moe); *freq:
 * DeepSeek's moe_layer_freq (1 for the other rules). */
static vram_status cfg_moe_blocks(const cfg *c, const vram__arch_row *r, const vram_arch *a,
                                  uint64_t *moe_n, uint64_t *freq) {
    const uint64_t L = a->layers;
    uint64_t k = 0, step = 1, off = 0, listed = 0;
    int64_t start = 0, end = -1;
    int present = 0;
    vram_status st = VRAM_OK;
    *freq = 1;
    *moe_n = L;
    switch (r->moe) {
    case VRAM__MOE_FIRST_DENSE:
        if ((st = cfg_num(c, "first_k_dense_replace", r->dense_def, 0, VRAM_LIMIT_LAYERS, &k)))
            return st;
        if (k > L)
            return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label,
                              "first_k_dense_replace %llu is more than num_hidden_layers %llu",
                              (unsigned long long)k, (unsigned long long)L);
        /* DeepSeek's own modelling code (and vLLM's, SGLang's): block i routes when
           i >= first_k_dense_replace and i % moe_layer_freq == 0 */
        if (r->mla && (st = cfg_num(c, "moe_layer_freq", 1, 1, VRAM_LIMIT_LAYERS, freq))) return st;
        *moe_n = 0;
        for (uint64_t i = k; i < L; i++)
            *moe_n += i % *freq == 0;
        return cfg_mlp_layer_types(c, L, moe_n);
    case VRAM__MOE_SPARSE_STEP: {
        unsigned char *dense = calloc(L, 1);
        if (dense == NULL)
            return vram__fail(c->err, c->errcap, VRAM_E_NOMEM, c->label, "out of host memory");
        if ((st = cfg_num(c, "decoder_sparse_step", 1, 1, VRAM_LIMIT_LAYERS, &step)) == VRAM_OK)
            st = cfg_block_list(c, "mlp_only_layers", L, dense, &listed, &present);
        *moe_n = 0;
        for (uint64_t i = 0; i < L && st == VRAM_OK; i++)
            *moe_n += !dense[i] && (i + 1) % step == 0;
        free(dense);
        return st;
    }
    case VRAM__MOE_INTERLEAVE: {
        unsigned char *moe = calloc(L, 1);
        if (moe == NULL)
            return vram__fail(c->err, c->errcap, VRAM_E_NOMEM, c->label, "out of host memory");
        st = cfg_block_list(c, "moe_layers", L, moe, &listed, &present);
        free(moe);
        if (st != VRAM_OK) return st;
        if (present) {
            *moe_n = listed;
            return VRAM_OK;
        }
        if ((st = cfg_num(c, "interleave_moe_layer_step", 1, 1, VRAM_LIMIT_LAYERS, &step)))
            return st;
        *moe_n = L / step; /* blocks step - 1, 2 step - 1, ... */
        return VRAM_OK;
    }
    case VRAM__MOE_PERIOD:
        if ((st = cfg_num(c, "expert_layer_period", 2, 1, VRAM_LIMIT_LAYERS, &step)) ||
            (st = cfg_num(c, "expert_layer_offset", 1, 0, VRAM_LIMIT_LAYERS, &off)))
            return st;
        *moe_n = 0;
        for (uint64_t i = 0; i < L; i++)
            *moe_n += i % step == off;
        return VRAM_OK;
    case VRAM__MOE_ERNIE:
        if ((st = cfg_num(c, "moe_layer_interval", 1, 1, VRAM_LIMIT_LAYERS, &step)) ||
            (st = cfg_int(c, "moe_layer_start_index", 1, -1, VRAM_LIMIT_LAYERS, &start)) ||
            (st = cfg_int(c, "moe_layer_end_index", -1, -1, VRAM_LIMIT_LAYERS, &end)))
            return st;
        if (end < 0) end = (int64_t)L - 1;
        *moe_n = 0;
        for (uint64_t i = 0; i < L; i++)
            *moe_n += (i + 1) % step == 0 && (int64_t)i >= start && (int64_t)i <= end;
        return VRAM_OK;
    case VRAM__MOE_LAYER_TYPES:
        *moe_n = L - (r->dense_def < L ? r->dense_def : L);
        return cfg_mlp_layer_types(c, L, moe_n);
    default: return VRAM_OK; /* every block */
    }
}

/* The experts of a decoder row: count, top-k, widths, which blocks (cfg_moe_blocks). */
static vram_status cfg_experts(const cfg *c, const vram__arch_row *r, vram_arch *a, char *note,
                               size_t notecap, int *unknown) {
    vram_status st;
    uint64_t topk, shared = 0, moe_n = 0, freq = 1;
    const uint64_t min_experts = r->mix == VRAM__MIX_GRANITE ? 0 : 1;
    *unknown = 0;
    const char *experts_key = r->experts_alt != NULL && !cfg_has(c, r->experts_key) &&
                                      cfg_has(c, r->experts_alt)
                                  ? r->experts_alt
                                  : r->experts_key;
    if ((st = cfg_num(c, experts_key, r->experts, min_experts, VRAM_ARCH_MAX_EXPERTS,
                      &a->experts)) != VRAM_OK)
        return st;
    /* gpt-oss's first configs name the top-k experts_per_token */
    const char *topk_key = r->topk_key != NULL ? r->topk_key
                           : r->gguf_kind == VRAM__GGUF_OSS && !cfg_has(c, "num_experts_per_tok") &&
                                   cfg_has(c, "experts_per_token")
                               ? "experts_per_token"
                               : "num_experts_per_tok";
    if ((st = cfg_num(c, topk_key, r->topk, 1, VRAM_ARCH_MAX_EXPERTS, &topk)) != VRAM_OK) return st;
    if (topk > a->experts && a->experts != 0)
        return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label,
                          "%s %llu is more than %s %llu", topk_key, (unsigned long long)topk,
                          experts_key, (unsigned long long)a->experts);
    if (a->experts == 0) return VRAM_OK; /* Granite-4.0-H without experts: dense */
    a->experts_per_token = topk;
    if (r->xinter_key != NULL &&
        (st = cfg_num(c, r->xinter_key, r->xinter, 1, VRAM_LIMIT_INTERMEDIATE,
                      &a->expert_intermediate)) != VRAM_OK)
        return st;
    const uint64_t xw = a->expert_intermediate != 0 ? a->expert_intermediate : a->intermediate;
    const char *shared_key = r->shared_alt != NULL && !cfg_has(c, r->shared_key) &&
                                     cfg_has(c, r->shared_alt)
                                 ? r->shared_alt
                                 : r->shared_key;
    switch (r->shared) {
    case VRAM__SHARED_N_EXPERTS:
    case VRAM__SHARED_ERNIE:
        if ((st = cfg_num(c, shared_key, r->shared_def, 0, VRAM_ARCH_MAX_EXPERTS, &shared)))
            return st;
        if (shared * xw > VRAM_LIMIT_INTERMEDIATE)
            return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label,
                              "%s %llu x %s %llu is over the limit of %llu", shared_key,
                              (unsigned long long)shared,
                              r->xinter_key != NULL ? r->xinter_key : "intermediate_size",
                              (unsigned long long)xw, (unsigned long long)VRAM_LIMIT_INTERMEDIATE);
        a->shared_intermediate = shared * xw;
        break;
    case VRAM__SHARED_KEY: /* a row whose default is 0 (GraniteMoeShared): 0 is none */
        if ((st = cfg_num(c, shared_key, r->shared_def, r->shared_def != 0 ? 1 : 0,
                          VRAM_LIMIT_INTERMEDIATE, &a->shared_intermediate)))
            return st;
        break;
    case VRAM__SHARED_ONE: a->shared_intermediate = xw; break;
    default: break;
    }
    if ((st = cfg_moe_blocks(c, r, a, &moe_n, &freq)) != VRAM_OK) return st;
    a->dense_layers = a->layers - moe_n;
    if (freq != 1)
        snprintf(note, notecap,
                 "%s: moe_layer_freq %llu: experts in %llu of the %llu blocks (those from "
                 "first_k_dense_replace on whose index is a multiple of it), as DeepSeek's own "
                 "modelling code and vLLM build it; transformers' DeepseekV2/V3 classes ignore "
                 "the key and put experts in every block from first_k_dense_replace on",
                 c->label, (unsigned long long)freq, (unsigned long long)moe_n,
                 (unsigned long long)a->layers);
    return VRAM_OK;
}

/* "auto" (a string) -> def, else an integer in 1..limit: Mamba's time_step_rank and
 * mamba_d_head. */
static vram_status cfg_auto(const cfg *c, const char *key, uint64_t def, uint64_t limit,
                            uint64_t *out) {
    const cJSON *j = cfg_get(c, key);
    if (cJSON_IsString(j) && strcmp(j->valuestring, "auto") == 0) {
        *out = def;
        return VRAM_OK;
    }
    return cfg_num(c, key, def, 1, limit, out);
}

/* The recurrent mixer of a row (model_arch.h vram__mix), as transformers builds it:
 *   mamba, falcon_mamba (MambaMixer): e = intermediate_size (absent: expand x hidden),
 *     in_proj hidden -> 2e, a depthwise conv of e channels and conv_kernel taps, x_proj
 *     e -> time_step_rank + 2 state_size, dt_proj rank -> e (with bias), A_log e x state, D
 *     e, out_proj e -> hidden; use_bias on in/out_proj, use_conv_bias on the conv. State:
 *     e x state_size. jamba: the same with mamba_* keys and three RMS norms (dt, B, C).
 *   mamba2, granitemoehybrid, falcon_h1 (Mamba2Mixer): e = expand x hidden (falcon_h1:
 *     mamba_d_ssm), H heads of head_dim, G groups, N state: conv_dim = e + 2 G N; in_proj
 *     hidden -> e + conv_dim + H; dt_bias, A_log, D of H; a gated RMS norm of e (falcon_h1:
 *     with mamba_rms_norm only); out_proj e -> hidden. State: H x head_dim x N.
 *   lfm2 (Lfm2ShortConv): in_proj hidden -> 3 hidden, a depthwise conv of hidden channels and
 *     conv_L_cache taps, out_proj hidden -> hidden (biases with conv_bias); no state but the
 *     convolution's.
 *   qwen3_next (Qwen3NextGatedDeltaNet; olmo_hybrid's OlmoHybridGatedDeltaNet the same
 *     numbers with its own defaults: 30 and 30 heads of 96 and 192): Hk key heads of dk, Hv
 *     value heads of dv:
 *     in_proj_qkvz hidden -> 2 Hk dk + 2 Hv dv, in_proj_ba hidden -> 2 Hv, a conv (no bias) of
 *     2 Hk dk + Hv dv channels, dt_bias and A_log of Hv, a gated norm of dv, out_proj Hv dv
 *     -> hidden. State: Hv x dk x dv.
 * Which blocks: every block (mamba, mamba2, falcon_h1 beside attention), layer_types (lfm2,
 * granitemoehybrid, qwen3_next, with their defaults), Jamba's attn_layer_period/offset,
 * bamba's attn_layer_indices (the blocks with attention; null: none, every block Mamba-2,
 * as BambaConfig's layers_block_type says). */
static vram_status cfg_mixer(const cfg *c, const vram__arch_row *r, vram_arch *a) {
    const uint64_t h = a->hidden, L = a->layers;
    uint64_t e = 0, n = 0, k = 0, rank = 0, heads = 0, hd = 0, groups = 0, expand = 0;
    uint64_t mixers = 0, sliding = 0, period = 0, off = 0, x = 0, kh = 0, vh = 0, dk = 0, dv = 0;
    int bias = 0, conv_bias = 0, out_bias = 0, gated_norm = 1, given = 0;
    vram_status st = VRAM_OK;
    switch (r->mix) {
    case VRAM__MIX_MAMBA:
    case VRAM__MIX_JAMBA: {
        const int j = r->mix == VRAM__MIX_JAMBA;
        if ((st = cfg_num(c, j ? "mamba_expand" : "expand", 2, 1, 64, &expand)) ||
            (st = cfg_num(c, j ? "mamba_d_state" : "state_size", 16, 1, VRAM_LIMIT_HIDDEN, &n)) ||
            (st = cfg_num(c, j ? "mamba_d_conv" : "conv_kernel", 4, 1, VRAM_ARCH_MAX_KERNEL, &k)) ||
            (st = cfg_auto(c, j ? "mamba_dt_rank" : "time_step_rank", (h + 15) / 16,
                           VRAM_LIMIT_HIDDEN, &rank)) ||
            (st = cfg_bool(c, j ? "mamba_proj_bias" : "use_bias", 0, &bias)) ||
            (st = cfg_bool(c, j ? "mamba_conv_bias" : "use_conv_bias", 1, &conv_bias)) ||
            (!j && (st = cfg_num(c, "intermediate_size", expand * h, 1, VRAM_LIMIT_HIDDEN, &e))))
            return st;
        if (j) e = expand * h;
        if (e > VRAM_LIMIT_HIDDEN || e * n > VRAM_ARCH_MAX_EXTRA)
            return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label,
                              "the mixer's width %llu (or its state of %llu) is over the limit",
                              (unsigned long long)e, (unsigned long long)n);
        a->mix_in = 2 * e;
        a->mix_out = e;
        a->mix_conv = e;
        a->mix_kernel = k;
        a->mix_matrix = e * (rank + 2 * n) + rank * e;
        a->mix_vectors = (bias ? 2 * e + h : 0u) + (conv_bias ? e : 0u) + e + e * n + e +
                         (j ? rank + 2 * n : 0u);
        a->mix_state = e * n;
        if (!j) {
            a->intermediate = e; /* no MLP: the mixer's inner width for the activations */
            a->mixer_layers = L;
            return VRAM_OK;
        }
        if ((st = cfg_num(c, "attn_layer_period", 8, 1, VRAM_LIMIT_LAYERS, &period)) ||
            (st = cfg_num(c, "attn_layer_offset", 4, 0, VRAM_LIMIT_LAYERS, &off)))
            return st;
        for (uint64_t i = 0; i < L; i++)
            mixers += i % period != off;
        a->mixer_layers = mixers;
        return VRAM_OK;
    }
    case VRAM__MIX_MAMBA2:
    case VRAM__MIX_GRANITE:
    case VRAM__MIX_BAMBA:
    case VRAM__MIX_FALCON_H1: {
        const int m2 = r->mix == VRAM__MIX_MAMBA2, fh = r->mix == VRAM__MIX_FALCON_H1;
        if ((st = cfg_num(c, m2 ? "num_heads" : "mamba_n_heads", 128, 1, VRAM_LIMIT_HEADS,
                          &heads)) ||
            (st = cfg_num(c, m2 ? "expand" : "mamba_expand", 2, 1, 64, &expand)) ||
            (st = cfg_num(c, m2 ? "state_size" : "mamba_d_state", m2 ? 128 : 256, 1,
                          VRAM_LIMIT_HIDDEN, &n)) ||
            (st = cfg_num(c, m2 ? "n_groups" : "mamba_n_groups", m2 ? 8 : 1, 1, VRAM_LIMIT_HEADS,
                          &groups)) ||
            (st = cfg_num(c, m2 ? "conv_kernel" : "mamba_d_conv", 4, 1, VRAM_ARCH_MAX_KERNEL, &k)) ||
            (st = cfg_bool(c, m2 ? "use_bias" : "mamba_proj_bias", 0, &bias)) ||
            (st = cfg_bool(c, m2 ? "use_conv_bias" : "mamba_conv_bias", 1, &conv_bias)))
            return st;
        e = expand * h;
        out_bias = bias;
        if (fh) {
            if ((st = cfg_rank(c, "mamba_d_ssm", 1024, &e)) ||
                (st = cfg_bool(c, "projectors_bias", 0, &out_bias)) ||
                (st = cfg_bool(c, "mamba_rms_norm", 0, &gated_norm)))
                return st;
            if (e == 0) e = expand * h;
        }
        if ((st = cfg_auto(c, m2 ? "head_dim" : "mamba_d_head", e / heads, VRAM_LIMIT_HIDDEN,
                           &hd)) != VRAM_OK)
            return st;
        if (e > VRAM_LIMIT_HIDDEN || groups * n > VRAM_LIMIT_HIDDEN || heads * hd > VRAM_LIMIT_HIDDEN)
            return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label,
                              "the mixer's width %llu, %llu groups of state %llu or %llu heads "
                              "of %llu are over the limit",
                              (unsigned long long)e, (unsigned long long)groups,
                              (unsigned long long)n, (unsigned long long)heads,
                              (unsigned long long)hd);
        x = e + 2 * groups * n; /* conv_dim */
        a->mix_in = e + x + heads;
        a->mix_out = e;
        a->mix_conv = x;
        a->mix_kernel = k;
        a->mix_vectors = 3 * heads + (gated_norm ? e : 0u) + (bias ? a->mix_in : 0u) +
                         (out_bias ? h : 0u) + (conv_bias ? x : 0u);
        a->mix_state = heads * hd * n;
        if (m2) {
            a->intermediate = e;
            a->mixer_layers = L;
            return VRAM_OK;
        }
        if (fh) {
            a->mixer_layers = L; /* beside attention (MIXER_ALSO) */
            return VRAM_OK;
        }
        if (r->mix == VRAM__MIX_BAMBA) {
            /* attention in the blocks listed (each once), Mamba-2 in the others */
            unsigned char listed[VRAM_LIMIT_LAYERS];
            uint64_t attn = 0;
            int present;
            memset(listed, 0, sizeof listed);
            if ((st = cfg_block_list(c, "attn_layer_indices", L, listed, &attn, &present)) !=
                VRAM_OK)
                return st;
            a->mixer_layers = L - attn;
            return VRAM_OK;
        }
        if ((st = cfg_layer_types(c, L, &given, &mixers, &sliding)) != VRAM_OK) return st;
        a->mixer_layers = given ? mixers : L; /* default: every block "linear_attention" */
        return VRAM_OK;
    }
    case VRAM__MIX_CONV: {
        uint64_t idx = 0;
        int present = 0;
        if ((st = cfg_num(c, "conv_L_cache", 3, 1, VRAM_ARCH_MAX_KERNEL, &k)) ||
            (st = cfg_bool(c, "conv_bias", 0, &conv_bias)) ||
            (st = cfg_layer_types(c, L, &given, &mixers, &sliding)))
            return st;
        if (!given) { /* full_attn_idxs, else every block attention */
            if ((st = cfg_block_list(c, "full_attn_idxs", L, NULL, &idx, &present)) != VRAM_OK)
                return st;
            mixers = present ? L - (idx < L ? idx : L) : 0u;
        }
        a->mix_in = 3 * h;
        a->mix_out = h;
        a->mix_conv = h;
        a->mix_kernel = k;
        a->mix_vectors = conv_bias ? 5 * h : 0u;
        a->mix_state = 0;
        a->mixer_layers = mixers;
        return VRAM_OK;
    }
    case VRAM__MIX_DELTA: {
        uint64_t every = 4;
        /* the class's defaults: Qwen3-Next's (and Qwen3.5's), else OlmoHybridConfig's */
        const int olmo = r->type != NULL && strcmp(r->type, "olmo_hybrid") == 0;
        if ((st = cfg_num(c, "linear_num_key_heads", olmo ? 30 : 16, 1, VRAM_LIMIT_HEADS, &kh)) ||
            (st = cfg_num(c, "linear_num_value_heads", olmo ? 30 : 32, 1, VRAM_LIMIT_HEADS,
                          &vh)) ||
            (st = cfg_num(c, "linear_key_head_dim", olmo ? 96 : 128, 1, VRAM_LIMIT_HIDDEN, &dk)) ||
            (st = cfg_num(c, "linear_value_head_dim", olmo ? 192 : 128, 1, VRAM_LIMIT_HIDDEN,
                          &dv)) ||
            (st = cfg_num(c, "linear_conv_kernel_dim", 4, 1, VRAM_ARCH_MAX_KERNEL, &k)) ||
            (st = cfg_layer_types(c, L, &given, &mixers, &sliding)) ||
            (!given && (st = cfg_num(c, "full_attention_interval", 4, 1, VRAM_LIMIT_LAYERS,
                                     &every))))
            return st;
        if (kh * dk > VRAM_LIMIT_HIDDEN || vh * dv > VRAM_LIMIT_HIDDEN)
            return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label,
                              "the linear attention's %llu key heads of %llu or %llu value heads "
                              "of %llu are over the width limit",
                              (unsigned long long)kh, (unsigned long long)dk,
                              (unsigned long long)vh, (unsigned long long)dv);
        if (!given) mixers = L - L / every; /* full attention in each every-th block */
        a->mix_in = 2 * kh * dk + 2 * vh * dv + 2 * vh;
        a->mix_out = vh * dv;
        a->mix_conv = 2 * kh * dk + vh * dv;
        a->mix_kernel = k;
        a->mix_vectors = 2 * vh + dv;
        a->mix_state = vh * dk * dv;
        a->mixer_layers = mixers;
        return VRAM_OK;
    }
    case VRAM__MIX_LIGHTNING: {
        const cJSON *sw = cfg_get(c, "sliding_window");
        heads = a->heads;
        hd = a->head_dim != 0 ? a->head_dim : h / heads;
        x = heads * hd;
        if ((st = cfg_layer_types(c, L, &given, &mixers, &sliding)) != VRAM_OK) return st;
        if (sw != NULL)
            return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label,
                              "sliding_window is set: its full-attention blocks would attend "
                              "through it beside the lightning ones, which vramkit does not "
                              "model");
        if (!given) mixers = L / 2; /* "linear_attention" where (i + 1) % 2 == 0 */
        if (x * hd > VRAM_ARCH_MAX_EXTRA)
            return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label,
                              "the lightning attention's state of %llu heads of %llu x %llu is "
                              "over the limit",
                              (unsigned long long)heads, (unsigned long long)hd,
                              (unsigned long long)hd);
        a->mix_in = 3 * x;
        a->mix_out = x;
        a->mix_matrix = h * x; /* output_gate */
        a->mix_vectors = x;    /* its norm */
        a->mix_state = x * hd;
        a->mixer_layers = mixers;
        a->flags |= VRAM_ARCH_STATE_COMPUTE; /* transformers keeps it in the values' format */
        return VRAM_OK;
    }
    default: return VRAM_OK;
    }
}

/* LFM2's MLP width (Lfm2MLP): with block_auto_adjust_ff_dim, 2/3 of intermediate_size, times
 * block_ffn_dim_multiplier, rounded up to block_multiple_of. */
static vram_status cfg_lfm2_ff(const cfg *c, vram_arch *a) {
    int adjust;
    uint64_t mult_of, ff = a->intermediate;
    vram_status st;
    if ((st = cfg_bool(c, "block_auto_adjust_ff_dim", 1, &adjust)) ||
        (st = cfg_num(c, "block_multiple_of", 256, 1, VRAM_LIMIT_INTERMEDIATE, &mult_of)))
        return st;
    if (!adjust) return VRAM_OK;
    ff = 2 * ff / 3;
    const cJSON *m = cfg_get(c, "block_ffn_dim_multiplier");
    if (m != NULL) {
        if (!cJSON_IsNumber(m) || !(m->valuedouble > 0 && m->valuedouble <= 64))
            return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label,
                              "block_ffn_dim_multiplier is %s, not a number in (0, 64]",
                              vram__json_type(m));
        ff = (uint64_t)(m->valuedouble * (double)ff);
        ff = mult_of * ((ff + mult_of - 1) / mult_of);
    }
    if (ff == 0 || ff > VRAM_LIMIT_INTERMEDIATE)
        return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label,
                          "the MLP's width %llu (from intermediate_size) is not within 1..%llu",
                          (unsigned long long)ff, (unsigned long long)VRAM_LIMIT_INTERMEDIATE);
    a->intermediate = ff;
    return VRAM_OK;
}

/* The blocks with an indexer of their own (VRAM__HAS_INDEXER_TYPES, GlmMoeDsaConfig): those
 * whose indexer_types entry is "full" ("shared": the previous one's top-k reused); without
 * the list, index_topk_pattern's "F"s (a string of F and S, one a block), else block i when
 * max(i - index_skip_topk_offset + 1, 0) % max(index_topk_freq, 1) == 0 (offset 2, freq 1:
 * every block), as the class's __post_init__ derives the list. */
static vram_status cfg_indexer_blocks(const cfg *c, uint64_t layers, uint64_t *n) {
    const cJSON *pat = cfg_get(c, "index_topk_pattern");
    uint64_t i = 0, full = 0, freq;
    int64_t off;
    int listed;
    vram_status st;
    *n = layers;
    if ((st = cfg_word_per_block(c, "indexer_types", "full", "shared", layers, n, &listed)) ||
        listed)
        return st;
    if (pat != NULL) {
        if (!cJSON_IsString(pat))
            return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label,
                              "index_topk_pattern is %s, not a string of F and S",
                              vram__json_type(pat));
        for (const char *p = pat->valuestring; *p != '\0'; p++, i++) {
            if (*p != 'F' && *p != 'S')
                return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label,
                                  "index_topk_pattern[%llu] is not F or S",
                                  (unsigned long long)i);
            full += *p == 'F';
        }
        if (i != layers) return cfg_per_block(c, "index_topk_pattern", i, layers);
        *n = full;
        return VRAM_OK;
    }
    if ((st = cfg_num(c, "index_topk_freq", 1, 0, VRAM_LIMIT_LAYERS, &freq)) ||
        (st = cfg_int(c, "index_skip_topk_offset", 2, -(int64_t)VRAM_LIMIT_LAYERS,
                      VRAM_LIMIT_LAYERS, &off)))
        return st;
    if (freq == 0) freq = 1;
    for (i = 0; i < layers; i++) {
        const int64_t d = (int64_t)i - off + 1;
        full += (uint64_t)(d > 0 ? d : 0) % freq == 0;
    }
    *n = full;
    return VRAM_OK;
}

/* DeepSeek-V3.2's indexer (VRAM__HAS_INDEXER) in every attention block (or those of
 * cfg_indexer_blocks), added to extra_params: index_n_heads (the row's default: 64, GLM-5's
 * 32) of index_head_dim (128) from the q latent (q_lora_rank, which it needs), one key head
 * from hidden, the key's LayerNorm, the heads' weights; and to the cache (kv_extra): its key,
 * index_head_dim numbers a token in each such block. */
static vram_status cfg_indexer(const cfg *c, const vram__arch_row *r, vram_arch *a) {
    uint64_t nh, hd, blocks = vram__arch_attn_blocks(a);
    vram_status st;
    if ((st = cfg_num(c, "index_n_heads", r->index_heads, 1, VRAM_LIMIT_HEADS, &nh)) ||
        (st = cfg_num(c, "index_head_dim", r->index_dim, 1, VRAM_LIMIT_HIDDEN, &hd)) ||
        ((r->has & VRAM__HAS_INDEXER_TYPES) &&
         (st = cfg_indexer_blocks(c, a->layers, &blocks))))
        return st;
    if (a->q_lora_rank == 0)
        return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label,
                          "q_lora_rank is null, and the indexer's queries come from it");
    if (nh * hd > VRAM_LIMIT_HIDDEN)
        return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label,
                          "index_n_heads %llu x index_head_dim %llu is over the width limit",
                          (unsigned long long)nh, (unsigned long long)hd);
    const uint64_t per = a->q_lora_rank * nh * hd + a->hidden * hd + 2 * hd + a->hidden * nh;
    a->extra_params += blocks * per;
    a->kv_extra = blocks * hd; /* its keys, which transformers' cache keeps beside the latent */
    a->index_heads = nh;       /* its scores, at inference (the estimate's working set) */
    return VRAM_OK;
}

/* The multi-token-prediction blocks of the row's mtp_key (GLM-4.5's num_nextn_predict_layers):
 * a published checkpoint holds them after the num_hidden_layers blocks, transformers neither
 * builds nor loads them, and the count (as transformers') leaves them out: a note says so,
 * appended to the note there is. Absent or 0: nothing. */
static vram_status cfg_mtp(const cfg *c, const vram__arch_row *r, const vram_arch *a, char *note,
                           size_t notecap) {
    uint64_t n;
    vram_status st;
    if (r->mtp_key == NULL) return VRAM_OK;
    if ((st = cfg_num(c, r->mtp_key, 0, 0, VRAM_LIMIT_LAYERS, &n)) != VRAM_OK || n == 0) return st;
    const size_t used = strlen(note);
    snprintf(note + used, notecap - used,
             "%s%s: %s %llu: the checkpoint's multi-token-prediction block%s (from block %llu "
             "on) %s not counted, as transformers does not build %s",
             used != 0 ? "; " : "", c->label, r->mtp_key, (unsigned long long)n,
             n == 1 ? "" : "s", (unsigned long long)a->layers, n == 1 ? "is" : "are",
             n == 1 ? "it" : "them");
    return VRAM_OK;
}

/* A mixture of experts transformers runs whole (VRAM_MOE_EVERY_EXPERT: Llama 4): a note says
 * what the activations' expected and low are, appended to the note there is. */
static void cfg_every_expert_note(const cfg *c, const vram_arch *a, char *note, size_t notecap) {
    if ((a->moe_flags & VRAM_MOE_EVERY_EXPERT) == 0 || a->experts == 0) return;
    const size_t used = strlen(note);
    snprintf(note + used, notecap - used,
             "%s%s: transformers runs all %llu experts over every token (the router's scores "
             "zero for the rest): the activations' expected is that, their low an engine that "
             "routes each token to %llu (vLLM, llama.cpp)",
             used != 0 ? "; " : "", c->label, (unsigned long long)a->experts,
             (unsigned long long)a->experts_per_token);
}

/* A decoder by its row (model_arch.h): the common keys with the row's defaults —
 * num_hidden_layers, hidden_size, num_attention_heads, num_key_value_heads (absent/null: =
 * heads), head_dim (absent/null: hidden / heads), the MLP's width (intermediate_size, or the
 * row's key), vocab_size, max_position_embeddings (-> context; rotary, so positions 0),
 * tie_word_embeddings, the attention bias key (attention_bias, or the row's: q, k, v and o;
 * ERNIE's use_bias puts them on the MLP and head too) and mlp_bias; then the experts
 * (cfg_experts), the latent attention (cfg_mla), the recurrent mixer (cfg_mixer), the sliding
 * window (cfg_swa), and the parameters of the row's VRAM__HAS_* in extra_params
 * (vram__arch_extra). A pure state-space model (mamba, mamba2) reads no attention keys: its
 * mamba2 num_heads and head_dim are the mixer's. *unknown: a layout the arch cannot describe
 * (a note, family NONE). */
static vram_status cfg_decoder(const cfg *c, const vram__arch_row *r, vram_arch *a, char *note,
                               size_t notecap, int *unknown) {
    vram_status st;
    int tie, attn_bias = 0, mlp_bias, head_bias = 0, qk_norm = 0;
    const int ssm = r->mix == VRAM__MIX_MAMBA || r->mix == VRAM__MIX_MAMBA2;
    const char *bias_key = r->bias_key != NULL ? r->bias_key : "attention_bias";
    if (r->bias_alt != NULL && !cfg_has(c, bias_key) && cfg_has(c, r->bias_alt))
        bias_key = r->bias_alt;
    const int use_bias = r->bias_key != NULL && strcmp(r->bias_key, "use_bias") == 0;
    memset(a, 0, sizeof *a);
    *unknown = 0;
    if ((st = cfg_num(c, "num_hidden_layers", r->layers, 1, VRAM_LIMIT_LAYERS, &a->layers)) ||
        (st = cfg_num(c, "hidden_size", r->hidden, 1, VRAM_LIMIT_HIDDEN, &a->hidden)) ||
        (!ssm &&
         ((st = cfg_num(c, "num_attention_heads", r->heads, 1, VRAM_LIMIT_HEADS, &a->heads)) ||
          (st = cfg_num(c, "num_key_value_heads", r->kv != 0 ? r->kv : a->heads, 1,
                        VRAM_LIMIT_HEADS, &a->kv_heads)) ||
          (!r->mla &&
           (st = cfg_num(c, "head_dim", r->head_dim, 1, VRAM_LIMIT_HIDDEN, &a->head_dim))))) ||
        (!ssm && (st = cfg_num(c, r->inter_key != NULL ? r->inter_key : "intermediate_size",
                               r->inter, 1, VRAM_LIMIT_INTERMEDIATE, &a->intermediate))) ||
        (st = cfg_num(c, "vocab_size", r->vocab, 1, VRAM_LIMIT_VOCAB, &a->vocab)) ||
        (st = cfg_num(c, "max_position_embeddings", r->max_pos, 1, VRAM_LIMIT_CONTEXT,
                      &a->context)) ||
        (st = cfg_bool(c, "tie_word_embeddings", r->tie, &tie)) ||
        (strcmp(bias_key, "-") != 0 && (st = cfg_bool(c, bias_key, r->attn_bias, &attn_bias))) ||
        (st = cfg_bool(c, "mlp_bias", 0, &mlp_bias)) ||
        ((r->has & VRAM__HAS_HEAD_BIAS) && (st = cfg_bool(c, "lm_head_bias", 0, &head_bias))) ||
        ((r->has & VRAM__HAS_QK_NORM_KEY) && (st = cfg_bool(c, "use_qk_norm", r->qk_norm_def, &qk_norm))))
        return st;
    if (ssm) a->heads = a->kv_heads = 1; /* no attention block: widths from the mixer */
    if (r->head_dim_floor && a->head_dim == 0) a->head_dim = a->hidden / a->heads;
    if (r->mla && (st = cfg_mla(c, r, a)) != VRAM_OK) return st;
    if ((st = cfg_heads_check(c, a, "hidden_size", "num_attention_heads")) != VRAM_OK) return st;
    a->family = VRAM_FAMILY_DECODER;
    a->mlp = r->mlp;
    a->norm = r->norm;
    a->flags = r->flags | (tie ? VRAM_ARCH_TIED : 0u);
    if (attn_bias)
        a->flags |= VRAM_ARCH_QKV_BIAS |
                    ((r->has & VRAM__HAS_QKV_BIAS_ONLY) ? 0u : VRAM_ARCH_OUT_BIAS);
    if (mlp_bias || (use_bias && attn_bias)) a->flags |= VRAM_ARCH_MLP_BIAS;
    if (use_bias && attn_bias) head_bias = 1;
    if (r->mix == VRAM__MIX_CONV && (st = cfg_lfm2_ff(c, a)) != VRAM_OK) return st;
    if (r->moe != VRAM__MOE_NONE) {
        if ((st = cfg_experts(c, r, a, note, notecap, unknown)) != VRAM_OK || *unknown) return st;
        a->moe_flags = r->moe_flags;
        if (r->gguf_kind == VRAM__GGUF_OSS && cfg_mxfp4(c)) a->expert_format = VRAM_DTYPE_MXFP4;
        if (r->gguf_kind == VRAM__GGUF_SHEXP && r->mla == 0 && r->shared == VRAM__SHARED_KEY) {
            /* Qwen2-MoE: q, k and v have biases unless qkv_bias is false */
            int qkv_bias;
            if ((st = cfg_bool(c, "qkv_bias", 1, &qkv_bias)) != VRAM_OK) return st;
            if (qkv_bias) a->flags |= VRAM_ARCH_QKV_BIAS;
        }
        if (r->mix == VRAM__MIX_GRANITE && a->experts == 0) {
            /* no experts: the shared MLP is the block's dense MLP */
            if ((st = cfg_num(c, r->shared_key, r->shared_def, 1, VRAM_LIMIT_INTERMEDIATE,
                              &a->intermediate)) != VRAM_OK)
                return st;
        }
    }
    if ((st = cfg_mixer(c, r, a)) != VRAM_OK || (st = cfg_swa(c, r, a)) != VRAM_OK ||
        (st = cfg_mtp(c, r, a, note, notecap)) != VRAM_OK)
        return st;
    cfg_every_expert_note(c, a, note, notecap);
    a->extra_params = vram__arch_extra(r, a, head_bias, qk_norm);
    if ((r->has & VRAM__HAS_INDEXER) && (st = cfg_indexer(c, r, a)) != VRAM_OK) return st;
    if (a->extra_params > VRAM_ARCH_MAX_EXTRA)
        return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label,
                          "its norms, gates and biases beyond the blocks' pattern (%llu "
                          "parameters) are over the limit",
                          (unsigned long long)a->extra_params);
    /* how a block computes, where it changes the activations estimate.h counts: the row's
       operations, q/k norms where the blocks have them, soft-capping where the config sets
       it (a number; the row's default when the keys are absent, as gemma2's 50 and 30;
       null: none). Read as the keys are: cfg_get takes null for absent, here they differ. */
    a->ops = r->ops & ~VRAM_OPS_SOFTCAP;
    if ((r->has & (VRAM__HAS_QK_NORM | VRAM__HAS_QK_NORM_FULL)) || qk_norm) a->ops |= VRAM_OPS_QK_NORM;
    {
        const cJSON *sa = cJSON_GetObjectItemCaseSensitive(c->doc, "attn_logit_softcapping");
        const cJSON *sf = cJSON_GetObjectItemCaseSensitive(c->doc, "final_logit_softcapping");
        if (cJSON_IsNumber(sa) || cJSON_IsNumber(sf) ||
            ((r->ops & VRAM_OPS_SOFTCAP) != 0 && (sa == NULL || sf == NULL)))
            a->ops |= VRAM_OPS_SOFTCAP;
    }
    return VRAM_OK;
}

static vram_status cfg_gpt2(const cfg *c, vram_arch *a) {
    vram_status st;
    int tie;
    memset(a, 0, sizeof *a);
    if ((st = cfg_num(c, "n_layer", 12, 1, VRAM_LIMIT_LAYERS, &a->layers)) ||
        (st = cfg_num(c, "n_embd", 768, 1, VRAM_LIMIT_HIDDEN, &a->hidden)) ||
        (st = cfg_num(c, "n_head", 12, 1, VRAM_LIMIT_HEADS, &a->heads)) ||
        (st = cfg_num(c, "n_inner", 4 * a->hidden, 1, VRAM_LIMIT_INTERMEDIATE, &a->intermediate)) ||
        (st = cfg_num(c, "n_positions", 1024, 1, VRAM_LIMIT_CONTEXT, &a->positions)) ||
        (st = cfg_num(c, "vocab_size", 50257, 1, VRAM_LIMIT_VOCAB, &a->vocab)) ||
        (st = cfg_bool(c, "tie_word_embeddings", 1, &tie)))
        return st;
    if ((st = cfg_heads_check(c, a, "n_embd", "n_head")) != VRAM_OK) return st;
    a->family = VRAM_FAMILY_DECODER;
    a->context = a->positions;
    a->mlp = VRAM_MLP_PLAIN;
    a->norm = VRAM_NORM_LAYER;
    a->flags = VRAM_ARCH_QKV_BIAS | VRAM_ARCH_OUT_BIAS | VRAM_ARCH_MLP_BIAS | VRAM_ARCH_FINAL_NORM |
               (tie ? VRAM_ARCH_TIED : 0u);
    /* activation_function gelu_new (GPT2Config's default): transformers writes it out as
       elementwise operations */
    const cJSON *af = cfg_get(c, "activation_function");
    if (af == NULL || (cJSON_IsString(af) && strcmp(af->valuestring, "gelu_new") == 0))
        a->ops |= VRAM_OPS_GELU_OPS;
    return VRAM_OK;
}

static vram_status cfg_neox(const cfg *c, vram_arch *a) {
    vram_status st;
    int tie, attn_bias;
    memset(a, 0, sizeof *a);
    if ((st = cfg_common(c, 44, 6144, 64, 24576, 50432, 2048, a)) ||
        (st = cfg_bool(c, "tie_word_embeddings", 0, &tie)) ||
        (st = cfg_bool(c, "attention_bias", 1, &attn_bias)))
        return st;
    if ((st = cfg_heads_check(c, a, "hidden_size", "num_attention_heads")) != VRAM_OK) return st;
    a->family = VRAM_FAMILY_DECODER;
    a->mlp = VRAM_MLP_PLAIN;
    a->norm = VRAM_NORM_LAYER;
    a->flags = VRAM_ARCH_MLP_BIAS | VRAM_ARCH_FINAL_NORM | (tie ? VRAM_ARCH_TIED : 0u) |
               (attn_bias ? VRAM_ARCH_QKV_BIAS | VRAM_ARCH_OUT_BIAS : 0u);
    return VRAM_OK;
}

/* phi (PhiConfig; phi-1, phi-1.5, phi-2): a parallel block, one LayerNorm feeding attention
 * and MLP; q, k, v, dense and fc1, fc2 with biases; the head has a bias (vocab, in
 * extra_params) and is untied by default; qk_layernorm adds LayerNorms over head_dim on q
 * and k (4 x head_dim a layer). */
static vram_status cfg_phi(const cfg *c, vram_arch *a) {
    vram_status st;
    int tie, qk_norm;
    memset(a, 0, sizeof *a);
    if ((st = cfg_num(c, "num_hidden_layers", 24, 1, VRAM_LIMIT_LAYERS, &a->layers)) ||
        (st = cfg_num(c, "hidden_size", 2048, 1, VRAM_LIMIT_HIDDEN, &a->hidden)) ||
        (st = cfg_num(c, "num_attention_heads", 32, 1, VRAM_LIMIT_HEADS, &a->heads)) ||
        (st = cfg_num(c, "num_key_value_heads", a->heads, 1, VRAM_LIMIT_HEADS, &a->kv_heads)) ||
        (st = cfg_num(c, "intermediate_size", 8192, 1, VRAM_LIMIT_INTERMEDIATE,
                      &a->intermediate)) ||
        (st = cfg_num(c, "vocab_size", 51200, 1, VRAM_LIMIT_VOCAB, &a->vocab)) ||
        (st = cfg_num(c, "max_position_embeddings", 2048, 1, VRAM_LIMIT_CONTEXT, &a->context)) ||
        (st = cfg_bool(c, "tie_word_embeddings", 0, &tie)) ||
        (st = cfg_bool(c, "qk_layernorm", 0, &qk_norm)))
        return st;
    if ((st = cfg_heads_check(c, a, "hidden_size", "num_attention_heads")) != VRAM_OK) return st;
    a->family = VRAM_FAMILY_DECODER;
    a->mlp = VRAM_MLP_PLAIN;
    a->norm = VRAM_NORM_LAYER;
    a->flags = VRAM_ARCH_QKV_BIAS | VRAM_ARCH_OUT_BIAS | VRAM_ARCH_MLP_BIAS |
               VRAM_ARCH_FINAL_NORM | VRAM_ARCH_PARALLEL | (tie ? VRAM_ARCH_TIED : 0u);
    /* the head's bias; q/k LayerNorms: at most 10,000 x 4 x 1,000,000 */
    a->extra_params = a->vocab + (qk_norm ? a->layers * 4u * (a->hidden / a->heads) : 0u);
    return VRAM_OK;
}

/* falcon (FalconConfig): hidden_size 4544, num_hidden_layers 32, num_attention_heads 71,
 * vocab_size 65024, tie_word_embeddings true, bias false (all linear layers), ffn_hidden_size
 * null -> 4 x hidden; key/value heads: num_kv_heads (null -> heads) with
 * new_decoder_architecture, else 1 with multi_query (default true), else heads. Norms per
 * block: two when parallel_attn is false, or with num_ln_in_parallel_attn 2 (the default
 * of the new architecture: ln_attn, ln_mlp); else one (VRAM_ARCH_PARALLEL). PLAIN, LAYER,
 * FINAL_NORM; ALiBi or rotary positions, no table. */
static vram_status cfg_falcon(const cfg *c, vram_arch *a) {
    vram_status st;
    int tie, bias, mq, newarch, parallel;
    uint64_t kv, lns;
    memset(a, 0, sizeof *a);
    if ((st = cfg_num(c, "num_hidden_layers", 32, 1, VRAM_LIMIT_LAYERS, &a->layers)) ||
        (st = cfg_num(c, "hidden_size", 4544, 1, VRAM_LIMIT_HIDDEN, &a->hidden)) ||
        (st = cfg_num(c, "num_attention_heads", 71, 1, VRAM_LIMIT_HEADS, &a->heads)) ||
        (st = cfg_num(c, "num_kv_heads", a->heads, 1, VRAM_LIMIT_HEADS, &kv)) ||
        (st = cfg_num(c, "ffn_hidden_size", 4 * a->hidden, 1, VRAM_LIMIT_INTERMEDIATE,
                      &a->intermediate)) ||
        (st = cfg_num(c, "vocab_size", 65024, 1, VRAM_LIMIT_VOCAB, &a->vocab)) ||
        (st = cfg_num(c, "max_position_embeddings", 2048, 1, VRAM_LIMIT_CONTEXT, &a->context)) ||
        (st = cfg_bool(c, "tie_word_embeddings", 1, &tie)) ||
        (st = cfg_bool(c, "bias", 0, &bias)) ||
        (st = cfg_bool(c, "multi_query", 1, &mq)) ||
        (st = cfg_bool(c, "new_decoder_architecture", 0, &newarch)) ||
        (st = cfg_bool(c, "parallel_attn", 1, &parallel)) ||
        (st = cfg_num(c, "num_ln_in_parallel_attn", newarch ? 2 : 1, 1, 2, &lns)))
        return st;
    a->kv_heads = newarch ? kv : (mq ? 1u : a->heads);
    if (a->kv_heads > a->heads)
        return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label,
                          "num_kv_heads %llu is more than num_attention_heads %llu",
                          (unsigned long long)a->kv_heads, (unsigned long long)a->heads);
    if (a->heads % a->kv_heads != 0)
        return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label,
                          "num_attention_heads %llu is not a multiple of num_kv_heads %llu",
                          (unsigned long long)a->heads, (unsigned long long)a->kv_heads);
    if ((st = cfg_heads_check(c, a, "hidden_size", "num_attention_heads")) != VRAM_OK) return st;
    a->family = VRAM_FAMILY_DECODER;
    a->mlp = VRAM_MLP_PLAIN;
    a->norm = VRAM_NORM_LAYER;
    a->flags = VRAM_ARCH_FINAL_NORM | (tie ? VRAM_ARCH_TIED : 0u) |
               (bias ? VRAM_ARCH_QKV_BIAS | VRAM_ARCH_OUT_BIAS | VRAM_ARCH_MLP_BIAS : 0u) |
               (parallel && lns == 1 ? VRAM_ARCH_PARALLEL : 0u);
    return VRAM_OK;
}

/* gptj (GPTJConfig): n_layer 28, n_embd 4096, n_head 16, n_inner null -> 4 x n_embd,
 * vocab_size 50400, n_positions 2048 (rotary: context only), tie_word_embeddings false; a
 * parallel block (ln_1 only), no attention biases, MLP biases, a head with a bias (vocab, in
 * extra_params); PLAIN, LAYER, FINAL_NORM. */
static vram_status cfg_gptj(const cfg *c, vram_arch *a) {
    vram_status st;
    int tie;
    memset(a, 0, sizeof *a);
    if ((st = cfg_num(c, "n_layer", 28, 1, VRAM_LIMIT_LAYERS, &a->layers)) ||
        (st = cfg_num(c, "n_embd", 4096, 1, VRAM_LIMIT_HIDDEN, &a->hidden)) ||
        (st = cfg_num(c, "n_head", 16, 1, VRAM_LIMIT_HEADS, &a->heads)) ||
        (st = cfg_num(c, "n_inner", 4 * a->hidden, 1, VRAM_LIMIT_INTERMEDIATE, &a->intermediate)) ||
        (st = cfg_num(c, "n_positions", 2048, 1, VRAM_LIMIT_CONTEXT, &a->context)) ||
        (st = cfg_num(c, "vocab_size", 50400, 1, VRAM_LIMIT_VOCAB, &a->vocab)) ||
        (st = cfg_bool(c, "tie_word_embeddings", 0, &tie)))
        return st;
    if ((st = cfg_heads_check(c, a, "n_embd", "n_head")) != VRAM_OK) return st;
    a->family = VRAM_FAMILY_DECODER;
    a->mlp = VRAM_MLP_PLAIN;
    a->norm = VRAM_NORM_LAYER;
    a->flags = VRAM_ARCH_MLP_BIAS | VRAM_ARCH_FINAL_NORM | VRAM_ARCH_PARALLEL |
               (tie ? VRAM_ARCH_TIED : 0u);
    a->extra_params = a->vocab;
    return VRAM_OK;
}

/* gpt_bigcode (GPTBigCodeConfig; StarCoder, SantaCoder): GPT-2's keys and defaults (n_layer 12,
 * n_embd 768, n_head 12, n_inner null -> 4 x n_embd, n_positions 1024 learned, vocab_size
 * 50257, tie_word_embeddings true) with multi_query true: one key/value head. */
static vram_status cfg_bigcode(const cfg *c, vram_arch *a) {
    vram_status st;
    int mq;
    if ((st = cfg_gpt2(c, a)) != VRAM_OK || (st = cfg_bool(c, "multi_query", 1, &mq)) != VRAM_OK)
        return st;
    a->kv_heads = mq ? 1u : a->heads;
    return VRAM_OK;
}

/* ---- the classic decoders ------------------------------------------------------------ */

/* A number under its key, else under the other name the config class maps to it
 * (attribute_map: bloom's num_hidden_layers for n_layer), else def. */
static vram_status cfg_num_alt(const cfg *c, const char *key, const char *alt, uint64_t def,
                               uint64_t min, uint64_t limit, uint64_t *out) {
    return cfg_num(c, cfg_has(c, key) || !cfg_has(c, alt) ? key : alt, def, min, limit, out);
}

/* A config whose numbers the arch cannot describe: family NONE, the reason in the note. */
static vram_status cfg_unmodelled(const cfg *c, vram_arch *a, char *note, size_t notecap,
                                  const char *why) {
    memset(a, 0, sizeof *a);
    snprintf(note, notecap, "%s: %s; architecture left unknown", c->label, why);
    return VRAM_OK;
}

/* The pattern the classic decoders share: a PLAIN MLP, LayerNorms, every projection biased
 * (those that differ clear their flags after), tied unless the key says. */
static void cfg_classic(vram_arch *a, int tie, uint32_t flags) {
    a->family = VRAM_FAMILY_DECODER;
    a->mlp = VRAM_MLP_PLAIN;
    a->norm = VRAM_NORM_LAYER;
    a->flags = VRAM_ARCH_QKV_BIAS | VRAM_ARCH_OUT_BIAS | VRAM_ARCH_MLP_BIAS | flags |
               (tie ? VRAM_ARCH_TIED : 0u);
}

/* opt (OPTConfig; OPT-125m to 66B): num_hidden_layers 12, hidden_size 768,
 * num_attention_heads 12, ffn_dim 3072, vocab_size 50272, max_position_embeddings 2048
 * (learned, offset by 2: max_position_embeddings + 2 rows), tie_word_embeddings true,
 * enable_bias true (every projection), a final LayerNorm when do_layer_norm_before (and not
 * _remove_final_layer_norm). Refused: word_embed_proj_dim other than hidden_size (OPT-350m's
 * narrower embedding and its project_in/out) and norms without weights
 * (layer_norm_elementwise_affine false). */
static vram_status cfg_opt(const cfg *c, vram_arch *a, char *note, size_t notecap) {
    vram_status st;
    int tie, bias, before, remove_final, affine;
    uint64_t wep;
    memset(a, 0, sizeof *a);
    if ((st = cfg_num(c, "num_hidden_layers", 12, 1, VRAM_LIMIT_LAYERS, &a->layers)) ||
        (st = cfg_num(c, "hidden_size", 768, 1, VRAM_LIMIT_HIDDEN, &a->hidden)) ||
        (st = cfg_num(c, "num_attention_heads", 12, 1, VRAM_LIMIT_HEADS, &a->heads)) ||
        (st = cfg_num(c, "ffn_dim", 3072, 1, VRAM_LIMIT_INTERMEDIATE, &a->intermediate)) ||
        (st = cfg_num(c, "vocab_size", 50272, 1, VRAM_LIMIT_VOCAB, &a->vocab)) ||
        (st = cfg_num(c, "max_position_embeddings", 2048, 1, VRAM_LIMIT_CONTEXT, &a->context)) ||
        (st = cfg_num(c, "word_embed_proj_dim", a->hidden, 1, VRAM_LIMIT_HIDDEN, &wep)) ||
        (st = cfg_bool(c, "tie_word_embeddings", 1, &tie)) ||
        (st = cfg_bool(c, "enable_bias", 1, &bias)) ||
        (st = cfg_bool(c, "do_layer_norm_before", 1, &before)) ||
        (st = cfg_bool(c, "_remove_final_layer_norm", 0, &remove_final)) ||
        (st = cfg_bool(c, "layer_norm_elementwise_affine", 1, &affine)))
        return st;
    if ((st = cfg_heads_check(c, a, "hidden_size", "num_attention_heads")) != VRAM_OK) return st;
    if (wep != a->hidden)
        return cfg_unmodelled(c, a, note, notecap,
                              "word_embed_proj_dim differs from hidden_size (embeddings of "
                              "another width, projected in and out), which vramkit does not "
                              "model");
    if (!affine)
        return cfg_unmodelled(c, a, note, notecap,
                              "layer_norm_elementwise_affine false (norms without weights), "
                              "which vramkit does not model");
    cfg_classic(a, tie, before && !remove_final ? VRAM_ARCH_FINAL_NORM : 0u);
    if (!bias) a->flags &= ~(VRAM_ARCH_QKV_BIAS | VRAM_ARCH_OUT_BIAS | VRAM_ARCH_MLP_BIAS);
    a->positions = a->context + 2u;
    return VRAM_OK;
}

/* bloom (BloomConfig): n_layer 2, hidden_size 64 (n_embed in old files), n_head 8 (or
 * num_hidden_layers, num_attention_heads), vocab_size 250880, an MLP of 4 x hidden; ALiBi (no
 * position table, no context in the config); a LayerNorm after the embeddings
 * (word_embeddings_layernorm) and a final one; every projection biased; tied. */
static vram_status cfg_bloom(const cfg *c, vram_arch *a) {
    vram_status st;
    int tie;
    memset(a, 0, sizeof *a);
    if ((st = cfg_num_alt(c, "n_layer", "num_hidden_layers", 2, 1, VRAM_LIMIT_LAYERS,
                          &a->layers)) ||
        (st = cfg_num_alt(c, "hidden_size", "n_embed", 64, 1, VRAM_LIMIT_HIDDEN, &a->hidden)) ||
        (st = cfg_num_alt(c, "n_head", "num_attention_heads", 8, 1, VRAM_LIMIT_HEADS,
                          &a->heads)) ||
        (st = cfg_num(c, "vocab_size", 250880, 1, VRAM_LIMIT_VOCAB, &a->vocab)) ||
        (st = cfg_bool(c, "tie_word_embeddings", 1, &tie)))
        return st;
    if ((st = cfg_heads_check(c, a, "hidden_size", "n_head")) != VRAM_OK) return st;
    a->intermediate = 4u * a->hidden;
    cfg_classic(a, tie, VRAM_ARCH_FINAL_NORM | VRAM_ARCH_EMB_NORM);
    return VRAM_OK;
}

/* gpt_neo (GPTNeoConfig): num_layers 24, hidden_size 2048, num_heads 16 (or
 * num_hidden_layers, num_attention_heads), intermediate_size null -> 4 x hidden, vocab_size
 * 50257, max_position_embeddings 2048 (learned), tied; q, k, v without biases, out_proj and
 * the MLP with; ln_f. attention_types ([[["global", "local"], 12]]: each pattern repeated
 * its count of times, one entry a block, as many as num_layers, else transformers refuses
 * the config) says which blocks attend over the last window_size (256) tokens only
 * ("local"); their cache keeps every token all the same (transformers' GPT-Neo builds its
 * DynamicCache without a window, and no other engine runs the family), so the arch has no
 * sliding window. */
static vram_status cfg_gpt_neo(const cfg *c, vram_arch *a) {
    vram_status st;
    int tie;
    uint64_t blocks = 0;
    memset(a, 0, sizeof *a);
    if ((st = cfg_num_alt(c, "num_layers", "num_hidden_layers", 24, 1, VRAM_LIMIT_LAYERS,
                          &a->layers)) ||
        (st = cfg_num(c, "hidden_size", 2048, 1, VRAM_LIMIT_HIDDEN, &a->hidden)) ||
        (st = cfg_num_alt(c, "num_heads", "num_attention_heads", 16, 1, VRAM_LIMIT_HEADS,
                          &a->heads)) ||
        (st = cfg_num(c, "intermediate_size", 4 * a->hidden, 1, VRAM_LIMIT_INTERMEDIATE,
                      &a->intermediate)) ||
        (st = cfg_num(c, "vocab_size", 50257, 1, VRAM_LIMIT_VOCAB, &a->vocab)) ||
        (st = cfg_num(c, "max_position_embeddings", 2048, 1, VRAM_LIMIT_CONTEXT, &a->context)) ||
        (st = cfg_bool(c, "tie_word_embeddings", 1, &tie)))
        return st;
    if ((st = cfg_heads_check(c, a, "hidden_size", "num_heads")) != VRAM_OK) return st;
    const cJSON *types = cfg_get(c, "attention_types"), *item;
    if (types == NULL) {
        blocks = 24; /* [[["global", "local"], 12]] */
    } else {
        if (!cJSON_IsArray(types))
            return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label,
                              "attention_types is %s, not a list", vram__json_type(types));
        cJSON_ArrayForEach(item, types) {
            const cJSON *pat = cJSON_GetArrayItem(item, 0), *rep = cJSON_GetArrayItem(item, 1), *e;
            uint64_t n = 0;
            if (!cJSON_IsArray(item) || cJSON_GetArraySize(item) != 2 || !cJSON_IsArray(pat) ||
                !cJSON_IsNumber(rep) || rep->valuedouble < 0 ||
                rep->valuedouble > (double)VRAM_LIMIT_LAYERS ||
                rep->valuedouble != (double)(uint64_t)rep->valuedouble)
                return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label,
                                  "attention_types holds %s, not a [[\"global\" or \"local\", "
                                  "...], count] pair",
                                  vram__json_type(item));
            cJSON_ArrayForEach(e, pat) {
                const int g = cJSON_IsString(e) && strcmp(e->valuestring, "global") == 0;
                const int l = cJSON_IsString(e) && strcmp(e->valuestring, "local") == 0;
                if (!g && !l)
                    return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label,
                                      "attention_types names %s, not \"global\" or \"local\"",
                                      vram__json_type(e));
                n++;
            }
            blocks += n * (uint64_t)rep->valuedouble;
            if (blocks > VRAM_LIMIT_LAYERS) break;
        }
    }
    if (blocks != a->layers)
        return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label,
                          "attention_types makes %llu blocks, not num_layers (%llu)",
                          (unsigned long long)blocks, (unsigned long long)a->layers);
    cfg_classic(a, tie, VRAM_ARCH_FINAL_NORM);
    a->flags &= ~VRAM_ARCH_QKV_BIAS;
    a->positions = a->context;
    return VRAM_OK;
}

/* mpt (MptConfig; MPT-7B, -30B): n_layers 24, d_model 2048, n_heads 16 (or their
 * num_hidden_layers, hidden_size, num_attention_heads), vocab_size 50368, max_seq_len 2048
 * (context; ALiBi, no position table: transformers' class makes none whatever
 * learned_pos_emb says), tied; no bias anywhere; LayerNorms whose bias transformers removes
 * (a weight of hidden each: counted as an RMS norm's); the MLP 4 x d_model wide, which
 * transformers' class builds whatever expansion_ratio says: another ratio is refused. */
static vram_status cfg_mpt(const cfg *c, vram_arch *a, char *note, size_t notecap) {
    vram_status st;
    int tie;
    uint64_t ratio;
    memset(a, 0, sizeof *a);
    if ((st = cfg_num_alt(c, "n_layers", "num_hidden_layers", 24, 1, VRAM_LIMIT_LAYERS,
                          &a->layers)) ||
        (st = cfg_num_alt(c, "d_model", "hidden_size", 2048, 1, VRAM_LIMIT_HIDDEN, &a->hidden)) ||
        (st = cfg_num_alt(c, "n_heads", "num_attention_heads", 16, 1, VRAM_LIMIT_HEADS,
                          &a->heads)) ||
        (st = cfg_num(c, "vocab_size", 50368, 1, VRAM_LIMIT_VOCAB, &a->vocab)) ||
        (st = cfg_num(c, "max_seq_len", 2048, 1, VRAM_LIMIT_CONTEXT, &a->context)) ||
        (st = cfg_num(c, "expansion_ratio", 4, 1, 1000, &ratio)) ||
        (st = cfg_bool(c, "tie_word_embeddings", 1, &tie)))
        return st;
    if ((st = cfg_heads_check(c, a, "d_model", "n_heads")) != VRAM_OK) return st;
    if (ratio != 4)
        return cfg_unmodelled(c, a, note, notecap,
                              "expansion_ratio is not 4 (transformers' MPT class builds an MLP "
                              "of 4 x d_model whatever it says)");
    a->intermediate = 4u * a->hidden;
    cfg_classic(a, tie, VRAM_ARCH_FINAL_NORM);
    a->flags &= ~(VRAM_ARCH_QKV_BIAS | VRAM_ARCH_OUT_BIAS | VRAM_ARCH_MLP_BIAS);
    a->norm = VRAM_NORM_RMS;
    return VRAM_OK;
}

/* xglm (XGLMConfig; XGLM-564M to 7.5B): num_layers 24, d_model 1024, attention_heads 16
 * (or num_hidden_layers, hidden_size, num_attention_heads), ffn_dim 4096, vocab_size
 * 256008, max_position_embeddings 2048 (sinusoidal: a buffer, no parameters), tied; every
 * projection biased, a final LayerNorm. */
static vram_status cfg_xglm(const cfg *c, vram_arch *a) {
    vram_status st;
    int tie;
    memset(a, 0, sizeof *a);
    if ((st = cfg_num_alt(c, "num_layers", "num_hidden_layers", 24, 1, VRAM_LIMIT_LAYERS,
                          &a->layers)) ||
        (st = cfg_num_alt(c, "d_model", "hidden_size", 1024, 1, VRAM_LIMIT_HIDDEN, &a->hidden)) ||
        (st = cfg_num_alt(c, "attention_heads", "num_attention_heads", 16, 1, VRAM_LIMIT_HEADS,
                          &a->heads)) ||
        (st = cfg_num(c, "ffn_dim", 4096, 1, VRAM_LIMIT_INTERMEDIATE, &a->intermediate)) ||
        (st = cfg_num(c, "vocab_size", 256008, 1, VRAM_LIMIT_VOCAB, &a->vocab)) ||
        (st = cfg_num(c, "max_position_embeddings", 2048, 1, VRAM_LIMIT_CONTEXT, &a->context)) ||
        (st = cfg_bool(c, "tie_word_embeddings", 1, &tie)))
        return st;
    if ((st = cfg_heads_check(c, a, "d_model", "attention_heads")) != VRAM_OK) return st;
    cfg_classic(a, tie, VRAM_ARCH_FINAL_NORM);
    return VRAM_OK;
}

/* gpt_neox_japanese (GPTNeoXJapaneseConfig): num_hidden_layers 32, hidden_size 2560,
 * num_attention_heads 32, an MLP of int(hidden x intermediate_multiple_size) (4), vocab_size
 * 32000, max_position_embeddings 2048 (rotary), tied; no biases but the last block's
 * attention output bias (dense_bias: hidden, in extra_params); a final LayerNorm. */
static vram_status cfg_neox_jp(const cfg *c, vram_arch *a) {
    vram_status st;
    int tie;
    const cJSON *jm;
    memset(a, 0, sizeof *a);
    if ((st = cfg_num(c, "num_hidden_layers", 32, 1, VRAM_LIMIT_LAYERS, &a->layers)) ||
        (st = cfg_num(c, "hidden_size", 2560, 1, VRAM_LIMIT_HIDDEN, &a->hidden)) ||
        (st = cfg_num(c, "num_attention_heads", 32, 1, VRAM_LIMIT_HEADS, &a->heads)) ||
        (st = cfg_num(c, "vocab_size", 32000, 1, VRAM_LIMIT_VOCAB, &a->vocab)) ||
        (st = cfg_num(c, "max_position_embeddings", 2048, 1, VRAM_LIMIT_CONTEXT, &a->context)) ||
        (st = cfg_bool(c, "tie_word_embeddings", 1, &tie)) ||
        (st = cfg_number(c, "intermediate_multiple_size", &jm)))
        return st;
    const double mult = jm != NULL ? jm->valuedouble : 4.0;
    const double inter = (double)a->hidden * mult;
    if (!(inter >= 1.0 && inter <= (double)VRAM_LIMIT_INTERMEDIATE))
        return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label,
                          "intermediate_multiple_size %g makes an MLP of %g, not 1 to %llu wide",
                          mult, inter, (unsigned long long)VRAM_LIMIT_INTERMEDIATE);
    if ((st = cfg_heads_check(c, a, "hidden_size", "num_attention_heads")) != VRAM_OK) return st;
    a->intermediate = (uint64_t)inter;
    cfg_classic(a, tie, VRAM_ARCH_FINAL_NORM);
    a->flags &= ~(VRAM_ARCH_QKV_BIAS | VRAM_ARCH_OUT_BIAS | VRAM_ARCH_MLP_BIAS);
    a->extra_params = a->hidden;
    return VRAM_OK;
}

/* openai-gpt (OpenAIGPTConfig) and ctrl (CTRLConfig): GPT-2's keys (n_layer, n_embd, n_head,
 * n_positions, vocab_size), every projection biased, tied.
 *   openai-gpt: 12, 768, 12, 512 (learned positions), 40478; an MLP of 4 x n_embd; norms
 *     after each sublayer and no final norm.
 *   ctrl: 48, 1280, 16, 256 (sinusoidal: a buffer), 246534; an MLP of dff (8192); a final
 *     LayerNorm; the head's bias (vocab, in extra_params). */
static vram_status cfg_gpt1(const cfg *c, int ctrl, vram_arch *a) {
    vram_status st;
    int tie;
    memset(a, 0, sizeof *a);
    if ((st = cfg_num(c, "n_layer", ctrl ? 48 : 12, 1, VRAM_LIMIT_LAYERS, &a->layers)) ||
        (st = cfg_num(c, "n_embd", ctrl ? 1280 : 768, 1, VRAM_LIMIT_HIDDEN, &a->hidden)) ||
        (st = cfg_num(c, "n_head", ctrl ? 16 : 12, 1, VRAM_LIMIT_HEADS, &a->heads)) ||
        (st = cfg_num(c, "n_positions", ctrl ? 256 : 512, 1, VRAM_LIMIT_CONTEXT, &a->context)) ||
        (st = cfg_num(c, "vocab_size", ctrl ? 246534 : 40478, 1, VRAM_LIMIT_VOCAB, &a->vocab)) ||
        (ctrl && (st = cfg_num(c, "dff", 8192, 1, VRAM_LIMIT_INTERMEDIATE, &a->intermediate))) ||
        (st = cfg_bool(c, "tie_word_embeddings", 1, &tie)))
        return st;
    if ((st = cfg_heads_check(c, a, "n_embd", "n_head")) != VRAM_OK) return st;
    cfg_classic(a, tie, ctrl ? VRAM_ARCH_FINAL_NORM : 0u);
    if (ctrl) {
        a->extra_params = a->vocab;
    } else {
        a->intermediate = 4u * a->hidden;
        a->positions = a->context;
    }
    return VRAM_OK;
}

/* ---- encoders ------------------------------------------------------------------------ */

/* architectures[0], or "" */
static const char *cfg_class(const cfg *c) {
    const cJSON *j = cfg_get(c, "architectures");
    if (cJSON_IsArray(j) && cJSON_IsString(j->child)) return j->child->valuestring;
    return "";
}

static int str_ends(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static vram_status cfg_labels(const cfg *c, uint64_t *labels) {
    const cJSON *j = cfg_get(c, "id2label");
    if (cJSON_IsObject(j)) {
        uint64_t n = 0;
        for (const cJSON *e = j->child; e != NULL; e = e->next)
            n++;
        if (n > 0 && n <= VRAM_LIMIT_VOCAB) {
            *labels = n;
            return VRAM_OK;
        }
    }
    return cfg_num(c, "num_labels", 2, 1, VRAM_LIMIT_VOCAB, labels);
}

/* The head of an encoder, from the class it was saved from (the table above). */
static vram_status cfg_encoder_head(const cfg *c, vram_arch *a, int pooler, char *note,
                                    size_t notecap) {
    const char *cls = cfg_class(c);
    uint64_t h = a->hidden, labels;
    vram_status st;
    int tie;
    char q[VRAM__QUOTE_CAP];
    if (str_ends(cls, "ForMaskedLM")) {
        if ((st = cfg_bool(c, "tie_word_embeddings", 1, &tie)) != VRAM_OK) return st;
        if (tie) a->flags |= VRAM_ARCH_TIED;
        a->extra_params = h * h + h + 2 * h + a->vocab;
        return VRAM_OK;
    }
    a->flags |= VRAM_ARCH_NO_HEAD;
    if (str_ends(cls, "ForSequenceClassification")) {
        if ((st = cfg_labels(c, &labels)) != VRAM_OK) return st;
        a->extra_params = h * h + h + h * labels + labels;
    } else if (str_ends(cls, "ForTokenClassification")) {
        if ((st = cfg_labels(c, &labels)) != VRAM_OK) return st;
        a->extra_params = h * labels + labels;
    } else if (str_ends(cls, "Model")) {
        a->extra_params = pooler ? h * h + h : 0u;
    } else {
        snprintf(note, notecap, "%s: architectures %s: its task head is not counted", c->label,
                 vram__quote(cls, strlen(cls), q));
    }
    return VRAM_OK;
}

static vram_status cfg_bert(const cfg *c, uint64_t vocab_def, int roberta, vram_arch *a, char *note,
                            size_t notecap) {
    vram_status st;
    memset(a, 0, sizeof *a);
    if ((st = cfg_num(c, "num_hidden_layers", 12, 1, VRAM_LIMIT_LAYERS, &a->layers)) ||
        (st = cfg_num(c, "hidden_size", 768, 1, VRAM_LIMIT_HIDDEN, &a->hidden)) ||
        (st = cfg_num(c, "num_attention_heads", 12, 1, VRAM_LIMIT_HEADS, &a->heads)) ||
        (st =
             cfg_num(c, "intermediate_size", 3072, 1, VRAM_LIMIT_INTERMEDIATE, &a->intermediate)) ||
        (st = cfg_num(c, "vocab_size", vocab_def, 1, VRAM_LIMIT_VOCAB, &a->vocab)) ||
        (st = cfg_num(c, "max_position_embeddings", 512, 1, VRAM_LIMIT_CONTEXT, &a->positions)) ||
        (st = cfg_num(c, "type_vocab_size", 2, 0, VRAM_LIMIT_VOCAB, &a->type_vocab)))
        return st;
    if ((st = cfg_heads_check(c, a, "hidden_size", "num_attention_heads")) != VRAM_OK) return st;
    a->family = VRAM_FAMILY_ENCODER;
    a->context = roberta && a->positions > 2 ? a->positions - 2 : a->positions;
    a->mlp = VRAM_MLP_PLAIN;
    a->norm = VRAM_NORM_LAYER;
    a->flags = VRAM_ARCH_QKV_BIAS | VRAM_ARCH_OUT_BIAS | VRAM_ARCH_MLP_BIAS | VRAM_ARCH_EMB_NORM;
    return cfg_encoder_head(c, a, 1, note, notecap);
}

static vram_status cfg_distilbert(const cfg *c, vram_arch *a, char *note, size_t notecap) {
    vram_status st;
    memset(a, 0, sizeof *a);
    if ((st = cfg_num(c, "n_layers", 6, 1, VRAM_LIMIT_LAYERS, &a->layers)) ||
        (st = cfg_num(c, "dim", 768, 1, VRAM_LIMIT_HIDDEN, &a->hidden)) ||
        (st = cfg_num(c, "n_heads", 12, 1, VRAM_LIMIT_HEADS, &a->heads)) ||
        (st = cfg_num(c, "hidden_dim", 3072, 1, VRAM_LIMIT_INTERMEDIATE, &a->intermediate)) ||
        (st = cfg_num(c, "vocab_size", 30522, 1, VRAM_LIMIT_VOCAB, &a->vocab)) ||
        (st = cfg_num(c, "max_position_embeddings", 512, 1, VRAM_LIMIT_CONTEXT, &a->positions)))
        return st;
    if ((st = cfg_heads_check(c, a, "dim", "n_heads")) != VRAM_OK) return st;
    a->family = VRAM_FAMILY_ENCODER;
    a->context = a->positions;
    a->mlp = VRAM_MLP_PLAIN;
    a->norm = VRAM_NORM_LAYER;
    a->flags = VRAM_ARCH_QKV_BIAS | VRAM_ARCH_OUT_BIAS | VRAM_ARCH_MLP_BIAS | VRAM_ARCH_EMB_NORM;
    return cfg_encoder_head(c, a, 0, note, notecap);
}

/* modernbert (ModernBertConfig: vocab 50368, 768 wide, 22 layers, 12 heads, MLP 1152, 8192
 * positions (rotary: context only), tie_word_embeddings true): an encoder whose norms have
 * no bias unless norm_bias (weight only: counted as RMS's), fused Wqkv and Wo (biases with
 * attention_bias), a gated MLP Wi (2 x intermediate) and Wo (biases with mlp_bias), the
 * embeddings' norm, no attn_norm in the first block (so the embeddings' norm and the first
 * block's missing one cancel: no EMB_NORM), a final norm. Its head by architectures[0]:
 * *ForMaskedLM the prediction head (dense hidden^2, bias with classifier_bias, its norm)
 * and the tied decoder's bias (vocab, with decoder_bias); *ForSequenceClassification the
 * same head and a classifier (hidden x labels + labels); *ForTokenClassification the head
 * and the classifier; *Model none; anything else none, with a note. */
static vram_status cfg_modernbert(const cfg *c, vram_arch *a, char *note, size_t notecap) {
    vram_status st;
    int norm_bias, attn_bias, mlp_bias, cls_bias, dec_bias, tie;
    uint64_t labels = 0;
    const char *cls = cfg_class(c);
    char q[VRAM__QUOTE_CAP];
    memset(a, 0, sizeof *a);
    if ((st = cfg_common(c, 22, 768, 12, 1152, 50368, 8192, a)) ||
        (st = cfg_bool(c, "norm_bias", 0, &norm_bias)) ||
        (st = cfg_bool(c, "attention_bias", 0, &attn_bias)) ||
        (st = cfg_bool(c, "mlp_bias", 0, &mlp_bias)) ||
        (st = cfg_bool(c, "classifier_bias", 0, &cls_bias)) ||
        (st = cfg_bool(c, "decoder_bias", 1, &dec_bias)) ||
        (st = cfg_bool(c, "tie_word_embeddings", 1, &tie)))
        return st;
    if ((st = cfg_heads_check(c, a, "hidden_size", "num_attention_heads")) != VRAM_OK) return st;
    const uint64_t h = a->hidden, norm = norm_bias ? 2 * h : h;
    a->family = VRAM_FAMILY_ENCODER;
    a->mlp = VRAM_MLP_GATED;
    a->norm = norm_bias ? VRAM_NORM_LAYER : VRAM_NORM_RMS;
    a->flags = VRAM_ARCH_FINAL_NORM | (attn_bias ? VRAM_ARCH_QKV_BIAS | VRAM_ARCH_OUT_BIAS : 0u) |
               (mlp_bias ? VRAM_ARCH_MLP_BIAS : 0u);
    const uint64_t head = h * h + (cls_bias ? h : 0u) + norm;
    if (str_ends(cls, "ForMaskedLM")) {
        if (tie) a->flags |= VRAM_ARCH_TIED;
        a->extra_params = head + (dec_bias ? a->vocab : 0u);
        return VRAM_OK;
    }
    a->flags |= VRAM_ARCH_NO_HEAD;
    if (str_ends(cls, "ForSequenceClassification") || str_ends(cls, "ForTokenClassification")) {
        if ((st = cfg_labels(c, &labels)) != VRAM_OK) return st;
        a->extra_params = head + h * labels + labels;
    } else if (!str_ends(cls, "Model")) {
        snprintf(note, notecap, "%s: architectures %s: its task head is not counted", c->label,
                 vram__quote(cls, strlen(cls), q));
    }
    return VRAM_OK;
}

/* ---- encoder-decoders ---------------------------------------------------------------- */

static vram_status cfg_seq2seq(const cfg *c, uint64_t vocab_def, int bart, vram_arch *a) {
    vram_status st;
    int tie;
    uint64_t max_pos;
    memset(a, 0, sizeof *a);
    if ((st = cfg_num(c, "encoder_layers", 12, 1, VRAM_LIMIT_LAYERS, &a->encoder_layers)) ||
        (st = cfg_num(c, "decoder_layers", 12, 1, VRAM_LIMIT_LAYERS, &a->decoder_layers)) ||
        (st = cfg_num(c, "d_model", 1024, 1, VRAM_LIMIT_HIDDEN, &a->hidden)) ||
        (st = cfg_num(c, "encoder_attention_heads", 16, 1, VRAM_LIMIT_HEADS, &a->heads)) ||
        (st = cfg_num(c, "encoder_ffn_dim", 4096, 1, VRAM_LIMIT_INTERMEDIATE, &a->intermediate)) ||
        (st = cfg_num(c, "decoder_ffn_dim", 4096, 1, VRAM_LIMIT_INTERMEDIATE,
                      &a->decoder_intermediate)) ||
        (st = cfg_num(c, "vocab_size", vocab_def, 1, VRAM_LIMIT_VOCAB, &a->vocab)) ||
        (st = cfg_num(c, "max_position_embeddings", 1024, 1, VRAM_LIMIT_CONTEXT, &max_pos)) ||
        (st = cfg_bool(c, "tie_word_embeddings", 1, &tie)))
        return st;
    if ((st = cfg_heads_check(c, a, "d_model", "encoder_attention_heads")) != VRAM_OK) return st;
    a->family = VRAM_FAMILY_ENCODER_DECODER;
    a->context = max_pos;
    a->mlp = VRAM_MLP_PLAIN;
    a->norm = VRAM_NORM_LAYER;
    a->flags =
        VRAM_ARCH_QKV_BIAS | VRAM_ARCH_OUT_BIAS | VRAM_ARCH_MLP_BIAS | (tie ? VRAM_ARCH_TIED : 0u);
    if (bart) {
        a->positions = max_pos + 2;
        a->flags |= VRAM_ARCH_EMB_NORM;
        a->extra_params = a->positions * a->hidden + 2 * a->hidden;
    } else {
        a->flags |= VRAM_ARCH_FINAL_NORM;
    }
    return VRAM_OK;
}

/* whisper (WhisperConfig): encoder_layers 4, decoder_layers 4, d_model 384,
 * encoder_attention_heads 6, encoder_ffn_dim 1536, decoder_ffn_dim 1536, vocab_size 51865,
 * num_mel_bins 80, max_source_positions 1500 (the encoder's fixed length: 30 s of audio,
 * source_context), max_target_positions 448 (context), tie_word_embeddings true. Learned
 * position tables in both stacks (positions = 1500 + 448 rows); the k projections have no
 * bias (q, v, out and the MLP do): the q and v biases, 2 x d_model per attention, are in
 * extra_params with the two convolutions of the audio front end (num_mel_bins x d_model x 3
 * + d_model, d_model x d_model x 3 + d_model); PLAIN, LAYER, FINAL_NORM (each stack's). */
static vram_status cfg_whisper(const cfg *c, vram_arch *a) {
    vram_status st;
    int tie;
    uint64_t mel, src_pos, tgt_pos;
    memset(a, 0, sizeof *a);
    if ((st = cfg_num(c, "encoder_layers", 4, 1, VRAM_LIMIT_LAYERS, &a->encoder_layers)) ||
        (st = cfg_num(c, "decoder_layers", 4, 1, VRAM_LIMIT_LAYERS, &a->decoder_layers)) ||
        (st = cfg_num(c, "d_model", 384, 1, VRAM_LIMIT_HIDDEN, &a->hidden)) ||
        (st = cfg_num(c, "encoder_attention_heads", 6, 1, VRAM_LIMIT_HEADS, &a->heads)) ||
        (st = cfg_num(c, "encoder_ffn_dim", 1536, 1, VRAM_LIMIT_INTERMEDIATE, &a->intermediate)) ||
        (st = cfg_num(c, "decoder_ffn_dim", 1536, 1, VRAM_LIMIT_INTERMEDIATE,
                      &a->decoder_intermediate)) ||
        (st = cfg_num(c, "vocab_size", 51865, 1, VRAM_LIMIT_VOCAB, &a->vocab)) ||
        (st = cfg_num(c, "num_mel_bins", 80, 1, VRAM_LIMIT_HIDDEN, &mel)) ||
        (st = cfg_num(c, "max_source_positions", 1500, 1, VRAM_LIMIT_CONTEXT, &src_pos)) ||
        (st = cfg_num(c, "max_target_positions", 448, 1, VRAM_LIMIT_CONTEXT, &tgt_pos)) ||
        (st = cfg_bool(c, "tie_word_embeddings", 1, &tie)))
        return st;
    if ((st = cfg_heads_check(c, a, "d_model", "encoder_attention_heads")) != VRAM_OK) return st;
    const uint64_t d = a->hidden, attns = a->encoder_layers + 2 * a->decoder_layers;
    a->family = VRAM_FAMILY_ENCODER_DECODER;
    a->positions = src_pos + tgt_pos;
    a->context = tgt_pos;
    a->source_context = src_pos;
    a->mlp = VRAM_MLP_PLAIN;
    a->norm = VRAM_NORM_LAYER;
    a->flags = VRAM_ARCH_OUT_BIAS | VRAM_ARCH_MLP_BIAS | VRAM_ARCH_FINAL_NORM |
               (tie ? VRAM_ARCH_TIED : 0u);
    /* at most 10^6 x 10^6 x 3 twice and 3 x 10^4 x 2 x 10^6: far below 2^64 */
    a->extra_params = mel * d * 3 + d + d * d * 3 + d + attns * 2 * d;
    return VRAM_OK;
}

static vram_status cfg_t5(const cfg *c, int mt5, vram_arch *a) {
    vram_status st;
    int tie;
    uint64_t buckets;
    memset(a, 0, sizeof *a);
    if ((st = cfg_num(c, "num_layers", mt5 ? 8 : 6, 1, VRAM_LIMIT_LAYERS, &a->encoder_layers)) ||
        (st = cfg_num(c, "num_decoder_layers", a->encoder_layers, 1, VRAM_LIMIT_LAYERS,
                      &a->decoder_layers)) ||
        (st = cfg_num(c, "d_model", 512, 1, VRAM_LIMIT_HIDDEN, &a->hidden)) ||
        (st = cfg_num(c, "num_heads", mt5 ? 6 : 8, 1, VRAM_LIMIT_HEADS, &a->heads)) ||
        (st = cfg_num(c, "d_kv", 64, 1, VRAM_LIMIT_HIDDEN, &a->head_dim)) ||
        (st =
             cfg_num(c, "d_ff", mt5 ? 1024 : 2048, 1, VRAM_LIMIT_INTERMEDIATE, &a->intermediate)) ||
        (st = cfg_num(c, "vocab_size", mt5 ? 250112 : 32128, 1, VRAM_LIMIT_VOCAB, &a->vocab)) ||
        (st = cfg_num(c, "relative_attention_num_buckets", 32, 1, VRAM_LIMIT_CONTEXT, &buckets)) ||
        (st = cfg_num(c, "n_positions", 0, 1, VRAM_LIMIT_CONTEXT, &a->context)) ||
        (st = cfg_bool(c, "tie_word_embeddings", mt5 ? 0 : 1, &tie)))
        return st;
    const cJSON *ff = cfg_get(c, "feed_forward_proj");
    const char *proj = mt5 ? "gated-gelu" : "relu";
    if (ff != NULL && !cJSON_IsString(ff))
        return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label,
                          "feed_forward_proj is %s, not a string", vram__json_type(ff));
    if (ff != NULL) proj = ff->valuestring;
    a->family = VRAM_FAMILY_ENCODER_DECODER;
    a->mlp = strncmp(proj, "gated-", 6) == 0 ? VRAM_MLP_GATED : VRAM_MLP_PLAIN;
    a->norm = VRAM_NORM_RMS;
    a->flags = VRAM_ARCH_FINAL_NORM | (tie ? VRAM_ARCH_TIED : 0u);
    a->extra_params = 2 * buckets * a->heads;
    return VRAM_OK;
}

/* ---- vision towers and vision-language models ------------------------------------------ */

/* A nested config (text_config, vision_config): *out reads it, its errors labelled
 * "LABEL: KEY"; absent or null reads as {} (every default). */
static vram_status cfg_sub(const cfg *c, const char *key, char *label, size_t labelcap,
                           cfg *out) {
    static const cJSON empty = {NULL, NULL, NULL, cJSON_Object, NULL, 0, 0, NULL};
    const cJSON *j = cfg_get(c, key);
    if (j != NULL && !cJSON_IsObject(j))
        return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label, "%s is %s, not an object",
                          key, vram__json_type(j));
    snprintf(label, labelcap, "%s: %s", c->label, key);
    *out = *c;
    out->doc = j != NULL ? j : &empty;
    out->label = label;
    return VRAM_OK;
}

#define CFG_BIASES (VRAM_ARCH_QKV_BIAS | VRAM_ARCH_OUT_BIAS | VRAM_ARCH_MLP_BIAS)

typedef enum { VT_VIT, VT_CLIP, VT_SIGLIP } vt_kind;

/* A vision config class's defaults: layers, hidden, heads, MLP width, image and patch size. */
typedef struct vt_defaults {
    uint64_t layers, hidden, heads, inter, image, patch;
} vt_defaults;
static const vt_defaults vt_vit = {12, 768, 12, 3072, 224, 16};   /* ViT-, SiglipVisionConfig */
static const vt_defaults vt_clip = {12, 768, 12, 3072, 224, 32};  /* CLIPVisionConfig */
static const vt_defaults vt_llava = {24, 1024, 16, 4096, 336, 14}; /* LlavaConfig's tower */

/* A vision tower as an encoder of patches (family ENCODER, no vocabulary, NO_HEAD): its
 * patches (image_size / patch_size, squared) are its sequence, positions one row each (and
 * one for the class token of ViT and CLIP), context the same; blocks as BERT's (LayerNorm,
 * biases, plain MLP; ViT's q, k, v biases follow qkv_bias); FINAL_NORM (ViT's layernorm,
 * CLIP's and SigLIP's post_layernorm). extra_params: the patch convolution (channels x
 * patch^2 x hidden, with a bias but in CLIP), the class token (hidden) and CLIP's
 * pre_layrnorm; SigLIP's attention-pooling head when vision_use_head (probe, a multi-head
 * attention with biases, a LayerNorm, an MLP: 4h^2 + 2hi + 8h + i). Defaults: ViTConfig
 * (768 wide, 12 layers, 12 heads, MLP 3072, 224 px, patch 16), CLIPVisionConfig (the same,
 * patch 32), SiglipVisionConfig (as ViT). */
static vram_status cfg_vision(const cfg *c, vt_kind k, const vt_defaults *d, vram_arch *a) {
    vram_status st;
    uint64_t image, patch, chans, h, side;
    int qkv_bias = 1, use_head = 0;
    memset(a, 0, sizeof *a);
    if ((st = cfg_num(c, "num_hidden_layers", d->layers, 1, VRAM_LIMIT_LAYERS, &a->layers)) ||
        (st = cfg_num(c, "hidden_size", d->hidden, 1, VRAM_LIMIT_HIDDEN, &a->hidden)) ||
        (st = cfg_num(c, "num_attention_heads", d->heads, 1, VRAM_LIMIT_HEADS, &a->heads)) ||
        (st = cfg_num(c, "intermediate_size", d->inter, 1, VRAM_LIMIT_INTERMEDIATE,
                      &a->intermediate)) ||
        (st = cfg_num(c, "image_size", d->image, 1, VRAM_LIMIT_HIDDEN, &image)) ||
        (st = cfg_num(c, "patch_size", d->patch, 1, VRAM_LIMIT_HIDDEN, &patch)) ||
        (st = cfg_num(c, "num_channels", 3, 1, 1000, &chans)) ||
        (k == VT_VIT && (st = cfg_bool(c, "qkv_bias", 1, &qkv_bias))) ||
        (k == VT_SIGLIP && (st = cfg_bool(c, "vision_use_head", 1, &use_head))))
        return st;
    if (patch > image)
        return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label,
                          "patch_size %llu is larger than image_size %llu",
                          (unsigned long long)patch, (unsigned long long)image);
    if ((st = cfg_heads_check(c, a, "hidden_size", "num_attention_heads")) != VRAM_OK) return st;
    h = a->hidden;
    side = image / patch;
    a->family = VRAM_FAMILY_ENCODER;
    a->positions = side * side + (k == VT_SIGLIP ? 0u : 1u); /* <= 10^12: checked below */
    a->context = a->positions;
    a->mlp = VRAM_MLP_PLAIN;
    a->norm = VRAM_NORM_LAYER;
    a->flags = VRAM_ARCH_OUT_BIAS | VRAM_ARCH_MLP_BIAS | VRAM_ARCH_FINAL_NORM |
               VRAM_ARCH_NO_HEAD | (qkv_bias ? VRAM_ARCH_QKV_BIAS : 0u);
    if (a->positions > VRAM_LIMIT_CONTEXT)
        return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label,
                          "%llu patches (image_size %llu / patch_size %llu, squared) are over "
                          "the limit of %llu",
                          (unsigned long long)a->positions, (unsigned long long)image,
                          (unsigned long long)patch, (unsigned long long)VRAM_LIMIT_CONTEXT);
    /* chans x patch^2 x h: patch <= image <= 10^6 but patch^2 x h could pass 2^64 */
    if (patch > 100000u || chans * patch * patch > VRAM_LIMIT_HIDDEN)
        return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label,
                          "patch_size %llu with %llu channels is over the limit",
                          (unsigned long long)patch, (unsigned long long)chans);
    a->extra_params = chans * patch * patch * h + (k == VT_CLIP ? 0u : h); /* convolution */
    if (k != VT_SIGLIP) a->extra_params += h;                             /* class token */
    if (k == VT_CLIP) a->extra_params += 2 * h;                           /* pre_layrnorm */
    if (use_head) a->extra_params += 4 * h * h + 2 * h * a->intermediate + 8 * h + a->intermediate;
    return VRAM_OK;
}

/* A text tower of CLIP or SigLIP: an encoder of tokens with learned positions (context the
 * same), LayerNorm, biases, FINAL_NORM (final_layer_norm), NO_HEAD. Defaults: CLIPTextConfig
 * (vocab 49408, 512 wide, 12 layers, 8 heads, MLP 2048, 77 positions), SiglipTextConfig
 * (vocab 32000, 768, 12, 12, 3072, 64 positions; its head, hidden x projection_size (null
 * -> hidden) + bias, in extra_params). */
static vram_status cfg_text_tower(const cfg *c, int siglip, vram_arch *a) {
    vram_status st;
    uint64_t proj;
    memset(a, 0, sizeof *a);
    if ((st = cfg_num(c, "num_hidden_layers", 12, 1, VRAM_LIMIT_LAYERS, &a->layers)) ||
        (st = cfg_num(c, "hidden_size", siglip ? 768 : 512, 1, VRAM_LIMIT_HIDDEN, &a->hidden)) ||
        (st = cfg_num(c, "num_attention_heads", siglip ? 12 : 8, 1, VRAM_LIMIT_HEADS,
                      &a->heads)) ||
        (st = cfg_num(c, "intermediate_size", siglip ? 3072 : 2048, 1, VRAM_LIMIT_INTERMEDIATE,
                      &a->intermediate)) ||
        (st = cfg_num(c, "vocab_size", siglip ? 32000 : 49408, 1, VRAM_LIMIT_VOCAB, &a->vocab)) ||
        (st = cfg_num(c, "max_position_embeddings", siglip ? 64 : 77, 1, VRAM_LIMIT_CONTEXT,
                      &a->positions)) ||
        (st = cfg_num(c, "projection_size", a->hidden, 1, VRAM_LIMIT_HIDDEN, &proj)))
        return st;
    if ((st = cfg_heads_check(c, a, "hidden_size", "num_attention_heads")) != VRAM_OK) return st;
    a->family = VRAM_FAMILY_ENCODER;
    a->context = a->positions;
    a->mlp = VRAM_MLP_PLAIN;
    a->norm = VRAM_NORM_LAYER;
    a->flags = CFG_BIASES | VRAM_ARCH_FINAL_NORM | VRAM_ARCH_NO_HEAD;
    if (siglip) a->extra_params = a->hidden * proj + proj;
    return VRAM_OK;
}

/* Parameters of an arch read above (it passed the checks that bound its products). */
static uint64_t cfg_total(const vram_arch *a) {
    vram_param_count pc;
    return vram_arch_params(a, &pc) == VRAM_OK ? pc.total : 0u;
}

/* vit (ViTConfig): the tower, plus its head by architectures[0]: *ForImageClassification a
 * classifier (hidden x labels + labels), *Model the pooler (hidden x pooler_output_size
 * (null -> hidden) + bias); anything else: no head, with a note.
 * clip_vision_model, siglip_vision_model: the tower alone (CLIPVisionModelWithProjection adds
 * visual_projection, hidden x projection_dim). */
static vram_status cfg_vit(const cfg *c, vt_kind k, vram_arch *a, char *note, size_t notecap) {
    const char *cls = cfg_class(c);
    uint64_t labels, pool;
    char q[VRAM__QUOTE_CAP];
    vram_status st = cfg_vision(c, k, k == VT_CLIP ? &vt_clip : &vt_vit, a);
    if (st != VRAM_OK) return st;
    const uint64_t h = a->hidden;
    if (k == VT_CLIP && strcmp(cls, "CLIPVisionModelWithProjection") == 0) {
        if ((st = cfg_num(c, "projection_dim", 512, 1, VRAM_LIMIT_HIDDEN, &pool)) != VRAM_OK)
            return st;
        a->extra_params += h * pool;
    } else if (k != VT_VIT) {
        return VRAM_OK;
    } else if (str_ends(cls, "ForImageClassification")) {
        if ((st = cfg_labels(c, &labels)) != VRAM_OK) return st;
        a->extra_params += h * labels + labels;
    } else if (cls[0] == '\0' || str_ends(cls, "Model")) {
        if ((st = cfg_num(c, "pooler_output_size", h, 1, VRAM_LIMIT_HIDDEN, &pool)) != VRAM_OK)
            return st;
        a->extra_params += h * pool + pool;
    } else {
        snprintf(note, notecap, "%s: architectures %s: its task head is not counted", c->label,
                 vram__quote(cls, strlen(cls), q));
    }
    return VRAM_OK;
}

/* clip (CLIPConfig), siglip (SiglipConfig): two towers. The text tower is the arch (its
 * blocks are what a text query runs); the vision tower's parameters, CLIP's projections
 * (vision and text hidden x projection_dim, no bias) and logit_scale (SigLIP: logit_scale
 * and logit_bias) are extra_params, with a note: the towers run apart, images add no text
 * tokens, and the vision tower's working set is not estimated. */
static vram_status cfg_dual(const cfg *c, int siglip, vram_arch *a, char *note, size_t notecap) {
    char tl[600], vl[600], t1[32], t2[32];
    cfg tc, vc;
    vram_arch v;
    uint64_t proj = 0;
    vram_status st;
    if ((st = cfg_sub(c, "text_config", tl, sizeof tl, &tc)) ||
        (st = cfg_sub(c, "vision_config", vl, sizeof vl, &vc)) ||
        (st = cfg_text_tower(&tc, siglip, a)) ||
        (st = cfg_vision(&vc, siglip ? VT_SIGLIP : VT_CLIP, siglip ? &vt_vit : &vt_clip, &v)) ||
        (!siglip && (st = cfg_num(c, "projection_dim", 512, 1, VRAM_LIMIT_HIDDEN, &proj))))
        return st;
    const uint64_t vt = cfg_total(&v), text = cfg_total(a);
    a->extra_params += vt + (siglip ? 2u : (v.hidden + a->hidden) * proj + 1u);
    snprintf(note, notecap,
             "%s: read as %s text tower (%s parameters) with its vision tower (%s) counted "
             "beside it; the vision tower's activations are not estimated",
             c->label, siglip ? "a SigLIP" : "a CLIP", cfg_params_text(text, t1, sizeof t1),
             cfg_params_text(vt, t2, sizeof t2));
    return VRAM_OK;
}


/* The towers of the vision-language models below, each as its transformers class builds it
 * (parameters in *params, the width it hands the projector in *width, the patches of one
 * image along a side in *side). vc is the vision_config (absent: {}, every default).
 *   pixtral (PixtralVisionConfig: 1024 wide, 24 layers, 16 heads, MLP 4096, 1024 px, patch
 *     16): a patch convolution without bias, ln_pre, blocks of two RMS norms, q, k, v, o
 *     without biases (heads x head_dim wide), a gated MLP without biases.
 *   llama4_vision_model (Llama4VisionConfig: 768 wide, 34 layers, 16 heads, MLP 5632, 448
 *     px, patch 14, vision_output_dim 7680, projector_input/output_dim 4096): a class
 *     embedding, a position table of patches + 1, the patch as a linear map without bias,
 *     LayerNorms before and after, blocks of LayerNorms, q, k, v, o and a plain MLP all with
 *     biases, the adapter's fc1 (MLP width -> projector_input_dim) and fc2 (output dim
 *     square), without biases.
 *   qwen2_5_vl's (Qwen2_5_VLVisionConfig: hidden_size 3584, depth 32, MLP 3420, 16 heads,
 *     patch 14 x temporal 2, merge 2, out_hidden_size 3584): a 3-D patch convolution without
 *     bias, blocks of two RMS norms, fused qkv and proj with biases, a gated MLP with
 *     biases; the merger: an RMS norm, (width x m^2) squared and -> out_hidden_size, with
 *     biases.
 *   qwen3_vl's (Qwen3VLVisionConfig: 1152 wide, depth 27, MLP 4304, patch 16 x 2, merge 2,
 *     num_position_embeddings 2304, deepstack_visual_indexes 3): the patch convolution with
 *     a bias, a position table, blocks of LayerNorms, qkv, proj and a plain MLP with biases;
 *     the merger (LayerNorm of the width, then as qwen2.5's with biases) and one deepstack
 *     merger per index (its LayerNorm over width x m^2). */
typedef enum { TW_PIXTRAL, TW_LLAMA4, TW_QWEN2_5, TW_QWEN3 } tower_kind;

static vram_status cfg_tower(const cfg *vc, tower_kind k, uint64_t *params, uint64_t *width,
                             uint64_t *side, uint64_t *merge) {
    vram_status st;
    uint64_t L, h, heads, hd, f, ch, image = 0, patch, tp = 1, m = 1, out = 0, pos = 0, n = 0;
    uint64_t pin = 0, pout = 0;
    const int q = k == TW_QWEN2_5 || k == TW_QWEN3;
    if ((st = cfg_num(vc, q ? "depth" : "num_hidden_layers",
                      k == TW_PIXTRAL ? 24 : k == TW_LLAMA4 ? 34 : k == TW_QWEN2_5 ? 32 : 27, 1,
                      VRAM_LIMIT_LAYERS, &L)) ||
        (st = cfg_num(vc, "hidden_size",
                      k == TW_PIXTRAL ? 1024 : k == TW_LLAMA4 ? 768 : k == TW_QWEN2_5 ? 3584 : 1152,
                      1, VRAM_LIMIT_HIDDEN, &h)) ||
        (st = cfg_num(vc, q ? "num_heads" : "num_attention_heads", 16, 1, VRAM_LIMIT_HEADS,
                      &heads)) ||
        (st = cfg_num(vc, "intermediate_size",
                      k == TW_PIXTRAL ? 4096 : k == TW_LLAMA4 ? 5632 : k == TW_QWEN2_5 ? 3420 : 4304,
                      1, VRAM_LIMIT_INTERMEDIATE, &f)) ||
        (st = cfg_num(vc, q ? "in_channels" : "num_channels", 3, 1, 1000, &ch)) ||
        (st = cfg_num(vc, "patch_size", k == TW_PIXTRAL || k == TW_QWEN3 ? 16 : 14, 1, 100000,
                      &patch)))
        return st;
    if (k == TW_PIXTRAL || k == TW_LLAMA4) {
        if ((st = cfg_num(vc, "image_size", k == TW_PIXTRAL ? 1024 : 448, 1, VRAM_LIMIT_HIDDEN,
                          &image)) ||
            (k == TW_PIXTRAL &&
             (st = cfg_num(vc, "head_dim", h / heads, 1, VRAM_LIMIT_HIDDEN, &hd))))
            return st;
    } else {
        hd = h / heads;
        if ((st = cfg_num(vc, "temporal_patch_size", 2, 1, 1000, &tp)) ||
            (st = cfg_num(vc, "spatial_merge_size", 2, 1, 1000, &m)) ||
            (st = cfg_num(vc, "out_hidden_size", 3584, 1, VRAM_LIMIT_HIDDEN, &out)) ||
            (k == TW_QWEN3 && (st = cfg_num(vc, "num_position_embeddings", 2304, 1,
                                            VRAM_LIMIT_CONTEXT, &pos))))
            return st;
    }
    if (k == TW_LLAMA4 &&
        ((st = cfg_num(vc, "vision_output_dim", 7680, 1, VRAM_LIMIT_HIDDEN, &out)) ||
         (st = cfg_num(vc, "projector_input_dim", 4096, 1, VRAM_LIMIT_HIDDEN, &pin)) ||
         (st = cfg_num(vc, "projector_output_dim", 4096, 1, VRAM_LIMIT_HIDDEN, &pout))))
        return st;
    if (k == TW_LLAMA4) hd = h / heads;
    if (k == TW_QWEN3) {
        const cJSON *ds = cfg_get(vc, "deepstack_visual_indexes");
        if (ds != NULL && !cJSON_IsArray(ds))
            return vram__fail(vc->err, vc->errcap, VRAM_E_FORMAT, vc->label,
                              "deepstack_visual_indexes is %s, not a list", vram__json_type(ds));
        /* Qwen3.5's tower (Qwen3_5VisionConfig) is Qwen3-VL's without the deepstack
           mergers */
        const cJSON *vt = cfg_get(vc, "model_type");
        const int q35 = cJSON_IsString(vt) && strncmp(vt->valuestring, "qwen3_5", 7) == 0;
        n = ds != NULL ? (uint64_t)cJSON_GetArraySize(ds) : q35 ? 0u : 3u;
    }
    if (patch > 10000 || ch * tp * patch * patch > VRAM_LIMIT_HIDDEN || heads * hd > VRAM_LIMIT_HIDDEN ||
        h * m * m > VRAM_LIMIT_HIDDEN || (image != 0 && patch > image))
        return vram__fail(vc->err, vc->errcap, VRAM_E_FORMAT, vc->label,
                          "the patch (%llu x %llu x %llu channels), %llu heads of %llu or the "
                          "merge %llu is over the limit",
                          (unsigned long long)patch, (unsigned long long)patch,
                          (unsigned long long)ch, (unsigned long long)heads,
                          (unsigned long long)hd, (unsigned long long)m);
    const uint64_t pe = ch * tp * patch * patch, qw = heads * hd, em = h * m * m;
    /* every product below: <= 10^4 blocks x a few 10^12 */
    switch (k) {
    case TW_PIXTRAL:
        *params = pe * h + h + L * (2 * h + 4 * h * qw + 3 * h * f);
        *side = image / patch;
        break;
    case TW_LLAMA4:
        *side = image / patch;
        *params = h + (*side * *side + 1) * h + pe * h + 4 * h +
                  L * (4 * h * h + 4 * h + 4 * h + 2 * h * f + f + h) + f * pin + pout * pout;
        out = pout;
        break;
    case TW_QWEN2_5:
        *params = pe * h + L * (2 * h + 4 * h * h + 4 * h + 3 * h * f + 2 * f + h) + h + em * em +
                  em + em * out + out;
        *side = 896 / patch;
        break;
    case TW_QWEN3:
        *params = pe * h + h + pos * h + L * (4 * h + 4 * h * h + 4 * h + 2 * h * f + f + h) +
                  2 * h + em * em + em + em * out + out + n * (2 * em + em * em + em + em * out + out);
        *side = 896 / patch;
        break;
    }
    *width = k == TW_PIXTRAL ? h : out;
    *merge = m;
    return VRAM_OK;
}

/* Qwen2-Audio's encoder (Qwen2AudioEncoderConfig: num_mel_bins 128, encoder_layers 32,
 * encoder_attention_heads 20, encoder_ffn_dim 5120, d_model 1280, max_source_positions
 * 1500): two convolutions (mel -> d, d -> d, 3 taps, biases), a position table, blocks as
 * Whisper's encoder (k without a bias), a final LayerNorm. */
static vram_status cfg_audio_tower(const cfg *ac, uint64_t *params, uint64_t *width) {
    vram_status st;
    uint64_t mel, L, heads, f, d, src;
    if ((st = cfg_num(ac, "num_mel_bins", 128, 1, VRAM_LIMIT_HIDDEN, &mel)) ||
        (st = cfg_num(ac, "encoder_layers", 32, 1, VRAM_LIMIT_LAYERS, &L)) ||
        (st = cfg_num(ac, "encoder_attention_heads", 20, 1, VRAM_LIMIT_HEADS, &heads)) ||
        (st = cfg_num(ac, "encoder_ffn_dim", 5120, 1, VRAM_LIMIT_INTERMEDIATE, &f)) ||
        (st = cfg_num(ac, "d_model", 1280, 1, VRAM_LIMIT_HIDDEN, &d)) ||
        (st = cfg_num(ac, "max_source_positions", 1500, 1, VRAM_LIMIT_CONTEXT, &src)))
        return st;
    *params = mel * d * 3 + d + d * d * 3 + d + src * d +
              L * (4 * d * d + 3 * d + 4 * d + 2 * d * f + f + d) + 2 * d;
    *width = d;
    return VRAM_OK;
}

static vram_status cfg_arch(const cfg *c, vram_arch *a, uint64_t *guess_lo, uint64_t *guess_hi,
                            uint64_t *image_tokens, char *note, size_t notecap);

/* The language model of a vision-language model: text_config read by its own model_type
 * (absent: def_type; qwen2_vl and qwen2_5_vl configs before transformers 4.5x keep its keys
 * at the top level), a decoder vramkit models; *ok 0 with a note otherwise. Its head is
 * tied as the composite config says: tie_word_embeddings at the top level (absent: the
 * class's default tie_def; -1: the text model's own), or, with bc, the text_config's true
 * (the pre-v5 place, transformers forwards it). */
static vram_status cfg_vlm_text(const cfg *c, const char *def_type, int tie_def, int bc,
                                vram_arch *a, char *note, size_t notecap, int *ok) {
    char tl[600], tn[640] = "";
    cfg tc;
    vram_status st;
    uint64_t glo = 0, ghi = 0, inner_images = 0;
    int tie = 0, text_tie = 0;
    *ok = 0;
    if ((st = cfg_sub(c, "text_config", tl, sizeof tl, &tc)) != VRAM_OK) return st;
    if (!cfg_has(c, "text_config") && cfg_has(c, "num_hidden_layers")) tc = *c;
    const cJSON *mt = cfg_get(&tc, "model_type");
    const char *type = cJSON_IsString(mt) && tc.doc != c->doc ? mt->valuestring : def_type;
    const vram__arch_row *row = vram__arch_by_type(type);
    if (row != NULL && row->read == VRAM__READ_DECODER) {
        int unknown = 0;
        st = cfg_decoder(&tc, row, a, tn, sizeof tn, &unknown);
        if (unknown) a->family = VRAM_FAMILY_NONE;
    } else {
        st = cfg_arch(&tc, a, &glo, &ghi, &inner_images, tn, sizeof tn);
    }
    if (st != VRAM_OK) return st;
    if (a->family != VRAM_FAMILY_DECODER || glo != 0) {
        memset(a, 0, sizeof *a);
        snprintf(note, notecap, "%s: its text_config is not a decoder vramkit models%s%s; "
                 "architecture left unknown", c->label, tn[0] ? ": " : "", tn);
        return VRAM_OK;
    }
    if (tie_def >= 0) {
        text_tie = (a->flags & VRAM_ARCH_TIED) != 0;
        if ((st = cfg_bool(c, "tie_word_embeddings", tie_def, &tie)) != VRAM_OK) return st;
        if (bc && !tie && text_tie && tc.doc != c->doc) tie = 1;
        a->flags = (a->flags & ~VRAM_ARCH_TIED) | (tie ? VRAM_ARCH_TIED : 0u);
    }
    *ok = 1;
    return VRAM_OK;
}

/* Vision-language and audio-language models: a language model (cfg_vlm_text) whose
 * sequence takes each image (or clip) as tokens, with its tower and projector counted in
 * extra_params and the tokens per image in *image_tokens:
 *   llava (LlavaConfig: text llama, head untied): a CLIP tower by default (LLaVA's own
 *     defaults 1024 wide, 24 layers, 16 heads, MLP 4096, 336 px, patch 14), or SigLIP, or
 *     Pixtral; projector linear_1 (vision hidden x feature layers -> text hidden) and
 *     linear_2 (text hidden squared), biases unless multimodal_projector_bias is false;
 *     tokens: the tower's patches (CLIP: + 1 with vision_feature_select_strategy "full";
 *     Pixtral: rows x (columns + 1), one break token a row).
 *   qwen2_vl (Qwen2VLConfig): a qwen2 language model and its vision transformer
 *     (vision_config: depth 32, embed_dim 1280, mlp_ratio 4, num_heads 16, in_channels 3,
 *     patch_size 14, temporal_patch_size 2, spatial_merge_size 2, hidden_size: the language
 *     model's): a 3-D patch convolution without bias, blocks of LayerNorms, fused qkv and
 *     proj with biases, an MLP with biases; the merger (LayerNorm, then embed_dim x m^2 ->
 *     embed_dim x m^2 -> hidden with biases). Images of any size: each counts as an 896 x 896
 *     one (1024 tokens: 64 x 64 patches merged 2 x 2) unless --image-tokens says.
 *   qwen2_5_vl, qwen3_vl (text qwen2 / qwen3, untied): the towers of cfg_tower, 896 x 896
 *     images (1024 and 784 tokens); qwen3_5 and qwen3_5_moe read as qwen3_vl (their
 *     text_config's model_type names the text row; the tower has no deepstack mergers).
 *   gemma3 (Gemma3Config: text gemma3_text, tied): a SigLIP tower (vision_use_head false)
 *     and the projector's matrix (vision hidden x text hidden) and its norm (vision hidden);
 *     mm_tokens_per_image (256) a image.
 *   mistral3 (Mistral3Config: text mistral, tied): a Pixtral tower; the projector: an RMS
 *     norm, the patch merger (vision hidden x m^2 -> vision hidden), linear_1 and linear_2 as
 *     llava's (biases with multimodal_projector_bias, default true); tokens: (side / m) x
 *     (side / m + 1).
 *   llama4 (Llama4Config: text llama4_text, untied): the Llama 4 tower and linear_1
 *     (vision_output_dim -> text hidden, no bias); tokens: a 336 px tile's patches shuffled
 *     by pixel_shuffle_ratio (0.5: 144).
 *   qwen2_audio (Qwen2AudioConfig: text qwen2, its own tie): the audio encoder
 *     (cfg_audio_tower) and a linear projector with a bias; a 30 s clip adds 750 tokens,
 *     counted as an image (--images N for N clips). */
static vram_status cfg_vlm(const cfg *c, vram__read kind, vram_arch *a, uint64_t *image_tokens,
                           char *note, size_t notecap) {
    char vl[600], t1[32], q[VRAM__QUOTE_CAP];
    cfg vc;
    vram_status st;
    uint64_t vt = 0, proj = 0, width = 0, side = 0, m = 1;
    int ok = 0, bias = 1;
    const char *what = "vision tower";
    static const struct {
        vram__read kind;
        const char *text;
        int tie, bc;
    } texts[] = {{VRAM__READ_LLAVA, "llama", 0, 1},
                 {VRAM__READ_QWEN2_VL, "qwen2_vl_text", 0, 1},
                 {VRAM__READ_QWEN2_5_VL, "qwen2_5_vl_text", 0, 1},
                 {VRAM__READ_QWEN3_VL, "qwen3_vl_text", 0, 0},
                 {VRAM__READ_GEMMA3, "gemma3_text", 1, 0}, {VRAM__READ_MISTRAL3, "mistral", 1, 0},
                 {VRAM__READ_LLAMA4, "llama4_text", 0, 0}, {VRAM__READ_QWEN2_AUDIO, "qwen2", -1, 0}};
    size_t ti = 0;
    while (texts[ti].kind != kind)
        ti++;
    if ((st = cfg_sub(c, kind == VRAM__READ_QWEN2_AUDIO ? "audio_config" : "vision_config", vl,
                      sizeof vl, &vc)) != VRAM_OK)
        return st;
    if ((st = cfg_vlm_text(c, texts[ti].text, texts[ti].tie, texts[ti].bc, a, note, notecap,
                           &ok)) != VRAM_OK ||
        !ok)
        return st;
    /* text_config, read above, may have used the top-level keys; its label is c's */
    const uint64_t th = a->hidden;
    const cJSON *vmt = cfg_get(&vc, "model_type");
    const char *vtype = cJSON_IsString(vmt) ? vmt->valuestring : "";
    switch (kind) {
    case VRAM__READ_QWEN2_VL: {
        uint64_t depth, e, ratio, chans, patch, tp, out;
        if ((st = cfg_num(&vc, "depth", 32, 1, VRAM_LIMIT_LAYERS, &depth)) ||
            (st = cfg_num(&vc, "embed_dim", 1280, 1, VRAM_LIMIT_HIDDEN, &e)) ||
            (st = cfg_num(&vc, "mlp_ratio", 4, 1, 64, &ratio)) ||
            (st = cfg_num(&vc, "in_channels", cfg_has(&vc, "in_chans") ? 0 : 3, 0, 1000, &chans)) ||
            (chans == 0 && (st = cfg_num(&vc, "in_chans", 3, 1, 1000, &chans))) ||
            (st = cfg_num(&vc, "patch_size", 14, 1, 1000, &patch)) ||
            (st = cfg_num(&vc, "temporal_patch_size", 2, 1, 1000, &tp)) ||
            (st = cfg_num(&vc, "spatial_merge_size", 2, 1, 1000, &m)) ||
            (st = cfg_num(&vc, "hidden_size", th, 1, VRAM_LIMIT_HIDDEN, &out)))
            return st;
        if (e * ratio > VRAM_LIMIT_HIDDEN || e * m * m > VRAM_LIMIT_HIDDEN ||
            chans * tp * patch * patch > VRAM_LIMIT_HIDDEN)
            return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, vl,
                              "embed_dim %llu with mlp_ratio %llu, spatial_merge_size %llu or "
                              "the patch is over the limit",
                              (unsigned long long)e, (unsigned long long)ratio,
                              (unsigned long long)m);
        const uint64_t f = e * ratio, em = e * m * m;
        vt = chans * tp * patch * patch * e +
             depth * (4 * e + 3 * e * e + 3 * e + e * e + e + 2 * e * f + f + e);
        proj = 2 * e + em * em + em + em * out + out;
        *image_tokens = 1024;
        break;
    }
    case VRAM__READ_QWEN2_5_VL:
    case VRAM__READ_QWEN3_VL:
        if ((st = cfg_tower(&vc, kind == VRAM__READ_QWEN3_VL ? TW_QWEN3 : TW_QWEN2_5, &vt, &width,
                            &side, &m)) != VRAM_OK)
            return st;
        *image_tokens = (side / m) * (side / m);
        break;
    case VRAM__READ_GEMMA3: {
        vram_arch v;
        if ((st = cfg_vision(&vc, VT_SIGLIP, &vt_vit, &v)) != VRAM_OK ||
            (st = cfg_num(c, "mm_tokens_per_image", 256, 1, VRAM_LIMIT_CONTEXT, image_tokens)))
            return st;
        vt = cfg_total(&v);
        proj = v.hidden * th + v.hidden;
        break;
    }
    case VRAM__READ_LLAMA4: {
        double ratio = 0.5;
        const cJSON *pr = cfg_get(&vc, "pixel_shuffle_ratio");
        if (pr != NULL && (!cJSON_IsNumber(pr) || !(pr->valuedouble > 0 && pr->valuedouble <= 1)))
            return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, vl,
                              "pixel_shuffle_ratio is %s, not a number in (0, 1]",
                              vram__json_type(pr));
        if (pr != NULL) ratio = pr->valuedouble;
        if ((st = cfg_tower(&vc, TW_LLAMA4, &vt, &width, &side, &m)) != VRAM_OK) return st;
        proj = width * th;
        *image_tokens = (uint64_t)((double)(side * side) * ratio * ratio);
        break;
    }
    case VRAM__READ_QWEN2_AUDIO:
        what = "audio tower";
        if ((st = cfg_audio_tower(&vc, &vt, &width)) != VRAM_OK) return st;
        proj = width * th + th;
        *image_tokens = 750;
        break;
    default: { /* llava, mistral3 */
        const int mistral = kind == VRAM__READ_MISTRAL3;
        const int pixtral = mistral || strcmp(vtype, "pixtral") == 0;
        const int sig = strcmp(vtype, "siglip_vision_model") == 0;
        const cJSON *fl = cfg_get(c, "vision_feature_layer");
        const cJSON *fs = cfg_get(c, "vision_feature_select_strategy");
        uint64_t layers_used = cJSON_IsArray(fl) ? (uint64_t)cJSON_GetArraySize(fl) : 1u;
        if (layers_used == 0) layers_used = 1;
        if (!pixtral && !sig && vtype[0] != '\0' && strcmp(vtype, "clip_vision_model") != 0) {
            memset(a, 0, sizeof *a);
            snprintf(note, notecap, "%s: vision_config model_type %s is not a vision tower "
                     "vramkit models; architecture left unknown", c->label,
                     vram__quote(vtype, strlen(vtype), q));
            return VRAM_OK;
        }
        if ((st = cfg_bool(c, "multimodal_projector_bias", 1, &bias)) != VRAM_OK) return st;
        if (pixtral) {
            if ((st = cfg_tower(&vc, TW_PIXTRAL, &vt, &width, &side, &m)) != VRAM_OK ||
                (mistral && (st = cfg_num(c, "spatial_merge_size", 2, 1, 1000, &m))))
                return st;
            if (!mistral) m = 1;
            /* mistral3's patch merger and its norm */
            if (mistral) proj = width + width * m * m * width;
            *image_tokens = (side / m) * (side / m + 1);
        } else {
            vram_arch v;
            /* without a vision_config, LlavaConfig's own tower; else the class's defaults */
            if ((st = cfg_vision(&vc, sig ? VT_SIGLIP : VT_CLIP,
                                 sig ? &vt_vit
                                     : (cfg_has(c, "vision_config") ? &vt_clip : &vt_llava),
                                 &v)) != VRAM_OK)
                return st;
            vt = cfg_total(&v);
            width = v.hidden;
            /* patches without the class token, unless the strategy keeps it */
            *image_tokens = (sig ? v.positions : v.positions - 1u) +
                            (cJSON_IsString(fs) && strcmp(fs->valuestring, "full") == 0 && !sig);
        }
        proj += width * layers_used * th + th * th + (bias ? 2 * th : 0u);
        break;
    }
    }
    a->extra_params += vt + proj;
    snprintf(note, notecap,
             "%s: read as a %s language model with a%s %s and projector (%s parameters) "
             "counted beside it; each %s adds %llu tokens to the sequence%s; the %s's "
             "activations are not estimated",
             c->label,
             kind == VRAM__READ_LLAVA           ? "decoder"
             : kind == VRAM__READ_QWEN2_VL      ? "qwen2"
             : kind == VRAM__READ_QWEN2_5_VL    ? "qwen2"
             : kind == VRAM__READ_QWEN3_VL      ? "qwen3"
                                                : texts[ti].text,
             kind == VRAM__READ_QWEN2_AUDIO ? "n" : "", what,
             cfg_params_text(vt + proj, t1, sizeof t1),
             kind == VRAM__READ_QWEN2_AUDIO ? "30 s clip (counted as an image)" : "image",
             (unsigned long long)*image_tokens,
             kind == VRAM__READ_QWEN2_VL || kind == VRAM__READ_QWEN2_5_VL ||
                     kind == VRAM__READ_QWEN3_VL
                 ? " (an 896 x 896 image; --image-tokens N for others)"
                 : "",
             what);
    return VRAM_OK;
}

/* ---- the table ------------------------------------------------------------------------ */

static const char *const moe_keys[] = {"num_local_experts", "num_experts", "n_routed_experts",
                                       "moe_num_experts"};

static vram_status cfg_dtype(const cfg *c, vram_dtype *out) {
    const cJSON *j = cfg_get(c, "torch_dtype");
    if (j == NULL) j = cfg_get(c, "dtype");
    *out = VRAM_DTYPE_NONE;
    if (j == NULL) return VRAM_OK;
    if (!cJSON_IsString(j))
        return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label,
                          "torch_dtype is %s, not a string", vram__json_type(j));
    const char *s = j->valuestring;
    if (strncmp(s, "torch.", 6) == 0) s += 6;
    static const struct {
        const char *name;
        vram_dtype t;
    } names[] = {
        {"float32", VRAM_DTYPE_F32},         {"float", VRAM_DTYPE_F32},
        {"float16", VRAM_DTYPE_F16},         {"half", VRAM_DTYPE_F16},
        {"bfloat16", VRAM_DTYPE_BF16},       {"float64", VRAM_DTYPE_F64},
        {"double", VRAM_DTYPE_F64},          {"float8_e4m3fn", VRAM_DTYPE_F8_E4M3},
        {"float8_e5m2", VRAM_DTYPE_F8_E5M2},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(s, names[i].name) == 0) *out = names[i].t;
    /* quantization_config.quant_method "fp8" (DeepSeek-V3's release, the Qwen3 FP8 ones):
       the weights are stored in float8 e4m3 whatever torch_dtype says (their block scales
       and the few bf16 tensors are within the arch count's tolerance) */
    const cJSON *q = cfg_get(c, "quantization_config");
    const cJSON *qm = cJSON_IsObject(q) ? cJSON_GetObjectItemCaseSensitive(q, "quant_method") : NULL;
    if (cJSON_IsString(qm) && strcmp(qm->valuestring, "fp8") == 0) *out = VRAM_DTYPE_F8_E4M3;
    return VRAM_OK;
}

/* The fewest and the most parameters an arch guessed from keys could hold (*lo, *hi): the
 * same numbers read with a plain or a gated MLP, a tied or an untied head (unless
 * tie_word_embeddings says which), no biases or biases on every projection and a head bias,
 * one RMS norm per block or two LayerNorms; an encoder-decoder's position tables (both
 * stacks, context rows each) or none. 0 and 0 when a variant fails the core's check. */
static void cfg_guess_range(const cfg *c, const vram_arch *a, uint64_t *lo, uint64_t *hi) {
    const uint32_t biases = VRAM_ARCH_QKV_BIAS | VRAM_ARCH_OUT_BIAS | VRAM_ARCH_MLP_BIAS;
    const int tie_known = cfg_has(c, "tie_word_embeddings");
    vram_arch low = *a, high = *a;
    vram_param_count pl, ph;
    low.mlp = VRAM_MLP_PLAIN;
    low.norm = VRAM_NORM_RMS;
    low.flags = (a->flags & ~biases) | VRAM_ARCH_PARALLEL | (tie_known ? 0u : VRAM_ARCH_TIED);
    low.positions = 0;
    high.mlp = VRAM_MLP_GATED;
    high.norm = VRAM_NORM_LAYER;
    high.flags = (a->flags & ~VRAM_ARCH_PARALLEL) | biases;
    if (!tie_known) high.flags &= ~VRAM_ARCH_TIED;
    /* a head bias, and a transform before the head (dense with bias and a LayerNorm, as
       BERT's and ModernBERT's) */
    high.extra_params = a->extra_params + a->vocab + a->hidden * a->hidden + 3 * a->hidden;
    if (a->family == VRAM_FAMILY_ENCODER_DECODER)
        high.positions = a->positions + 2 * (a->context != 0 ? a->context : 1024u);
    *lo = *hi = 0;
    if (vram_arch_params(&low, &pl) == VRAM_OK && vram_arch_params(&high, &ph) == VRAM_OK) {
        /* norms without weights (nanochat's): the low reading's one norm a block and the
           final one hold no parameters */
        const uint64_t norms = (a->layers + 1) * a->hidden;
        *lo = pl.total > norms ? pl.total - norms : 0;
        *hi = ph.total;
    }
}

/* A key (set: not null, false or 0) that says the model has a structure neither guessed
 * reading counts: a state-space or linear-attention mixer, per-layer embeddings, blocks of
 * different widths or that reuse another's keys and values (Gemma 4), recurrent or looped
 * blocks, latent attention, a nested vision or audio tower, factorized embeddings,
 * adapters; or a layer_types entry that is not an attention block. Its name in *key (and the
 * kind in *what), 1; else 0. A guess from such a config would miss by what it cannot see:
 * it is refused instead. */
static int cfg_unseen(const cfg *c, const char **key, const char **what) {
    static const struct {
        const char *key;
        int prefix;
        const char *what;
    } keys[] = {
        {"mamba", 1, "a Mamba mixer"},
        {"ssm_", 1, "a state-space mixer"},
        {"state_size", 0, "a state-space mixer"},
        {"time_step_rank", 0, "a state-space mixer"},
        {"linear_", 1, "a linear-attention mixer"},
        {"lru_width", 0, "a recurrent block"},
        {"block_types", 0, "blocks of several kinds"},
        {"layers_block_type", 0, "blocks of several kinds"},
        {"hybrid_layer_ids", 0, "blocks of several kinds"},
        {"attn_layer_indices", 0, "attention in some blocks only"},
        {"attn_layer_period", 0, "attention in some blocks only"},
        {"hidden_size_per_layer_input", 0, "per-layer embeddings"},
        {"vocab_size_per_layer_input", 0, "per-layer embeddings"},
        {"per_layer_config", 0, "blocks of different widths"},
        {"global_head_dim", 0, "blocks of different widths"}, /* Gemma 4's full-attention */
        {"num_global_key_value_heads", 0, "blocks of different widths"},
        {"num_kv_shared_layers", 0, "blocks that reuse another block's keys and values"},
        {"num_layers_per_stack", 0, "looped blocks"},
        {"n_recurrent_layers", 0, "looped blocks"},
        {"q_lora_rank", 0, "latent attention"},
        {"kv_lora_rank", 0, "latent attention"},
        {"vision_config", 0, "a vision tower"},
        {"audio_config", 0, "an audio tower"},
        {"input_embedding_size", 0, "factorized embeddings"},
        {"output_embedding_size", 0, "factorized embeddings"},
        {"pronunciation_vocab_size", 0, "more embedding tables"},
        {"shape_vocab_size", 0, "more embedding tables"},
        {"adapter_reduction_factor", 0, "adapters"},
        {"adapter_rank", 0, "adapters"},
    };
    static const char *const attn[] = {"full_attention", "sliding_attention",
                                       "chunked_attention", "attention"};
    for (const cJSON *j = c->doc->child; j != NULL; j = j->next) {
        if (j->string == NULL || cJSON_IsNull(j) || cJSON_IsFalse(j) ||
            (cJSON_IsNumber(j) && j->valuedouble == 0))
            continue;
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
            const size_t n = strlen(keys[i].key);
            if (keys[i].prefix ? strncmp(j->string, keys[i].key, n) == 0
                               : strcmp(j->string, keys[i].key) == 0) {
                *key = j->string;
                *what = keys[i].what;
                return 1;
            }
        }
    }
    /* embeddings narrower than the blocks (ALBERT, ELECTRA): a projection the reading lacks */
    const cJSON *es = cfg_get(c, "embedding_size"), *hs = cfg_get(c, "hidden_size");
    if (cJSON_IsNumber(es) && (!cJSON_IsNumber(hs) || es->valuedouble != hs->valuedouble)) {
        *key = "embedding_size";
        *what = "factorized embeddings";
        return 1;
    }
    const cJSON *lt = cfg_get(c, "layer_types"), *e;
    if (cJSON_IsArray(lt)) {
        cJSON_ArrayForEach(e, lt) {
            int known = 0;
            for (size_t k = 0; k < sizeof attn / sizeof attn[0]; k++)
                known |= cJSON_IsString(e) && strcmp(e->valuestring, attn[k]) == 0;
            if (!known) {
                *key = "layer_types";
                *what = "blocks that are not attention blocks";
                return 1;
            }
        }
    }
    return 0;
}

/* The class a config names is an encoder's (a task head on an encoder), or the config says
 * is_decoder false and names no generating head. */
static int cfg_encoder_like(const cfg *c) {
    static const char *const enc[] = {"ForMaskedLM", "ForSequenceClassification",
                                      "ForTokenClassification", "ForQuestionAnswering",
                                      "ForMultipleChoice", "ForPreTraining"};
    static const char *const gen[] = {"ForCausalLM", "LMHeadModel", "ForConditionalGeneration",
                                      "Decoder"};
    const char *cls = cfg_class(c);
    for (size_t i = 0; i < sizeof enc / sizeof enc[0]; i++)
        if (str_ends(cls, enc[i])) return 1;
    for (size_t i = 0; i < sizeof gen / sizeof gen[0]; i++)
        if (strstr(cls, gen[i]) != NULL) return 0;
    return cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(c->doc, "is_decoder"));
}

/* The note of a guessed arch: what it was read as, and the range its keys allow. */
static void cfg_guess_note(const cfg *c, const vram_arch *a, const char *what, const char *as,
                           uint64_t lo, uint64_t hi, char *note, size_t notecap) {
    char l[32], h[32], e[32];
    vram_param_count pc;
    if (vram_arch_params(a, &pc) != VRAM_OK) pc.total = 0;
    snprintf(note, notecap,
             "%s: %s; read as %s (%s MLP, %s norm, %s, %s head): %s parameters, and from its "
             "keys alone anything from %s to %s",
             c->label, what, as, a->mlp == VRAM_MLP_GATED ? "gated" : "plain",
             a->norm == VRAM_NORM_RMS ? "RMS" : "layer",
             (a->flags & (VRAM_ARCH_QKV_BIAS | VRAM_ARCH_OUT_BIAS | VRAM_ARCH_MLP_BIAS))
                 ? "biases"
                 : "no biases",
             (a->flags & VRAM_ARCH_TIED) ? "tied" : "untied",
             cfg_params_text(pc.total, e, sizeof e), cfg_params_text(lo, l, sizeof l),
             cfg_params_text(hi, h, sizeof h));
}

/* A config by its model_type's row (model_arch.h): its family's reader. */
static vram_status cfg_by_row(const cfg *c, const vram__arch_row *r, vram_arch *a,
                              uint64_t *image_tokens, char *note, size_t notecap) {
    char q[VRAM__QUOTE_CAP];
    int unknown = 0;
    switch (r->read) {
    case VRAM__READ_DECODER: return cfg_decoder(c, r, a, note, notecap, &unknown);
    case VRAM__READ_GPT2: return cfg_gpt2(c, a);
    case VRAM__READ_NEOX: return cfg_neox(c, a);
    case VRAM__READ_PHI: return cfg_phi(c, a);
    case VRAM__READ_FALCON: return cfg_falcon(c, a);
    case VRAM__READ_GPTJ: return cfg_gptj(c, a);
    case VRAM__READ_BIGCODE: return cfg_bigcode(c, a);
    case VRAM__READ_OPT: return cfg_opt(c, a, note, notecap);
    case VRAM__READ_BLOOM: return cfg_bloom(c, a);
    case VRAM__READ_GPT_NEO: return cfg_gpt_neo(c, a);
    case VRAM__READ_MPT: return cfg_mpt(c, a, note, notecap);
    case VRAM__READ_XGLM: return cfg_xglm(c, a);
    case VRAM__READ_NEOX_JP: return cfg_neox_jp(c, a);
    case VRAM__READ_OPENAI_GPT: return cfg_gpt1(c, 0, a);
    case VRAM__READ_CTRL: return cfg_gpt1(c, 1, a);
    case VRAM__READ_WHISPER: return cfg_whisper(c, a);
    case VRAM__READ_VIT: return cfg_vit(c, VT_VIT, a, note, notecap);
    case VRAM__READ_CLIP_VISION: return cfg_vit(c, VT_CLIP, a, note, notecap);
    case VRAM__READ_SIGLIP_VISION: return cfg_vit(c, VT_SIGLIP, a, note, notecap);
    case VRAM__READ_CLIP: return cfg_dual(c, 0, a, note, notecap);
    case VRAM__READ_SIGLIP: return cfg_dual(c, 1, a, note, notecap);
    case VRAM__READ_LLAVA:
    case VRAM__READ_QWEN2_VL:
    case VRAM__READ_QWEN2_5_VL:
    case VRAM__READ_QWEN3_VL:
    case VRAM__READ_GEMMA3:
    case VRAM__READ_MISTRAL3:
    case VRAM__READ_LLAMA4:
    case VRAM__READ_QWEN2_AUDIO: return cfg_vlm(c, r->read, a, image_tokens, note, notecap);
    case VRAM__READ_BERT: return cfg_bert(c, 30522, 0, a, note, notecap);
    case VRAM__READ_ROBERTA: return cfg_bert(c, 50265, 1, a, note, notecap);
    case VRAM__READ_XLM_ROBERTA: return cfg_bert(c, 30522, 1, a, note, notecap);
    case VRAM__READ_DISTILBERT: return cfg_distilbert(c, a, note, notecap);
    case VRAM__READ_MODERNBERT: return cfg_modernbert(c, a, note, notecap);
    case VRAM__READ_M2M: return cfg_seq2seq(c, 128112, 0, a);
    case VRAM__READ_BART: return cfg_seq2seq(c, 50265, 1, a);
    case VRAM__READ_T5: return cfg_t5(c, 0, a);
    case VRAM__READ_MT5: return cfg_t5(c, 1, a);
    case VRAM__READ_UNMODELLED:
    case VRAM__READ_GGUF_ONLY: break;
    }
    snprintf(note, notecap,
             "%s: model_type %s (mixture of experts) is not modelled; architecture left unknown",
             c->label, vram__quote(r->type, strlen(r->type), q));
    return VRAM_OK;
}

static vram_status cfg_arch(const cfg *c, vram_arch *a, uint64_t *guess_lo, uint64_t *guess_hi,
                            uint64_t *image_tokens, char *note, size_t notecap) {
    char q[VRAM__QUOTE_CAP];
    const cJSON *jt = cfg_get(c, "model_type");
    const char *type = cJSON_IsString(jt) ? jt->valuestring : NULL;
    const vram__arch_row *row = type != NULL ? vram__arch_by_type(type) : NULL;
    if (jt != NULL && type == NULL)
        return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label,
                          "model_type is %s, not a string", vram__json_type(jt));
    memset(a, 0, sizeof *a);
    /* an expert count on a type whose row has no experts (or no row): not modelled */
    for (size_t i = 0; (row == NULL || (row->moe == VRAM__MOE_NONE &&
                                        row->read != VRAM__READ_UNMODELLED)) &&
                       i < sizeof moe_keys / sizeof moe_keys[0];
         i++) {
        uint64_t experts;
        vram_status st = cfg_num(c, moe_keys[i], 0, 0, VRAM_LIMIT_HIDDEN, &experts);
        if (st != VRAM_OK) return st;
        if (experts > 1) {
            snprintf(note, notecap,
                     "%s: %s is %llu (mixture of experts), which is not modelled; architecture "
                     "left unknown",
                     c->label, moe_keys[i], (unsigned long long)experts);
            return VRAM_OK;
        }
    }
    if (row != NULL) return cfg_by_row(c, row, a, image_tokens, note, notecap);

    /* the fallback: only when every key the pattern needs is there */
    char what[160];
    if (type != NULL)
        snprintf(what, sizeof what, "model_type %s is not in vramkit's table",
                 vram__quote(type, strlen(type), q));
    else
        snprintf(what, sizeof what, "no model_type");
    const char *ukey = NULL, *uwhat = NULL;
    if (cfg_unseen(c, &ukey, &uwhat)) {
        snprintf(note, notecap,
                 "%s: %s, and its key %s says %s, which no guessed reading counts; "
                 "architecture left unknown",
                 c->label, what, ukey, uwhat);
        return VRAM_OK;
    }
    if (cfg_has(c, "d_model") && cfg_has(c, "encoder_layers") && cfg_has(c, "decoder_layers") &&
        cfg_has(c, "encoder_attention_heads") && cfg_has(c, "encoder_ffn_dim") &&
        cfg_has(c, "vocab_size")) {
        vram_status st = cfg_seq2seq(c, 0, 0, a);
        if (st != VRAM_OK) return st;
        cfg_guess_range(c, a, guess_lo, guess_hi);
        cfg_guess_note(c, a, what, "an M2M100-like encoder-decoder", *guess_lo, *guess_hi, note,
                       notecap);
        return VRAM_OK;
    }
    if (cfg_has(c, "num_hidden_layers") && cfg_has(c, "hidden_size") &&
        cfg_has(c, "num_attention_heads") && cfg_has(c, "intermediate_size") &&
        cfg_has(c, "vocab_size")) {
        if (cfg_encoder_like(c)) {
            /* an encoder: no cache while it runs; its head by the class it names */
            vram_status st = cfg_bert(c, 0, 0, a, note, notecap);
            if (st != VRAM_OK) return st;
            cfg_guess_range(c, a, guess_lo, guess_hi);
            cfg_guess_note(c, a, what, "a BERT-like encoder", *guess_lo, *guess_hi, note,
                           notecap);
            return VRAM_OK;
        }
        static const vram__arch_row generic = {.read = VRAM__READ_DECODER,
                                               .family = VRAM_FAMILY_DECODER,
                                               .mlp = VRAM_MLP_GATED,
                                               .norm = VRAM_NORM_RMS,
                                               .flags = VRAM_ARCH_FINAL_NORM};
        int unknown = 0;
        vram_status st = cfg_decoder(c, &generic, a, note, notecap, &unknown);
        /* no max_position_embeddings: context unknown, not 0 as an error */
        if (st != VRAM_OK) return st;
        cfg_guess_range(c, a, guess_lo, guess_hi);
        cfg_guess_note(c, a, what, "a Llama-like decoder", *guess_lo, *guess_hi, note, notecap);
        return VRAM_OK;
    }
    snprintf(note, notecap,
             "%s: %s and its keys match no known pattern; architecture left "
             "unknown",
             c->label, what);
    return VRAM_OK;
}

vram_status vram_config_parse(const char *json, size_t len, const char *label, vram_model *m,
                              char *err, size_t errcap) {
    char note[512] = "";
    if (err != NULL && errcap > 0) err[0] = '\0';
    if ((uint64_t)len > VRAM_JSON_FILE_MAX)
        return vram__fail(err, errcap, VRAM_E_FORMAT, label,
                          "%zu bytes is over the %llu-byte limit for config.json", len,
                          (unsigned long long)VRAM_JSON_FILE_MAX);
    cJSON *doc = NULL;
    vram_status st = vram__json_object(json, len, 1, label, NULL, &doc, err, errcap);
    if (st != VRAM_OK) return st;
    vram_json_last_wins(doc); /* a key given twice: the last, as Python's json and transformers */
    vram_model out;
    memset(&out, 0, sizeof out);
    cfg c = {doc, label, err, errcap};
    if (st == VRAM_OK)
        st = cfg_arch(&c, &out.arch, &out.guess_low, &out.guess_high, &out.image_tokens, note,
                      sizeof note);
    if (st == VRAM_OK) st = vram__arch_validate(&out.arch, label, err, errcap);
    if (st == VRAM_OK) st = cfg_dtype(&c, &out.dtype);
    cJSON_Delete(doc);
    if (st != VRAM_OK) return st;
    *m = out;
    if (err != NULL && errcap > 0) snprintf(err, errcap, "%s", note);
    return VRAM_OK;
}

vram_status vram_config_read(const char *path, vram_model *m, char *err, size_t errcap) {
    char *text;
    size_t len;
    vram_status st = vram__read_small_file(path, VRAM_JSON_FILE_MAX, &text, &len, err, errcap);
    if (st != VRAM_OK) return st;
    st = vram_config_parse(text, len, path, m, err, errcap);
    free(text);
    return st;
}
