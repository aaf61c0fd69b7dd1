"""minitorch.linalg's errors, worded and typed as PyTorch's: LinAlgError (a RuntimeError)
naming the op and the batch element, RuntimeError/ValueError naming shapes, TypeError for
integer and low-precision inputs."""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
from conftest import DEVICES

LA = minitorch.linalg


@pytest.fixture(params=DEVICES)
def device(request):
    return request.param


def t(arr, device, dtype=minitorch.float64):
    return minitorch.tensor(np.asarray(arr, dtype=np.float64), dtype=dtype, device=device)


def test_linalg_error_is_a_runtime_error():
    assert issubclass(LA.LinAlgError, RuntimeError)


def test_singular_solve_and_inv(device):
    good, bad = np.eye(2), np.array([[1.0, 2.0], [2.0, 4.0]])
    with pytest.raises(LA.LinAlgError, match=r"^linalg.solve: The solver failed because the input matrix is singular"):
        LA.solve(t(bad, device), t(np.ones(2), device))
    with pytest.raises(LA.LinAlgError, match=r"linalg.solve: \(Batch element 1\): The solver failed"):
        LA.solve(t([good, bad], device), t(np.ones((2, 2)), device))
    with pytest.raises(LA.LinAlgError, match=r"linalg.inv: \(Batch element 1\): The diagonal element 2 is zero"):
        LA.inv(t([good, bad], device))
    inverse, info = LA.inv_ex(t([good, bad], device))
    assert info.tolist() == [0, 2] and inverse.shape == (2, 2, 2)
    with pytest.raises(RuntimeError):
        LA.inv_ex(t(bad, device), check_errors=True)


def test_cholesky_not_positive_definite(device):
    a = np.array([[4.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, -1.0]])
    msg = (r"linalg.cholesky: The factorization could not be completed because the input is not positive-definite "
           r"\(the leading minor of order 3 is not positive-definite\)")
    with pytest.raises(LA.LinAlgError, match=msg):
        LA.cholesky(t(a, device))
    with pytest.raises(LA.LinAlgError, match=r"\(Batch element 0\): The factorization could not be completed"):
        LA.cholesky(t([a, np.eye(3)], device))
    l, info = LA.cholesky_ex(t([np.eye(3), a], device))
    assert info.tolist() == [0, 3]


@pytest.mark.parametrize("fn", [LA.inv, LA.det, LA.slogdet, LA.cholesky, LA.eigh, LA.eigvalsh])
def test_non_square(device, fn):
    with pytest.raises(RuntimeError, match=r"must be batches of square matrices, but they are 2 by 3 matrices"):
        fn(t(np.ones((2, 3)), device))
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        fn(t(np.ones(3), device))


@pytest.mark.parametrize("fn", [LA.inv, LA.det, LA.cholesky, LA.qr, LA.svd, LA.svdvals, LA.eigh, LA.pinv,
                                LA.matrix_rank, LA.matrix_norm, LA.vector_norm])
def test_integer_input_is_a_type_error(device, fn):
    with pytest.raises(TypeError, match=r"Expected a floating point or complex tensor as input. Got Long"):
        fn(minitorch.ones(3, 3, dtype=minitorch.int64, device=device))


def test_low_precision_is_a_type_error(device):
    with pytest.raises(TypeError, match="Low precision dtypes not supported. Got Half"):
        LA.inv(minitorch.ones(2, 2, dtype=minitorch.float16, device=device))


def test_solve_shapes_and_dtypes(device):
    a = t(np.eye(3), device)
    with pytest.raises(ValueError, match=r"Incompatible shapes of A and B for the equation AX = B \(3x3 and 4x2\)"):
        LA.solve(a, t(np.ones((4, 2)), device))
    with pytest.raises(TypeError, match="Expected A and B to have the same dtype"):
        LA.solve(a, minitorch.ones(3, 2, device=device))
    with pytest.raises(ValueError, match="cannot be broadcast"):
        LA.solve(t(np.ones((2, 3, 3)), device), t(np.ones((4, 3, 1)), device))


def test_argument_values(device):
    a = t(np.eye(3), device)
    with pytest.raises(ValueError, match="unrecognized mode 'full'"):
        LA.qr(a, mode="full")
    with pytest.raises(ValueError, match="Expected UPLO argument to be 'L' or 'U', but got X"):
        LA.eigh(a, UPLO="X")
    with pytest.raises(ValueError, match="Order 3 not supported"):
        LA.matrix_norm(a, 3)
    with pytest.raises(ValueError, match="the input must be 1D or 2D. Got 3D"):
        LA.norm(t(np.ones((2, 2, 2)), device), 2)
    with pytest.raises(ValueError, match="driver"):
        LA.lstsq(a, a, driver="magic")


def test_svd_of_non_finite_values(device):
    a = t([[1.0, float("nan")], [2.0, 3.0]], device)
    with pytest.raises(LA.LinAlgError, match="linalg.svd: The algorithm failed to converge because the input matrix "
                                             "contained non-finite values"):
        LA.svd(a)
    assert np.isnan(LA.det(a).item())


def test_svd_failure_that_reports_no_argument_names_the_non_finite_matrix(monkeypatch):
    """cuSOLVER's gesvdj answers NaN/inf with INFO > 0 (did not converge), not LAPACK's
    INFO < 0: the message then comes from the failed batch element's own values."""
    from minitorch.linalg import _kernels, _svd_failed
    a = minitorch.tensor(np.array([np.eye(2), [[1.0, np.inf], [0.0, 1.0]]]))
    monkeypatch.setattr(_kernels, "last_info", [0, 3])
    with pytest.raises(LA.LinAlgError, match=r"^linalg.svd: \(Batch element 1\): The algorithm failed to converge "
                                             "because the input matrix contained non-finite values"):
        _svd_failed("svd", a)
    monkeypatch.setattr(_kernels, "last_info", [3, 0])
    with pytest.raises(LA.LinAlgError, match=r"\(Batch element 0\): .* ill-conditioned .* \(error code: 3\)"):
        _svd_failed("svd", a)


def test_solve_triangular_errors(device):
    with pytest.raises(LA.LinAlgError, match="linalg.solve_triangular: The solver failed"):
        LA.solve_triangular(t([[0.0, 0.0], [1.0, 1.0]], device), t(np.ones((2, 1)), device), upper=False)
    with pytest.raises(ValueError, match="B must have at least 2 dimensions"):
        LA.solve_triangular(t(np.eye(2), device), t(np.ones(2), device), upper=True)
    with pytest.raises(TypeError):
        LA.solve_triangular(t(np.eye(2), device), t(np.ones((2, 1)), device))  # upper is required
