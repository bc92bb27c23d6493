#!/usr/bin/env python3
"""`vramkit plan --emit vllm` against vLLM's own start-up, as an executable model pinned to
one version of vLLM (it is not installed here).

The model: vllm-project/vllm at commit 35d5cda123ec28581759b6d34cde8052314fb1e6:
  - vllm/v1/worker/gpu_worker.py, Worker.init_device: the CUDA context (and NCCL) are made,
    then "self.init_snapshot = MemorySnapshot()", "self.requested_memory =
    self.init_snapshot.total_memory * self.cache_config.gpu_memory_utilization", and
    "if self.init_snapshot.free_memory < self.requested_memory: raise ValueError(
    'Free memory on device ... on startup is less than desired GPU memory utilization')";
  - determine_available_memory: with kv_cache_memory_bytes the KV cache is exactly that
    ("reserved ... for KV Cache as specified by kv_cache_memory_bytes config and skipped
    memory profiling"); else requested_memory - non_kv_cache_memory (weights, the profiled
    activation peak, non-torch memory);
  - vllm/model_executor/models/utils.py, maybe_offload_to_cpu (each layer make_layers builds,
    in order): parameters go to the host one by one while _CPU_OFFLOAD_BYTES <
    _CPU_OFFLOAD_MAX_BYTES = int(cpu_offload_gb * 1024 ** 3); the KV cache stays on the GPU.
vLLM's process then holds its context plus requested_memory (with kv_cache_memory_bytes:
weights on the GPU + activations + that KV cache). The CUDA context is taken as vramkit's own
estimate of it (vramkit estimate's cuda_context term).

For each plan: vLLM must start (the check passes with the context made), what it then holds
must stay inside the plan's budget (free - margin), the KV cache must be the plan's, and
--cpu-offload-gb must leave whole blocks' weights on the host with the GPU's part inside the
budget. The old fraction (budget / total, the context not taken out) is shown to fail the
check where the issue saw it fail. python3 alone: in the default run.

usage: test_vllm.py VRAMKIT
"""
import json
import subprocess
import sys

VK = sys.argv[1]
GIB = 1 << 30
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def run(args):
    return subprocess.run([VK, *args], capture_output=True, text=True)


def parse(line):
    toks, out = line.split(), {}
    for i, t in enumerate(toks):
        if t.startswith("--"):
            out[t] = toks[i + 1] if i + 1 < len(toks) and not toks[i + 1].startswith("--") else None
    return out


def vllm_starts(total, free_before, context, util):
    """Worker.init_device's check, free memory measured once the context exists."""
    free = free_before - context
    requested = total * util
    return free >= requested, requested


def offloaded_bytes(max_gb, block_params_bytes, blocks):
    """maybe_offload_to_cpu over the blocks in order, parameter by parameter."""
    limit = int(max_gb * 1024 ** 3)
    done = 0
    for _ in range(blocks):
        for p in block_params_bytes:
            if done >= limit:
                return done
            done += p
    return done


def terms(model, extra):
    doc = json.loads(run(["estimate", model, *extra, "--json"]).stdout)
    return {t["name"]: t["bytes"] for t in doc["terms"]}


