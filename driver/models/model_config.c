/* driver/models/model_config.c — Hugging Face config.json to architecture numbers (vram_arch).
 * One row per model_type; a key the file leaves out takes the default of the transformers
 * config class that reads it (the source of every default is named below), so vramkit
 * reads a config the way transformers would build the model from it.
 *
 * Decoder-only, keys num_hidden_layers, hidden_size, num_attention_heads,
 * num_key_value_heads (absent/null: = heads), head_dim (absent/null: hidden / heads),
 * intermediate_size, vocab_size, max_position_embeddings (-> context; rotary, so
 * positions 0), tie_word_embeddings; all GATED MLP, RMS norm, FINAL_NORM:
 *
 *   type     layers hidden heads kv     head_dim inter  vocab  max_pos tie   source
 *   llama    32     4096   32    =heads -        11008  32000  2048    false LlamaConfig
 *   mistral  32     4096   32    8      -        14336  32000  131072  false MistralConfig
 *   qwen2    32     4096   32    32     -        22016  151936 32768   false Qwen2Config
 *   qwen3    32     4096   32    32     128      22016  151936 32768   false Qwen3Config
 *   gemma    28     3072   16    16     256      24576  256000 8192    true  GemmaConfig
 *   gemma2   26     2304   8     4      256      9216   256000 8192    true  Gemma2Config
 *   gemma3_text 26  2304   8     4      256      9216   262208 131072  true  Gemma3TextConfig
 *   phi3     32     3072   32    =heads -        8192   32064  4096    false Phi3Config
 * Biases: attention_bias (default false) puts them on q, k, v and o (llama, qwen3, gemma*),
 * mlp_bias on the MLP (llama); qwen2 always has q, k, v biases. extra_params: qwen3's
 * q_norm and k_norm (2 x head_dim per layer), gemma2's two extra norms (2 x hidden per
 * layer), gemma3_text's both. phi3's fused gate_up_proj counts as gate + up.
 * Sliding-window attention (sliding_window, window_layers of vram_arch): see cfg_swa.
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
 * whisper: see cfg_whisper (an audio encoder-decoder: 1500 source frames, 448 target tokens).
 * vit, clip_vision_model, siglip_vision_model: see cfg_vision and cfg_vit (an encoder whose
 *   sequence is the image's patches, no vocabulary); clip, siglip: cfg_dual (the text tower
 *   is the arch, the vision tower's parameters extra); llava, qwen2_vl: cfg_vlm (the language
 *   model is the arch, the vision tower and projector extra, m->image_tokens per image).
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
 * Mixtures of experts (decoders; GATED MLP, RMS norm, FINAL_NORM, untied unless
 * tie_word_embeddings is true). Keys as the dense rows, plus the expert count, the top-k
 * (num_experts_per_tok) and the routed experts' width; a key the file leaves out takes the
 * value of the model named in the last column (its published config.json):
 *
 *   type        experts key        top-k xwidth key (default)    shared  dense  model
 *   mixtral     num_local_experts 8  2  intermediate_size 14336    -      -     Mixtral-8x7B
 *   qwen3_moe   num_experts 128      8  moe_intermediate_size 768  -      -     Qwen3-30B-A3B
 *   deepseek_v2 n_routed_experts 160 6  moe_intermediate_size 1536 2      1     DeepSeek-V2
 *   deepseek_v3 n_routed_experts 256 8  moe_intermediate_size 2048 1      3     DeepSeek-V3
 *   gpt_oss     num_local_experts 32 4  intermediate_size 2880     -      -     gpt-oss-20b
 *   qwen2_moe   num_experts 60       4  moe_intermediate_size 1408 5632   -     Qwen2MoeConfig
 *   olmoe       num_experts 64       8  intermediate_size 2048     -      -     OlmoeConfig
 * (the last two from the transformers config class's defaults, Qwen1.5-MoE-A2.7B's and
 * OLMoE-1B-7B's shapes but for OLMoE's intermediate_size 1024 and max_position 4096.)
 * shared: n_shared_experts, a shared MLP of n x moe_intermediate_size (Qwen2-MoE:
 * shared_expert_intermediate_size, one MLP of that width, and its sigmoid gate hidden -> 1 in
 * extra_params); dense: first_k_dense_replace, leading blocks with a dense MLP of
 * intermediate_size (Qwen2/3-MoE: mlp_only_layers when it lists the first k blocks in order;
 * DeepSeek's moe_layer_freq must be 1, Qwen2/3-MoE's decoder_sparse_step 1 and
 * mlp_only_layers empty or such a prefix: other layouts are not modelled, family NONE with a
 * note). qwen2_moe has q, k, v biases (qkv_bias, default true); olmoe has q_norm over hidden
 * and k_norm over kv_heads x hidden / heads (extra_params). DeepSeek's attention is latent
 * (vram_arch): q_lora_rank (null: q projected directly), kv_lora_rank, qk_nope_head_dim,
 * qk_rope_head_dim, v_head_dim; head_dim = nope + rope. qwen3_moe has qwen3's q_norm and
 * k_norm (extra_params 2 x head_dim per layer); gpt_oss has biases on attention
 * (attention_bias, default true), router and experts, one attention sink per head and
 * layer (extra_params), and when quantization_config.quant_method is "mxfp4" its routed
 * experts are stored in MXFP4 (expert_format). The top-k key is num_experts_per_tok
 * (gpt_oss also experts_per_token); a top-k above the expert count is an error.
 *
 * Other mixture-of-experts types (dbrx, phimoe, granitemoe, jamba,
 * nllb-moe, switch_transformers), and any other config with an expert count key
 * (num_local_experts, num_experts, n_routed_experts, moe_num_experts), are not modelled:
 * family NONE with a note (a tensor list, when present, is still counted).
 *
 * Fallback for a model_type not in the table, on the keys present, with a note saying so:
 *   d_model, encoder_layers, decoder_layers, encoder_attention_heads, encoder_ffn_dim and
 *     vocab_size all present -> read as m2m_100 (no position table assumed);
 *   num_hidden_layers, hidden_size, num_attention_heads, intermediate_size and vocab_size all
 *     present -> read as llama (gated MLP, RMS norm, no biases), untied unless
 *     tie_word_embeddings is true (untied counts the larger model);
 *   otherwise family NONE. Nothing is guessed from a partial set of keys. A guess sets
 *   m->guess_low and m->guess_high to the fewest and most parameters the keys allow
 *   (cfg_guess_range: plain or gated MLP, tied or untied head, biases or none, one RMS norm
 *   or two LayerNorms a block), which the estimate's range spans, and the note says what it
 *   was read as and that range.
 *
 * torch_dtype (or "dtype", transformers >= 4.56): float32, float16, bfloat16, float64,
 * float8_e4m3fn, float8_e5m2 (a "torch." prefix is allowed); "auto", null or another name
 * leave m->dtype NONE. quantization_config.quant_method "fp8" makes it float8_e4m3fn. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "model_config.h"

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

/* An architecture number: absent or null -> def; else an exact integer in [min, limit]. */
static vram_status cfg_num(const cfg *c, const char *key, uint64_t def, uint64_t min,
                           uint64_t limit, uint64_t *out) {
    char num[40];
    const cJSON *j = cfg_get(c, key);
    if (j == NULL) {
        *out = def;
        return VRAM_OK;
    }
    if (!cJSON_IsNumber(j))
        return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label, "%s is %s, not a number", key,
                          vram__json_type(j));
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
    if (j == NULL) {
        *out = def;
        return VRAM_OK;
    }
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

