"""Helpers shared by the Python package's tests."""


def write_h5(tmp_path_factory, name, **arrays):
    """An HDF5 file (made with h5py) holding each array as a dataset of its name."""
    import h5py
    p = str(tmp_path_factory.mktemp(name) / "train.h5")
    with h5py.File(p, "w") as f:
        for key, value in arrays.items():
            f[key] = value
    return p
