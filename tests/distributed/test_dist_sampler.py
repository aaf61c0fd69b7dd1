"""DistributedSampler: the ranks' shares partition the (padded or cut) index list, the
same on every rank for a (seed, epoch), a new order each epoch. No processes needed:
each rank's sampler is made here with its num_replicas and rank."""
from __future__ import annotations

import inspect
from collections import Counter

import pytest

import minitorch
from minitorch.data import DistributedSampler


def shares(n, replicas, **kw):
    out = []
    for r in range(replicas):
        s = DistributedSampler(range(n), num_replicas=replicas, rank=r, **kw)
        out.append(list(s))
        assert len(s) == len(out[-1])
    return out


@pytest.mark.parametrize("n", [0, 1, 5, 12, 13])
@pytest.mark.parametrize("replicas", [1, 2, 3, 4])
@pytest.mark.parametrize("shuffle", [False, True])
def test_padded_shares_cover_everything_equally(n, replicas, shuffle):
    parts = shares(n, replicas, shuffle=shuffle, seed=3)
    size = -(-n // replicas)
    assert all(len(p) == size for p in parts)  # every rank runs the same number of steps
    everything = Counter(i for p in parts for i in p)
    assert set(everything) == set(range(n))
    assert sum(everything.values()) == size * replicas
    assert sum(c - 1 for c in everything.values()) == size * replicas - n  # the padding repeats indices
    if not shuffle and n:
        assert parts[0][:2] == list(range(0, min(n, 2 * replicas), replicas))[:2]  # rank r: r, r + R, ...


@pytest.mark.parametrize("n,replicas", [(10, 3), (12, 4), (2, 3), (7, 2)])
def test_drop_last_cuts_to_a_multiple_and_shares_are_disjoint(n, replicas):
    parts = shares(n, replicas, shuffle=True, drop_last=True)
    size = n // replicas
    assert all(len(p) == size for p in parts)
    flat = [i for p in parts for i in p]
    assert len(flat) == len(set(flat)) == size * replicas and set(flat) <= set(range(n))


def test_without_shuffle_matches_pytorchs_layout():
    # PyTorch: [0..9] padded with [0, 1] to 12, rank r takes every 3rd from r.
    assert shares(10, 3, shuffle=False) == [[0, 3, 6, 9], [1, 4, 7, 0], [2, 5, 8, 1]]
    assert shares(10, 3, shuffle=False, drop_last=True) == [[0, 3, 6], [1, 4, 7], [2, 5, 8]]
    assert shares(2, 5, shuffle=False) == [[0], [1], [0], [1], [0]]


def test_order_is_deterministic_per_seed_and_epoch_and_changes_each_epoch():
    def epoch_order(seed, epoch, rank=0):
        s = DistributedSampler(range(100), num_replicas=2, rank=rank, seed=seed)
        s.set_epoch(epoch)
        return list(s)

    assert epoch_order(0, 0) == epoch_order(0, 0)
    assert epoch_order(0, 1) == epoch_order(0, 1)
    assert epoch_order(0, 0) != epoch_order(0, 1)
    assert epoch_order(0, 0) != epoch_order(1, 0)
    for epoch in range(3):  # within an epoch the two ranks still partition the data
        assert sorted(epoch_order(5, epoch, 0) + epoch_order(5, epoch, 1)) == list(range(100))
    assert epoch_order(0, 0) != list(range(0, 100, 2))  # it does shuffle


def test_arguments():
    with pytest.raises(ValueError, match=r"Invalid rank 2, rank should be in the interval \[0, 1\]"):
        DistributedSampler(range(4), num_replicas=2, rank=2)
    with pytest.raises(ValueError, match="Invalid rank -1"):
        DistributedSampler(range(4), num_replicas=2, rank=-1)
    with pytest.raises(ValueError, match="num_replicas"):
        DistributedSampler(range(4), num_replicas=0, rank=0)
    s = DistributedSampler(range(7), num_replicas=2, rank=1, shuffle=False, seed=9)
    assert (s.num_replicas, s.rank, s.shuffle, s.seed, s.drop_last, s.epoch) == (2, 1, False, 9, False, 0)
    assert s.num_samples == len(s) == 4 and s.total_size == 8
    assert list(inspect.signature(DistributedSampler).parameters) == [
        "dataset", "num_replicas", "rank", "shuffle", "seed", "drop_last"]


def test_import_paths():
    from minitorch.utils.data import DistributedSampler as A
    from minitorch.utils.data.distributed import DistributedSampler as B

    assert A is B is DistributedSampler is minitorch.data.distributed.DistributedSampler


def test_batches_of_a_rank_through_a_dataloader():
    ds = minitorch.data.TensorDataset(minitorch.arange(10.0))
    s = DistributedSampler(ds, num_replicas=2, rank=1, shuffle=False)
    if "sampler" in inspect.signature(minitorch.data.DataLoader).parameters:
        loader = minitorch.data.DataLoader(ds, batch_size=2, sampler=s)
    else:  # a DataLoader without sampler=: the same batches from a Subset
        loader = minitorch.data.DataLoader(minitorch.data.Subset(ds, list(s)), batch_size=2)
    assert [b[0].tolist() for b in loader] == [[1.0, 3.0], [5.0, 7.0], [9.0]]
