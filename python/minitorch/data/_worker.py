"""The loop each DataLoader worker process runs, and what a worker knows about itself.

A worker receives ``(batch_index, indices)`` tasks on its own queue, fetches and collates
that batch, packs it into shared memory (``_shared.pack``) and sends back
``(batch_index, SharedBatch)`` on its own pipe. An exception becomes an
``ExceptionWrapper`` sent in place of the batch, so the main process can raise it.
"""
from __future__ import annotations

import multiprocessing
import pickle
import queue
import random
import sys
import traceback
from dataclasses import dataclass

import numpy as np

from . import _shared

# How often an idle worker checks that its parent is still alive (seconds).
POLL_INTERVAL = 0.5


class WorkerInfo:
    """What ``get_worker_info()`` returns inside a worker: ``id``, ``num_workers``, ``seed``
    (this worker's seed) and ``dataset`` (this worker's copy of the dataset)."""

    _frozen = False

    def __init__(self, **fields):
        for key, value in fields.items():
            setattr(self, key, value)
        self._frozen = True

    def __setattr__(self, key, value):
        if self._frozen:
            raise RuntimeError(f"Cannot assign attributes to {type(self).__name__} objects")
        super().__setattr__(key, value)

    def __repr__(self) -> str:
        return f"WorkerInfo(id={self.id}, num_workers={self.num_workers}, seed={self.seed}, dataset={self.dataset!r})"


_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """Inside a DataLoader worker process: its ``WorkerInfo``. In the main process: None.

    A dataset can use it to behave differently per worker, e.g. to open its own file
    handle, or (in ``worker_init_fn``) to split work by ``info.id``.
    """
    return _worker_info


class KeyErrorMessage(str):
    """A KeyError prints ``repr`` of its message, which would show a traceback as one
    line full of ``\\n``; this string's repr is itself."""

    def __repr__(self) -> str:
        return self


class ExceptionWrapper:
    """An exception caught in a worker, carried to the main process and raised there
    with the same type and the worker's traceback in its message."""

    def __init__(self, where: str):
        exc_type, exc, tb = sys.exc_info()
        self.type_name = exc_type.__name__
        self.text = "".join(traceback.format_exception(exc_type, exc, tb))
        self.where = where
        try:  # a class that cannot be pickled (defined inside a function) comes back as RuntimeError
            pickle.loads(pickle.dumps(exc_type))
            self.exc_type = exc_type
        except Exception:  # noqa: BLE001
            self.exc_type = RuntimeError

    def reraise(self):
        msg = f"Caught {self.type_name} {self.where}.\nOriginal {self.text}"
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        try:
            exc = self.exc_type(msg)
        except Exception:  # noqa: BLE001  (a constructor that wants other arguments)
            exc = RuntimeError(msg)
        try:
            raise exc
        finally:
            # Otherwise this frame -> exc -> its traceback -> this frame is a cycle, and the
            # iterator (in the caller's frame) would wait for the garbage collector to stop its workers.
            del exc


@dataclass(frozen=True)
class ResumeIteration:
    """Sent to persistent workers when a new epoch starts; each echoes it back, so every
    result that arrives before the echo belongs to the previous epoch."""
    epoch: int


def _seed_everything(seed: int, base_seed: int, worker_id: int) -> None:
    """Seeds Python's, minitorch's and NumPy's global generators differently in each worker,
    from the epoch's ``base_seed``: random augmentations are reproducible and not the same
    in every worker."""
    import minitorch

    random.seed(seed)
    minitorch.manual_seed(seed)
    # np.random.seed takes at most 32 bits per word: mix (worker_id, base_seed) into four
    # words with NumPy's SeedSequence instead of truncating a 64-bit seed.
    np.random.seed(np.random.SeedSequence([worker_id, base_seed]).generate_state(4))


def worker_loop(fetcher, task_queue, result_conn, stop_event, base_seed: int, worker_init_fn, worker_id: int,
                num_workers: int, shm_prefix: str) -> None:
    """The body of a worker process; returns (and the process exits) on a ``None`` task,
    when the main process is gone, or on KeyboardInterrupt (the main process gets it too
    and cleans up). Once ``stop_event`` is set, queued tasks are skipped, so shutting
    down waits for one batch at most."""
    global _worker_info
    import minitorch

    try:
        # Workers run side by side: one thread each. (It also keeps the OpenMP runtime,
        # whose thread pool does not survive fork, from starting threads in a forked child.)
        minitorch.set_num_threads(1)
        seed = base_seed + worker_id
        _seed_everything(seed, base_seed, worker_id)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=fetcher.dataset)
        where = f"in DataLoader worker process {worker_id}"
        # The process that started us (the main process, for every start method). If it dies
        # without shutting us down (killed, crashed), we must not live on as an orphan.
        parent = multiprocessing.parent_process()
        init_error = None
        try:
            if worker_init_fn is not None:
                worker_init_fn(worker_id)
        except Exception:  # noqa: BLE001  (reported in place of the first batch)
            init_error = ExceptionWrapper(where)

        while True:
            if parent is not None and not parent.is_alive():
                return  # nobody will read our batches
            try:
                task = task_queue.get(timeout=POLL_INTERVAL)
            except queue.Empty:
                continue
            if task is None:
                return
            if isinstance(task, ResumeIteration):
                result_conn.send((None, task))
                continue
            if stop_event.is_set():
                continue  # shutting down: skip what is still queued, up to the None
            batch_index, indices = task
            if init_error is not None:
                payload, init_error = init_error, None
            else:
                try:
                    payload = _shared.pack(fetcher.fetch(indices), shm_prefix)
                except Exception:  # noqa: BLE001
                    payload = ExceptionWrapper(where)
            try:
                result_conn.send((batch_index, payload))
            except OSError:  # the main process closed its end
                _shared.free(payload)
                return
            except Exception:  # noqa: BLE001  (the batch cannot be pickled, e.g. it holds a lambda)
                _shared.free(payload)
                result_conn.send((batch_index, ExceptionWrapper(where)))
    except KeyboardInterrupt:
        pass
    except (BrokenPipeError, ConnectionResetError):
        pass  # the main process is gone
    finally:
        result_conn.close()
