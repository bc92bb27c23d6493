#!/usr/bin/env python3
"""`vramkit plan --emit accelerate` checked by accelerate and transformers themselves.

A small Llama-shaped model is saved by transformers (config.json + model.safetensors), then:
  1. max_memory: given to accelerate.infer_auto_device_map on the model built on the meta
     device, it yields a map whose bytes per device agree with vramkit's split (the emitted
     device_map, measured by accelerate's own compute_module_sizes) within one block, for
     gpu_cpu, multi_gpu, a single GPU and the CPU;
  2. device_map: accepted by from_pretrained and by dispatch_model on the CPU (GPU indices
     mapped to "cpu": this machine may have no GPU), every parameter covered, and the logits
     equal to those of the model loaded plainly.
Exit 77 (skipped) when torch, transformers or accelerate are not importable.

usage: test_emit_accelerate.py VRAMKIT [WORKDIR]
"""
import json
import os
import subprocess
import sys
import tempfile

try:
    import torch
    import transformers
    import accelerate
    from accelerate import dispatch_model, infer_auto_device_map, init_empty_weights
    from accelerate.utils import compute_module_sizes
except ImportError as e:  # the opt-in venv is not there
    print(f"skipped: {e} (docs/tests.md, Interop, says how to install them)")
    sys.exit(77)

VK = sys.argv[1]
WORK = sys.argv[2] if len(sys.argv) > 2 else tempfile.mkdtemp(prefix="vk-interop-")
DTYPE = torch.bfloat16
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def vk(*args):
    r = subprocess.run([VK, *args], capture_output=True, text=True)
    return r


def plan_json(model, *args):
    r = vk("plan", "--model", model, *args, "--json")
    assert r.returncode in (0, 1), r.stderr
    return json.loads(r.stdout)


def emit(model, *args):
    r = vk("plan", "--model", model, *args, "--emit", "accelerate")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def keyed(d):
    """JSON keys back to what accelerate takes: GPU indices as ints."""
    return {int(k) if isinstance(k, str) and k.isdigit() else k: v for k, v in d.items()}


def per_device(device_map, sizes):
    out = {}
    for name, dev in device_map.items():
        out[dev] = out.get(dev, 0) + sizes[name]
    return out


def make_model(path, tied):
    cfg = transformers.LlamaConfig(
        vocab_size=512, hidden_size=128, intermediate_size=344, num_hidden_layers=12,
        num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=256,
        tie_word_embeddings=tied)
    torch.manual_seed(0)
    model = transformers.AutoModelForCausalLM.from_config(cfg, dtype=DTYPE)
    model.save_pretrained(path, safe_serialization=True)
    return cfg


def gpu_cpu_free(path, want_on_gpu):
    """Free bytes on one GPU for which vramkit's gpu_cpu puts want_on_gpu blocks there."""
    lo, hi = 1, 8 << 30
    while lo < hi:  # the smallest free with at least want_on_gpu blocks on the GPU
        mid = (lo + hi) // 2
        doc = plan_json(path, "--assume-gpu", f"8GiB,free={mid},cc=8.0", "--margin", "0",
                        "--host-memory", "16GiB")
        s = next(x for x in doc["strategies"] if x["name"] == "gpu_cpu")
        k = next((d["blocks"] for d in s.get("per_device", []) if d["device"] == "gpu0"), 0) \
            if s["fits"] else 0
        if k >= want_on_gpu:
            hi = mid
        else:
            lo = mid + 1
    return lo