/* ---- decoders ------------------------------------------------------------------------ */

typedef struct llama_row {
    const char *type;
    uint64_t layers, hidden, heads, kv, head_dim, inter, vocab, max_pos;
    int tie;
    int qkv_bias_always; /* qwen2 */
    int norms_per_layer; /* norms beyond the usual two (gemma2: 2) */
    int qk_norm;         /* qwen3: q_norm and k_norm over head_dim */
} llama_row;

static const llama_row llama_rows[] = {
    /* type      layers hidden heads kv  head_dim inter  vocab   max_pos tie qkv n  qk */
    {"llama", 32, 4096, 32, 0, 0, 11008, 32000, 2048, 0, 0, 0, 0},
    {"mistral", 32, 4096, 32, 8, 0, 14336, 32000, 131072, 0, 0, 0, 0},
    {"qwen2", 32, 4096, 32, 32, 0, 22016, 151936, 32768, 0, 1, 0, 0},
    {"qwen3", 32, 4096, 32, 32, 128, 22016, 151936, 32768, 0, 0, 0, 1},
    {"gemma", 28, 3072, 16, 16, 256, 24576, 256000, 8192, 1, 0, 0, 0},
    {"gemma2", 26, 2304, 8, 4, 256, 9216, 256000, 8192, 1, 0, 2, 0},
    {"gemma3_text", 26, 2304, 8, 4, 256, 9216, 262208, 131072, 1, 0, 2, 1},
    {"phi3", 32, 3072, 32, 0, 0, 8192, 32064, 4096, 0, 0, 0, 0},
};

/* Sliding-window attention: which blocks attend over the last sliding_window tokens only,
 * as transformers builds them (and as llama.cpp's hard-coded patterns agree):
 *   gpt_oss      sliding_window 128, layer_types default: blocks 0, 2, 4, ... sliding
 *                (GptOssConfig: (i + 1) % 2 != 0)
 *   gemma2       sliding_window 4096, blocks 0, 2, 4, ... (Gemma2Config's layer_types;
 *                older modeling_gemma2.py: `not bool(layer_idx % 2)`)
 *   gemma3_text  sliding_window 4096, sliding_window_pattern 6: every block but each 6th,
 *                (i + 1) % pattern != 0 (Gemma3TextConfig)
 *   mistral      sliding_window 4096 (MistralConfig): every block; null: none (v0.2 on)
 *   qwen2, qwen3 only with use_sliding_window (default false; else sliding_window is
 *                None): the blocks from max_window_layers (default 28) on (Qwen2Config,
 *                Qwen3Config)
 * A layer_types list, when present, says it per block: "sliding_attention" or
 * "full_attention", one per block (transformers' layer_type_validation); anything else, or
 * a list of another length, is an error. sliding_window null: no window. Other types: none. */
