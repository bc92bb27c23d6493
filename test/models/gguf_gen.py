#!/usr/bin/env python3
"""Small GGUF headers of the 2025-26 architectures, written by llama.cpp's own `gguf` package.

For each case below a model is built by transformers from its published config
(configs/NAME/config.json, or the config class's defaults) with small widths, on the meta
device; its tensors are renamed as llama.cpp's converter (convert_hf_to_gguf.py) renames
them: through gguf's TensorNameMap (the converter's map_tensor_name), with the converter's
few changes of form noted per case (experts stacked into ffn_*_exps, dt_bias as ssm_dt.bias,
Qwen3-Next's in_proj_qkvz split into attn_qkv and attn_gate, Apertus's xIELU parameters
moved into metadata, a tied head left out). Every name must be one gguf.MODEL_TENSORS lists
for the architecture. The metadata keys are written by GGUFWriter's add_* methods as the
converter's set_gguf_parameters writes them. The file is written whole (the data section
zeros, sparse) and read back with gguf.GGUFReader, then cut at the data section: what is
kept in gguf/NAME.gguf is the header (metadata and tensor infos) byte for byte as the
gguf package wrote it; the unit test (test_model_gguf_arch.c) declares the data section.

Not here: GLM-4.5's multi-token-prediction block (num_nextn_predict_layers), which the
converter writes as one more block with blk.N.nextn.* tensors; transformers does not build it
(vramkit's reader counts blk.N.nextn.* as a file holds them).

Each case's tensor count (the elements of its GGUF tensors) is checked here against
transformers' own count of the model: equal, less what the converter moves into metadata
(Apertus's xIELU scalars), plus nothing.

    gguf_gen.py            write gguf/*.gguf
    gguf_gen.py --check    exit 1 when a file differs from what the gguf package writes now

Needs torch, transformers and gguf (test/models/venv.sh, plus `pip install gguf==0.19.0`);
exit 77 when they cannot be imported.
"""
import argparse
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "gguf")
GGUF_VERSION = "0.19.0"

try:
    import numpy as np
    import torch
    import transformers
    from transformers import AutoConfig
    import gguf
except Exception as e:  # noqa: BLE001
    print(f"gguf_gen: torch/transformers/gguf not importable ({e}); skipped", file=sys.stderr)
    sys.exit(77)


def common_keys(w, c, head_dim=True, kv=None, ff=None):
    """TextModel.set_gguf_parameters: the keys every decoder's conversion writes (kv: the
    per-block head_count_kv of the hybrids in place of the number)."""
    w.add_block_count(c.num_hidden_layers)
    w.add_context_length(getattr(c, "max_position_embeddings", 4096) or 4096)
    w.add_embedding_length(c.hidden_size)
    w.add_feed_forward_length(ff or c.intermediate_size)
    w.add_head_count(c.num_attention_heads)
    w.add_head_count_kv(kv or getattr(c, "num_key_value_heads", None) or c.num_attention_heads)
    if head_dim and getattr(c, "head_dim", None):
        w.add_key_length(c.head_dim)
        w.add_value_length(c.head_dim)
    w.add_layer_norm_rms_eps(1e-6)


def experts_keys(w, c, count, used, ffn=None):
    w.add_expert_count(count)
    w.add_expert_used_count(used)
    if ffn:
        w.add_expert_feed_forward_length(ffn)


def kv_vector(c, attn):
    """head_count_kv as a list: 0 in the blocks without attention (Jamba, Granite-H, LFM2)."""
    kv = getattr(c, "num_key_value_heads", None) or c.num_attention_heads
    return [kv if attn(i) else 0 for i in range(c.num_hidden_layers)]


# ---- the cases: (file, gguf arch, config source, class, small widths, keys) ----------------

def ssm_head(w, c):
    """The keys MambaModel and Mamba2Model write before their ssm.* ones (no attention, no
    MLP: 0 heads, feed-forward length 0)."""
    w.add_context_length(2 ** 20)
    w.add_embedding_length(c.hidden_size)
    w.add_feed_forward_length(0)
    w.add_head_count(0)
    w.add_block_count(c.num_hidden_layers)


