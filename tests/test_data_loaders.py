"""The CIFAR-10 and MNIST (IDX) loaders parse archives written here in the genuine formats;
on-device augmentation is a per-image shift / flip of the padded batch."""

import gzip
import io
import pickle
import struct
import tarfile

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from implicitbias.theory.params import ParameterError
from implicitbias.validation.data import augment, batches, load_dataset, read_cifar10, read_idx, read_mnist


def _cifar_batches(rng, n_per_batch):
    """Six pickled batches as the CIFAR-10 python version has them (uint8 N x 3072, list of labels)."""
    out = {}
    for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
        data = rng.integers(0, 256, size=(n_per_batch, 3072), dtype=np.uint8)
        labels = rng.integers(0, 10, size=n_per_batch).tolist()
        out[name] = {b"batch_label": name.encode(), b"labels": labels, b"data": data,
                     b"filenames": [b"x.png"] * n_per_batch}
    return out


def _write_cifar_tar(path, blobs):
    with tarfile.open(path, "w:gz") as tar:
        for name, obj in {**blobs, "batches.meta": {b"label_names": [b"airplane"] * 10}}.items():
            raw = pickle.dumps(obj, protocol=2)
            info = tarfile.TarInfo(f"cifar-10-batches-py/{name}")
            info.size = len(raw)
            tar.addfile(info, io.BytesIO(raw))


def _write_idx(path, array, code):
    header = struct.pack(">BBBB", 0, 0, code, array.ndim) + struct.pack(f">{array.ndim}i", *array.shape)
    raw = header + array.astype(array.dtype.newbyteorder(">")).tobytes()
    path.write_bytes(gzip.compress(raw) if path.suffix == ".gz" else raw)


def _write_mnist(folder, rng, n_train=40, n_test=12, gz=True):
    suffix = ".gz" if gz else ""
    arrays = {
        "train-images-idx3-ubyte": rng.integers(0, 256, size=(n_train, 28, 28), dtype=np.uint8),
        "train-labels-idx1-ubyte": rng.integers(0, 10, size=n_train, dtype=np.uint8),
        "t10k-images-idx3-ubyte": rng.integers(0, 256, size=(n_test, 28, 28), dtype=np.uint8),
        "t10k-labels-idx1-ubyte": rng.integers(0, 10, size=n_test, dtype=np.uint8),
    }
    for stem, a in arrays.items():
        _write_idx(folder / (stem + suffix), a, 0x08)
    return arrays


def test_cifar10_archive_and_folder(tmp_path):
    rng = np.random.default_rng(0)
    blobs = _cifar_batches(rng, 7)
    _write_cifar_tar(tmp_path / "cifar-10-python.tar.gz", blobs)
    xtr, ytr, xte, yte = read_cifar10(tmp_path / "cifar-10-python.tar.gz")
    expect_x = np.concatenate([blobs[f"data_batch_{i}"][b"data"] for i in range(1, 6)]).reshape(-1, 3, 32, 32)
    expect_y = np.concatenate([blobs[f"data_batch_{i}"][b"labels"] for i in range(1, 6)])
    np.testing.assert_array_equal(xtr, expect_x)
    np.testing.assert_array_equal(ytr, expect_y)
    np.testing.assert_array_equal(xte, blobs["test_batch"][b"data"].reshape(-1, 3, 32, 32))
    np.testing.assert_array_equal(yte, blobs["test_batch"][b"labels"])
    # channel-major layout: pixel (c, i, j) of image k is data[k, 1024 c + 32 i + j]
    assert xtr[3, 2, 5, 7] == blobs["data_batch_1"][b"data"][3, 2 * 1024 + 5 * 32 + 7]

    with tarfile.open(tmp_path / "cifar-10-python.tar.gz") as tar:
        tar.extractall(tmp_path / "extracted", filter="data")
    folder = read_cifar10(tmp_path / "extracted")
    for a, b in zip(folder, (xtr, ytr, xte, yte)):
        np.testing.assert_array_equal(a, b)

    data = load_dataset("cifar10", path=str(tmp_path), val_size=5, seed=3)
    assert (len(data.y_train), len(data.y_val), len(data.y_test)) == (30, 5, 7)
    assert data.shape == (3, 32, 32)
    # standardised with the training split's per-channel statistics
    assert torch.allclose(data.x_train.mean(dim=(0, 2, 3)), torch.zeros(3), atol=1e-5)
    assert torch.allclose(data.x_train.std(dim=(0, 2, 3)), torch.ones(3), atol=1e-4)


def test_cifar10_missing_batches_is_a_parameter_error(tmp_path):
    blobs = _cifar_batches(np.random.default_rng(1), 2)
    del blobs["data_batch_4"]
    _write_cifar_tar(tmp_path / "broken.tar.gz", blobs)
    with pytest.raises(ParameterError, match="data_batch_4"):
        read_cifar10(tmp_path / "broken.tar.gz")
    with pytest.raises(ParameterError, match="does not exist"):
        read_cifar10(tmp_path / "nowhere")


