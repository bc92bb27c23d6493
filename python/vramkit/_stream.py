"""vramkit.stream: the streamer (driver/stream/stream.h) over an HDF5 file, batch after batch,
epoch after epoch, as a PyTorch DataLoader is used.

Ownership. By default (``borrow=False``) every batch's arrays own their memory: keep a
tensor as long as you like, after the next batch or after close(). On the CPU without shuffle
the arrays are the batch's rows in the streamer's chunk buffer (no copy), and the chunk is kept:
its buffer is reused only once the last array, view or tensor over any of its batches is gone
(a NumPy view's base, a torch tensor's storage, a DLPack deleter). Arrays still held when the
stream needs that buffer again keep the chunk's memory (the stream takes a new buffer) and from
then on each batch is copied into a pooled block (``copying`` is True). With shuffle (rows
gathered) each batch is copied once into a pooled block, back in the pool when the last array
over it is gone. On a GPU each batch is cloned into torch's caching allocator.

``borrow=True`` is the fast path: the arrays are the streamer's own buffers (no copy), valid
until the next batch is asked for (or release(), or close()); the streamer then reuses that
memory for later samples. Batch.arrays refuses a batch that was released; arrays already
handed out still point at live memory (the stream's memory is freed only when the last of them
is gone, even after close()), but at other samples. Use it where each batch is consumed before
the next one is asked for.

On a GPU the data are ready in the order of the consumer stream given at open (torch's current
stream by default); ``__dlpack__(stream=S)`` orders them on S as DLPack asks.

Epochs. Without ``epochs=`` each iteration (``for b in s``) is one epoch, the next one each
time (in a new shuffled order: ``set_epoch(e)`` chooses it, as DistributedSampler has it);
with ``epochs=N`` one iteration runs N epochs. ``state_dict()`` / ``load_state_dict()``
resume exactly where a run stopped, mid-epoch included (the same remaining samples in the same
order). A stream pickles as its parameters and position (for a spawned worker); a stream
used in a forked child raises.
"""

import ctypes
import gc
import os
import weakref

from ._lib import (TAKE_COPY, TAKE_DATA, TAKE_DST, TAKE_KEEP, TAKE_MAY_DETACH, TAKE_MODE,
                   TAKE_OUT, TAKE_SAMPLES, Batch_, StreamOpts, Take_, VramkitError, lib,
                   status_error)

try:
    import numpy as _np
except ImportError:  # pragma: no cover - numpy is a dependency of the package
    _np = None

_ERR = 512
_WINDOW = 16      # epochs a C stream is opened for when each iteration is one epoch
_POOL_BLOCKS = 4  # free blocks the owned-memory pool keeps
_ALIGN = 64       # each dataset's rows in a block start at a multiple of this
_SAMPLES = 1 << 16  # sample indices a rolling array of them holds (batches take slices)

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

# The capsule's destructor gets the capsule while it is being freed: it is taken as a raw
# pointer (a py_object argument would take and drop a reference, freeing it a second time).
_CAPSULE_DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_PyCapsule_New = ctypes.pythonapi.PyCapsule_New
_PyCapsule_New.restype = ctypes.py_object
_PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, _CAPSULE_DESTRUCTOR]


def _dlpack_registry():
    """The managed tensors handed out and not yet deleted: address -> (the struct, its shape,
    what keeps the memory alive: a pool block's lease or the stream's handle; never a batch or
    an array, so an entry lives exactly as long as the consumer's tensor). The deleters use
    only what this closure holds, and are made immortal below: a consumer may run them while
    the interpreter tears this module down (a tensor freed at exit), and must find them."""
    live = {}
    pop = live.pop
    valid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)(
        ("PyCapsule_IsValid", ctypes.pythonapi))
    pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(
        ("PyCapsule_GetPointer", ctypes.pythonapi))

    @_DELETER
    def deleter(addr):
        pop(addr, None)

    @_CAPSULE_DESTRUCTOR
    def destructor(capsule):
        # never consumed (still named "dltensor"): the producer deletes; a consumer renames it
        # "used_dltensor" and calls the deleter itself when done
        if valid(capsule, b"dltensor"):
            pop(pointer(capsule, b"dltensor"), None)

    for o in (live, deleter, destructor, valid, pointer):
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(o))
    return live, deleter, destructor


_live, _dl_deleter, _capsule_destructor = _dlpack_registry()


