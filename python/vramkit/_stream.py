"""vramkit.stream: the streamer (driver/stream/stream.h) over an HDF5 file, batch after batch,
the arrays being the streamer's own buffers (no copy).

Lifetime: a batch's arrays are valid until the next batch is asked for (or release() is
called, or the stream is closed): the streamer reuses that memory for later chunks. This is
enforced where it can be: Batch.arrays raises once released, and a batch taken from a
closed or advanced stream is refused. Arrays already handed out (a NumPy view, a torch
tensor over a DLPack capsule) cannot be revoked: copy what must outlive the step
(``batch.copy()`` or ``copy=True``).

On a GPU the data are ready in the order of the consumer stream given at open (torch's current
stream by default): work queued on that stream sees the batch in place, and releasing a batch
lets the streamer reuse its memory only after the work queued there so far. No event code is
needed in the training loop.
"""

import ctypes
import os

from ._lib import Batch_, StreamOpts, VramkitError, lib, status_error

try:
    import numpy as _np
except ImportError:  # pragma: no cover - numpy is a dependency of the package
    _np = None

_ERR = 512

# HDF5 element types as h5source names them -> (NumPy type string, DLPack code, bits)
_TYPES = {
    "float16": ("<f2", 2, 16), "float32": ("<f4", 2, 32), "float64": ("<f8", 2, 64),
    "int8": ("|i1", 0, 8), "int16": ("<i2", 0, 16), "int32": ("<i4", 0, 32), "int64": ("<i8", 0, 64),
    "uint8": ("|u1", 1, 8), "uint16": ("<u2", 1, 16), "uint32": ("<u4", 1, 32),
    "uint64": ("<u8", 1, 64),
}


# ---- DLPack (dlpack.h, version 0.8 layout: DLManagedTensor) ------------------------------------

class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", _DELETER)]


_kDLCPU, _kDLCUDA = 1, 2
_live = {}  # address of a DLManagedTensor -> what keeps it and its shape alive


@_DELETER
def _dl_deleter(addr):
    _live.pop(addr, None)


# The capsule's destructor gets the capsule while it is being freed: it is taken as a raw
# pointer (a py_object argument would take and drop a reference, freeing it a second time).
_CAPSULE_DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_PyCapsule_New = ctypes.pythonapi.PyCapsule_New
_PyCapsule_New.restype = ctypes.py_object
_PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, _CAPSULE_DESTRUCTOR]
_capsule_is_valid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_IsValid", ctypes.pythonapi))
_capsule_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi))


@_CAPSULE_DESTRUCTOR
def _capsule_destructor(capsule):
    # never consumed (still named "dltensor"): the producer deletes; a consumer renames it
    # "used_dltensor" and calls the deleter itself when done
    if _capsule_is_valid(capsule, b"dltensor"):
        _live.pop(_capsule_pointer(capsule, b"dltensor"), None)


