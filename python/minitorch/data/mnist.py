"""MNIST and Fashion-MNIST from the standard IDX files (gzipped or raw).

Where the files are looked for, in order: ``root`` (when given), ``$MINITORCH_DATA``,
the user cache directory (``~/.cache/minitorch``), and ``/usr/share/datasets/<name>``
(Debian's ``dataset-fashion-mnist`` installs there). In each place the files may sit
directly or in a ``<name>/`` subfolder (or ``<Name>/raw/``, torchvision's layout).
``download=True`` fetches MNIST into the cache with hash checks (needs ``pooch``).
"""
from __future__ import annotations

import gzip
import os
import struct
from pathlib import Path

import numpy as np

from .. import _C
from .dataset import Dataset

_FILES = {
    True: ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
    False: ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"),
}


class IDXError(ValueError):
    """A file that is not a valid IDX file (bad magic number, truncated data)."""


def read_idx(path) -> np.ndarray:
    """Reads an IDX file (``.gz`` or raw) into a uint8 NumPy array of its shape."""
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rb") as f:
            data = f.read()
    except (OSError, EOFError) as e:
        raise IDXError(f"read_idx: cannot read {path}: {e}") from e
    if len(data) < 4:
        raise IDXError(f"read_idx: {path} is too short to be an IDX file ({len(data)} bytes)")
    zero, dtype_code, ndim = struct.unpack(">HBB", data[:4])
    if zero != 0 or dtype_code != 0x08:
        raise IDXError(f"read_idx: {path} is not an unsigned-byte IDX file (magic {data[:4].hex()})")
    header = 4 + 4 * ndim
    if len(data) < header:
        raise IDXError(f"read_idx: {path} is truncated inside its header")
    shape = struct.unpack(f">{ndim}I", data[4:header])
    expected = int(np.prod(shape)) if shape else 1
    if len(data) - header != expected:
        raise IDXError(f"read_idx: {path} should hold {expected} bytes of data for shape {shape}, "
                       f"but has {len(data) - header} (truncated or corrupt)")
    return np.frombuffer(data, dtype=np.uint8, offset=header).reshape(shape)


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "minitorch"


