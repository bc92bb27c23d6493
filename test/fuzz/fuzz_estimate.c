/* Fuzz estimate.h, model.h and dtype.h over random architectures, tensor statistics and
 * workloads. Invariants: every status is one the contract allows; on VRAM_OK each term
 * and the totals satisfy low <= expected <= high and the totals equal the sums of the
 * terms computed again in 128 bits (nothing wrapped silently); blocks x block_bytes within
 * the block-related terms and base + blocks = expected; the parameter count equals
 * its parts in 128 bits; dtype byte counts agree with a 128-bit recomputation or report
 * overflow exactly when it is needed. Input bytes, in order (missing bytes read as 0):
 * family, layers(2), encoder(2), decoder(2), hidden(3), heads(2), kv_heads(1), head_dim(2),
 * intermediate(3), decoder_intermediate(3), vocab(4), positions(3), type_vocab(1),
 * context(3), mlp, norm, flags, extra(4), published dtype, stats?(1) then tensors(3)
 * params(6) bytes(6) matrix_params(6) matrix_rows(4) matrices(2) outer(5) blocks(2),
 * mode, batch(2), seq(3), src(2), tgt(2), format, compute, optimizer, ckpt, flash, lora
 * rank(2), lora targets, cpu, budget(6); then dtype probes: type, n(8), rows(8). */
#include <vramkit/estimate.h>

#include "fuzz_common.h"

__extension__ typedef unsigned __int128 u128;

static vram_dtype pick_dtype(uint64_t v) { return (vram_dtype)(v % (VRAM_DTYPE_COUNT + 2)); }

