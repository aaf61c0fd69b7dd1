"""``minitorch.profiler``: which ops ran, how long they took, and which kernels they launched.

Shaped like ``torch.profiler``::

    from minitorch.profiler import profile, ProfilerActivity

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        loss = model(x).sum()
        loss.backward()

    print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=10))
    prof.export_chrome_trace("trace.json")  # open in chrome://tracing or ui.perfetto.dev

    for e in prof.events():  # one per op call, in the order they began
        print(e.name, e.cpu_time_total, [(k.name, k.grid, k.block) for k in e.kernels])

Each call of an op from your code is one event: ops that op calls inside itself, and
every kernel they launch, belong to it, so ``len(event.kernels)`` is the number of
launches that one call made. ``backward()`` adds one event per graph node it runs
(named like ``MmBackward0``), a custom ``autograd.Function`` one named after its class,
and :class:`record_function` one for a block of your own code.

With the CUDA activity, kernels are recorded with their grid and block; on a GPU their
``duration`` (microseconds) is measured with CUDA events, in the emulator it is 0
(the launches are still recorded, so tests can count them without a GPU). A cuBLAS call
counts as one kernel, with grid and block ``(0, 0, 0)``. Copies between host and device
(``cudaMemcpy``) are not kernels and are not listed.
"""
from __future__ import annotations

import enum
import json
import warnings
from typing import Iterable, NamedTuple, Optional

from . import _C

__all__ = ["ProfilerActivity", "profile", "record_function", "supported_activities"]


class ProfilerActivity(enum.Enum):
    """What a profile records: ``CPU`` (op events) and ``CUDA`` (kernel launches)."""

    CPU = "CPU"
    CUDA = "CUDA"


def supported_activities() -> set:
    """The activities this build can record (CUDA when a GPU or the emulator is there)."""
    activities = {ProfilerActivity.CPU}
    if _C._cuda_init():
        activities.add(ProfilerActivity.CUDA)
    return activities


class Kernel(NamedTuple):
    """One kernel launch. ``duration`` is in microseconds (0 in the emulator)."""

    name: str
    device: int
    duration: float
    grid: tuple
    block: tuple
    start: float = 0.0  # microseconds since the profile started (device time on a GPU)


class FunctionEvent:
    """One op call (or autograd node, Function, record_function block) and its kernels.

    Times are in microseconds: ``cpu_time_total`` is the wall time of the call on its
    thread, ``device_time_total`` the sum of its kernels' durations.
    """

    __slots__ = ("id", "name", "thread", "start", "cpu_time_total", "input_shapes", "kernels")

    def __init__(self, id: int, name: str, thread: int, start: float, cpu_time_total: float,
                 input_shapes: list, kernels: list):
        self.id = id
        self.name = name
        self.thread = thread
        self.start = start
        self.cpu_time_total = cpu_time_total
        self.input_shapes = input_shapes
        self.kernels = kernels

    count = 1

    @property
    def key(self) -> str:
        return self.name

    @property
    def cpu_time(self) -> float:
        return self.cpu_time_total

    @property
    def self_cpu_time_total(self) -> float:
        # Ops called inside this one are part of it, not events of their own.
        return self.cpu_time_total

    @property
    def device_time_total(self) -> float:
        return sum(k.duration for k in self.kernels)

    cuda_time_total = device_time_total  # the name older PyTorch code uses

    @property
    def kernel_count(self) -> int:
        return len(self.kernels)

    def __repr__(self) -> str:
        return (f"<FunctionEvent id={self.id} name={self.name!r} cpu_time_total={self.cpu_time_total:.3f} "
                f"device_time_total={self.device_time_total:.3f} kernels={len(self.kernels)} "
                f"input_shapes={self.input_shapes}>")


class FunctionEventAvg:
    """The events of one name (and input shapes, when grouped by them), added up."""

    def __init__(self, key: str, input_shapes: Optional[list] = None):
        self.key = key
        self.input_shapes = input_shapes
        self.count = 0
        self.cpu_time_total = 0.0
        self.device_time_total = 0.0
        self.kernel_count = 0

    def add(self, event: FunctionEvent) -> None:
        self.count += 1
        self.cpu_time_total += event.cpu_time_total
        self.device_time_total += event.device_time_total
        self.kernel_count += len(event.kernels)

    @property
    def name(self) -> str:
        return self.key

    self_cpu_time_total = property(lambda self: self.cpu_time_total)
    cuda_time_total = property(lambda self: self.device_time_total)
    cpu_time = property(lambda self: self.cpu_time_total / max(self.count, 1))
    device_time = property(lambda self: self.device_time_total / max(self.count, 1))
    cuda_time = device_time

    def __repr__(self) -> str:
        return (f"<FunctionEventAvg key={self.key!r} count={self.count} cpu_time_total={self.cpu_time_total:.3f} "
                f"device_time_total={self.device_time_total:.3f} kernel_count={self.kernel_count}>")


