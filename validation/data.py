"""Datasets for the forgetting sweeps, held as tensors on the training device.

Real data, read from the files in their genuine formats:

- CIFAR-10, the "python version" archive ``cifar-10-python.tar.gz`` (or its extracted folder
  ``cifar-10-batches-py``): five pickled training batches and one test batch, each a dict with
  ``b"data"`` (uint8, N x 3072, channel-major 3 x 32 x 32) and ``b"labels"``.  Without a path,
  torchvision's downloader fetches it (needs torchvision and the internet).
- MNIST and Fashion-MNIST, IDX files (optionally gzipped): big-endian header
  ``0 0 <dtype code> <ndim>`` then ``ndim`` int32 sizes, then the array.  Fashion-MNIST is found
  where Debian's package ``dataset-fashion-mnist`` installs it (``/usr/share/datasets/fashion-mnist``).

Offline data (no files, no network): sklearn's bundled 8 x 8 digits, mnist1d's procedural
signals (length 40, laid out as a 1 x 5 x 8 array: a layout, not an image), and synthetic
class-template images.

Every dataset is split with a fixed seed into train / validation (default CIFAR-10: 45k / 5k of
the training set) plus the official test set, standardised per channel with training-split
statistics.  :func:`batches` shuffles and augments on the device (random crop with zero padding,
horizontal flip) with tensor indexing, never a per-sample Python loop.
"""

from __future__ import annotations

import gzip
import io
import os
import pickle
import tarfile
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from implicitbias.theory import params

__all__ = [
    "DATASETS",
    "FASHION_MNIST_DEBIAN",
    "ImageData",
    "read_idx",
    "read_cifar10",
    "read_mnist",
    "load_dataset",
    "split_dataset",
    "dataset_path_problem",
    "DataUnavailable",
    "SYSTEM_DATA_ENV",
    "system_data_path",
    "locate",
    "batches",
    "augment",
]

FASHION_MNIST_DEBIAN = Path("/usr/share/datasets/fashion-mnist")
SYSTEM_DATA_ENV = "IMPLICITBIAS_SYSTEM_DATA"
# data sets that an operating-system package installs, with the command that installs them
_SYSTEM_DATA = {"fashion_mnist": (FASHION_MNIST_DEBIAN, "apt-get install dataset-fashion-mnist")}
DATASETS = ("cifar10", "mnist", "fashion_mnist", "digits", "mnist1d", "synthetic")
_FILE_DATASETS = ("cifar10", "mnist", "fashion_mnist")
_IDX_DTYPES = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}
_MNIST_FILES = {
    "train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
    "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"),
}


@dataclass
class ImageData:
    """A standardised dataset split into train / val / test tensors (N x C x H x W, labels int64)."""

    name: str
    x_train: torch.Tensor
    y_train: torch.Tensor
    x_val: torch.Tensor
    y_val: torch.Tensor
    x_test: torch.Tensor
    y_test: torch.Tensor
    num_classes: int

    @property
    def shape(self) -> tuple[int, int, int]:
        """Input shape (C, H, W)."""
        return tuple(self.x_train.shape[1:])  # type: ignore[return-value]

    def to(self, device, dtype=torch.float32) -> ImageData:
        """Copy of the dataset on ``device`` with inputs in ``dtype``."""
        move = {
            k: getattr(self, k).to(device, dtype if k.startswith("x") else torch.int64)
            for k in ("x_train", "y_train", "x_val", "y_val", "x_test", "y_test")
        }
        return ImageData(self.name, num_classes=self.num_classes, **move)


# -- readers of the genuine file formats ---------------------------------------------------
def read_idx(path: str | os.PathLike) -> np.ndarray:
    """Read an IDX file (``.gz`` or plain): magic ``0 0 dtype ndim``, big-endian int32 sizes, data."""
    path = Path(path)
    try:
        raw = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    except (OSError, EOFError, zlib.error) as exc:
        raise params.ParameterError(f"data_path: {path} cannot be read as an IDX file ({exc})") from None
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] not in _IDX_DTYPES:
        raise params.ParameterError(f"data_path: {path} is not an IDX file (bad magic number)")
    ndim = raw[3]
    dims = np.frombuffer(raw, dtype=">i4", count=ndim, offset=4)
    dtype = np.dtype(_IDX_DTYPES[raw[2]])
    expected = 4 + 4 * ndim + int(np.prod(dims)) * dtype.itemsize
    if len(raw) != expected:
        raise params.ParameterError(f"data_path: {path} has {len(raw)} bytes, its header says {expected}")
    return np.frombuffer(raw, dtype=dtype, offset=4 + 4 * ndim).reshape(tuple(int(d) for d in dims))


