"""``minitorch.vision.datasets``: CIFAR-10 and CIFAR-100 (and minitorch's MNIST and
FashionMNIST under torchvision's module name).

CIFAR is read from the official "python version" (pickled batches in
``cifar-10-batches-py/`` or ``cifar-100-python/``), extracted or as the .tar.gz. Where it
is looked for, in order: ``root`` (when given), ``$MINITORCH_DATA``, the user cache
(``~/.cache/minitorch``), ``/usr/share/datasets``. Every file is checked against the MD5
torchvision publishes; files that do not match are skipped, with a warning, unless
``verify=False`` (a subset or your own batches in the same format). ``download=True``
fetches the tarball into ``root`` (or the cache) with pooch, checking its MD5. Without
network and without the files, the error says where it looked and how to fix it, as
MNIST's does.

A sample is ``(image, label)``: the image a PIL image when Pillow is installed (as
torchvision), else a NumPy (32, 32, 3) uint8 array; ``transforms.ToTensor()`` takes
either.
"""
from __future__ import annotations

import hashlib
import os
import pickle
import tarfile
import warnings
from pathlib import Path

import numpy as np

from ..data.dataset import Dataset
from ..data.mnist import MNIST, DatasetNotFoundError, DownloadError, FashionMNIST, _cache_dir, _short_reason

__all__ = ["CIFAR10", "CIFAR100", "DatasetNotFoundError", "DownloadError", "FashionMNIST", "MNIST"]


def _md5(path: Path) -> str:
    h = hashlib.md5(usedforsecurity=False)
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


