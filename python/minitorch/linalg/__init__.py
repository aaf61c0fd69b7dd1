"""``minitorch.linalg``: PyTorch's ``torch.linalg`` for real float32/float64 matrices, batched
over leading dims ``(..., m, n)``, on every device.

Three layers, each in its own file:

- ``_kernels.py``: where a factorization runs (LAPACK on the CPU, cuSOLVER on a GPU, LAPACK
  on a host copy for the CUDA emulator);
- ``_functions.py``: one autograd Function per factorization, holding every gradient formula;
- this file: PyTorch's functions, argument checks, error messages and named results, built
  from those Functions and ordinary ops.

>>> A = minitorch.tensor([[2.0, 1.0], [1.0, 3.0]])
>>> minitorch.linalg.solve(A, minitorch.tensor([3.0, 5.0])).tolist()
[0.8, 1.4]
"""
from __future__ import annotations

import collections
import math
import numbers

from .. import _C
from .._C import Tensor
from ..autograd import Function
from . import _functions as F
from . import _kernels

__all__ = ["LinAlgError", "norm", "vector_norm", "matrix_norm", "solve", "solve_triangular", "inv", "inv_ex", "det", "slogdet",
           "cholesky", "cholesky_ex", "qr", "eigh", "eigvalsh", "svd", "svdvals", "pinv", "lstsq", "matrix_rank",
           "matmul", "vecdot", "cross", "diagonal", "multi_dot", "matrix_power", "cond"]


class LinAlgError(RuntimeError):
    """A matrix the operation cannot handle: singular (solve, inv), not positive-definite
    (cholesky), or an algorithm that did not converge (eigh, svd). A RuntimeError, as
    ``torch.linalg.LinAlgError`` is."""