@pytest.mark.parametrize("gz", [True, False])
def test_mnist_idx_folder(tmp_path, gz):
    rng = np.random.default_rng(2)
    arrays = _write_mnist(tmp_path, rng, gz=gz)
    xtr, ytr, xte, yte = read_mnist(tmp_path)
    np.testing.assert_array_equal(xtr, arrays["train-images-idx3-ubyte"])
    np.testing.assert_array_equal(ytr, arrays["train-labels-idx1-ubyte"])
    np.testing.assert_array_equal(xte, arrays["t10k-images-idx3-ubyte"])
    np.testing.assert_array_equal(yte, arrays["t10k-labels-idx1-ubyte"])
    for name in ("mnist", "fashion_mnist"):
        data = load_dataset(name, path=str(tmp_path), val_size=4, seed=0)
        assert data.shape == (1, 28, 28) and len(data.y_train) == 36 and len(data.y_test) == 12
        # the split is a permutation of the training set: every label is accounted for
        counts = np.bincount(np.concatenate([data.y_train.numpy(), data.y_val.numpy()]), minlength=10)
        np.testing.assert_array_equal(counts, np.bincount(arrays["train-labels-idx1-ubyte"], minlength=10))


@settings(max_examples=15, deadline=None)
@given(
    shape=st.lists(st.integers(1, 5), min_size=1, max_size=4),
    code=st.sampled_from([(0x08, np.uint8), (0x09, np.int8), (0x0B, np.int16), (0x0C, np.int32), (0x0D, np.float32), (0x0E, np.float64)]),
    gz=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_idx_roundtrip_any_dtype_and_rank(tmp_path_factory, shape, code, gz, seed):
    a = (np.random.default_rng(seed).normal(size=shape) * 50).astype(code[1])
    path = tmp_path_factory.mktemp("idx") / ("a.idx.gz" if gz else "a.idx")
    _write_idx(path, a, code[0])
    np.testing.assert_array_equal(read_idx(path), a)


def test_idx_bad_files(tmp_path):
    (tmp_path / "bad").write_bytes(b"\x01\x02\x08\x01" + b"\x00" * 8)
    with pytest.raises(ParameterError, match="magic"):
        read_idx(tmp_path / "bad")
    _write_idx(tmp_path / "short", np.zeros((4, 3), np.uint8), 0x08)
    (tmp_path / "short").write_bytes((tmp_path / "short").read_bytes()[:-2])
    with pytest.raises(ParameterError, match="header says"):
        read_idx(tmp_path / "short")
    with pytest.raises(ParameterError, match="no train-images"):
        read_mnist(tmp_path)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 1000), pad=st.integers(0, 3), flip=st.booleans())
def test_augment_is_a_shift_and_flip_of_each_image(seed, pad, flip):
    """Checked against an independent per-image loop over every allowed shift."""
    x = torch.randn(6, 2, 5, 7, generator=torch.Generator().manual_seed(seed))
    out = augment(x, torch.Generator().manual_seed(seed), crop_padding=pad, flip=flip)
    padded = torch.nn.functional.pad(x, (pad, pad, pad, pad))
    for i in range(len(x)):
        candidates = [padded[i, :, dy : dy + 5, dx : dx + 7] for dy in range(2 * pad + 1) for dx in range(2 * pad + 1)]
        candidates += [c.flip(-1) for c in candidates] if flip else []
        assert any(torch.equal(out[i], c) for c in candidates)


def test_batches_cover_the_epoch_once():
    x = torch.arange(50.0).reshape(50, 1, 1, 1)
    y = torch.arange(50)
    seen = [yb for _, yb in batches(x, y, 16, torch.Generator().manual_seed(0))]
    assert [len(b) for b in seen] == [16, 16, 16, 2]
    assert sorted(torch.cat(seen).tolist()) == list(range(50))


@settings(max_examples=10, deadline=None)
@given(seeds=st.lists(st.integers(0, 1000), min_size=1, max_size=4), pad=st.integers(0, 2), flip=st.booleans())
def test_ensemble_batches_are_each_members_solo_batches(seeds, pad, flip):
    """With one generator per member, member g's stacked batches equal its solo epoch exactly."""
    x = torch.randn(37, 1, 4, 4)
    y = torch.arange(37)
    stacked = list(batches(x, y, 8, [torch.Generator().manual_seed(s) for s in seeds], crop_padding=pad, flip=flip))
    for g, seed in enumerate(seeds):
        solo = list(batches(x, y, 8, torch.Generator().manual_seed(seed), crop_padding=pad, flip=flip))
        assert len(solo) == len(stacked)
        for (xs, ys), (xb, yb) in zip(solo, stacked):
            assert torch.equal(xb[g], xs) and torch.equal(yb[g], ys)


def test_offline_datasets_and_bad_names():
    for name in ("digits", "synthetic", "mnist1d"):
        data = load_dataset(name, size=600 if name != "digits" else None)
        assert data.num_classes == 10 and len(data.y_val) > 0 and len(data.y_test) > 0
        assert int(data.y_train.max()) < 10
    with pytest.raises(ParameterError, match="dataset must be one of"):
        load_dataset("imagenet")
    with pytest.raises(ParameterError, match="needs data_path"):
        load_dataset("mnist")
