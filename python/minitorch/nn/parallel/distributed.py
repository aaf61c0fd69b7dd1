"""``DistributedDataParallel``: one model replica per rank; gradients averaged over the ranks.

Each rank runs forward and backward on its own part of the batch. While backward runs,
the gradients that are already final travel to the other ranks:

1. At construction the parameters are split into *buckets* of at most
   ``bucket_cap_mb`` megabytes, in reverse registration order (backward produces the
   last layer's gradients first, so the first bucket fills first), and every
   parameter gets a post-accumulate-grad hook.
2. When backward has accumulated a parameter's gradient, its hook marks it ready.
   When every gradient of a bucket is ready, the bucket's gradients are copied into one
   flat buffer and an asynchronous all-reduce (``ReduceOp.AVG``) of it starts, and
   backward goes on computing the earlier layers while it travels. Buckets start in
   order 0, 1, 2...: every rank must start the same collectives in the same order.
3. The hook that makes the last bucket ready also waits for every bucket's all-reduce
   and copies the averages back into each ``.grad``. That hook runs inside backward,
   so when ``loss.backward()`` returns, every rank holds the same averaged gradients.

With a mean-reduced loss and equal shares of the batch, the average of the ranks'
gradients is the gradient of the whole batch: the ranks take the same optimizer step
a single process would take on the whole batch.
"""
from __future__ import annotations

import contextlib
import weakref

import numpy as np

from ... import _C
from ... import distributed as dist
from ...autograd import enable_grad, is_grad_enabled, no_grad
from ..module import Module


class _Bucket:
    """Parameters whose gradients travel together in one flat buffer."""

    def __init__(self, dtype, device):
        self.dtype, self.device = dtype, device
        self.indices: list[int] = []   # positions in DistributedDataParallel._params
        self.offsets: list[int] = []
        self.numel = 0
        self.flat = None               # the buffer, made on first use
        self.pending = 0               # gradients not ready yet in this backward
        self.work = None

    def add(self, index: int, p) -> None:
        self.indices.append(index)
        self.offsets.append(self.numel)
        self.numel += p.numel()

    def nbytes(self) -> int:
        return self.numel * self.dtype.itemsize


def _tensors_in(obj, out: list) -> list:
    """Every tensor in a (nested) output: a tensor, tuple, list or dict."""
    if isinstance(obj, _C.Tensor):
        out.append(obj)
    elif isinstance(obj, (tuple, list)):
        for x in obj:
            _tensors_in(x, out)
    elif isinstance(obj, dict):
        for x in obj.values():
            _tensors_in(x, out)
    return out


