"""``SyncBatchNorm``: batch norm whose statistics cover the whole batch of all ranks of a
data-parallel job, not each rank's share. With small per-GPU batches (detection,
segmentation) each share's mean and variance are noisy; synchronising them makes N ranks of
batch B normalise as one process of batch N*B would.

Forward: each rank computes its share's per-channel count, mean and sum of squared
deviations (M2); one ``all_gather`` brings every rank's, and each rank combines them
(Chan's parallel formula: M2 = sum(M2_i + n_i * (mean_i - mean)^2)) into the global mean
and biased variance, then normalises. Backward: the input gradient needs the global
per-channel sums of g and of g * (x - mean), one ``all_reduce``; the weight and bias
gradients stay each rank's own (DistributedDataParallel averages them, as PyTorch's).

Outside a multi-rank job (no process group, one rank) or in ``eval()`` it is BatchNorm.
``SyncBatchNorm.convert_sync_batchnorm(model)`` swaps every BatchNorm layer of a model.
Unlike PyTorch's (GPU only), it also synchronises CPU tensors (MPI).
"""
from __future__ import annotations

from .. import _C
from .. import distributed as dist
from ..autograd import Function, no_grad
from ..ops.join import cat, stack
from .batchnorm import _BatchNorm


def _channel_dims(x) -> list:
    return [0] + list(range(2, x.dim()))


def _per_channel(v, x):
    """(C,) values shaped to broadcast over x (N, C, ...)."""
    return v.reshape((1, -1) + (1,) * (x.dim() - 2))


class _SyncBatchNormFunction(Function):
    @staticmethod
    def forward(ctx, x, weight, bias, running_mean, running_var, eps, factor, group, world):
        c = x.shape[1]
        count = x.numel() // c if c else 0
        dims = _channel_dims(x)
        stats_dtype = _C.dtype.float64 if x.dtype == _C.dtype.float64 else _C.dtype.float32
        xs = x.to(stats_dtype)
        if count:
            local_mean = xs.mean(dims)
            local_m2 = ((xs - _per_channel(local_mean, xs)) ** 2).sum(dims)
        else:  # an empty share adds nothing
            local_mean = _C._full((c,), 0.0, stats_dtype, x.device)
            local_m2 = local_mean
        mine = cat([local_mean, local_m2, _C._full((1,), float(count), stats_dtype, x.device)])
        shares = [_C._full(tuple(mine.shape), 0.0, stats_dtype, x.device) for _ in range(world)]
        dist.all_gather(shares, mine, group=group)
        every = stack(shares)  # (world, 2C + 1)
        counts = every[:, 2 * c:]  # (world, 1)
        n = float(counts.sum().item())
        if n == 0:
            raise ValueError("SyncBatchNorm: the batch is empty on every rank")
        mean = (every[:, :c] * counts).sum(0) / n
        m2 = (every[:, c:2 * c] + counts * (every[:, :c] - mean) ** 2).sum(0)
        var = m2 / n
        invstd = (var + eps).rsqrt()
        if running_mean is not None:
            with no_grad():
                running_mean.mul_(1 - factor).add_((mean * factor).to(running_mean.dtype))
                unbiased = m2 / (n - 1) if n > 1 else var
                running_var.mul_(1 - factor).add_((unbiased * factor).to(running_var.dtype))
        xhat = ((xs - _per_channel(mean, xs)) * _per_channel(invstd, xs)).to(x.dtype)
        y = xhat
        if weight is not None:  # in the input's dtype (float16 input, float32 weight: float16, as PyTorch)
            y = (xhat * _per_channel(weight, x) + _per_channel(bias, x)).to(x.dtype)
        ctx.save_for_backward(x, weight, mean.to(x.dtype), invstd.to(x.dtype))
        ctx.n, ctx.group = n, group
        return y

    @staticmethod
    def backward(ctx, g):
        x, weight, mean, invstd = ctx.saved_tensors
        dims = _channel_dims(x)
        xmu = x - _per_channel(mean, x)
        sum_g = g.sum(dims)
        sum_g_xmu = (g * xmu).sum(dims)
        grad_weight = grad_bias = None
        if weight is not None:  # this rank's own, as PyTorch's (DDP averages them)
            grad_weight = sum_g_xmu * invstd if ctx.needs_input_grad[1] else None
            grad_bias = sum_g if ctx.needs_input_grad[2] else None
        grad_x = None
        if ctx.needs_input_grad[0]:
            both = cat([sum_g, sum_g_xmu])
            dist.all_reduce(both, group=ctx.group)  # the sums over the whole batch
            c = x.shape[1]
            mean_g, mean_g_xmu = both[:c] / ctx.n, both[c:] / ctx.n
            scale = invstd if weight is None else invstd * weight
            grad_x = (g - _per_channel(mean_g, x) - xmu * _per_channel(invstd * invstd * mean_g_xmu, x)) \
                * _per_channel(scale, x)
        return grad_x, grad_weight, grad_bias, None, None, None, None, None, None


class SyncBatchNorm(_BatchNorm):
    """Batch norm of (N, C, ...) input with statistics over every rank's batch (see the
    module docstring); ``process_group``: the ranks to synchronise over (default: all)."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, process_group=None, device=None, dtype=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)
        self.process_group = process_group

    def _check_input_dim(self, x) -> None:
        if x.dim() < 2:
            raise ValueError(f"SyncBatchNorm: expected at least 2D input (got {x.dim()}D input)")
        if x.shape[1] != self.num_features:
            raise ValueError(f"SyncBatchNorm: expected input with {self.num_features} channels (dim 1), got input "
                             f"of shape {tuple(x.shape)}")

    def forward(self, x):
        self._check_input_dim(x)
        use_batch = self.training or self.running_mean is None
        world = 1
        if use_batch and self.training and dist.is_available() and dist.is_initialized():
            world = dist.get_world_size(self.process_group)
        if world <= 1:
            return super().forward(x)
        factor, counter = self._running_factor()
        track = self.track_running_stats
        if counter is not None:
            with no_grad():
                counter.add_(1)
        return _SyncBatchNormFunction.apply(x, self.weight, self.bias, self.running_mean if track else None,
                                            self.running_var if track else None, self.eps, factor,
                                            self.process_group, world)

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """module with every BatchNorm1d/2d/3d in it replaced by a SyncBatchNorm holding the
        same parameters, running statistics and mode (a BatchNorm module itself is returned
        converted)."""
        out = module
        if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
            out = cls(module.num_features, module.eps, module.momentum, module.affine, module.track_running_stats,
                      process_group)
            if module.affine:
                with no_grad():
                    out.weight = module.weight
                    out.bias = module.bias
            out.running_mean = module.running_mean
            out.running_var = module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out
