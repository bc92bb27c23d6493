#!/usr/bin/env python3
"""The parameter counts of test/models/configs/*/config.json as transformers builds them.

For each directory under configs/, the model class its config.json names (architectures[0],
else the auto class for its task) is built on the meta device (no weight is allocated) and
its parameters are counted: `total` is sum(p.numel()) over model.parameters() (tied weights
once), `active` what one token goes through: total less, in every mixture-of-experts block,
the routed experts it is not sent to ((E - k) / E of the experts' parameters, E and k from
the config). Buffers (rotary tables, DeepSeek-style routing biases kept as buffers) are not
parameters and are not counted.

    arch_truth.py                 print the table (name, total, active, class)
    arch_truth.py --write FILE    write it as the TSV the unit tests pin (truth.tsv)
    arch_truth.py --check FILE    exit 1 when FILE differs from what transformers gives now
    arch_truth.py --vramkit BIN   also run `BIN estimate DIR --json` on each directory and
                                  exit 1 when its params are off by more than 0.5% (active
                                  1%)

Exit 77 when torch or transformers cannot be imported (the ctest label `truth` skips).
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIGS = os.path.join(HERE, "configs")

try:
    import torch
    import transformers
    from transformers import AutoConfig
except Exception as e:  # noqa: BLE001 - any import failure means "cannot run here"
    print(f"arch_truth: torch/transformers not importable ({e}); skipped", file=sys.stderr)
    sys.exit(77)

EXPERT_KEYS = ("num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts")
TOPK_KEYS = ("num_experts_per_tok", "moe_k", "experts_per_token")
AUTO = ("AutoModelForCausalLM", "AutoModelForImageTextToText", "AutoModelForMaskedLM",
        "AutoModel")


def text_config(cfg):
    for getter in ("get_text_config",):
        if hasattr(cfg, getter):
            try:
                return getattr(cfg, getter)()
            except Exception:  # noqa: BLE001
                pass
    return getattr(cfg, "text_config", cfg)


def build(path, cfg):
    with open(path) as f:
        arch = (json.load(f).get("architectures") or [""])[0]
    cls = getattr(transformers, arch, None)
    tries = [cls] if cls is not None else []
    tries += [getattr(transformers, a) for a in AUTO]
    last = None
    for c in tries:
        try:
            with torch.device("meta"):
                if c.__name__.startswith("Auto"):
                    return c.from_config(cfg), c.__name__
                return c(cfg), c.__name__
        except Exception as e:  # noqa: BLE001 - try the next class
            last = e
    raise RuntimeError(f"{path}: no class builds it: {last}")


def count(path):
    cfg = AutoConfig.from_pretrained(os.path.dirname(path))
    model, cls = build(path, cfg)
    total = sum(p.numel() for p in model.parameters())
    tc = text_config(cfg)
    experts = next((getattr(tc, k) for k in EXPERT_KEYS if getattr(tc, k, None)), 0) or 0
    topk = next((getattr(tc, k) for k in TOPK_KEYS if getattr(tc, k, None)), 0) or 0
    idle = 0
    if experts > 1:
        seen = set()
        for name, mod in model.named_modules():
            leaf = name.rsplit(".", 1)[-1]
            # the routed experts: a module "experts" (fused tensors or a list of E MLPs)
            if leaf != "experts" or any(name.startswith(s + ".") for s in seen):
                continue
            seen.add(name)
            n = sum(p.numel() for p in mod.parameters())
            idle += n * (experts - topk) // experts
    return total, total - idle, cls


def vramkit_params(binary, d):
    out = subprocess.run([binary, "estimate", d, "--json"], capture_output=True, text=True)
    if out.returncode != 0:
        return None, None, out.stderr.strip()
    doc = json.loads(out.stdout)
    m = doc["model"]
    return m.get("params"), m.get("active_params", m.get("params")), ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--write")
    ap.add_argument("--check")
    ap.add_argument("--vramkit")
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()
    names = a.names or sorted(os.listdir(CONFIGS))
    rows = []
    for n in names:
        p = os.path.join(CONFIGS, n, "config.json")
        if not os.path.isfile(p):
            continue
        total, active, cls = count(p)
        rows.append((n, total, active, cls))
        print(f"{n}\t{total}\t{active}\t{cls}", flush=True)
    text = "".join(f"{n}\t{t}\t{ac}\n" for n, t, ac, _ in rows)
    header = ("# name\ttotal\tactive: parameters of transformers " + transformers.__version__ +
              " (torch " + torch.__version__.split("+")[0] + ") built on the meta device from"
              " configs/NAME/config.json; written by test/models/arch_truth.py --write\n")
    rc = 0
    if a.write:
        with open(a.write, "w") as f:
            f.write(header + text)
    if a.check:
        with open(a.check) as f:
            pinned = {l.split("\t")[0]: l.rstrip("\n") for l in f if not l.startswith("#")}
        for n, t, ac, _ in rows:
            if pinned.get(n) != f"{n}\t{t}\t{ac}":
                print(f"{n}: transformers gives {t} / {ac}, {a.check} says "
                      f"{pinned.get(n)!r}", file=sys.stderr)
                rc = 1
    if a.vramkit:
        bad = 0
        for n, t, ac, _ in rows:
            got, got_active, err = vramkit_params(a.vramkit, os.path.join(CONFIGS, n))
            if got is None:
                print(f"FAIL {n}: vramkit: {err}", file=sys.stderr)
                bad += 1
                continue
            d = abs(got - t) / t
            da = abs(got_active - ac) / ac
            ok = d <= 0.005 and da <= 0.01
            bad += not ok
            print(f"{'ok  ' if ok else 'FAIL'} {n}: vramkit {got} ({d * 100:+.3f}%), active "
                  f"{got_active} ({da * 100:.3f}%); transformers {t}, active {ac}",
                  file=sys.stderr)
        print(f"{len(rows) - bad} passed, {bad} failed")
        rc = rc or (1 if bad else 0)
    return rc


if __name__ == "__main__":
    sys.exit(main())
