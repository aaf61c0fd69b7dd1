"""``DataLoader(num_workers=N)``: the same batches as in one process, errors and dead
workers reported, no processes or shared-memory segments left behind, persistent
workers, seeds, samplers, ``Generator`` and the argument checks.

Most tests start workers with "fork" (fast); a few use "spawn", which pickles the dataset
into fresh interpreters. Datasets are module-level classes so spawned workers can import them.
"""
from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import minitorch
from minitorch.data import (BatchSampler, DataLoader, Dataset, Generator, RandomSampler, Sampler, SequentialSampler,
                            TensorDataset, default_collate, get_worker_info)
from minitorch.data import _shared
from minitorch.data._multiprocess import shm_prefix

METHODS = multiprocessing.get_all_start_methods()
FORK = "fork" if "fork" in METHODS else None  # the platform default where fork is missing
needs_spawn = pytest.mark.skipif("spawn" not in METHODS, reason="no 'spawn' start method")
needs_mnist = pytest.mark.skipif(not os.environ.get("MINITORCH_DATA"),
                                 reason="MINITORCH_DATA is not set (point it at a folder with the MNIST IDX files)")
# Three workers on a two-core machine are on purpose here.
pytestmark = pytest.mark.filterwarnings("ignore:This DataLoader will create")


# ---------------------------------------------------------------- datasets ----

def indexed_dataset(n: int) -> TensorDataset:
    """x[i] = [i, 10 i] (float32), y[i] = i (int64); has get_batch (the whole-batch path)."""
    idx = np.arange(n)
    return TensorDataset(minitorch.tensor(np.stack([idx, 10 * idx], 1).astype(np.float32)),
                         minitorch.tensor(idx.astype(np.int64)))


class Pairs(Dataset):
    """A plain dataset of (tensor, int) pairs: collated sample by sample."""

    def __init__(self, n: int):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return minitorch.tensor([float(i), -float(i)]), i


class Dicts(Pairs):
    def __getitem__(self, i):
        return {"x": np.full((2, 3), i, dtype=np.float64), "y": i, "name": f"s{i}", "flag": i % 2 == 0}


class Slow(Pairs):
    """Each sample takes ``delay`` seconds and names the process that made it."""

    def __init__(self, n: int, delay: float):
        super().__init__(n)
        self.delay = delay

    def __getitem__(self, i):
        time.sleep(self.delay)
        return os.getpid()


class Failing(Pairs):
    def __getitem__(self, i):
        if i == 5:
            raise ValueError(f"bad sample {i}")
        if i == 9:
            raise KeyError("missing key")
        return super().__getitem__(i)


class Info(Pairs):
    """What the worker knows: its info, the init function's mark, and random draws."""

    def __getitem__(self, i):
        info = get_worker_info()
        return (i, info.id, info.num_workers, info.seed, INIT_MARK.get(info.id, -1), os.getpid(),
                float(np.random.rand()), float(minitorch.rand(()).item()), type(info.dataset).__name__)


INIT_MARK: dict = {}


def mark_init(worker_id: int) -> None:
    INIT_MARK[worker_id] = 100 + worker_id


def failing_init(worker_id: int) -> None:
    raise ZeroDivisionError("init failed")


# ---------------------------------------------------------------- helpers ----

def flat(batch) -> list:
    """A batch as comparable plain values (type, dtype, shape and contents of each leaf)."""
    if isinstance(batch, minitorch.Tensor):
        a = batch.numpy()
        return [("tensor", str(batch.dtype), a.shape, a.tolist())]
    if isinstance(batch, dict):
        return [(k, flat(v)) for k, v in batch.items()]
    if isinstance(batch, (tuple, list)):
        return [type(batch).__name__] + [flat(v) for v in batch]
    return [batch]


def epoch(loader) -> list:
    return [flat(b) for b in loader]