# torch.return_types' named tuples (their fields are torch.linalg's)
SlogdetResult = collections.namedtuple("linalg_slogdet", ["sign", "logabsdet"])
QRResult = collections.namedtuple("linalg_qr", ["Q", "R"])
EighResult = collections.namedtuple("linalg_eigh", ["eigenvalues", "eigenvectors"])
SVDResult = collections.namedtuple("linalg_svd", ["U", "S", "Vh"])
LstsqResult = collections.namedtuple("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])
InvExResult = collections.namedtuple("linalg_inv_ex", ["inverse", "info"])
CholeskyExResult = collections.namedtuple("linalg_cholesky_ex", ["L", "info"])

_TORCH_DTYPE_NAMES = {"int64": "Long", "bool": "Bool", "float16": "Half", "bfloat16": "BFloat16"}


# ---- argument checks -------------------------------------------------------------------

def _matrix(op: str, a, square: bool = True, name: str = "A") -> Tensor:
    """Checks that ``a`` is a float32/float64 tensor of (batches of) matrices."""
    if not isinstance(a, Tensor):
        raise TypeError(f"linalg.{op}(): argument '{name}' must be Tensor, not {type(a).__name__}")
    dt = a.dtype.name
    if dt not in ("float32", "float64"):
        what = "Low precision dtypes not supported" if dt in ("float16", "bfloat16") else \
            "Expected a floating point or complex tensor as input"
        raise _C.DTypeError(f"linalg.{op}: {what}. Got {_TORCH_DTYPE_NAMES.get(dt, dt)}")
    if a.ndim < 2:
        raise _C.InputError(f"linalg.{op}: The input tensor {name} must have at least 2 dimensions.")
    if square and a.shape[-1] != a.shape[-2]:
        raise _C.InputError(f"linalg.{op}: {name} must be batches of square matrices, but they are "
                            f"{a.shape[-2]} by {a.shape[-1]} matrices")
    return a


def _where(batch_shape: tuple, index: int) -> str:
    """'' for one matrix, '(Batch element i): ' in a batch, as PyTorch's messages say."""
    return f"(Batch element {index}): " if batch_shape else ""


def _first_failure(info):
    for i, v in enumerate(info):
        if v != 0:
            return i, v
    return None


def _same_dtype_device(op: str, a: Tensor, b: Tensor, names=("A", "B")) -> None:
    if not isinstance(b, Tensor):
        raise TypeError(f"linalg.{op}(): argument '{names[1]}' must be Tensor, not {type(b).__name__}")
    if a.dtype != b.dtype:
        raise _C.DTypeError(f"linalg.{op}: Expected {names[0]} and {names[1]} to have the same dtype, but found "
                            f"{names[0]} of type {a.dtype} and {names[1]} of type {b.dtype} instead")
    if a.device != b.device:
        raise _C.InputError(f"linalg.{op}: Expected {names[0]} and {names[1]} to be on the same device, but found "
                            f"{names[0]} on {a.device} and {names[1]} on {b.device} instead")


def _no_out(op: str, out) -> None:
    if out is not None:
        raise TypeError(f"linalg.{op}(): out= is not supported by minitorch")


def _eps(dtype) -> float:
    return 2.0 ** -23 if dtype == _C.dtype.float32 else 2.0 ** -52


# ---- solve, inv, det ---------------------------------------------------------------------

def _is_vector_rhs(a: Tensor, b: Tensor) -> bool:
    """PyTorch's rule: B is a (batch of) vector(s) when it is 1-D, or has one dim less
    than A and A's shape without its last dim."""
    return b.ndim == 1 or (b.ndim == a.ndim - 1 and tuple(b.shape) == tuple(a.shape[:-1]))


def _solve(op: str, a: Tensor, b: Tensor, left: bool = True, vectors: bool = True, check: bool = True) -> Tensor:
    """X with A X = B (X A = B when not ``left``); ``vectors``: B may be a (batch of) vector(s);
    ``check``: a singular A raises LinAlgError."""
    _matrix(op, a)
    _same_dtype_device(op, a, b)
    vector = vectors and _is_vector_rhs(a, b)
    if vector:
        b = b[..., None]
    if not left:  # X A = B  <=>  A^T X^T = B^T
        if vector:
            raise _C.InputError(f"linalg.{op}: Vector broadcasting of the left hand side is not supported "
                                f"for left=False. In this case linalg.{op} is equivalent to B / A.squeeze(-1)")
        return _solve(op, a.mT, b.mT, vectors=False, check=check).mT
    n = a.shape[-1]
    if b.ndim < 2 or b.shape[-2] != n:
        raise _C.InputError(f"linalg.{op}: Incompatible shapes of A and B for the equation AX = B "
                            f"({a.shape[-2]}x{n} and {b.shape[-2] if b.ndim >= 2 else b.shape[-1]}x"
                            f"{b.shape[-1] if b.ndim >= 2 else 1})")
    try:
        batch = _C.broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2]))
    except Exception:
        raise _C.InputError(f"linalg.{op}: the batch dimensions of A {tuple(a.shape)} and B {tuple(b.shape)} "
                            f"cannot be broadcast") from None
    batch = tuple(batch)
    ae = a.expand(*batch, n, n)
    be = b.expand(*batch, n, b.shape[-1])
    x = F.Solve.apply(ae, be)
    info = _last_info()
    fail = _first_failure(info)
    if fail is not None and check:
        raise LinAlgError(f"linalg.{op}: {_where(batch, fail[0])}The solver failed because the input matrix is "
                          f"singular.")
    return x[..., 0] if vector else x


def _last_info():
    """The INFO list of the last kernel Solve/Cholesky ran (set in their forward)."""
    return _kernels.last_info


def solve(A: Tensor, B: Tensor, *, left: bool = True, out=None) -> Tensor:
    """The solution X of ``A X = B`` (``X A = B`` when ``left=False``) for square A
    (..., n, n) and B (..., n, k) or a vector B (..., n); batch dims broadcast.
    Raises ``LinAlgError`` when A is singular."""
    _no_out("solve", out)
    return _solve("solve", A, B, left)


def solve_triangular(A: Tensor, B: Tensor, *, upper: bool, left: bool = True, unitriangular: bool = False,
                     out=None) -> Tensor:
    """X with ``A X = B`` (``X A = B`` when ``left=False``) for triangular A (..., n, n): only
    its upper (``upper=True``) or lower triangle is read, with ones on the diagonal when
    ``unitriangular``. B is (..., n, k) (a matrix, never a vector); batch dims broadcast.
    A zero on the diagonal raises LinAlgError (PyTorch's triangular solve returns infinities).

    Computed as ``solve`` of the masked triangle, so the gradient of A is that triangle's."""
    _no_out("solve_triangular", out)
    _matrix("solve_triangular", A)
    if not isinstance(B, Tensor) or B.ndim < 2:
        raise _C.InputError("linalg.solve_triangular: The input tensor B must have at least 2 dimensions.")
    t = A.triu() if upper else A.tril()
    if unitriangular:
        n = A.shape[-1]
        eye = _C._eye(n, n, A.dtype, A.device)
        t = t - t.diagonal(0, -2, -1).diag_embed() + eye
    return _solve("solve_triangular", t, B, left, vectors=False)