def case(label, model, machine, strategy, extra=(), est=(), block_bytes=0):
    args = ["plan", "--model", model, *machine, "--host-memory", "64GiB", *extra]
    doc = json.loads(run([*args, "--json"]).stdout)
    row = next(s for s in doc["strategies"] if s["name"] == strategy)
    check(row["fits"], f"{label}: the plan fits ({row['reason_text']})")
    r = run([*args, "--strategy", strategy, "--emit", "vllm"])
    check(r.returncode == 0, f"{label}: --emit vllm exit {r.returncode} {r.stderr.strip()}")
    if r.returncode != 0:
        return None
    f = parse(r.stdout)
    util = float(f["--gpu-memory-utilization"])
    tp = int(f["--tensor-parallel-size"])
    t = terms(model, est)
    margin = doc["inputs"]["machine"]["margin_bytes"]
    ctx = t["cuda_context"]
    for dev in (d for d in row["devices"] if d.startswith("gpu")):
        g = int(dev[3:])
        gpu = doc["inputs"]["machine"]["gpus"][g]
        ok, requested = vllm_starts(gpu["total_bytes"], gpu["free_bytes"], ctx, util)
        check(ok, f"{label}: GPU {g}: vLLM starts with {util} (free after its context "
                  f"{(gpu['free_bytes'] - ctx) / GIB:.2f} GiB >= requested {requested / GIB:.2f} GiB)")
        check(ctx + requested <= gpu["free_bytes"] - margin,
              f"{label}: GPU {g}: its context and request stay inside the plan's budget")
    if "--kv-cache-memory-bytes" in f:
        kv = int(f["--kv-cache-memory-bytes"])
        check(kv * tp >= t["kv_cache"] and kv * tp - t["kv_cache"] < tp,
              f"{label}: --kv-cache-memory-bytes {kv} x {tp} GPU(s) is the plan's KV cache "
              f"{t['kv_cache']}")
    if strategy == "gpu_cpu":
        gb = float(f["--cpu-offload-gb"])
        n = row["per_device"]
        blocks = sum(d["blocks"] for d in n)
        block_w = block_bytes  # one block's bf16 weights, from the config's numbers
        params = [block_w // 2, block_w // 4, block_w - block_w // 2 - block_w // 4 - 64, 64]
        done = offloaded_bytes(gb, params, blocks)
        whole = done // block_w
        check(done % block_w in (0, block_w - 64) or done == 0,
              f"{label}: --cpu-offload-gb {gb} offloads whole blocks' weights "
              f"({done} bytes, {whole} blocks)")
        check(whole >= 1, f"{label}: at least one block's weights on the host")
        g = next(int(d[3:]) for d in row["devices"] if d.startswith("gpu"))
        gpu = doc["inputs"]["machine"]["gpus"][g]
        need = (ctx + t["workspace"] + t["activations"] + t["logits"] + t["kv_cache"]
                + t.get("allocator_margin", 0) + t["weights"] - done)
        check(need <= gpu["free_bytes"] - margin,
              f"{label}: with {whole} blocks' weights on the host, the GPU holds {need / GIB:.2f} "
              f"GiB (every block's KV cache among it), inside the budget "
              f"{(gpu['free_bytes'] - margin) / GIB:.2f} GiB")
    return f


def main():
    # the case: 8 GiB, 4.7 GB used, gpt2; the fraction the plan's budget alone gave
    # (0.42) fails vLLM's check once its context exists
    total, free = 8 * GIB, 8 * GIB - 4_700_000_000
    ctx = terms("gpt2", ["--seq", "1024", "--format", "bf16"])["cuda_context"]
    old = int((free - 256 * (1 << 20)) * 100 // total) / 100
    check(old == 0.42 and not vllm_starts(total, free, ctx, old)[0],
          f"model: the old fraction {old} fails vLLM's start-up check (context {ctx} B)")
    case("gpt2 on 8 GiB with 4.7 GB used", "gpt2", ["--assume-gpu", "8GiB,used=4.7GB,cc=8.9"],
         "bf16", ["--seq", "1024"], ["--seq", "1024", "--format", "bf16"])
    case("Llama-3-8B bf16 on 40 GiB, batch 4", "Llama-3-8B", ["--assume-gpu", "40GiB,cc=8.9"],
         "bf16", ["--seq", "4096", "--batch", "4"],
         ["--seq", "4096", "--batch", "4", "--format", "bf16"])
    case("Mistral-7B multi_gpu over two 10 GiB GPUs", "Mistral-7B",
         ["--assume-gpu", "10GiB,cc=8.9", "--assume-gpu", "10GiB,cc=8.9"], "multi_gpu",
         ["--seq", "2048"], ["--seq", "2048", "--format", "bf16"])
    # Meta-Llama-3-8B's config.json: hidden 4096, 8 of 32 heads for keys and values (head_dim
    # 128), intermediate 14336: q, o 4096^2 each, k, v 4096 x 1024 each, gate/up/down 4096 x
    # 14336 each, two norms of 4096; bf16
    h, kv, inter = 4096, 1024, 14336
    llama_block = 2 * (2 * h * h + 2 * h * kv + 3 * h * inter + 2 * h)
    case("Llama-3-8B gpu_cpu on 12 GiB", "Llama-3-8B", ["--assume-gpu", "12GiB,cc=8.9"],
         "gpu_cpu", ["--seq", "2048"], ["--seq", "2048", "--format", "bf16"], llama_block)
    print(f"{len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
