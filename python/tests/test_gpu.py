"""On a GPU with torch: vramkit.stream hands its device buffers to torch on cuda:0 through
DLPack without a copy (borrow=True), in the order of torch's current stream, byte for byte as
h5py reads the file; by default tensors that own their memory (read after close); a consumer
stream of one's own is honoured, and so is __dlpack__(stream=...). Skipped without torch or a
GPU (ci/gpu.sh runs it where both are; python_torch runs this file too)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
h5py = pytest.importorskip("h5py")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device for torch", allow_module_level=True)

import vramkit  # noqa: E402
from conftest import write_h5  # noqa: E402

N = 5003


@pytest.fixture(scope="module")
def h5(tmp_path_factory):
    rng = np.random.default_rng(3)
    return write_h5(tmp_path_factory, "gpu", x=rng.standard_normal((N, 64)).astype(np.float32),
                    y=rng.integers(0, 1000, size=N, dtype=np.int64))


@pytest.mark.parametrize("shuffle", [False, True])
def test_torch_tensors_on_the_gpu_are_the_file(h5, shuffle):
    with h5py.File(h5, "r") as f:
        x_ref, y_ref = f["x"][...], f["y"][...]
    seen = []
    with vramkit.stream(h5, ["/x", "/y"], batch=256, shuffle=shuffle, seed=2, epochs=2,
                        device="cuda:0", budget=1 << 20, output="raw", borrow=True) as s:
        for b in s:
            rx, ry = b.arrays
            x, y = torch.from_dlpack(rx), torch.from_dlpack(ry)
            assert x.data_ptr() == rx.ptr, "the streamer's buffer itself, not a copy"
            assert x.device == torch.device("cuda:0")
            assert x.dtype == torch.float32 and tuple(x.shape) == (b.count, 64)
            z = (x * 2).sum(dim=1)  # work on torch's current stream, before the release
            assert np.array_equal(x.cpu().numpy(), x_ref[b.samples])  # the bytes, exactly
            # the sum: a GPU reduction's order is not NumPy's, so equal to rounding (the first
            # H200 run compared it bit for bit and failed on the last bits)
            assert torch.allclose(z.cpu(), torch.from_numpy(x_ref[b.samples] * 2).sum(dim=1),
                                  rtol=1e-5, atol=1e-4)
            assert np.array_equal(y.cpu().numpy(), y_ref[b.samples])
            seen.append(b.samples)
    allx = np.concatenate(seen)
    assert sorted(allx.tolist()) == sorted(list(range(N)) * 2)


def test_torch_output_is_the_default(h5):
    with vramkit.stream(h5, "/y", batch=1000, device="cuda:0", budget=1 << 20) as s:
        b = next(iter(s))
        assert isinstance(b.arrays[0], torch.Tensor) and b.arrays[0].is_cuda


def test_a_consumer_stream_of_ones_own(h5):
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        with vramkit.stream(h5, "/x", batch=512, device="cuda:0", budget=1 << 20) as s:
            total = torch.zeros((), device="cuda:0", dtype=torch.float64)
            for b in s:
                total += b.arrays[0].double().sum()
        side.synchronize()
    with h5py.File(h5, "r") as f:
        ref = f["x"][...].astype(np.float64).sum()
    assert abs(total.item() - ref) <= 1e-6 * abs(ref) + 1e-6


def test_owned_gpu_tensors_are_right_after_close(h5):
    with h5py.File(h5, "r") as f:
        x_ref = f["x"][...]
    kept = []
    with vramkit.stream(h5, "/x", batch=300, shuffle=True, device="cuda:0",
                        budget="1MiB") as s:
        for b in s:
            kept.append((b.samples, b.arrays[0]))
    torch.cuda.synchronize()
    for samples, t in kept:
        assert t.is_cuda and torch.equal(t.cpu(), torch.from_numpy(x_ref[samples]))


def test_dlpack_orders_the_batch_on_the_consumers_stream(h5):
    with h5py.File(h5, "r") as f:
        x_ref = f["x"][...]
    side = torch.cuda.Stream()
    with vramkit.stream(h5, "/x", batch=512, device="cuda:0", budget="1MiB", output="raw",
                        borrow=True, stream=torch.cuda.current_stream()) as s:
        for b in s:
            with torch.cuda.stream(side):  # torch.from_dlpack passes side as stream=
                t = torch.from_dlpack(b.arrays[0])
                total = t.double().sum()
            side.synchronize()
            assert abs(total.item() - x_ref[b.samples].astype(np.float64).sum()) < 1e-3
            assert s._foreign == {side.cuda_stream}, "the release waits for side's work"
