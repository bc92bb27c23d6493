#!/usr/bin/env python3
"""bench_torch_kernels.py: vramkit's kernels against PyTorch's equivalents, same shapes, same run.

Runs bench_kernels --json (vramkit's kernels and the device-to-device copy ceiling), then times
what a PyTorch user would call on the same tensors: torch._amp_foreach_non_finite_check_and_unscale_,
torch._foreach_norm + vector_norm (what clip_grad_norm_ does), clip_grad_norm_(foreach=True),
torch._foreach_mul_, per-channel int8 quantisation (eager absmax/round/clamp, and
torch.quantize_per_channel), .to(dtype), index_select / embedding. Each on one large tensor and on
GPT-2 small's 148 parameter shapes. Times are medians of --reps runs (CUDA events, two warm-ups).

Prints one line per case: both bandwidths (bytes as bench_kernels counts them), each as a fraction
of its own run's copy bandwidth, and the speedup (PyTorch time / vramkit time).
Exit codes: 0 done, 1 a run failed, 2 bad usage, 77 skipped (no PyTorch, no CUDA device).
Example: python3 test/bench/bench_torch_kernels.py --bench-exe build/test/bench/bench_kernels
"""
import argparse
import json
import statistics
import subprocess
import sys


def gpt2_shapes():
    shapes = [(50257, 768), (1024, 768)]
    for _ in range(12):
        shapes += [(768,), (768,), (768, 2304), (2304,), (768, 768), (768,),
                   (768,), (768,), (768, 3072), (3072,), (3072, 768), (768,)]
    return shapes + [(768,), (768,)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench-exe", required=True, help="path of the bench_kernels executable")
    ap.add_argument("--reps", type=int, default=20, help="timed runs per case (default 20)")
    ap.add_argument("--quick", action="store_true", help="a 2^24-element large tensor instead of 2^28")
    ap.add_argument("--json", action="store_true", help="print the table as JSON")
    args = ap.parse_args()
    if args.reps < 1:
        print("bench_torch_kernels: --reps must be >= 1", file=sys.stderr)
        return 2
    try:
        import torch
    except ImportError:
        print("bench_torch_kernels: PyTorch is not installed: skipped", file=sys.stderr)
        return 77
    if not torch.cuda.is_available():
        print("bench_torch_kernels: no CUDA device for PyTorch: skipped", file=sys.stderr)
        return 77

    cmd = [args.bench_exe, "--json", str(args.reps)] + (["--quick"] if args.quick else [])
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode == 77:
        print("bench_torch_kernels: bench_kernels found no GPU: skipped", file=sys.stderr)
        return 77
    if run.returncode != 0:
        print("bench_torch_kernels: %s failed (%d): %s" % (args.bench_exe, run.returncode, run.stderr.strip()),
              file=sys.stderr)
        return 1
    ours = {r["key"]: r for r in json.loads(run.stdout)}

    dev = torch.device("cuda")
    stream = torch.cuda.current_stream()

    def time_us(fn):
        fn()
        fn()
        times = []
        for _ in range(args.reps):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record(stream)
            fn()
            b.record(stream)
            b.synchronize()
            times.append(a.elapsed_time(b) * 1000.0)
        return statistics.median(times)

    big = (1 << 24) if args.quick else (1 << 28)
    dt = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
    cases = {}

    def large(d):
        return (torch.rand(big, device=dev) * 2 - 1).to(dt[d])

    def gpt2_list(d):
        return [(torch.rand(s, device=dev) * 2 - 1).to(dt[d]) for s in gpt2_shapes()]

    inv = torch.full((1,), 1.0 / 1024, device=dev)
    found = torch.zeros(1, device=dev)
    unscale = torch._amp_foreach_non_finite_check_and_unscale_

    a = large("f32")
    b = torch.empty_like(a)
    cases["copy"] = time_us(lambda: b.copy_(a))
    del a, b
    for d in ("f32", "f16", "bf16"):
        t = large(d)
        cases["unscale:%s:large" % d] = lambda t=t: unscale([t], found, inv)
    t = large("f32")
    cases["l2norm:f32:large"] = lambda t=t: torch.linalg.vector_norm(torch.stack(torch._foreach_norm([t])))
    for d in ("f32", "f16"):
        L = gpt2_list(d)
        params = [torch.nn.Parameter(torch.empty(0, device=dev)) for _ in L]
        for p, g in zip(params, L):
            p.data = torch.empty_like(g)
            p.grad = g
        cases["unscale:%s:gpt2" % d] = lambda L=L: unscale(L, found, inv)
        cases["l2norm:%s:gpt2" % d] = lambda L=L: torch.linalg.vector_norm(torch.stack(torch._foreach_norm(L)))
        cases["clip:%s:gpt2" % d] = lambda params=params: torch.nn.utils.clip_grad_norm_(params, 1e30, foreach=True)
    Lf = gpt2_list("f32")
    half = torch.full((1,), 0.5, device=dev)
    cases["scale:f32:gpt2"] = lambda: torch._foreach_mul_(Lf, half)

    def quant_eager(x):
        s = x.float().abs().amax(dim=1, keepdim=True) / 127
        return torch.clamp(torch.round(x.float() / s), -127, 127).to(torch.int8), s

    for d in ("f16", "f32"):
        x = large(d).view(-1, 4096)
        q, s = quant_eager(x)
        cases["quant:%s:large" % d] = lambda x=x: quant_eager(x)
        cases["dequant:%s:large" % d] = lambda q=q, s=s, d=d: (q.float() * s).to(dt[d])
        cases["quant:%s:large:quantize_per_channel" % d] = (
            lambda x=x, s=s: torch.quantize_per_channel(x.float(), s.view(-1), torch.zeros(s.numel(), dtype=torch.long,
                                                                                           device=dev), 0, torch.qint8))
    W = [w for w in gpt2_list("f16") if w.dim() == 2]
    cases["quant:f16:gpt2"] = lambda: [quant_eager(w) for w in W]
    for src, dst in (("f32", "f16"), ("f32", "bf16"), ("f16", "f32"), ("bf16", "f32")):
        x = large(src)
        cases["cast:%s-%s:large" % (src, dst)] = lambda x=x, dst=dst: x.to(dt[dst])
    cases["cast:f32-f16:gpt2"] = lambda: [t.to(torch.float16) for t in Lf]
    src = torch.rand((big * 4 // 1024, 256), device=dev)
    idx = torch.randint(0, src.shape[0], (src.shape[0] // 2,), device=dev)
    cases["gather:1k:large"] = lambda: torch.index_select(src, 0, idx)
    wte = torch.rand((min(50257, big * 4 // 3072), 768), device=dev)
    tok = torch.randint(0, wte.shape[0], (16384,), device=dev)
    cases["gather:wte:gpt2"] = lambda: torch.nn.functional.embedding(tok, wte)

    torch_copy_us = cases.pop("copy")
    copy_bytes = 2.0 * big * 4
    torch_copy_gbps = copy_bytes / torch_copy_us / 1e3
    our_copy_gbps = ours["copy"]["gbps"]
    rows = []
    for key, fn in cases.items():
        base = key.split(":quantize_per_channel")[0]
        if base not in ours:
            continue
        try:
            us = time_us(fn)
        except (RuntimeError, NotImplementedError) as e:  # e.g. no bf16 path, no CUDA quantize_per_channel
            rows.append({"key": key, "error": str(e).splitlines()[0][:80]})
            continue
        o = ours[base]
        gbps = o["bytes"] / us / 1e3
        rows.append({"key": key, "what": o["what"], "vramkit_us": o["us"], "torch_us": us,
                     "vramkit_copy_fraction": o["gbps"] / our_copy_gbps, "torch_copy_fraction": gbps / torch_copy_gbps,
                     "speedup": us / o["us"]})
    if args.json:
        print(json.dumps({"copy_gbps": {"vramkit_run": our_copy_gbps, "torch_run": torch_copy_gbps},
                          "torch": torch.__version__, "device": torch.cuda.get_device_name(), "cases": rows}, indent=2))
        return 0
    print("device %s, torch %s; copy: %.0f GB/s (bench_kernels), %.0f GB/s (torch copy_)"
          % (torch.cuda.get_device_name(), torch.__version__, our_copy_gbps, torch_copy_gbps))
    print("%-40s %10s %10s %8s %8s %8s" % ("case", "vramkit us", "torch us", "vk/copy", "pt/copy", "speedup"))
    for r in rows:
        if "error" in r:
            print("%-40s %s" % (r["key"], "torch: " + r["error"]))
        else:
            print("%-40s %10.1f %10.1f %7.1f%% %7.1f%% %7.2fx" % (r["key"], r["vramkit_us"], r["torch_us"],
                                                                 100 * r["vramkit_copy_fraction"],
                                                                 100 * r["torch_copy_fraction"], r["speedup"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