def inv(A: Tensor, *, out=None) -> Tensor:
    """The inverse of square A (..., n, n); ``LinAlgError`` when A is singular."""
    _no_out("inv", out)
    result, info = _inv(A)
    fail = _first_failure(info)
    if fail is not None:
        raise LinAlgError(f"linalg.inv: {_where(tuple(A.shape[:-2]), fail[0])}The diagonal element {fail[1]} is "
                          f"zero, the inversion could not be completed because the input matrix is singular.")
    return result


def _inv(A: Tensor):
    _matrix("inv", A)
    n = A.shape[-1]
    eye = _C._eye(n, n, A.dtype, A.device).expand(*A.shape)
    x = F.Solve.apply(A, eye)
    return x, _last_info()


def inv_ex(A: Tensor, *, check_errors: bool = False, out=None) -> tuple:
    """``(inverse, info)``: info (int64, one per matrix) is 0, or i > 0 when U[i-1, i-1]
    of A's LU factorization is zero (A is singular and the inverse is not valid)."""
    _no_out("inv_ex", out)
    if check_errors:
        return InvExResult(inv(A), _C._full(tuple(A.shape[:-2]), 0, _C.dtype.int64, A.device))
    x, info = _inv(A)
    return InvExResult(x, _info_tensor(info, A))


def _info_tensor(info, a: Tensor) -> Tensor:
    from ..ops.creation import tensor
    return tensor(info, dtype=_C.dtype.int64, device=a.device).reshape(tuple(a.shape[:-2]))


def slogdet(A: Tensor, *, out=None) -> tuple:
    """``(sign, logabsdet)`` of square A: ``det A = sign * exp(logabsdet)``, computed without
    over- or underflow. A singular matrix gives ``(0, -inf)``."""
    _no_out("slogdet", out)
    _matrix("slogdet", A)
    return SlogdetResult(*F.SlogDet.apply(A))


def det(A: Tensor, *, out=None) -> Tensor:
    """The determinant of square A (..., n, n), from its LU factorization."""
    _no_out("det", out)
    _matrix("det", A)
    return F.Det.apply(A)


# ---- cholesky, qr, eigh, svd -----------------------------------------------------------------

def _cholesky(A: Tensor, upper: bool):
    _matrix("cholesky", A)
    l = F.Cholesky.apply(A)
    return (l.mT if upper else l), _last_info()


def cholesky(A: Tensor, *, upper: bool = False, out=None) -> Tensor:
    """L with ``A = L L^T`` (lower-triangular; ``upper=True``: U with ``A = U^T U``) for a
    symmetric positive-definite A; reads A's lower triangle only."""
    _no_out("cholesky", out)
    l, info = _cholesky(A, upper)
    fail = _first_failure(info)
    if fail is not None:
        raise LinAlgError(f"linalg.cholesky: {_where(tuple(A.shape[:-2]), fail[0])}The factorization could not be "
                          f"completed because the input is not positive-definite (the leading minor of order "
                          f"{fail[1]} is not positive-definite).")
    return l


def cholesky_ex(A: Tensor, *, upper: bool = False, check_errors: bool = False, out=None) -> tuple:
    """``(L, info)``: info is 0, or k when the leading minor of order k is not
    positive-definite (L is then not valid)."""
    _no_out("cholesky_ex", out)
    if check_errors:
        return CholeskyExResult(cholesky(A, upper=upper), _C._full(tuple(A.shape[:-2]), 0, _C.dtype.int64, A.device))
    l, info = _cholesky(A, upper)
    return CholeskyExResult(l, _info_tensor(info, A))


