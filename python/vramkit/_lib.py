"""Loading the driver's shared library (libvramkit_py.so, driver/api/api.h) with ctypes, and the
vramkit command beside it.

The library is looked for in $VRAMKIT_LIBRARY, then in this package (where ``pip install .``
puts it). The command, which try_load and doctor's probes run as children, in $VRAMKIT_EXE,
then in this package's bin/, then on the PATH.
"""

import ctypes
import os
import shutil

API_VERSION = 4  # driver/api/api.h: VRAM_API_VERSION

_here = os.path.dirname(os.path.abspath(__file__))
_lib = None


class VramkitError(Exception):
    """An error of vramkit: `status` is the vram_status name ("VRAM_E_INVALID", ...) or, for a
    command, None; `exit_code` the command's exit code (2 bad input, 3 environment) or None;
    the message is vramkit's one line."""

    def __init__(self, message, status=None, exit_code=None):
        super().__init__(message)
        self.message = message
        self.status = status
        self.exit_code = exit_code


class StreamOpts(ctypes.Structure):
    _fields_ = [
        ("size", ctypes.c_uint64),
        ("batch", ctypes.c_uint64),
        ("budget_bytes", ctypes.c_uint64),
        ("fraction", ctypes.c_double),
        ("reserve_bytes", ctypes.c_uint64),
        ("epochs", ctypes.c_uint64),
        ("first_epoch", ctypes.c_uint64),
        ("seed", ctypes.c_uint64),
        ("world", ctypes.c_uint32),
        ("rank", ctypes.c_uint32),
        ("buffers", ctypes.c_uint32),
        ("readers", ctypes.c_uint32),
        ("shuffle", ctypes.c_int32),
        ("drop_last", ctypes.c_int32),
        ("no_pad", ctypes.c_int32),
        ("device", ctypes.c_int32),
        ("consumer", ctypes.c_void_p),
        ("world_auto", ctypes.c_int32),
        ("rank_given", ctypes.c_int32),
    ]


class Batch_(ctypes.Structure):
    _fields_ = [
        ("size", ctypes.c_uint64),
        ("count", ctypes.c_uint64),
        ("epoch", ctypes.c_uint64),
        ("epoch_index", ctypes.c_uint64),
        ("index", ctypes.c_uint64),
        ("epoch_begin", ctypes.c_int32),
        ("epoch_end", ctypes.c_int32),
        ("done", ctypes.c_int32),
        ("held", ctypes.c_int32),
        ("samples", ctypes.POINTER(ctypes.c_uint64)),
        ("data", ctypes.c_void_p * 16),
    ]


class Take_(ctypes.Structure):
    """vram_api_take: every field 64 bits, so that it reads as one array (TAKE_* indices)."""
    _fields_ = ([("size", ctypes.c_uint64), ("mode", ctypes.c_uint64),
                 ("may_detach", ctypes.c_uint64), ("samples_out", ctypes.c_uint64),
                 ("dst", ctypes.c_uint64 * 16)] +
                [(n, ctypes.c_uint64) for n in ("count", "epoch", "epoch_index", "index",
                                                 "epoch_begin", "epoch_end", "done", "keep",
                                                 "slot", "blocked", "detached")] +
                [("data", ctypes.c_uint64 * 16), ("err", ctypes.c_char * 512)])


TAKE_KEEP, TAKE_COPY = 1, 2  # VRAM_API_TAKE_KEEP, VRAM_API_TAKE_COPY
TAKE_MODE, TAKE_MAY_DETACH, TAKE_SAMPLES, TAKE_DST = 1, 2, 3, 4
TAKE_OUT = 20    # count, epoch, epoch_index, index, epoch_begin, epoch_end, done, keep, slot,
TAKE_DATA = 31   # blocked, detached; then data[16]


def library_path():
    p = os.environ.get("VRAMKIT_LIBRARY")
    if p:
        return p
    return os.path.join(_here, "libvramkit_py.so")


def exe_path():
    p = os.environ.get("VRAMKIT_EXE")
    if p:
        return p
    p = os.path.join(_here, "bin", "vramkit")
    if os.access(p, os.X_OK):
        return p
    p = shutil.which("vramkit")
    if p and not _is_script(p):  # the console script would run this package again
        return p
    raise VramkitError("the vramkit command is not installed with this package, not in "
                       "$VRAMKIT_EXE and not on the PATH", exit_code=3)


def _is_script(path):
    try:
        with open(path, "rb") as f:
            return f.read(2) == b"#!"
    except OSError:
        return True


