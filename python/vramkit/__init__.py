"""vramkit from Python: the streamer, the planner and the guarded load of the vramkit C library
(loaded with ctypes; nothing is implemented a second time here).

    import vramkit
    vramkit.plan("nllb-200-distilled-600M", assume_gpu="8GiB,used=4.7GB")   # dict, as --json
    vramkit.estimate("meta-llama/Llama-3.1-8B", mode="train", batch=4)
    vramkit.doctor()
    vramkit.try_load(["python", "serve.py", "--dtype", "{dtype}"], strategies="fp16,int8,cpu")
    for s in vramkit.watch(interval=500, count=10): print(s)  # GPU memory samples, as dicts
    with vramkit.stream("train.h5", ["/features", "/targets"], batch=128, shuffle=True,
                        device="cuda:0", budget="256MiB") as s:
        for epoch in range(3):
            for b in s:              # one epoch per iteration, each in its own order
                x, y = b.arrays      # torch tensors that own their memory
    DataLoader(vramkit.StreamDataset("train.h5", ["/x"], 128), batch_size=None, num_workers=2)
"""

from ._commands import chunks, cli, doctor, estimate, plan, try_load, watch
from ._lib import VramkitError
from ._stream import Batch, DeviceArray, Stream, stream

__all__ = ["Batch", "DeviceArray", "Stream", "StreamDataset", "VramkitError", "chunks", "cli",
           "doctor", "estimate", "plan", "stream", "try_load", "watch"]


def __getattr__(name):
    if name == "StreamDataset":  # needs torch: imported when asked for
        from ._data import StreamDataset
        return StreamDataset
    raise AttributeError("module 'vramkit' has no attribute %r" % name)
__version__ = "0.1.0"
