"""Streams, events and pinned memory: ``minitorch.cuda.Stream``, ``Event``,
``current_stream``, ``stream(...)`` and ``tensor.to("cuda", non_blocking=True)`` from
pinned memory (``Tensor.pin_memory``: ops/memory.py), with PyTorch's names.

What they are for: a GPU runs queued work while the host goes on. An Event is a mark in a
stream's queue; two of them time the work between them on the GPU's own clock
(``start.elapsed_time(end)``, in milliseconds), which is how GPU code is timed. A copy to
the GPU from pinned (page-locked) memory is only queued, so the host can prepare the next
batch meanwhile (DataLoader's ``pin_memory=True``).

minitorch's own kernels and copies run on the default stream; a Stream made here is a
blocking stream, ordered with it, so nothing needs extra waits to be correct. In the
CUDA emulator every launch finishes before it returns: events there time the host's work.
"""
from __future__ import annotations

import contextlib

from . import _C
from ._C import Tensor


def _need_cuda(what: str) -> None:
    if not _C._cuda_init():
        raise RuntimeError(f"{what}: {_C._cuda_unavailable_reason()}")


class Stream:
    """A queue of GPU work (``torch.cuda.Stream``). ``Stream()`` makes a new one;
    ``minitorch.cuda.default_stream()`` is the one minitorch's own work goes to."""

    def __init__(self, device=None, priority: int = 0, *, _handle: int | None = None):
        _need_cuda("Stream")
        self._owned = _handle is None
        self.cuda_stream = _C._cuda_stream_create(int(priority)) if _handle is None else _handle
        self.priority = priority
        self.device = _C.device("cuda")

    def synchronize(self) -> None:
        """Waits until everything queued on this stream has finished."""
        _C._cuda_stream_synchronize(self.cuda_stream)

    def query(self) -> bool:
        """True when everything queued on this stream has finished."""
        return _C._cuda_stream_query(self.cuda_stream)

    def wait_event(self, event: "Event") -> None:
        """Later work on this stream waits for `event`."""
        _C._cuda_stream_wait_event(self.cuda_stream, event._handle)

    def wait_stream(self, stream: "Stream") -> None:
        """Later work on this stream waits for what `stream` has queued so far."""
        self.wait_event(stream.record_event())

    def record_event(self, event: "Event | None" = None) -> "Event":
        event = event or Event()
        event.record(self)
        return event

    def __eq__(self, other) -> bool:
        return isinstance(other, Stream) and other.cuda_stream == self.cuda_stream

    def __hash__(self) -> int:
        return hash(self.cuda_stream)

    def __repr__(self) -> str:
        return f"<minitorch.cuda.Stream device=cuda:0 cuda_stream={self.cuda_stream:#x}>"

    def __del__(self):
        if getattr(self, "_owned", False):
            _C._cuda_stream_destroy(self.cuda_stream)


class Event:
    """A mark in a stream (``torch.cuda.Event``): ``record`` it, then ``synchronize``,
    ``query``, or time work with ``start.elapsed_time(end)`` (milliseconds)."""

    def __init__(self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False):
        _need_cuda("Event")
        if interprocess:
            raise NotImplementedError("Event: interprocess events are not supported")
        self.enable_timing = enable_timing
        self._handle = _C._cuda_event_create(bool(enable_timing), bool(blocking))
        self._recorded = False

    def record(self, stream: Stream | None = None) -> None:
        """Marks the current end of `stream`'s queue (default: the current stream)."""
        _C._cuda_event_record(self._handle, (stream or current_stream()).cuda_stream)
        self._recorded = True

    def wait(self, stream: Stream | None = None) -> None:
        """Later work on `stream` (default: the current stream) waits for this event."""
        (stream or current_stream()).wait_event(self)

    def synchronize(self) -> None:
        """Waits until the work before the mark has finished."""
        _C._cuda_event_synchronize(self._handle)

    def query(self) -> bool:
        return _C._cuda_event_query(self._handle)

    def elapsed_time(self, end_event: "Event") -> float:
        """Milliseconds between this event and `end_event` (both recorded, both timing)."""
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        if not (self._recorded and end_event._recorded):
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        return _C._cuda_event_elapsed_ms(self._handle, end_event._handle)

    def __repr__(self) -> str:
        return f"<minitorch.cuda.Event timing={self.enable_timing} recorded={self._recorded}>"

    def __del__(self):
        if hasattr(self, "_handle"):
            _C._cuda_event_destroy(self._handle)


_default = None
_current = None


def default_stream(device=None) -> Stream:
    """Stream 0, where minitorch's own kernels and copies run."""
    global _default
    if _default is None:
        _need_cuda("default_stream")
        _default = Stream(_handle=0)
    return _default


def current_stream(device=None) -> Stream:
    """The stream ``Event.record()`` marks by default: the one set by ``stream(...)``."""
    return _current or default_stream()


@contextlib.contextmanager
def stream(s: Stream | None):
    """``with minitorch.cuda.stream(s):`` makes `s` the current stream inside (None: no change)."""
    global _current
    previous = _current
    if s is not None:
        _current = s
    try:
        yield s
    finally:
        _current = previous


def copy_to_cuda_async(t: Tensor, device):
    """``t.to(device, non_blocking=True)`` for a pinned CPU tensor: the copy is queued on
    the default stream and the call returns at once; None where that does not apply (the
    caller then copies the ordinary way, which waits)."""
    if (device.type == "cuda" and _C._cuda_init() and t.device.type == "cpu"
            and _C._is_pinned(t) and t.is_contiguous() and not (t.requires_grad and _C.is_grad_enabled())):
        return _C._cuda_copy_async(t, device)
    return None