static vram_status cfg_swa(const cfg *c, const char *type, vram_arch *a) {
    char q[VRAM__QUOTE_CAP];
    uint64_t def = 4096, window = 0, every = 0, from = 0, wl = 0, typed = 0;
    int use = 1, have_types = 0;
    vram_status st;
    if (strcmp(type, "gpt_oss") == 0) {
        def = 128;
        every = 2;
    } else if (strcmp(type, "gemma2") == 0) {
        every = 2;
    } else if (strcmp(type, "gemma3_text") == 0) {
        if ((st = cfg_num(c, "sliding_window_pattern", 6, 1, VRAM_LIMIT_LAYERS, &every)) != VRAM_OK)
            return st;
    } else if (strcmp(type, "mistral") == 0) {
        from = 0; /* every block */
    } else if (strcmp(type, "qwen2") == 0 || strcmp(type, "qwen3") == 0) {
        if ((st = cfg_bool(c, "use_sliding_window", 0, &use)) ||
            (st = cfg_num(c, "max_window_layers", 28, 0, VRAM_LIMIT_LAYERS, &from)))
            return st;
    } else {
        return VRAM_OK;
    }
    const cJSON *lt = cfg_get(c, "layer_types");
    if (lt != NULL) {
        const cJSON *e;
        uint64_t i = 0;
        if (!cJSON_IsArray(lt))
            return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label,
                              "layer_types is %s, not a list", vram__json_type(lt));
        cJSON_ArrayForEach(e, lt) {
            if (cJSON_IsString(e) && strcmp(e->valuestring, "sliding_attention") == 0)
                typed++;
            else if (!cJSON_IsString(e) || strcmp(e->valuestring, "full_attention") != 0)
                return vram__fail(
                    c->err, c->errcap, VRAM_E_FORMAT, c->label,
                    "layer_types[%llu] is %s, not \"sliding_attention\" or \"full_attention\"",
                    (unsigned long long)i,
                    cJSON_IsString(e) ? vram__quote(e->valuestring, strlen(e->valuestring), q)
                                      : vram__json_type(e));
            i++;
        }
        if (i != a->layers)
            return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label,
                              "layer_types has %llu entries, not one per block (%llu)",
                              (unsigned long long)i, (unsigned long long)a->layers);
        have_types = 1;
    }
    const cJSON *jw = cJSON_GetObjectItemCaseSensitive(c->doc, "sliding_window");
    if (!use || cJSON_IsNull(jw)) return VRAM_OK; /* no window */
    if ((st = cfg_num(c, "sliding_window", def, 1, VRAM_LIMIT_CONTEXT, &window)) != VRAM_OK)
        return st;
    if (have_types)
        wl = typed;
    else if (every != 0)
        wl = a->layers - a->layers / every; /* all but each every-th (every 1: none) */
    else
        wl = a->layers > from ? a->layers - from : 0u;
    a->sliding_window = wl != 0 ? window : 0u;
    a->window_layers = wl;
    return VRAM_OK;
}