def check_max_memory(path, cfg, label, args, ngpus):
    doc = emit(path, *args)
    mm, dm = keyed(doc["max_memory"]), keyed(doc["device_map"])
    notes = doc.get("notes", [])
    with init_empty_weights():
        meta = transformers.AutoModelForCausalLM.from_config(cfg, dtype=DTYPE)
    meta.tie_weights()
    sizes = compute_module_sizes(meta, dtype=DTYPE)
    block = sizes["model.layers.0"]
    # accelerate drops GPU indices this machine lacks; the map is arithmetic on the meta
    # device, so let it see the plan's GPUs
    real = torch.cuda.device_count
    torch.cuda.device_count = lambda: ngpus
    try:
        auto = infer_auto_device_map(meta, max_memory=mm,
                                     no_split_module_classes=meta._no_split_modules, dtype=DTYPE)
    finally:
        torch.cuda.device_count = real
    got, want = per_device(auto, sizes), per_device(dm, sizes)
    devices = set(got) | set(want)
    worst = max(abs(got.get(d, 0) - want.get(d, 0)) for d in devices)
    check(worst <= block and "disk" not in got,
          f"{label}: infer_auto_device_map bytes per device {got} vs vramkit's split {want} "
          f"(block {block} B, largest difference {worst} B)")
    return dm, notes


def check_device_map(path, label, dm, notes):
    as_cpu = {k: "cpu" for k in dm}  # GPU indices mapped to the CPU: coverage is the question
    tied = any(n.startswith("tied head:") for n in notes)
    ids = torch.tensor([[1, 5, 9, 42, 7]])
    plain = transformers.AutoModelForCausalLM.from_pretrained(path, dtype=DTYPE)
    with torch.no_grad():
        ref = plain(ids).logits
    try:
        loaded = transformers.AutoModelForCausalLM.from_pretrained(path, dtype=DTYPE,
                                                                   device_map=as_cpu)
        with torch.no_grad():
            out = loaded(ids).logits
        check(torch.equal(out, ref), f"{label}: from_pretrained(device_map=...) loads and agrees")
    except Exception as e:  # noqa: BLE001 - the test reports what the consumer said
        check(False, f"{label}: from_pretrained(device_map=...) refused it: {e}")
    if tied:  # the stated limitation: one more entry, on the embedding's device
        check("lm_head" not in dm, f"{label}: tied head, no entry of its own (as the note says)")
        as_cpu["lm_head"] = as_cpu["model.embed_tokens"]
    try:
        dispatched = dispatch_model(plain, device_map=as_cpu)
        with torch.no_grad():
            out = dispatched(ids).logits
        check(torch.equal(out, ref), f"{label}: dispatch_model(device_map=...) runs and agrees")
    except Exception as e:  # noqa: BLE001
        check(False, f"{label}: dispatch_model refused it: {e}")


def main():
    print(f"torch {torch.__version__}, transformers {transformers.__version__}, "
          f"accelerate {accelerate.__version__}")
    for tied in (False, True):
        path = os.path.join(WORK, "tied" if tied else "untied")
        cfg = make_model(path, tied)
        name = "tied" if tied else "untied"
        free = gpu_cpu_free(path, 6)
        dm, notes = check_max_memory(path, cfg, f"{name} gpu_cpu",
                              ["--assume-gpu", f"8GiB,free={free},cc=8.0", "--margin", "0",
                               "--host-memory", "16GiB", "--strategy", "gpu_cpu"], 1)
        check(sum(1 for k, v in dm.items() if k.startswith("model.layers.") and v == 0) == 6,
              f"{name} gpu_cpu: 6 blocks on GPU 0 in the device_map")
        check_device_map(path, f"{name} gpu_cpu", dm, notes)
        dm, notes = check_max_memory(path, cfg, f"{name} multi_gpu",
                              ["--assume-gpu", "8GiB,cc=8.0", "--assume-gpu", "8GiB,cc=8.0",
                               "--host-memory", "16GiB", "--strategy", "multi_gpu"], 2)
        check_device_map(path, f"{name} multi_gpu", dm, notes)
        dm, notes = check_max_memory(path, cfg, f"{name} bf16",
                              ["--assume-gpu", "8GiB,cc=8.0", "--host-memory", "16GiB"], 1)
        check_device_map(path, f"{name} bf16", dm, notes)
        dm, notes = check_max_memory(path, cfg, f"{name} cpu",
                              ["--host-memory", "16GiB", "--strategy", "cpu"], 0)
        check(set(dm.values()) == {"cpu"}, f"{name} cpu: every module on the CPU")
        check_device_map(path, f"{name} cpu", dm, notes)
    print(f"{len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
