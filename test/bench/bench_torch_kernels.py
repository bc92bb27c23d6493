#!/usr/bin/env python3
"""bench_torch_kernels.py: vramkit's kernels against PyTorch's equivalents, same shapes, same run.

Runs bench_kernels --json (vramkit's kernels and the device-to-device copy ceiling), then times
what a PyTorch user would call on the same tensors: torch._amp_foreach_non_finite_check_and_unscale_,
torch._foreach_norm + vector_norm (what clip_grad_norm_ does), clip_grad_norm_(foreach=True),
torch._foreach_mul_, per-channel int8 quantisation (eager absmax/round/clamp, and
torch.quantize_per_channel), .to(dtype), index_select / embedding. Each on one large tensor (2^28
elements) and on GPT-2 small's 148 parameter shapes. Times are medians of --reps runs (CUDA
events, two warm-ups).

Bytes are counted per operation and per implementation, as what each one reads and writes
(TORCH_BYTES below says it for PyTorch, bench_kernels for vramkit): clip_grad_norm_ reads every
gradient for the norm, then reads and writes every gradient to multiply it by the coefficient,
even when that is 1; vramkit's clip writes only when it clips (clip: not needed; clipact:
needed). For PyTorch's eager int8 quantisation the count is the least any implementation moves
(it makes several passes): a lower bound, so its fraction of copy is an upper bound.

Prints one line per case: each side's bytes and bandwidth as a fraction of its own run's copy
bandwidth, and the speedup (PyTorch time / vramkit time, the same job on the same data).
Exit codes: 0 done, 1 a run failed, 2 bad usage, 77 skipped (no PyTorch, no CUDA device).
Example: python3 test/bench/bench_torch_kernels.py --bench-exe build/test/bench/bench_kernels
(or --ours kernels.json, the output of `bench_kernels --json` from the same machine, as ci/gpu.sh
does; the large tensor's size is taken from that run)
"""
import argparse
import json
import math
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
    ap.add_argument("--bench-exe", help="path of the bench_kernels executable (run with --json here)")
    ap.add_argument("--ours", help="bench_kernels --json output of a run already made (instead of --bench-exe)")
    ap.add_argument("--reps", type=int, default=20, help="timed runs per case (default 20)")
    ap.add_argument("--quick", action="store_true", help="a 2^24-element large tensor instead of 2^28")
    ap.add_argument("--json", action="store_true", help="print the table as JSON")
    args = ap.parse_args()
    if args.reps < 1:
        print("bench_torch_kernels: --reps must be >= 1", file=sys.stderr)
        return 2
    if (args.bench_exe is None) == (args.ours is None):
        print("bench_torch_kernels: give --bench-exe or --ours (one of them)", file=sys.stderr)
        return 2
    try:
        import torch
    except ImportError:
        print("bench_torch_kernels: PyTorch is not installed: skipped", file=sys.stderr)
        return 77
    if not torch.cuda.is_available():
        print("bench_torch_kernels: no CUDA device for PyTorch: skipped", file=sys.stderr)
        return 77

    if args.ours is not None:
        try:
            with open(args.ours) as f:
                ours_list = json.load(f)
        except (OSError, ValueError) as e:
            print("bench_torch_kernels: cannot read %s: %s" % (args.ours, e), file=sys.stderr)
            return 2
    else:
        cmd = [args.bench_exe, "--json", str(args.reps)] + (["--quick"] if args.quick else [])
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode == 77:
            print("bench_torch_kernels: bench_kernels found no GPU: skipped", file=sys.stderr)
            return 77
        if run.returncode != 0:
            print("bench_torch_kernels: %s failed (%d): %s" % (args.bench_exe, run.returncode, run.stderr.strip()),
                  file=sys.stderr)
            return 1
        ours_list = json.loads(run.stdout)
    ours = {r["key"]: r for r in ours_list}

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

    big = int(ours["copy"]["read_bytes"]) // 4  # the large tensor's elements, as bench_kernels ran it
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
        cases["clipact:%s:gpt2" % d] = lambda params=params: torch.nn.utils.clip_grad_norm_(params, 1e-3, foreach=True)
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

    # what each PyTorch case reads and writes, in bytes (see the docstring)
    big_b = {d: big * dt[d].itemsize for d in dt}
    gpt2_elems = sum(math.prod(sh) for sh in gpt2_shapes())
    w2d = [sh for sh in gpt2_shapes() if len(sh) == 2]
    torch_bytes = {}
    for d in ("f32", "f16", "bf16"):
        torch_bytes["unscale:%s:large" % d] = (big_b[d], big_b[d])
        g = gpt2_elems * dt[d].itemsize
        torch_bytes["unscale:%s:gpt2" % d] = (g, g)
        torch_bytes["l2norm:%s:gpt2" % d] = (g, 0)
        torch_bytes["clip:%s:gpt2" % d] = (2 * g, g)     # norm pass + the multiply by the coefficient
        torch_bytes["clipact:%s:gpt2" % d] = (2 * g, g)
    torch_bytes["l2norm:f32:large"] = (big_b["f32"], 0)
    torch_bytes["scale:f32:gpt2"] = (gpt2_elems * 4, gpt2_elems * 4)
    qrows = big // 4096
    for d in ("f16", "f32"):
        torch_bytes["quant:%s:large" % d] = (big_b[d], big + qrows * 4)  # lower bound
        torch_bytes["quant:%s:large:quantize_per_channel" % d] = (big_b[d], big + qrows * 4)
        torch_bytes["dequant:%s:large" % d] = (big + qrows * 4, big_b[d])
    torch_bytes["quant:f16:gpt2"] = (sum(r * c * 2 for r, c in w2d), sum(r * c + r * 4 for r, c in w2d))
    for a_, b_ in (("f32", "f16"), ("f32", "bf16"), ("f16", "f32"), ("bf16", "f32")):
        torch_bytes["cast:%s-%s:large" % (a_, b_)] = (big_b[a_], big_b[b_])
    torch_bytes["cast:f32-f16:gpt2"] = (gpt2_elems * 4, gpt2_elems * 2)
    row_b = src.shape[1] * 4
    torch_bytes["gather:1k:large"] = (idx.numel() * (row_b + 8), idx.numel() * row_b)
    torch_bytes["gather:wte:gpt2"] = (tok.numel() * (768 * 4 + 8), tok.numel() * 768 * 4)
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
        t_read, t_write = torch_bytes[key]
        gbps = (t_read + t_write) / us / 1e3
        rows.append({"key": key, "what": o["what"], "vramkit_us": o["us"], "torch_us": us,
                     "vramkit_read_bytes": o["read_bytes"], "vramkit_write_bytes": o["write_bytes"],
                     "torch_read_bytes": t_read, "torch_write_bytes": t_write,
                     "torch_bytes_lower_bound": key.startswith("quant:"),
                     "vramkit_copy_fraction": o["gbps"] / our_copy_gbps, "torch_copy_fraction": gbps / torch_copy_gbps,
                     "speedup": us / o["us"]})
    if args.json:
        print(json.dumps({"copy_gbps": {"vramkit_run": our_copy_gbps, "torch_run": torch_copy_gbps},
                          "torch": torch.__version__, "device": torch.cuda.get_device_name(), "cases": rows}, indent=2))
        return 0
    print("device %s, torch %s; copy: %.0f GB/s (bench_kernels), %.0f GB/s (torch copy_)"
          % (torch.cuda.get_device_name(), torch.__version__, our_copy_gbps, torch_copy_gbps))
    print("%-40s %10s %10s %9s %9s %8s %8s %8s" % ("case", "vramkit us", "torch us", "vk MB r+w", "pt MB r+w",
                                                   "vk/copy", "pt/copy", "speedup"))
    for r in rows:
        if "error" in r:
            print("%-40s %s" % (r["key"], "torch: " + r["error"]))
        else:
            print("%-40s %10.1f %10.1f %9.0f %8.0f%s %7.1f%% %7.1f%% %7.2fx" % (
                r["key"], r["vramkit_us"], r["torch_us"], (r["vramkit_read_bytes"] + r["vramkit_write_bytes"]) / 1e6,
                (r["torch_read_bytes"] + r["torch_write_bytes"]) / 1e6, ">" if r["torch_bytes_lower_bound"] else " ",
                100 * r["vramkit_copy_fraction"], 100 * r["torch_copy_fraction"], r["speedup"]))
    print("(>: PyTorch moves at least these bytes: its eager quantisation makes several passes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