class DeviceArray:
    """One dataset of a batch in device (or host) memory: shape, dtype, a pointer, and the two
    ways other libraries take such memory without a copy — ``__dlpack__`` (torch.from_dlpack,
    numpy.from_dlpack on the CPU, CuPy, JAX) and ``__cuda_array_interface__`` on a GPU."""

    def __init__(self, ptr, shape, typestr, code, bits, device, stream, owner):
        self.ptr, self.shape, self.typestr = ptr, tuple(shape), typestr
        self._code, self._bits, self.device, self._stream = code, bits, device, stream
        self._owner = owner  # the batch: checked before every hand-over

    @property
    def nbytes(self):
        n = self._bits // 8
        for d in self.shape:
            n *= d
        return n

    def __dlpack_device__(self):
        return (_kDLCPU, 0) if self.device < 0 else (_kDLCUDA, self.device)

    def __dlpack__(self, stream=None, **_):
        self._owner._check()
        m = _DLManagedTensor()
        shape = (ctypes.c_int64 * len(self.shape))(*self.shape)
        m.dl_tensor.data = self.ptr
        m.dl_tensor.device = _DLDevice(*self.__dlpack_device__())
        m.dl_tensor.ndim = len(self.shape)
        m.dl_tensor.dtype = _DLDataType(self._code, self._bits, 1)
        m.dl_tensor.shape = shape
        m.dl_tensor.strides = None  # compact, row-major
        m.dl_tensor.byte_offset = 0
        m.deleter = _dl_deleter
        addr = ctypes.addressof(m)
        _live[addr] = (m, shape, self._owner)
        return _PyCapsule_New(addr, b"dltensor", _capsule_destructor)

    @property
    def __cuda_array_interface__(self):
        if self.device < 0:
            raise AttributeError("host memory: use __array_interface__ / __dlpack__")
        self._owner._check()
        d = {"shape": self.shape, "typestr": self.typestr, "data": (self.ptr, False),
             "version": 3, "strides": None}
        if self._stream:
            d["stream"] = self._stream
        return d

    @property
    def __array_interface__(self):
        if self.device >= 0:
            raise AttributeError("device memory: use __cuda_array_interface__ / __dlpack__")
        self._owner._check()
        return {"shape": self.shape, "typestr": self.typestr, "data": (self.ptr, False),
                "version": 3}


class Batch:
    """A batch: ``arrays`` (one per dataset, in the order given; also ``batch[name]``),
    ``samples`` (the sample index of each row, a NumPy array, a copy), ``epoch``,
    ``epoch_index``, ``index`` (within the epoch), ``epoch_begin`` / ``epoch_end``.
    Valid until the next batch or release()."""

    def __init__(self, stream, b, arrays):
        self._stream = stream
        self._serial = stream._serial
        self.count = b.count
        self.epoch, self.epoch_index, self.index = b.epoch, b.epoch_index, b.index
        self.epoch_begin, self.epoch_end = bool(b.epoch_begin), bool(b.epoch_end)
        addr = ctypes.cast(b.samples, ctypes.c_void_p).value
        self.samples = _np.frombuffer((ctypes.c_uint64 * b.count).from_address(addr),
                                      dtype=_np.uint64).copy()
        self._arrays = arrays

    def _check(self):
        if self._stream._serial != self._serial or self._stream._closed:
            raise VramkitError("this batch was released (the stream moved on or was closed): "
                               "its memory now holds other samples", status="VRAM_E_STATE")

    @property
    def arrays(self):
        self._check()
        return self._arrays

    def __getitem__(self, key):
        self._check()
        if isinstance(key, int):
            return self._arrays[key]
        return self._arrays[self._stream.datasets.index(key)]

    def copy(self):
        """The arrays copied out of the streamer's memory (NumPy on the CPU; torch tensors on a
        GPU), valid for as long as you keep them."""
        self._check()
        return [a.copy() if hasattr(a, "copy") else a.clone() for a in self._arrays]

    def release(self):
        """Gives the batch's memory back now (the iterator does it when the next one is asked
        for)."""
        if self._stream._serial == self._serial and not self._stream._closed:
            self._stream._release()