def pid_alive(pid: int) -> bool:
    """True for a running process (a zombie, dead but not yet reaped, counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
    except OSError:  # no /proc: ask the kernel
        try:
            os.kill(pid, 0)
            return True
        except ProcessLookupError:
            return False


def wait_gone(pids, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not any(pid_alive(p) for p in pids):
            return True
        time.sleep(0.05)
    return False


def segments() -> list[str]:
    """This process's batch segments in /dev/shm."""
    if not os.path.isdir("/dev/shm"):
        pytest.skip("no /dev/shm")
    return [f for f in os.listdir("/dev/shm") if f.startswith(shm_prefix(os.getpid()))]


# ---------------------------------------------------------------- same batches ----

@pytest.mark.parametrize("num_workers", [1, 2, 3])
@pytest.mark.parametrize("shuffle,drop_last", [(False, False), (True, False), (True, True)])
@pytest.mark.parametrize("kind", ["tensors", "pairs"])
def test_same_batches_as_one_process(num_workers, shuffle, drop_last, kind):
    ds = indexed_dataset(23) if kind == "tensors" else Pairs(23)

    def run(n):
        return epoch(DataLoader(ds, batch_size=4, shuffle=shuffle, drop_last=drop_last, generator=Generator(7),
                                num_workers=n, multiprocessing_context=FORK if n else None))

    expected = run(0)
    assert len(expected) == (5 if drop_last else 6)
    assert run(num_workers) == expected


def test_same_shuffle_from_global_rng():
    """Without a generator the order comes from minitorch.manual_seed, in the main process."""
    ds = indexed_dataset(30)
    orders = []
    for n in (0, 2):
        minitorch.manual_seed(3)
        loader = DataLoader(ds, batch_size=5, shuffle=True, num_workers=n, multiprocessing_context=FORK if n else None)
        orders.append([epoch(loader), epoch(loader)])  # two epochs: the stream stays in step
    assert orders[0] == orders[1]
    assert orders[0][0] != orders[0][1]


def test_dicts_strings_and_arrays():
    ds = Dicts(7)
    one = list(DataLoader(ds, batch_size=3))
    assert one[0]["name"] == ["s0", "s1", "s2"]
    assert one[0]["x"].dtype == minitorch.float64 and tuple(one[0]["x"].shape) == (3, 2, 3)
    assert one[0]["flag"].dtype == minitorch.bool
    assert epoch(DataLoader(ds, batch_size=3, num_workers=2, multiprocessing_context=FORK)) == [flat(b) for b in one]


def test_batch_size_none_and_custom_collate():
    ds = Pairs(5)
    single = epoch(DataLoader(ds, batch_size=None))
    assert epoch(DataLoader(ds, batch_size=None, num_workers=2, multiprocessing_context=FORK)) == single
    assert len(single) == 5

    def count(samples):  # a closure: only fork can run it in a worker
        return np.array([s[1] for s in samples]), len(samples)

    got = list(DataLoader(ds, batch_size=2, collate_fn=count, num_workers=2, multiprocessing_context=FORK))
    assert [b[1] for b in got] == [2, 2, 1]
    assert isinstance(got[0][0], np.ndarray) and got[2][0].tolist() == [4]


@needs_mnist
def test_mnist_whole_batches_in_workers():
    train = minitorch.data.MNIST(train=False)
    assert hasattr(train, "get_batch")

    def run(n):
        loader = DataLoader(train, batch_size=500, shuffle=True, generator=Generator(0), num_workers=n,
                            multiprocessing_context=FORK if n else None)
        return [(x.numpy().copy(), y.numpy().copy()) for x, y in loader]

    expected, got = run(0), run(2)
    assert len(got) == len(expected) == 20
    for (ex, ey), (gx, gy) in zip(expected, got):
        assert gx.dtype == np.float32 and gx.shape == (500, 1, 28, 28)
        np.testing.assert_array_equal(gx, ex)
        np.testing.assert_array_equal(gy, ey)


@needs_spawn
@pytest.mark.parametrize("kind", ["tensors", "pairs"])
def test_spawn_same_batches(kind):
    """Spawned workers get the dataset pickled (tensors included) and give the same batches."""
    ds = indexed_dataset(11) if kind == "tensors" else Pairs(11)
    expected = epoch(DataLoader(ds, batch_size=3, shuffle=True, generator=Generator(1)))
    assert epoch(DataLoader(ds, batch_size=3, shuffle=True, generator=Generator(1), num_workers=2,
                            multiprocessing_context="spawn")) == expected
    assert multiprocessing.active_children() == []


