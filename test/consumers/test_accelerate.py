#!/usr/bin/env python3
"""`vramkit plan --emit accelerate` carried out by accelerate's own placement, block for block.

For each model (a config.json of test/truth/models: a dense decoder, tied heads, a mixture of
experts, GPT-2's other module names, an encoder-decoder) and each split strategy (gpu_cpu on
one GPU too small for the model; multi_gpu over two GPUs), vramkit plans, then emits:
  1. the model is built from its config.json under init_empty_weights (meta device: no
     weights, no GPU) at the plan's dtype, and accelerate.infer_auto_device_map (and
     transformers' own copy of it, which from_pretrained(device_map="sequential") runs) is
     given the emitted max_memory and no_split_module_classes;
  2. every parameter lands on the device the emitted device_map names (the map is the plan,
     module for module), each device holds the plan's blocks (plan --json per_device), and
     the parameter bytes accelerate puts on each device equal the emitted `weights`;
  3. no_split_module_classes is the model's own _no_split_modules.
Exit 77 (skipped) where torch, transformers or accelerate are not importable.
Read against accelerate 1.15.0 (accelerate/utils/modeling.py: infer_auto_device_map,
get_max_layer_size, compute_module_sizes) and transformers 5.23/5.24
(integrations/accelerate.py: infer_auto_device_map, _get_device_map).

usage: test_accelerate.py VRAMKIT MODELS_DIR
"""
import json
import subprocess
import sys

try:
    import torch
    import transformers
    import accelerate
    from accelerate import init_empty_weights
    from accelerate.utils import infer_auto_device_map
    from transformers.integrations import accelerate as hf_accelerate
except ImportError as e:
    print(f"skipped: {e} (test/truth/setup-venv.sh installs them)")
    sys.exit(77)

VK, MODELS = sys.argv[1], sys.argv[2]
# model folder, what it stands for
CASES = [
    ("mistral-7b-v0.1", "dense, untied head"),
    ("qwen2.5-0.5b", "tied head, large vocabulary"),
    ("llama-3.2-1b", "tied head"),
    ("olmoe-1b-7b", "mixture of experts"),
    ("gpt2", "GPT-2 names, learned positions, tied head"),
    ("t5-base", "encoder-decoder, shared embedding"),
]
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def vk(*args):
    r = subprocess.run([VK, *args], capture_output=True, text=True)
    if r.returncode not in (0, 1):
        raise RuntimeError(f"vramkit {' '.join(args)}: exit {r.returncode}: {r.stderr}")
    return r


def keyed(d):
    return {int(k) if k.isdigit() else k: v for k, v in d.items()}


def build(path):
    cfg = transformers.AutoConfig.from_pretrained(path)
    auto = (transformers.AutoModelForSeq2SeqLM if cfg.is_encoder_decoder
            else transformers.AutoModelForCausalLM)
    with init_empty_weights():
        model = auto.from_config(cfg, dtype=torch.bfloat16)
    model.tie_weights()
    return model


def param_devices(model, device_map):
    """Each parameter's device under a device_map (its longest module prefix), and the
    parameter bytes per device (a tied weight counted once, as accelerate counts it)."""
    where, per = {}, {}
    for name, p in model.named_parameters(remove_duplicate=False):
        parts = name.split(".")
        dev = None
        for k in range(len(parts), -1, -1):
            key = ".".join(parts[:k])
            if key in device_map:
                dev = device_map[key]
                break
        where[name] = dev
    for name, p in model.named_parameters():  # deduplicated
        per[where[name]] = per.get(where[name], 0) + p.numel() * p.element_size()
    return where, per


def blocks_per_device(model, device_map, classes):
    where, _ = param_devices(model, device_map)
    out = {}
    for name, m in model.named_modules():
        if m.__class__.__name__ in classes:
            first = next(n for n, _ in m.named_parameters(prefix=name))
            out[where[first]] = out.get(where[first], 0) + 1
    return out


def gpu_blocks(path, gpu_mib):
    """Blocks gpu_cpu puts on one GPU of gpu_mib MiB (-1: it does not fit)."""
    doc = json.loads(vk("plan", "--model", path, "--assume-gpu", f"{gpu_mib}MiB,cc=8.0",
                        "--host-memory", "256GiB", "--seq", "512", "--json").stdout)
    row = next(s for s in doc["strategies"] if s["name"] == "gpu_cpu")
    if not row["fits"]:
        return -1
    return next((d["blocks"] for d in row["per_device"] if d["device"] == "gpu0"), 0)


