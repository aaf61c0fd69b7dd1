"""``Subset`` and ``random_split``: PyTorch's lengths (counts or fractions), a partition of
the dataset, reproducible with a Generator or ``minitorch.manual_seed``, errors, and
DataLoader's whole-batch path through a Subset; ``TensorDataset``'s checks of its inputs."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch
from minitorch.data import DataLoader, Dataset, Generator, Subset, TensorDataset, random_split
from conftest import TORCH_SKIP_REASON


def to_np(t) -> np.ndarray:
    return np.array(t.detach().cpu().numpy(), copy=True)


class Counting(TensorDataset):
    """A TensorDataset that counts its get_batch calls."""

    batches = 0

    def get_batch(self, indices):
        Counting.batches += 1
        return super().get_batch(indices)


def indexed(n: int, cls=TensorDataset):
    idx = np.arange(n)
    return cls(minitorch.tensor((10 * idx).astype(np.float32)), minitorch.tensor(idx.astype(np.int64)))


class Plain(Dataset):
    def __init__(self, n: int, transform=None):
        self.n, self.transform = n, transform

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        v = 10 * i if self.transform is None else self.transform(10 * i)
        return minitorch.tensor(float(v)), i


def test_subset_indexing():
    ds = Plain(10)
    sub = Subset(ds, [7, 2, 5])
    assert len(sub) == 3
    assert sub[0][1] == 7 and sub[2][1] == 5 and sub[-1][1] == 5
    assert sub.dataset is ds and sub.indices == [7, 2, 5]
    assert [y for _, y in sub] == [7, 2, 5]
    with pytest.raises(IndexError):
        sub[3]


@settings(max_examples=20)
@given(n=st.integers(0, 30), parts=st.integers(1, 4), seed=st.integers(0, 2**31))
def test_random_split_counts_partition_the_dataset(n, parts, seed):
    cuts = sorted(np.random.default_rng(seed).integers(0, n + 1, parts - 1).tolist())
    lengths = np.diff([0] + cuts + [n]).tolist()
    splits = random_split(Plain(n), lengths, generator=Generator(seed))
    assert [len(s) for s in splits] == lengths
    seen = [i for s in splits for i in s.indices]
    assert sorted(seen) == list(range(n))  # disjoint and complete
    assert seen == np.random.default_rng(seed).permutation(n).tolist()  # the generator's permutation


@pytest.mark.parametrize("n,fracs,want", [(10, [0.3, 0.3, 0.4], [3, 3, 4]), (10, [0.33, 0.33, 0.34], [4, 3, 3]),
                                          (7, [0.5, 0.5], [4, 3]), (5, [1.0], [5]), (11, [0.1, 0.9], [2, 9])])
def test_random_split_fractions(n, fracs, want):
    assert [len(s) for s in random_split(Plain(n), fracs, generator=Generator(0))] == want


def test_random_split_fraction_lengths_match_torch():
    torch = pytest.importorskip("torch", reason=TORCH_SKIP_REASON)
    for n, fracs in [(10, [0.33, 0.33, 0.34]), (13, [0.2, 0.2, 0.6]), (3, [0.25, 0.25, 0.5]), (101, [0.9, 0.1])]:
        theirs = [len(s) for s in torch.utils.data.random_split(range(n), fracs)]
        ours = [len(s) for s in random_split(Plain(n), fracs)]
        assert ours == theirs, (n, fracs)


def test_random_split_is_reproducible():
    a = [s.indices for s in random_split(Plain(20), [5, 15], generator=Generator(3))]
    b = [s.indices for s in random_split(Plain(20), [5, 15], generator=Generator().manual_seed(3))]
    assert a == b
    minitorch.manual_seed(7)
    c = [s.indices for s in random_split(Plain(20), [5, 15])]
    minitorch.manual_seed(7)
    d = [s.indices for s in random_split(Plain(20), [5, 15])]
    assert c == d and sorted(c[0] + c[1]) == list(range(20))


def test_random_split_errors():
    with pytest.raises(ValueError, match=r"random_split: sum of input lengths \(9\) does not equal the length of the "
                                         r"input dataset \(10\)"):
        random_split(Plain(10), [4, 5])
    with pytest.raises(ValueError, match="fraction at index 0 is not between 0 and 1"):
        random_split(Plain(10), [1.5, -0.5])
    with pytest.raises(ValueError, match="random_split: lengths must be"):
        random_split(Plain(10), [0.5, 0.3])
    with pytest.warns(UserWarning, match="length of split at index 1 is 0"):
        random_split(Plain(2), [0.9, 0.1])


def test_dataloader_over_subset_takes_whole_batches():
    ds = indexed(12, Counting)
    train, val = random_split(ds, [8, 4], generator=Generator(0))
    Counting.batches = 0
    xs, ys = zip(*DataLoader(val, batch_size=3))
    assert Counting.batches == 2  # one gather per batch, through Subset.get_batch
    y = np.concatenate([to_np(t) for t in ys])
    np.testing.assert_array_equal(y, val.indices)
    np.testing.assert_array_equal(np.concatenate([to_np(t) for t in xs]), 10 * np.array(val.indices, np.float32))
    # shuffled, too: every sample of the split exactly once
    y = np.concatenate([to_np(t) for _, t in DataLoader(train, batch_size=5, shuffle=True, generator=Generator(1))])
    assert sorted(y.tolist()) == sorted(train.indices)


def test_subset_of_a_dataset_without_get_batch_or_with_transforms():
    sub = Subset(Plain(6), [4, 1])
    assert not hasattr(sub, "get_batch")  # so DataLoader goes sample by sample
    x, y = next(iter(DataLoader(sub, batch_size=2)))
    np.testing.assert_array_equal(to_np(y), [4, 1])
    np.testing.assert_array_equal(to_np(x), [40.0, 10.0])

    class WithTransform(TensorDataset):
        transform = None

        def __getitem__(self, i):
            x, y = super().__getitem__(i)
            return (x if self.transform is None else self.transform(x)), y

    ds = indexed(6, WithTransform)
    ds.transform = lambda x: x + 1000
    sub = Subset(ds, [3, 0])
    assert sub.transform is ds.transform  # DataLoader sees it, and so applies it sample by sample
    x, _ = next(iter(DataLoader(sub, batch_size=2)))
    np.testing.assert_array_equal(to_np(x), [1030.0, 1000.0])


def test_subset_importable_from_utils_data():
    from minitorch.utils.data import Subset as S, random_split as rs

    assert S is Subset and rs is random_split


def test_tensor_dataset_of_numpy_arrays_says_to_wrap_them():
    x, y = np.zeros((4, 2), np.float32), np.arange(4)
    with pytest.raises(TypeError, match=r"TensorDataset: expected Tensors, got ndarray \(argument 0\); "
                                        r"wrap arrays with minitorch.from_numpy"):
        TensorDataset(x, y)
    with pytest.raises(TypeError, match=r"got ndarray \(argument 1\)"):
        TensorDataset(minitorch.from_numpy(x), y)
    ds = TensorDataset(minitorch.from_numpy(x), minitorch.from_numpy(y))
    assert len(ds) == 4 and int(ds[3][1].item()) == 3
    with pytest.raises(ValueError, match="size mismatch"):
        TensorDataset(minitorch.zeros(4), minitorch.zeros(3))