class DistributedDataParallel(Module):
    """Data-parallel training: wrap the model on every rank, then train as usual.

    >>> dist.init_process_group("mpi")
    >>> model = DistributedDataParallel(build_model())    # rank 0's weights everywhere
    >>> loss = loss_fn(model(x_of_this_rank), y_of_this_rank)
    >>> loss.backward()                                     # gradients averaged over ranks
    >>> opt.step()                                          # the same step on every rank

    Args:
        module: the model. Its parameters live on one device (the CPU, or the rank's GPU).
        device_ids: None, or ``[i]`` for a model on a GPU (minitorch uses one GPU per process).
        output_device: accepted for PyTorch's signature; the output stays where forward puts it.
        dim: accepted for PyTorch's signature (DDP does not split inputs).
        broadcast_buffers: copy rank 0's buffers (BatchNorm's running statistics) to every
            rank at the start of each forward.
        init_sync: copy rank 0's parameters and buffers to every rank now.
        process_group: None (the default group, the only one).
        bucket_cap_mb: the most megabytes of gradients per all-reduce (default 25).
        find_unused_parameters: look, after each forward, for parameters the output does
            not depend on, and count their gradients as zero. Without it (the default), a
            parameter that gets no gradient keeps its bucket from ever being sent; the
            next forward then raises RuntimeError, as in PyTorch.

    Differences from PyTorch: every bucket (the first too) holds up to ``bucket_cap_mb``;
    the gradients are copied into and out of the buckets (no ``gradient_as_bucket_view``);
    no ``static_graph``, comm hooks or ``join``.
    """

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0,
                 broadcast_buffers: bool = True, init_sync: bool = True, process_group=None,
                 bucket_cap_mb: float | None = None, find_unused_parameters: bool = False, **unsupported):
        super().__init__()
        for key, value in unsupported.items():
            if value not in (None, False):
                raise NotImplementedError(f"DistributedDataParallel: {key}= is not supported by minitorch")
        if not isinstance(module, Module):
            raise TypeError(f"DistributedDataParallel: expected an nn.Module, got {type(module).__name__}")
        dist.process_group._check_group(process_group, "DistributedDataParallel")
        self._world = dist.get_world_size()  # raises when init_process_group was not called
        self.module = module
        params = [p for p in module.parameters() if p.requires_grad]
        if not params:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't have any parameter "
                               "that requires a gradient.")
        devices = {str(t.device) for t in [*module.parameters(), *module.buffers()]}
        if len(devices) > 1:
            raise ValueError("DistributedDataParallel's input module must be on one device, but its parameters "
                             f"and buffers are on {sorted(devices)}")
        on_cpu = params[0].device.type == "cpu"
        if device_ids is not None and (on_cpu or len(device_ids) != 1):
            raise ValueError("DistributedDataParallel: device_ids must be None for a module on the CPU and a "
                             f"one-element list for a module on a GPU; got device_ids={device_ids!r} for a module "
                             f"on {params[0].device}")
        self.device_ids, self.output_device, self.dim = device_ids, output_device, dim
        self.broadcast_buffers = bool(broadcast_buffers)
        self.find_unused_parameters = bool(find_unused_parameters)
        self.bucket_bytes_cap = int((25 if bucket_cap_mb is None else bucket_cap_mb) * 1024 * 1024)
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        object.__setattr__(self, "_params", params)

        self._verify_same_model_everywhere()
        if init_sync:
            with no_grad():
                for t in [*module.parameters(), *module.buffers()]:
                    dist.broadcast(t.detach(), 0)
        self._buckets = self._make_buckets(params)
        self._where = {}  # param index -> bucket index
        for bi, b in enumerate(self._buckets):
            for i in b.indices:
                self._where[i] = bi
        self._reset_reduction()
        self._expect_sync = False
        self._unused: list[int] = []
        self._handles = self._register_hooks()

    # ---- construction ----
    def _verify_same_model_everywhere(self) -> None:
        """The ranks' models must have the same parameters: compares a summary of the
        shapes (count, total size, a position-weighted checksum) over all ranks."""
        shapes = [tuple(p.shape) for p in self.module.parameters()]
        check = sum((i + 1) * (j + 1) * s for i, shape in enumerate(shapes) for j, s in enumerate(shape))
        mine = [len(shapes), sum(p.numel() for p in self.module.parameters()), check % (2 ** 61)]
        device = self._params[0].device
        hi = _C._from_numpy_copy(np.array(mine, dtype=np.int64), _C.dtype.int64, device)
        lo = hi.clone()
        dist.all_reduce(hi, op=dist.ReduceOp.MAX)
        dist.all_reduce(lo, op=dist.ReduceOp.MIN)
        if hi.tolist() != mine or lo.tolist() != mine:
            raise ValueError("DistributedDataParallel: the model differs across ranks (number or shapes of "
                             f"parameters); this rank has {len(shapes)} parameters of shapes {shapes}")

    def _make_buckets(self, params) -> list[_Bucket]:
        buckets: list[_Bucket] = []
        for i in reversed(range(len(params))):
            p = params[i]
            b = buckets[-1] if buckets else None
            if (b is None or b.dtype != p.dtype or b.device != p.device
                    or (b.indices and b.nbytes() + p.numel() * p.dtype.itemsize > self.bucket_bytes_cap)):
                b = _Bucket(p.dtype, p.device)
                buckets.append(b)
            b.add(i, p)
        return buckets

    def _register_hooks(self):
        if not hasattr(_C.Tensor, "register_post_accumulate_grad_hook"):
            raise RuntimeError("DistributedDataParallel needs Tensor.register_post_accumulate_grad_hook, which this "
                               "build of minitorch's extension lacks: rebuild it")
        me = weakref.ref(self)  # the hooks live on the parameters: they must not keep the wrapper alive

        def make(i):
            def hook(_param):
                ddp = me()
                if ddp is not None:
                    ddp._grad_ready(i)
            return hook

        return [p.register_post_accumulate_grad_hook(make(i)) for i, p in enumerate(self._params)]

    def __del__(self):
        for h in self.__dict__.get("_handles", ()):
            h.remove()

    # ---- forward ----
    def forward(self, *inputs, **kwargs):
        if self._expect_sync and self._ready:
            raise RuntimeError(
                "Expected to have finished reduction in the prior iteration before starting a new one. This error "
                "indicates that your module has parameters that were not used in producing loss. You can enable "
                "unused parameter detection by passing the keyword argument `find_unused_parameters=True` to "
                "`minitorch.nn.parallel.DistributedDataParallel`, and by making sure all `forward` function outputs "
                "participate in calculating loss. Parameters of this rank that received no gradient: "
                + ", ".join(self._names(i for i in range(len(self._params)) if i not in self._ready)))
        self._reset_reduction()
        self._expect_sync = is_grad_enabled() and self.require_backward_grad_sync
        if self.broadcast_buffers and self.require_forward_param_sync and self._world > 1:
            with no_grad():
                for b in self.module.buffers():
                    dist.broadcast(b.detach(), 0)
        out = self.module(*inputs, **kwargs)
        if self._expect_sync and self.find_unused_parameters:
            self._unused = self._find_unused(out)
        return out

    def _names(self, indices) -> list[str]:
        by_id = {id(p): n for n, p in self.module.named_parameters()}
        return [by_id.get(id(self._params[i]), f"#{i}") for i in indices]

    def _find_unused(self, out) -> list[int]:
        """Indices of the parameters the autograd graph of ``out`` does not reach.

        Walks the graph from the outputs to its AccumulateGrad nodes, then asks each
        parameter for its own (``p.view_as(p)``'s graph starts at it): a leaf has one
        AccumulateGrad per graph, so the same object means the parameter is in the graph.
        The visited nodes stay referenced during the walk, so the identity test holds."""
        outputs = _tensors_in(out, [])
        leaves = {id(t) for t in outputs if t.grad_fn is None}
        stack = [t.grad_fn for t in outputs if t.grad_fn is not None]
        seen, keep = set(), []
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            keep.append(node)
            stack.extend(child for child, _ in node.next_functions if child is not None)
        unused = []
        with enable_grad():
            for i, p in enumerate(self._params):
                if id(p) in leaves:
                    continue
                acc = p.view_as(p).grad_fn.next_functions[0][0]
                if id(acc) not in seen:
                    unused.append(i)
        return unused

    # ---- gradient reduction (runs inside backward) ----
    def _reset_reduction(self) -> None:
        self._ready: set[int] = set()
        self._next_bucket = 0
        for b in self._buckets:
            b.pending, b.work = len(b.indices), None

    def _grad_ready(self, i: int) -> None:
        if not self._expect_sync:
            return  # forward ran under no_sync() or no_grad: gradients stay local
        if self._unused:
            unused, self._unused = self._unused, []
            for j in unused:
                self._mark_ready(j)
        self._mark_ready(i)
        be = dist.process_group._backend
        if hasattr(be, "progress"):
            be.progress()  # let MPI move the buckets already sent

    def _mark_ready(self, i: int) -> None:
        if i in self._ready:
            raise RuntimeError(f"DistributedDataParallel: parameter {self._names([i])[0]} received its gradient "
                               "twice in one backward pass (is it used outside forward, or is backward run twice "
                               "on one forward?)")
        self._ready.add(i)
        b = self._buckets[self._where[i]]
        b.pending -= 1
        # Start every bucket that is complete, in order, so all ranks start the same
        # all-reduces in the same order.
        while self._next_bucket < len(self._buckets) and self._buckets[self._next_bucket].pending == 0:
            self._start(self._buckets[self._next_bucket])
            self._next_bucket += 1
        if self._next_bucket == len(self._buckets):
            self._finish()

    def _start(self, b: _Bucket) -> None:
        with no_grad():
            if b.flat is None:
                b.flat = _C._full((b.numel,), 0, b.dtype, b.device)
            for i, off in zip(b.indices, b.offsets):
                p = self._params[i]
                part = b.flat[off:off + p.numel()]
                if p.grad is None:
                    part.zero_()
                else:
                    part.copy_(p.grad.reshape(-1))
        b.work = dist.all_reduce(b.flat, op=dist.ReduceOp.AVG, async_op=True)

    def _finish(self) -> None:
        """Waits for every bucket and writes the averaged gradients back."""
        used = self._used_anywhere() if self.find_unused_parameters else None
        with no_grad():
            for b in self._buckets:
                b.work.wait()
                for i, off in zip(b.indices, b.offsets):
                    p = self._params[i]
                    avg = b.flat[off:off + p.numel()].view(tuple(p.shape))
                    if p.grad is not None:
                        p.grad.copy_(avg)
                    elif used is not None and used[i]:
                        p.grad = avg.clone()
        self._expect_sync = False
        self._ready = set()

    def _used_anywhere(self) -> list[bool]:
        """Which parameters have a gradient on at least one rank (the others keep None)."""
        flags = np.array([p.grad is not None for p in self._params], dtype=np.int64)
        t = _C._from_numpy_copy(flags, _C.dtype.int64, self._params[0].device)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        return [bool(x) for x in t.tolist()]

    # ---- gradient accumulation ----
    @contextlib.contextmanager
    def no_sync(self):
        """Backward passes of forwards run inside this block keep their gradients local
        (they accumulate in ``.grad``); the first backward of a forward outside it
        averages the accumulated gradients over the ranks.

        >>> with ddp.no_sync():
        ...     loss_fn(ddp(x1), y1).backward()   # local only
        >>> loss_fn(ddp(x2), y2).backward()       # all-reduces the sum of both
        """
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old
