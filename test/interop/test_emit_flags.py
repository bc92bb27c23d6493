#!/usr/bin/env python3
"""`vramkit plan --emit llama.cpp` and `--emit vllm` against the tools' documented options.

Neither tool is installed here: every flag vramkit writes must be one of the options in the
tables below, taken from each tool's own option list (the version is beside each table),
with a value of the kind that option takes. Runs with python3 alone (no skip).

usage: test_emit_flags.py VRAMKIT
"""
import re
import subprocess
import sys

# llama.cpp: common/arg.cpp (common_arg table; llama-server and llama-cli share it), as of
# 2025 builds that have --cpu-moe (added August 2025). Short and long spellings, the value.
LLAMA_CPP_VERSION = "llama.cpp common/arg.cpp, 2025 (with -cmoe/--cpu-moe)"
LLAMA_CPP = {
    "-ngl": ("--n-gpu-layers", "int"),          # also --gpu-layers
    "-c": ("--ctx-size", "int"),
    "-np": ("--parallel", "int"),
    "-sm": ("--split-mode", {"none", "layer", "row"}),
    "-ts": ("--tensor-split", "int,list"),      # comma-separated proportions
    "-mg": ("--main-gpu", "int"),
    "-ot": ("--override-tensor", "pattern=buffer"),  # experts on the CPU, older builds (a note)
    "-cmoe": ("--cpu-moe", None),                    # experts_cpu
}
# vLLM: engine arguments of `vllm serve` (docs.vllm.ai, v0.8.1 engine_args; in-flight
# bitsandbytes 4-bit with --quantization bitsandbytes per the v0.8.2 BitsAndBytes page).
VLLM_VERSION = ("vLLM v0.8.1 engine arguments (bitsandbytes: v0.8.2 docs; "
                "--kv-cache-memory-bytes: CacheConfig.kv_cache_memory_bytes, commit 35d5cda)")
VLLM = {
    "--kv-cache-memory-bytes": "int",  # vllm/config/cache.py (vLLM 0.11 on)
    "--cpu-offload-gb": "gib",         # GiB of weights per GPU on the host (engine args)
    "--gpu-memory-utilization": "fraction",
    "--max-model-len": "int",
    "--tensor-parallel-size": "int",
    "--quantization": {"aqlm", "awq", "fp8", "gptq", "bitsandbytes", "gguf", "marlin"},
    "--dtype": {"auto", "half", "float16", "bfloat16", "float", "float32"},
}

VK = sys.argv[1]
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def value_ok(kind, v):
    if kind is None:
        return v is None
    if v is None:
        return False
    if isinstance(kind, set):
        return v in kind
    if kind == "int":
        return re.fullmatch(r"[0-9]+", v) is not None
    if kind == "int,list":
        return re.fullmatch(r"[0-9]+(,[0-9]+)*", v) is not None
    if kind == "gib":
        return re.fullmatch(r"[0-9]+(\.[0-9]+)?", v) is not None
    if kind == "fraction":
        return re.fullmatch(r"[01]\.[0-9]{2}", v) is not None and 0 < float(v) <= 1
    return True


def parse(line, table, long_of=None):
    toks, i, seen = line.split(), 0, []
    while i < len(toks):
        flag = toks[i]
        known = table.get(flag)
        if long_of is not None:  # llama.cpp: the table is keyed by the short spelling
            match = [s for s, (l, _) in table.items() if flag in (s, l)]
            known = table[match[0]][1] if match else "unknown"
            if not match:
                known = None
                check(False, f"{flag}: not a documented option")
                i += 1
                continue
        elif known is None:
            check(False, f"{flag}: not a documented option")
            i += 1
            continue
        val = None
        if known is not None and i + 1 < len(toks) and not toks[i + 1].startswith("-"):
            val = toks[i + 1]
            i += 1
        check(value_ok(known, val), f"{flag} {val}: a value of the kind the option takes")
        seen.append(flag)
        i += 1
    return seen


def run(*args):
    r = subprocess.run([VK, "plan", *args], capture_output=True, text=True)
    return r


CASES = [  # (plan arguments, format, strategy or None)
    (["--model", "Llama-3-8B", "--assume-gpu", "24GiB,cc=8.9"], None),
    (["--model", "Llama-3-8B", "--assume-gpu", "12GiB,cc=7.5", "--assume-gpu", "4GiB"], "gpu_cpu"),
    (["--model", "Llama-3-8B", "--assume-gpu", "12GiB", "--batch", "4", "--flash-attention"],
     "int8"),
    (["--model", "Llama-3-8B", "--assume-gpu", "12GiB"], "int4"),
    (["--model", "Mistral-Small-22B", "--assume-gpu", "24GiB,cc=8.9", "--assume-gpu",
      "24GiB,used=4GiB,cc=8.9", "--flash-attention"], "multi_gpu"),
    (["--model", "gpt2", "--assume-gpu", "8GiB,used=4.7GB"], None),
    (["--model", "gpt2"], "cpu"),
    (["--model", "Qwen3-30B-A3B", "--assume-gpu", "12GiB,cc=8.9"], "experts_cpu"),
]


def main():
    print(f"tables: {LLAMA_CPP_VERSION}; {VLLM_VERSION}")
    for args, strategy in CASES:
        extra = ["--host-memory", "64GiB"] + (["--strategy", strategy] if strategy else [])
        for fmt, table, long_of in (("llama.cpp", LLAMA_CPP, True), ("vllm", VLLM, None)):
            r = run(*args, *extra, "--emit", fmt)
            label = f"{fmt} {' '.join(args)} {strategy or 'chosen'}"
            if r.returncode == 2 and fmt == "vllm":
                # a stated refusal (int8, cpu): one line naming the format
                check(r.stdout == "" and r.stderr.count("\n") == 1 and "--emit vllm:" in r.stderr,
                      f"{label}: refused in one line: {r.stderr.strip()}")
                continue
            check(r.returncode == 0 and r.stdout.count("\n") == 1, f"{label}: one line, exit 0")
            seen = parse(r.stdout.strip(), table, long_of)
            must = ["-ngl", "-c"] if fmt == "llama.cpp" else \
                ["--gpu-memory-utilization", "--max-model-len", "--tensor-parallel-size"]
            check(all(m in seen for m in must), f"{label}: has {must}: {r.stdout.strip()}")
    print(f"{len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
