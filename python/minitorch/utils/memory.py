"""``memory_breakdown(model, inputs, ...)``: where a training step's peak memory goes.

    >>> opt = minitorch.optim.Adam(model.parameters())
    >>> b = minitorch.utils.memory.memory_breakdown(
    ...     model, x, loss_fn=lambda out: F.cross_entropy(out, y), optimizer=opt)
    >>> print(b)                 # per layer, then the categories at the peak
    >>> b.peak, b.categories["activations"]

It runs one real step (``optimizer.zero_grad()``, forward, ``loss_fn(output).backward()``,
``optimizer.step()``; with ``train=False``: ``model.eval()`` and a forward under
``no_grad``) while the device's allocator records every allocation and free. Replaying
that record finds the moment of the peak (``max_memory_allocated`` over the step) and
the blocks alive then, and each is put in one category:

* ``parameters``: the model's parameters and buffers (BatchNorm's running statistics);
* ``gradients``: the parameters' ``.grad``;
* ``optimizer_state``: the tensors in ``optimizer.state`` (Adam's two moments, ...);
* ``inputs``: the tensors passed as ``inputs``;
* ``activations``: tensors the graph saved for backward, seen through
  ``minitorch.autograd.graph.saved_tensors_hooks`` (a storage saved twice, e.g. a ReLU's
  output that the next Linear saves as its input, counts once), and whatever else the
  forward left alive for backward (the output; the block inputs that
  ``minitorch.utils.checkpoint`` keeps to recompute from);
* ``temporaries``: every other block allocated during the step and alive at the peak
  (outputs nobody saved, the gradients flowing backward, an optimizer's scratch);
* ``other``: blocks that were allocated before the step, are not the model's, and were
  still alive (other tensors of the program).

The categories sum to ``peak`` exactly: a block counts at its size in the allocator
(rounded as ``memory_allocated`` counts it; docs/memory.md), and memory that is not the
allocator's (``from_numpy``) counts nowhere, as it does not in ``memory_allocated``.

Per layer (``layers``): what each module holds directly (its parameters and buffers,
their gradients and optimizer state) and the activations saved while it ran (the
innermost module running when backward's tensors were saved, or, for the other blocks
the forward left alive, when they were allocated; those of ``loss_fn`` are on the row
``(loss)``). These rows are what each layer holds over the step; the
categories are what was alive at the peak, which can be less (a peak reached in the
optimizer step, after backward freed the activations, has none).

The step changes the model as a real step does (its parameters, BatchNorm's statistics,
the optimizer's state).
"""
from __future__ import annotations

import bisect
from collections import defaultdict
from dataclasses import dataclass, field

from .. import _C, nn
from ..autograd import no_grad
from ..autograd.graph import saved_tensors_hooks

CATEGORIES = ("parameters", "gradients", "optimizer_state", "inputs", "activations", "temporaries", "other")


@dataclass
class LayerMemory:
    name: str    # dotted name in the model ("" for the model itself), or "(loss)"
    kind: str    # class name
    parameters: int = 0       # bytes of its own parameters and buffers
    gradients: int = 0        # bytes of their .grad
    optimizer_state: int = 0  # bytes of their optimizer state
    activations: int = 0      # bytes saved for backward while it ran

    @property
    def total(self) -> int:
        return self.parameters + self.gradients + self.optimizer_state + self.activations


@dataclass
class MemoryBreakdown:
    """What :func:`memory_breakdown` returns; printed as a table."""
    device: str
    train: bool
    peak: int                  # max_memory_allocated over the step, bytes
    categories: dict           # category -> bytes alive at the peak; sums to peak
    layers: list               # LayerMemory rows, in the order the layers first ran
    peak_phase: str            # "forward", "backward" or "optimizer step"
    timeline: list = field(repr=False, default_factory=list)  # memory_allocated after each allocation or free
    phases: dict = field(repr=False, default_factory=dict)    # phase -> index in timeline where it ended

    def __str__(self) -> str:
        head = ("layer", "parameters", "gradients", "optimizer state", "activations")
        rows = [head]
        for r in self.layers:
            label = r.name if r.kind == "(loss)" else f"{r.name} ({r.kind})" if r.name else f"({r.kind})"
            rows.append((label,
                         _bytes(r.parameters), _bytes(r.gradients), _bytes(r.optimizer_state), _bytes(r.activations)))
        total = ("total", *(_bytes(sum(getattr(r, k) for r in self.layers))
                            for k in ("parameters", "gradients", "optimizer_state", "activations")))
        widths = [max(len(r[i]) for r in rows + [total]) for i in range(len(head))]

        def fmt(r):
            return " | ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))

        line = "-" * (sum(widths) + 3 * (len(widths) - 1))
        mode = "training step" if self.train else "inference (eval, no_grad)"
        out = [f"memory of one {mode} on {self.device}", line, fmt(head), line] + [fmt(r) for r in rows[1:]]
        out += [line, fmt(total), "", f"at the peak ({_bytes(self.peak)}, during the {self.peak_phase}):"]
        w = max(len(c) for c in CATEGORIES)
        for c in CATEGORIES:
            v = self.categories[c]
            pct = 100.0 * v / self.peak if self.peak else 0.0
            out.append(f"  {c.replace('_', ' '):<{w}}  {_bytes(v):>12}  {pct:5.1f}%")
        return "\n".join(out)

    __repr__ = __str__