def test_default_start_method():
    loader = DataLoader(indexed_dataset(6), batch_size=4, num_workers=1)
    assert loader.multiprocessing_context is None
    assert epoch(loader) == epoch(DataLoader(indexed_dataset(6), batch_size=4))


# ---------------------------------------------------------------- errors from workers ----

@pytest.mark.parametrize("method", ["fork", pytest.param("spawn", marks=needs_spawn)])
def test_worker_error_reraised_with_traceback(method):
    if method not in METHODS:
        pytest.skip(f"no {method!r} start method")
    loader = DataLoader(Failing(12), batch_size=2, num_workers=2, multiprocessing_context=method)
    it = iter(loader)
    assert len(next(it)[1]) == 2 and len(next(it)[1]) == 2  # batches 0, 1 are fine
    with pytest.raises(ValueError) as info:
        next(it)  # batch 2 holds sample 5
    msg = str(info.value)
    assert msg.startswith("Caught ValueError in DataLoader worker process 0.")  # batch 2 -> worker 0
    assert "Traceback (most recent call last)" in msg
    assert 'raise ValueError(f"bad sample {i}")' in msg and "ValueError: bad sample 5" in msg
    assert flat(next(it)[1]) == flat(minitorch.tensor([6, 7]))  # the iterator goes on, like PyTorch's
    with pytest.raises(KeyError) as info:
        next(it)  # sample 9: a KeyError's message prints as lines, not as one repr
    assert "Caught KeyError in DataLoader worker process 0." in str(info.value).splitlines()[0]
    del it, info  # the traceback refers to the iterator too
    assert multiprocessing.active_children() == []


def test_unpicklable_error_type_becomes_runtime_error():
    class LocalError(Exception):
        pass

    def collate(samples):
        raise LocalError("from collate")

    with pytest.raises(RuntimeError, match=r"Caught LocalError in DataLoader worker process 0\.(.|\n)*from collate"):
        next(iter(DataLoader(Pairs(4), batch_size=2, collate_fn=collate, num_workers=1, multiprocessing_context=FORK)))


def test_a_batch_that_cannot_be_pickled_is_an_error_not_a_dead_worker():
    def collate(samples):
        return {"x": default_collate(samples), "f": lambda: None}  # a lambda cannot cross to the main process

    with pytest.raises(Exception, match=r"Caught .* in DataLoader worker process 0\.(.|\n)*(pickle|lambda)"):
        next(iter(DataLoader(Pairs(4), batch_size=2, collate_fn=collate, num_workers=1, multiprocessing_context=FORK)))
    assert segments() == []  # the batch's segment was freed in the worker
    assert wait_gone([p.pid for p in multiprocessing.active_children()])


def test_worker_init_fn_error():
    loader = DataLoader(Pairs(4), batch_size=2, num_workers=1, worker_init_fn=failing_init,
                        multiprocessing_context=FORK)
    with pytest.raises(ZeroDivisionError, match="Caught ZeroDivisionError in DataLoader worker process 0"):
        next(iter(loader))


def test_killed_worker_raises_instead_of_hanging():
    it = iter(DataLoader(Slow(40, 0.05), batch_size=2, num_workers=2, multiprocessing_context=FORK))
    victim = int(next(it)[0])  # batch 0 came from worker 0
    os.kill(victim, signal.SIGKILL)
    start = time.monotonic()
    with pytest.raises(RuntimeError, match=rf"DataLoader worker \(pid {victim}\) exited unexpectedly "
                                           r"\(killed by signal 9: SIGKILL\)"):
        for _ in it:
            pass
    assert time.monotonic() - start < 5
    assert multiprocessing.active_children() == []


def test_timeout():
    loader = DataLoader(Slow(4, 1.0), batch_size=1, num_workers=1, timeout=0.3, multiprocessing_context=FORK)
    it = iter(loader)
    start = time.monotonic()
    with pytest.raises(RuntimeError, match=r"DataLoader timed out after 0\.3 seconds"):
        next(it)
    assert 0.25 < time.monotonic() - start < 1.5
    del it
    assert multiprocessing.active_children() == []