static vram_status cfg_llama(const cfg *c, const llama_row *r, vram_arch *a) {
    vram_status st;
    int tie, attn_bias, mlp_bias;
    memset(a, 0, sizeof *a);
    if ((st = cfg_num(c, "num_hidden_layers", r->layers, 1, VRAM_LIMIT_LAYERS, &a->layers)) ||
        (st = cfg_num(c, "hidden_size", r->hidden, 1, VRAM_LIMIT_HIDDEN, &a->hidden)) ||
        (st = cfg_num(c, "num_attention_heads", r->heads, 1, VRAM_LIMIT_HEADS, &a->heads)) ||
        (st = cfg_num(c, "num_key_value_heads", r->kv != 0 ? r->kv : a->heads, 1, VRAM_LIMIT_HEADS,
                      &a->kv_heads)) ||
        (st = cfg_num(c, "head_dim", r->head_dim, 1, VRAM_LIMIT_HIDDEN, &a->head_dim)) ||
        (st = cfg_num(c, "intermediate_size", r->inter, 1, VRAM_LIMIT_INTERMEDIATE,
                      &a->intermediate)) ||
        (st = cfg_num(c, "vocab_size", r->vocab, 1, VRAM_LIMIT_VOCAB, &a->vocab)) ||
        (st = cfg_num(c, "max_position_embeddings", r->max_pos, 1, VRAM_LIMIT_CONTEXT,
                      &a->context)) ||
        (st = cfg_bool(c, "tie_word_embeddings", r->tie, &tie)) ||
        (st = cfg_bool(c, "attention_bias", 0, &attn_bias)) ||
        (st = cfg_bool(c, "mlp_bias", 0, &mlp_bias)))
        return st;
    if ((st = cfg_heads_check(c, a, "hidden_size", "num_attention_heads")) != VRAM_OK) return st;
    a->family = VRAM_FAMILY_DECODER;
    a->mlp = VRAM_MLP_GATED;
    a->norm = VRAM_NORM_RMS;
    a->flags = VRAM_ARCH_FINAL_NORM | (tie ? VRAM_ARCH_TIED : 0u);
    if (r->qkv_bias_always) a->flags |= VRAM_ARCH_QKV_BIAS;
    if (attn_bias) a->flags |= VRAM_ARCH_QKV_BIAS | VRAM_ARCH_OUT_BIAS;
    if (mlp_bias) a->flags |= VRAM_ARCH_MLP_BIAS;
    uint64_t hd = a->head_dim != 0 ? a->head_dim : a->hidden / a->heads;
    /* at most 10,000 x 2 x 1,000,000: no overflow */
    a->extra_params = a->layers * (r->norms_per_layer * a->hidden + (r->qk_norm ? 2u * hd : 0u));
    if (r->qk_norm) a->ops |= VRAM_OPS_QK_NORM;
    if (strcmp(r->type, "phi3") == 0) a->ops |= VRAM_OPS_FUSED_PROJ; /* qkv_proj, gate_up_proj */
    /* soft-capped attention scores or logits: a number in the config; gemma2's defaults
       (50 and 30) when the keys are absent; null: none */
    {
        /* (read as they are: cfg_get takes null for absent, here they differ) */
        const cJSON *sa = cJSON_GetObjectItemCaseSensitive(c->doc, "attn_logit_softcapping");
        const cJSON *sf = cJSON_GetObjectItemCaseSensitive(c->doc, "final_logit_softcapping");
        const int g2 = strcmp(r->type, "gemma2") == 0;
        if (cJSON_IsNumber(sa) || cJSON_IsNumber(sf) || (g2 && (sa == NULL || sf == NULL)))
            a->ops |= VRAM_OPS_SOFTCAP;
    }
    return cfg_swa(c, r->type, a);
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
    if ((st = cfg_num(c, "num_hidden_layers", 44, 1, VRAM_LIMIT_LAYERS, &a->layers)) ||
        (st = cfg_num(c, "hidden_size", 6144, 1, VRAM_LIMIT_HIDDEN, &a->hidden)) ||
        (st = cfg_num(c, "num_attention_heads", 64, 1, VRAM_LIMIT_HEADS, &a->heads)) ||
        (st = cfg_num(c, "intermediate_size", 24576, 1, VRAM_LIMIT_INTERMEDIATE,
                      &a->intermediate)) ||
        (st = cfg_num(c, "vocab_size", 50432, 1, VRAM_LIMIT_VOCAB, &a->vocab)) ||
        (st = cfg_num(c, "max_position_embeddings", 2048, 1, VRAM_LIMIT_CONTEXT, &a->context)) ||
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

/* ---- mixtures of experts -------------------------------------------------------------- */

typedef struct moe_row {
    const char *type;
    uint64_t layers, hidden, heads, kv, head_dim, inter, vocab, max_pos;
    const char *experts_key; /* the expert count's key */
    uint64_t experts, topk;
    const char *xinter_key;  /* the routed expert's width: its own key, or NULL: intermediate */
    uint64_t xinter, shared, dense;
    int mla;                 /* DeepSeek's latent attention: the numbers below */
    uint64_t q_lora, kv_lora, nope, rope, v;
    int attn_bias;           /* attention_bias's default */
    int qk_norm;             /* qwen3_moe */
    int gpt_oss;             /* biases on router and experts, sinks, MXFP4 experts */
    int shexp;               /* qwen2_moe: a shared expert of its own width, its gate, qkv_bias */
    int olmoe;               /* olmoe: q_norm and k_norm over the whole q and k widths */
} moe_row;

static const moe_row moe_rows[] = {
    {"mixtral", 32, 4096, 32, 8, 0, 14336, 32000, 131072, "num_local_experts", 8, 2, NULL, 0, 0,
     0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"qwen3_moe", 48, 2048, 32, 4, 128, 6144, 151936, 40960, "num_experts", 128, 8,
     "moe_intermediate_size", 768, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0},
    {"deepseek_v2", 60, 5120, 128, 128, 0, 12288, 102400, 163840, "n_routed_experts", 160, 6,
     "moe_intermediate_size", 1536, 2, 1, 1, 1536, 512, 128, 64, 128, 0, 0, 0, 0, 0},
    {"deepseek_v3", 61, 7168, 128, 128, 0, 18432, 129280, 163840, "n_routed_experts", 256, 8,
     "moe_intermediate_size", 2048, 1, 3, 1, 1536, 512, 128, 64, 128, 0, 0, 0, 0, 0},
    {"gpt_oss", 24, 2880, 64, 8, 64, 2880, 201088, 131072, "num_local_experts", 32, 4, NULL, 0,
     0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0},
    {"qwen2_moe", 24, 2048, 16, 16, 0, 5632, 151936, 32768, "num_experts", 60, 4,
     "moe_intermediate_size", 1408, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0},
    {"olmoe", 16, 2048, 16, 0, 0, 2048, 50304, 4096, "num_experts", 64, 8, NULL, 0, 0, 0, 0, 0,
     0, 0, 0, 0, 0, 0, 0, 0, 1},
};

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

/* A layout of MoE and dense layers that the arch cannot describe: family NONE, a note. */
static vram_status moe_layout_note(const cfg *c, vram_arch *a, const char *what, char *note,
                                   size_t notecap) {
    memset(a, 0, sizeof *a);
    snprintf(note, notecap, "%s: %s: this layout of expert and dense layers is not modelled; "
             "architecture left unknown", c->label, what);
    return VRAM_OK;
}

/* Qwen2-/Qwen3-MoE's mlp_only_layers (absent or null: none): the blocks that keep a dense
 * MLP. The first k blocks in order (0, 1, ..., k-1) are DeepSeek's layout, *dense = k; any
 * other list is a layout the arch cannot describe (*modelled = 0). An entry that is not a
 * block index is an error. */
static vram_status cfg_mlp_only(const cfg *c, uint64_t layers, uint64_t *dense, int *modelled) {
    char num[40];
    const cJSON *only = cfg_get(c, "mlp_only_layers"), *e;
    uint64_t i = 0, u;
    *dense = 0;
    *modelled = 1;
    if (only == NULL) return VRAM_OK;
    if (!cJSON_IsArray(only))
        return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label,
                          "mlp_only_layers is %s, not a list of block indices",
                          vram__json_type(only));
    cJSON_ArrayForEach(e, only) {
        if (!cJSON_IsNumber(e))
            return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label,
                              "mlp_only_layers holds %s, not a block index", vram__json_type(e));
        if (e->valuedouble < 0 || e->valuedouble >= (double)layers ||
            !vram__json_exact_u64(e->valuedouble, &u))
            return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label,
                              "mlp_only_layers holds %s, not a block index in 0..%llu",
                              vram__fmt_double(e->valuedouble, num),
                              (unsigned long long)(layers - 1));
        if (u != i) *modelled = 0;
        i++;
    }
    if (*modelled) *dense = i;
    return VRAM_OK;
}

