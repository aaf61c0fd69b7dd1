"""minitorch — a PyTorch-shaped deep-learning library for teaching.

The core (tensors, kernels, ops) is C++ in the ``_C`` extension; this package adds the
Python conveniences around it. Read ``docs/ARCHITECTURE.md`` for the layers.

    >>> import minitorch
    >>> x = minitorch.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> (x @ x.T).sum()
    tensor(52.)
"""
from __future__ import annotations


def _load_blas() -> None:
    """Loads NumPy's OpenBLAS (the scipy-openblas32 wheel) before the extension needs it.

    The extension also carries an rpath to it; this is the fallback for layouts where
    that relative path does not hold (editable installs, unusual site-packages).
    """
    import ctypes
    import glob
    import os

    try:
        import scipy_openblas32
    except ImportError:  # built against a system BLAS instead
        return
    for path in glob.glob(os.path.join(scipy_openblas32.get_lib_dir(), "libscipy_openblas*")):
        ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        return


_load_blas()

# OpenMP worker threads sleep between parallel regions instead of spinning for long:
# spinning workers steal a core from the main thread on small machines. But a worker
# that sleeps at once must be woken for the next op, which on a small VM took longer
# than the op (a + 1.0 on 10^6 floats: 110 us on one thread, 350 us on two). So GNU
# OpenMP's workers spin for about 0.1 ms first (GOMP_SPINCOUNT): the ops of a training
# step follow each other faster than that, an idle program still sleeps. (Set the
# variables yourself to choose otherwise.) Must happen before _C loads the OpenMP runtime.
__import__("os").environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
__import__("os").environ.setdefault("GOMP_SPINCOUNT", "10000")

from . import _C  # noqa: E402
from ._C import (  # noqa: E402,F401
    DTypeError,
    InputError,
    OutOfMemoryError,
    Tensor,
    broadcast_shapes,
    device,
    dtype,
    from_numpy,
    get_num_threads,
    matmul,
    promote_types,
    result_type,
    set_num_threads,
    where,
)

# Every elementwise op of cpp/include/minitorch/op_list.h (sin, remainder, logical_and...).
globals().update({_name: getattr(_C, _name) for _name in _C._elementwise_ops})

dtype.__repr__ = lambda self: f"minitorch.{self.name}"  # like torch.float32
float32 = dtype.float32
float64 = dtype.float64
float16 = dtype.float16
bfloat16 = dtype.bfloat16
half = float16
int64 = dtype.int64
int32 = dtype.int32
int16 = dtype.int16
int8 = dtype.int8
uint8 = dtype.uint8
bool = dtype.bool  # noqa: A001  (PyTorch spells it torch.bool too)
float = float32  # noqa: A001
double = float64
long = int64
int = int32  # noqa: A001  (torch.int is int32)
short = int16
char = int8
byte = uint8

from ._tensor import Size, is_tensor  # noqa: E402,F401  (adds Tensor's Python protocol: repr, .to...)
from . import cpu, cuda  # noqa: E402,F401

_C._cuda_init()  # registers the CUDA kernels when there is a GPU (or the emulator is on)
from . import testing  # noqa: E402,F401
from . import autograd  # noqa: E402,F401
from .autograd import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled,  # noqa: E402,F401
                       no_grad, set_grad_enabled)
from .ops import registry as _registry  # noqa: E402

# The ops written in Python (tensor, zeros, cat, split, var, sort, gather, mm, movedim...:
# python/minitorch/ops/<concept>.py) and the function forms of methods (sum, reshape...):
# Tensor.<name> and minitorch.<name>, as ops/declarations.py declares them.
_registry.install_python_ops(__import__("sys").modules[__name__])
from ._C import index_select, live_tensor_count  # noqa: E402,F401
from . import nn, optim, data, backends, utils, profiler  # noqa: E402,F401
from .backends import get_float32_matmul_precision, set_float32_matmul_precision  # noqa: E402,F401
from .backends import (are_deterministic_algorithms_enabled,  # noqa: E402,F401  (a recorded flag)
                       is_deterministic_algorithms_warn_only_enabled, use_deterministic_algorithms)
from . import random  # noqa: E402,F401  (torch.random: the global generator's seed and state)
from .random import get_rng_state, initial_seed, manual_seed, seed, set_rng_state  # noqa: E402,F401
from ._tensor_str import set_printoptions  # noqa: E402,F401
from ._compile import compile  # noqa: E402,F401,A004  (no compiler: returns the model unchanged)
from ._finfo import can_cast, finfo, iinfo  # noqa: E402,F401
from . import amp  # noqa: E402,F401
from .amp import autocast, get_autocast_dtype, is_autocast_enabled  # noqa: E402,F401
from .data import Generator  # noqa: E402,F401  (torch.Generator)
from . import distributed  # noqa: E402,F401  (imports no MPI until init_process_group)
from .serialization import load, save  # noqa: E402,F401
from ._dlpack import as_tensor, from_dlpack  # noqa: E402,F401

from . import ops  # noqa: E402,F401
from . import linalg  # noqa: E402,F401  (torch.linalg: LAPACK / cuSOLVER factorizations)
from . import special  # noqa: E402,F401  (torch.special: the special functions under SciPy's names)
from . import distributions  # noqa: E402,F401  (torch.distributions: Normal, Categorical, kl_divergence...)

# The forms made from the op declarations (ops/declarations.py): in-place methods (exp_...)
# and aliases (clip, greater, swapaxes...), once every op they name exists.
_registry.install(__import__("sys").modules[__name__])

# ---- quantized tensors (torch.quint8..., quantize_per_tensor; python/minitorch/_quantized.py) ----
from ._quantized import (QTensor, dequantize, per_channel_affine, per_channel_affine_float_qparams,  # noqa: E402,F401
                         per_channel_symmetric, per_tensor_affine, per_tensor_symmetric, qint8, qint32,
                         quantize_per_channel, quantize_per_tensor, quantize_per_tensor_dynamic, quint8,
                         _make_per_channel_quantized_tensor, _make_per_tensor_quantized_tensor)
from .ops import quantized as _ops_quantized  # noqa: E402,F401  (minitorch.ops.quantized)

__version__ = "0.1.0"


def __getattr__(name: str):
    # ``from minitorch import *`` takes every public name but the submodule ``random``, which
    # would shadow Python's own (torch's __all__ leaves it out too).
    if name == "__all__":
        return [k for k in globals() if not k.startswith("_") and k != "random"]
    # minitorch.vision (torchvision's transforms and datasets) is imported on first use,
    # so that ``import minitorch`` does not pay for it.
    if name == "vision":
        import importlib

        return importlib.import_module(".vision", __name__)
    # minitorch.ao (torch.ao: the quantization workflows, python/minitorch/ao/) and its alias
    # minitorch.quantization are imported on first use too
    if name in ("ao", "quantization"):
        import importlib

        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
