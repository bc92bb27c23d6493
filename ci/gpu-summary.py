#!/usr/bin/env python3
"""gpu-summary.py: the short summary ci/gpu.sh writes (Markdown, on stdout) from what its
steps left in OUTDIR: the preflight's findings, each step's status, each hw test's result
(hw-junit.xml), the sanitizer's findings, each kernel's fraction of the device-to-device copy
and its variants side by side (kernels.json), the kernels against PyTorch (torch_kernels.json),
the streamer against its ceiling (stream.txt) and, from Python, against the h5py+torch loader
(python_stream.json).
A missing file is reported as missing, never guessed. ci/gpu.sh runs it after every step, so
a run cut anywhere leaves the summary of what had finished.

A hw test that ctest reports as skipped counts as skipped only when it exited 77 (ctest's
"SKIP_RETURN_CODE=77"); "Unable to find executable" (its target did not build) is a failure.
With --sim 1 (ci/gpu-sim.sh: no GPU) every hw test must have reached that skip; without it, a
test that skipped for want of a usable CUDA device is a failure (ci/gpu.sh runs only where
nvidia-smi lists a GPU).

Exit status: 0 when every step ran and every hw test passed or was skipped (--sim: was skipped,
and there was at least one), 1 otherwise.
--merge-junit OUT IN...: write one junit file with the test cases of several (ctest's), exit."""
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


def merge_junit(out, inputs):
    suite = ET.Element("testsuite", name="hw")
    n = 0
    for path in inputs:
        try:
            root = ET.parse(path).getroot()
        except (OSError, ET.ParseError):
            continue
        for tc in root.iter("testcase"):
            suite.append(tc)
            n += 1
    suite.set("tests", str(n))
    ET.ElementTree(suite).write(out, encoding="unicode", xml_declaration=True)
    return 0