/* gpt-oss's quantization_config.quant_method "mxfp4": its routed experts are MXFP4. */
static int cfg_mxfp4(const cfg *c) {
    const cJSON *q = cfg_get(c, "quantization_config");
    const cJSON *m = cJSON_IsObject(q) ? cJSON_GetObjectItemCaseSensitive(q, "quant_method") : NULL;
    return cJSON_IsString(m) && strcmp(m->valuestring, "mxfp4") == 0;
}

static vram_status cfg_moe(const cfg *c, const moe_row *r, vram_arch *a, char *note,
                           size_t notecap) {
    vram_status st;
    int tie, attn_bias;
    uint64_t topk, freq = 1, nope = 0, shared = 0;
    memset(a, 0, sizeof *a);
    if ((st = cfg_num(c, "num_hidden_layers", r->layers, 1, VRAM_LIMIT_LAYERS, &a->layers)) ||
        (st = cfg_num(c, "hidden_size", r->hidden, 1, VRAM_LIMIT_HIDDEN, &a->hidden)) ||
        (st = cfg_num(c, "num_attention_heads", r->heads, 1, VRAM_LIMIT_HEADS, &a->heads)) ||
        (st = cfg_num(c, "num_key_value_heads", r->kv != 0 ? r->kv : a->heads, 1,
                      VRAM_LIMIT_HEADS, &a->kv_heads)) ||
        (st = cfg_num(c, "intermediate_size", r->inter, 1, VRAM_LIMIT_INTERMEDIATE,
                      &a->intermediate)) ||
        (st = cfg_num(c, "vocab_size", r->vocab, 1, VRAM_LIMIT_VOCAB, &a->vocab)) ||
        (st = cfg_num(c, "max_position_embeddings", r->max_pos, 1, VRAM_LIMIT_CONTEXT,
                      &a->context)) ||
        (st = cfg_bool(c, "tie_word_embeddings", 0, &tie)) ||
        (st = cfg_bool(c, "attention_bias", r->attn_bias, &attn_bias)) ||
        (st = cfg_num(c, r->experts_key, r->experts, 1, VRAM_ARCH_MAX_EXPERTS, &a->experts)))
        return st;
    /* gpt-oss's first configs name the top-k experts_per_token */
    const char *topk_key = r->gpt_oss && !cfg_has(c, "num_experts_per_tok") &&
                                   cfg_has(c, "experts_per_token")
                               ? "experts_per_token"
                               : "num_experts_per_tok";
    if ((st = cfg_num(c, topk_key, r->topk, 1, VRAM_ARCH_MAX_EXPERTS, &topk)) != VRAM_OK) return st;
    if (topk > a->experts)
        return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label,
                          "%s %llu is more than %s %llu", topk_key, (unsigned long long)topk,
                          r->experts_key, (unsigned long long)a->experts);
    a->experts_per_token = topk;
    if (r->xinter_key != NULL &&
        (st = cfg_num(c, r->xinter_key, r->xinter, 1, VRAM_LIMIT_INTERMEDIATE,
                      &a->expert_intermediate)) != VRAM_OK)
        return st;
    if (r->mla) {
        if ((st = cfg_rank(c, "q_lora_rank", r->q_lora, &a->q_lora_rank)) ||
            (st = cfg_num(c, "kv_lora_rank", r->kv_lora, 1, VRAM_LIMIT_HIDDEN, &a->kv_lora_rank)) ||
            (st = cfg_num(c, "qk_nope_head_dim", r->nope, 1, VRAM_LIMIT_HIDDEN, &nope)) ||
            (st = cfg_num(c, "qk_rope_head_dim", r->rope, 1, VRAM_LIMIT_HIDDEN, &a->rope_dim)) ||
            (st = cfg_num(c, "v_head_dim", r->v, 1, VRAM_LIMIT_HIDDEN, &a->v_head_dim)) ||
            (st = cfg_num(c, "n_shared_experts", r->shared, 0, VRAM_ARCH_MAX_EXPERTS, &shared)) ||
            (st = cfg_num(c, "first_k_dense_replace", r->dense, 0, VRAM_LIMIT_LAYERS,
                          &a->dense_layers)) ||
            (st = cfg_num(c, "moe_layer_freq", 1, 1, VRAM_LIMIT_LAYERS, &freq)))
            return st;
        a->head_dim = nope + a->rope_dim;
        if (a->head_dim > VRAM_LIMIT_HIDDEN / a->heads || a->v_head_dim > VRAM_LIMIT_HIDDEN / a->heads)
            return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label,
                              "%llu heads of qk_nope_head_dim + qk_rope_head_dim %llu (or "
                              "v_head_dim %llu) are over the width limit of %llu",
                              (unsigned long long)a->heads, (unsigned long long)a->head_dim,
                              (unsigned long long)a->v_head_dim,
                              (unsigned long long)VRAM_LIMIT_HIDDEN);
        if (shared * a->expert_intermediate > VRAM_LIMIT_INTERMEDIATE)
            return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label,
                              "n_shared_experts %llu x moe_intermediate_size %llu is over the "
                              "limit of %llu",
                              (unsigned long long)shared,
                              (unsigned long long)a->expert_intermediate,
                              (unsigned long long)VRAM_LIMIT_INTERMEDIATE);
        a->shared_intermediate = shared * a->expert_intermediate;
        if (a->dense_layers > a->layers)
            return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label,
                              "first_k_dense_replace %llu is more than num_hidden_layers %llu",
                              (unsigned long long)a->dense_layers,
                              (unsigned long long)a->layers);
        if (freq != 1) return moe_layout_note(c, a, "moe_layer_freq is not 1", note, notecap);
    } else {
        if ((st = cfg_num(c, "head_dim", r->head_dim, 1, VRAM_LIMIT_HIDDEN, &a->head_dim)) != VRAM_OK)
            return st;
    }
    if (r->qk_norm || r->shexp) {
        int modelled = 1;
        if ((st = cfg_num(c, "decoder_sparse_step", 1, 1, VRAM_LIMIT_LAYERS, &freq)) != VRAM_OK ||
            (st = cfg_mlp_only(c, a->layers, &a->dense_layers, &modelled)) != VRAM_OK)
            return st;
        if (freq != 1) return moe_layout_note(c, a, "decoder_sparse_step is not 1", note, notecap);
        if (!modelled)
            return moe_layout_note(c, a, "mlp_only_layers is not the first blocks 0, 1, ...",
                                   note, notecap);
    }
    if ((st = cfg_heads_check(c, a, "hidden_size", "num_attention_heads")) != VRAM_OK) return st;
    a->family = VRAM_FAMILY_DECODER;
    a->mlp = VRAM_MLP_GATED;
    a->norm = VRAM_NORM_RMS;
    a->flags = VRAM_ARCH_FINAL_NORM | (tie ? VRAM_ARCH_TIED : 0u) |
               (attn_bias ? VRAM_ARCH_QKV_BIAS | VRAM_ARCH_OUT_BIAS : 0u);
    uint64_t hd = a->head_dim != 0 ? a->head_dim : a->hidden / a->heads;
    if (r->qk_norm) a->extra_params = a->layers * 2u * hd; /* q_norm, k_norm */
    if (r->qk_norm || r->olmoe) a->ops |= VRAM_OPS_QK_NORM;
    if (r->gpt_oss) {
        a->moe_flags = VRAM_MOE_ROUTER_BIAS | VRAM_MOE_EXPERT_BIAS;
        a->extra_params = a->layers * a->heads; /* the attention sinks */
        if (cfg_mxfp4(c)) a->expert_format = VRAM_DTYPE_MXFP4;
    }
    if (r->shexp) {
        /* Qwen2-MoE: the shared expert is one gated MLP of its own width, scaled by a sigmoid
           gate (shared_expert_gate, hidden -> 1, no bias) in every sparse block; q, k and v
           have biases unless qkv_bias is false */
        int qkv_bias;
        if ((st = cfg_num(c, "shared_expert_intermediate_size", 5632, 1, VRAM_LIMIT_INTERMEDIATE,
                          &a->shared_intermediate)) ||
            (st = cfg_bool(c, "qkv_bias", 1, &qkv_bias)))
            return st;
        if (qkv_bias) a->flags |= VRAM_ARCH_QKV_BIAS;
        a->extra_params = (a->layers - a->dense_layers) * a->hidden; /* <= 10^4 x 10^6 */
    }
    if (r->olmoe) /* q_norm over hidden, k_norm over hidden / heads x kv heads, every block */
        a->extra_params = a->layers * (a->hidden + a->hidden / a->heads * a->kv_heads);
    return cfg_swa(c, r->type, a);
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

