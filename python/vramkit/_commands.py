"""estimate, plan, chunks, doctor and try_load: the driver's operations, run inside this process
through the library (driver/api/api.h: the options as JSON in, the --json document out),
returned as a dict; try_load's attempts are child processes of this one, so that a crash costs
an attempt, never this process; watch, rounds of GPU memory samples as dicts."""

import ctypes
import json
import os
import pickle
import subprocess
import sys
import tempfile
import time

from ._lib import VramkitError, exe_path, lib


def _plain(value):
    """An option's value as the library takes it: a string, a number, True (a flag; False and
    None leave it out), or a list of them (the option given once per element)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return str(value)


def _texts(L, rc, out, err, what):
    """The (out, err) texts an api call returned, freed."""
    if rc < 0:
        raise MemoryError("vramkit: no memory for the %s call" % what)
    try:
        o = ctypes.string_at(out.value).decode("utf-8", "replace") if out.value else ""
        e = ctypes.string_at(err.value).decode("utf-8", "replace") if err.value else ""
    finally:
        L.vram_api_free(out)
        L.vram_api_free(err)
    return o, e


def _error(what, rc, e):
    line = e.strip().splitlines()[-1] if e.strip() else "vramkit %s: exit %d" % (what, rc)
    return VramkitError(line, exit_code=rc)


def _options_json(options):
    return json.dumps({k: _plain(v) for k, v in options.items()}).encode()


def _call(op, options, accept=(0, 1)):
    """Runs operation `op` of the library (driver/api/api.h: JSON options in, its --json
    document out) and returns the document as a dict; an error is a VramkitError with the
    line and the exit code."""
    L = lib()
    out, err = ctypes.c_void_p(), ctypes.c_void_p()
    rc = getattr(L, "vram_api_" + op)(_options_json(options), ctypes.byref(out), ctypes.byref(err))
    o, e = _texts(L, rc, out, err, op)
    if rc in accept and o:
        return json.loads(o)
    raise _error(op, rc, e)


def cli(*args):
    """Runs the vramkit command with ARGS as a child process. Returns (exit_code, stdout,
    stderr) as text."""
    p = subprocess.run([exe_path()] + [str(a) for a in args], stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return p.returncode, p.stdout, p.stderr


def estimate(model, **options):
    """`vramkit estimate MODEL [options] --json` as a dict. Options are the command's long
    options in Python spelling: mode="train", batch=8, seq=2048, assume_gpu="8GiB,used=4.7GB",
    margin="512MiB", checkpointing=True, ... (vramkit estimate --help lists them)."""
    return _call("estimate", dict(options, model=str(model)))


def plan(model=None, **options):
    """`vramkit plan --model MODEL [options] --json` as a dict (exit 1, "does not fit", is an
    answer, not an error). Components: plan(component=["embed=intfloat/multilingual-e5-large",
    ...]). Options as for estimate, plus the plan's own (margin, load, ...)."""
    if model is not None:
        options = dict(options, model=str(model))
    return _call("plan", options)


def chunks(**options):
    """`vramkit chunks [options] --json` as a dict: samples=, sample_bytes=, batch=, free=, ..."""
    if options.get("file") is not None:
        options = dict(options, file=str(options["file"]))
    return _call("chunks", options)


def doctor(probe=False, **options):
    """`vramkit doctor --json` as a dict: findings with their remedies, the devices, the
    environment. probe=True runs the probes (each in a child: the vramkit command)."""
    os.environ.setdefault("VRAMKIT_PROBE_EXE", exe_path())
    return _call("doctor", dict(options, probe=probe), accept=(0, 1, 3))


def try_load(fn_or_cmd, strategies=None, model=None, plan_file=None, timeout=None, **options):
    """Each strategy's attempt in a child process until one works (as `vramkit try`, run in this
    process): a native crash, an OOM or a sticky CUDA error costs that attempt, never this
    process. (What an attempt leaves outside its process group is not hunted down here, as the
    command does: that takes a subreaper, which a process with children of its own cannot be.)

    fn_or_cmd is a command (a list of strings, with {strategy}, {device}, {dtype} placeholders)
    or a function. A function runs in a fresh Python interpreter (spawned, never forked), is
    called with a dict {strategy, device, dtype, attempt} and its return value, when it is not
    None, must be JSON and is reported as the attempt's result (a value other than a dict as
    {"value": value}). It must be importable from the
    child (defined at module level; the child gets this process's sys.path).

    The chain comes from strategies (a list or "fp16,int8,cpu"), model (the plan of a model made
    now) or plan_file (a saved plan). Returns `vramkit try --json` as a dict: "chosen" (None
    when every attempt failed) and every attempt's outcome."""
    opts = dict(options)
    if strategies is not None:
        if not isinstance(strategies, str):
            strategies = ",".join(strategies)
        opts["strategies"] = strategies
    if model is not None:
        opts["model"] = str(model)
    if plan_file is not None:
        opts["plan"] = str(plan_file)
    if timeout is not None:
        opts["timeout"] = timeout
    tmp = None
    try:
        if callable(fn_or_cmd):
            fd, tmp = tempfile.mkstemp(prefix="vramkit-try-", suffix=".pickle")
            with os.fdopen(fd, "wb") as f:
                pickle.dump(fn_or_cmd, f)
            opts["command"] = [sys.executable, "-m", "vramkit._child", tmp]
            opts["env"] = ["PYTHONPATH=" + os.pathsep.join(p for p in sys.path if p)]
        else:
            opts["command"] = [str(c) for c in fn_or_cmd]
            if not opts["command"]:
                raise VramkitError("try_load: the command is empty", exit_code=2)
        return _call("try", opts)
    finally:
        if tmp:
            os.unlink(tmp)


def watch(interval=None, count=None, **options):
    """GPU memory, round after round, as `vramkit watch --json` reports it, in this process:
    an iterator of dicts, {"type": "sample", ...}, {"type": "warning", ...} and with
    processes=True {"type": "process", ...}. Options: interval (ms, default 1000), count
    (rounds; default: until the loop stops), device, host (the host's RAM instead), processes,
    limit, leak_threshold, epoch_every. Memory is read through NVML (no CUDA context) when it
    can be, else the CUDA runtime."""
    L = lib()
    if interval is not None:
        options["interval"] = interval
    h, err = ctypes.c_void_p(), ctypes.c_void_p()
    out = ctypes.c_void_p()
    rc = L.vram_api_watch_open(_options_json(options), ctypes.byref(h), ctypes.byref(err))
    _, e = _texts(L, rc, out, err, "watch")
    if rc != 0:
        raise _error("watch", rc, e)
    try:
        period = L.vram_api_watch_interval_ms(h) / 1000.0
        start, n = time.monotonic(), 0
        while count is None or n < count:
            if n > 0:
                time.sleep(max(0.0, start + n * period - time.monotonic()))
            out, err = ctypes.c_void_p(), ctypes.c_void_p()
            rc = L.vram_api_watch_round(h, ctypes.byref(out), ctypes.byref(err))
            o, e = _texts(L, rc, out, err, "watch")
            if rc != 0:
                raise _error("watch", rc, e)
            for line in o.splitlines():
                yield json.loads(line)
            n += 1
    finally:
        L.vram_api_watch_close(h)