class CIFAR10(Dataset):
    """CIFAR-10: 50,000 training and 10,000 test colour images, 32x32, in 10 classes.

    ``CIFAR10(root=None, train=True, transform=None, target_transform=None, download=False,
    verify=True)``, as torchvision's (``root`` may be left out: see the module docstring),
    plus ``verify``. ``data`` is a (N, 32, 32, 3) uint8 array, ``targets`` a list of ints,
    ``classes`` the class names.
    """

    base_folder = "cifar-10-batches-py"
    url = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"
    filename = "cifar-10-python.tar.gz"
    tgz_md5 = "c58f30108f718f92721af3b95e74349a"
    train_list = [
        ["data_batch_1", "c99cafc152244af753f735de768cd75f"],
        ["data_batch_2", "d4bba439e000b95fd0a9bffe97cbabec"],
        ["data_batch_3", "54ebc095f3ab1f0389bbae665268c751"],
        ["data_batch_4", "634d18415352ddfa80567beed471001a"],
        ["data_batch_5", "482c414d41f54cd18b22e5b47cb7c3cb"],
    ]
    test_list = [["test_batch", "40351d587109b95175f43aff81a1287e"]]
    meta = {"filename": "batches.meta", "key": "label_names", "md5": "5ff9c542aee3614f3951f8cda6e48888"}
    label_key = "labels"

    def __init__(self, root=None, train: bool = True, transform=None, target_transform=None,
                 download: bool = False, verify: bool = True):
        self.train, self.transform, self.target_transform, self.verify = train, transform, target_transform, verify
        skipped = []
        folder = self._find(root, skipped)
        if folder is None and download:
            folder = self._download(Path(root) if root is not None else _cache_dir(), skipped)
        if folder is None:
            raise DatasetNotFoundError(self._not_found_message(root, skipped), self._candidates(root), skipped,
                                       [self.filename, self.base_folder + "/"])
        if skipped:
            warnings.warn(f"{type(self).__name__}: skipped files that are not the official ones:\n"
                          + "\n".join(f"  - {n}" for n in skipped), stacklevel=2)
        self.root = folder.parent
        data, targets = [], []
        for name, _ in (self.train_list if train else self.test_list):
            entry = self._unpickle(folder / name)
            data.append(np.asarray(entry["data"], dtype=np.uint8).reshape(-1, 3, 32, 32))
            targets.extend(int(t) for t in entry[self.label_key])
        self.data = np.ascontiguousarray(np.vstack(data).transpose(0, 2, 3, 1))  # (N, 32, 32, 3), HWC
        self.targets = targets
        self.classes = list(self._unpickle(folder / self.meta["filename"])[self.meta["key"]])
        self.class_to_idx = {c: i for i, c in enumerate(self.classes)}

    @staticmethod
    def _unpickle(path: Path) -> dict:
        with open(path, "rb") as f:
            entry = pickle.load(f, encoding="latin1")
        if not isinstance(entry, dict):
            raise ValueError(f"{path}: not a CIFAR batch (a pickled dict expected, got {type(entry).__name__})")
        return entry

    # ---- locating, checking, extracting ----
    def _files(self):
        return self.train_list + self.test_list + [[self.meta["filename"], self.meta["md5"]]]

    def _candidates(self, root):
        if root is not None:
            return [Path(root)]
        places = [Path(os.environ["MINITORCH_DATA"])] if os.environ.get("MINITORCH_DATA") else []
        return places + [_cache_dir(), Path("/usr/share/datasets")]

    def _check_folder(self, folder: Path, skipped) -> bool:
        """Whether ``folder`` holds every batch file (each with its MD5 when verifying)."""
        if not all((folder / name).is_file() for name, _ in self._files()):
            return False
        if self.verify:
            for name, md5 in self._files():
                if _md5(folder / name) != md5:
                    skipped.append(f"{folder / name}: its MD5 matches no official copy; pass verify=False to use "
                                   f"batches of your own")
                    return False
        return True

    def _find(self, root, skipped):
        for base in self._candidates(root):
            folder = base / self.base_folder
            if self._check_folder(folder, skipped):
                return folder
            tarball = base / self.filename
            if tarball.is_file():
                if self.verify and _md5(tarball) != self.tgz_md5:
                    skipped.append(f"{tarball}: its MD5 is not the official archive's; pass verify=False to use it")
                    continue
                self._extract(tarball, base)
                if self._check_folder(folder, skipped):
                    return folder
        return None

    def _extract(self, tarball: Path, into: Path) -> None:
        with tarfile.open(tarball, "r:gz") as tar:
            members = [m for m in tar.getmembers() if m.name.split("/")[0] == self.base_folder]
            for m in members:  # nothing outside base_folder, no links
                if ".." in Path(m.name).parts or not (m.isfile() or m.isdir()):
                    raise ValueError(f"{tarball}: unexpected member {m.name!r} in the archive")
            tar.extractall(into, members=members)

    def _not_found_message(self, root, skipped) -> str:
        looked = "\n".join(f"  - {p / self.base_folder} (or {p / self.filename})" for p in self._candidates(root))
        msg = (f"{type(self).__name__}: could not find the data set (the python version: {self.base_folder}/, or "
               f"{self.filename}). Looked in (in that order):\n{looked}\n")
        if skipped:
            msg += "Found and skipped:\n" + "\n".join(f"  - {n}" for n in skipped) + "\n"
        target = Path(root) if root is not None else _cache_dir()
        return msg + (f"Fix: pass root=DIR (a folder holding {self.base_folder}/ or {self.filename}), set "
                      f"MINITORCH_DATA=DIR, or pass download=True to fetch {self.url} into {target}.")

    def _download(self, root: Path, skipped):
        """Fetches the tarball into ``root`` (MD5 checked by pooch), extracts it."""
        try:
            import pooch
        except ImportError as e:
            raise DownloadError(f"{type(self).__name__}: download=True needs pooch (pip install pooch); or fetch "
                                f"{self.url} by hand into {root}", [self.url], root) from e
        root.mkdir(parents=True, exist_ok=True)
        url = self.url
        if os.environ.get("MINITORCH_DATA_MIRROR"):
            url = os.environ["MINITORCH_DATA_MIRROR"].rstrip("/") + "/" + self.filename
        try:
            pooch.retrieve(url, known_hash=f"md5:{self.tgz_md5}", fname=self.filename, path=root,
                           progressbar=False)
        except Exception as e:  # noqa: BLE001  (network, HTTP or hash errors)
            failure = f"  - {url}: {_short_reason(e)}"
            raise DownloadError(f"{type(self).__name__}: could not download {self.filename} (offline, or the "
                                f"address is blocked?):\n{failure}\nFix: fetch it by hand into {root} (or any "
                                f"folder, then pass root=DIR):\n  {url}", [url], root, [failure]) from e
        self._extract(root / self.filename, root)
        folder = root / self.base_folder
        return folder if self._check_folder(folder, skipped) else None

    # ---- samples ----
    def __len__(self) -> int:
        return len(self.data)

    def __getitem__(self, index: int):
        img, target = self.data[index], self.targets[index]
        try:
            from PIL import Image
        except ImportError:
            img = img.copy()
        else:
            img = Image.fromarray(img)
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def extra_repr(self) -> str:
        return f"Split: {'Train' if self.train else 'Test'}"

    def __repr__(self) -> str:
        lines = [f"Number of datapoints: {len(self)}", f"Root location: {self.root}", self.extra_repr()]
        if self.transform is not None:
            lines.append("StandardTransform\nTransform: " + repr(self.transform).replace("\n", "\n    "))
        return f"Dataset {type(self).__name__}\n" + "\n".join("    " + line for line in lines)


class CIFAR100(CIFAR10):
    """CIFAR-100: the same images in 100 fine classes (``targets``), grouped in 20 coarse
    ones (the batches' ``coarse_labels``, not used as targets, as in torchvision)."""

    base_folder = "cifar-100-python"
    url = "https://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz"
    filename = "cifar-100-python.tar.gz"
    tgz_md5 = "eb9058c3a382ffc7106e4002c42a8d85"
    train_list = [["train", "16019d7e3df5f24257cddd939b257f8d"]]
    test_list = [["test", "f0ef6b0ae62326f3e7ffdfab6717acfc"]]
    meta = {"filename": "meta", "key": "fine_label_names", "md5": "7973b15100ade9c7d40fb424638fde48"}
    label_key = "fine_labels"