def hw_result(tc):
    """(result text, bad) of one ctest junit test case."""
    skipped = tc.find("skipped")
    status = tc.get("status")
    out = tc.findtext("system-out") or ""
    if tc.find("failure") is not None or status == "fail":
        if "Timeout" in out or "timeout" in (tc.find("failure").get("message", "") if tc.find("failure") is not None else ""):
            return "**TIMEOUT**", True
        return "**FAIL**", True
    if skipped is not None or status in ("notrun", "disabled"):
        msg = skipped.get("message", "") if skipped is not None else status
        if msg == "SKIP_RETURN_CODE=77":
            return "skipped (77: no GPU)" if "no usable CUDA device" in out else "skipped (77)", False
        if "Unable to find executable" in msg or "Unable to find executable" in out:
            return "**NOT BUILT**", True
        return "**NOT RUN** (%s)" % msg, True
    return "pass", False


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="ci/gpu.sh's OUTDIR")
    ap.add_argument("--steps", help="the steps file: name|status|seconds per line")
    ap.add_argument("--seconds", type=int, default=0, help="the whole run's wall time")
    ap.add_argument("--sim", type=int, default=0, help="1: a simulation without a GPU (ci/gpu-sim.sh)")
    ap.add_argument("--merge-junit", nargs="+", metavar="FILE", help="OUT IN...: merge junit files and exit")
    a = ap.parse_args()
    if a.merge_junit:
        return merge_junit(a.merge_junit[0], a.merge_junit[1:])
    if not a.out or not a.steps:
        ap.error("--out and --steps are required")
    bad = False
    log_lines = []
    try:
        with open(os.path.join(a.out, "gpu.log"), errors="replace") as f:
            log_lines = f.read().splitlines()
    except OSError:
        pass
    print("# ci/gpu.sh summary%s\n" % (" (simulation: no GPU)" if a.sim else ""))
    if len(log_lines) >= 3:
        print("Run: %s  \nGPU: %s  \nCPUs: %s  \nWall time: %d s\n" % (log_lines[0], log_lines[1], log_lines[2], a.seconds))
    else:
        print("Wall time: %d s\n" % a.seconds)
    pre = [l[len("preflight: "):] for l in log_lines if l.startswith("preflight: ")]
    if pre:
        print("## Preflight\n")
        for l in pre:
            print("- %s" % l)
        print()

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
    counts = {"pass": 0, "skip": 0, "bad": 0}
    try:
        root = ET.parse(junit).getroot()
        print("| test | result | seconds |\n| --- | --- | --- |")
        for tc in root.iter("testcase"):
            result, is_bad = hw_result(tc)
            if a.sim and result == "pass":
                result, is_bad = "**PASSED without a GPU** (the skip was not reached)", True
            elif not a.sim and result == "skipped (77: no GPU)":
                # nvidia-smi saw a GPU, the test could not use it: the driver, the runtime, a lock
                result, is_bad = "**SKIPPED: no usable CUDA device** (nvidia-smi saw one)", True
            counts["bad" if is_bad else ("skip" if result.startswith("skipped") else "pass")] += 1
            bad |= is_bad
            secs = tc.get("time")
            print("| %s | %s | %s |" % (tc.get("name"), result, "%.1f" % float(secs) if secs else ""))
        total = sum(counts.values())
        print("\n%d hw tests: %d passed, %d skipped, %d failed or not built." % (total, counts["pass"], counts["skip"],
                                                                            counts["bad"]))
        if a.sim and (total == 0 or counts["skip"] != total):
            bad = True
    except (OSError, ET.ParseError):
        print("hw-junit.xml is missing or unreadable: the hw tests did not run or finish (see gpu.log).")
        bad = True

    san = [l[len("sanitizer: "):] for l in log_lines if l.startswith("sanitizer: ")]
    if san:
        print("\n## compute-sanitizer\n")
        for l in san:
            print("- %s" % l)

    print("\n## Kernels against the device-to-device copy (`bench_kernels`, same run)\n")
    ours = load_json(os.path.join(a.out, "kernels.json"))
    if ours:
        copy = next((r for r in ours if r["key"] == "copy"), None)
        if copy:
            print("Copy of %d fp32 elements: %.0f GB/s (bytes read + written).\n" % (copy["read_bytes"] // 4,
                                                                                  copy["gbps"]))
        print("| case | MB read | MB written | us | GB/s | of copy | target 90% |\n| --- | --- | --- | --- | --- | --- | --- |")
        by_key = {r["key"]: r for r in ours}
        for r in ours:
            if r["key"] == "copy":
                continue
            base = r["key"].split("@")[0]
            large = base.endswith(":large")
            mark = ("yes" if r["copy_fraction"] >= 0.9 else "**no**") if large else "-"
            print("| %s | %.1f | %.1f | %.1f | %.0f | %.0f%% | %s |" % (
                r["key"], r["read_bytes"] / 1e6, r["write_bytes"] / 1e6, r["us"], r["gbps"],
                100 * r["copy_fraction"], mark))
        variants = [r for r in ours if "@" in r["key"] and r["key"].split("@")[0] in by_key]
        if variants:
            print("\nVariants (`key@variant`) against the default kernel on the same case, same run "
                  "(time of the default / time of the variant: above 1 the variant is faster):\n")
            print("| case | variant | default us | variant us | speedup |\n| --- | --- | --- | --- | --- |")
            for r in variants:
                base, var = r["key"].split("@", 1)
                d = by_key[base]
                print("| %s | %s | %.1f | %.1f | %.2fx |" % (base, var, d["us"], r["us"], d["us"] / r["us"] if r["us"] else 0))
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
    ps = load_json(os.path.join(a.out, "python_stream.json"))
    if ps and isinstance(ps, dict) and "ratio_best" in ps:
        theirs = max(ps["baseline_gb_per_s"])
        print("- h5py + pin_memory + .to() (user-report 004's loader, `baseline_h5py_torch.py`), same file: epochs %s "
              "GB/s" % " ".join("%.2f" % g for g in ps["baseline_gb_per_s"]))
        print("- vramkit.stream from Python into torch, same file: epochs %s GB/s; best epoch **%.2fx** the loader's" % (
            " ".join("%.2f" % g for g in ps["vramkit_gb_per_s"]), ps["ratio_best"]))
        if best:
            print("- vramkit's in-order stream from C (`bench_stream`) / the loader: **%.2fx**" % (best[0] / theirs))
    else:
        print("- python_stream.json is missing: vramkit.stream from Python and the h5py+torch loader did not run "
              "(see gpu.log).")
    pc = load_json(os.path.join(a.out, "python_cpu.json"))
    print("\n## Streaming from Python on the CPU (`bench_python_stream.py --device cpu`, defaults)\n")
    if pc and isinstance(pc, dict) and "ratio_best" in pc:
        print("- h5py slices into NumPy: epochs %s GB/s" % " ".join("%.2f" % g for g in pc["baseline_gb_per_s"]))
        print("- vramkit.stream at its defaults (budget %d bytes): epochs %s GB/s; best epoch **%.2fx** the h5py "
              "loader's" % (pc["budget"], " ".join("%.2f" % g for g in pc["vramkit_gb_per_s"]), pc["ratio_best"]))
        if "ratio_dataloader_best" in pc:
            print("- DataLoader(num_workers=2, pin_memory=True): epochs %s GB/s; vramkit **%.0fx** it" % (
                " ".join("%.3f" % g for g in pc["dataloader_gb_per_s"]), pc["ratio_dataloader_best"]))
    else:
        print("- python_cpu.json is missing: the CPU comparison did not run (see gpu.log).")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
