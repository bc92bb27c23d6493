"""vramkit.StreamDataset: the streamer as a torch.utils.data.IterableDataset, sharded by
DataLoader worker as well as by rank: with W ranks and K workers each, worker k of rank r
streams shard r * K + k of W * K, so that together they deliver each epoch once. Each item is
a batch (a tuple of tensors that own their memory, with with_samples=True the batch's sample
indices last, an int64 tensor): use DataLoader(ds, batch_size=None)."""

import torch

from ._lib import VramkitError
from ._stream import Stream, _count, _world


class StreamDataset(torch.utils.data.IterableDataset):
    """StreamDataset(path, datasets, batch, **options): options as vramkit.stream's (world,
    rank, shuffle, seed, budget, ...; not epochs: each iteration of the DataLoader is one
    epoch). set_epoch(e) picks the epoch the next iteration runs (as DistributedSampler's;
    call it before each epoch: DataLoader copies the dataset into its workers)."""

    def __init__(self, path, datasets, batch, **options):
        super().__init__()
        if "epochs" in options:
            raise VramkitError("StreamDataset: each iteration is one epoch: give set_epoch(e), "
                               "not epochs=", exit_code=2)
        self.path, self.datasets, self.batch = path, datasets, batch
        self.epoch = _count("first_epoch", options.pop("first_epoch", 0), 0)
        self.with_samples = bool(options.pop("with_samples", False))
        self.options = options

    def set_epoch(self, epoch):
        self.epoch = _count("epoch", epoch, 0)

    def __iter__(self):
        info = torch.utils.data.get_worker_info()
        workers, worker = (info.num_workers, info.id) if info is not None else (1, 0)
        opts = dict(self.options)
        world, rank = opts.pop("world", "auto"), opts.pop("rank", None)
        world, rank = _world(world, rank)
        opts.setdefault("output", "torch")
        with Stream(self.path, self.datasets, self.batch, world=world * workers,
                    rank=rank * workers + worker, first_epoch=self.epoch, **opts) as s:
            for b in s:
                if self.with_samples:
                    yield tuple(b.arrays) + (torch.from_numpy(b.samples.astype("int64")),)
                else:
                    yield tuple(b.arrays)
