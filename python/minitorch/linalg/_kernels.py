"""Where minitorch.linalg's factorizations run: one call of a C++ kernel on stacked matrices.

``run(name, a, ...)`` flattens the batch dims of ``a`` (and ``b`` for solve) to one, makes
the matrices contiguous and calls

- on the CPU: ``_C._linalg_<name>`` (LAPACK from OpenBLAS, cpp/src/cpu/lapack.cpp);
- on a real GPU: ``_C._cusolver_<name>`` (cuSOLVER, cuda/linalg.cu);
- on the CUDA emulator, or a build without cuSOLVER: the CPU kernel on a host copy, whose
  results are copied back (the emulator runs our own kernels, and cuSOLVER is not ours).

The results come back with the batch dims restored; ``info`` (LAPACK's INFO, one per matrix)
is a Python list. Nothing here records gradients: _functions.py does.
"""
from __future__ import annotations

from .. import _C

# The INFO list of the last call (its matrices' LAPACK INFO), read by the public functions
# after an autograd Function's forward ran a kernel (a Function returns tensors only).
last_info: list = []


def _kernel(name: str, device, empty: bool):
    """The kernel for ``device`` and whether it needs a host copy. Empty inputs (no matrices,
    or matrices with no rows or columns) take the host path on a GPU too: cuda/linalg.cu
    assumes at least one element."""
    if device.type == "cpu":
        return getattr(_C, "_linalg_" + name), False
    gpu = getattr(_C, "_cusolver_" + name, None)
    if gpu is not None and not empty and not _C._cuda_is_emulated():
        return gpu, False
    return getattr(_C, "_linalg_" + name), True


def _flat(t, batch_shape):
    """(batch..., m, n) -> contiguous (prod(batch), m, n)."""
    count = 1
    for s in batch_shape:
        count *= s
    return t.reshape(count, t.shape[-2], t.shape[-1]).contiguous()


def run(name: str, a, *args, b=None):
    """Runs kernel ``name`` on ``a`` (..., m, n) (and ``b`` (..., n, k), same batch dims);
    returns its tensors with a's batch dims in front, the ``info`` list last when it has one."""
    batch = tuple(a.shape[:-2])
    device = a.device
    fn, host = _kernel(name, device, a.numel() == 0 or (b is not None and b.numel() == 0))
    ins = [_flat(a, batch)] + ([_flat(b, batch)] if b is not None else [])
    if host:
        ins = [t.cpu() for t in ins]
    outs = list(fn(*ins, *args))
    info = None
    if outs[-1].dtype == _C.dtype.int64 and outs[-1].ndim == 1:  # LAPACK's INFO, one per matrix
        global last_info
        info = last_info = outs.pop().tolist()
    result = []
    for t in outs:
        if t.ndim == 1 and t.shape[0] == 0:  # an output the call did not compute
            result.append(t.to(device) if host else t)
            continue
        t = t.reshape(*batch, *t.shape[1:])
        result.append(t.to(device) if host else t)
    return (*result, info) if info is not None else tuple(result)
