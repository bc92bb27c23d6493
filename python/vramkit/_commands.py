"""estimate, plan, chunks and doctor: the commands themselves, run inside this process through
the library (vram_api_cli), their --json document returned as a dict; and try_load, which runs
`vramkit try` as a child process so that every attempt is a process of its own."""

import ctypes
import json
import os
import pickle
import subprocess
import sys
import tempfile

from ._lib import VramkitError, exe_path, lib


def _options(kwargs):
    """Keyword arguments as command-line options: assume_gpu="8GiB" -> --assume-gpu 8GiB;
    True -> the flag alone; False and None -> left out; a list or tuple -> the option repeated."""
    out = []
    for key, value in kwargs.items():
        opt = "--" + key.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            out.append(opt)
        elif isinstance(value, (list, tuple)):
            for v in value:
                out += [opt, str(v)]
        else:
            out += [opt, str(value)]
    return out


def cli(*args):
    """Runs `vramkit ARGS...` in this process (estimate, plan, chunks, doctor). Returns
    (exit_code, stdout, stderr) as text."""
    L = lib()
    argv = [str(a).encode() for a in args]
    arr = (ctypes.c_char_p * len(argv))(*argv)
    out, err = ctypes.c_void_p(), ctypes.c_void_p()
    rc = L.vram_api_cli(len(argv), arr, ctypes.byref(out), ctypes.byref(err))
    if rc < 0:
        raise MemoryError("vramkit: no memory to capture the command's output")
    try:
        o = ctypes.string_at(out.value).decode("utf-8", "replace") if out.value else ""
        e = ctypes.string_at(err.value).decode("utf-8", "replace") if err.value else ""
    finally:
        L.vram_api_free(out)
        L.vram_api_free(err)
    return rc, o, e


def _json_command(args, accept=(0, 1)):
    rc, out, err = cli(*args, "--json")
    if rc in accept or (rc == 3 and out.lstrip().startswith("{")):
        try:
            return json.loads(out)
        except ValueError:
            pass
    line = err.strip().splitlines()[-1] if err.strip() else "vramkit %s: exit %d" % (args[0], rc)
    raise VramkitError(line, exit_code=rc)


def estimate(model, **options):
    """`vramkit estimate MODEL [options] --json` as a dict. Options are the command's long
    options in Python spelling: mode="train", batch=8, seq=2048, assume_gpu="8GiB,used=4.7GB",
    margin="512MiB", checkpointing=True, ... (vramkit estimate --help lists them)."""
    return _json_command(["estimate", str(model)] + _options(options))


def plan(model=None, **options):
    """`vramkit plan --model MODEL [options] --json` as a dict (exit 1, "does not fit", is an
    answer, not an error). Components: plan(component=["embed=intfloat/multilingual-e5-large",
    ...]). Options as for estimate, plus the plan's own (margin, load, ...)."""
    args = ["plan"]
    if model is not None:
        args += ["--model", str(model)]
    return _json_command(args + _options(options))


def chunks(**options):
    """`vramkit chunks [options] --json` as a dict: samples=, sample_bytes=, batch=, free=, ..."""
    file = options.pop("file", None)
    args = ["chunks"] + ([str(file)] if file is not None else [])
    return _json_command(args + _options(options))


def doctor(probe=False, **options):
    """`vramkit doctor --json` as a dict: findings with their remedies, the devices, the
    environment. probe=True runs the probes (each in a child: the vramkit command)."""
    os.environ.setdefault("VRAMKIT_PROBE_EXE", exe_path())
    return _json_command(["doctor"] + _options(dict(options, probe=probe)), accept=(0, 1, 3))


def try_load(fn_or_cmd, strategies=None, model=None, plan_file=None, timeout=None, **options):
    """Each strategy's attempt in a child process until one works (`vramkit try`): a native
    crash, an OOM or a sticky CUDA error costs that attempt, never this process.

    fn_or_cmd is a command (a list of strings, with {strategy}, {device}, {dtype} placeholders)
    or a function. A function runs in a fresh Python interpreter (spawned, never forked), is
    called with a dict {strategy, device, dtype, attempt} and its return value, when it is not
    None, must be JSON and is reported as the attempt's result (a value other than a dict as
    {"value": value}). It must be importable from the
    child (defined at module level; the child gets this process's sys.path).

    The chain comes from strategies (a list or "fp16,int8,cpu"), model (the plan of a model made
    now) or plan_file (a saved plan). Returns `vramkit try --json` as a dict: "chosen" (None
    when every attempt failed) and every attempt's outcome."""
    args = []
    if strategies is not None:
        if not isinstance(strategies, str):
            strategies = ",".join(strategies)
        args += ["--strategies", strategies]
    if model is not None:
        args += ["--model", str(model)]
    if plan_file is not None:
        args += ["--plan", str(plan_file)]
    if timeout is not None:
        args += ["--timeout", str(timeout)]
    args += _options(options)
    tmp = None
    env = dict(os.environ)
    try:
        if callable(fn_or_cmd):
            fd, tmp = tempfile.mkstemp(prefix="vramkit-try-", suffix=".pickle")
            with os.fdopen(fd, "wb") as f:
                pickle.dump(fn_or_cmd, f)
            cmd = [sys.executable, "-m", "vramkit._child", tmp]
            env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
        else:
            cmd = [str(c) for c in fn_or_cmd]
            if not cmd:
                raise VramkitError("try_load: the command is empty", exit_code=2)
        p = subprocess.run([exe_path(), "try", "--json"] + args + ["--"] + cmd, env=env,
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    finally:
        if tmp:
            os.unlink(tmp)
    if p.returncode in (0, 1) and p.stdout.lstrip().startswith("{"):
        return json.loads(p.stdout)
    err = p.stderr.strip().splitlines()
    raise VramkitError(err[-1] if err else "vramkit try: exit %d" % p.returncode,
                       exit_code=p.returncode)