def _find(folder: Path, stem: str) -> Path:
    for name in (stem, stem + ".gz"):
        if (folder / name).exists():
            return folder / name
    raise params.ParameterError(f"data_path: no {stem}[.gz] in {folder}")


def read_mnist(folder: str | os.PathLike) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(x_train, y_train, x_test, y_test)`` from the four MNIST-layout IDX files in ``folder``.

    Images are uint8 N x 28 x 28 (any H x W is accepted), labels uint8.
    """
    folder = Path(folder)
    out = []
    for split in ("train", "test"):
        images, labels = (read_idx(_find(folder, stem)) for stem in _MNIST_FILES[split])
        if images.ndim != 3 or labels.ndim != 1 or len(images) != len(labels):
            raise params.ParameterError(f"data_path: {split} images/labels in {folder} do not match")
        out += [images, labels]
    return tuple(out)  # type: ignore[return-value]


def read_cifar10(path: str | os.PathLike) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(x_train, y_train, x_test, y_test)`` from the CIFAR-10 python-version archive or folder.

    ``path`` is ``cifar-10-python.tar.gz``, the extracted ``cifar-10-batches-py`` folder, or a
    folder holding either.  Images come back uint8 N x 3 x 32 x 32.
    """
    path = Path(path)
    names = [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]
    if path.is_dir() and (path / "cifar-10-batches-py").is_dir():
        path = path / "cifar-10-batches-py"
    elif path.is_dir() and (path / "cifar-10-python.tar.gz").exists():
        path = path / "cifar-10-python.tar.gz"
    if path.is_dir():
        missing = [n for n in names if not (path / n).exists()]
        if missing:
            raise params.ParameterError(f"data_path: {path} lacks CIFAR-10 batches {', '.join(missing)}")
        blobs = {n: (path / n).read_bytes() for n in names}
    elif path.is_file():
        try:
            with tarfile.open(path, "r:*") as tar:
                members = {Path(m.name).name: m for m in tar.getmembers() if m.isfile()}
                missing = [n for n in names if n not in members]
                if missing:
                    raise params.ParameterError(f"data_path: {path} lacks CIFAR-10 batches {', '.join(missing)}")
                blobs = {n: tar.extractfile(members[n]).read() for n in names}
        except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
            raise params.ParameterError(
                f"data_path: {path} is not a readable tar archive ({exc}); give cifar-10-python.tar.gz or its "
                "extracted folder cifar-10-batches-py"
            ) from None
    else:
        raise params.ParameterError(f"data_path: {path} does not exist")

    def arrays(keys):
        # pickle, as the CIFAR-10 authors ship the batches; a damaged batch is one error, not a traceback
        try:
            loaded = [pickle.load(io.BytesIO(blobs[k]), encoding="bytes") for k in keys]
            x = np.concatenate([np.asarray(b[b"data"], dtype=np.uint8) for b in loaded])
            y = np.concatenate([np.asarray(b[b"labels"], dtype=np.int64) for b in loaded])
            return x.reshape(-1, 3, 32, 32), y
        except Exception as exc:
            raise params.ParameterError(f"data_path: {path} holds a CIFAR-10 batch that cannot be read ({type(exc).__name__})") from None

    return (*arrays(names[:5]), *arrays(names[5:]))


# -- where the files are ------------------------------------------------------------------
class DataUnavailable(params.ParameterError):
    """The files of a data set are not on this machine; the message says where they were looked
    for and how to get them."""


def system_data_path(name: str) -> Path | None:
    """Where an operating-system package installed data set ``name``, or ``None`` when it is not
    installed, when no package provides it, or when ``IMPLICITBIAS_SYSTEM_DATA=0`` hides every
    such location.  The one place the package looks outside itself for data."""
    if os.environ.get(SYSTEM_DATA_ENV, "1").strip() == "0" or name not in _SYSTEM_DATA:
        return None
    folder = _SYSTEM_DATA[name][0]
    return folder if folder.is_dir() else None


