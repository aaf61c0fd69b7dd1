"""The main-process side of ``DataLoader(num_workers=N)``.

    main process                                   worker i  (i = batch % N)
    sampler -> (batch, indices) -> task queue i -> fetch, collate, pack into shared memory
    yield in order <- reorder buffer <- pipe i <- (batch, SharedBatch)

Batch ``k`` goes to worker ``k % N``. At most ``prefetch_factor * N`` batches are in
flight; each batch handed out (to the training loop) lets one more be sent. Workers
finish at different speeds, so results may arrive out of order; those that come early
wait in a dict (the reorder buffer) until their turn.

The main process waits on the result pipes and on each worker's ``sentinel`` (ready
when the process ends) at the same time, so a worker that dies is noticed at once
instead of leaving the loop waiting forever.
"""
from __future__ import annotations

import multiprocessing
import os
import signal
import time
from multiprocessing import connection, resource_tracker

from . import _shared
from ._fetch import Fetcher
from ._pin_memory import pin, pinning_possible
from ._worker import ExceptionWrapper, ResumeIteration, worker_loop
from .generator import random_seed

# How long shutdown waits for workers to finish their current batch before killing them.
JOIN_TIMEOUT = 5.0


def shm_prefix(pid: int) -> str:
    """Names of this process's batch segments start with this (tests count them)."""
    return f"mt{pid}_"


def _describe_exit(code: int) -> str:
    if code < 0:
        try:
            return f"killed by signal {-code}: {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


