"""``minitorch.vision.datasets.CIFAR10`` / ``CIFAR100`` on tiny fake data sets in the
official pickle format, made in tmp_path (never downloaded): the extracted folder and the
.tar.gz, samples and transforms, the DataLoader, the MD5 check (``verify``), and the
offline errors with their guidance; ``download=True`` through a stand-in pooch."""
from __future__ import annotations

import io
import pickle
import sys
import tarfile
import types

import numpy as np
import pytest

import minitorch
from minitorch.data import DataLoader
from minitorch.vision import datasets, transforms


def _batch(n, seed, label_key, classes):
    rng = np.random.default_rng(seed)
    entry = {"data": rng.integers(0, 256, (n, 3072)).astype(np.uint8),
             label_key: rng.integers(0, classes, n).tolist(), "batch_label": f"fake batch {seed}"}
    if label_key == "fine_labels":
        entry["coarse_labels"] = [t // 5 for t in entry["fine_labels"]]
    return entry


def make_cifar(root, cls=datasets.CIFAR10, n=3, tarball=True):
    """A fake data set of ``n`` images per batch file; returns the batches by name."""
    classes = 10 if cls is datasets.CIFAR10 else 100
    files = {}
    for i, (name, _) in enumerate(cls.train_list + cls.test_list):
        files[name] = _batch(n, i, cls.label_key, classes)
    files[cls.meta["filename"]] = {cls.meta["key"]: [f"class{i}" for i in range(classes)]}
    root.mkdir(parents=True, exist_ok=True)
    if tarball:
        with tarfile.open(root / cls.filename, "w:gz") as tar:
            for name, entry in files.items():
                blob = pickle.dumps(entry)
                info = tarfile.TarInfo(f"{cls.base_folder}/{name}")
                info.size = len(blob)
                tar.addfile(info, io.BytesIO(blob))
    else:
        (root / cls.base_folder).mkdir()
        for name, entry in files.items():
            (root / cls.base_folder / name).write_bytes(pickle.dumps(entry))
    return files


@pytest.mark.parametrize("tarball", [True, False])
def test_cifar10_from_fake_files(tmp_path, tarball):
    files = make_cifar(tmp_path, tarball=tarball)
    train = datasets.CIFAR10(tmp_path, train=True, verify=False)
    test = datasets.CIFAR10(root=str(tmp_path), train=False, verify=False)
    assert len(train) == 15 and len(test) == 3
    assert train.data.shape == (15, 32, 32, 3) and train.data.dtype == np.uint8
    assert train.classes[:2] == ["class0", "class1"] and train.class_to_idx["class3"] == 3
    want = np.concatenate([files[f"data_batch_{i}"]["data"] for i in range(1, 6)]).reshape(-1, 3, 32, 32)
    np.testing.assert_array_equal(train.data, want.transpose(0, 2, 3, 1))
    assert train.targets == sum((files[f"data_batch_{i}"]["labels"] for i in range(1, 6)), [])
    image, label = test[1]
    assert label == files["test_batch"]["labels"][1] and isinstance(label, int)
    np.testing.assert_array_equal(np.asarray(image), test.data[1])  # a PIL image, or the array without Pillow
    assert "Number of datapoints: 15" in repr(train)


def test_cifar_transforms_and_dataloader(tmp_path):
    make_cifar(tmp_path)
    tf = transforms.Compose([transforms.RandomCrop(32, padding=4), transforms.RandomHorizontalFlip(),
                             transforms.ToTensor(), transforms.Normalize((0.5,) * 3, (0.5,) * 3)])
    ds = datasets.CIFAR10(tmp_path, train=True, transform=tf, target_transform=lambda t: t + 100, verify=False)
    x, y = ds[0]
    assert tuple(x.shape) == (3, 32, 32) and x.dtype == minitorch.float32 and y >= 100
    images, labels = next(iter(DataLoader(ds, batch_size=4, shuffle=True)))
    assert tuple(images.shape) == (4, 3, 32, 32) and labels.dtype == minitorch.int64
    plain = datasets.CIFAR10(tmp_path, train=False, transform=transforms.ToTensor(), verify=False)
    np.testing.assert_allclose(plain[0][0].numpy(), plain.data[0].transpose(2, 0, 1) / np.float32(255), rtol=1e-6)


def test_cifar100(tmp_path):
    files = make_cifar(tmp_path, datasets.CIFAR100, n=4)
    ds = datasets.CIFAR100(tmp_path, verify=False)
    assert len(ds) == 4 and len(ds.classes) == 100
    assert ds.targets == files["train"]["fine_labels"]


def test_verify_rejects_unofficial_files(tmp_path):
    make_cifar(tmp_path)
    with pytest.raises(FileNotFoundError, match="(?s)Found and skipped.*not the official archive.*verify=False"):
        datasets.CIFAR10(tmp_path)


def test_not_found_guidance(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pooch", None)  # as if pooch were not installed
    with pytest.raises(datasets.DatasetNotFoundError) as info:
        datasets.CIFAR10(tmp_path / "nothing")
    msg = str(info.value)
    assert "cifar-10-batches-py" in msg and "download=True" in msg and "MINITORCH_DATA" in msg
    with pytest.raises(datasets.DownloadError, match="pip install pooch"):
        datasets.CIFAR10(tmp_path / "nothing", download=True)


def test_download_with_a_stand_in_pooch(tmp_path, monkeypatch):
    source = tmp_path / "server"
    make_cifar(source)
    calls = []

    def retrieve(url, known_hash, fname, path, progressbar):
        calls.append((url, known_hash))
        (path / fname).write_bytes((source / fname).read_bytes())
        return str(path / fname)

    monkeypatch.setitem(sys.modules, "pooch", types.SimpleNamespace(retrieve=retrieve))
    ds = datasets.CIFAR10(tmp_path / "data", download=True, verify=False)
    assert len(ds) == 15
    assert calls == [(datasets.CIFAR10.url, "md5:" + datasets.CIFAR10.tgz_md5)]

    def offline(*args, **kwargs):
        raise ConnectionError("Failed to establish a new connection: [Errno -3] Temporary failure in name resolution")

    monkeypatch.setitem(sys.modules, "pooch", types.SimpleNamespace(retrieve=offline))
    with pytest.raises(datasets.DownloadError, match="could not resolve the host name") as info:
        datasets.CIFAR100(tmp_path / "other", download=True)
    assert "fetch it by hand" in str(info.value) and info.value.urls == [datasets.CIFAR100.url]


def test_lazy_import():
    assert minitorch.vision.datasets is datasets
    assert minitorch.vision.datasets.MNIST is minitorch.data.MNIST