def _bytes(n: int) -> str:
    for suffix in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or suffix == "GiB":
            return f"{n:.0f} {suffix}" if suffix == "B" else f"{n:.2f} {suffix}"
        n /= 1024.0
    return str(n)


def _address(t) -> int:
    """The first byte of t's storage (0 when it has none)."""
    p = t.data_ptr()
    return p - t.storage_offset() * t.element_size() if p else 0


def _tensors(obj):
    """The tensors in an optimizer's state entry (dicts, lists, tuples of them)."""
    if isinstance(obj, _C.Tensor):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _tensors(v)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from _tensors(v)


class _Replay:
    """The allocator's record of one step, replayed: where the peak was and which blocks
    were alive then. A block is (address, index of its allocation event), index -1 for a
    block that was alive when the record started."""

    def __init__(self, dev: str, events: list, baseline: int):
        self.dev = dev
        self.events = events
        allocs, frees = defaultdict(list), defaultdict(list)
        cur = best = baseline
        self.peak_index = -1  # the peak is before the first event unless memory grows
        self.timeline = []
        for i, (alloc, address, size) in enumerate(events):
            (allocs if alloc else frees)[address].append(i)
            cur += size if alloc else -size
            self.timeline.append(cur)
            if cur > best:
                best, self.peak_index = cur, i
        self.peak = best
        self.allocs, self.frees = allocs, frees
        # blocks alive at the peak: those allocated in the record, and the earlier ones not yet freed
        self.alive_new = {}
        freed_old = {}
        for i in range(self.peak_index + 1):
            alloc, address, size = events[i]
            if alloc:
                self.alive_new[address] = (i, size)
            elif address in self.alive_new:
                del self.alive_new[address]
            else:
                freed_old[address] = size
        self.freed_old = freed_old

    def block(self, address: int, before: int):
        """The block at `address` that a tensor seen alive at event position `before` holds."""
        k = bisect.bisect_left(self.allocs.get(address, []), before) - 1
        return (address, self.allocs[address][k] if k >= 0 else -1)

    def alive_at_peak(self, block) -> bool:
        address, index = block
        if index < 0:
            return address not in self.freed_old
        return self.alive_new.get(address, (None,))[0] == index

    def size(self, block) -> int:
        address, index = block
        if index >= 0:
            return self.events[index][2]
        # an earlier block: its size from its free, else from the allocator (still alive)
        for i in self.frees.get(address, []):
            if not self.allocs.get(address) or i < self.allocs[address][0]:
                return self.events[i][2]
        return int(_C._memory_block_size(self.dev, address))


