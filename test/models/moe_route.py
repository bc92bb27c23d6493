#!/usr/bin/env python3
"""The format of the routing weights transformers' experts are given, model type by type.

For every causal-LM model type of the installed transformers whose experts go through
transformers' experts interface (`use_experts_implementation`: the module has `has_gate`
and `num_experts`), the config class's defaults are built with a dense block or two and
one routed block, in bf16 on torch's fake tensors, and one forward of 8 tokens records the
dtype of the routing weights each experts module receives. Where they are fp32 (a softmax
or sigmoid kept in fp32), transformers' grouped experts scale their outputs into fp32, and
that is the mixture-of-experts block's working set (include/vramkit/estimate.h,
vram__infer_ws). vramkit's rows say so with VRAM_MOE_ROUTE_FP32; test/unit/test_moe.c pins
each row's flag against moe_route.tsv, which this writes.

    moe_route.py                  print the table (type, f32 or compute)
    moe_route.py --write FILE     write it as the TSV test_moe.c reads
    moe_route.py --check FILE     exit 1 when FILE's types answer otherwise today

Exit 77 when torch or transformers cannot be imported (the ctest label truth skips).
"""
import argparse
import sys
import warnings

try:
    import torch
    import transformers
    from torch._subclasses.fake_tensor import FakeTensorMode
    from transformers import CONFIG_MAPPING
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
except Exception as e:  # noqa: BLE001 - any import failure means "cannot run here"
    print(f"moe_route: torch/transformers not importable ({e}); skipped", file=sys.stderr)
    sys.exit(77)

warnings.filterwarnings("ignore")
transformers.logging.set_verbosity_error()
EXPERT_KEYS = ("num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts")


def small(cfg):
    """The config with its first dense blocks and two more (at least one routed)."""
    tc = cfg.get_text_config() if hasattr(cfg, "get_text_config") else cfg
    if not any(getattr(tc, k, None) for k in EXPERT_KEYS):
        return None
    if hasattr(tc, "num_experts_per_tok") and tc.num_experts_per_tok is None:
        tc.num_experts_per_tok = 2  # DeepseekV2Config leaves it unset (DeepSeek-V2 says 6)
    for k in ("moe_intermediate_size", "intermediate_size"):  # grouped_mm wants 16-byte rows
        v = getattr(tc, k, None)
        if isinstance(v, int) and v % 8:
            setattr(tc, k, v + 8 - v % 8)  # DeepseekV2Config's 1407; widths route alike
    dense = getattr(tc, "first_k_dense_replace", 0) or 0
    if hasattr(tc, "num_hidden_layers"):
        tc.num_hidden_layers = min(tc.num_hidden_layers, dense + 2)
    for k in ("layer_types", "mlp_layer_types"):
        v = getattr(tc, k, None)
        if isinstance(v, list):
            try:
                setattr(tc, k, v[: tc.num_hidden_layers])
            except Exception:  # noqa: BLE001 - a derived property: it follows the count
                pass
    return cfg


def route_format(model_type):
    """"f32" or "compute" (the model's own bf16), None when the type has no experts behind
    transformers' experts interface, or raises when it cannot be built or run here."""
    cfg = small(CONFIG_MAPPING[model_type]())
    if cfg is None:
        return None
    cls = transformers.AutoModelForCausalLM._model_mapping[type(cfg)]
    seen = set()
    with FakeTensorMode():
        try:
            m = cls._from_config(cfg, dtype=torch.bfloat16, experts_implementation="grouped_mm")
        except ValueError as e:  # its experts are its own (Llama 4, JetMoE, ...)
            if "experts implementation" in str(e):
                return None
            raise

        def hook(mod, args, kwargs):
            ts = [a for a in list(args) + list(kwargs.values()) if isinstance(a, torch.Tensor)]
            floats = [t.dtype for t in ts[1:] if t.is_floating_point()]  # after hidden states
            seen.update(floats)

        for mod in m.modules():
            if hasattr(mod, "has_gate") and hasattr(mod, "num_experts"):
                mod.register_forward_pre_hook(hook, with_kwargs=True)
        with torch.no_grad():
            m(input_ids=torch.zeros(1, 8, dtype=torch.long), use_cache=False)
    if not seen:
        return None
    if seen == {torch.float32}:
        return "f32"
    if seen == {torch.bfloat16}:
        return "compute"
    raise RuntimeError(f"routing weights of {sorted(map(str, seen))}")


def table(types):
    rows, failed = {}, {}
    for t in types:
        try:
            f = route_format(t)
        except Exception as e:  # noqa: BLE001 - reported, the type left out
            failed[t] = f"{type(e).__name__}: {str(e).splitlines()[0][:120] if str(e) else ''}"
            continue
        if f is not None:
            rows[t] = f
    return rows, failed


def read(path):
    rows = {}
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            t, f_ = line.split()
            rows[t] = f_
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--write")
    g.add_argument("--check")
    a = ap.parse_args()
    if a.check:
        want = read(a.check)
        got, failed = table(sorted(want))
        bad = [f"{t}: {want[t]} in {a.check}, {got.get(t, failed.get(t, 'no experts'))} today"
               for t in sorted(want) if got.get(t) != want[t]]
        for b in bad:
            print("moe_route:", b, file=sys.stderr)
        print(f"moe_route: {len(want) - len(bad)} of {len(want)} types as {a.check} says "
              f"(transformers {transformers.__version__})")
        return 1 if bad else 0
    got, failed = table(sorted(MODEL_FOR_CAUSAL_LM_MAPPING_NAMES))
    for t, why in sorted(failed.items()):
        print(f"moe_route: {t} left out ({why})", file=sys.stderr)
    lines = [f"# type\trouting weights: f32, or compute (bf16 here) - transformers "
             f"{transformers.__version__} (torch {torch.__version__.split('+')[0]}), "
             f"written by test/models/moe_route.py --write"]
    lines += [f"{t}\t{f}" for t, f in sorted(got.items())]
    text = "\n".join(lines) + "\n"
    if a.write:
        with open(a.write, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