def k_mamba(w, c):  # MambaModel
    ssm_head(w, c)
    w.add_ssm_conv_kernel(c.conv_kernel)
    w.add_ssm_inner_size(c.intermediate_size)
    w.add_ssm_state_size(c.state_size)
    w.add_ssm_time_step_rank(c.time_step_rank)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_ssm_dt_b_c_rms(c.model_type == "falcon_mamba")


def k_mamba2(w, c):  # Mamba2Model
    d_inner = c.expand * c.hidden_size
    ssm_head(w, c)
    w.add_ssm_conv_kernel(c.conv_kernel)
    w.add_ssm_inner_size(d_inner)
    w.add_ssm_state_size(c.state_size)
    w.add_ssm_time_step_rank(d_inner // c.head_dim)
    w.add_ssm_group_count(c.n_groups)
    w.add_layer_norm_rms_eps(1e-5)


def k_jamba(w, c):  # JambaModel
    w.add_block_count(c.num_hidden_layers)
    w.add_context_length(c.max_position_embeddings)
    w.add_embedding_length(c.hidden_size)
    w.add_feed_forward_length(c.intermediate_size)
    w.add_head_count(c.num_attention_heads)
    w.add_head_count_kv(kv_vector(
        c, lambda i: i >= c.attn_layer_offset and (i - c.attn_layer_offset) % c.attn_layer_period == 0))
    w.add_ssm_conv_kernel(c.mamba_d_conv)
    w.add_ssm_inner_size(c.mamba_expand * c.hidden_size)
    w.add_ssm_state_size(c.mamba_d_state)
    w.add_ssm_time_step_rank(c.mamba_dt_rank)
    w.add_layer_norm_rms_eps(1e-6)
    experts_keys(w, c, c.num_experts, c.num_experts_per_tok)


def k_falcon_h1(w, c):  # FalconH1Model (Mamba2Model + attention keys)
    common_keys(w, c)
    w.add_ssm_conv_kernel(c.mamba_d_conv)
    w.add_ssm_inner_size(c.mamba_d_ssm)
    w.add_ssm_state_size(c.mamba_d_state)
    w.add_ssm_time_step_rank(c.mamba_n_heads)
    w.add_ssm_group_count(c.mamba_n_groups)


def k_granite_hybrid(w, c):  # GraniteHybridModel
    common_keys(w, c, head_dim=False,
                kv=kv_vector(c, lambda i: c.layer_types[i] in ("attention", "full_attention")))
    experts_keys(w, c, c.num_local_experts, c.num_experts_per_tok)
    w.add_expert_shared_feed_forward_length(c.shared_intermediate_size)
    w.add_ssm_conv_kernel(c.mamba_d_conv)
    w.add_ssm_state_size(c.mamba_d_state)
    w.add_ssm_group_count(c.mamba_n_groups)
    w.add_ssm_inner_size(c.mamba_expand * c.hidden_size)
    w.add_ssm_time_step_rank(c.mamba_n_heads)


def k_lfm2(w, c):  # LFM2Model
    ff = int(2 * c.intermediate_size / 3)  # block_ff_dim, auto-adjusted
    ff = int(c.block_ffn_dim_multiplier * ff)
    ff = c.block_multiple_of * ((ff + c.block_multiple_of - 1) // c.block_multiple_of)
    c.intermediate_size = ff
    common_keys(w, c, head_dim=False,
                kv=kv_vector(c, lambda i: c.layer_types[i] == "full_attention"))
    w.add_vocab_size(c.vocab_size)
    w.add_shortconv_l_cache(c.conv_L_cache)


def k_qwen3next(w, c):  # Qwen3NextModel (Qwen2MoeModel's keys and the linear attention's)
    common_keys(w, c)
    experts_keys(w, c, c.num_experts, c.num_experts_per_tok, c.moe_intermediate_size)
    w.add_expert_shared_feed_forward_length(c.shared_expert_intermediate_size)
    w.add_ssm_conv_kernel(c.linear_conv_kernel_dim)
    w.add_ssm_state_size(c.linear_key_head_dim)
    w.add_ssm_group_count(c.linear_num_key_heads)
    w.add_ssm_time_step_rank(c.linear_num_value_heads)
    w.add_ssm_inner_size(c.linear_value_head_dim * c.linear_num_value_heads)
    w.add_full_attention_interval(c.full_attention_interval)


def linear_attention_keys(w, c, interval):  # Qwen3-Next's and Qwen3.5's gated delta rule
    w.add_ssm_conv_kernel(c.linear_conv_kernel_dim)
    w.add_ssm_state_size(c.linear_key_head_dim)
    w.add_ssm_group_count(c.linear_num_key_heads)
    w.add_ssm_time_step_rank(c.linear_num_value_heads)
    w.add_ssm_inner_size(c.linear_value_head_dim * c.linear_num_value_heads)
    w.add_full_attention_interval(interval)


def full_interval(c):  # Qwen3.5's configs say it by layer_types only
    return c.layer_types.index("full_attention") + 1


def k_qwen35(w, c):  # Qwen3.5 dense: Qwen3-Next's blocks with a dense MLP
    common_keys(w, c)
    linear_attention_keys(w, c, full_interval(c))


def k_qwen35moe(w, c):  # Qwen3.5 MoE: experts and the shared one in every block
    common_keys(w, c)
    experts_keys(w, c, c.num_experts, c.num_experts_per_tok, c.moe_intermediate_size)
    w.add_expert_shared_feed_forward_length(c.shared_expert_intermediate_size)
    linear_attention_keys(w, c, full_interval(c))


def k_apertus(w, c):  # ApertusModel: the xIELU scalars, one per block, as metadata
    common_keys(w, c)
    n = c.num_hidden_layers
    w.add_xielu_alpha_n([0.8] * n)
    w.add_xielu_alpha_p([0.8] * n)
    w.add_xielu_beta([0.5] * n)
    w.add_xielu_eps([-1e-6] * n)


def k_cohere2(w, c):  # Cohere2Model
    common_keys(w, c)
    w.add_sliding_window(c.sliding_window)


def k_dense(w, c):
    common_keys(w, c)


def k_bloom(w, c):  # BloomModel: LayerNorms (an eps, not an RMS one), MLP 4 x hidden, ALiBi
    w.add_embedding_length(c.hidden_size)
    w.add_feed_forward_length(4 * c.hidden_size)
    w.add_block_count(c.n_layer)
    w.add_head_count(c.n_head)
    w.add_head_count_kv(c.n_head)
    w.add_layer_norm_eps(c.layer_norm_epsilon)


def k_mpt(w, c):  # MPTModel: max_seq_len, MLP 4 x d_model, ALiBi's bias max
    w.add_context_length(c.max_seq_len)
    w.add_embedding_length(c.d_model)
    w.add_block_count(c.n_layers)
    w.add_feed_forward_length(4 * c.d_model)
    w.add_head_count(c.n_heads)
    w.add_layer_norm_eps(1e-5)
    w.add_max_alibi_bias(c.attn_config.alibi_bias_max)


def k_moe(w, c):  # OLMoE, PhiMoE, GraniteMoE: TextModel's expert keys
    common_keys(w, c)
    n = getattr(c, "num_local_experts", None) or c.num_experts
    experts_keys(w, c, n, c.num_experts_per_tok)


def k_glm4moe(w, c):  # Glm4MoeModel
    common_keys(w, c)
    experts_keys(w, c, c.n_routed_experts, c.num_experts_per_tok, c.moe_intermediate_size)
    w.add_leading_dense_block_count(c.first_k_dense_replace)
    w.add_expert_shared_count(c.n_shared_experts)
    w.add_expert_weights_norm(c.norm_topk_prob)


def k_ernie_moe(w, c):  # Ernie4_5MoeModel
    common_keys(w, c, head_dim=False)
    experts_keys(w, c, c.moe_num_experts, c.moe_k, c.moe_intermediate_size)
    w.add_interleave_moe_layer_step(c.moe_layer_interval)
    w.add_leading_dense_block_count(c.moe_layer_start_index)
    w.add_expert_shared_count(c.moe_num_shared_experts)
    # the converter's width for the shared experts: intermediate_size // num_key_value_heads
    w.add_expert_shared_feed_forward_length(c.intermediate_size // c.num_key_value_heads)


def k_llama4(w, c):  # Llama4Model
    common_keys(w, c, ff=c.intermediate_size_mlp)
    experts_keys(w, c, c.num_local_experts, c.num_experts_per_tok, c.intermediate_size)
    w.add_interleave_moe_layer_step(c.interleave_moe_layer_step)


NOPAD = {"pad_token_id": None, "bos_token_id": None, "eos_token_id": None}
SMALL = {"hidden_size": 32, "vocab_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2,
         "intermediate_size": 48, **NOPAD}

CASES = [
    ("mamba", "mamba", "mamba-2.8b-hf", "MambaForCausalLM",
     {**SMALL, "num_hidden_layers": 2, "intermediate_size": 64, "state_size": 8,
      "time_step_rank": 2}, k_mamba),
    ("falcon-mamba", "mamba", "falcon-mamba-7b", "FalconMambaForCausalLM",
     {**SMALL, "num_hidden_layers": 2, "intermediate_size": 64, "state_size": 8,
      "time_step_rank": 2}, k_mamba),
    ("mamba2", "mamba2", "Mamba-Codestral-7B-v0.1", "Mamba2ForCausalLM",
     {**SMALL, "num_hidden_layers": 2, "state_size": 8, "num_heads": 4, "head_dim": 16,
      "n_groups": 2, "expand": 2}, k_mamba2),
    ("jamba", "jamba", "Jamba-v0.1", "JambaForCausalLM",
     {**SMALL, "num_hidden_layers": 4, "num_experts": 4, "num_experts_per_tok": 2,
      "mamba_d_state": 8, "mamba_dt_rank": 4, "attn_layer_period": 2, "attn_layer_offset": 1,
      "expert_layer_period": 2, "expert_layer_offset": 1}, k_jamba),
    ("falcon-h1", "falcon-h1", "Falcon-H1-0.5B-Instruct", "FalconH1ForCausalLM",
     {**SMALL, "num_hidden_layers": 2, "head_dim": 8, "mamba_d_ssm": 64, "mamba_n_heads": 4,
      "mamba_d_head": 16, "mamba_d_state": 8, "mamba_n_groups": 1}, k_falcon_h1),
    ("granitehybrid", "granitehybrid", "granite-4.0-h-tiny", "GraniteMoeHybridForCausalLM",
     {**SMALL, "num_hidden_layers": 4, "shared_intermediate_size": 40, "num_local_experts": 4,
      "num_experts_per_tok": 2, "mamba_n_heads": 4, "mamba_d_head": 16, "mamba_d_state": 8,
      "mamba_n_groups": 1, "mamba_expand": 2,
      "layer_types": ["mamba", "attention", "mamba", "mamba"]}, k_granite_hybrid),
    ("lfm2", "lfm2", "LFM2-1.2B", "Lfm2ForCausalLM",
     {**SMALL, "num_hidden_layers": 3, "intermediate_size": 96, "block_ff_dim": 96,
      "block_multiple_of": 16, "block_ffn_dim_multiplier": 1.0,
      "layer_types": ["conv", "full_attention", "conv"]}, k_lfm2),
    ("qwen3next", "qwen3next", "Qwen3-Next-80B-A3B-Instruct", "Qwen3NextForCausalLM",
     {**SMALL, "num_hidden_layers": 2, "head_dim": 8, "num_experts": 4, "num_experts_per_tok": 2,
      "moe_intermediate_size": 16, "shared_expert_intermediate_size": 24,
      "linear_num_key_heads": 2, "linear_num_value_heads": 4, "linear_key_head_dim": 8,
      "linear_value_head_dim": 8, "full_attention_interval": 2,
      "layer_types": ["linear_attention", "full_attention"]}, k_qwen3next),
    ("qwen35", "qwen35", "Qwen3.5-text-defaults", "Qwen3_5ForCausalLM",
     {**SMALL, "num_hidden_layers": 2, "head_dim": 8, "linear_num_key_heads": 2,
      "linear_num_value_heads": 4, "linear_key_head_dim": 8, "linear_value_head_dim": 8,
      "layer_types": ["linear_attention", "full_attention"]}, k_qwen35),
    ("qwen35moe", "qwen35moe", "Qwen3.5-MoE-text-defaults", "Qwen3_5MoeForCausalLM",
     {**SMALL, "num_hidden_layers": 2, "head_dim": 8, "num_experts": 4, "num_experts_per_tok": 2,
      "moe_intermediate_size": 16, "shared_expert_intermediate_size": 24,
      "linear_num_key_heads": 2, "linear_num_value_heads": 4, "linear_key_head_dim": 8,
      "linear_value_head_dim": 8, "layer_types": ["linear_attention", "full_attention"]},
     k_qwen35moe),
    ("apertus", "apertus", "Apertus-8B-2509", "ApertusForCausalLM",
     {**SMALL, "num_hidden_layers": 2}, k_apertus),
    ("cohere2", "cohere2", "c4ai-command-r7b-12-2024", "Cohere2ForCausalLM",
     {**SMALL, "num_hidden_layers": 4, "head_dim": 8, "sliding_window": 64, "layer_types": None},
     k_cohere2),
    ("olmoe", "olmoe", "type:olmoe", "OlmoeForCausalLM",
     {**SMALL, "num_hidden_layers": 2, "num_experts": 4, "num_experts_per_tok": 2}, k_moe),
    ("phimoe", "phimoe", "Phi-3.5-MoE-instruct", "PhimoeForCausalLM",
     {**SMALL, "num_hidden_layers": 2, "num_local_experts": 4, "num_experts_per_tok": 2,
      "rope_scaling": None}, k_moe),
    ("granitemoe", "granitemoe", "granite-3.0-1b-a400m-base", "GraniteMoeForCausalLM",
     {**SMALL, "num_hidden_layers": 2, "num_local_experts": 4, "num_experts_per_tok": 2}, k_moe),
    ("glm4moe", "glm4moe", "GLM-4.5-Air", "Glm4MoeForCausalLM",
     {**SMALL, "num_hidden_layers": 3, "head_dim": 8, "moe_intermediate_size": 16,
      "n_routed_experts": 4, "num_experts_per_tok": 2, "first_k_dense_replace": 1,
      "n_shared_experts": 1, "use_qk_norm": True}, k_glm4moe),
    ("minimax-m2", "minimax-m2", "MiniMax-M2-defaults", "MiniMaxM2ForCausalLM",
     {**SMALL, "num_hidden_layers": 2, "head_dim": 8, "num_local_experts": 4,
      "num_experts_per_tok": 2}, k_moe),
    ("ernie4_5", "ernie4_5", "type:ernie4_5", "Ernie4_5ForCausalLM",
     {**SMALL, "num_hidden_layers": 2, "head_dim": 8}, k_dense),
    ("ernie4_5-moe", "ernie4_5-moe", "ERNIE-4.5-21B-A3B-PT", "Ernie4_5_MoeForCausalLM",
     {**SMALL, "num_hidden_layers": 3, "intermediate_size": 64, "moe_intermediate_size": 16,
      "moe_num_experts": 4, "moe_k": 2, "moe_layer_start_index": 1, "moe_num_shared_experts": 2},
     k_ernie_moe),
    ("bloom", "bloom", "bloom-560m", "BloomForCausalLM",
     {**NOPAD, "hidden_size": 32, "vocab_size": 64, "n_head": 4, "n_layer": 2}, k_bloom),
    ("mpt", "mpt", "mpt-7b", "MptForCausalLM",
     {**NOPAD, "d_model": 32, "vocab_size": 64, "n_heads": 4, "n_layers": 2}, k_mpt),
    ("llama4", "llama4", "type:llama4_text", "Llama4ForCausalLM",
     {**SMALL, "num_hidden_layers": 2, "head_dim": 8, "intermediate_size": 16,
      "intermediate_size_mlp": 48, "num_local_experts": 4, "num_experts_per_tok": 1,
      "interleave_moe_layer_step": 2}, k_llama4),
]


LIST = False
MAMBA2 = ("mamba2", "falcon-h1", "granitehybrid")  # Mamba2Model.modify_tensors' reshapes


def arch_of(name):
    return next(a for a, n in gguf.MODEL_ARCH_NAMES.items() if n == name)


def build(src, cls_name, over):
    if src.startswith("type:"):
        cfg = {"model_type": src[5:]}
    else:
        with open(os.path.join(HERE, "configs", src, "config.json")) as f:
            cfg = json.load(f)
    cfg.update(over)
    cfg = {k: v for k, v in cfg.items() if v is not None or k in NOPAD or k == "rope_scaling"}
    c = AutoConfig.for_model(**cfg)
    with torch.device("meta"):
        m = getattr(transformers, cls_name)(c)
    return c, m


def bid_of(name):
    parts = name.split(".")
    for i, p in enumerate(parts[:-1]):
        if p in ("layers", "h", "blocks") and parts[i + 1].isdigit():
            return int(parts[i + 1])
    return None


def convert(arch, c, m):
    """(gguf name, numpy shape) per tensor, as the converter writes them; and the elements
    the converter does not write as tensors."""
    A = arch_of(arch)
    tmap = gguf.get_tensor_name_map(A, c.num_hidden_layers)
    allowed = {gguf.TENSOR_NAMES[t] for t in gguf.MODEL_TENSORS[A]}
    tn = lambda t, bid, sfx=".weight": gguf.TENSOR_NAMES[t].format(bid=bid) + sfx
    out, moved = [], 0
    tied = bool(getattr(c, "tie_word_embeddings", False))
    for name, t in m.state_dict().items():
        shape = tuple(t.shape)
        bid = bid_of(name)
        if tied and name == "lm_head.weight":
            continue  # a tied head is not in the checkpoint
        if name.endswith((".act_fn.alpha_p", ".act_fn.alpha_n", ".act_fn.beta", ".act_fn.eps")):
            moved += t.numel()  # Apertus: xielu.* metadata arrays
            continue
        if name.endswith(".experts.gate_up_proj"):  # fused experts: [E, 2F, H] or [E, H, 2F]
            e, d0, d1 = shape
            f = (d0 if d1 == c.hidden_size else d1) // 2
            out.append((tn(gguf.MODEL_TENSOR.FFN_GATE_EXP, bid), (e, f, c.hidden_size)))
            out.append((tn(gguf.MODEL_TENSOR.FFN_UP_EXP, bid), (e, f, c.hidden_size)))
            continue
        if name.endswith(".experts.down_proj"):  # [E, H, F] or [E, F, H]
            e, d0, d1 = shape
            f = d1 if d0 == c.hidden_size else d0
            out.append((tn(gguf.MODEL_TENSOR.FFN_DOWN_EXP, bid), (e, c.hidden_size, f)))
            continue
        if name.endswith("e_score_correction_bias"):  # DeepSeek-style routing bias
            out.append((tn(gguf.MODEL_TENSOR.FFN_EXP_PROBS_B, bid, ".bias"), (t.numel(),)))
            continue
        if name.endswith(".in_proj_qkvz.weight"):  # Qwen3-Next: q, k, v and the gate z
            kd = c.linear_key_head_dim * c.linear_num_key_heads
            vd = c.linear_value_head_dim * c.linear_num_value_heads
            out.append((tn(gguf.MODEL_TENSOR.ATTN_QKV, bid), (2 * kd + vd, c.hidden_size)))
            out.append((tn(gguf.MODEL_TENSOR.ATTN_GATE, bid), (vd, c.hidden_size)))
            continue
        if name.endswith("shared_mlp.input_linear.weight"):  # Granite: gate and up, fused
            s2 = shape[0] // 2
            out.append((tn(gguf.MODEL_TENSOR.FFN_GATE_SHEXP, bid), (s2, shape[1])))
            out.append((tn(gguf.MODEL_TENSOR.FFN_UP_SHEXP, bid), (s2, shape[1])))
            continue
        if arch == "bloom":
            name = name.removeprefix("transformer.")  # BloomModel.modify_tensors drops it
        if name.endswith(".dt_bias"):
            name = name[: -len(".dt_bias")] + ".dt_proj.bias"
        g = tmap.get_name(name, try_suffixes=(".weight", ".bias"))
        if g is None and name.endswith(".router.weight"):  # GraniteMoE's on-disk name
            g = tmap.get_name(name.replace(".router.", ".router.layer."),
                              try_suffixes=(".weight", ".bias"))
        if g is None:
            raise SystemExit(f"{arch}: no GGUF name for {name} {shape}")
        base = g[: -len(".weight")] if g.endswith(".weight") else g[: -len(".bias")] \
            if g.endswith(".bias") else g
        if base.replace(f".{bid}.", ".{bid}.", 1) not in allowed:
            raise SystemExit(f"{arch}: {g} ({name}) is not among gguf's tensors for {arch}")
        if g == base and not name.endswith((".A_log", ".D")):
            g += ".bias" if name.endswith(".bias") else ".weight"
        if ".ssm_conv1d." in g or ".shortconv.conv." in g:
            shape = tuple(d for d in shape if d != 1)  # squeezed
        if arch in MAMBA2 and name.endswith((".A_log", ".D")):
            shape = shape + (1,)  # Mamba-2's A and D: (H, 1)
        if arch in MAMBA2 and ".ssm_norm." in g:
            groups = getattr(c, "n_groups", None) or c.mamba_n_groups
            shape = (groups, shape[0] // groups)  # the gated norm per group
        out.append((g, shape))
    return out, moved


def write(case, path):
    fname, arch, src, cls, over, keys = case
    c, m = build(src, cls, over)
    tensors, moved = convert(arch, c, m)
    if LIST:
        for n, sh in tensors:
            print(f"  {n} {sh}")
    total = sum(int(np.prod(s)) for _, s in tensors)
    hf = sum(t.numel() for n, t in m.state_dict().items()
             if not (getattr(c, "tie_word_embeddings", False) and n == "lm_head.weight"))
    if total != hf - moved:
        raise SystemExit(f"{fname}: GGUF tensors hold {total}, transformers {hf} - {moved}")
    w = gguf.GGUFWriter(path, arch)
    w.add_name(fname + " (vramkit test header)")
    keys(w, c)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    for name, shape in tensors:
        dt = np.float32 if len(shape) == 1 or name.endswith(("ssm_a", "ssm_d")) else np.float16
        w.add_tensor_info(name, shape, np.dtype(dt), int(np.prod(shape)) * np.dtype(dt).itemsize)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    w.close()
    # the whole file: the data section after the header, padded to the alignment, zeros
    size = os.path.getsize(path)
    start = -(size // -w.data_alignment) * w.data_alignment
    data = sum(-(int(np.prod(s)) * (4 if len(s) == 1 or n.endswith(("ssm_a", "ssm_d")) else 2)
                 // -w.data_alignment) * w.data_alignment for n, s in tensors)
    with open(path, "r+b") as f:
        f.truncate(start + data)
    r = gguf.GGUFReader(path)  # the consumer's reader takes it whole
    assert len(r.tensors) == len(tensors)
    assert sum(int(t.n_elements) for t in r.tensors) == total
    with open(path, "r+b") as f:
        f.truncate(size)
    return total, len(tensors)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--list", action="store_true", help="print each tensor's name and shape")
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()
    global LIST
    LIST = a.list
    from importlib.metadata import version
    if version("gguf") != GGUF_VERSION:
        print(f"gguf_gen: gguf {version('gguf')}, the files were written with {GGUF_VERSION}",
              file=sys.stderr)
    rc = 0
    os.makedirs(OUT, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for case in CASES:
            if a.names and case[0] not in a.names:
                continue
            dst = os.path.join(OUT, case[0] + ".gguf")
            p = os.path.join(tmp, case[0] + ".gguf") if a.check else dst
            total, n = write(case, p)
            same = ""
            if a.check:
                with open(p, "rb") as f1, open(dst, "rb") as f2:
                    ok = f1.read() == f2.read()
                same = " same" if ok else " DIFFERS"
                rc |= not ok
            print(f"{case[0]}\t{case[1]}\t{n} tensors\t{total} params{same}")
    return rc


if __name__ == "__main__":
    sys.exit(main())