static vram_status cfg_arch(const cfg *c, vram_arch *a, uint64_t *guess_lo, uint64_t *guess_hi,
                            uint64_t *image_tokens, char *note, size_t notecap);

/* llava (LlavaConfig): a language model (text_config, read by its own model_type, default
 * llama) whose sequence takes each image as image tokens, from a vision tower
 * (vision_config: clip_vision_model by default, with LLaVA's defaults 1024 wide, 24 layers,
 * 16 heads, MLP 4096, 336 px, patch 14; or siglip_vision_model) through a projector
 * (linear_1: vision hidden x feature layers -> text hidden, linear_2: text hidden -> text
 * hidden, biases unless multimodal_projector_bias is false). The vision tower and the
 * projector are extra_params of the language model's arch; tokens per image: the tower's
 * patches (+1 with vision_feature_select_strategy "full").
 * qwen2_vl (Qwen2VLConfig): a qwen2 language model (text_config, or the top-level keys of
 * older configs) and its vision transformer (vision_config: depth 32, embed_dim 1280,
 * mlp_ratio 4, num_heads 16, in_channels 3, patch_size 14, temporal_patch_size 2,
 * spatial_merge_size 2, hidden_size: the language model's): a 3-D patch convolution without
 * bias, blocks of LayerNorms, fused qkv and proj with biases, an MLP with biases; the merger
 * (LayerNorm, then embed_dim x m^2 -> embed_dim x m^2 -> hidden with biases). Its images are
 * of any size: each counts as 1024 tokens (an 896 x 896 image, 64 x 64 patches merged 2 x 2)
 * unless --image-tokens says. */