def lib():
    """The loaded library (once), its functions typed."""
    global _lib
    if _lib is not None:
        return _lib
    path = library_path()
    try:
        L = ctypes.CDLL(path)
    except OSError as e:
        raise VramkitError("cannot load the vramkit library %s: %s (it needs HDF5's and cJSON's "
                           "shared libraries, e.g. apt install libhdf5-103-1 libcjson1; pip "
                           "install . builds it; $VRAMKIT_LIBRARY names another)" % (path, e),
                           exit_code=3) from None
    L.vram_api_version.restype = ctypes.c_int
    if L.vram_api_version() != API_VERSION:
        raise VramkitError("the vramkit library %s has API %d, this package %d: reinstall"
                           % (path, L.vram_api_version(), API_VERSION), exit_code=3)
    L.vram_api_status_name.restype = ctypes.c_char_p
    L.vram_api_status_name.argtypes = [ctypes.c_int]
    L.vram_api_status_str.restype = ctypes.c_char_p
    L.vram_api_status_str.argtypes = [ctypes.c_int]
    L.vram_api_free.argtypes = [ctypes.c_void_p]
    for op in ("estimate", "plan", "chunks", "doctor", "try"):
        f = getattr(L, "vram_api_" + op)
        f.restype = ctypes.c_int
        f.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p),
                      ctypes.POINTER(ctypes.c_void_p)]
    W = ctypes.c_void_p
    L.vram_api_watch_open.restype = ctypes.c_int
    L.vram_api_watch_open.argtypes = [ctypes.c_char_p, ctypes.POINTER(W),
                                      ctypes.POINTER(ctypes.c_void_p)]
    L.vram_api_watch_round.restype = ctypes.c_int
    L.vram_api_watch_round.argtypes = [W, ctypes.POINTER(ctypes.c_void_p),
                                       ctypes.POINTER(ctypes.c_void_p)]
    L.vram_api_watch_interval_ms.restype = ctypes.c_uint64
    L.vram_api_watch_interval_ms.argtypes = [W]
    L.vram_api_watch_close.restype = None
    L.vram_api_watch_close.argtypes = [W]
    S = ctypes.c_void_p
    L.vram_api_stream_open.restype = ctypes.c_int
    L.vram_api_stream_open.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p),
                                       ctypes.c_uint32, ctypes.POINTER(StreamOpts),
                                       ctypes.POINTER(S), ctypes.c_char_p, ctypes.c_size_t]
    for name, res, args in [
        ("vram_api_stream_datasets", ctypes.c_uint32, [S]),
        ("vram_api_stream_row_bytes", ctypes.c_uint64, [S, ctypes.c_uint32]),
        ("vram_api_stream_type", ctypes.c_char_p, [S, ctypes.c_uint32]),
        ("vram_api_stream_rank", ctypes.c_int, [S, ctypes.c_uint32]),
        ("vram_api_stream_dim", ctypes.c_uint64, [S, ctypes.c_uint32, ctypes.c_int]),
        ("vram_api_stream_rank_samples", ctypes.c_uint64, [S]),
        ("vram_api_stream_batches_per_epoch", ctypes.c_uint64, [S]),
        ("vram_api_stream_device", ctypes.c_int, [S]),
        ("vram_api_local_gpu", ctypes.c_int, [ctypes.c_char_p, ctypes.c_size_t]),
        ("vram_api_stream_rank_of", ctypes.c_uint32, [S]),
        ("vram_api_stream_world", ctypes.c_uint32, [S]),
        ("vram_api_stream_launcher", ctypes.c_char_p, [S]),
        ("vram_api_stream_next", ctypes.c_int,
         [S, ctypes.POINTER(Batch_), ctypes.c_char_p, ctypes.c_size_t]),
        ("vram_api_stream_release", ctypes.c_int, [S, ctypes.c_char_p, ctypes.c_size_t]),
        ("vram_api_stream_close", ctypes.c_int, [S]),
        ("vram_api_stream_skip", ctypes.c_int,
         [S, ctypes.c_uint64, ctypes.POINTER(ctypes.c_uint64), ctypes.c_char_p, ctypes.c_size_t]),
        ("vram_api_stream_budget", ctypes.c_uint64, [S]),
        ("vram_api_stream_order", ctypes.c_int,
         [S, ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t]),
        ("vram_api_parse_size", ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(ctypes.c_uint64)]),
        ("vram_api_world", ctypes.c_int, [ctypes.POINTER(ctypes.c_uint32),
                                          ctypes.POINTER(ctypes.c_uint32), ctypes.c_char_p,
                                          ctypes.c_size_t]),
        ("vram_api_host_budget", ctypes.c_uint64, []),
        ("vram_api_stream_take", ctypes.c_int, [S, ctypes.POINTER(Take_)]),
        ("vram_api_keep_release", None, [ctypes.c_void_p]),
        ("vram_api_stream_chunk_rows", ctypes.c_uint64, [S]),
    ]:
        f = getattr(L, name)
        f.restype = res
        f.argtypes = args
    _lib = L
    return L


def status_error(status, message):
    """A VramkitError for a vram_status (negative) and its message."""
    name = lib().vram_api_status_name(status).decode()
    return VramkitError(message or lib().vram_api_status_str(status).decode(), status=name)
