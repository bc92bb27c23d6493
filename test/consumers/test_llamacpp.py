#!/usr/bin/env python3
"""`vramkit plan --emit llama.cpp` against llama.cpp's own layer assignment, as an executable
model pinned to one version of llama.cpp (it is not installed here).

The model: ggml-org/llama.cpp at commit 00342301d01add50835550e8a916f12097d94517,
src/llama-model.cpp, llama_model::load_tensors:
  - the split points: tensor_split (all zero: each device's free memory) summed in float and
    normalised: splits[i] = (t_0 + ... + t_i) / sum;
  - "const int i_gpu_start = std::max(int(hparams.n_layer) + 1 - n_gpu_layers, 0);"
    "const int act_gpu_layers = devices.empty() ? 0 : std::min(n_gpu_layers, int(n_layer) + 1);"
  - get_layer_buft_list(il): the CPU when il < i_gpu_start or il - i_gpu_start >=
    act_gpu_layers, else device upper_bound(splits, float(il - i_gpu_start) / act_gpu_layers);
  - "pimpl->dev_input = { cpu_dev, ... }" (the token embedding always on the host),
    dev_layer[il] = get_layer_buft_list(il) for il < n_layer,
    "pimpl->dev_output = get_layer_buft_list(n_layer);" (the output layer is slot n_layer);
  - --split-mode none keeps one device, --main-gpu's (llama_model_load_from_file_impl).
Older builds (llm_load_tensors of 2023-24) had i_gpu_start = n_layer - n_gpu_layers and the
output on the GPU only when n_gpu_layers > n_layer; the model below is the current one.

For each plan: the flags vramkit writes go through the model; the blocks it lands on each
device must be the plan's (plan --json per_device), the output layer on a GPU of the plan,
and nothing on a GPU the plan does not use. python3 alone: in the default run.

usage: test_llamacpp.py VRAMKIT
"""
import json
import struct
import subprocess
import sys

VK = sys.argv[1]
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def f32(x):
    """x rounded to a C float, as llama.cpp computes the split points."""
    return struct.unpack("f", struct.pack("f", x))[0]


def llamacpp_assign(n_layer, ngl, tensor_split, gpus, split_mode="layer", main_gpu=0):
    """Device of each slot 0 .. n_layer (n_layer: the output layer): 'cpu' or a GPU index,
    and the input layer's; gpus: each GPU's free bytes (the default split)."""
    devices = list(range(len(gpus)))
    if split_mode == "none":
        devices = [main_gpu]
    ts = [float(t) for t in tensor_split] if tensor_split else []
    ts += [0.0] * (len(devices) - len(ts))
    if split_mode == "none" or all(t == 0.0 for t in ts[:len(devices)]):
        ts = [float(gpus[d]) for d in devices]
    splits, acc = [], f32(0.0)
    for t in ts[:len(devices)]:
        acc = f32(acc + f32(t))
        splits.append(acc)
    splits = [f32(s / acc) for s in splits]
    i_gpu_start = max(n_layer + 1 - ngl, 0)
    act = 0 if not devices else min(ngl, n_layer + 1)

    def dev(il):
        if il < i_gpu_start or il - i_gpu_start >= act:
            return "cpu"
        x = f32(f32(float(il - i_gpu_start)) / f32(float(act)))
        k = next((i for i, s in enumerate(splits) if s > x), len(splits))  # upper_bound
        return devices[k]

    return [dev(il) for il in range(n_layer + 1)], "cpu"


def parse(line):
    toks, out = line.split(), {}
    for i, t in enumerate(toks):
        if t.startswith("-"):
            out[t] = toks[i + 1] if i + 1 < len(toks) and not toks[i + 1].startswith("-") else None
    return out


def run(args):
    r = subprocess.run([VK, *args], capture_output=True, text=True)
    return r


def plan_blocks(args, strategy):
    doc = json.loads(run(["plan", *args, "--json"]).stdout)
    row = next(s for s in doc["strategies"] if s["name"] == strategy)
    assert row["fits"], row["reason_text"]
    out = {}
    for d in row["per_device"]:
        dev = "cpu" if d["device"] == "cpu" else int(d["device"][3:])
        if d.get("blocks"):
            out[dev] = d["blocks"]
    gpus = [g["free_bytes"] for g in doc["inputs"]["machine"]["gpus"]]
    return out, gpus, row


