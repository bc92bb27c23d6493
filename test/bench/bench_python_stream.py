#!/usr/bin/env python3
"""bench_python_stream.py: vramkit.stream from Python against user-report 004's loader on the
same HDF5 file, in one run on one machine, as GB/s of sample bytes and their ratio.

  --device cuda:0   vramkit.stream into torch tensors on the GPU (DLPack, no copy; each batch
                    consumed by a reduction on torch's stream) against baseline_h5py_torch.py
                    (h5py slice reads, pin_memory, .to(non_blocking=True)), run as a child on
                    the same file and chunk size.
  --device cpu      vramkit.stream at its defaults (torch tensors that own their memory where
                    torch is installed, else NumPy; the default host budget) against the same
                    loader's host half (an h5py slice read of each chunk into NumPy, batches
                    as slices, chunks of half vramkit's budget) and, where torch is installed,
                    against torch.utils.data.DataLoader(num_workers=2, pin_memory=True) over a
                    map-style Dataset reading one sample from h5py per __getitem__.

The file: --file PATH (datasets /features float32 [N, W] and /targets int64 [N]), or made here
with --size SIZE (--width W). Needs numpy and h5py (and torch with CUDA for --device cuda:N);
the package from python/ and the library of a build: run through
  PYTHONPATH=python VRAMKIT_LIBRARY=build/driver/libvramkit_py.so python3 test/bench/bench_python_stream.py --size 2GiB --device cpu
Not a test: it reports numbers, it asserts nothing but that both loaders saw the same bytes.
"""
import argparse
import json
import os
import subprocess
import sys
import time

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from baseline_h5py_torch import parse_size  # noqa: E402

import vramkit  # noqa: E402