class Stream:
    """See vramkit.stream."""

    def __init__(self, path, datasets, batch, *, shuffle=False, seed=0, epochs=1, first_epoch=0,
                 device="cpu", world="auto", rank=None, drop_last=False, pad=True, budget=None,
                 fraction=None, reserve=None, buffers=None, readers=None, stream=None,
                 output="auto", copy=False):
        self._h = None
        self._closed = True
        self._serial = 0
        self._holding = False
        L = lib()
        if isinstance(datasets, str):
            datasets = [datasets]
        self.datasets = list(datasets)
        self.path = os.fspath(path)
        self.copy = copy
        dev = _device_ordinal(device)
        if dev == -2:  # "cuda": the local rank's GPU, as the C library picks it
            err = ctypes.create_string_buffer(_ERR)
            dev = L.vram_api_local_gpu(err, _ERR)
            if dev < 0:
                raise status_error(dev, err.value.decode("utf-8", "replace"))
        self.output = _output(output, dev)
        world_auto = world is None or world == "auto"
        if world_auto:
            world = 0  # from the launcher's variables (torchrun, Open MPI, MPICH/PMI, Slurm)
        elif rank is None:
            raise VramkitError("stream: world=%r needs rank=" % (world,), exit_code=2)
        o = StreamOpts()
        o.size = ctypes.sizeof(StreamOpts)
        o.batch = _count("batch", batch, 1)
        o.budget_bytes = _count("budget", budget, 1) if budget is not None else 0
        o.fraction = float(fraction) if fraction is not None else 0.0
        o.reserve_bytes = _count("reserve", reserve, 0) if reserve is not None else 0
        o.epochs = _count("epochs", epochs, 1)
        o.first_epoch = _count("first_epoch", first_epoch, 0)
        o.seed = _count("seed", seed, 0)
        o.world = 0 if world_auto else _count("world", world, 1)
        o.rank = _count("rank", rank, 0) if rank is not None else 0
        o.world_auto, o.rank_given = int(world_auto), int(rank is not None)
        if not world_auto and o.rank >= o.world:
            raise VramkitError("stream: rank %d is not below world %d" % (o.rank, o.world),
                               exit_code=2)
        o.buffers = _count("buffers", buffers, 1) if buffers is not None else 0
        o.readers = _count("readers", readers, 1) if readers is not None else 0
        o.shuffle, o.drop_last, o.no_pad = int(bool(shuffle)), int(bool(drop_last)), int(not pad)
        o.device = dev
        self._consumer = None
        if dev >= 0:
            self._consumer = _consumer_stream(stream, dev)
            o.consumer = self._consumer
        names = [d.encode() for d in self.datasets]
        arr = (ctypes.c_char_p * max(1, len(names)))(*names)
        h = ctypes.c_void_p()
        err = ctypes.create_string_buffer(_ERR)
        st = L.vram_api_stream_open(self.path.encode(), arr, len(names), ctypes.byref(o),
                                    ctypes.byref(h), err, _ERR)
        if st != 0:
            raise status_error(st, err.value.decode("utf-8", "replace"))
        self._h = h
        self._closed = False
        self._err = ctypes.create_string_buffer(_ERR)  # reused by every call
        self._b = Batch_()
        self._b.size = ctypes.sizeof(Batch_)
        self.rank_samples = L.vram_api_stream_rank_samples(h)
        self.rank = L.vram_api_stream_rank_of(h)
        self.world = L.vram_api_stream_world(h)
        self.launcher = L.vram_api_stream_launcher(h).decode() or None
        self.device = L.vram_api_stream_device(h)
        self.batches_per_epoch = L.vram_api_stream_batches_per_epoch(h)
        self._layout = []
        for d in range(L.vram_api_stream_datasets(h)):
            typ = L.vram_api_stream_type(h, d).decode()
            rank_ = L.vram_api_stream_rank(h, d)
            dims = [L.vram_api_stream_dim(h, d, k) for k in range(1, rank_)]
            row = L.vram_api_stream_row_bytes(h, d)
            if typ in _TYPES:
                typestr, code, bits = _TYPES[typ]
            else:  # compound, strings, ...: the row's bytes
                typestr, code, bits, dims = "|u1", 1, 8, [row]
            self._layout.append((dims, typestr, code, bits))
        self._row = [L.vram_api_stream_row_bytes(h, d) for d in range(len(self._layout))]
        self._lib = L

    def __len__(self):
        """Batches in one epoch."""
        return self.batches_per_epoch

    def _release(self):
        if not self._holding:
            return
        st = self._lib.vram_api_stream_release(self._h, self._err, _ERR)
        self._holding = False
        self._serial += 1
        if st != 0:
            raise status_error(st, self._err.value.decode("utf-8", "replace"))

    def __iter__(self):
        L, b, err = self._lib, self._b, self._err
        ref = ctypes.byref(b)
        while not self._closed:
            self._release()
            st = L.vram_api_stream_next(self._h, ref, err, _ERR)
            if st != 0:
                raise status_error(st, err.value.decode("utf-8", "replace"))
            if b.done:
                return
            self._holding = bool(b.held)
            batch = Batch(self, b, None)
            batch._arrays = [self._array(batch, b.data[d], b.count, d)
                             for d in range(len(self._layout))]
            if self.copy:
                batch._arrays = batch.copy()
            yield batch

    def _array(self, owner, ptr, count, d):
        dims, typestr, code, bits = self._layout[d]
        if self.output == "numpy":  # host memory: a NumPy view of the buffer, made directly
            n = count * self._row[d]
            return _np.frombuffer((ctypes.c_char * n).from_address(ptr), dtype=typestr).reshape(
                (count,) + tuple(dims))
        a = DeviceArray(ptr, [count] + list(dims), typestr, code, bits, self.device,
                        self._consumer, owner)
        if self.output == "raw":
            return a
        if self.output == "numpy":
            return _np.asarray(a)
        import torch  # output == "torch"
        return torch.from_dlpack(a)

    def close(self):
        """Stops the stream and frees its memory (batches handed out become invalid)."""
        if self._closed:
            return
        self._closed = True
        self._holding = False
        st = lib().vram_api_stream_close(self._h)
        self._h = None
        if st != 0:
            raise status_error(st, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


def _count(name, value, least):
    try:
        v = int(value)
    except (TypeError, ValueError):
        raise VramkitError("stream: %s=%r is not a whole number" % (name, value),
                           exit_code=2) from None
    if v != value or v < least:
        raise VramkitError("stream: %s=%r must be a whole number >= %d" % (name, value, least),
                           exit_code=2)
    return v


def _device_ordinal(device):
    d = str(device)
    if d == "cpu":
        return -1
    if d == "cuda":
        return -2  # the GPU of this process's local rank (cuda:0 without a launcher)
    if d.startswith("cuda:") and d[5:].isdigit():
        return int(d[5:])
    raise VramkitError("stream: device=%r is not \"cpu\" or \"cuda:N\"" % (device,), exit_code=2)


def _output(output, dev):
    if output not in ("auto", "numpy", "torch", "raw"):
        raise VramkitError("stream: output=%r is not auto, numpy, torch or raw" % (output,),
                           exit_code=2)
    if output == "auto":
        try:
            import torch  # noqa: F401
            return "torch"
        except ImportError:
            return "numpy" if dev < 0 else "raw"
    if output == "numpy" and dev >= 0:
        raise VramkitError("stream: output='numpy' holds host memory; on a GPU use torch or raw",
                           exit_code=2)
    if output == "torch":
        import torch  # noqa: F401  (an ImportError says it is missing)
    return output


def _consumer_stream(stream, dev):
    """The consumer's CUDA stream as a pointer: given (a torch.cuda.Stream, or an int), else
    torch's current stream on that device, else None (the legacy default stream)."""
    if stream is not None:
        return getattr(stream, "cuda_stream", stream) or None
    try:
        import torch
        return torch.cuda.current_stream(dev).cuda_stream or None
    except Exception:
        return None


def stream(path, datasets, batch, **options):
    """Streams the samples of `datasets` (HDF5 paths inside the file at `path`; they share
    their first dimension) into device memory in batches of `batch`, in the order `vramkit
    chunks` plans, epoch after epoch: an iterator of Batch. Options: shuffle, seed, epochs,
    first_epoch, device ("cpu", "cuda:N", or "cuda": the GPU of this process's local rank),
    world and rank (sharding; world="auto", the default, takes both from torchrun, Open MPI,
    MPICH/PMI or Slurm, and means one process without a launcher), drop_last, pad,
    budget (bytes for the chunk buffers; default a fraction of free memory), fraction,
    reserve, buffers, readers, stream (the consumer's CUDA stream; default torch's current
    one), output ("auto": torch tensors where torch is installed, else NumPy arrays on the CPU
    and raw DeviceArray objects on a GPU; or "numpy", "torch", "raw"), copy (hand out copies
    instead of the streamer's buffers). Use it as a context manager, or close() it."""
    return Stream(path, datasets, batch, **options)