class DeviceArray:
    """One dataset of a batch in device (or host) memory: shape, dtype, a pointer, and the two
    ways other libraries take such memory without a copy: ``__dlpack__`` (torch.from_dlpack,
    numpy.from_dlpack on the CPU, CuPy, JAX) and ``__cuda_array_interface__`` on a GPU. It
    keeps its memory alive (``keep``: a pool block's lease, or the stream's handle), and so
    does every DLPack tensor made from it until the consumer's deleter runs."""

    def __init__(self, ptr, shape, typestr, code, bits, device, keep, batch=None, handle=None):
        self.ptr, self.shape, self.typestr = ptr, tuple(shape), typestr
        self._code, self._bits, self.device = code, bits, device
        self._keep = keep
        self._batch = batch     # borrowed memory: the batch it belongs to (checked)
        self._handle = handle   # the stream's handle (GPU ordering), or None

    @property
    def nbytes(self):
        n = self._bits // 8
        for d in self.shape:
            n *= d
        return n

    def _check(self):
        if self._batch is not None:
            self._batch._check()

    def __dlpack_device__(self):
        return (_kDLCPU, 0) if self.device < 0 else (_kDLCUDA, self.device)

    def __dlpack__(self, stream=None, **_):
        self._check()
        if self.device >= 0 and self._handle is not None:
            # DLPack: the consumer's stream must see the data: None or 1 the legacy default
            # stream (NULL), 2 the per-thread default (cudaStreamPerThread is 0x2), else a
            # cudaStream_t; -1: the consumer asks for no ordering
            s = {None: None, 1: None}.get(stream, stream)
            if stream != -1:
                self._handle.order(s, 0)
                if self._batch is not None:  # its release waits for the work queued on s
                    self._batch._stream._foreign.add(s)
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
        _live[addr] = (m, shape, self._keep)
        return _PyCapsule_New(addr, b"dltensor", _capsule_destructor)

    @property
    def __cuda_array_interface__(self):
        if self.device < 0:
            raise AttributeError("host memory: use __array_interface__ / __dlpack__")
        self._check()
        d = {"shape": self.shape, "typestr": self.typestr, "data": (self.ptr, False),
             "version": 3, "strides": None}
        if self._handle is not None and self._handle.consumer:
            d["stream"] = self._handle.consumer
        return d

    @property
    def __array_interface__(self):
        if self.device >= 0:
            raise AttributeError("device memory: use __cuda_array_interface__ / __dlpack__")
        self._check()
        return {"shape": self.shape, "typestr": self.typestr, "data": (self.ptr, False),
                "version": 3}


# ---- memory: the C stream's handle, and the pool of owned blocks ----------------------------

def _close_handle(L, addr, pid):
    if os.getpid() == pid:  # a forked child never touches its parent's threads
        L.vram_api_stream_close(addr)


class _Handle:
    """The C stream. Closed when the last owner lets go: the Stream, and with borrow=True every
    array handed out (their memory is the stream's). Also at interpreter exit, before modules
    are torn down (weakref.finalize), so that no reader thread outlives the interpreter."""

    def __init__(self, L, h, consumer):
        self.L, self.h, self.consumer = L, h, consumer
        self.err = ctypes.create_string_buffer(_ERR)
        self._fin = weakref.finalize(self, _close_handle, L, h.value, os.getpid())

    def order(self, stream, consumer_waits):
        st = self.L.vram_api_stream_order(self.h, stream, consumer_waits, self.err, _ERR)
        if st != 0:
            raise status_error(st, self.err.value.decode("utf-8", "replace"))

    def close(self):
        """Closes now (nothing may use the memory any more)."""
        self._fin()

    def forget(self):
        """In a forked child: the C stream is the parent's; never close it here."""
        self._fin.detach()
        self.h = None


class _Lease:
    """Memory while something uses it: NumPy arrays made from it have it as their base, so it
    lives exactly as long as the last array, view or tensor over the memory; `keep` is what
    keeps the memory itself alive (a kept chunk, the stream's handle)."""
    __slots__ = ("__array_interface__", "keep", "__weakref__")


def _lease(ptr, nbytes, keep):
    x = _Lease()
    x.__array_interface__ = {"shape": (nbytes,), "typestr": "|u1", "data": (ptr, False),
                             "version": 3}
    x.keep = keep
    return x


class _Kept:
    """A chunk of the C stream kept for the arrays over it (a keep of vram_api_stream_take):
    released when the last of them is gone, to the streamer while it runs, else its memory
    freed (the stream closed meanwhile). Never in a forked child: the keep is the parent's."""
    __slots__ = ("release", "k", "pid", "getpid", "__weakref__")

    def __init__(self, L, k):
        self.release, self.k = L.vram_api_keep_release, k
        self.pid, self.getpid = os.getpid(), os.getpid

    def __del__(self):
        if self.getpid() == self.pid:
            self.release(self.k)