def qr(A: Tensor, mode: str = "reduced", *, out=None) -> tuple:
    """``(Q, R)`` with ``A = Q R``, Q with orthonormal columns and R upper-triangular.
    ``mode``: 'reduced' (Q (m, k), R (k, n), k = min(m, n)), 'complete' (Q (m, m), R (m, n))
    or 'r' (R only; Q is empty)."""
    _no_out("qr", out)
    _matrix("qr", A, square=False)
    if mode not in ("reduced", "complete", "r"):
        raise _C.InputError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), "
                            f"'r', or 'complete'")
    if mode == "r":
        _, r = _kernels.run("qr", A.detach(), False)
        if A.requires_grad and _C.is_grad_enabled():
            r = _RequiresQ.apply(A, r)
        return QRResult(A.new_zeros((0,)), r)
    return QRResult(*F.QR.apply(A, mode == "complete"))


class _RequiresQ(Function):
    """mode='r' in a graph: backward says why there is no gradient, as PyTorch does."""

    @staticmethod
    def forward(ctx, a, r):
        return r.clone()

    @staticmethod
    def backward(ctx, g):
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
                           "Please use linalg.qr(A, mode='reduced') if you are going to differentiate through "
                           "linalg.qr.")


def _check_uplo(op: str, UPLO) -> bool:
    if UPLO not in ("L", "U", "l", "u"):
        raise _C.InputError(f"linalg.{op}: Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return UPLO in ("U", "u")


def _eigh(op: str, A: Tensor, UPLO):
    _matrix(op, A)
    upper = _check_uplo(op, UPLO)
    w, v = F.Eigh.apply(A, upper)
    fail = _first_failure(_last_info())
    if fail is not None:
        raise LinAlgError(f"linalg.{op}: {_where(tuple(A.shape[:-2]), fail[0])}The algorithm failed to converge "
                          f"because the input matrix is ill-conditioned or has too many repeated eigenvalues "
                          f"(error code: {fail[1]}).")
    return w, v


def eigh(A: Tensor, UPLO: str = "L", *, out=None) -> tuple:
    """``(eigenvalues, eigenvectors)`` of symmetric A: ascending eigenvalues w (..., n) and
    orthonormal eigenvectors V (columns) with ``A = V diag(w) V^T``. Reads the lower triangle
    (``UPLO='U'``: the upper one)."""
    _no_out("eigh", out)
    return EighResult(*_eigh("eigh", A, UPLO))


def eigvalsh(A: Tensor, UPLO: str = "L", *, out=None) -> Tensor:
    """The eigenvalues of symmetric A, ascending (eigh's first result)."""
    _no_out("eigvalsh", out)
    if isinstance(A, Tensor) and not (A.requires_grad and _C.is_grad_enabled()):
        _matrix("eigvalsh", A)
        upper = _check_uplo("eigvalsh", UPLO)
        w, _v, info = _kernels.run("eigh", A, upper, False)
        _kernels.last_info = info
        fail = _first_failure(info)
        if fail is not None:
            raise LinAlgError(f"linalg.eigvalsh: {_where(tuple(A.shape[:-2]), fail[0])}The algorithm failed to "
                              f"converge because the input matrix is ill-conditioned or has too many repeated "
                              f"eigenvalues (error code: {fail[1]}).")
        return w
    return _eigh("eigvalsh", A, UPLO)[0]


def _svd_failed(op: str, A: Tensor) -> None:
    fail = _first_failure(_last_info())
    # LAPACK's gesdd refuses NaN/inf (INFO = -4: argument A); cuSOLVER's gesvdj runs on and
    # reports them as not converging (INFO > 0), so there the failed matrix itself is looked at.
    if fail is not None and (fail[1] < 0 or not bool(A.reshape(-1, *A.shape[-2:])[fail[0]].isfinite().all())):
        raise LinAlgError(f"linalg.{op}: {_where(tuple(A.shape[:-2]), fail[0])}The algorithm failed to converge "
                          f"because the input matrix contained non-finite values.")
    if fail is not None:
        raise LinAlgError(f"linalg.{op}: {_where(tuple(A.shape[:-2]), fail[0])}The algorithm failed to converge "
                          f"because the input matrix is ill-conditioned or has too many repeated singular values "
                          f"(error code: {fail[1]}).")


def _check_svd_driver(op: str, A: Tensor, driver) -> None:
    """``driver`` picks cuSOLVER's routine in PyTorch; minitorch always uses gesvdj on a GPU."""
    if driver is None:
        return
    if A.device.type == "cpu":
        raise _C.InputError(f"torch.linalg.{op}: keyword argument `driver=` is only supported on CUDA inputs "
                            f"with cuSOLVER backend.")
    if driver not in ("gesvd", "gesvdj", "gesvda"):
        raise _C.InputError(f"torch.linalg.{op}: driver should be one of (gesvd, gesvdj, gesvda), but got {driver}")


def svd(A: Tensor, full_matrices: bool = True, *, driver=None, out=None) -> tuple:
    """``(U, S, Vh)`` with ``A = U diag(S) Vh``, S descending. ``full_matrices=True``: U (m, m)
    and Vh (n, n); else U (m, k), Vh (k, n), k = min(m, n). U and Vh are unique only up to the
    signs of their columns/rows: differentiate functions that do not depend on those."""
    _no_out("svd", out)
    _matrix("svd", A, square=False)
    _check_svd_driver("svd", A, driver)
    u, s, vh = F.SVD.apply(A, bool(full_matrices))
    _svd_failed("svd", A)
    return SVDResult(u, s, vh)


def svdvals(A: Tensor, *, driver=None, out=None) -> Tensor:
    """The singular values of A, descending (..., min(m, n))."""
    _no_out("svdvals", out)
    _matrix("svdvals", A, square=False)
    _check_svd_driver("svdvals", A, driver)
    if A.requires_grad and _C.is_grad_enabled():
        s = F.SVD.apply(A, False)[1]
    else:
        _u, s, _vh, info = _kernels.run("svd", A, False, False)
        _kernels.last_info = info
    _svd_failed("svdvals", A)
    return s


# ---- pinv, lstsq, matrix_rank ----------------------------------------------------------------

def _tolerances(op: str, A: Tensor, atol, rtol, s_max):
    """The cut-off of the singular values counted as non-zero: max(atol, rtol * s_max).
    rtol defaults to eps * max(m, n) when atol is not given (or zero), else to zero."""
    def as_tensor(v):
        if v is None:
            return None
        if isinstance(v, Tensor):
            return v.to(A.dtype)
        return _C._full((), float(v), A.dtype, A.device)

    atol_t, rtol_t = as_tensor(atol), as_tensor(rtol)
    if rtol_t is None:
        default = _eps(A.dtype) * max(A.shape[-2], A.shape[-1])
        atol_positive = atol is not None and (not isinstance(atol, numbers.Real) or atol > 0)
        rtol_t = _C._full((), 0.0 if atol_positive else default, A.dtype, A.device)
    tol = rtol_t * s_max
    if atol_t is not None:
        tol = _C.maximum(atol_t, tol)
    return tol


def pinv(A: Tensor, *, atol=None, rtol=None, hermitian: bool = False, out=None) -> Tensor:
    """The Moore-Penrose pseudo-inverse (n, m) of A (..., m, n), from its SVD: singular values
    at or below ``max(atol, rtol * s_max)`` count as zero."""
    _no_out("pinv", out)
    _matrix("pinv", A, square=False)
    if hermitian:
        w, v = _eigh("pinv", A, "L")
        mag = w.abs()
        tol = _tolerances("pinv", A, atol, rtol, mag.amax(-1, keepdim=True) if w.shape[-1] else mag)
        keep = mag > tol
        w_safe = _C.where(keep, w, _C._full((), 1.0, w.dtype, w.device))
        inv_w = _C.where(keep, 1.0 / w_safe, _C._full((), 0.0, w.dtype, w.device))
        return (v * inv_w[..., None, :]) @ v.mT
    u, s, vh = svd(A, full_matrices=False)
    if s.shape[-1] == 0:
        return A.new_zeros((*A.shape[:-2], A.shape[-1], A.shape[-2]))
    tol = _tolerances("pinv", A, atol, rtol, s[..., :1])
    keep = s > tol
    s_safe = _C.where(keep, s, _C._full((), 1.0, s.dtype, s.device))
    inv_s = _C.where(keep, 1.0 / s_safe, _C._full((), 0.0, s.dtype, s.device))
    return (vh.mT * inv_s[..., None, :]) @ u.mT


def matrix_rank(A: Tensor, tol=None, hermitian: bool = False, *, atol=None, rtol=None, out=None) -> Tensor:
    """The number of singular values of A above ``max(atol, rtol * s_max)`` (int64, one per
    matrix). ``tol`` is PyTorch's older name for ``atol``."""
    _no_out("matrix_rank", out)
    _matrix("matrix_rank", A, square=False)
    if tol is not None:
        atol, rtol = tol, 0.0
    if hermitian:
        s = eigvalsh(A.detach()).abs()
    else:
        s = svdvals(A.detach())
    if s.shape[-1] == 0:
        return _C._full(tuple(A.shape[:-2]), 0, _C.dtype.int64, A.device)
    tol_t = _tolerances("matrix_rank", A, atol, rtol, s.amax(-1, keepdim=True))
    return (s > tol_t).sum(-1)


_LSTSQ_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def lstsq(A: Tensor, B: Tensor, rcond=None, *, driver=None) -> tuple:
    """The least-squares solution X of ``A X = B`` (minimal norm when A is rank-deficient),
    A (..., m, n), B (..., m, k); computed from A's SVD (what LAPACK's gelsd does).

    Returns ``(solution, residuals, rank, singular_values)`` as torch.linalg.lstsq does:
    residuals (squared, (..., k)) when m > n and every A has full rank, else empty; rank for
    the drivers 'gelsy' (the CPU default), 'gelsd' and 'gelss'; singular_values for 'gelsd' and
    'gelss'. On "cuda" only 'gels' exists, which returns neither."""
    _matrix("lstsq", A, square=False)
    _same_dtype_device("lstsq", A, B)
    on_cpu = A.device.type == "cpu"
    if driver is None:
        driver = "gelsy" if on_cpu else "gels"
    if driver not in _LSTSQ_DRIVERS:
        raise _C.InputError(f"torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    if not on_cpu and driver != "gels":
        raise _C.InputError("torch.linalg.lstsq: `driver` other than `gels` is not supported on CUDA")
    if not on_cpu and A.shape[-2] < A.shape[-1]:
        raise _C.InputError("torch.linalg.lstsq: only overdetermined systems (input.size(-2) >= input.size(-1)) "
                            "are allowed on CUDA")
    vector = B.ndim == A.ndim - 1
    b = B[..., None] if vector else B
    m, n = A.shape[-2], A.shape[-1]
    if b.shape[-2] != m:
        raise _C.InputError(f"torch.linalg.lstsq: input.size(-2) should match other.size(-2). Got {m} and "
                            f"{b.shape[-2]}")
    batch = tuple(_C.broadcast_shapes(tuple(A.shape[:-2]), tuple(b.shape[:-2])))
    a = A.expand(*batch, m, n)
    b = b.expand(*batch, m, b.shape[-1])
    rtol = rcond if rcond is not None and rcond >= 0 else None
    if rtol is None:
        rtol = _eps(A.dtype) * max(m, n)
    x = pinv(a, rtol=rtol) @ b
    s = svdvals(a.detach())
    empty = A.new_zeros((0,))
    rank = empty_rank = _C._full((0,), 0, _C.dtype.int64, A.device)
    if driver != "gels" or m > n:
        if s.shape[-1]:
            rank = (s > rtol * s[..., :1]).sum(-1)
        else:
            rank = _C._full(batch, 0, _C.dtype.int64, A.device)
    residuals = empty
    if m > n and (s.shape[-1] == 0 or bool((rank == n).all())):
        r = a @ x - b
        residuals = (r * r).sum(-2)
    sv = s if driver in ("gelsd", "gelss") else empty
    if driver == "gels":
        rank = empty_rank
    return LstsqResult(x[..., 0] if vector else x, residuals[..., 0] if vector and residuals.ndim else residuals,
                       rank, sv)


# ---- norms -------------------------------------------------------------------------------------

def _float_input(op: str, x, dtype):
    if not isinstance(x, Tensor):
        raise TypeError(f"linalg.{op}(): argument 'input' must be Tensor, not {type(x).__name__}")
    if dtype is not None:
        x = x.to(dtype)
    if not x.dtype.is_floating_point:
        raise _C.DTypeError(f"linalg.{op}: Expected a floating point or complex tensor as input. Got "
                            f"{_TORCH_DTYPE_NAMES.get(x.dtype.name, x.dtype.name)}")
    return x


def vector_norm(x: Tensor, ord=2, dim=None, keepdim: bool = False, *, dtype=None, out=None) -> Tensor:
    """The vector ``ord``-norm of x over ``dim`` (every element when None): ``sum(|x|^ord)^(1/ord)``;
    ``inf``: max |x|, ``-inf``: min |x|, ``0``: the number of non-zeros."""
    _no_out("vector_norm", out)
    x = _float_input("vector_norm", x, dtype)
    if isinstance(ord, bool) or not isinstance(ord, numbers.Real):
        raise TypeError(f"linalg.vector_norm(): argument 'ord' must be a number, not {type(ord).__name__}")
    if isinstance(dim, int):
        dim = (dim,)
    dims = list(range(x.ndim)) if dim is None else list(dim)
    if dim is None and x.ndim == 0:
        return x.abs() if ord != 0 else (x != 0).to(x.dtype)
    if ord < 0 and x.numel() == 0:
        raise _C.InputError(f"linalg.vector_norm cannot compute the {ord} norm on an empty tensor because the "
                            f"operation does not have an identity")
    return x.norm(float(ord), dims, keepdim)


def _dims2(op: str, dim, ndim: int) -> tuple:
    if not isinstance(dim, (tuple, list)) or len(dim) != 2:
        raise _C.InputError(f"linalg.{op}: dim must be a 2-tuple. Got {dim}")
    d0, d1 = (d + ndim if d < 0 else d for d in dim)
    if not (0 <= d0 < ndim and 0 <= d1 < ndim):
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {dim})")
    if d0 == d1:
        raise _C.InputError(f"linalg.{op}: dims must be different. Got ({dim[0]}, {dim[1]})")
    return d0, d1


def matrix_norm(A: Tensor, ord="fro", dim=(-2, -1), keepdim: bool = False, *, dtype=None, out=None) -> Tensor:
    """A matrix norm over the two dims ``dim``: 'fro' (Frobenius), 'nuc' (sum of singular
    values), 2 / -2 (largest / smallest singular value), 1 / -1 (max / min column sum of |A|),
    inf / -inf (max / min row sum of |A|)."""
    _no_out("matrix_norm", out)
    A = _float_input("matrix_norm", A, dtype)
    if A.ndim < 2:
        raise _C.InputError(f"linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    d0, d1 = _dims2("matrix_norm", dim, A.ndim)
    if ord == "fro":
        return vector_norm(A, 2, (d0, d1), keepdim)
    if ord == "nuc" or ord in (2, -2):
        # move the two dims last, take the singular values, put the dims back if keepdim
        rest = [d for d in range(A.ndim) if d not in (d0, d1)]
        s = svdvals(A.permute(*rest, d0, d1))
        if ord == "nuc":
            r = s.sum(-1)
        elif ord == 2:
            r = s.amax(-1)
        else:
            r = s.amin(-1)
        if keepdim:
            for d in sorted((d0, d1)):
                r = r.unsqueeze(d)
        return r
    if ord in (1, -1, math.inf, -math.inf):
        # 1: the largest column sum (sum over rows d0, then max over columns d1); inf: transposed
        sum_dim, ext_dim = (d0, d1) if ord in (1, -1) else (d1, d0)
        sums = A.abs().sum(sum_dim, keepdim=True)
        r = sums.amax(ext_dim, keepdim=True) if ord > 0 else sums.amin(ext_dim, keepdim=True)
        return r if keepdim else r.squeeze(max(d0, d1)).squeeze(min(d0, d1))
    raise _C.InputError(f"linalg.matrix_norm: Order {ord} not supported.")


def norm(A: Tensor, ord=None, dim=None, keepdim: bool = False, *, dtype=None, out=None) -> Tensor:
    """A vector norm (``dim`` an int, or None with 1-D input or ``ord=None``) or a matrix norm
    (``dim`` a 2-tuple, or None with 2-D input), as :func:`vector_norm` and :func:`matrix_norm`."""
    _no_out("norm", out)
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None:
        if len(dim) == 1:
            return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)
        return matrix_norm(A, "fro" if ord is None else ord, dim, keepdim, dtype=dtype)
    if ord is None:
        return vector_norm(A, 2, None, keepdim, dtype=dtype)
    if not isinstance(A, Tensor):
        raise TypeError(f"linalg.norm(): argument 'input' must be Tensor, not {type(A).__name__}")
    if A.ndim == 1:
        return vector_norm(A, ord, None, keepdim, dtype=dtype)
    if A.ndim == 2:
        return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
    raise _C.InputError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
                        f"Got {A.ndim}D.")


