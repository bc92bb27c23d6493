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
 *   phi3     32     3072   32    =heads -        8192   32064  4096    false Phi3Config
 * Biases: attention_bias (default false) puts them on q, k, v and o (llama, qwen3, gemma*),
 * mlp_bias on the MLP (llama); qwen2 always has q, k, v biases. extra_params: qwen3's
 * q_norm and k_norm (2 x head_dim per layer), gemma2's two extra norms (2 x hidden per
 * layer). phi3's fused gate_up_proj counts as gate + up.
 *
 * gpt2 (GPT2Config): n_layer 12, n_embd 768, n_head 12, n_inner null -> 4 x n_embd,
 *   n_positions 1024 (learned: positions and context), vocab_size 50257, tie_word_embeddings
 *   true (PretrainedConfig); PLAIN MLP, LAYER norm, biases everywhere, FINAL_NORM (ln_f).
 * gpt_neox (GPTNeoXConfig): num_hidden_layers 44, hidden_size 6144, num_attention_heads 64,
 *   intermediate_size 24576, vocab_size 50432, max_position_embeddings 2048 (rotary),
 *   tie_word_embeddings false, attention_bias true (q,k,v,o); MLP biases; PLAIN, LAYER,
 *   FINAL_NORM.
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
 * Mixture-of-experts types (mixtral, qwen2_moe, qwen3_moe, deepseek_v2/v3, dbrx, olmoe,
 * phimoe, granitemoe, jamba, nllb-moe, switch_transformers), and any config with an expert
 * count key (num_local_experts, num_experts, n_routed_experts, moe_num_experts), are not
 * modelled: family NONE with a note (a tensor list, when present, is still counted).
 *
 * Fallback for a model_type not in the table, on the keys present, with a note saying so:
 *   d_model, encoder_layers, decoder_layers, encoder_attention_heads, encoder_ffn_dim and
 *     vocab_size all present -> read as m2m_100 (no position table assumed);
 *   num_hidden_layers, hidden_size, num_attention_heads, intermediate_size and vocab_size all
 *     present -> read as llama (gated MLP, RMS norm, no biases), untied unless
 *     tie_word_embeddings is true (untied counts the larger model);
 *   otherwise family NONE. Nothing is guessed from a partial set of keys.
 *
 * torch_dtype (or "dtype", transformers >= 4.56): float32, float16, bfloat16, float64,
 * float8_e4m3fn, float8_e5m2 (a "torch." prefix is allowed); "auto", null or another name
 * leave m->dtype NONE. */
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
    {"phi3", 32, 3072, 32, 0, 0, 8192, 32064, 4096, 0, 0, 0, 0},
};

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

/* ---- the table ------------------------------------------------------------------------ */

static const char *const moe_types[] = {
    "mixtral", "qwen2_moe", "qwen3_moe",  "deepseek_v2", "deepseek_v3", "dbrx",
    "olmoe",   "phimoe",    "granitemoe", "jamba",       "nllb-moe",    "switch_transformers"};
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
    return VRAM_OK;
}

static vram_status cfg_arch(const cfg *c, vram_arch *a, char *note, size_t notecap) {
    char q[VRAM__QUOTE_CAP];
    const cJSON *jt = cfg_get(c, "model_type");
    const char *type = cJSON_IsString(jt) ? jt->valuestring : NULL;
    if (jt != NULL && type == NULL)
        return vram__fail(c->err, c->errcap, VRAM_E_FORMAT, c->label,
                          "model_type is %s, not a string", vram__json_type(jt));
    memset(a, 0, sizeof *a);
    if (type != NULL) {
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
        snprintf(note, notecap, "%s: %s; read as an M2M100-like encoder-decoder", c->label, what);
        return cfg_seq2seq(c, 0, 0, a);
    }
    if (cfg_has(c, "num_hidden_layers") && cfg_has(c, "hidden_size") &&
        cfg_has(c, "num_attention_heads") && cfg_has(c, "intermediate_size") &&
        cfg_has(c, "vocab_size")) {
        static const llama_row generic = {"", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
        snprintf(note, notecap, "%s: %s; read as a Llama-like decoder", c->label, what);
        vram_status st = cfg_llama(c, &generic, a);
        /* no max_position_embeddings: context unknown, not 0 as an error */
        return st;
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
    if (st == VRAM_OK) st = cfg_arch(&c, &out.arch, note, sizeof note);
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
