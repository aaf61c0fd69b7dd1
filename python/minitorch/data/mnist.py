"""MNIST and Fashion-MNIST from the standard IDX files (gzipped or raw).

Where the files are looked for, in order: ``root`` (when given), ``$MINITORCH_DATA``,
the user cache directory (``~/.cache/minitorch``), and ``/usr/share/datasets/<name>``
(Debian's ``dataset-fashion-mnist`` installs there). In each place the files may sit
directly or in a per-dataset subfolder (``MNIST/``, ``FashionMNIST/``, torchvision's
``<Name>/raw/``, or ``mnist/``, ``fashion-mnist/``).

Both data sets use the same four file names, so a name proves nothing: every file is
identified by the MD5 of its decompressed content before it is used. Files that belong
to the other data set (or to the other split) are skipped with a warning; files that
match no known copy are skipped too, unless ``verify=False`` (your own IDX files).
``download=True`` fetches the files into the cache with hash checks (needs ``pooch``);
``$MINITORCH_DATA_MIRROR`` replaces the built-in download addresses.
"""
from __future__ import annotations

import gzip
import hashlib
import os
import struct
import warnings
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
    return _parse_idx(_read_content(path), path)


def _read_content(path) -> bytes:
    """The file's IDX bytes (decompressed when the name ends in ``.gz``)."""
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rb") as f:
            return f.read()
    except (OSError, EOFError) as e:
        raise IDXError(f"read_idx: cannot read {path}: {e}") from e


def _parse_idx(data: bytes, path) -> np.ndarray:
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


# MD5 of the *decompressed* content of every known file. The content, not the .gz,
# is the identity: gzip files of the same data differ byte-wise (Debian's Fashion-MNIST
# .gz files are not Zalando's), their content does not.
_CONTENT_MD5 = {
    "MNIST": {
        "train-images-idx3-ubyte": "6bbc9ace898e44ae57da46a324031adb",
        "train-labels-idx1-ubyte": "a25bea736e30d166cdddb491f175f624",
        "t10k-images-idx3-ubyte": "2646ac647ad5339dbf082846283269ea",
        "t10k-labels-idx1-ubyte": "27ae3e4e09519cfbb04c329615203637",
    },
    "FashionMNIST": {
        "train-images-idx3-ubyte": "f4a8712d7a061bf5bd6d2ca38dc4d50a",
        "train-labels-idx1-ubyte": "9018921c3c673c538a1fc5bad174d6f9",
        "t10k-images-idx3-ubyte": "8181f5470baa50b63fa0f6fddb340f0a",
        "t10k-labels-idx1-ubyte": "15d484375f8d13e6eb1aabb0c3f46965",
    },
}


def _identify(content: bytes):
    """(data set, file stem) of a known file's content, else None."""
    digest = hashlib.md5(content, usedforsecurity=False).hexdigest()
    for dataset, files in _CONTENT_MD5.items():
        for stem, md5 in files.items():
            if md5 == digest:
                return dataset, stem
    return None


def _short_reason(e: Exception) -> str:
    """One line for a failed download (network libraries nest their causes many levels deep)."""
    text = str(e)
    for needle, reason in (("NameResolution", "could not resolve the host name"),
                           ("name resolution", "could not resolve the host name"),
                           ("Name or service not known", "could not resolve the host name"),
                           ("Connection refused", "connection refused"),
                           ("timed out", "timed out"),
                           ("Failed to establish a new connection", "could not connect"),
                           ("hash", "the file's MD5 does not match (corrupt or changed download)")):
        if needle in text:
            return f"{reason} ({type(e).__name__})"
    first = text.splitlines()[0] if text else ""
    return f"{type(e).__name__}: {first[:160]}"


class DownloadError(RuntimeError):
    """``download=True`` could not fetch a file; ``urls`` and ``target`` say what to fetch by hand."""

    def __init__(self, message: str, urls=(), target=None, failures=()):
        super().__init__(message)
        self.urls, self.target, self.failures = list(urls), target, list(failures)


class DatasetNotFoundError(FileNotFoundError):
    """No folder holds the data set's files; ``looked`` lists where, ``skipped`` what was rejected."""

    def __init__(self, message: str, looked=(), skipped=(), files=()):
        super().__init__(message)
        self.looked, self.skipped, self.files = list(looked), list(skipped), list(files)


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "minitorch"