# ---- products and compositions ---------------------------------------------------------------

def matmul(input: Tensor, other: Tensor, *, out=None) -> Tensor:
    """``minitorch.matmul`` (PyTorch's alias in torch.linalg)."""
    _no_out("matmul", out)
    return _C.matmul(input, other)


def vecdot(x: Tensor, y: Tensor, *, dim: int = -1, out=None) -> Tensor:
    """The dot product of vectors along ``dim`` (the operands broadcast): ``(x * y).sum(dim)``."""
    _no_out("vecdot", out)
    if not isinstance(x, Tensor) or not isinstance(y, Tensor):
        raise TypeError("linalg.vecdot(): arguments 'x' and 'y' must be Tensors")
    if x.dtype != y.dtype:
        raise _C.DTypeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found x of type {x.dtype} "
                            f"and y of type {y.dtype} instead")
    if x.dtype == _C.dtype.bool:
        raise _C.DTypeError("linalg.vecdot: \"linalg_vecdot\" not implemented for 'Bool'")
    if x.dtype in (_C.dtype.float16, _C.dtype.bfloat16):  # products and sum in float32, as PyTorch's kernels
        return (x.float() * y.float()).sum(dim).to(x.dtype)
    return (x * y).sum(dim)


def cross(input: Tensor, other: Tensor, *, dim: int = -1, out=None) -> Tensor:
    """The cross product of 3-vectors along ``dim`` (default -1, unlike ``minitorch.cross``)."""
    _no_out("cross", out)
    return input.cross(other, dim=dim)


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """``A.diagonal(offset, dim1, dim2)``: by default the diagonals of a batch of matrices."""
    return A.diagonal(offset, dim1, dim2)