class MultiProcessIter:
    """One pass over the DataLoader with worker processes (reused across passes when
    ``persistent_workers=True``)."""

    def __init__(self, loader):
        self._workers, self._task_queues, self._conns = [], [], []
        self._reorder = {}
        self._shut_down = False
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        self._window = max(loader.prefetch_factor, 1) * loader.num_workers
        self._timeout = loader.timeout
        self._persistent = loader.persistent_workers
        self._pin = loader.pin_memory and pinning_possible()
        self._epoch = 0
        # Drawn before the sampler's shuffle, as with num_workers=0: same seed, same batches.
        base_seed = random_seed(loader.generator)
        ctx = loader.multiprocessing_context or multiprocessing.get_context()
        fetcher = Fetcher(loader.dataset, loader.collate_fn, loader._auto_collation)
        # One resource tracker for us and every worker (forked ones too), so a segment a
        # worker creates and we unlink is booked in one place, and one a killed worker
        # leaves behind is still removed when the program ends.
        resource_tracker.ensure_running()
        self._stop_event = ctx.Event()
        try:
            for worker_id in range(self._num_workers):
                task_queue = ctx.Queue()
                task_queue.cancel_join_thread()  # exiting must not wait to feed a dead worker
                reader, writer = ctx.Pipe(duplex=False)
                worker = ctx.Process(
                    target=worker_loop, daemon=True,
                    args=(fetcher, task_queue, writer, self._stop_event, base_seed, loader.worker_init_fn,
                          worker_id, self._num_workers, shm_prefix(os.getpid())))
                worker.start()
                writer.close()  # only the worker writes: its exit then shows as EOF here
                self._workers.append(worker)
                self._task_queues.append(task_queue)
                self._conns.append(reader)
            self._start_epoch()
        except BaseException:
            self._shutdown()
            raise

    def __iter__(self):
        return self

    def __len__(self) -> int:
        return len(self._index_sampler)

    def _reset(self, loader) -> None:
        """A new epoch on the same (persistent) workers."""
        random_seed(loader.generator)  # keeps the random stream in step with non-persistent loaders
        self._epoch += 1
        for task_queue in self._task_queues:
            task_queue.put(ResumeIteration(self._epoch))
        # Everything that arrives before a worker's echo is left over from the last epoch.
        echoes = 0
        while echoes < self._num_workers:
            _, payload = self._receive()
            if isinstance(payload, ResumeIteration) and payload.epoch == self._epoch:
                echoes += 1
            else:
                _shared.free(payload)
        self._start_epoch()

    def _start_epoch(self) -> None:
        for payload in self._reorder.values():
            _shared.free(payload)
        self._reorder = {}
        self._sampler_iter = iter(self._index_sampler)
        self._send_idx = 0  # next batch to hand to a worker
        self._rcvd_idx = 0  # next batch to yield
        for _ in range(self._window):
            self._send_task()

    def _send_task(self) -> None:
        if self._sampler_iter is None or self._send_idx - self._rcvd_idx >= self._window:
            return
        try:
            indices = next(self._sampler_iter)
        except StopIteration:
            self._sampler_iter = None
            return
        self._task_queues[self._send_idx % self._num_workers].put((self._send_idx, indices))
        self._send_idx += 1

    def __next__(self):
        if self._shut_down:
            raise StopIteration
        while self._rcvd_idx not in self._reorder:
            if self._rcvd_idx == self._send_idx:  # nothing in flight: the sampler is done
                if not self._persistent:
                    self._shutdown()
                raise StopIteration
            batch_index, payload = self._receive()
            if batch_index is not None:
                self._reorder[batch_index] = payload
        payload = self._reorder.pop(self._rcvd_idx)
        self._rcvd_idx += 1
        self._send_task()
        if isinstance(payload, ExceptionWrapper):
            payload.reraise()
        batch = _shared.unpack(payload)
        return pin(batch) if self._pin else batch

    def _receive(self):
        """The next message from any worker; RuntimeError when one has died or ``timeout`` passed."""
        deadline = time.monotonic() + self._timeout if self._timeout > 0 else None
        conns = [c for c in self._conns if not c.closed]
        while True:
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
            ready = connection.wait(conns + [w.sentinel for w in self._workers], remaining)
            # Results first: a worker that has just exited may still have sent something.
            results = [r for r in ready if r in conns]
            if results:
                try:
                    return results[0].recv()
                except EOFError:  # this worker is gone and its pipe is empty
                    conns.remove(results[0])
                    continue
            if ready:  # only sentinels: a worker process ended in the middle of the epoch
                dead = [w for w in self._workers if w.sentinel in ready]
                for w in dead:
                    w.join(1.0)  # its sentinel closes a moment before its exit code is known
                self._shutdown()
                pids = ", ".join(str(w.pid) for w in dead)
                how = f" ({_describe_exit(dead[0].exitcode)})" if len(dead) == 1 and dead[0].exitcode is not None else ""
                raise RuntimeError(f"DataLoader worker (pid{'(s)' if len(dead) > 1 else ''} {pids}) exited "
                                   f"unexpectedly{how}")

    def _shutdown(self) -> None:
        """Stops the workers and frees every batch still in flight; safe to call twice."""
        if self._shut_down:
            return
        self._shut_down = True
        if self._workers:
            self._stop_event.set()
        for task_queue in self._task_queues:
            task_queue.put(None)
        # Keep reading while the workers finish their current batch: a worker blocked
        # writing to a full pipe could not exit otherwise, and each batch read is freed.
        deadline = time.monotonic() + JOIN_TIMEOUT
        conns = list(self._conns)
        while conns and time.monotonic() < deadline:
            for conn in connection.wait(conns, max(deadline - time.monotonic(), 0)):
                try:
                    _shared.free(conn.recv()[1])
                except (EOFError, OSError):
                    conns.remove(conn)
        for worker in self._workers:
            if worker.exitcode is None:  # still busy after JOIN_TIMEOUT (or stuck)
                worker.terminate()
                worker.join(1.0)
            if worker.exitcode is None:
                worker.kill()
            worker.join()
        for conn in self._conns:
            try:  # what a worker sent just before it was stopped
                while conn.poll():
                    _shared.free(conn.recv()[1])
            except (EOFError, OSError):
                pass
            conn.close()
        for task_queue in self._task_queues:
            task_queue.close()
        for payload in self._reorder.values():
            _shared.free(payload)
        self._reorder = {}

    def __del__(self):
        try:
            self._shutdown()
        except Exception:  # noqa: BLE001  (interpreter shutdown: modules may be half gone)
            pass