class _IDXDataset(Dataset):
    title = ""         # the data set's name, a key of _CONTENT_MD5
    name = ""          # folder name, e.g. "mnist"
    alt_names = ()     # other folder names seen in the wild
    mirrors: tuple = ()
    md5: dict = {}     # MD5 of each canonical .gz (what download=True checks)

    def __init__(self, root=None, train: bool = True, download: bool = False, transform=None,
                 target_transform=None, verify: bool = True):
        self.train = train
        self.transform = transform
        self.target_transform = target_transform
        self.verify = verify
        skipped = []
        found = self._load(root, skipped)
        if found is None and download:
            found = self._load_folder(self._download(Path(root) if root else _cache_dir()), skipped)
        if found is None:
            raise DatasetNotFoundError(self._not_found_message(root, skipped), self._candidates(root), skipped,
                                       [s + "[.gz]" for s in _FILES[train]])
        if skipped:
            warnings.warn(f"{type(self).__name__}: skipped files that are not {self.title}'s "
                          f"{self._split()} files:\n" + "\n".join(f"  - {n}" for n in skipped), stacklevel=2)
        folder, (images, labels) = found
        if images.ndim != 3 or labels.ndim != 1 or images.shape[0] != labels.shape[0]:
            raise IDXError(f"{type(self).__name__}: images {images.shape} and labels {labels.shape} do not match")
        self.root = folder
        # Whole data set in memory as float32 in [0, 1], shape (N, 1, 28, 28).
        x = images.astype(np.float32)[:, None, :, :] / 255.0
        self.data = _C.from_numpy(np.ascontiguousarray(x))
        self.targets = _C.from_numpy(labels.astype(np.int64))
        self.classes = list(self.class_names)

    def _split(self) -> str:
        return "training" if self.train else "test"

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

    def _load(self, root, skipped):
        """(folder, (images, labels)) from the first place whose files check out, else None."""
        for folder in self._candidates(root):
            if all(self._file(folder, s) for s in _FILES[self.train]):
                found = self._load_folder(folder, skipped)
                if found is not None:
                    return found
        return None

    def _load_folder(self, folder: Path, skipped):
        arrays = []
        for stem in _FILES[self.train]:
            path = self._file(folder, stem)
            content = _read_content(path)
            array = _parse_idx(content, path)  # a corrupt file raises IDXError here
            problem = self._check(content, stem)
            if problem:
                skipped.append(f"{path}: {problem}")
                return None
            arrays.append(array)
        return folder, tuple(arrays)

    def _check(self, content: bytes, stem: str):
        """Why this content cannot be used as ``stem`` of this data set, or None if it can."""
        known = _identify(content)
        if known == (self.title, stem):
            return None
        if known is not None:
            dataset, other = known
            return f"holds {dataset}'s {other}, not {self.title}'s {stem}"
        if self.verify:
            return (f"its content matches no known copy of {self.title}'s {stem} (MD5 check); "
                    f"pass verify=False to use IDX files of your own")
        return None

    def _not_found_message(self, root, skipped) -> str:
        looked = "\n".join(f"  - {p}" for p in self._candidates(root))
        files = ", ".join(f"{s}[.gz]" for s in _FILES[self.train])
        msg = f"{type(self).__name__}: could not find {self.title}'s {files}. Looked in (in that order):\n{looked}\n"
        if skipped:
            msg += "Found and skipped:\n" + "\n".join(f"  - {n}" for n in skipped) + "\n"
        target = (Path(root) if root is not None else _cache_dir()) / self.name
        return msg + ("Fix: pass root=DIR (a folder holding the IDX files), set MINITORCH_DATA=DIR, "
                      f"or pass download=True to fetch them into {target}.")

    def _urls(self):
        mirrors = [os.environ["MINITORCH_DATA_MIRROR"]] if os.environ.get("MINITORCH_DATA_MIRROR") else self.mirrors
        return [m.rstrip("/") + "/" for m in mirrors]

    def _download(self, root: Path) -> Path:
        """Fetches the four .gz files into ``root/<name>``, each checked against its MD5."""
        try:
            import pooch
        except ImportError as e:
            raise DownloadError(f"{type(self).__name__}: download=True needs pooch (pip install pooch)") from e
        target = root / self.name
        target.mkdir(parents=True, exist_ok=True)
        mirrors = self._urls()
        for stem in _FILES[True] + _FILES[False]:
            fname = stem + ".gz"
            failures = []
            for mirror in mirrors:
                try:
                    pooch.retrieve(mirror + fname, known_hash=f"md5:{self.md5[fname]}", fname=fname, path=target,
                                   progressbar=False)
                    break
                except Exception as e:  # noqa: BLE001  (network, HTTP or hash errors: try the next mirror)
                    failures.append(f"  - {mirror}{fname}: {_short_reason(e)}")
            else:
                urls = [m + stem + ".gz" for m in mirrors[:1] for stem in _FILES[True] + _FILES[False]]
                raise DownloadError(
                    f"{type(self).__name__}: could not download {fname} (offline, or the address is blocked?):\n"
                    + "\n".join(failures)
                    + f"\nFix: fetch the four files by hand into {target} (or any folder, then pass root=DIR):\n"
                    + "\n".join(f"  {u}" for u in urls), urls, target, failures)
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
    """The MNIST digits: 60,000 training and 10,000 test images, 28x28.

    ``MNIST(root=None, train=True, download=False, transform=None, target_transform=None,
    verify=True)``, as torchvision's, plus ``verify``: with ``verify=False`` IDX files that
    match no known copy (a subset, your own data) are used too; another data set's files
    never are.
    """

    title = "MNIST"
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

    title = "FashionMNIST"
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