class _IDXDataset(Dataset):
    name = ""          # folder name, e.g. "mnist"
    alt_names = ()     # other folder names seen in the wild
    mirrors: tuple = ()
    md5: dict = {}

    def __init__(self, root=None, train: bool = True, download: bool = False, transform=None,
                 target_transform=None):
        self.train = train
        self.transform = transform
        self.target_transform = target_transform
        folder = self._find(root)
        if folder is None and download:
            folder = self._download(Path(root) if root else _cache_dir())
        if folder is None:
            raise FileNotFoundError(self._not_found_message(root))
        images_file, labels_file = (self._file(folder, stem) for stem in _FILES[train])
        images, labels = read_idx(images_file), read_idx(labels_file)
        if images.ndim != 3 or labels.ndim != 1 or images.shape[0] != labels.shape[0]:
            raise IDXError(f"{type(self).__name__}: images {images.shape} and labels {labels.shape} do not match")
        self.root = folder
        # Whole data set in memory as float32 in [0, 1], shape (N, 1, 28, 28).
        x = images.astype(np.float32)[:, None, :, :] / 255.0
        self.data = _C.from_numpy(np.ascontiguousarray(x))
        self.targets = _C.from_numpy(labels.astype(np.int64))
        self.classes = list(self.class_names)

    # ---- locating files ----
    def _candidates(self, root):
        places = []
        if root is not None:
            places.append(("root", Path(root)))
        else:
            if os.environ.get("MINITORCH_DATA"):
                places.append(("$MINITORCH_DATA", Path(os.environ["MINITORCH_DATA"])))
            places.append(("cache", _cache_dir()))
            places.append(("system", Path("/usr/share/datasets")))
        out = []
        for _, base in places:
            out.append(base)
            for n in (self.name, *self.alt_names):
                out.extend([base / n, base / n / "raw"])
        return out

    @staticmethod
    def _file(folder: Path, stem: str):
        for name in (stem + ".gz", stem):
            if (folder / name).is_file():
                return folder / name
        return None

    def _find(self, root):
        for folder in self._candidates(root):
            if all(self._file(folder, s) for s in _FILES[self.train]):
                return folder
        return None

    def _not_found_message(self, root) -> str:
        looked = "\n".join(f"  - {p}" for p in self._candidates(root))
        files = ", ".join(f"{s}[.gz]" for s in _FILES[self.train])
        return (f"{type(self).__name__}: could not find {files}. Looked in:\n{looked}\n"
                f"Fix: pass root=DIR holding the IDX files, set MINITORCH_DATA=DIR, "
                + ("or use download=True." if self.mirrors else
                   f"or install Debian's package (apt-get install dataset-{self.name}).")
                + " (Looked in that order.)")

    def _download(self, root: Path):
        if not self.mirrors:
            raise RuntimeError(f"{type(self).__name__}: download=True is not supported; "
                               f"install the data (apt-get install dataset-{self.name}) or pass root=")
        try:
            import pooch
        except ImportError as e:
            raise RuntimeError(f"{type(self).__name__}: download=True needs pooch (pip install pooch)") from e
        target = root / self.name
        target.mkdir(parents=True, exist_ok=True)
        for stem in _FILES[True] + _FILES[False]:
            fname = stem + ".gz"
            last = None
            for mirror in self.mirrors:
                try:
                    pooch.retrieve(mirror + fname, known_hash=f"md5:{self.md5[fname]}", fname=fname, path=target,
                                   progressbar=False)
                    break
                except Exception as e:  # noqa: BLE001  (try the next mirror)
                    last = e
            else:
                raise RuntimeError(f"{type(self).__name__}: could not download {fname}: {last}")
        return target

    # ---- samples ----
    def __len__(self) -> int:
        return self.targets.shape[0]

    def __getitem__(self, index: int):
        img, label = self.data[index], int(self.targets[index].item())
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            label = self.target_transform(label)
        return img, label

    def get_batch(self, indices):
        """A whole batch in one C++ gather: images (B, 1, 28, 28) and int64 labels (B,)."""
        if self.transform is not None or self.target_transform is not None:
            raise AttributeError("get_batch is only available without transforms")
        return _C.index_select(self.data, 0, indices), _C.index_select(self.targets, 0, indices)

    def __repr__(self) -> str:
        split = "Train" if self.train else "Test"
        return f"Dataset {type(self).__name__}\n    Number of datapoints: {len(self)}\n    Root location: {self.root}\n    Split: {split}"


class MNIST(_IDXDataset):
    """The MNIST digits: 60,000 training and 10,000 test images, 28x28."""

    name = "mnist"
    alt_names = ("MNIST",)
    class_names = tuple(f"{i} - {w}" for i, w in enumerate(
        ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]))
    mirrors = ("https://ossci-datasets.s3.amazonaws.com/mnist/", "https://storage.googleapis.com/cvdf-datasets/mnist/")
    md5 = {
        "train-images-idx3-ubyte.gz": "f68b3c2dcbeaaa9fbdd348bbdeb94873",
        "train-labels-idx1-ubyte.gz": "d53e105ee54ea40749a09fcbcd1e9432",
        "t10k-images-idx3-ubyte.gz": "9fb629c4189551a2d022fa330f9573f3",
        "t10k-labels-idx1-ubyte.gz": "ec29112dd5afa0611ce80d1b7f02629c",
    }


class FashionMNIST(_IDXDataset):
    """Zalando's Fashion-MNIST: 10 kinds of clothing, same format as MNIST."""

    name = "fashion-mnist"
    alt_names = ("FashionMNIST", "fashion_mnist")
    class_names = ("T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag",
                   "Ankle boot")
    mirrors = ("http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/",)
    md5 = {
        "train-images-idx3-ubyte.gz": "8d4fb7e6c68d591d4c3dfef9ec88bf0d",
        "train-labels-idx1-ubyte.gz": "25c81989df183df01b3e8a0aad5dffbe",
        "t10k-images-idx3-ubyte.gz": "bef4ecab320f06d8554ea6380940ec79",
        "t10k-labels-idx1-ubyte.gz": "bb300cfdad3c16e7a12a480ee83cd310",
    }