_SORT_KEYS = ("cpu_time_total", "self_cpu_time_total", "cpu_time", "device_time_total", "cuda_time_total",
              "device_time", "cuda_time", "count", "kernel_count")


def _format_time(us: float) -> str:
    """Microseconds as PyTorch's tables print them: 12.345us, 1.234ms, 2.000s."""
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def _build_table(rows: list, sort_by: Optional[str], row_limit: int, with_shapes: bool) -> str:
    if sort_by is not None:
        if sort_by not in _SORT_KEYS:
            raise ValueError(f"table: sort_by must be one of {', '.join(_SORT_KEYS)}; got {sort_by!r}")
        rows = sorted(rows, key=lambda r: getattr(r, sort_by), reverse=True)
    total_cpu = sum(r.cpu_time_total for r in rows)
    total_device = sum(r.device_time_total for r in rows)
    if row_limit is not None and row_limit >= 0:
        rows = rows[:row_limit]

    headers = ["Name", "# of Calls", "CPU total", "CPU time avg", "Kernels", "Device total", "Device time avg"]
    if with_shapes:
        headers.append("Input Shapes")
    body = []
    for r in rows:
        line = [r.key, str(r.count), _format_time(r.cpu_time_total), _format_time(r.cpu_time),
                str(r.kernel_count), _format_time(r.device_time_total), _format_time(r.device_time)]
        if with_shapes:
            line.append(str(r.input_shapes))
        body.append(line)
    widths = [max([len(h)] + [len(line[i]) for line in body]) for i, h in enumerate(headers)]

    def fmt(cells: list) -> str:
        # The name (and shapes) left-aligned, numbers right-aligned.
        return "  ".join(c.ljust(w) if i == 0 or headers[i] == "Input Shapes" else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    rule = "  ".join("-" * w for w in widths)
    lines = [rule, fmt(headers), rule, *(fmt(line) for line in body), rule,
             f"CPU time total: {_format_time(total_cpu)}", f"Device time total: {_format_time(total_device)}"]
    return "\n".join(lines) + "\n"


class EventList(list):
    """A list of events (or of averages) that can add itself up and print itself."""

    def __init__(self, items=(), grouped_by_shapes: bool = False):
        super().__init__(items)
        self._grouped_by_shapes = grouped_by_shapes

    def key_averages(self, group_by_input_shape: bool = False) -> "EventList":
        """One :class:`FunctionEventAvg` per event name (and input shapes), in first-seen order."""
        groups: dict = {}
        for e in self:
            shapes = e.input_shapes if group_by_input_shape else None
            key = (e.name, repr(shapes))
            if key not in groups:
                groups[key] = FunctionEventAvg(e.name, shapes)
            groups[key].add(e)
        return EventList(groups.values(), grouped_by_shapes=group_by_input_shape)

    def table(self, sort_by: Optional[str] = None, row_limit: int = 100) -> str:
        """A text table: name, calls, CPU total and average, kernel launches, device time.

        Args:
            sort_by: an attribute to sort by, largest first (``"cpu_time_total"``,
                ``"device_time_total"``, ``"count"``, ``"kernel_count"``, ...); None keeps the order.
            row_limit: at most this many rows (-1: all).
        """
        rows = self if self and isinstance(self[0], FunctionEventAvg) else self.key_averages()
        return _build_table(list(rows), sort_by, row_limit, self._grouped_by_shapes)

    def __str__(self) -> str:
        return self.table()


class profile:
    """Records op calls and kernel launches while its ``with`` block runs.

    Args:
        activities: what to record, a list of :class:`ProfilerActivity`. None: the CPU, and
            CUDA when available (as PyTorch). Without ``CPU`` every launch is an event of
            its own; without ``CUDA`` no kernels are recorded.
        record_shapes: fill each event's ``input_shapes`` (the shapes of its tensor inputs).

    Example::

        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            y = x @ w
        assert sum(len(e.kernels) for e in prof.events()) == 1

    Profiles do not nest: starting one while another runs is a RuntimeError.
    """

    def __init__(self, *, activities: Optional[Iterable[ProfilerActivity]] = None, record_shapes: bool = False):
        if activities is None:
            activities = supported_activities()
        activities = set(activities)
        for a in activities:
            if not isinstance(a, ProfilerActivity):
                raise TypeError(f"profile: activities must be ProfilerActivity values, got {a!r}")
        if ProfilerActivity.CUDA in activities and ProfilerActivity.CUDA not in supported_activities():
            warnings.warn("profile: CUDA activity requested, but CUDA is not available; recording the CPU only",
                          stacklevel=2)
            activities.discard(ProfilerActivity.CUDA)
        self.activities = activities
        self.record_shapes = bool(record_shapes)
        self._events: Optional[EventList] = None
        self._running = False

    def start(self) -> None:
        _C._profiler_start(ProfilerActivity.CPU in self.activities, ProfilerActivity.CUDA in self.activities,
                           self.record_shapes)
        self._events = None
        self._running = True

    def stop(self) -> None:
        if not self._running:
            raise RuntimeError("profile: stop() called, but this profile is not running")
        self._running = False
        raw = _C._profiler_stop()
        events = []
        for i, (name, thread, start, duration, shapes, kernels) in enumerate(raw):
            ks = [Kernel(kname, 0, kdur, grid, block, kstart) for kname, grid, block, kstart, kdur in kernels]
            events.append(FunctionEvent(i, name, thread, start, duration, [list(s) for s in shapes], ks))
        self._events = EventList(events)

    def __enter__(self) -> "profile":
        self.start()
        return self

    def __exit__(self, *exc) -> bool:
        self.stop()
        return False

    def _check_finished(self, what: str) -> EventList:
        if self._events is None:
            raise RuntimeError(f"profile: {what} is available once the profile has stopped (after the with block)")
        return self._events

    def events(self) -> EventList:
        """Every recorded event, in the order they began."""
        return self._check_finished("events()")

    def key_averages(self, group_by_input_shape: bool = False) -> EventList:
        """The events grouped by name (and input shapes), each a :class:`FunctionEventAvg`."""
        return self._check_finished("key_averages()").key_averages(group_by_input_shape)

    def export_chrome_trace(self, path: str) -> None:
        """Writes the events as a Chrome trace (JSON), for chrome://tracing or ui.perfetto.dev.

        Ops are complete ("X") events on their CPU thread, kernels "X" events on the GPU's row.
        """
        events = self._check_finished("export_chrome_trace()")
        trace = [
            {"ph": "M", "name": "process_name", "pid": 0, "tid": 0, "args": {"name": "CPU"}},
            {"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "GPU 0"}},
        ]
        for e in events:
            args = {"Input Dims": e.input_shapes, "kernels": len(e.kernels)}
            trace.append({"ph": "X", "cat": "cpu_op", "name": e.name, "pid": 0, "tid": e.thread,
                          "ts": e.start, "dur": e.cpu_time_total, "args": args})
            for k in e.kernels:
                trace.append({"ph": "X", "cat": "kernel", "name": k.name, "pid": 1, "tid": 0, "ts": k.start,
                              "dur": k.duration, "args": {"grid": list(k.grid), "block": list(k.block), "op": e.name}})
        with open(path, "w") as f:
            json.dump({"traceEvents": trace, "displayTimeUnit": "ms"}, f)


class record_function:
    """Makes a block of your code one event named ``name`` (ops inside it belong to it).

        with record_function("attention"):
            scores = q @ k.T
            weights = minitorch.nn.functional.softmax(scores, dim=-1)

    Also works as a decorator. Outside a profile it does nothing.
    """

    def __init__(self, name: str):
        if not isinstance(name, str):
            raise TypeError(f"record_function: name must be a str, got {type(name).__name__}")
        self.name = name
        self._tokens: list = []

    def __enter__(self) -> "record_function":
        self._tokens.append(_C._profiler_begin(self.name))
        return self

    def __exit__(self, *exc) -> bool:
        _C._profiler_end(self._tokens.pop())
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with record_function(self.name):
                return fn(*args, **kwargs)

        return wrapped