def locate(name: str, path: str | os.PathLike | None) -> Path | None:
    """The file or folder data set ``name`` is read from: ``path`` when given, else its system
    location; ``None`` for data sets that need no files (and for CIFAR-10 without a path, which
    torchvision downloads).  Raises :class:`DataUnavailable` when the files are not there."""
    params.choice("dataset", name, DATASETS)
    if name not in _FILE_DATASETS:
        return None
    if path is not None:
        if not Path(path).exists():
            raise DataUnavailable(f"data_path {path} for dataset {name} does not exist")
        if not (Path(path).is_file() or Path(path).is_dir()):
            raise params.ParameterError(f"data_path {path} for dataset {name} is not a file or folder")
        return Path(path)
    if name == "cifar10":
        return None
    found = system_data_path(name)
    if found is not None:
        return found
    if name in _SYSTEM_DATA:
        folder, install = _SYSTEM_DATA[name]
        hidden = os.environ.get(SYSTEM_DATA_ENV, "1").strip() == "0"
        where = f"{SYSTEM_DATA_ENV}=0 hides {folder}" if hidden else f"not installed in {folder}"
        raise DataUnavailable(f"dataset {name} is not on this machine ({where}): `{install}`, or give data_path "
                              "(a folder of its IDX files)")
    raise DataUnavailable(f"dataset {name} needs data_path (a folder of its four IDX files)")


def dataset_path_problem(name: str, path: str | None) -> str | None:
    """Why the files of dataset ``name`` cannot be found (``None`` when they can, or none are needed)."""
    try:
        locate(name, path)
    except DataUnavailable as exc:
        return str(exc)
    return None


def _torchvision_cifar10(root: Path) -> Path:
    try:
        from torchvision.datasets import CIFAR10
    except ImportError as exc:  # optional: only for users with the internet and no archive
        raise params.ParameterError(
            "dataset cifar10 needs data_path (cifar-10-python.tar.gz) or torchvision to download it"
        ) from exc
    CIFAR10(str(root), download=True)
    return root / "cifar-10-batches-py"


def _raw(name: str, path: str | None, size: int | None, seed: int):
    if name == "cifar10":
        found = locate(name, path)
        return read_cifar10(found or _torchvision_cifar10(Path.home() / ".cache" / "implicitbias" / "cifar10")), 10
    if name in ("mnist", "fashion_mnist"):
        xtr, ytr, xte, yte = read_mnist(locate(name, path))
        return (xtr[:, None], ytr.astype(np.int64), xte[:, None], yte.astype(np.int64)), 10
    rng = np.random.default_rng(seed)
    if name == "digits":
        from sklearn.datasets import load_digits

        d = load_digits()
        x, y = d.images[:, None].astype(np.float32), d.target.astype(np.int64)
        k = 10
    elif name == "mnist1d":
        from mnist1d.data import get_dataset_args, make_dataset

        args = get_dataset_args()
        args.seed = seed
        if size:
            args.num_samples = size
        d = make_dataset(args)
        x = np.concatenate([d["x"], d["x_test"]]).astype(np.float32).reshape(-1, 1, 5, 8)
        y = np.concatenate([d["y"], d["y_test"]]).astype(np.int64)
        k = 10
    else:  # synthetic: class templates plus Gaussian noise, 3 x 16 x 16
        k, n = 10, size or 2000
        templates = rng.normal(size=(k, 3, 16, 16)).astype(np.float32)
        y = rng.integers(0, k, size=n)
        x = templates[y] + 1.5 * rng.normal(size=(n, 3, 16, 16)).astype(np.float32)
    order = rng.permutation(len(y))
    n_test = len(y) // 5
    test, train = order[:n_test], order[n_test:]
    return (x[train], y[train], x[test], y[test]), k


def load_dataset(
    name: str,
    *,
    path: str | None = None,
    val_size: int | None = None,
    train_size: int | None = None,
    test_size: int | None = None,
    seed: int = 0,
    size: int | None = None,
) -> ImageData:
    """Load ``name`` (one of :data:`DATASETS`), split and standardise it.

    The training set is permuted with ``seed`` and its first ``val_size`` samples become the
    validation split (default 5,000 for the 50k/60k-sample sets, 10% otherwise); ``train_size``
    optionally keeps only that many of the rest, ``test_size`` a
    ``seed``-random subset of that size of the test set.  ``size`` sets the sample count of generated
    data (mnist1d, synthetic).  Inputs are standardised per channel with training-split mean/std.
    """
    params.choice("dataset", name, DATASETS)
    seed = params.integer("data_seed", seed, minimum=0)
    arrays, k = _raw(name, path, size, seed)
    return split_dataset(name, arrays, k, seed=seed, val_size=val_size, train_size=train_size, test_size=test_size)