class _Block:
    """A block of the pool while something uses it (as _Lease); back in the pool after."""
    __slots__ = ("__array_interface__", "block", "pool")

    def __del__(self):
        self.pool.back(self.block)


class _Pool:
    """Host blocks of one batch's bytes. take() gives a free block (or a new one) as a uint8
    array and its address; the block comes back when the last array over it is gone, and is
    kept if fewer than _POOL_BLOCKS are free."""

    def __init__(self, nbytes):
        self.nbytes = max(1, nbytes)
        self.free = []

    def take(self):
        if self.free:
            block = self.free.pop()
        else:
            a = _np.empty(self.nbytes, dtype=_np.uint8)
            block = (a, a.ctypes.data)
        x = _Block()
        x.__array_interface__ = {"shape": (self.nbytes,), "typestr": "|u1",
                                 "data": (block[1], False), "version": 3}
        x.block, x.pool = block, self
        return _np.asarray(x), block[1]

    def back(self, block):
        if len(self.free) < _POOL_BLOCKS:
            self.free.append(block)


# ---- batches and the stream ---------------------------------------------------------------------

class Batch:
    """A batch: ``arrays`` (one per dataset, in the order given; also ``batch[name]``),
    ``samples`` (the sample index of each row, a NumPy array of its own), ``epoch``,
    ``epoch_index``, ``index`` (within the epoch), ``epoch_begin`` / ``epoch_end``. Its arrays
    own their memory, unless the stream was opened with borrow=True: then they are valid until
    the next batch or release()."""

    __slots__ = ("_stream", "_serial", "_borrowed", "count", "epoch", "epoch_index", "index",
                 "epoch_begin", "epoch_end", "_samples", "_arrays", "__weakref__")

    def __init__(self, stream, b, borrowed):
        self._stream = stream
        self._serial = stream._serial
        self._borrowed = borrowed
        self.count = b.count
        self.epoch, self.epoch_index, self.index = b.epoch, b.epoch_index, b.index
        self.epoch_begin, self.epoch_end = bool(b.epoch_begin), bool(b.epoch_end)
        addr = ctypes.cast(b.samples, ctypes.c_void_p).value
        self._samples = _np.frombuffer((ctypes.c_uint64 * b.count).from_address(addr),
                                       dtype=_np.uint64).copy()
        self._arrays = None

    @property
    def samples(self):
        s = self._samples
        if type(s) is tuple:  # a slice of a rolling array, taken when first asked for
            s = self._samples = s[0][s[1]:s[2]]
        return s

    def _check(self):
        if self._borrowed and (self._stream._serial != self._serial or self._stream._closed):
            raise VramkitError("this batch was released (the stream moved on or was closed): "
                               "its memory now holds other samples (borrow=True)",
                               status="VRAM_E_STATE")

    @property
    def arrays(self):
        if self._borrowed:
            self._check()
        return self._arrays

    def __getitem__(self, key):
        self._check()
        if isinstance(key, int):
            return self._arrays[key]
        return self._arrays[self._stream.datasets.index(key)]

    def copy(self):
        """The arrays copied (NumPy on the CPU, torch tensors where they are), each with memory
        of its own."""
        self._check()
        return [a.copy() if hasattr(a, "copy") else a.clone() for a in self._arrays]

    def release(self):
        """borrow=True: gives the batch's memory back now (the iterator does it when the next
        one is asked for). Owned batches hold nothing of the stream: a no-op."""
        if self._borrowed and self._stream._serial == self._serial and not self._stream._closed:
            self._stream._release()


_new_batch = object.__new__


_streams = weakref.WeakSet()  # every open Stream of this process (for fork)


def _after_fork_in_child():
    for s in list(_streams):
        s._forked_from = s._pid
        if s._handle is not None:
            s._handle.forget()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