static vram_status cfg_vlm(const cfg *c, int qwen, vram_arch *a, uint64_t *image_tokens,
                           char *note, size_t notecap) {
    char tl[600], vl[600], tn[640] = "", t1[32];
    cfg tc, vc;
    vram_status st;
    uint64_t glo = 0, ghi = 0, vt, proj;
    if ((st = cfg_sub(c, "text_config", tl, sizeof tl, &tc)) ||
        (st = cfg_sub(c, "vision_config", vl, sizeof vl, &vc)))
        return st;
    if (qwen && !cfg_has(c, "text_config")) tc = *c; /* older configs: the top-level keys */
    if (qwen) {
        const llama_row *row = NULL;
        for (size_t i = 0; i < sizeof llama_rows / sizeof llama_rows[0]; i++)
            if (strcmp(llama_rows[i].type, "qwen2") == 0) row = &llama_rows[i];
        if ((st = cfg_llama(&tc, row, a)) != VRAM_OK) return st;
    } else {
        const cJSON *mt = cfg_get(&tc, "model_type");
        if (mt == NULL) { /* LlavaConfig's default text_config is llama's */
            for (size_t i = 0; i < sizeof llama_rows / sizeof llama_rows[0]; i++)
                if (strcmp(llama_rows[i].type, "llama") == 0) st = cfg_llama(&tc, &llama_rows[i], a);
        } else {
            uint64_t inner_images = 0;
            st = cfg_arch(&tc, a, &glo, &ghi, &inner_images, tn, sizeof tn);
        }
        if (st != VRAM_OK) return st;
        if (a->family != VRAM_FAMILY_DECODER || glo != 0) {
            memset(a, 0, sizeof *a);
            snprintf(note, notecap, "%s: its text_config is not a decoder vramkit models%s%s; "
                     "architecture left unknown", c->label, tn[0] ? ": " : "", tn);
            return VRAM_OK;
        }
    }
    const uint64_t th = a->hidden;
    if (qwen) {
        uint64_t depth, e, ratio, chans, patch, tp, m, out;
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
    } else {
        const cJSON *vmt = cfg_get(&vc, "model_type");
        const char *vtype = cJSON_IsString(vmt) ? vmt->valuestring : "clip_vision_model";
        const int sig = strcmp(vtype, "siglip_vision_model") == 0;
        const cJSON *fl = cfg_get(c, "vision_feature_layer");
        const cJSON *fs = cfg_get(c, "vision_feature_select_strategy");
        int bias;
        uint64_t layers_used = cJSON_IsArray(fl) ? (uint64_t)cJSON_GetArraySize(fl) : 1u;
        vram_arch v;
        char q[VRAM__QUOTE_CAP];
        if (!sig && strcmp(vtype, "clip_vision_model") != 0) {
            memset(a, 0, sizeof *a);
            snprintf(note, notecap, "%s: vision_config model_type %s is not a vision tower "
                     "vramkit models; architecture left unknown", c->label,
                     vram__quote(vtype, strlen(vtype), q));
            return VRAM_OK;
        }
        /* without a vision_config, LlavaConfig's own tower; else the class's defaults */
        st = cfg_vision(&vc, sig ? VT_SIGLIP : VT_CLIP,
                        sig ? &vt_vit : (cfg_has(c, "vision_config") ? &vt_clip : &vt_llava), &v);
        if (st != VRAM_OK || (st = cfg_bool(c, "multimodal_projector_bias", 1, &bias)) != VRAM_OK)
            return st;
        if (layers_used == 0) layers_used = 1;
        vt = cfg_total(&v);
        proj = v.hidden * layers_used * th + th * th + (bias ? 2 * th : 0u);
        /* patches without the class token, unless the strategy keeps it */
        *image_tokens = (sig ? v.positions : v.positions - 1u) +
                        (cJSON_IsString(fs) && strcmp(fs->valuestring, "full") == 0 && !sig);
    }
    a->extra_params += vt + proj;
    snprintf(note, notecap,
             "%s: read as a %s language model with a vision tower and projector (%s "
             "parameters) counted beside it; each image adds %llu tokens to the sequence%s; "
             "the vision tower's activations are not estimated",
             c->label, qwen ? "qwen2" : "decoder", cfg_params_text(vt + proj, t1, sizeof t1),
             (unsigned long long)*image_tokens,
             qwen ? " (an 896 x 896 image; --image-tokens N for others)" : "");
    return VRAM_OK;
}

