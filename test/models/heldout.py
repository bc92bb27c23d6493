#!/usr/bin/env python3
"""Held-out check: every causal-LM model type of the installed transformers, against vramkit.

For each model type of transformers' causal-LM auto mapping (196 in transformers 5.24), its
config class's defaults are written out in full (to_json_file with use_diff=False) with
`architectures` naming the class a published checkpoint of that type would name: the
sequence-to-sequence class for an encoder-decoder, the masked-LM class for an encoder whose
causal-LM class is only a decoder variant (is_decoder false), the image-text class for a
config with a vision tower. That class is built on the meta device and its parameters
counted (arch_truth.count: total, and active for a mixture of experts); then
`vramkit estimate DIR --json` runs on the directory. None of these configs is in
test/models/configs/ (they are the defaults, not published files): the set is held out from
the table's own tests.

Each type ends in one of:
  exact     vramkit answers (exit 0) with a count it does not call a guess, within 0.5% of
            transformers' (active within 1%);
  guessed   vramkit answers with a guessed range (model.guessed_params) that holds
            transformers' count, its weights term labelled arch_guess;
  refused   exit 2 with a one-line reason;
  skipped   transformers itself cannot build its default config (not counted).
Anything else is a silent wrong answer and fails the test: a count called exact that is
off, a guessed range that misses, a guessed weights term labelled otherwise, an encoder (the
masked-LM class) charged a KV cache, an exit other than 0 and 2, or a refusal of more than
one line.

    heldout.py --vramkit BIN [TYPE ...]   (exit 0: no silent wrong answer; 1: some; 77: no
                                           torch/transformers)
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

try:
    import torch  # noqa: F401 - arch_truth builds on torch's meta device
    import transformers
    from transformers import AutoConfig
    from transformers.models.auto import modeling_auto as auto
except Exception as e:  # noqa: BLE001 - any import failure means "cannot run here"
    print(f"heldout: torch/transformers not importable ({e}); skipped", file=sys.stderr)
    sys.exit(77)

import arch_truth  # noqa: E402 - after the path and the import check

TOTAL_TOL = 0.005
ACTIVE_TOL = 0.01


def published_class(model_type, cfg, causal):
    """The class a published checkpoint of this type would name, and whether it is an
    encoder (a masked-LM class)."""
    s2s = dict(auto.MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES)
    s2s.update(auto.MODEL_FOR_SPEECH_SEQ_2_SEQ_MAPPING_NAMES)
    mlm = auto.MODEL_FOR_MASKED_LM_MAPPING_NAMES
    itt = auto.MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES
    if getattr(cfg, "is_encoder_decoder", False) and model_type in s2s:
        return s2s[model_type], False
    if model_type in mlm and not getattr(cfg, "is_decoder", True) and model_type != "gpt2":
        # an encoder whose causal-LM class is the decoder variant (is_decoder false by
        # default): its checkpoints name the masked-LM class
        return mlm[model_type], True
    if model_type in itt and hasattr(cfg, "vision_config"):
        return itt[model_type], False
    return causal, False


def topk_set(cfg):
    tc = arch_truth.text_config(cfg)
    experts = next((getattr(tc, k) for k in arch_truth.EXPERT_KEYS if getattr(tc, k, None)), 0)
    if not experts or experts <= 1:
        return True
    return any(getattr(tc, k, None) for k in arch_truth.TOPK_KEYS)


def judge(doc, total, active, check_active, encoder):
    """'exact' or 'guessed' when the answer holds, else the reason it is a wrong answer."""
    m = doc["model"]
    got = m.get("params")
    got_active = m.get("active_params", got)
    terms = {t.get("name"): t for t in doc.get("terms", [])}
    kv = terms.get("kv_cache", {})
    if encoder and (kv.get("bytes", 0) or kv.get("high", 0)):
        return f"an encoder charged a KV cache of {kv.get('bytes')} bytes (family {m.get('family')})"
    guess = m.get("guessed_params")
    if guess is not None:
        lo, hi = guess.get("low", 0), guess.get("high", 0)
        cause = terms.get("weights", {}).get("cause")
        if cause != "arch_guess":
            return f"guessed, but the weights term is labelled {cause!r}"
        if not lo <= total <= hi:
            return (f"guessed {lo}..{hi} ({lo / total:.3f}x..{hi / total:.3f}x), "
                    f"transformers {total}")
        return "guessed"
    if got is None:
        return "exit 0 without a parameter count"
    d = (got - total) / total
    if abs(d) > TOTAL_TOL:
        return f"{got} parameters called exact, transformers {total} ({d * 100:+.2f}%)"
    if check_active and active:
        da = (got_active - active) / active
        if abs(da) > ACTIVE_TOL:
            return (f"{got_active} active called exact, transformers {active} "
                    f"({da * 100:+.2f}%)")
    return "exact"


def one(binary, model_type, causal, root):
    """(kind, line): kind is exact, guessed, refused, skipped or wrong."""
    d = os.path.join(root, model_type)
    try:
        cfg = AutoConfig.for_model(model_type)
        cls, encoder = published_class(model_type, cfg, causal)
        cfg.architectures = [cls]
        os.makedirs(d, exist_ok=True)
        cfg.to_json_file(os.path.join(d, "config.json"), use_diff=False)
        total, active, _ = arch_truth.count(os.path.join(d, "config.json"))
        check_active = topk_set(cfg)
    except Exception as e:  # noqa: BLE001 - transformers cannot build its own default
        return "skipped", f"{model_type}: transformers cannot build it: " \
                          f"{(str(e).splitlines() or [''])[0][:100]}"
    out = subprocess.run([binary, "estimate", d, "--json"], capture_output=True, text=True)
    err = out.stderr.strip()
    if out.returncode == 2:
        if "\n" in err or not err:
            return "wrong", f"{model_type} [{cls}]: exit 2 without a one-line reason: {err!r}"
        return "refused", f"{model_type} [{cls}] ({total}): {err[:160]}"
    if out.returncode != 0:
        return "wrong", f"{model_type} [{cls}]: exit {out.returncode}: {err[:200]}"
    try:
        doc = json.loads(out.stdout)
    except ValueError as e:
        return "wrong", f"{model_type} [{cls}]: exit 0 and no JSON ({e})"
    verdict = judge(doc, total, active, check_active, encoder)
    m = doc["model"]
    line = (f"{model_type} [{cls}]: vramkit {m.get('params')} (active "
            f"{m.get('active_params', m.get('params'))}, family {m.get('family')}); "
            f"transformers {total} (active {active})")
    if verdict in ("exact", "guessed"):
        return verdict, line
    return "wrong", f"{line}: {verdict}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vramkit", required=True)
    ap.add_argument("--verbose", action="store_true", help="print every type, not only the "
                    "wrong answers and refusals")
    ap.add_argument("--keep", help="write the configs under this directory and keep them")
    ap.add_argument("types", nargs="*")
    a = ap.parse_args()
    warnings.filterwarnings("ignore")
    transformers.logging.set_verbosity_error()
    causal = auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
    types = a.types or sorted(causal)
    tally = {"exact": 0, "guessed": 0, "refused": 0, "skipped": 0, "wrong": 0}
    with tempfile.TemporaryDirectory(prefix="vramkit-heldout-") as tmp:
        root = a.keep or tmp
        for t in types:
            if t not in causal:
                print(f"heldout: {t} is not a causal-LM type of transformers "
                      f"{transformers.__version__}", file=sys.stderr)
                return 2
            kind, line = one(a.vramkit, t, causal[t], root)
            tally[kind] += 1
            if kind == "wrong" or a.verbose or kind == "refused":
                print(f"{kind.upper():8} {line}", flush=True)
    print(f"transformers {transformers.__version__}: {len(types)} causal-LM types: "
          f"{tally['exact']} exact, {tally['guessed']} guessed and inside, {tally['refused']} "
          f"refused, {tally['skipped']} not buildable by transformers, {tally['wrong']} silent "
          f"wrong answers")
    return 1 if tally["wrong"] else 0


if __name__ == "__main__":
    sys.exit(main())
