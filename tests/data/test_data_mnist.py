"""The IDX reader and the MNIST / Fashion-MNIST datasets.

Tiny IDX files are written by the tests themselves. The real data sets are used only
when present: MNIST through ``$MINITORCH_DATA`` (never a hard-coded path), and
Fashion-MNIST from Debian's ``dataset-fashion-mnist`` under /usr/share/datasets.
"""
from __future__ import annotations

import gzip
import hashlib
import os
import struct
from pathlib import Path

import numpy as np
import pytest

import minitorch
from minitorch.data import MNIST, DataLoader, DatasetNotFoundError, FashionMNIST, IDXError, read_idx

FASHION_DIR = Path("/usr/share/datasets/fashion-mnist")

needs_mnist = pytest.mark.skipif(not os.environ.get("MINITORCH_DATA"),
                                 reason="MINITORCH_DATA is not set (point it at a folder with the MNIST IDX files)")
needs_fashion = pytest.mark.skipif(not FASHION_DIR.is_dir(),
                                   reason=f"{FASHION_DIR} is absent (apt-get install dataset-fashion-mnist)")


def to_np(t) -> np.ndarray:
    return np.array(t.detach().cpu().numpy(), copy=True)


def idx_bytes(arr: np.ndarray) -> bytes:
    arr = np.asarray(arr, dtype=np.uint8)
    return struct.pack(">HBB", 0, 0x08, arr.ndim) + struct.pack(f">{arr.ndim}I", *arr.shape) + arr.tobytes()