def case(label, model, n_layer, machine, strategy, extra=()):
    args = ["--model", model, *machine, "--host-memory", "64GiB", *extra]
    want, gpus, row = plan_blocks(args, strategy)
    r = run(["plan", *args, "--strategy", strategy, "--emit", "llama.cpp"])
    check(r.returncode == 0, f"{label}: --emit llama.cpp exit {r.returncode} {r.stderr.strip()}")
    if r.returncode != 0:
        return
    f = parse(r.stdout)
    ngl = int(f.get("-ngl", 0))
    ts = [int(x) for x in f["--tensor-split"].split(",")] if "--tensor-split" in f else []
    mode = f.get("--split-mode", "layer")
    slots, _ = llamacpp_assign(n_layer, ngl, ts, gpus, mode, int(f.get("--main-gpu", 0)))
    got = {}
    for d in slots[:n_layer]:
        got[d] = got.get(d, 0) + 1
    check(got == want, f"{label}: {r.stdout.strip()} lands blocks {got}; the plan {want}")
    used = {int(d[3:]) for d in row["devices"] if d.startswith("gpu")}
    if used:
        check(slots[n_layer] in used,
              f"{label}: the output layer on GPU {slots[n_layer]}, a GPU of the plan {sorted(used)}")
    else:
        check(slots[n_layer] == "cpu", f"{label}: a CPU plan keeps the output layer on the host")
    check(set(d for d in slots if d != "cpu") <= used,
          f"{label}: no layer on a GPU the plan does not use")


def main():
    # the model against what the issue observed of llama.cpp (and older builds' reading)
    slots, _ = llamacpp_assign(32, 21, [], [1])
    check(sum(1 for d in slots[:32] if d == 0) == 20 and slots[32] == 0,
          "model: -ngl 21 on a 32-block model is 20 blocks and the output layer")
    slots, _ = llamacpp_assign(32, 33, [16, 16], [1, 1])
    check([sum(1 for d in slots[:32] if d == g) for g in (0, 1)] == [17, 15] and slots[32] == 1,
          "model: -ngl 33 --tensor-split 16,16 is 17 blocks on GPU 0, 15 and the output on GPU 1")
    case("Llama-3-8B gpu_cpu (12 GiB)", "Llama-3-8B", 32,
         ["--assume-gpu", "12GiB,cc=7.5"], "gpu_cpu", ["--seq", "2048", "--batch", "2"])
    case("Mistral-7B gpu_cpu (8 GiB, 1 GiB used)", "Mistral-7B", 32,
         ["--assume-gpu", "8GiB,used=1GiB,cc=8.9"], "gpu_cpu")
    case("Qwen2.5-0.5B bf16 on one GPU", "Qwen2.5-0.5B", 24,
         ["--assume-gpu", "8GiB,cc=8.9"], "bf16")
    case("Qwen2.5-0.5B bf16 on GPU 1 of two", "Qwen2.5-0.5B", 24,
         ["--assume-gpu", "2GiB,cc=8.9", "--assume-gpu", "8GiB,cc=8.9"], "bf16")
    case("Llama-3-8B multi_gpu (2 x 10 GiB)", "Llama-3-8B", 32,
         ["--assume-gpu", "10GiB,cc=8.9", "--assume-gpu", "10GiB,cc=8.9"], "multi_gpu")
    case("Mistral-Small-22B multi_gpu (3 GPUs of other sizes)", "Mistral-Small-22B", 56,
         ["--assume-gpu", "16GiB,cc=8.9", "--assume-gpu", "24GiB,cc=8.9",
          "--assume-gpu", "12GiB,cc=8.9"], "multi_gpu")
    case("Qwen2.5-0.5B cpu", "Qwen2.5-0.5B", 24, ["--assume-gpu", "1GiB,cc=8.9"], "cpu")
    print(f"{len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