class Stream:
    """See vramkit.stream."""

    def __init__(self, path, datasets, batch, *, shuffle=False, seed=0, epochs=None,
                 first_epoch=0, device="cpu", world="auto", rank=None, drop_last=False, pad=True,
                 budget=None, fraction=None, reserve=None, buffers=None, readers=None,
                 stream=None, output="auto", copy=False, borrow=False):
        self._handle = None
        self._closed = True
        self._serial = 0
        self._holding = False
        self._foreign = set()
        self._pid = os.getpid()
        self._forked_from = None
        L = lib()
        if isinstance(datasets, str):
            datasets = [datasets]
        self.datasets = list(datasets)
        self.path = os.fspath(path)
        # the parameters as given: what pickling carries to another process
        self._spec = dict(shuffle=shuffle, seed=seed, epochs=epochs, first_epoch=first_epoch,
                          device=device, world=world, rank=rank, drop_last=drop_last, pad=pad,
                          budget=budget, fraction=fraction, reserve=reserve, buffers=buffers,
                          readers=readers, output=output, copy=copy, borrow=borrow)
        self._batch_arg = batch
        self.copy = bool(copy)
        self.borrow = bool(borrow) and not self.copy
        dev = _device_ordinal(device)
        if dev == -2:  # "cuda": the local rank's GPU, as the C library picks it
            err = ctypes.create_string_buffer(_ERR)
            dev = L.vram_api_local_gpu(err, _ERR)
            if dev < 0:
                raise status_error(dev, err.value.decode("utf-8", "replace"))
        self.output = _output(output, dev)
        world_auto = world is None or world == "auto"
        if not world_auto and rank is None:
            raise VramkitError("stream: world=%r needs rank=" % (world,), exit_code=2)
        o = StreamOpts()
        o.size = ctypes.sizeof(StreamOpts)
        o.batch = _count("batch", batch, 1)
        o.budget_bytes = _size("budget", budget, 1) if budget is not None else 0
        o.fraction = float(fraction) if fraction is not None else 0.0
        o.reserve_bytes = _size("reserve", reserve, 0) if reserve is not None else 0
        # epochs: None, each iteration one epoch (the C stream runs a window of them, so
        # the next iteration's first chunk is read while this one ends); N, one iteration N
        self._per_iter = 1 if epochs is None else _count("epochs", epochs, 1)
        self._window = _WINDOW if epochs is None else self._per_iter
        self._epoch = _count("first_epoch", first_epoch, 0)  # where the next iteration starts
        self._skip = 0        # batches of that epoch already delivered (a resumed position)
        self._end = None      # a resumed iteration's end epoch (epochs=N)
        self._resumed = False  # load_state_dict: the next iteration continues mid-epoch
        o.epochs = self._window
        o.first_epoch = self._epoch
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
        consumer = None
        if dev >= 0:
            consumer = _consumer_stream(stream, dev)
            o.consumer = consumer
        self._opts = o
        self._names = [d.encode() for d in self.datasets]
        self._lib = L
        self._open(self._epoch, self._window)  # the device's errors first ("built without CUDA")
        if dev >= 0 and self.output == "raw" and not self.borrow:
            self._handle.close()
            raise VramkitError("stream: output='raw' on a GPU hands out the streamer's own memory: "
                               "give borrow=True (valid until the next batch), or use "
                               "output='torch' (tensors that own their memory)", exit_code=2)
        h = self._handle.h
        self.rank_samples = L.vram_api_stream_rank_samples(h)
        self.rank = L.vram_api_stream_rank_of(h)
        self.world = L.vram_api_stream_world(h)
        self.launcher = L.vram_api_stream_launcher(h).decode() or None
        self.device = L.vram_api_stream_device(h)
        self.batches_per_epoch = L.vram_api_stream_batches_per_epoch(h)
        self.budget = L.vram_api_stream_budget(h)
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
        # a block of the pool: each dataset's rows of a full batch, aligned
        self._offsets, n = [], 0
        for r in self._row:
            self._offsets.append(n)
            n += -(-(o.batch * r) // _ALIGN) * _ALIGN
        self._pool = _Pool(n) if self.device < 0 else None
        self._iterating = 0   # the serial of the running iteration (load_state_dict ends it)
        # host memory, owned: one call a batch (vram_api_stream_take). Without shuffle each
        # batch's rows stay in their chunk, which is kept while arrays over it live; with
        # shuffle (rows gathered) each batch is copied into a block of the pool.
        self._tv = None
        self._chunk = None    # the kept chunk being taken: (its _Kept, regions, torch pieces)
        self._samp, self._samp_at = None, _SAMPLES
        self._collected = False
        self.copying = bool(shuffle)
        if self.device < 0 and not self.borrow:
            t = Take_()
            t.size = ctypes.sizeof(Take_)
            self._t, self._tref = t, ctypes.byref(t)
            self._tv = _np.frombuffer(t, dtype=_np.uint64)
            self._tv[TAKE_MODE] = TAKE_COPY if self.copying else TAKE_KEEP
            self._chunk_rows = L.vram_api_stream_chunk_rows(h)
        _streams.add(self)

    # -- the C stream, opened at an epoch for a window of epochs

    def _open(self, first_epoch, epochs):
        if self._handle is not None:
            # let go of the old one: closed now, or (borrow=True) when its last array is gone;
            # its chunks still kept live on with their arrays
            self._release()
            self._handle = None
            self._chunk = None
            self._serial += 1
        o, L = self._opts, self._lib
        o.first_epoch, o.epochs = first_epoch, epochs
        arr = (ctypes.c_char_p * max(1, len(self._names)))(*self._names)
        h = ctypes.c_void_p()
        err = ctypes.create_string_buffer(_ERR)
        st = L.vram_api_stream_open(self.path.encode(), arr, len(self._names), ctypes.byref(o),
                                    ctypes.byref(h), err, _ERR)
        if st != 0:
            raise status_error(st, err.value.decode("utf-8", "replace"))
        self._handle = _Handle(L, h, o.consumer)
        self._closed = False
        self._err = self._handle.err
        self._b = Batch_()
        self._b.size = ctypes.sizeof(Batch_)
        self._c_at = (first_epoch, 0)          # what the C stream delivers next
        self._c_end = first_epoch + epochs     # the epoch it ends before

    def _seek(self, epoch, skip, end):
        """The C stream at batch `skip` of `epoch`, able to run to `end`: kept when it is there
        already, else reopened and the batches before skipped."""
        self._release()
        if self._c_at == (epoch, skip) and self._c_end >= end:
            return
        if self.batches_per_epoch == 0:
            raise VramkitError("stream: %s: no batch in an epoch for this rank" % self.path,
                               exit_code=2)
        self._open(epoch, max(end - epoch, self._window))
        if skip:
            done = ctypes.c_uint64()
            st = self._lib.vram_api_stream_skip(self._handle.h, skip, ctypes.byref(done),
                                                self._err, _ERR)
            if st != 0:
                raise status_error(st, self._err.value.decode("utf-8", "replace"))
            self._c_at = (epoch, done.value)

    def __len__(self):
        """Batches in one epoch."""
        return self.batches_per_epoch

    def _check_process(self):
        if self._forked_from is not None or self._pid != os.getpid():
            raise VramkitError(
                "stream: %s was opened in process %d and cannot be used in its forked child %d "
                "(its reader threads stayed in the parent): open the stream in the child, or "
                "hand it over pickled (its parameters and position travel, not the handle)"
                % (self.path, self._pid, os.getpid()), status="VRAM_E_STATE", exit_code=2)

    def _release(self):
        if not self._holding:
            return
        self._holding = False
        self._serial += 1
        while self._foreign:  # consumers' streams (__dlpack__(stream=)): reuse after their work
            self._handle.order(self._foreign.pop(), 1)
        st = self._lib.vram_api_stream_release(self._handle.h, self._err, _ERR)
        if st != 0:
            raise status_error(st, self._err.value.decode("utf-8", "replace"))

    def set_epoch(self, epoch):
        """The epoch the next iteration runs (its shuffled order), as DistributedSampler's."""
        self._epoch = _count("epoch", epoch, 0)
        self._skip, self._end, self._resumed = 0, None, False
        self._iterating += 1

    @property
    def epoch(self):
        """The epoch the next iteration runs (or the running one continues)."""
        return self._epoch

    def state_dict(self):
        """Where the stream is: the next batch a resumed stream delivers (torchdata's
        StatefulDataLoader convention), with the parameters that must match on resume."""
        return {"epoch": self._epoch, "batch": self._skip, "end": self._end,
                "batches_per_epoch": self.batches_per_epoch, "file": self.path,
                "datasets": list(self.datasets), "batch_size": self._opts.batch,
                "shuffle": bool(self._opts.shuffle), "seed": self._opts.seed,
                "world": self.world, "rank": self.rank, "drop_last": bool(self._opts.drop_last),
                "pad": not self._opts.no_pad}

    def load_state_dict(self, state):
        """Continues from state_dict(): the next iteration delivers the batch after the last
        one delivered then (the rest of that epoch, or of that epochs=N run). Refused when the
        stream's parameters (file, datasets, batch, shuffle, seed, sharding) differ."""
        mine = self.state_dict()
        for k in ("datasets", "batch_size", "shuffle", "seed", "world", "rank", "drop_last",
                  "pad", "batches_per_epoch"):
            if k not in state:
                raise VramkitError("stream: load_state_dict: the state has no %r" % k, exit_code=2)
            if state[k] != mine[k]:
                raise VramkitError("stream: load_state_dict: %s is %r in the state, %r in this "
                                   "stream" % (k, state[k], mine[k]), exit_code=2)
        epoch = _count("epoch", state.get("epoch"), 0)
        skip = _count("batch", state.get("batch"), 0)
        if skip >= max(1, self.batches_per_epoch):
            raise VramkitError("stream: load_state_dict: batch %d is not below the %d batches "
                               "of an epoch" % (skip, self.batches_per_epoch), exit_code=2)
        end = state.get("end")
        self._epoch, self._skip = epoch, skip
        self._end = None if end is None else _count("end", end, epoch + 1)
        self._resumed = True
        self._iterating += 1  # a running iteration stops

    def __iter__(self):
        self._check_process()
        if self._closed:
            raise VramkitError("stream: %s is closed" % self.path, status="VRAM_E_STATE")
        if not self._resumed:
            # a new run of epochs from the next one; an iteration left mid-epoch counts as its
            # epoch, as a DataLoader's (load_state_dict continues the one left instead)
            if self._skip:
                self._epoch, self._skip = self._epoch + 1, 0
            self._end = None
        self._resumed = False
        self._iterating += 1
        return self._run(self._iterating)

    def _run(self, serial):
        epoch, skip = self._epoch, self._skip
        end = self._end if self._end is not None else epoch + self._per_iter
        self._end = end
        self._seek(epoch, skip, end)
        if self._tv is not None:
            return self._run_take(serial, end)
        return self._run_next(serial, end)

    def _run_next(self, serial, end):
        L, b, err = self._lib, self._b, self._err
        ref = ctypes.byref(b)
        try:
            while not self._closed and serial == self._iterating and self._epoch < end:
                self._check_process()
                self._release()
                st = L.vram_api_stream_next(self._handle.h, ref, err, _ERR)
                if st != 0:
                    raise status_error(st, err.value.decode("utf-8", "replace"))
                if b.done:  # the window ran out: the next epochs from a new C stream
                    self._seek(self._epoch, 0, end)
                    b, err, ref = self._b, self._err, ctypes.byref(self._b)
                    continue
                self._holding = bool(b.held)
                self._c_at = (b.epoch, b.index + 1) if not b.epoch_end else (b.epoch + 1, 0)
                batch = self._make(b)
                # the position after this batch (what state_dict reports while it is used)
                self._epoch, self._skip = self._c_at
                yield batch
        finally:
            if serial == self._iterating and self._epoch >= end:
                self._end = None

    def _run_take(self, serial, end):
        """Host memory, owned: each batch in one call, released in it (its rows kept in their
        chunk, or copied into a block), so nothing is held between batches."""
        take, tv, tref = self._lib.vram_api_stream_take, self._tv, self._tref
        out_end, nd, bs = TAKE_OUT + 9, len(self._layout), self._opts.batch
        out_np, out_torch = self.output == "numpy", self.output == "torch"
        try:
            while not self._closed and serial == self._iterating and self._epoch < end:
                if self._forked_from is not None:
                    self._check_process()
                if self._samp_at + bs > _SAMPLES:  # a fresh array of indices
                    self._samp = _np.empty(max(_SAMPLES, bs), dtype=_np.uint64)
                    self._samp_ptr, self._samp_at = self._samp.ctypes.data, 0
                tv[TAKE_SAMPLES] = self._samp_ptr + 8 * self._samp_at
                if self.copying:
                    block, bptr = self._pool.take()
                    for d in range(nd):
                        tv[TAKE_DST + d] = bptr + self._offsets[d]
                st = take(self._handle.h, tref)
                if st != 0:
                    self._take_failed(st)
                    continue
                count, epoch, ei, index, eb, ee, done, keep, slot = tv[TAKE_OUT:out_end].tolist()
                if done:  # the window ran out: the next epochs from a new C stream
                    self._seek(self._epoch, 0, end)
                    continue
                self._c_at = (epoch, index + 1) if not ee else (epoch + 1, 0)
                if self.copying:
                    arrays = self._copied(block, count)
                else:
                    if keep:
                        self._keep(keep, slot)
                    if out_np:
                        arrays = [r[slot:slot + count] for r in self._chunk[1]]
                    elif out_torch and count == bs and not slot % bs:
                        j = slot // bs
                        arrays = [p[j] for p in self._chunk[2]]
                    else:
                        arrays = self._kept(slot, count)
                batch = _new_batch(Batch)
                batch._stream, batch._serial, batch._borrowed = self, 0, False
                batch.count, batch.epoch, batch.epoch_index, batch.index = count, epoch, ei, index
                batch.epoch_begin, batch.epoch_end = eb != 0, ee != 0
                a = self._samp_at
                batch._samples = (self._samp, a, a + count)
                self._samp_at = a + count
                batch._arrays = arrays if not self.copy else [
                    x.copy() if hasattr(x, "copy") else x.clone() for x in arrays]
                # the position after this batch (what state_dict reports while it is used)
                self._epoch, self._skip = self._c_at
                yield batch
        finally:
            if serial == self._iterating and self._epoch >= end:
                self._end = None

    def _take_failed(self, st):
        """A take that failed. A kept chunk in the way (arrays of an earlier chunk still in
        use): collected if a garbage collection frees them, else given its memory for good
        (the stream takes a new buffer) and from then on each batch is copied (copying).
        Any other error raises. The loop takes again after."""
        tv = self._tv
        if not tv[TAKE_OUT + 9]:  # not blocked
            raise status_error(st, self._t.err.decode("utf-8", "replace"))
        if not self._collected:
            self._collected = True
            gc.collect()  # arrays in a reference cycle
            return
        self.copying = True
        self._chunk = None
        tv[TAKE_MODE], tv[TAKE_MAY_DETACH] = TAKE_COPY, 1

    def _keep(self, keep, slot):
        """The first batch of a newly kept chunk: its regions as arrays (and torch tensors cut
        into batches once), all over the chunk's keep."""
        kept = _Kept(self._lib, keep)
        self._collected = False
        tv, rows, regions, pieces = self._tv, self._chunk_rows, [], []
        for d, (dims, typestr, code, bits) in enumerate(self._layout):
            base = int(tv[TAKE_DATA + d]) - slot * self._row[d]
            r = _np.asarray(_lease(base, rows * self._row[d], kept)).view(typestr)
            regions.append(r.reshape((rows,) + tuple(dims)))
        if self.output == "torch":
            import torch
            pieces = [torch.from_numpy(r).split(self._opts.batch) for r in regions]
        self._chunk = (kept, regions, pieces)

    def _kept(self, slot, count):
        kept, regions, pieces = self._chunk
        if self.output == "numpy":
            return [r[slot:slot + count] for r in regions]
        if self.output == "torch":
            j, rem = divmod(slot, self._opts.batch)
            if rem == 0 and count == self._opts.batch:
                return [p[j] for p in pieces]
            import torch
            return [torch.from_numpy(r[slot:slot + count]) for r in regions]
        return [DeviceArray(r[slot:slot + count].ctypes.data, (count,) + tuple(dims), typestr,
                            code, bits, -1, r)
                for r, (dims, typestr, code, bits) in zip(regions, self._layout)]

    def _copied(self, block, count):
        out = []
        for d, (dims, typestr, code, bits) in enumerate(self._layout):
            off, shape = self._offsets[d], (count,) + tuple(dims)
            if self.output == "raw":
                out.append(DeviceArray(int(self._tv[TAKE_DST + d]), shape, typestr, code, bits,
                                       -1, block))
                continue
            a = block[off:off + count * self._row[d]].view(typestr).reshape(shape)
            out.append(self._host_out(a))
        return out

    def _make(self, b):
        batch = Batch(self, b, self.borrow)
        if self.borrow:
            batch._arrays = [self._borrowed(batch, b.data[d], b.count, d)
                             for d in range(len(self._layout))]
        else:  # a GPU: torch's caching allocator holds the copies
            import torch
            views = [torch.from_dlpack(DeviceArray(b.data[d], [b.count] + list(dims), ts, code,
                                                   bits, self.device, self._handle, None,
                                                   self._handle))
                     for d, (dims, ts, code, bits) in enumerate(self._layout)]
            cons = self._handle.consumer
            if cons:
                with torch.cuda.stream(torch.cuda.ExternalStream(cons, device=self.device)):
                    batch._arrays = [v.clone() for v in views]
            else:
                batch._arrays = [v.clone() for v in views]
            del views
            self._release()  # reused after the copies queued on the consumer stream
        if self.copy:
            batch._arrays = batch.copy()
        return batch

    def _host_out(self, a):
        if self.output == "torch":
            import torch
            return torch.from_numpy(a)
        return a

    def _borrowed(self, owner, ptr, count, d):
        dims, typestr, code, bits = self._layout[d]
        shape = [count] + list(dims)
        if self.device < 0 and self.output != "raw":
            n = count * self._row[d]
            # a view whose base keeps the stream's memory (its handle) alive
            a = _np.asarray(_lease(ptr, n, self._handle)).view(typestr).reshape(shape)
            return self._host_out(a)
        a = DeviceArray(ptr, shape, typestr, code, bits, self.device, self._handle, owner,
                        self._handle if self.device >= 0 else None)
        if self.output == "raw":
            return a
        import torch  # output == "torch" on a GPU
        return torch.from_dlpack(a)

    def close(self):
        """Stops the stream. Owned arrays handed out stay valid; with borrow=True the memory is
        freed when the last array over it is gone."""
        if self._closed:
            return
        self._closed = True
        self._holding = False
        self._serial += 1
        h, self._handle = self._handle, None
        self._chunk = None  # a kept chunk lives on with its arrays, as memory of its own
        _streams.discard(self)
        if h is not None and self._pid == os.getpid() and self._forked_from is None:
            del h  # closes unless borrowed arrays still hold it

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __reduce__(self):
        """Pickles as the parameters and the position, never the handle: a spawned worker
        unpickles a stream of its own, at the same place."""
        spec = dict(self._spec)
        return (_restore, (self.path, list(self.datasets), self._batch_arg, spec,
                           self.state_dict()))


def _restore(path, datasets, batch, spec, state):
    s = Stream(path, datasets, batch, **spec)
    s.load_state_dict(state)
    return s


def _count(name, value, least):
    try:
        v = int(value)
    except (TypeError, ValueError):
        raise VramkitError("stream: %s=%r is not a whole number" % (name, value),
                           exit_code=2) from None
    if isinstance(value, bool) or v != value or v < least:
        raise VramkitError("stream: %s=%r must be a whole number >= %d" % (name, value, least),
                           exit_code=2)
    return v


def _size(name, value, least):
    """A size as the command line takes it: bytes (an int), or "256MiB", "7.5GB", "4096"."""
    if isinstance(value, str):
        out = ctypes.c_uint64()
        if lib().vram_api_parse_size(value.encode(), ctypes.byref(out)) != 0:
            raise VramkitError("stream: %s=%r is not a size (bytes, or 512MiB, 7.5GB, 8GiB)"
                               % (name, value), exit_code=2)
        if out.value < least:
            raise VramkitError("stream: %s=%r must be at least %d bytes" % (name, value, least),
                               exit_code=2)
        return out.value
    try:
        return _count(name, value, least)
    except VramkitError:
        raise VramkitError("stream: %s=%r is not a size (bytes, or a string: 512MiB, 7.5GB, "
                           "8GiB)" % (name, value), exit_code=2) from None


def _world(world, rank):
    """(world, rank) as given, or with world "auto" from the launcher's variables."""
    if world is None or world == "auto":
        w, r = ctypes.c_uint32(), ctypes.c_uint32()
        err = ctypes.create_string_buffer(_ERR)
        st = lib().vram_api_world(ctypes.byref(w), ctypes.byref(r), err, _ERR)
        if st != 0:
            raise status_error(st, "world=auto: " + err.value.decode("utf-8", "replace"))
        return w.value, (r.value if rank is None else _count("rank", rank, 0))
    if rank is None:
        raise VramkitError("stream: world=%r needs rank=" % (world,), exit_code=2)
    return _count("world", world, 1), _count("rank", rank, 0)


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
    chunks` plans: an iterable of Batch, each iteration one epoch (the next one each time;
    set_epoch(e) picks it), or epochs=N in one iteration. Options: shuffle, seed, epochs,
    first_epoch, device ("cpu", "cuda:N", or "cuda": the GPU of this process's local rank),
    world and rank (sharding; world="auto", the default, takes both from torchrun, Open MPI,
    MPICH/PMI or Slurm, and means one process without a launcher), drop_last, pad,
    budget (bytes or a size string, "256MiB", for the chunk buffers; default on the CPU an
    eighth of the available memory, at most 256 MiB, on a GPU a fraction of its free memory),
    fraction, reserve, buffers, readers, stream (the consumer's CUDA stream; default torch's
    current one), output ("auto": torch tensors where torch is installed, else NumPy arrays on
    the CPU and raw DeviceArray objects on a GPU; or "numpy", "torch", "raw"), borrow (the
    fast path: the streamer's own buffers, valid until the next batch), copy (arrays copied
    once more, as batch.copy()). Use it as a context manager, or close() it."""
    return Stream(path, datasets, batch, **options)