def write_idx(path: Path, arr: np.ndarray, gz: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = idx_bytes(arr)
    if gz:
        path = path.with_name(path.name + ".gz")
        with gzip.open(path, "wb") as f:
            f.write(data)
    else:
        path.write_bytes(data)
    return path


def tiny_split(n: int, seed: int):
    rng = np.random.default_rng(seed)
    images = rng.integers(0, 256, size=(n, 28, 28), dtype=np.uint8)
    images[0, 0, 0], images[0, 0, 1] = 0, 255
    labels = rng.integers(0, 10, size=n, dtype=np.uint8)
    return images, labels


def write_mnist(folder: Path, gz: bool, n_train: int = 12, n_test: int = 5):
    tr, te = tiny_split(n_train, 0), tiny_split(n_test, 1)
    write_idx(folder / "train-images-idx3-ubyte", tr[0], gz)
    write_idx(folder / "train-labels-idx1-ubyte", tr[1], gz)
    write_idx(folder / "t10k-images-idx3-ubyte", te[0], gz)
    write_idx(folder / "t10k-labels-idx1-ubyte", te[1], gz)
    return tr, te


# ---------------------------------------------------------------- read_idx ----

@pytest.mark.parametrize("gz", [False, True], ids=["raw", "gz"])
@pytest.mark.parametrize("shape", [(7,), (3, 4, 5), (2, 3), (0,), ()])
def test_read_idx_round_trip(tmp_path, gz, shape):
    arr = np.random.default_rng(0).integers(0, 256, size=shape, dtype=np.uint8)
    path = write_idx(tmp_path / "a-idx-ubyte", arr, gz)
    got = read_idx(path)
    assert got.dtype == np.uint8
    assert got.shape == shape
    np.testing.assert_array_equal(got, arr)


def test_read_idx_accepts_str_path(tmp_path):
    arr = np.arange(6, dtype=np.uint8).reshape(2, 3)
    path = write_idx(tmp_path / "s-idx2-ubyte", arr)
    np.testing.assert_array_equal(read_idx(str(path)), arr)


def test_idx_error_is_value_error():
    assert issubclass(IDXError, ValueError)


@pytest.mark.parametrize("gz", [False, True], ids=["raw", "gz"])
@pytest.mark.parametrize("magic", [b"\x00\x00\x0d\x01", b"\x01\x00\x08\x01", b"\x1f\x8b\x08\x01", b"PK\x03\x04"])
def test_read_idx_bad_magic(tmp_path, gz, magic):
    data = magic + struct.pack(">I", 3) + bytes(3 * 4)
    path = tmp_path / ("bad.gz" if gz else "bad")
    path.write_bytes(gzip.compress(data) if gz else data)
    with pytest.raises(IDXError, match="magic"):
        read_idx(path)


@pytest.mark.parametrize("gz", [False, True], ids=["raw", "gz"])
def test_read_idx_truncated_data(tmp_path, gz):
    data = idx_bytes(np.zeros((4, 5, 5), np.uint8))[:-7]
    path = tmp_path / ("t.gz" if gz else "t")
    path.write_bytes(gzip.compress(data) if gz else data)
    with pytest.raises(IDXError, match="truncated"):
        read_idx(path)


def test_read_idx_truncated_header(tmp_path):
    path = tmp_path / "h"
    path.write_bytes(struct.pack(">HBB", 0, 8, 3) + struct.pack(">I", 10))
    with pytest.raises(IDXError, match="header"):
        read_idx(path)


def test_read_idx_too_short(tmp_path):
    path = tmp_path / "s"
    path.write_bytes(b"\x00\x00")
    with pytest.raises(IDXError, match="too short"):
        read_idx(path)


def test_read_idx_trailing_bytes(tmp_path):
    path = tmp_path / "long"
    path.write_bytes(idx_bytes(np.zeros(4, np.uint8)) + b"\x00\x00")
    with pytest.raises(IDXError):
        read_idx(path)


def test_read_idx_corrupt_gzip(tmp_path):
    path = tmp_path / "c.gz"
    full = gzip.compress(idx_bytes(np.arange(200, dtype=np.uint8)))
    path.write_bytes(full[: len(full) // 2])
    with pytest.raises(IDXError):
        read_idx(path)


def test_read_idx_missing_file_is_error(tmp_path):
    with pytest.raises((IDXError, FileNotFoundError)):
        read_idx(tmp_path / "nope")


# ---------------------------------------------------------------- MNIST on tiny files ----

@pytest.mark.parametrize("gz", [False, True], ids=["raw", "gz"])
@pytest.mark.parametrize("layout", ["flat", "mnist", "MNIST/raw"])
def test_mnist_tiny_files(tmp_path, gz, layout):
    folder = tmp_path if layout == "flat" else tmp_path / layout
    (tr_x, tr_y), (te_x, te_y) = write_mnist(folder, gz)
    train = MNIST(root=tmp_path, train=True, verify=False)
    test = MNIST(root=str(tmp_path), train=False, verify=False)
    assert Path(train.root) == folder
    assert len(train) == 12 and len(test) == 5
    assert tuple(train.data.shape) == (12, 1, 28, 28)
    assert train.data.dtype == minitorch.float32 and train.targets.dtype == minitorch.int64
    np.testing.assert_allclose(to_np(train.data), tr_x[:, None].astype(np.float32) / 255.0, rtol=1e-7)
    np.testing.assert_array_equal(to_np(train.targets), tr_y.astype(np.int64))
    np.testing.assert_allclose(to_np(test.data)[:, 0], te_x.astype(np.float32) / 255.0, rtol=1e-7)
    np.testing.assert_array_equal(to_np(test.targets), te_y.astype(np.int64))
    img, label = train[0]
    assert tuple(img.shape) == (1, 28, 28)
    assert isinstance(label, int) and label == int(tr_y[0])
    assert to_np(img)[0, 0, 0] == 0.0 and to_np(img)[0, 0, 1] == 1.0
    assert len(train.classes) == 10 and train.classes[3] == "3 - three"


def test_mnist_prefers_gz_and_root_over_env(tmp_path, monkeypatch):
    write_mnist(tmp_path / "root", gz=True, n_train=6)
    write_mnist(tmp_path / "env", gz=False, n_train=9)
    monkeypatch.setenv("MINITORCH_DATA", str(tmp_path / "env"))
    assert len(MNIST(root=tmp_path / "root", verify=False)) == 6
    assert len(MNIST(verify=False)) == 9  # no root: $MINITORCH_DATA is searched


def test_mnist_dataloader_fast_path_matches_getitem(tmp_path):
    write_mnist(tmp_path, gz=True, n_train=12)
    ds = MNIST(root=tmp_path, verify=False)
    x, y = next(iter(DataLoader(ds, batch_size=5, shuffle=True, generator=minitorch.data.Generator(0))))
    order = np.random.default_rng(0).permutation(12)[:5]
    assert tuple(x.shape) == (5, 1, 28, 28) and y.dtype == minitorch.int64
    for row, i in enumerate(order):
        img, label = ds[int(i)]
        np.testing.assert_array_equal(to_np(x)[row], to_np(img))
        assert int(to_np(y)[row]) == label


def test_mnist_transforms(tmp_path):
    (tr_x, tr_y), _ = write_mnist(tmp_path, gz=False)
    ds = MNIST(root=tmp_path, transform=lambda img: img * 2, target_transform=lambda t: t + 100, verify=False)
    img, label = ds[1]
    np.testing.assert_allclose(to_np(img)[0], tr_x[1].astype(np.float32) / 255.0 * 2, rtol=1e-6)
    assert label == int(tr_y[1]) + 100
    # with transforms, the loader goes sample by sample and applies them
    x, y = next(iter(DataLoader(ds, batch_size=3)))
    np.testing.assert_array_equal(to_np(y), tr_y[:3].astype(np.int64) + 100)


def test_mnist_mismatched_counts(tmp_path):
    write_mnist(tmp_path, gz=False, n_train=12)
    write_idx(tmp_path / "train-labels-idx1-ubyte", np.zeros(11, np.uint8))
    with pytest.raises(IDXError, match="do not match"):
        MNIST(root=tmp_path, verify=False)


def test_mnist_corrupt_file(tmp_path):
    write_mnist(tmp_path, gz=False)
    p = tmp_path / "train-images-idx3-ubyte"
    p.write_bytes(p.read_bytes()[:-100])
    with pytest.raises(IDXError, match="truncated"):
        MNIST(root=tmp_path, verify=False)


def test_mnist_missing_data_message(tmp_path):
    with pytest.raises(FileNotFoundError) as e:
        MNIST(root=tmp_path, verify=False)
    msg = str(e.value)
    assert "train-images-idx3-ubyte" in msg and "train-labels-idx1-ubyte" in msg
    for place in (tmp_path, tmp_path / "mnist", tmp_path / "MNIST" / "raw"):
        assert f"  - {place}\n" in msg, place
    assert "MINITORCH_DATA" in msg
    assert "download=True" in msg


@pytest.mark.skipif(any((Path("/usr/share/datasets") / sub / "t10k-labels-idx1-ubyte.gz").exists()
                        for sub in ("", "mnist", "MNIST", "MNIST/raw")),
                    reason="MNIST is installed under /usr/share/datasets, so the search succeeds")
def test_mnist_missing_data_message_without_root(tmp_path, monkeypatch):
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("MINITORCH_DATA", str(empty))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    with pytest.raises(FileNotFoundError) as e:
        MNIST(train=False)
    msg = str(e.value)
    assert "t10k-images-idx3-ubyte" in msg
    assert f"  - {empty}\n" in msg
    assert f"  - {tmp_path / 'cache' / 'minitorch'}\n" in msg
    assert "/usr/share/datasets" in msg
    assert "MINITORCH_DATA" in msg and "download=True" in msg


def test_only_train_files_present_test_split_missing(tmp_path):
    tr = tiny_split(4, 0)
    write_idx(tmp_path / "train-images-idx3-ubyte", tr[0])
    write_idx(tmp_path / "train-labels-idx1-ubyte", tr[1])
    assert len(MNIST(root=tmp_path, train=True, verify=False)) == 4
    with pytest.raises(FileNotFoundError, match="t10k"):
        MNIST(root=tmp_path, train=False, verify=False)


def test_fashion_mnist_missing_data_message(tmp_path):
    with pytest.raises(FileNotFoundError) as e:
        FashionMNIST(root=tmp_path, verify=False)
    msg = str(e.value)
    assert "MINITORCH_DATA" in msg
    assert f"  - {tmp_path / 'fashion-mnist'}\n" in msg


def test_fashion_mnist_tiny_files(tmp_path):
    (tr_x, tr_y), _ = write_mnist(tmp_path / "fashion-mnist", gz=True)
    ds = FashionMNIST(root=tmp_path, verify=False)
    assert len(ds) == 12
    np.testing.assert_array_equal(to_np(ds.targets), tr_y.astype(np.int64))
    assert ds.classes[9] == "Ankle boot"


# ---------------------------------------------------------------- which data set a file is ----
# Both data sets use the same file names: files are identified by the MD5 of their content.

def _register_as(monkeypatch, *pairs):
    """Pretends the tiny files in each (data set, folder) pair are that data set's real files."""
    from minitorch.data import mnist

    table = {k: dict(v) for k, v in mnist._CONTENT_MD5.items()}
    for dataset, folder in pairs:
        for path in folder.iterdir():
            if path.is_file():
                table[dataset][path.name.removesuffix(".gz")] = hashlib.md5(mnist._read_content(path)).hexdigest()
    monkeypatch.setattr(mnist, "_CONTENT_MD5", table)


@pytest.mark.parametrize("gz", [False, True], ids=["raw", "gz"])
def test_unknown_files_are_refused_by_default(tmp_path, gz):
    write_mnist(tmp_path, gz)
    with pytest.raises(FileNotFoundError) as e:
        MNIST(root=tmp_path)
    assert isinstance(e.value, DatasetNotFoundError)
    msg = str(e.value)
    assert "matches no known copy" in msg and "verify=False" in msg
    assert e.value.skipped and str(tmp_path / "train-images-idx3-ubyte") in e.value.skipped[0]


@pytest.mark.parametrize("verify", [True, False])
def test_mnist_files_never_load_as_fashion_mnist(tmp_path, monkeypatch, verify):
    write_mnist(tmp_path, gz=True)
    _register_as(monkeypatch, ("MNIST", tmp_path))
    assert len(MNIST(root=tmp_path)) == 12  # they are MNIST's ...
    with pytest.raises(DatasetNotFoundError) as e:  # ... so never Fashion-MNIST's, even unverified
        FashionMNIST(root=tmp_path, verify=verify)
    assert "holds MNIST's train-images-idx3-ubyte, not FashionMNIST's" in str(e.value)


def test_fashion_mnist_per_dataset_folder_beside_mnist(tmp_path, monkeypatch):
    """torchvision's layout: <root>/MNIST and <root>/FashionMNIST side by side, plus flat MNIST."""
    write_mnist(tmp_path, gz=True, n_train=12)
    (tr_x, _), _ = write_mnist(tmp_path / "FashionMNIST" / "raw", gz=False, n_train=7)
    _register_as(monkeypatch, ("MNIST", tmp_path), ("FashionMNIST", tmp_path / "FashionMNIST" / "raw"))
    with pytest.warns(UserWarning, match="holds MNIST's"):
        fashion = FashionMNIST(root=tmp_path)
    assert len(fashion) == 7 and Path(fashion.root) == tmp_path / "FashionMNIST" / "raw"
    np.testing.assert_allclose(to_np(fashion.data)[:, 0], tr_x.astype(np.float32) / 255.0, rtol=1e-7)
    assert len(MNIST(root=tmp_path)) == 12


def test_split_files_swapped_are_refused(tmp_path, monkeypatch):
    write_mnist(tmp_path, gz=False)
    _register_as(monkeypatch, ("MNIST", tmp_path))
    train_images = (tmp_path / "train-images-idx3-ubyte").read_bytes()
    (tmp_path / "train-images-idx3-ubyte").write_bytes((tmp_path / "t10k-images-idx3-ubyte").read_bytes())
    (tmp_path / "t10k-images-idx3-ubyte").write_bytes(train_images)
    with pytest.raises(DatasetNotFoundError, match="holds MNIST's t10k-images-idx3-ubyte, not MNIST's train-images"):
        MNIST(root=tmp_path)


def test_known_content_md5_table_is_complete():
    from minitorch.data import mnist

    for dataset in ("MNIST", "FashionMNIST"):
        assert set(mnist._CONTENT_MD5[dataset]) == {s for pair in mnist._FILES.values() for s in pair}
    digests = [d for files in mnist._CONTENT_MD5.values() for d in files.values()]
    assert len(set(digests)) == len(digests) == 8


@needs_mnist
def test_real_mnist_folder_is_not_fashion_mnist():
    with pytest.raises(DatasetNotFoundError) as e:
        FashionMNIST(root=os.environ["MINITORCH_DATA"], train=False)
    assert "holds MNIST's t10k-images-idx3-ubyte" in str(e.value)


@needs_mnist
@needs_fashion
def test_fashion_mnist_with_mnist_in_minitorch_data_finds_the_real_one(monkeypatch, tmp_path):
    """The README's setting: MINITORCH_DATA holds MNIST; Fashion-MNIST must come from elsewhere."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    with pytest.warns(UserWarning, match="holds MNIST's"):
        ds = FashionMNIST(train=False)
    assert Path(ds.root) == FASHION_DIR
    assert to_np(ds.targets)[:5].tolist() == [9, 2, 1, 1, 6]  # ankle boot, pullover, trouser, trouser, shirt


# ---------------------------------------------------------------- the real data ----

def _check_real(ds, n):
    assert len(ds) == n
    assert tuple(ds.data.shape) == (n, 1, 28, 28)
    img, label = ds[0]
    assert tuple(img.shape) == (1, 28, 28)
    x = to_np(ds.data)
    assert x.dtype == np.float32
    assert x.min() == 0.0 and x.max() == 1.0
    y = to_np(ds.targets)
    assert y.dtype == np.int64
    assert set(np.unique(y).tolist()) == set(range(10))
    # each class is reasonably frequent (no class dropped or mislabelled en masse)
    counts = np.bincount(y, minlength=10)
    assert counts.min() > 0.07 * n and counts.max() < 0.13 * n
    return x, y


@needs_mnist
@pytest.mark.parametrize("train,n", [(True, 60000), (False, 10000)])
def test_real_mnist(train, n):
    ds = MNIST(train=train)
    x, y = _check_real(ds, n)
    # the well-known first labels of each split
    assert y[:5].tolist() == ([5, 0, 4, 1, 9] if train else [7, 2, 1, 0, 4])
    assert abs(float(x.mean()) - 0.1307) < 0.003


@needs_mnist
def test_real_mnist_through_env_folder_root():
    ds = MNIST(root=os.environ["MINITORCH_DATA"], train=False)
    assert len(ds) == 10000


@needs_fashion
@pytest.mark.parametrize("train,n", [(True, 60000), (False, 10000)])
def test_real_fashion_mnist(train, n):
    ds = FashionMNIST(root=FASHION_DIR, train=train)
    x, y = _check_real(ds, n)
    assert np.all(np.bincount(y, minlength=10) == n // 10)  # Fashion-MNIST is exactly balanced
    assert abs(float(x.mean()) - 0.2860) < 0.003