def multi_dot(tensors, *, out=None) -> Tensor:
    """The product of a chain of matrices ``A @ B @ ... @ Z``; the first may be a vector
    (a row) and the last a vector (a column), as in PyTorch. Multiplied left to right."""
    _no_out("multi_dot", out)
    tensors = list(tensors)
    if len(tensors) < 2:
        raise _C.InputError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    for i, t in enumerate(tensors):
        ok_dims = (1, 2) if i in (0, len(tensors) - 1) else (2,)
        if not isinstance(t, Tensor) or t.ndim not in ok_dims:
            what = "the first and last" if i in (0, len(tensors) - 1) else "the middle"
            raise _C.InputError(f"multi_dot(): {what} tensors must be " +
                                ("1D or 2D" if len(ok_dims) == 2 else "2D") +
                                f" but got {getattr(t, 'ndim', type(t).__name__)}D for tensor {i}")
    result = tensors[0]
    for t in tensors[1:]:
        result = _C.matmul(result, t)
    return result


def matrix_power(A: Tensor, n: int, *, out=None) -> Tensor:
    """``A^n`` for square A and an integer n by repeated squaring; ``n = 0`` gives the
    identity, ``n < 0`` the power of ``inv(A)``."""
    _no_out("matrix_power", out)
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"linalg.matrix_power(): argument 'n' must be int, not {type(n).__name__}")
    if not isinstance(A, Tensor):
        raise TypeError(f"linalg.matrix_power(): argument 'A' must be Tensor, not {type(A).__name__}")
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise _C.InputError(f"linalg.matrix_power: A must be batches of square matrices, got shape {tuple(A.shape)}")
    if n == 0:
        return _C._eye(A.shape[-1], A.shape[-1], A.dtype, A.device).expand(*A.shape).clone()
    if n < 0:
        A, n = inv(A), -n
    result, base = None, A
    while n:
        if n & 1:
            result = base if result is None else _C.matmul(result, base)
        n >>= 1
        if n:
            base = _C.matmul(base, base)
    return result.clone() if result is A else result  # A^1 is a new tensor, as in PyTorch


def cond(A: Tensor, p=None, *, out=None) -> Tensor:
    """The condition number of A in the norm ``p``: for ``p`` None, 2 or -2 the ratio of
    its extreme singular values (any shape); for 'fro', 'nuc', 1, -1, inf, -inf (square A)
    ``matrix_norm(A, p) * matrix_norm(inv(A), p)``."""
    _no_out("cond", out)
    if p is None or p in (2, -2):
        _matrix("cond", A, square=False)
        s = svdvals(A)
        if s.shape[-1] == 0:
            return s.sum(-1)
        big, small = s[..., 0], s[..., -1]
        return small / big if p == -2 else big / small
    _matrix("cond", A)
    return matrix_norm(A, p) * matrix_norm(inv(A), p)