/* ---- the table ------------------------------------------------------------------------ */

static const char *const moe_types[] = {"dbrx",  "phimoe",   "granitemoe",
                                        "jamba", "nllb-moe", "switch_transformers"};
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
    high.extra_params = a->extra_params + a->vocab;
    if (a->family == VRAM_FAMILY_ENCODER_DECODER)
        high.positions = a->positions + 2 * (a->context != 0 ? a->context : 1024u);
    *lo = *hi = 0;
    if (vram_arch_params(&low, &pl) == VRAM_OK && vram_arch_params(&high, &ph) == VRAM_OK) {
        *lo = pl.total;
        *hi = ph.total;
    }
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

static vram_status cfg_arch(const cfg *c, vram_arch *a, uint64_t *guess_lo, uint64_t *guess_hi,
                            uint64_t *image_tokens, char *note, size_t notecap) {
    char q[VRAM__QUOTE_CAP];
    const cJSON *jt = cfg_get(c, "model_type");
    const char *type = cJSON_IsString(jt) ? jt->valuestring : NULL;
    if (jt != NULL && type == NULL)
        return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label,
                          "model_type is %s, not a string", vram__json_type(jt));
    memset(a, 0, sizeof *a);
    if (type != NULL) {
        for (size_t i = 0; i < sizeof moe_rows / sizeof moe_rows[0]; i++)
            if (strcmp(type, moe_rows[i].type) == 0) return cfg_moe(c, &moe_rows[i], a, note, notecap);
        for (size_t i = 0; i < sizeof moe_types / sizeof moe_types[0]; i++)
            if (strcmp(type, moe_types[i]) == 0) {
                snprintf(note, notecap,
                         "%s: model_type %s (mixture of experts) is not modelled; "
                         "architecture left unknown",
                         c->label, vram__quote(type, strlen(type), q));
                return VRAM_OK;
            }
    }
    for (size_t i = 0; i < sizeof moe_keys / sizeof moe_keys[0]; i++) {
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
    if (type != NULL) {
        for (size_t i = 0; i < sizeof llama_rows / sizeof llama_rows[0]; i++)
            if (strcmp(type, llama_rows[i].type) == 0) return cfg_llama(c, &llama_rows[i], a);
        if (strcmp(type, "gpt2") == 0) return cfg_gpt2(c, a);
        if (strcmp(type, "gpt_neox") == 0) return cfg_neox(c, a);
        if (strcmp(type, "phi") == 0) return cfg_phi(c, a);
        if (strcmp(type, "falcon") == 0) return cfg_falcon(c, a);
        if (strcmp(type, "gptj") == 0) return cfg_gptj(c, a);
        if (strcmp(type, "gpt_bigcode") == 0) return cfg_bigcode(c, a);
        if (strcmp(type, "whisper") == 0) return cfg_whisper(c, a);
        if (strcmp(type, "vit") == 0) return cfg_vit(c, VT_VIT, a, note, notecap);
        if (strcmp(type, "clip_vision_model") == 0) return cfg_vit(c, VT_CLIP, a, note, notecap);
        if (strcmp(type, "siglip_vision_model") == 0)
            return cfg_vit(c, VT_SIGLIP, a, note, notecap);
        if (strcmp(type, "clip") == 0) return cfg_dual(c, 0, a, note, notecap);
        if (strcmp(type, "siglip") == 0) return cfg_dual(c, 1, a, note, notecap);
        if (strcmp(type, "llava") == 0) return cfg_vlm(c, 0, a, image_tokens, note, notecap);
        if (strcmp(type, "qwen2_vl") == 0) return cfg_vlm(c, 1, a, image_tokens, note, notecap);
        if (strcmp(type, "bert") == 0) return cfg_bert(c, 30522, 0, a, note, notecap);
        if (strcmp(type, "roberta") == 0) return cfg_bert(c, 50265, 1, a, note, notecap);
        if (strcmp(type, "xlm-roberta") == 0) return cfg_bert(c, 30522, 1, a, note, notecap);
        if (strcmp(type, "distilbert") == 0) return cfg_distilbert(c, a, note, notecap);
        if (strcmp(type, "m2m_100") == 0 || strcmp(type, "nllb") == 0)
            return cfg_seq2seq(c, 128112, 0, a);
        if (strcmp(type, "bart") == 0) return cfg_seq2seq(c, 50265, 1, a);
        if (strcmp(type, "t5") == 0) return cfg_t5(c, 0, a);
        if (strcmp(type, "mt5") == 0) return cfg_t5(c, 1, a);
    }

    /* the fallback: only when every key the pattern needs is there */
    char what[160];
    if (type != NULL)
        snprintf(what, sizeof what, "model_type %s is not in vramkit's table",
                 vram__quote(type, strlen(type), q));
    else
        snprintf(what, sizeof what, "no model_type");
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
        static const llama_row generic = {"", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
        vram_status st = cfg_llama(c, &generic, a);
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