def split_dataset(
    name: str,
    arrays: tuple,
    num_classes: int,
    *,
    seed: int = 0,
    val_size: int | None = None,
    train_size: int | None = None,
    test_size: int | None = None,
) -> ImageData:
    """``arrays = (x_train, y_train, x_test, y_test)`` (inputs N x C x H x W, integer labels) split and
    standardised as :func:`load_dataset` describes: the validation split is the first ``val_size``
    of a ``seed`` permutation of the training arrays, ``train_size`` and ``test_size`` keep subsets,
    and every split is standardised per channel with training-split mean/std.  Shared by the
    built-in data sets and the loaders of ``implicitbias.validation.external``."""
    xtr, ytr, xte, yte = arrays
    k = num_classes
    n = len(ytr)
    if val_size is None:
        val_size = 5000 if n >= 50000 else max(1, n // 10)
    val_size = params.integer("val_size", val_size, minimum=1, maximum=n - 2)
    perm = np.random.default_rng(seed).permutation(n)
    val, train = perm[:val_size], perm[val_size:]
    if train_size is not None:
        train = train[: params.integer("train_size", train_size, minimum=2, maximum=len(train))]
    xtr = torch.as_tensor(np.asarray(xtr, dtype=np.float32))
    mean = xtr[train].mean(dim=(0, 2, 3), keepdim=True)
    std = xtr[train].std(dim=(0, 2, 3), keepdim=True).clamp_min(1e-6)

    def norm(x):
        return (torch.as_tensor(np.asarray(x, dtype=np.float32)) - mean) / std

    if test_size is not None:
        test_size = params.integer("test_size", test_size, minimum=1, maximum=len(yte))
        keep = np.sort(np.random.default_rng(seed).permutation(len(yte))[:test_size])
        xte, yte = xte[keep], yte[keep]
    ytr_t = torch.as_tensor(ytr, dtype=torch.int64)
    return ImageData(
        name,
        x_train=(xtr[train] - mean) / std,
        y_train=ytr_t[train],
        x_val=(xtr[val] - mean) / std,
        y_val=ytr_t[val],
        x_test=norm(xte),
        y_test=torch.as_tensor(yte, dtype=torch.int64),
        num_classes=k,
    )


# -- on-device batches and augmentation ----------------------------------------------------
def augment(x: torch.Tensor, generator: torch.Generator, *, crop_padding: int = 0, flip: bool = False) -> torch.Tensor:
    """Random crop with zero padding and random horizontal flip of a whole batch, on its device.

    Each image gets its own offset (dy, dx) in [0, 2p]; the crop is one advanced-indexing
    gather of the padded batch, so there is no per-sample loop.
    """
    b, c, h, w = x.shape
    dev = x.device
    if crop_padding:
        p = crop_padding
        padded = torch.nn.functional.pad(x, (p, p, p, p))
        dy = torch.randint(0, 2 * p + 1, (b,), generator=generator, device=dev)
        dx = torch.randint(0, 2 * p + 1, (b,), generator=generator, device=dev)
        rows = (dy[:, None] + torch.arange(h, device=dev))[:, None, :, None]
        cols = (dx[:, None] + torch.arange(w, device=dev))[:, None, None, :]
        images = torch.arange(b, device=dev)[:, None, None, None]
        channels = torch.arange(c, device=dev)[None, :, None, None]
        x = padded[images, channels, rows, cols]
    if flip:
        mask = torch.rand(b, generator=generator, device=dev) < 0.5
        x = torch.where(mask[:, None, None, None], x.flip(-1), x)
    return x


def batches(
    x: torch.Tensor,
    y: torch.Tensor,
    batch_size: int,
    generators: torch.Generator | Sequence[torch.Generator],
    *,
    crop_padding: int = 0,
    flip: bool = False,
) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    """One epoch of shuffled (and optionally augmented) minibatches, ceil(N / b) of them.

    With one ``generator`` the batches are ``(x_b, y_b)``; with a sequence of G generators (the
    members of an ensemble, one per seed) they are stacked ``(G, B, ...)`` / ``(G, B)``, member g
    drawn exactly as one generator alone would draw it (its own permutation, then its own
    augmentation per batch), so a member of an ensemble sees the minibatches of its solo run.
    Each generator lives on the data's device.
    """
    single = isinstance(generators, torch.Generator)
    gens = [generators] if single else list(generators)
    n = len(y)
    orders = [torch.randperm(n, generator=g, device=g.device) for g in gens]
    for start in range(0, n, batch_size):
        idx = [order[start : start + batch_size] for order in orders]
        if crop_padding or flip:
            xb = torch.stack([augment(x[i], g, crop_padding=crop_padding, flip=flip) for i, g in zip(idx, gens)])
        else:
            xb = x[torch.stack(idx)]
        yb = y[torch.stack(idx)]
        yield (xb[0], yb[0]) if single else (xb, yb)
