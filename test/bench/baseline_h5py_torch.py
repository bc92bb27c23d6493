#!/usr/bin/env python3
"""baseline_h5py_torch.py: what user-report 004's ChunkDataLoader does, timed on the file
bench_stream writes, so the two can be compared on one machine in one sitting.

Per chunk (serially, as 004 does): an h5py slice read of /features and /targets into NumPy,
torch.from_numpy(...).pin_memory() (a second host copy, into fresh pinned memory),
.to('cuda', non_blocking=True), then every batch as a slice of the device tensors; at the end
of the chunk the tensors are dropped and torch.cuda.empty_cache() is called. Each epoch is
timed to the last batch with torch.cuda.synchronize(), and reported in GB/s of sample bytes
and as a fraction of a pinned host-to-device copy measured in the same run.

Usage (on a GPU machine with h5py and PyTorch):
  build/test/bench/bench_stream --size 8GiB --device cuda:0        # writes the file, streams it
  python3 test/bench/baseline_h5py_torch.py --file /tmp/vramkit-bench-stream-8589934592.h5 \\
      --chunk-bytes 2GiB --batch 128 --epochs 3
--chunk-bytes should be bench_stream's chunk size (its "chunks of ..." line: the budget over
two buffers) so that both move the same pieces. --shuffle adds 004's missing shuffle the way
its users would: a random order of chunks and torch.randperm inside each chunk (index_select
on the device).
"""
import argparse
import json
import re
import sys
import time


def parse_size(text):
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([KMGT]i?B?|B)?\s*", text, re.IGNORECASE)
    if not m:
        raise argparse.ArgumentTypeError(f"'{text}' is not a size")
    value, unit = float(m.group(1)), (m.group(2) or "B").upper()
    if unit in ("B",):
        factor = 1
    elif unit.endswith("IB") or unit.endswith("I"):
        factor = 1024 ** "KMGT".index(unit[0]) * 1024
    else:
        factor = 1000 ** ("KMGT".index(unit[0]) + 1)
    return int(value * factor)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--file", required=True, help="the HDF5 file bench_stream wrote")
    ap.add_argument("--chunk-bytes", type=parse_size, default=parse_size("2GiB"),
                    help="bytes per chunk (default 2GiB)")
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--shuffle", action="store_true")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()

    try:
        import h5py
        import numpy as np  # noqa: F401  (h5py hands back NumPy arrays)
        import torch
    except ImportError as e:
        print(f"baseline_h5py_torch: needs h5py and PyTorch: {e}", file=sys.stderr)
        return 3
    if not torch.cuda.is_available():
        print("baseline_h5py_torch: no CUDA device", file=sys.stderr)
        return 3
    dev = torch.device(a.device)

    # the ceiling: pinned host-to-device copies of 256 MiB
    host = torch.empty(256 << 20, dtype=torch.uint8).pin_memory()
    devbuf = torch.empty(256 << 20, dtype=torch.uint8, device=dev)
    devbuf.copy_(host, non_blocking=True)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(8):
        devbuf.copy_(host, non_blocking=True)
    torch.cuda.synchronize()
    ceiling = 8 * (256 << 20) / (time.perf_counter() - t0) / 1e9
    del host, devbuf
    torch.cuda.empty_cache()

    with h5py.File(a.file, "r") as f:
        n = f["features"].shape[0]
        sample_bytes = (f["features"].dtype.itemsize * int(f["features"][0].size)
                        + f["targets"].dtype.itemsize * int(f["targets"][0].size))
    per_chunk = max(a.batch, min(a.chunk_bytes // sample_bytes, n))
    ranges = [(s, min(s + per_chunk, n)) for s in range(0, n, per_chunk)]

    epochs = []
    for e in range(a.epochs):
        order = list(range(len(ranges)))
        if a.shuffle:
            g = torch.Generator().manual_seed(e)
            order = torch.randperm(len(ranges), generator=g).tolist()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        delivered = 0
        for k in order:
            start, end = ranges[k]
            with h5py.File(a.file, "r") as f:  # 004 opens the file per chunk
                features = f["features"][start:end]
                targets = f["targets"][start:end]
            chunk_features = torch.from_numpy(features).pin_memory().to(dev, non_blocking=True)
            chunk_targets = torch.from_numpy(targets).pin_memory().to(dev, non_blocking=True)
            rows = end - start
            perm = torch.randperm(rows, device=dev) if a.shuffle else None
            for i in range(0, rows, a.batch):
                j = min(i + a.batch, rows)
                if perm is None:
                    bf, bt = chunk_features[i:j], chunk_targets[i:j]
                else:
                    idx = perm[i:j]
                    bf, bt = chunk_features.index_select(0, idx), chunk_targets.index_select(0, idx)
                delivered += (j - i) * sample_bytes
                del bf, bt
            del chunk_features, chunk_targets, features, targets
            torch.cuda.empty_cache()
        torch.cuda.synchronize()
        seconds = time.perf_counter() - t0
        epochs.append({"epoch": e, "bytes": delivered, "seconds": seconds,
                       "gbps": delivered / seconds / 1e9})

    best = max(x["gbps"] for x in epochs)
    if a.json:
        print(json.dumps({"file": a.file, "samples": n, "sample_bytes": sample_bytes,
                          "chunk_samples": per_chunk, "chunks": len(ranges), "batch": a.batch,
                          "shuffle": a.shuffle, "ceiling_gbps": ceiling, "epochs": epochs,
                          "best_gbps": best, "best_fraction": best / ceiling}))
    else:
        print(f"file      {a.file}: {n} samples of {sample_bytes} B, {len(ranges)} chunks of "
              f"{per_chunk} samples, batch {a.batch}{', shuffled' if a.shuffle else ''}")
        print(f"ceiling   pinned host-to-device copy (torch): {ceiling:.2f} GB/s")
        for x in epochs:
            print(f"epoch {x['epoch']}   {x['gbps']:.2f} GB/s = {100 * x['gbps'] / ceiling:.0f}% "
                  f"of the ceiling ({x['seconds']:.2f} s)")
        print(f"result    h5py + pin_memory + .to(): best epoch {best:.2f} GB/s = "
              f"{100 * best / ceiling:.0f}% of the ceiling")
    return 0


if __name__ == "__main__":
    sys.exit(main())
