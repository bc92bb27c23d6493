"""The Python package against the C library and the CLI (label `python`): streaming HDF5 files
made with h5py into NumPy arrays on the CPU, byte for byte against h5py (plain, shuffled,
sharded, several epochs, a compressed dataset), the DLPack hand-off, a batch's lifetime; the
dicts of estimate/plan/chunks equal to the CLI's --json; try_load's crash containment; errors
raised with vramkit's message. Run by python/tests/run.sh (which finds the library)."""

import ctypes
import gc
import json
import multiprocessing
import os
import pickle
import subprocess
import sys

import h5py
import numpy as np
import pytest

import vramkit

N = 1003  # not a multiple of any batch used: partial batches


@pytest.fixture(scope="module")
def h5(tmp_path_factory):
    p = str(tmp_path_factory.mktemp("h5") / "train.h5")
    rng = np.random.default_rng(7)
    with h5py.File(p, "w") as f:
        f.create_dataset("features", data=rng.standard_normal((N, 6, 5)).astype(np.float32))
        f.create_dataset("targets", data=rng.integers(0, 1 << 40, size=N, dtype=np.int64))
        f.create_dataset("chunked", data=rng.integers(0, 255, size=(N, 9), dtype=np.uint8),
                         chunks=(64, 9))
        f.create_dataset("zipped", data=rng.standard_normal((N, 4)).astype(np.float64),
                         chunks=(100, 4), compression="gzip")
    return p


def reference(path, names):
    with h5py.File(path, "r") as f:
        return [f[n][...] for n in names]


def stream_all(path, names, **kw):
    """Every batch as (epoch_index, samples, [copies of the arrays]), with each batch checked
    against h5py's rows at its sample indices."""
    ref = reference(path, names)
    out = []
    with vramkit.stream(path, names, output="numpy", **kw) as s:
        for b in s:
            arrays = b.arrays
            assert len(arrays) == len(names)
            for a, r in zip(arrays, ref):
                assert a.shape == (b.count,) + r.shape[1:]
                assert a.dtype == r.dtype
                # byte for byte, as h5py reads those samples
                assert a.tobytes() == r[b.samples].tobytes()
            out.append((b.epoch_index, b.samples.copy(), [a.copy() for a in arrays]))
    return out


@pytest.mark.parametrize("names", [["/features", "/targets"], ["/chunked"], ["/zipped", "/targets"]])
def test_plain_stream_is_the_file_in_order(h5, names):
    got = stream_all(h5, names, batch=64, budget=64 * 1024)
    samples = np.concatenate([s for _, s, _ in got])
    assert (samples == np.arange(N)).all(), "in file order, each sample once"


def test_shuffled_epochs_deliver_every_sample_once_in_another_order(h5):
    got = stream_all(h5, ["/features", "/targets"], batch=50, shuffle=True, seed=11, epochs=3,
                     budget=40 * 1024)
    orders = []
    for e in range(3):
        s = np.concatenate([x for ep, x, _ in got if ep == e])
        assert sorted(s.tolist()) == list(range(N)), "epoch %d: every sample exactly once" % e
        orders.append(s)
    assert not (orders[0] == np.arange(N)).all(), "shuffled"
    assert not (orders[0] == orders[1]).all(), "each epoch its own order"
    again = stream_all(h5, ["/features", "/targets"], batch=50, shuffle=True, seed=11, epochs=1,
                       budget=40 * 1024)
    assert (np.concatenate([x for _, x, _ in again]) == orders[0]).all(), "same seed, same order"