def machine(path, total_bytes, strategy):
    """GPUs on which the strategy splits: gpu_cpu one GPU holding about half the blocks (the
    smallest size that does, found by bisection), multi_gpu two of about 70% of the weights."""
    mib = 1 << 20
    if strategy == "gpu_cpu":
        lo, hi = 1, (total_bytes * 2) // mib + 4096
        full = gpu_blocks(path, hi)
        while lo < hi:
            mid = (lo + hi) // 2
            if gpu_blocks(path, mid) >= max(1, full // 2):
                hi = mid
            else:
                lo = mid + 1
        return ["--assume-gpu", f"{lo}MiB,cc=8.0"]
    size = (total_bytes * 7 // 10 + 1200 * mib) // mib
    return ["--assume-gpu", f"{size}MiB,cc=8.0", "--assume-gpu", f"{size}MiB,cc=8.0"]


def one(folder, what, strategy):
    path = f"{MODELS}/{folder}"
    model = build(path)
    total = sum(p.numel() * 2 for p in model.parameters())
    args = ["plan", "--model", path, *machine(path, total, strategy), "--host-memory", "256GiB",
            "--seq", "512", "--strategy", strategy]
    plan = json.loads(vk(*args[:-2], "--json").stdout)
    row = next(s for s in plan["strategies"] if s["name"] == strategy)
    label = f"{folder} ({what}) {strategy}"
    if not row["fits"]:
        check(False, f"{label}: the test's machine does not fit: {row['reason_text']}")
        return
    plan_blocks = {}
    for d in row["per_device"]:
        dev = "cpu" if d["device"] == "cpu" else int(d["device"][3:])
        if d.get("blocks"):
            plan_blocks[dev] = d["blocks"]
    split = len(plan_blocks) > 1
    check(split, f"{label}: the plan splits the blocks: {plan_blocks}")
    doc = json.loads(vk(*args, "--emit", "accelerate").stdout)
    mm, dm = keyed(doc["max_memory"]), keyed(doc["device_map"])
    weights = keyed(doc["weights"])
    classes = doc.get("no_split_module_classes", [])
    check(set(classes) == set(model._no_split_modules),
          f"{label}: no_split_module_classes {classes} = the model's {model._no_split_modules}")
    # the emitted map: the plan's blocks, every parameter covered, the bytes it states
    want_where, want_per = param_devices(model, dm)
    check(None not in want_where.values(),
          f"{label}: the device_map covers every parameter "
          f"({[n for n, d in want_where.items() if d is None][:3]} not)")
    check(blocks_per_device(model, dm, classes) == plan_blocks,
          f"{label}: the device_map's blocks per device {blocks_per_device(model, dm, classes)} "
          f"= the plan's {plan_blocks}")
    check({k: v for k, v in want_per.items() if v} == {k: v for k, v in weights.items() if v},
          f"{label}: the device_map's parameter bytes {want_per} = the emitted weights {weights}")
    ngpu = sum(1 for k in mm if isinstance(k, int))
    real = torch.cuda.device_count
    torch.cuda.device_count = lambda: ngpu  # the map is arithmetic on the meta device
    try:
        for who, fn in (("accelerate", lambda: infer_auto_device_map(
                            model, max_memory=dict(mm), no_split_module_classes=classes,
                            dtype=torch.bfloat16)),
                        ("transformers", lambda: hf_accelerate.infer_auto_device_map(
                            model, max_memory=dict(mm), no_split_module_classes=set(classes)))):
            got = fn()
            got_where, got_per = param_devices(model, got)
            moved = sorted({n.rsplit(".", 1)[0] for n in got_where
                            if got_where[n] != want_where[n]})
            check(not moved, f"{label}: {who}'s infer_auto_device_map puts every parameter where "
                             f"the device_map does (differs: {moved[:4]})")
            check(blocks_per_device(model, got, classes) == plan_blocks,
                  f"{label}: {who}: blocks per device {blocks_per_device(model, got, classes)} "
                  f"= the plan's {plan_blocks}")
            check(got_per == want_per,
                  f"{label}: {who}: parameter bytes per device {got_per} = {want_per}")
    finally:
        torch.cuda.device_count = real


def main():
    print(f"torch {torch.__version__}, transformers {transformers.__version__}, "
          f"accelerate {accelerate.__version__}")
    for folder, what in CASES:
        for strategy in ("gpu_cpu", "multi_gpu"):
            try:
                one(folder, what, strategy)
            except Exception as e:  # noqa: BLE001 - a case that cannot run is a failure
                check(False, f"{folder} {strategy}: {type(e).__name__}: {e}")
    print(f"{len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