static void check_dtype(fuzz_in *in) {
    vram_dtype t = pick_dtype(fuzz_u64(in, 1));
    uint64_t n = fuzz_u64(in, 8), rows = fuzz_u64(in, 8), out = 0;
    vram_dtype_layout l;
    vram_status st = vram_dtype_bytes(t, n, rows, &out);
    if (vram_dtype_get(t, &l) != VRAM_OK) {
        FUZZ_CHECK(st == VRAM_E_INVALID);
        return;
    }
    if (n == 0) {
        FUZZ_CHECK(st == VRAM_OK && out == 0);
        return;
    }
    u128 groups = l.group ? ((u128)n + l.group - 1) / l.group : 0;
    u128 want = ((u128)n + l.block - 1) / l.block * l.block_bytes + groups * l.group_bytes +
                (l.group2 ? (groups + l.group2 - 1) / l.group2 * l.group2_bytes : 0) +
                (l.row_bytes ? (u128)(rows ? rows : 1) * l.row_bytes : 0) + l.tensor_bytes;
    if (want > UINT64_MAX)
        FUZZ_CHECK(st == VRAM_E_OVERFLOW);
    else
        FUZZ_CHECK(st == VRAM_OK && out == (uint64_t)want);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_in in = {data, size};
    vram_model m;
    vram_workload w;
    vram_estimate e;
    vram_param_count pc;
    memset(&m, 0, sizeof m);
    memset(&w, 0, sizeof w);
    m.arch.family = (vram_family)(fuzz_u64(&in, 1) % 5);
    m.arch.layers = fuzz_u64(&in, 2);
    m.arch.encoder_layers = fuzz_u64(&in, 2);
    m.arch.decoder_layers = fuzz_u64(&in, 2);
    m.arch.hidden = fuzz_u64(&in, 3);
    m.arch.heads = fuzz_u64(&in, 2);
    m.arch.kv_heads = fuzz_u64(&in, 1);
    m.arch.head_dim = fuzz_u64(&in, 2);
    m.arch.intermediate = fuzz_u64(&in, 3);
    m.arch.decoder_intermediate = fuzz_u64(&in, 3);
    m.arch.vocab = fuzz_u64(&in, 4);
    m.arch.positions = fuzz_u64(&in, 3);
    m.arch.type_vocab = fuzz_u64(&in, 1);
    m.arch.context = fuzz_u64(&in, 3);
    m.arch.mlp = (vram_mlp)(fuzz_u64(&in, 1) % 3);
    m.arch.norm = (vram_norm)(fuzz_u64(&in, 1) % 3);
    m.arch.flags = (uint32_t)fuzz_u64(&in, 1);
    m.arch.extra_params = fuzz_u64(&in, 4);
    m.dtype = pick_dtype(fuzz_u64(&in, 1));
    if (fuzz_bool(&in)) {
        m.stats.tensors = fuzz_u64(&in, 3);
        m.stats.params = fuzz_u64(&in, 6);
        m.stats.bytes = fuzz_u64(&in, 6);
        m.stats.matrix_params = fuzz_u64(&in, 6);
        m.stats.matrix_rows = fuzz_u64(&in, 4);
        m.stats.matrices = fuzz_u64(&in, 2);
        m.stats.outer_params = fuzz_u64(&in, 5);
        m.stats.block_params = m.stats.params / 2;
        m.blocks = fuzz_u64(&in, 2);
    }
    w.mode = (vram_mode)(fuzz_u64(&in, 1) % 3);
    w.batch = fuzz_u64(&in, 2);
    w.seq = fuzz_u64(&in, 3);
    w.src_len = fuzz_u64(&in, 2);
    w.tgt_len = fuzz_u64(&in, 2);
    w.format = pick_dtype(fuzz_u64(&in, 1));
    w.compute = pick_dtype(fuzz_u64(&in, 1));
    w.optimizer = (vram_optimizer)(fuzz_u64(&in, 1) % 5);
    w.checkpointing = fuzz_bool(&in);
    w.flash_attention = fuzz_bool(&in);
    w.lora_rank = fuzz_u64(&in, 2);
    w.lora_targets = (uint32_t)fuzz_u64(&in, 1);
    w.cpu = fuzz_bool(&in);
    uint64_t budget = fuzz_u64(&in, 6);
    /* mixture of experts and latent attention, read last so that older seeds keep their
       meaning (an exhausted input reads as 0: a dense model) */
    m.arch.experts = fuzz_u64(&in, 2);
    m.arch.experts_per_token = fuzz_u64(&in, 1);
    m.arch.expert_intermediate = fuzz_u64(&in, 3);
    m.arch.shared_intermediate = fuzz_u64(&in, 3);
    m.arch.dense_layers = fuzz_u64(&in, 1);
    m.arch.moe_flags = (uint32_t)fuzz_u64(&in, 1);
    m.arch.expert_format = pick_dtype(fuzz_u64(&in, 1));
    m.arch.q_lora_rank = fuzz_u64(&in, 2);
    m.arch.kv_lora_rank = fuzz_u64(&in, 2);
    m.arch.rope_dim = fuzz_u64(&in, 1);
    m.arch.v_head_dim = fuzz_u64(&in, 2);
    if (m.stats.tensors != 0) {
        m.stats.expert_params = fuzz_u64(&in, 6);
        m.stats.expert_bytes = fuzz_u64(&in, 6);
    }
    /* transformers' ops (unknown bits: the arch is refused), which logits (3: out of range,
       refused), micro-batches (read after the above, for the same reason) */
    m.arch.ops = (uint32_t)fuzz_u64(&in, 1);
    w.logits = (vram_logits)(fuzz_u64(&in, 1) % 4);
    w.grad_accum = fuzz_u64(&in, 1);
    /* recurrent mixers (state-space and hybrid models), and the flags above one byte */
    m.arch.mixer_layers = fuzz_u64(&in, 1);
    m.arch.mix_in = fuzz_u64(&in, 3);
    m.arch.mix_out = fuzz_u64(&in, 3);
    m.arch.mix_conv = fuzz_u64(&in, 3);
    m.arch.mix_kernel = fuzz_u64(&in, 1);
    m.arch.mix_matrix = fuzz_u64(&in, 4);
    m.arch.mix_vectors = fuzz_u64(&in, 3);
    m.arch.mix_state = fuzz_u64(&in, 4);
    m.arch.flags |= (uint32_t)(fuzz_u64(&in, 1) & 0x7u) << 8;
    /* an indexer: its keys in the cache, its heads' scores in the working set */
    m.arch.kv_extra = fuzz_u64(&in, 3);
    m.arch.index_heads = fuzz_u64(&in, 1);

    /* parameter count: exact, parts add up in 128 bits */
    if (vram_arch_params(&m.arch, &pc) == VRAM_OK) {
        FUZZ_CHECK(vram_arch_check(&m.arch) == VRAM_OK);
        u128 sum = (u128)pc.embedding + pc.blocks + pc.final_norms + pc.head + pc.extra;
        FUZZ_CHECK(sum == pc.total);
        FUZZ_CHECK(pc.matrix_params <= pc.blocks && pc.outer_params <= pc.total);
        FUZZ_CHECK(pc.active <= pc.total && pc.expert_params <= pc.blocks);
        if (m.arch.experts == 0) FUZZ_CHECK(pc.active == pc.total && pc.expert_params == 0);
        /* what it keeps while generating: keys and values in at most its blocks */
        vram_cache_shape cs;
        FUZZ_CHECK(vram_arch_cache(&m.arch, &cs) == VRAM_OK);
        FUZZ_CHECK(cs.attn_blocks <= pc.block_count);
        if (m.arch.mixer_layers == 0) FUZZ_CHECK(cs.state == 0);
    } else {
        /* a refused arch fails the check, or is a mixture of experts / latent attention
           whose blocks pass VRAM_ARCH_MAX_BLOCK_PARAMS (vram_arch_params' contract) */
        FUZZ_CHECK(vram_arch_check(&m.arch) == VRAM_E_INVALID || m.arch.experts != 0 ||
                   m.arch.kv_lora_rank != 0 || m.arch.mixer_layers != 0 ||
                   (m.arch.flags & (VRAM_ARCH_NO_MLP | VRAM_ARCH_MIXER_ALSO)) != 0);
    }

    memset(&e, 0xa5, sizeof e);
    vram_status st = vram_estimate_model(&m, &w, &e);
    FUZZ_CHECK(st == VRAM_OK || st == VRAM_E_INVALID || st == VRAM_E_OVERFLOW);
    if (st == VRAM_OK) {
        u128 lo = 0, ex = 0, hi = 0;
        for (int i = 0; i < VRAM_TERM_COUNT; i++) {
            FUZZ_CHECK(e.term[i].low <= e.term[i].expected);
            FUZZ_CHECK(e.term[i].expected <= e.term[i].high);
            FUZZ_CHECK(e.size[i].low <= e.size[i].expected);
            FUZZ_CHECK(e.size[i].expected <= e.size[i].high);
            FUZZ_CHECK(strcmp(vram_cause_name(e.term[i].cause), "unknown") != 0);
            lo += e.term[i].low;
            ex += e.term[i].expected;
            hi += e.term[i].high;
        }
        FUZZ_CHECK(lo == e.low && ex == e.expected && hi == e.high);
        FUZZ_CHECK(e.low <= e.expected && e.expected <= e.high);
        FUZZ_CHECK(e.format != VRAM_DTYPE_NONE && e.compute != VRAM_DTYPE_NONE);
        FUZZ_CHECK(e.batch >= 1 && e.seq >= 1);
        FUZZ_CHECK((u128)e.blocks * e.block_bytes + e.base_bytes >= e.expected ||
                   e.base_bytes == 0);
        {
            /* the blocks hold no more than the block-related terms (a byte per block of
               rounding aside: the share of a 64-bit overflow goes through double), so the
               split counts nothing twice, and base + blocks is the expected total */
            const int train = w.mode == VRAM_MODE_TRAIN;
            u128 per_block = (u128)e.term[VRAM_TERM_WEIGHTS].expected +
                             e.term[VRAM_TERM_GRADIENTS].expected +
                             e.term[VRAM_TERM_OPTIMIZER].expected +
                             e.term[VRAM_TERM_MASTER].expected +
                             e.term[VRAM_TERM_KV_CACHE].expected +
                             (train ? e.term[VRAM_TERM_ACTIVATIONS].expected : 0u);
            u128 all_blocks = (u128)e.blocks * e.block_bytes;
            if (e.blocks == 0) FUZZ_CHECK(e.block_bytes == 0 && e.base_bytes == e.expected);
            FUZZ_CHECK(all_blocks <= per_block + e.blocks);
            if (all_blocks <= e.expected) FUZZ_CHECK(e.base_bytes + all_blocks == e.expected);
        }
        if (w.cpu) FUZZ_CHECK(e.term[VRAM_TERM_CUDA_CONTEXT].high == 0);
        FUZZ_CHECK(e.active_params <= e.params);
        FUZZ_CHECK(e.expert_bytes <= e.term[VRAM_TERM_WEIGHTS].expected);
        if (w.mode != VRAM_MODE_TRAIN) FUZZ_CHECK(e.term[VRAM_TERM_GRADIENTS].high == 0);

        vram_recommendation *r = (vram_recommendation *)malloc(sizeof *r);
        FUZZ_CHECK(r != NULL);
        vram_status rs = vram_estimate_recommend(&m, &w, budget, r);
        FUZZ_CHECK(rs == VRAM_OK || rs == VRAM_E_INVALID || rs == VRAM_E_OVERFLOW);
        if (rs == VRAM_OK) {
            FUZZ_CHECK(r->fits[r->chosen] && r->status[r->chosen] == VRAM_OK);
            for (int p = 0; p < (int)r->chosen; p++) FUZZ_CHECK(!r->fits[p] || r->status[p] != VRAM_OK);
            if (r->chosen != VRAM_PRESET_CPU && r->chosen != VRAM_PRESET_INT4_OFFLOAD)
                FUZZ_CHECK(r->gpu_bytes[r->chosen] <= budget);
            if (r->chosen == VRAM_PRESET_INT4_OFFLOAD)
                FUZZ_CHECK(r->gpu_bytes[r->chosen] <= budget && r->gpu_blocks >= 1);
            if (r->next_better >= 0)
                FUZZ_CHECK(r->next_better < (int)r->chosen && !r->fits[r->next_better]);
        }
        free(r);
    }
    check_dtype(&in);
    check_dtype(&in);
    return 0;
}