def memory_breakdown(model, inputs, loss_fn=None, optimizer=None, train: bool = True) -> MemoryBreakdown:
    """Runs one step of ``model`` on ``inputs`` (a tensor, or a tuple of them passed as
    ``model(*inputs)``) and splits its peak memory into categories and layers (see the
    module's docstring). ``loss_fn(output)`` gives the loss (by default ``output.sum()``);
    ``optimizer``, when given, is zeroed before and stepped after. ``train=False`` measures
    inference: ``model.eval()`` and a forward under ``no_grad`` (the model's modes are
    restored after). The device is the inputs' device (cpu or cuda)."""
    if not isinstance(model, nn.Module):
        raise TypeError(f"memory_breakdown: expected an nn.Module, got {type(model).__name__}")
    args = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    if not args or not all(isinstance(a, _C.Tensor) for a in args):
        raise TypeError("memory_breakdown: inputs must be a tensor or a tuple of tensors")
    dev = args[0].device.type
    if dev not in ("cpu", "cuda"):
        raise ValueError(f"memory_breakdown: expected inputs on cpu or cuda, got {args[0].device}")

    names = {id(m): n for n, m in model.named_modules()}
    rows: dict[int, LayerMemory] = {}

    def row(m) -> LayerMemory:
        if id(m) not in rows:
            rows[id(m)] = LayerMemory(names.get(id(m), "?"), type(m).__name__)
        return rows[id(m)]

    stack = []  # the modules running now, innermost last
    # (trace position, innermost module from there on): which layer allocated each block
    mark_positions, mark_modules = [0], [None]

    def mark():
        mark_positions.append(int(_C._memory_trace_length(dev)))
        mark_modules.append(stack[-1] if stack else None)

    def enter(m, args):
        stack.append(m)
        row(m)  # rows in the order the layers first run
        mark()

    def leave(m, args, output):
        stack.pop()
        mark()

    handles = []
    for m in model.modules():
        handles.append(m.register_forward_pre_hook(enter))
        handles.append(m.register_forward_hook(leave))
    saved = []  # (address, trace position, module or None)

    def pack(t):
        a = _address(t)
        if a:
            saved.append((a, int(_C._memory_trace_length(dev)), stack[-1] if stack else None))
        return t

    def sync():
        if dev == "cuda":
            _C._cuda_synchronize()

    flags = [(m, m.training) for m in model.modules()]
    model.train(train)
    if optimizer is not None and train:
        optimizer.zero_grad()
    sync()
    phases = {}
    out = loss = None
    baseline = int(_C._memory_stats(dev).get("allocated_bytes.all.current", 0))
    _C._memory_reset_peak(dev)
    _C._memory_trace_start(dev)
    try:
        if train:
            with saved_tensors_hooks(pack, lambda t: t):
                out = model(*args)
                stack.append(None)  # what loss_fn saves goes on the (loss) row
                mark()
                loss = loss_fn(out) if loss_fn is not None else out.sum()
                stack.pop()
            phases["forward"] = int(_C._memory_trace_length(dev))
            loss.backward()
            sync()
            phases["backward"] = int(_C._memory_trace_length(dev))
            if optimizer is not None:
                optimizer.step()
                sync()
                phases["optimizer step"] = int(_C._memory_trace_length(dev))
        else:
            with no_grad():
                out = model(*args)
            sync()
            phases["forward"] = int(_C._memory_trace_length(dev))
    finally:
        events = _C._memory_trace_stop(dev)
        for h in handles:
            h.remove()
        for m, flag in flags:
            object.__setattr__(m, "training", flag)
    measured_peak = int(_C._memory_stats(dev).get("allocated_bytes.all.peak", 0))
    replay = _Replay(dev, events, baseline)
    if replay.peak != measured_peak:  # other threads allocating outside the record would do this
        raise RuntimeError(f"memory_breakdown: the allocator's record gives a peak of {replay.peak} bytes, "
                           f"max_memory_allocated {measured_peak}")
    end = len(events)

    # Every known tensor's block, first category wins (a saved weight stays a parameter).
    category_of = {}
    layer_of = {}

    def claim(t, category, module=None, position=end, layer_field=None):
        a = _address(t)
        if not a:
            return
        b = replay.block(a, position)
        if b in category_of:
            return
        category_of[b] = category
        if module is not None and layer_field:
            layer_of[b] = (module, layer_field)

    owner = {}
    for m in model.modules():
        for p in list(m.parameters(recurse=False)) + list(m.buffers(recurse=False)):
            owner.setdefault(id(p), m)
    params = [(p, owner[id(p)]) for p in list(model.parameters()) + list(model.buffers())]
    for p, m in params:
        claim(p, "parameters", m, layer_field="parameters")
    if optimizer is not None:
        for p, m in params:
            for t in _tensors(optimizer.state.get(id(p), {})):
                claim(t, "optimizer_state", m, layer_field="optimizer_state")
    for p, m in params:
        if getattr(p, "grad", None) is not None:
            claim(p.grad, "gradients", m, layer_field="gradients")
    for a in args:
        claim(a, "inputs")
    for address, position, m in saved:
        b = replay.block(address, position)
        if b not in category_of:
            category_of[b] = "activations"
            layer_of[b] = (m, "activations")

    if train:
        claim(loss, "temporaries")  # the loss itself is no activation
        # What the forward left alive is kept for backward too, even where no op saved it
        # through the hooks: inputs that minitorch.utils.checkpoint keeps to recompute from,
        # and the output. It goes on the row of the layer that allocated it.
        alive = {}
        for i in range(phases["forward"]):
            alloc, address, size = events[i]
            if alloc:
                alive[address] = i
            else:
                alive.pop(address, None)
        for address, i in alive.items():
            if (address, i) not in category_of:
                category_of[(address, i)] = "activations"
                layer_of[(address, i)] = (mark_modules[bisect.bisect_right(mark_positions, i) - 1], "activations")

    categories = dict.fromkeys(CATEGORIES, 0)
    for b, c in category_of.items():
        if replay.alive_at_peak(b):
            categories[c] += replay.size(b)
    for address, (index, size) in replay.alive_new.items():
        if (address, index) not in category_of:
            categories["temporaries"] += size
    categories["other"] = replay.peak - sum(v for k, v in categories.items() if k != "other")

    loss_row = LayerMemory("(loss)", "(loss)")
    for b, (m, what) in layer_of.items():
        r = loss_row if m is None else row(m)
        setattr(r, what, getattr(r, what) + replay.size(b))
    containers = {id(m) for m in model.modules() if any(True for _ in m.children())}
    layers = [r for k, r in rows.items() if r.total or k not in containers]  # leaves, and containers holding something
    if loss_row.total:
        layers.append(loss_row)

    peak_phase = "forward"
    for name, end_index in phases.items():
        if replay.peak_index < end_index:
            peak_phase = name
            break
    del out, loss
    return MemoryBreakdown(dev, train, replay.peak, categories, layers, peak_phase, replay.timeline, phases)