@pytest.mark.parametrize("pad", [True, False])
def test_sharded_ranks_together_deliver_the_epoch(h5, pad):
    world = 4
    seen = []
    for rank in range(world):
        got = stream_all(h5, ["/features"], batch=32, shuffle=True, seed=5, world=world,
                         rank=rank, pad=pad, budget=64 * 1024)
        seen.append(np.concatenate([x for _, x, _ in got]))
    allx = np.concatenate(seen)
    if pad:  # ceil(N/W) each, the last positions wrap around to the first samples
        assert all(len(s) == -(-N // world) for s in seen)
        assert set(allx.tolist()) == set(range(N))
        assert len(allx) - N == world * (-(-N // world)) - N
    else:  # floor(N/W) each, disjoint
        assert all(len(s) == N // world for s in seen)
        assert len(set(allx.tolist())) == len(allx) == world * (N // world)


def test_drop_last_and_the_plan_agree_with_chunks(h5):
    with vramkit.stream(h5, "/targets", batch=100, drop_last=True, budget=4096,
                        output="numpy") as s:
        counts = [b.count for b in s]
        assert counts == [100] * (N // 100)
        assert len(s) == N // 100
    plan = vramkit.chunks(file=h5, dataset="/targets", batch=100, drop_last=True,
                          budget=4096)
    assert plan["total_batches"] == len(counts)


def test_dlpack_hands_over_without_a_copy(h5):
    ref = reference(h5, ["/features"])[0]
    with vramkit.stream(h5, "/features", batch=40, output="raw", budget=32 * 1024,
                        borrow=True) as s:
        b = next(iter(s))
        raw = b.arrays[0]
        assert raw.__dlpack_device__() == (1, 0)
        a = np.from_dlpack(raw)
        assert a.shape == (40, 6, 5) and a.dtype == np.float32
        assert (a == ref[:40]).all()
        # the same memory as the streamer's buffer, not a copy
        assert a.__array_interface__["data"][0] == raw.ptr
        view = np.asarray(raw)
        assert view.__array_interface__["data"][0] == raw.ptr


def test_a_borrowed_batch_is_valid_until_the_next(h5):
    with vramkit.stream(h5, "/targets", batch=100, budget=4096, output="numpy",
                        borrow=True) as s:
        it = iter(s)
        first = next(it)
        kept = first.copy()[0]
        assert first.arrays[0][0] == kept[0]
        second = next(it)
        with pytest.raises(vramkit.VramkitError) as e:
            first.arrays
        assert e.value.status == "VRAM_E_STATE"
        assert "released" in str(e.value)
        assert (kept == reference(h5, ["/targets"])[0][:100]).all(), "the copy outlives it"
        second.release()
        with pytest.raises(vramkit.VramkitError):
            second["/targets"]
    with pytest.raises(vramkit.VramkitError):
        second.arrays  # closed


def test_owned_arrays_outlive_the_next_batch_and_close(h5):
    ref = reference(h5, ["/features", "/targets"])
    kept = []
    with vramkit.stream(h5, ["/features", "/targets"], batch=64, shuffle=True, seed=3,
                        budget=16 * 1024, output="numpy") as s:
        for b in s:
            kept.append((b.samples, b.arrays))  # no copy of ours: the arrays own their memory
        assert len(kept) == len(s)
    for samples, arrays in kept:  # after every later batch and after close
        for a, r in zip(arrays, ref):
            assert a.tobytes() == r[samples].tobytes()


def test_unshuffled_batches_are_their_chunk_kept_while_arrays_live(h5):
    """Without shuffle an owned batch is its rows in the streamer's chunk (no copy): batches
    of a chunk lie one after the other; a chunk is reused only once no array over it is
    left, so a loop that drops its batches never copies."""
    ref = reference(h5, ["/features", "/targets"])
    with vramkit.stream(h5, ["/features", "/targets"], batch=10, budget=16 * 1024, epochs=3,
                        output="numpy") as s:
        prev = None
        adjacent = 0
        for b in s:
            x, y = b.arrays
            assert x.tobytes() == ref[0][b.samples].tobytes()
            assert y.tobytes() == ref[1][b.samples].tobytes()
            if prev is not None and b.samples[0] == prev[0] + prev[1]:
                adjacent += x.ctypes.data == prev[2] + prev[1] * x[0].nbytes
            prev = (int(b.samples[-1]) + 1 - b.count, b.count, x.ctypes.data)
            del x, y, b
        assert adjacent > 0.5 * 3 * len(s), "batches of a chunk are views of it"
        assert not s.copying


def test_kept_unshuffled_batches_get_their_chunk_and_the_stream_copies_after(h5):
    """Batches kept past their chunk (the stream needs its buffer again): the chunk's memory
    stays with them and the stream takes a new buffer, then copies each batch (copying);
    every kept batch still holds its rows after later batches and after close, and closing
    gives back the threads and fds though arrays are kept."""
    ref = reference(h5, ["/features", "/targets"])
    gc.collect()
    base = _resources()[1:]
    kept = []
    with vramkit.stream(h5, ["/features", "/targets"], batch=64, budget=16 * 1024, epochs=2,
                        output="numpy") as s:
        for b in s:
            kept.append((b.samples, b.arrays))
        assert s.copying, "the chunks were kept: the stream copies"
        assert len(kept) == 2 * len(s)
    gc.collect()
    assert _resources()[1:] == base, "threads and fds after close, arrays still kept"
    for samples, arrays in kept:
        for a, r in zip(arrays, ref):
            assert a.tobytes() == r[samples].tobytes()


def test_one_batch_kept_for_long_leaves_the_others_right(h5):
    ref = reference(h5, ["/targets"])[0]
    with vramkit.stream(h5, "/targets", batch=10, budget=4096, epochs=3, output="numpy") as s:
        it = iter(s)
        first = next(it)
        rest = [(b.samples.copy(), b.arrays[0].copy()) for b in it]
        assert first.arrays[0].tobytes() == ref[:10].tobytes()
    assert first.arrays[0].tobytes() == ref[:10].tobytes()
    for samples, a in rest:
        assert a.tobytes() == ref[samples].tobytes()
    assert len(rest) == 3 * len(s) - 1


def test_copy_option_gives_arrays_of_their_own(h5):
    with vramkit.stream(h5, "/targets", batch=100, budget=4096, output="numpy", copy=True) as s:
        bs = [b.arrays[0] for b in s]
    assert (np.concatenate(bs) == reference(h5, ["/targets"])[0]).all()


# ---- as a DataLoader: an epoch per iteration, set_epoch, state_dict ----------------------------

def epoch_of(s):
    """One iteration: (epoch, samples, bytes of each array) of every batch."""
    return [(b.epoch, b.samples.tobytes(), [a.tobytes() for a in b.arrays]) for b in s]


def test_each_iteration_is_the_next_epoch_in_its_own_order(h5):
    kw = dict(batch=50, shuffle=True, seed=9, budget="40KiB", output="numpy")
    with vramkit.stream(h5, ["/features", "/targets"], **kw) as s:
        runs = [epoch_of(s) for _ in range(3)]
    assert [len(r) for r in runs] == [len(runs[0])] * 3 and len(runs[0]) == -(-N // 50)
    assert [{e for e, _, _ in r} for r in runs] == [{0}, {1}, {2}]
    orders = [b"".join(x for _, x, _ in r) for r in runs]
    assert len(set(orders)) == 3, "each epoch its own order"
    # the same epochs as one iteration of epochs=3, and set_epoch picks one
    with vramkit.stream(h5, ["/features", "/targets"], epochs=3, **kw) as s:
        once = epoch_of(s)
        assert epoch_of(s) != once[:len(runs[0])], "epochs=3 again: the next three epochs"
    assert once == runs[0] + runs[1] + runs[2]
    with vramkit.stream(h5, ["/features", "/targets"], **kw) as s:
        s.set_epoch(2)
        assert epoch_of(s) == runs[2]
        s.set_epoch(1)
        assert epoch_of(s) == runs[1]
    with vramkit.stream(h5, ["/features", "/targets"], **kw) as s:
        for b in s:
            break  # epoch 0 left after a batch counts as epoch 0, as a DataLoader's
        assert epoch_of(s) == runs[1]


@pytest.mark.parametrize("shuffle,world,rank,epochs,stop", [
    (False, 1, 0, None, 7), (True, 1, 0, None, 13), (True, 3, 1, None, 5),
    (True, 2, 1, 2, 27), (False, 4, 3, 3, 1),
])
def test_resume_mid_epoch_is_byte_identical(h5, shuffle, world, rank, epochs, stop):
    kw = dict(batch=30, shuffle=shuffle, seed=4, world=world, rank=rank, epochs=epochs,
              budget="16KiB", output="numpy")
    names = ["/features", "/zipped"]
    with vramkit.stream(h5, names, **kw) as s:
        whole = epoch_of(s) + epoch_of(s)  # two iterations
    with vramkit.stream(h5, names, **kw) as s:
        it = iter(s)
        head = [(b.epoch, b.samples.tobytes(), [a.tobytes() for a in b.arrays])
                for _, b in zip(range(stop), it)]
        state = s.state_dict()
    assert state["batch"] == stop % len(s) and state["epoch"] == stop // len(s)
    with vramkit.stream(h5, names, **kw) as r:
        r.load_state_dict(state)
        tail = epoch_of(r)
        assert head + tail == whole[:len(head) + len(tail)], "the rest of that iteration"
        assert epoch_of(r) == whole[len(head) + len(tail):], "then the next as before"
    # a pickled stream (for a spawned worker) carries its parameters and position
    with vramkit.stream(h5, names, **kw) as s:
        s.load_state_dict(state)
        again = pickle.loads(pickle.dumps(s))
        assert epoch_of(again) == tail
        again.close()


def test_a_state_of_another_stream_is_refused(h5):
    with vramkit.stream(h5, "/targets", batch=10, shuffle=True, seed=1, budget=4096) as s:
        state = s.state_dict()
    with vramkit.stream(h5, "/targets", batch=10, shuffle=True, seed=2, budget=4096) as s:
        with pytest.raises(vramkit.VramkitError) as e:
            s.load_state_dict(state)
        assert "seed is 1 in the state, 2 in this stream" in str(e.value)
        with pytest.raises(vramkit.VramkitError) as e:
            s.load_state_dict(dict(s.state_dict(), batch=10 ** 6))
        assert "not below" in str(e.value) and e.value.exit_code == 2


def test_a_forked_child_gets_a_clear_error_and_a_spawned_one_the_stream(h5):
    with vramkit.stream(h5, "/targets", batch=100, budget=4096, output="numpy") as s:
        pid = os.fork()
        if pid == 0:  # the child: iterating must raise at once, not hang
            code = 1
            try:
                next(iter(s))
            except vramkit.VramkitError as e:
                code = 0 if "forked child" in str(e) and "open the stream in the child" in str(e) else 1
            os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        first = next(iter(s))  # the parent's stream is untouched
        assert (first.arrays[0] == reference(h5, ["/targets"])[0][:100]).all()
        ctx = multiprocessing.get_context("spawn")
        with ctx.Pool(1) as pool:
            got = pool.apply(_sum_rest, (s,))
    ref = reference(h5, ["/targets"])[0]
    assert got == int(ref[100:].sum()), "the spawned worker continues after the first batch"


def _sum_rest(s):
    with s:
        return int(sum(int(b.arrays[0].sum()) for b in s))


# ---- sizes, the default budget, the process's resources ----------------------------------------

def test_sizes_as_strings(h5):
    with vramkit.stream(h5, "/targets", batch=10, budget="64KiB") as s:
        assert s.budget == 65536
    with vramkit.stream(h5, "/targets", batch=10, budget=65536) as s:
        assert s.budget == 65536
    for bad in ("12 parsecs", "-5MiB", ""):
        with pytest.raises(vramkit.VramkitError) as e:
            vramkit.stream(h5, "/targets", batch=10, budget=bad)
        assert "budget=%r is not a size" % bad in str(e.value) and e.value.exit_code == 2
    with pytest.raises(vramkit.VramkitError) as e:
        vramkit.stream(h5, "/targets", batch=10, budget=1.5)
    assert "not a size" in str(e.value)


def test_the_default_host_budget_is_modest(h5):
    L = vramkit._lib.lib()
    cap = L.vram_api_host_budget()
    avail = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGESIZE")
    assert 16 << 20 <= cap <= 256 << 20
    assert cap <= max(16 << 20, avail // 8 + (64 << 20))  # an eighth of what was available
    with vramkit.stream(h5, "/targets", batch=10) as s:
        assert 16 << 20 <= s.budget <= 256 << 20


def _resources():
    rss = int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGESIZE")
    return rss, len(os.listdir("/proc/self/task")), len(os.listdir("/proc/self/fd"))


def test_ten_thousand_batches_leave_memory_threads_and_fds_flat(h5):
    gc.collect()
    base = _resources()
    with vramkit.stream(h5, ["/features", "/targets"], batch=1, epochs=10, budget="64KiB",
                        output="numpy") as s:
        marks = {}
        for n, b in enumerate(s, 1):
            x, y = b.arrays
            if n in (1000, 9500):
                marks[n] = _resources()
    assert n == 10 * N
    grew = marks[9500][0] - marks[1000][0]
    assert grew < 4 << 20, "RSS grew by %d bytes over 8,500 batches" % grew
    # no thread or fd more (a reader thread ends once the last chunk is read)
    assert all(a <= b for a, b in zip(marks[9500][1:], marks[1000][1:])), marks
    del x, y, b
    gc.collect()
    assert _resources()[1:] == base[1:], "threads and fds after close"


def test_a_dropped_stream_gives_back_its_threads_and_fds(h5):
    gc.collect()
    base = _resources()[1:]
    for _ in range(5):
        s = vramkit.stream(h5, "/targets", batch=10, budget=4096, shuffle=True)
        next(iter(s))
        del s  # never closed
    gc.collect()
    assert _resources()[1:] == base


def test_python_m_vramkit_runs_the_command():
    for cmd in ([sys.executable, "-m", "vramkit", "--help"],):
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert p.returncode == 0, p.stderr
        assert "plan" in p.stdout and "stream" in p.stdout
    p = subprocess.run([sys.executable, "-m", "vramkit", "plan", "--no-such-option"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert p.returncode == 2 and "no-such-option" in p.stderr


# ---- errors ------------------------------------------------------------------------------------

def test_stream_errors_name_the_input(h5, tmp_path):
    with pytest.raises(vramkit.VramkitError) as e:
        vramkit.stream(h5, ["/features", "/nope"], batch=8)
    assert "/nope" in str(e.value) and e.value.status == "VRAM_E_INVALID"
    with pytest.raises(vramkit.VramkitError) as e:
        vramkit.stream(str(tmp_path / "missing.h5"), ["/x"], batch=8)
    assert "missing.h5" in str(e.value)
    not_h5 = tmp_path / "text.h5"
    not_h5.write_text("hello")
    with pytest.raises(vramkit.VramkitError) as e:
        vramkit.stream(str(not_h5), ["/x"], batch=8)
    assert "text.h5" in str(e.value) and e.value.status == "VRAM_E_FORMAT"
    with pytest.raises(vramkit.VramkitError) as e:
        vramkit.stream(h5, "/features", batch=0)
    assert "batch" in str(e.value) and e.value.exit_code == 2
    with pytest.raises(vramkit.VramkitError) as e:
        vramkit.stream(h5, "/features", batch=8, device="gpu0")
    assert "gpu0" in str(e.value)
    with pytest.raises(vramkit.VramkitError) as e:
        vramkit.stream(h5, "/features", batch=8, world=2, rank=2)
    assert "rank 2 is not below world 2" in str(e.value)
    with pytest.raises(vramkit.VramkitError) as e:  # a batch larger than a buffer
        vramkit.stream(h5, "/features", batch=500, budget=4096)
    assert e.value.status == "VRAM_E_NOSPACE", e.value


# ---- the planner: the same dicts as the CLI's --json --------------------------------------------

def run_cli(*args):
    p = subprocess.run([os.environ["VRAMKIT_EXE"], *args], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    return p.returncode, p.stdout, p.stderr


def without_host(doc):
    """The host's available memory is read at each call (MemAvailable): it may differ."""
    s = json.dumps(doc)
    d = json.loads(s)
    d.get("inputs", {}).get("machine", {}).pop("host_free_bytes", None)
    d.get("recommendation", {}).pop("host_available_bytes", None)
    return d


@pytest.mark.parametrize("kw,args", [
    (dict(assume_gpu="8GiB,used=4.7GB"), ["--assume-gpu", "8GiB,used=4.7GB"]),
    (dict(mode="train", batch=4, seq=512, checkpointing=True, assume_gpu="24GiB"),
     ["--mode", "train", "--batch", "4", "--seq", "512", "--checkpointing", "--assume-gpu", "24GiB"]),
])
def test_estimate_and_plan_equal_the_cli(kw, args):
    model = "nllb-200-distilled-600M"
    rc, out, _ = run_cli("estimate", model, *args, "--json")
    assert rc == 0
    assert without_host(vramkit.estimate(model, **kw)) == without_host(json.loads(out))
    rc, out, _ = run_cli("plan", "--model", model, *args, "--json")
    assert rc in (0, 1)
    assert without_host(vramkit.plan(model, **kw)) == without_host(json.loads(out))


def test_a_plan_that_does_not_fit_is_an_answer():
    d = vramkit.plan("nllb-200-distilled-600M", assume_gpu="1GiB,used=900MiB", mode="train",
                     batch=64)
    rc, out, _ = run_cli("plan", "--model", "nllb-200-distilled-600M", "--assume-gpu",
                         "1GiB,used=900MiB", "--mode", "train", "--batch", "64", "--json")
    assert without_host(d) == without_host(json.loads(out))


def test_doctor_is_a_dict_like_the_cli():
    d = vramkit.doctor()
    rc, out, _ = run_cli("doctor", "--json")
    c = json.loads(out)
    assert set(d) == set(c)
    assert d["verdict"] == c["verdict"] and d["exit_code"] == c["exit_code"] == rc


def test_planner_errors_are_exceptions_with_the_line():
    with pytest.raises(vramkit.VramkitError) as e:
        vramkit.estimate("no-such-model-anywhere")
    assert e.value.exit_code == 2
    assert str(e.value).startswith("vramkit: estimate: no-such-model-anywhere: ")
    with pytest.raises(vramkit.VramkitError) as e:
        vramkit.plan("nllb-200-distilled-600M", batch="lots")
    assert e.value.exit_code == 2 and "--batch" in str(e.value)
    with pytest.raises(vramkit.VramkitError) as e:
        vramkit.estimate("gpt2", no_such_option=1)
    assert e.value.exit_code == 2 and "unknown option 'no_such_option'" in str(e.value)
    rc, out, err = vramkit.cli("estimate", "gpt2", "--bogus")
    assert rc == 2 and out == "" and "unknown option '--bogus'" in err


# ---- try_load ------------------------------------------------------------------------------------

def load_model(info):
    """The stand-in of a model load: crashes natively under fp16, runs out of memory under
    int8, loads under cpu."""
    if info["strategy"] == "fp16":
        ctypes.string_at(0)  # a segfault, as a native loader's access violation
    if info["strategy"] == "int8":
        raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
    return {"loaded": info["strategy"], "dtype": info["dtype"]}


def test_try_load_contains_a_crash_and_an_oom():
    r = vramkit.try_load(load_model, strategies=["fp16", "int8", "cpu"], timeout=60)
    assert r["chosen"] == "cpu"
    outcomes = [a["outcome"] for a in r["attempts"]]
    assert outcomes == ["crash", "oom", "success"], r
    assert r["attempts"][2]["result"] == {"loaded": "cpu", "dtype": "float32"}
    assert os.getpid() > 0  # and this process is still here


def test_try_load_with_a_command_and_when_all_fail(tmp_path):
    r = vramkit.try_load(["sh", "-c", "test {strategy} = int8"], strategies="fp16,int8")
    assert r["chosen"] == "int8"
    r = vramkit.try_load(["false"], strategies="fp16,cpu")
    assert r["chosen"] is None
    assert [a["outcome"] for a in r["attempts"]] == ["failed", "failed"]
    with pytest.raises(vramkit.VramkitError) as e:
        vramkit.try_load(["true"], strategies="")
    assert e.value.exit_code == 2


def _running(pid):
    """Is pid a live process (not a zombie)?"""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (FileNotFoundError, ProcessLookupError):
        return False


def test_try_load_attempt_dies_with_a_python_killed_by_sigkill(tmp_path):
    """A Python process killed with SIGKILL mid-attempt leaves no attempt running: the attempt
    starts through the vramkit executable's shim and guard (found beside the library), as the
    CLI's do; without them it survived its caller."""
    import signal
    import time
    pidfile = tmp_path / "attempt.pid"
    script = ("import vramkit; vramkit.try_load(['sh', '-c', 'echo $$ > %s; exec sleep 60'], "
              "strategies='cpu', timeout=120)" % pidfile)
    caller = subprocess.Popen([sys.executable, "-c", script], env=os.environ.copy())
    try:
        deadline = time.monotonic() + 30
        while not (pidfile.exists() and pidfile.read_text().strip()) and time.monotonic() < deadline:
            assert caller.poll() is None, "the caller ended before its attempt started"
            time.sleep(0.05)
        attempt = int(pidfile.read_text())
        assert _running(attempt)
    finally:
        caller.send_signal(signal.SIGKILL)
        caller.wait()
    deadline = time.monotonic() + 10
    while _running(attempt) and time.monotonic() < deadline:
        time.sleep(0.05)
    survived = _running(attempt)
    if survived:
        os.kill(attempt, signal.SIGKILL)
    assert not survived, "the attempt outlived the Python process that was killed with SIGKILL"


# ---- ranks from the launcher (world="auto", the default) ------------------------------------------

LAUNCHER_VARS = ["RANK", "WORLD_SIZE", "LOCAL_RANK", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
                 "OMPI_COMM_WORLD_LOCAL_RANK", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID",
                 "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"]


@pytest.fixture
def no_launcher(monkeypatch):
    for v in LAUNCHER_VARS:
        monkeypatch.delenv(v, raising=False)
    return monkeypatch


def test_world_auto_takes_the_ranks_from_torchrun(h5, no_launcher):
    with vramkit.stream(h5, "/targets", batch=64, budget=4096, output="numpy") as s:
        assert (s.rank, s.world, s.launcher) == (0, 1, None), "no launcher: one process"
    seen = []
    for rank in range(3):
        no_launcher.setenv("RANK", str(rank))
        no_launcher.setenv("WORLD_SIZE", "3")
        no_launcher.setenv("LOCAL_RANK", str(rank))
        with vramkit.stream(h5, "/targets", batch=64, budget=4096, output="numpy", pad=False) as s:
            assert (s.rank, s.world, s.launcher) == (rank, 3, "torchrun")
            seen += [x for b in s for x in b.samples.tolist()]
    assert len(seen) == len(set(seen)) == 3 * (N // 3), "the ranks share the epoch, no overlap"
    # a rank given wins over the launcher's
    with vramkit.stream(h5, "/targets", batch=64, budget=4096, output="numpy", rank=0) as s:
        assert (s.rank, s.world) == (0, 3)


def test_world_auto_with_inconsistent_variables_names_them(h5, no_launcher):
    no_launcher.setenv("RANK", "4")
    no_launcher.setenv("WORLD_SIZE", "4")
    with pytest.raises(vramkit.VramkitError) as e:
        vramkit.stream(h5, "/targets", batch=64, budget=4096)
    assert "RANK=4 is not below WORLD_SIZE=4 (torchrun)" in str(e.value)
    no_launcher.setenv("RANK", "1")
    no_launcher.delenv("WORLD_SIZE")
    with pytest.raises(vramkit.VramkitError) as e:
        vramkit.stream(h5, "/targets", batch=64, budget=4096)
    assert "RANK" in str(e.value) and "WORLD_SIZE" in str(e.value)


def test_explicit_world_wins_over_the_launcher(h5, no_launcher):
    no_launcher.setenv("OMPI_COMM_WORLD_RANK", "3")
    no_launcher.setenv("OMPI_COMM_WORLD_SIZE", "4")
    with vramkit.stream(h5, "/targets", batch=64, budget=4096, output="numpy", world=2,
                        rank=1) as s:
        assert (s.rank, s.world, s.launcher) == (1, 2, None)
    with vramkit.stream(h5, "/targets", batch=64, budget=4096, output="numpy") as s:
        assert (s.rank, s.world, s.launcher) == (3, 4, "Open MPI")


# ---- watch, in this process -----------------------------------------------------------------------

def test_watch_of_the_host_is_what_the_command_reports():
    rounds = list(vramkit.watch(host=True, interval=20, count=3, limit=99))
    samples = [r for r in rounds if r["type"] == "sample"]
    assert len(samples) == 3 and [s["device"] for s in samples] == [0, 0, 0]
    assert all(0 < s["used_bytes"] < s["total_bytes"] for s in samples)
    assert all(s["used_bytes"] + s["free_bytes"] == s["total_bytes"] for s in samples)
    assert samples[0]["elapsed_ms"] <= samples[1]["elapsed_ms"] <= samples[2]["elapsed_ms"]
    rc, out, _ = run_cli("watch", "--host", "--count", "1", "--json")
    assert rc == 0
    assert set(json.loads(out.splitlines()[0])) == set(samples[0])


def test_watch_errors_are_exceptions_with_the_line():
    with pytest.raises(vramkit.VramkitError) as e:
        list(vramkit.watch(host=True, interval=0, count=1))
    assert e.value.exit_code == 2 and "--interval" in str(e.value)
    with pytest.raises(vramkit.VramkitError) as e:
        list(vramkit.watch(host=True, processes=True, count=1))
    assert e.value.exit_code == 3 and "--processes needs NVML" in str(e.value)
