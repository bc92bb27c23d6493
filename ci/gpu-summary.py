#!/usr/bin/env python3
"""gpu-summary.py: the short summary ci/gpu.sh writes (Markdown, on stdout) from what its
steps left in OUTDIR: each step's status, each hw test's result (hw-junit.xml), each kernel's
fraction of the device-to-device copy (kernels.json), the kernels against PyTorch
(torch_kernels.json), the streamer against its ceiling (stream.txt) and against the h5py+torch
loader (h5py.json). A missing file is reported as missing, never guessed.
Exit status: 0 when every step ran and every hw test passed (or was skipped), 1 otherwise."""
import argparse
import json
import os
import re
import sys
import xml.etree.ElementTree as ET


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="ci/gpu.sh's OUTDIR")
    ap.add_argument("--steps", required=True, help="the steps file: name|status|seconds per line")
    ap.add_argument("--seconds", type=int, default=0, help="the whole run's wall time")
    a = ap.parse_args()
    bad = False
    print("# ci/gpu.sh summary\n")
    try:
        with open(os.path.join(a.out, "gpu.log")) as f:
            head = [next(f).strip() for _ in range(3)]
        print("Run: %s  \nGPU: %s  \nCPUs: %s  \nWall time: %d s\n" % (head[0], head[1], head[2], a.seconds))
    except (OSError, StopIteration):
        print("Wall time: %d s\n" % a.seconds)

    print("## Steps\n\n| step | result | seconds |\n| --- | --- | --- |")
    try:
        with open(a.steps) as f:
            for line in f:
                name, status, secs = (line.rstrip("\n").split("|") + ["", ""])[:3]
                print("| %s | %s | %s |" % (name, status, secs))
                if status != "ok" and (not status.startswith("skipped") or "out of time" in status):
                    bad = True
    except OSError:
        print("| (no steps recorded) | | |")
        bad = True

    print("\n## hw tests (`ctest -L hw`)\n")
    junit = os.path.join(a.out, "hw-junit.xml")
    try:
        root = ET.parse(junit).getroot()
        print("| test | result | seconds |\n| --- | --- | --- |")
        for tc in root.iter("testcase"):
            if tc.find("failure") is not None or tc.get("status") == "fail":
                result = "**FAIL**"
                bad = True
            elif tc.find("skipped") is not None or tc.get("status") in ("notrun", "disabled"):
                result = "skipped"
            else:
                result = "pass"
            secs = tc.get("time")
            print("| %s | %s | %s |" % (tc.get("name"), result, "%.1f" % float(secs) if secs else ""))
    except (OSError, ET.ParseError):
        print("hw-junit.xml is missing or unreadable: the hw tests did not finish (see gpu.log).")
        bad = True

    print("\n## Kernels against the device-to-device copy (`bench_kernels`, same run)\n")
    ours = load_json(os.path.join(a.out, "kernels.json"))
    if ours:
        copy = next((r for r in ours if r["key"] == "copy"), None)
        if copy:
            print("Copy of %d fp32 elements: %.0f GB/s (bytes read + written).\n" % (copy["read_bytes"] // 4,
                                                                                  copy["gbps"]))
        print("| case | MB read | MB written | us | GB/s | of copy | target 90% |\n| --- | --- | --- | --- | --- | --- | --- |")
        for r in ours:
            if r["key"] == "copy":
                continue
            large = r["key"].endswith(":large")
            mark = ("yes" if r["copy_fraction"] >= 0.9 else "**no**") if large else "-"
            print("| %s | %.1f | %.1f | %.1f | %.0f | %.0f%% | %s |" % (
                r["key"], r["read_bytes"] / 1e6, r["write_bytes"] / 1e6, r["us"], r["gbps"],
                100 * r["copy_fraction"], mark))
    else:
        print("kernels.json is missing: bench_kernels did not run (see gpu.log).")

    print("\n## Kernels against PyTorch (`bench_torch_kernels.py`, GPT-2 small's parameter list and one large tensor)\n")
    pt = load_json(os.path.join(a.out, "torch_kernels.json"))
    if pt:
        print("torch %s on %s; copy %.0f GB/s (vramkit's run), %.0f GB/s (torch's run).\n" % (
            pt.get("torch"), pt.get("device"), pt["copy_gbps"]["vramkit_run"], pt["copy_gbps"]["torch_run"]))
        print("| case | vramkit us | torch us | speedup | vramkit of copy | torch of copy |\n| --- | --- | --- | --- | --- | --- |")
        for r in pt["cases"]:
            if "error" in r:
                print("| %s | | torch: %s | | | |" % (r["key"], r["error"]))
                continue
            print("| %s | %.1f | %.1f | %.2fx%s | %.0f%% | %s%.0f%% |" % (
                r["key"], r["vramkit_us"], r["torch_us"], r["speedup"], "" if r["speedup"] >= 1 else " (slower)",
                100 * r["vramkit_copy_fraction"], "<=" if r.get("torch_bytes_lower_bound") else "",
                100 * r["torch_copy_fraction"]))
    else:
        print("torch_kernels.json is missing: no PyTorch with CUDA, or the comparison failed (see gpu.log).")

    print("\n## Streaming HDF5 into GPU memory (`bench_stream --device cuda:0`) and the h5py+torch loader\n")
    best = []
    try:
        with open(os.path.join(a.out, "stream.txt")) as f:
            text = f.read()
        for m in re.finditer(r"^stream\s+(.*)$|^result\s+best epoch ([0-9.]+) GB/s = ([0-9]+)% of the ceiling",
                             text, re.M):
            if m.group(1):
                print("- %s" % m.group(1).strip())
            else:
                best.append(float(m.group(2)))
                print("  - best epoch %s GB/s = %s%% of the pinned host-to-device copy" % (m.group(2), m.group(3)))
    except OSError:
        print("stream.txt is missing: bench_stream did not run on the GPU (see gpu.log).")
    h5 = load_json(os.path.join(a.out, "h5py.json"))
    if h5:
        print("- h5py + pin_memory + .to() (user-report 004's loader), same file: best epoch %.2f GB/s = %.0f%% of "
              "its pinned copy" % (h5["best_gbps"], 100 * h5["best_fraction"]))
        if best:
            print("- vramkit's in-order stream / h5py+torch: **%.2fx**" % (best[0] / h5["best_gbps"]))
    else:
        print("- h5py.json is missing: the h5py+torch baseline did not run (see gpu.log).")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
