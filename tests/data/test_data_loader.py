"""``DataLoader``, ``TensorDataset``, ``Generator`` and ``default_collate``."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch
from minitorch.data import DataLoader, Dataset, Generator, TensorDataset, default_collate


def to_np(t) -> np.ndarray:
    return np.array(t.detach().cpu().numpy(), copy=True)


def indexed_dataset(n: int) -> TensorDataset:
    """x[i] = [i, 10 i] (float32), y[i] = i (int64): each sample names its index."""
    idx = np.arange(n)
    x = np.stack([idx, 10 * idx], axis=1).astype(np.float32)
    return TensorDataset(minitorch.tensor(x), minitorch.tensor(idx.astype(np.int64)))


class ListDataset(Dataset):
    """A plain Dataset (no get_batch): DataLoader collates sample by sample."""

    def __init__(self, x: np.ndarray, y: np.ndarray):
        self.x, self.y = x, y

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return minitorch.tensor(self.x[i]), int(self.y[i])


def order_of(loader) -> list[int]:
    return [int(i) for _, y in loader for i in to_np(y)]


def test_no_shuffle_batches_are_consecutive():
    loader = DataLoader(indexed_dataset(10), batch_size=4)
    batches = list(loader)
    assert len(batches) == 3
    sizes = [tuple(x.shape) for x, _ in batches]
    assert sizes == [(4, 2), (4, 2), (2, 2)]
    for b, (x, y) in enumerate(batches):
        expected = np.arange(4 * b, min(4 * b + 4, 10))
        np.testing.assert_array_equal(to_np(y), expected)
        np.testing.assert_array_equal(to_np(x), np.stack([expected, 10 * expected], 1).astype(np.float32))
        assert x.dtype == minitorch.float32 and y.dtype == minitorch.int64


@given(n=st.integers(0, 50), batch_size=st.integers(1, 12), drop_last=st.booleans())
def test_len_and_batch_sizes(n, batch_size, drop_last):
    loader = DataLoader(indexed_dataset(n) if n else ListDataset(np.zeros((0, 2)), np.zeros(0)),
                        batch_size=batch_size, drop_last=drop_last)
    expected_len = n // batch_size if drop_last else -(-n // batch_size)
    assert len(loader) == expected_len
    batches = list(loader)
    assert len(batches) == expected_len
    sizes = [y.shape[0] for _, y in batches]
    if drop_last:
        assert all(s == batch_size for s in sizes)
        assert sum(sizes) == (n // batch_size) * batch_size
    else:
        assert sum(sizes) == n
        assert all(s == batch_size for s in sizes[:-1])


def test_len_examples():
    ds = indexed_dataset(10)
    assert len(DataLoader(ds, batch_size=3)) == 4
    assert len(DataLoader(ds, batch_size=3, drop_last=True)) == 3
    assert len(DataLoader(ds, batch_size=5, drop_last=True)) == 2
    assert len(DataLoader(ds, batch_size=20)) == 1
    assert len(DataLoader(ds, batch_size=20, drop_last=True)) == 0


def test_drop_last_skips_partial_batch():
    loader = DataLoader(indexed_dataset(10), batch_size=4, drop_last=True)
    assert order_of(loader) == list(range(8))


@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize("fast", [True, False])
def test_every_sample_once_per_epoch(shuffle, fast):
    n = 103
    ds = indexed_dataset(n) if fast else ListDataset(np.arange(n)[:, None].astype(np.float32), np.arange(n))
    loader = DataLoader(ds, batch_size=8, shuffle=shuffle, generator=Generator(3))
    for _ in range(2):
        order = order_of(loader)
        assert sorted(order) == list(range(n))
        assert (order != list(range(n))) == shuffle


def test_shuffle_reproducible_with_generator():
    ds = indexed_dataset(50)
    a = order_of(DataLoader(ds, batch_size=7, shuffle=True, generator=Generator(0)))
    b = order_of(DataLoader(ds, batch_size=7, shuffle=True, generator=Generator(0)))
    c = order_of(DataLoader(ds, batch_size=7, shuffle=True, generator=Generator(1)))
    d = order_of(DataLoader(ds, batch_size=7, shuffle=True, generator=Generator().manual_seed(0)))
    assert a == b == d
    assert a != c
    assert a != list(range(50))


def test_shuffle_new_order_each_epoch():
    loader = DataLoader(indexed_dataset(50), batch_size=10, shuffle=True, generator=Generator(0))
    e1, e2 = order_of(loader), order_of(loader)
    assert e1 != e2
    assert sorted(e1) == sorted(e2) == list(range(50))
    # and the sequence of epochs is reproducible too
    loader2 = DataLoader(indexed_dataset(50), batch_size=10, shuffle=True, generator=Generator(0))
    assert [order_of(loader2), order_of(loader2)] == [e1, e2]


def test_shuffle_reproducible_with_manual_seed():
    ds = indexed_dataset(50)
    minitorch.manual_seed(123)
    a = order_of(DataLoader(ds, batch_size=5, shuffle=True))
    minitorch.manual_seed(123)
    b = order_of(DataLoader(ds, batch_size=5, shuffle=True))
    minitorch.manual_seed(124)
    c = order_of(DataLoader(ds, batch_size=5, shuffle=True))
    assert a == b
    assert a != c
    assert sorted(a) == sorted(c) == list(range(50))


def test_fast_path_equals_per_sample_collation():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((37, 1, 3, 2)).astype(np.float32)
    y = rng.integers(0, 10, 37).astype(np.int64)
    fast = DataLoader(TensorDataset(minitorch.tensor(x), minitorch.tensor(y)), batch_size=8, shuffle=True,
                      generator=Generator(5))
    slow = DataLoader(ListDataset(x, y), batch_size=8, shuffle=True, generator=Generator(5))
    assert hasattr(fast.dataset, "get_batch") and not hasattr(slow.dataset, "get_batch")
    n = 0
    for (fx, fy), (sx, sy) in zip(fast, slow):
        assert fx.dtype == sx.dtype == minitorch.float32
        assert fy.dtype == sy.dtype == minitorch.int64
        assert tuple(fx.shape) == tuple(sx.shape)
        np.testing.assert_array_equal(to_np(fx), to_np(sx))
        np.testing.assert_array_equal(to_np(fy), to_np(sy))
        n += 1
    assert n == len(fast) == 5


def test_custom_collate_fn_bypasses_fast_path():
    seen = []

    def collate(samples):
        seen.append(len(samples))
        return default_collate(samples)

    loader = DataLoader(indexed_dataset(10), batch_size=4, collate_fn=collate)
    assert order_of(loader) == list(range(10))
    assert seen == [4, 4, 2]


def test_tensor_dataset_indexing():
    ds = indexed_dataset(5)
    assert len(ds) == 5
    x, y = ds[3]
    np.testing.assert_array_equal(to_np(x), [3.0, 30.0])
    assert y.item() == 3
    bx, by = ds.get_batch(minitorch.tensor([4, 0]))
    np.testing.assert_array_equal(to_np(by), [4, 0])
    np.testing.assert_array_equal(to_np(bx), [[4.0, 40.0], [0.0, 0.0]])


def test_tensor_dataset_errors():
    with pytest.raises(ValueError, match="size mismatch"):
        TensorDataset(minitorch.zeros(3, 2), minitorch.zeros(4))
    with pytest.raises(ValueError):
        TensorDataset()
    with pytest.raises(TypeError):
        TensorDataset(minitorch.zeros(3), np.zeros(3))


def test_default_collate():
    out = default_collate([(minitorch.tensor([1.0, 2.0]), 3), (minitorch.tensor([4.0, 5.0]), 6)])
    assert isinstance(out, tuple) and len(out) == 2
    np.testing.assert_array_equal(to_np(out[0]), [[1.0, 2.0], [4.0, 5.0]])
    assert out[1].dtype == minitorch.int64
    np.testing.assert_array_equal(to_np(out[1]), [3, 6])
    f = default_collate([0.5, 1.5])
    np.testing.assert_allclose(to_np(f), [0.5, 1.5])
    assert default_collate(["a", "b"]) == ["a", "b"]  # strings stay a list, as in PyTorch
    with pytest.raises(TypeError, match="default_collate"):
        default_collate([object(), object()])


@pytest.mark.parametrize("bad", [0, -1, 2.5, True])
def test_bad_batch_size(bad):
    with pytest.raises(ValueError, match="batch_size"):
        DataLoader(indexed_dataset(3), batch_size=bad)


def test_batch_size_none_yields_samples():
    """batch_size=None turns batching off: each item is one sample, as the dataset returns it."""
    ds = indexed_dataset(3)
    items = list(DataLoader(ds, batch_size=None))
    assert len(items) == 3 == len(DataLoader(ds, batch_size=None))
    for i, (x, y) in enumerate(items):
        np.testing.assert_array_equal(to_np(x), [i, 10 * i])
        assert y.item() == i