# ---------------------------------------------------------------- no orphans ----

def test_break_early_leaves_no_processes():
    pids = set()
    for i, batch in enumerate(DataLoader(Slow(40, 0.002), batch_size=2, num_workers=2, multiprocessing_context=FORK)):
        pids.update(batch.tolist())
        if i == 3:
            break
    assert len(pids) == 2
    assert multiprocessing.active_children() == []
    assert not any(pid_alive(p) for p in pids)


def test_keyboard_interrupt_leaves_no_processes():
    pids = set()
    with pytest.raises(KeyboardInterrupt):
        for i, batch in enumerate(DataLoader(Slow(40, 0.002), batch_size=2, num_workers=2,
                                             multiprocessing_context=FORK)):
            pids.update(batch.tolist())
            if i == 3:
                raise KeyboardInterrupt
    assert len(pids) == 2
    assert multiprocessing.active_children() == []
    assert not any(pid_alive(p) for p in pids)


def test_del_iterator_leaves_no_processes():
    it = iter(DataLoader(Slow(40, 0.002), batch_size=2, num_workers=3, multiprocessing_context=FORK))
    pids = {int(p) for _ in range(3) for p in next(it).tolist()}
    assert len(pids) == 3 and len(multiprocessing.active_children()) == 3
    del it
    assert multiprocessing.active_children() == []
    assert not any(pid_alive(p) for p in pids)