def make_file(path, size, width):
    row = width * 4 + 8
    n = max(1, size // row)
    rng = np.random.default_rng(1)
    with h5py.File(path, "w") as f:
        fe = f.create_dataset("features", shape=(n, width), dtype=np.float32)
        ta = f.create_dataset("targets", shape=(n,), dtype=np.int64)
        step = max(1, (256 << 20) // row)
        for a in range(0, n, step):
            b = min(n, a + step)
            fe[a:b] = rng.standard_normal((b - a, width), dtype=np.float32)
            ta[a:b] = np.arange(a, b)
    return n


def run_vramkit(path, device, batch, epochs, budget):
    per_epoch, checksum = [], 0
    torch = None
    opts = {} if budget is None else {"budget": budget}
    with vramkit.stream(path, ["/features", "/targets"], batch=batch, epochs=epochs,
                        device=device, **opts) as s:
        used = s.budget
        t0, nbytes, epoch = time.perf_counter(), 0, 0
        for b in s:
            x, y = b.arrays
            if device != "cpu":
                if torch is None:
                    import torch
                checksum += int(y.sum().item()) if b.index == 0 else 0
                x.sum()  # consumed on torch's stream
            else:
                # the same work per batch as the baselines': NumPy's sum over the batch (a torch
                # tensor's NumPy view: torch's own CPU sum would start its thread pool, which
                # fights the readers for two cores and times torch, not the loader)
                if not isinstance(x, np.ndarray):
                    x, y = x.numpy(), y.numpy()
                checksum += int(y.sum()) if b.index == 0 else 0
                x.sum()
            nbytes += x.element_size() * x.nelement() + y.element_size() * y.nelement() \
                if torch is not None else x.nbytes + y.nbytes
            if b.epoch_end:
                if torch is not None:
                    torch.cuda.synchronize()
                t1 = time.perf_counter()
                per_epoch.append(nbytes / (t1 - t0) / 1e9)
                t0, nbytes, epoch = time.perf_counter(), 0, epoch + 1
    return per_epoch, checksum, used


def run_h5py_cpu(path, batch, epochs, chunk_bytes):
    per_epoch, checksum = [], 0
    with h5py.File(path, "r") as f:
        fe, ta = f["features"], f["targets"]
        n, row = fe.shape[0], fe.shape[1] * 4 + 8
        rows = max(batch, (chunk_bytes // row) // batch * batch)
        for _ in range(epochs):
            t0, nbytes = time.perf_counter(), 0
            for a in range(0, n, rows):
                x, y = fe[a:a + rows], ta[a:a + rows]  # h5py slice reads into NumPy
                for k in range(0, len(y), batch):
                    xb, yb = x[k:k + batch], y[k:k + batch]
                    if a == 0 and k == 0:
                        checksum += int(yb.sum())
                    xb.sum()
                    nbytes += xb.nbytes + yb.nbytes
            per_epoch.append(nbytes / (time.perf_counter() - t0) / 1e9)
    return per_epoch, checksum


class H5Rows:
    """A map-style Dataset as a PyTorch user writes one over an HDF5 file: one sample per
    __getitem__, the file opened once in each worker."""

    def __init__(self, path):
        self.path, self.f = path, None
        with h5py.File(path, "r") as f:
            self.n = f["targets"].shape[0]

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if self.f is None:
            self.f = h5py.File(self.path, "r")
        return self.f["features"][i], self.f["targets"][i]


def run_dataloader(path, batch, epochs, max_batches):
    import torch
    per_epoch, checksum = [], 0
    loader = torch.utils.data.DataLoader(H5Rows(path), batch_size=batch, num_workers=2,
                                         pin_memory=True)
    for _ in range(epochs):
        t0, nbytes = time.perf_counter(), 0
        for k, (x, y) in enumerate(loader):
            if k == 0:
                checksum += int(y.sum())
            x.numpy().sum()
            nbytes += x.element_size() * x.nelement() + y.element_size() * y.nelement()
            if k + 1 == max_batches:  # a sample of the epoch: the rate is steady
                break
        per_epoch.append(nbytes / (time.perf_counter() - t0) / 1e9)
    return per_epoch, checksum


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--file")
    ap.add_argument("--size", type=parse_size, default=parse_size("1GiB"))
    ap.add_argument("--width", type=int, default=256)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--budget", type=parse_size, default=None,
                    help="vramkit's chunk buffers (default: vramkit's own); the baseline's "
                         "chunks are budget / 2")
    ap.add_argument("--dataloader-batches", type=int, default=400,
                    help="batches of each DataLoader epoch timed (it is slow; default 400)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    path = a.file or "/tmp/vramkit-bench-python-%d.h5" % a.size
    if not a.file and not os.path.exists(path):
        make_file(path, a.size, a.width)
    ours, c1, used = run_vramkit(path, a.device, a.batch, a.epochs, a.budget)
    dl = None
    if a.device == "cpu":
        theirs, c2 = run_h5py_cpu(path, a.batch, a.epochs, used // 2)
        name = "h5py slices into NumPy"
        try:
            import torch  # noqa: F401
            dl, c3 = run_dataloader(path, a.batch, a.epochs, a.dataloader_batches)
            if c3 != c1:
                sys.exit("the DataLoader saw a different first batch (%d vs %d)" % (c3, c1))
        except ImportError:
            pass
    else:
        p = subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__),
                                                         "baseline_h5py_torch.py"),
                            "--file", path, "--chunk-bytes", str(a.budget // 2), "--batch",
                            str(a.batch), "--epochs", str(a.epochs), "--json"],
                           stdout=subprocess.PIPE, text=True, check=True)
        doc = json.loads(p.stdout)
        theirs, c2 = [e["gbps"] for e in doc["epochs"]], c1  # it reports no checksum: not cross-checked here
        name = "h5py + pin_memory + to(non_blocking) (baseline_h5py_torch.py)"
    if c1 != c2:
        sys.exit("the two loaders saw different first batches (%d vs %d)" % (c1, c2))
    best_ours, best_theirs = max(ours), max(theirs)
    res = {"file": path, "device": a.device, "batch": a.batch, "epochs": a.epochs,
           "budget": used, "vramkit_gb_per_s": ours, "baseline": name,
           "baseline_gb_per_s": theirs, "ratio_best": best_ours / best_theirs}
    if dl:
        res["dataloader_gb_per_s"] = dl
        res["ratio_dataloader_best"] = best_ours / max(dl)
    if a.json:
        print(json.dumps(res))
    else:
        print("file %s, device %s, batch %d" % (path, a.device, a.batch))
        print("vramkit.stream  " + "  ".join("%.2f" % g for g in ours) + " GB/s")
        print("%s  " % name + "  ".join("%.2f" % g for g in theirs) + " GB/s")
        if dl:
            print("DataLoader(num_workers=2, pin_memory=True)  " +
                  "  ".join("%.3f" % g for g in dl) + " GB/s")
        print("best epoch: %.2fx the baseline" % res["ratio_best"] +
              (", %.1fx the DataLoader" % res["ratio_dataloader_best"] if dl else ""))


if __name__ == "__main__":
    main()
