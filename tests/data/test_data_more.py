"""utils.data beyond the indexed datasets: IterableDataset through DataLoader (batching a
stream, drop_last, len, chaining with +, the refused options), ConcatDataset (indexing,
negative indices, DataLoader), ChainDataset, SubsetRandomSampler and WeightedRandomSampler
(reproducible under manual_seed, frequencies follow the weights, PyTorch's errors)."""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
from minitorch.utils.data import (ChainDataset, ConcatDataset, DataLoader, Dataset, IterableDataset,
                                  SubsetRandomSampler, TensorDataset, WeightedRandomSampler)


class Stream(IterableDataset):
    def __init__(self, start, stop, sized=True):
        self.start, self.stop, self.sized = start, stop, sized

    def __iter__(self):
        return iter(minitorch.tensor([float(i)]) for i in range(self.start, self.stop))

    def __len__(self):
        if not self.sized:
            raise TypeError("this stream has no length")
        return self.stop - self.start


def values(loader):
    return [b.flatten().tolist() for b in loader]


def test_iterable_dataset_batches_a_stream():
    assert values(DataLoader(Stream(0, 7), batch_size=3)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert values(DataLoader(Stream(0, 7), batch_size=3, drop_last=True)) == [[0, 1, 2], [3, 4, 5]]
    assert len(DataLoader(Stream(0, 7), batch_size=3)) == 3
    assert len(DataLoader(Stream(0, 7), batch_size=3, drop_last=True)) == 2
    single = list(DataLoader(Stream(0, 3), batch_size=None))
    assert [t.tolist() for t in single] == [[0.0], [1.0], [2.0]]
    loader = DataLoader(Stream(0, 4), batch_size=2)
    assert values(loader) == values(loader) == [[0, 1], [2, 3]]  # a new pass each epoch
    with pytest.raises(TypeError, match="no length"):
        len(DataLoader(Stream(0, 4, sized=False), batch_size=2))
    with pytest.raises(TypeError, match="IterableDataset"):
        Stream(0, 2)[0]


def test_chaining_streams():
    chained = Stream(0, 2) + Stream(10, 13)
    assert isinstance(chained, ChainDataset) and len(chained) == 5
    assert values(DataLoader(chained, batch_size=2)) == [[0, 1], [10, 11], [12]]
    with pytest.raises(AssertionError, match="only supports IterableDataset"):
        list(ChainDataset([Stream(0, 1), TensorDataset(minitorch.zeros(2))]))


@pytest.mark.parametrize("option", [dict(shuffle=True), dict(sampler=[0, 1]), dict(batch_sampler=[[0]])])
def test_iterable_dataset_refuses_orders(option):
    with pytest.raises(ValueError, match="DataLoader with IterableDataset: expected unspecified"):
        DataLoader(Stream(0, 2), **option)


def test_iterable_dataset_with_workers_says_so():
    with pytest.raises(NotImplementedError, match="num_workers=0"):
        DataLoader(Stream(0, 2), num_workers=1)


def test_concat_dataset():
    a = TensorDataset(minitorch.arange(3.0))
    b = TensorDataset(minitorch.arange(10.0, 12.0))
    both = ConcatDataset([a, b])
    assert len(both) == 5 and both.cumulative_sizes == [3, 5]
    assert [both[i][0].item() for i in range(5)] == [0, 1, 2, 10, 11]
    assert both[-1][0].item() == 11 and both[-5][0].item() == 0
    assert (a + b)[4][0].item() == 11  # Dataset.__add__
    with pytest.raises(ValueError, match="should not exceed dataset length"):
        both[-6]
    with pytest.raises(IndexError, match="out of range"):
        both[5]
    assert [x.tolist() for (x,) in DataLoader(both, batch_size=2)] == [[0, 1], [2, 10], [11]]
    with pytest.raises(AssertionError, match="should not be an empty iterable"):
        ConcatDataset([])
    with pytest.raises(AssertionError, match="does not support IterableDataset"):
        ConcatDataset([a, Stream(0, 1)])


def test_subset_random_sampler():
    minitorch.manual_seed(3)
    first = list(SubsetRandomSampler([10, 11, 12, 13]))
    minitorch.manual_seed(3)
    assert list(SubsetRandomSampler([10, 11, 12, 13])) == first
    assert sorted(first) == [10, 11, 12, 13] and len(SubsetRandomSampler(range(5))) == 5
    ds = TensorDataset(minitorch.arange(20.0))
    seen = [x.tolist() for (x,) in DataLoader(ds, batch_size=4, sampler=SubsetRandomSampler(range(12, 20)))]
    assert sorted(sum(seen, [])) == list(range(12, 20))


def test_weighted_random_sampler():
    minitorch.manual_seed(0)
    draws = np.array(list(WeightedRandomSampler(minitorch.tensor([1.0, 0.0, 3.0]), 20000)))
    counts = np.bincount(draws, minlength=3) / len(draws)
    assert counts[1] == 0 and abs(counts[2] - 0.75) < 0.02
    minitorch.manual_seed(0)
    assert np.array_equal(draws, list(WeightedRandomSampler([1.0, 0.0, 3.0], 20000)))
    unique = list(WeightedRandomSampler([1.0, 2.0, 3.0, 4.0], 4, replacement=False))
    assert sorted(unique) == [0, 1, 2, 3] and len(WeightedRandomSampler([1.0], 3)) == 3
    with pytest.raises(ValueError, match="num_samples should be a positive integer"):
        WeightedRandomSampler([1.0], 0)
    with pytest.raises(ValueError, match="replacement should be a boolean"):
        WeightedRandomSampler([1.0], 2, replacement=1)
    with pytest.raises(ValueError, match="weights should be a 1d sequence"):
        WeightedRandomSampler([[1.0]], 2)
    with pytest.raises(RuntimeError, match="invalid multinomial distribution"):
        WeightedRandomSampler([-1.0, 2.0], 2)
    with pytest.raises(RuntimeError, match="without replacement"):
        WeightedRandomSampler([1.0, 0.0], 2, replacement=False)
    assert issubclass(IterableDataset, Dataset)


def test_stream_without_length_lists_and_refuses_len():
    class Unsized(IterableDataset):
        def __iter__(self):
            return iter(minitorch.arange(5.0).unbind(0))

    loader = DataLoader(Unsized(), batch_size=2)
    assert [b.tolist() for b in list(loader)] == [[0, 1], [2, 3], [4]]  # list() asks len() and goes on
    with pytest.raises(TypeError, match="has no len"):
        len(loader)