def test_workers_exit_when_main_process_dies(tmp_path):
    script = textwrap.dedent("""
        import os, signal, sys, time
        from minitorch.data import DataLoader, Dataset

        class Pid(Dataset):
            def __len__(self):
                return 1000

            def __getitem__(self, i):
                time.sleep(0.01)
                return os.getpid()

        it = iter(DataLoader(Pid(), batch_size=2, num_workers=2, multiprocessing_context="fork"))
        with open(sys.argv[1], "w") as f:
            print(*{int(p) for _ in range(4) for p in next(it).tolist()}, file=f, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)  # no cleanup code runs
    """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out, pid_file = tmp_path / "out.txt", tmp_path / "pids.txt"
    # The pids go to a file of their own: after the SIGKILL, multiprocessing's resource
    # tracker may print warnings about the shared memory it cleans up onto stderr.
    with open(out, "w") as f:  # a file, not a pipe: orphans holding a pipe open would stall run()
        proc = subprocess.run([sys.executable, "-c", script, str(pid_file)], stdout=f, stderr=subprocess.STDOUT,
                              env=env, timeout=60)
    assert proc.returncode == -signal.SIGKILL, out.read_text()
    pids = [int(p) for p in pid_file.read_text().split()]
    assert len(pids) == 2
    gone = wait_gone(pids, 5.0)
    for pid in pids if not gone else []:  # don't leave them running when the test fails
        os.kill(pid, signal.SIGKILL)
    assert gone, "workers outlived their main process"


# ---------------------------------------------------------------- persistent workers ----

def test_persistent_workers_keep_their_processes():
    ds = Slow(12, 0.0)
    loader = DataLoader(ds, batch_size=2, num_workers=2, persistent_workers=True, multiprocessing_context=FORK)
    first = {int(p) for b in loader for p in b.tolist()}
    it = iter(loader)
    next(it)  # a partial epoch: its batches in flight must not leak into the next one
    second = [int(p) for b in loader for p in b.tolist()]
    assert len(first) == 2 and set(second) == first and len(second) == 12
    assert {p.pid for p in multiprocessing.active_children()} == first
    del loader, it
    assert multiprocessing.active_children() == []
    assert not any(pid_alive(p) for p in first)


def test_persistent_workers_same_batches_every_epoch():
    ds = indexed_dataset(17)
    plain = DataLoader(ds, batch_size=4, shuffle=True, generator=Generator(2))
    persistent = DataLoader(ds, batch_size=4, shuffle=True, generator=Generator(2), num_workers=2,
                            persistent_workers=True, multiprocessing_context=FORK)
    for _ in range(3):
        assert epoch(persistent) == epoch(plain)


# ---------------------------------------------------------------- worker info and seeds ----

def test_worker_info_seeds_and_init_fn():
    assert get_worker_info() is None

    def run():
        loader = DataLoader(Info(8), batch_size=None, num_workers=2, worker_init_fn=mark_init,
                            generator=Generator(11), multiprocessing_context=FORK)
        return list(loader)

    rows = run()
    assert [r[0] for r in rows] == list(range(8))
    by_worker = {r[1]: r for r in rows}
    assert set(by_worker) == {0, 1}
    for i, (_, wid, n, seed, mark, _, _, _, ds_name) in enumerate(rows):
        assert wid == i % 2 and n == 2 and mark == 100 + wid and ds_name == "Info"
    assert by_worker[1][3] == by_worker[0][3] + 1  # seed = base_seed + worker_id
    assert by_worker[0][5] != by_worker[1][5]  # two processes
    # NumPy's and minitorch's generators are seeded per worker: different streams, reproducible.
    assert by_worker[0][6] != by_worker[1][6] and by_worker[0][7] != by_worker[1][7]
    again = run()
    assert [r[3] for r in again] == [r[3] for r in rows]
    assert [r[6:8] for r in again] == [r[6:8] for r in rows]
    assert INIT_MARK == {}  # worker_init_fn ran in the workers, not here


# ---------------------------------------------------------------- shared memory ----

def test_shared_memory_does_not_leak():
    before = segments()
    ds = indexed_dataset(40)
    for _ in range(2):
        assert len(list(DataLoader(ds, batch_size=3, num_workers=2, multiprocessing_context=FORK))) == 14
    for i, _ in enumerate(DataLoader(ds, batch_size=3, num_workers=2, prefetch_factor=4,
                                     multiprocessing_context=FORK)):
        if i == 1:
            break  # 8 batches were in flight
    with pytest.raises(ValueError):
        list(DataLoader(Failing(12), batch_size=2, num_workers=2, multiprocessing_context=FORK))
    assert segments() == before == []


def test_pack_unpack_round_trip():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    batch = {"t": minitorch.tensor(x).T, "b": minitorch.tensor([True, False]), "s": minitorch.tensor(2.5),
             "a": np.arange(3, dtype=np.int16), "n": 7, "e": minitorch.zeros(0, 2)}
    out = _shared.unpack(_shared.pack(batch, shm_prefix(os.getpid())))
    assert segments() == []
    assert out["n"] == 7 and out["a"].dtype == np.int16 and out["a"].tolist() == [0, 1, 2]
    np.testing.assert_array_equal(out["t"].numpy(), x.T)  # a non-contiguous tensor
    assert out["b"].tolist() == [True, False] and out["s"].item() == 2.5 and tuple(out["s"].shape) == ()
    assert tuple(out["e"].shape) == (0, 2)


def test_zero_copy_unpack():
    """unpack(copy=False): tensors use the segment's memory, which outlives every other handle."""
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    packed = _shared.pack((minitorch.tensor(x), np.arange(3), "label"), shm_prefix(os.getpid()))
    assert len(segments()) == 1
    t, a, label = _shared.unpack(packed, copy=False)
    assert segments() == [] and label == "label"  # unlinked at once; the mapping lives on
    del a
    np.testing.assert_array_equal(t.numpy(), x)
    t2 = t[1:] * 1.0
    del t
    np.testing.assert_array_equal(t2.numpy(), x[1:])


# ---------------------------------------------------------------- pin_memory ----

@pytest.mark.skipif(minitorch.cuda.is_available() and not minitorch.cuda.is_emulated(), reason="a real GPU is present")
@pytest.mark.parametrize("num_workers", [0, 2])
def test_pin_memory_without_gpu_warns_and_continues(num_workers):
    loader = DataLoader(indexed_dataset(5), batch_size=2, pin_memory=True, num_workers=num_workers,
                        multiprocessing_context=FORK if num_workers else None)
    with pytest.warns(UserWarning, match="'pin_memory' argument is set as true but no accelerator is found"):
        batches = epoch(loader)
    assert batches == epoch(DataLoader(indexed_dataset(5), batch_size=2))


# ---------------------------------------------------------------- arguments ----

@pytest.mark.parametrize("kwargs,error,match", [
    (dict(num_workers=-1), ValueError, "num_workers option should be non-negative; use num_workers=0 to disable "
                                       "multiprocessing."),
    (dict(num_workers=1.5), TypeError, "num_workers"),
    (dict(timeout=-1), ValueError, "timeout option should be non-negative"),
    (dict(prefetch_factor=2), ValueError, "prefetch_factor option could only be specified in multiprocessing"),
    (dict(num_workers=1, prefetch_factor=-1), ValueError, "prefetch_factor option should be non-negative"),
    (dict(persistent_workers=True), ValueError, "persistent_workers option needs num_workers > 0"),
    (dict(shuffle=True, sampler=[0, 1]), ValueError, "sampler option is mutually exclusive with shuffle"),
    (dict(batch_sampler=[[0]], batch_size=2), ValueError, "batch_sampler option is mutually exclusive with "
                                                          "batch_size, shuffle, sampler, and drop_last"),
    (dict(batch_sampler=[[0]], shuffle=True), ValueError, "batch_sampler option is mutually exclusive"),
    (dict(batch_sampler=[[0]], sampler=[0]), ValueError, "batch_sampler option is mutually exclusive"),
    (dict(batch_sampler=[[0]], drop_last=True), ValueError, "batch_sampler option is mutually exclusive"),
    (dict(batch_size=None, drop_last=True), ValueError, "batch_size=None option disables auto-batching"),
    (dict(batch_size=0), ValueError, "batch_size should be a positive integer value"),
    (dict(drop_last=1), ValueError, "drop_last should be a boolean value"),
    (dict(multiprocessing_context="fork"), ValueError, "multiprocessing_context can only be used with multi-process"),
    (dict(num_workers=1, multiprocessing_context="nope"), ValueError, "should specify a valid start method"),
    (dict(num_workers=1, multiprocessing_context=3), TypeError, "should be a valid context object"),
])
def test_argument_errors(kwargs, error, match):
    with pytest.raises(error, match=match.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        DataLoader(indexed_dataset(4), **kwargs)


def test_frozen_attributes_and_worker_count_warning():
    loader = DataLoader(indexed_dataset(4))
    with pytest.raises(ValueError, match="batch_size attribute should not be set after DataLoader is initialized"):
        loader.batch_size = 3
    loader.num_workers = 0  # others may change
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    with pytest.warns(UserWarning, match=f"will create {cores + 1} worker processes"):
        DataLoader(indexed_dataset(4), num_workers=cores + 1)


# ---------------------------------------------------------------- samplers ----

def test_samplers():
    data = list(range(10))
    assert list(SequentialSampler(data)) == data and len(SequentialSampler(data)) == 10
    a = list(RandomSampler(data, generator=Generator(0)))
    assert sorted(a) == data and a != data
    assert list(RandomSampler(data, generator=Generator(0))) == a
    twice = list(RandomSampler(data, num_samples=25, generator=Generator(0)))
    assert len(twice) == 25 and sorted(twice[:10]) == sorted(twice[10:20]) == data
    drawn = list(RandomSampler(data, replacement=True, num_samples=50, generator=Generator(0)))
    assert len(drawn) == 50 and set(drawn) <= set(data)
    assert drawn == list(RandomSampler(data, replacement=True, num_samples=50, generator=Generator(0)))
    assert list(BatchSampler(SequentialSampler(range(5)), 2, False)) == [[0, 1], [2, 3], [4]]
    assert list(BatchSampler(SequentialSampler(range(5)), 2, True)) == [[0, 1], [2, 3]]
    assert len(BatchSampler(range(5), 2, False)) == 3 and len(BatchSampler(range(5), 2, True)) == 2
    with pytest.raises(TypeError, match="replacement should be a boolean value"):
        RandomSampler(data, replacement=1)
    with pytest.raises(ValueError, match="num_samples should be a positive integer value"):
        RandomSampler(data, num_samples=0)
    minitorch.manual_seed(4)
    b = list(RandomSampler(data))
    minitorch.manual_seed(4)
    assert list(RandomSampler(data)) == b


class EvenFirst(Sampler):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(list(range(0, self.n, 2)) + list(range(1, self.n, 2)))

    def __len__(self):
        return self.n


def test_custom_sampler_and_batch_sampler():
    ds = indexed_dataset(7)
    for n in (0, 2):
        ctx = FORK if n else None
        ys = [b[1].tolist() for b in DataLoader(ds, batch_size=3, sampler=EvenFirst(7), num_workers=n,
                                                multiprocessing_context=ctx)]
        assert ys == [[0, 2, 4], [6, 1, 3], [5]]
        ys = [b[1].tolist() for b in DataLoader(ds, batch_sampler=[[6], [0, 1], [5, 5]], num_workers=n,
                                                multiprocessing_context=ctx)]
        assert ys == [[6], [0, 1], [5, 5]]


# ---------------------------------------------------------------- Generator ----

def test_generator_api():
    assert minitorch.Generator is Generator is minitorch.utils.data.Generator
    for name in ("Sampler", "SequentialSampler", "RandomSampler", "BatchSampler", "get_worker_info"):
        assert getattr(minitorch.utils.data, name) is getattr(minitorch.data, name)
    g = Generator()
    assert g.initial_seed() == 67280421310721  # PyTorch's default: reproducible without a seed too
    assert g.manual_seed(5) is g and g.initial_seed() == 5
    s = g.seed()
    assert g.initial_seed() == s and 0 <= s < 2**63
    assert Generator().manual_seed(-1).initial_seed() == 2**64 - 1
    g.manual_seed(9)
    g.permutation(5)
    state = g.get_state()
    assert state.dtype == minitorch.int64 and tuple(state.shape) == (12,)
    after = g.permutation(100).tolist()
    h = Generator().set_state(state)
    assert h.permutation(100).tolist() == after and h.initial_seed() == 9
    with pytest.raises(TypeError, match="manual_seed: seed must be an int"):
        g.manual_seed(1.5)
    with pytest.raises(ValueError, match="does not fit in 64 bits"):
        g.manual_seed(2**64)
    with pytest.raises(TypeError, match="set_state"):
        g.set_state([1, 2])


def test_random_split_takes_a_generator():
    ds = indexed_dataset(10)
    a, b = minitorch.data.random_split(ds, [6, 4], generator=minitorch.Generator().manual_seed(1))
    c, d = minitorch.data.random_split(ds, [6, 4], generator=minitorch.Generator(1))
    assert a.indices == c.indices and sorted(a.indices + b.indices) == list(range(10))


@pytest.mark.parametrize("copy", [True, False])
@pytest.mark.parametrize("dtype", [minitorch.float16, minitorch.bfloat16])
def test_16bit_tensors_through_shared_memory(dtype, copy):
    """float16 travels as NumPy float16; bfloat16, which NumPy lacks, as its bits: every
    value comes back bit for bit, with its dtype (a non-contiguous view too)."""
    src = (minitorch.randn(4, 6) * 1000).to(dtype)
    view = src.t()
    packed = _shared.pack({"a": src, "b": view}, shm_prefix(os.getpid()))
    out = _shared.unpack(packed, copy=copy)
    for got, want in ((out["a"], src), (out["b"], view)):
        assert got.dtype == dtype and tuple(got.shape) == tuple(want.shape)
        np.testing.assert_array_equal(minitorch._C._numpy_bits(got.contiguous()),
                                      minitorch._C._numpy_bits(want.contiguous()))


def test_bfloat16_batches_from_workers():
    ds = TensorDataset(minitorch.arange(24, dtype=minitorch.float32).reshape(12, 2).bfloat16(),
                       minitorch.arange(12))
    one = [(x.float().tolist(), y.tolist()) for x, y in DataLoader(ds, batch_size=5)]
    loader = DataLoader(ds, batch_size=5, num_workers=2, multiprocessing_context=FORK)
    batches = list(loader)
    assert all(x.dtype == minitorch.bfloat16 for x, _ in batches)
    assert [(x.float().tolist(), y.tolist()) for x, y in batches] == one
