"""``BatchNorm1d/2d/3d``: normalise each channel over the batch, with running statistics.

While training, each channel is normalised with the batch's mean and biased variance, and
the buffers ``running_mean``/``running_var`` move toward them:
``running = (1 - momentum) * running + momentum * batch_stat`` (``running_var`` takes the
*unbiased* variance, as in PyTorch). ``momentum=None`` makes them the cumulative average
of all batches so far. In ``eval()`` the running statistics are used instead.
"""
from __future__ import annotations

from .. import _C
from ..autograd import no_grad
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter


class _BatchNorm(Module):
    _dims: tuple = ()

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None):
        super().__init__()
        if not isinstance(num_features, int) or isinstance(num_features, bool) or num_features <= 0:
            raise ValueError(f"{type(self).__name__}: num_features must be a positive int, got {num_features!r}")
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = Parameter(_C._empty((num_features,), dtype, device))
            self.bias = Parameter(_C._empty((num_features,), dtype, device))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", _C._full((num_features,), 0.0, dtype, device))
            self.register_buffer("running_var", _C._full((num_features,), 1.0, dtype, device))
            self.register_buffer("num_batches_tracked", _C._full((), 0, _C.dtype.int64, device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            with no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1.0)
                self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            init.zeros_(self.bias)

    def _check_input_dim(self, x) -> None:
        if x.dim() not in self._dims:
            want = " or ".join(f"{d}D" for d in self._dims)
            raise ValueError(f"{type(self).__name__}: expected {want} input (got {x.dim()}D input of shape "
                             f"{tuple(x.shape)})")
        if x.shape[1] != self.num_features:
            raise ValueError(f"{type(self).__name__}: expected input with {self.num_features} channels (dim 1), got "
                             f"input of shape {tuple(x.shape)}")

    def _running_factor(self) -> tuple:
        """(the running statistics' update factor, num_batches_tracked for the kernel to
        count, or None when counted here already)."""
        factor = 0.0 if self.momentum is None else self.momentum
        counter = None  # num_batches_tracked, counted by the batch norm kernel itself
        if self.training and self.track_running_stats:
            if self.momentum is None:  # cumulative moving average: the factor needs the new count now
                with no_grad():
                    self.num_batches_tracked.add_(1)
                factor = 1.0 / float(self.num_batches_tracked.item())
            else:
                counter = self.num_batches_tracked
        return factor, counter

    def forward(self, x):
        self._check_input_dim(x)
        factor, counter = self._running_factor()
        # Batch statistics while training, and also in eval() when there are no running ones.
        use_batch = self.training or self.running_mean is None
        track = not self.training or self.track_running_stats
        return F.batch_norm(x, self.running_mean if track else None, self.running_var if track else None,
                            self.weight, self.bias, use_batch, factor, self.eps, _num_batches_tracked=counter)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch norm of (N, C) or (N, C, L) input, per channel C."""

    _dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch norm of (N, C, H, W) input, per channel C."""

    _dims = (4,)


class BatchNorm3d(_BatchNorm):
    """Batch norm of (N, C, D, H, W) input, per channel C."""

    _dims = (5,)
