"""tril_indices / triu_indices / vander (creation), inference_mode, and the errors and a few
values of the shape, join and indexing compositions (tile, rot90, broadcast_to, atleast_*,
diag, diag_embed, diagonal, tensor_split, hsplit / vsplit / dsplit, broadcast_tensors,
meshgrid, cartesian_prod, block_diag, take_along_dim, repeat_interleave). Their values on
every dtype, layout and device and their float64 gradients are the OpInfo battery's
(tests/opinfo/op_db.py, ``_shape_ops_more``); here: NumPy values of the creation ops on
every device, PyTorch's argument forms and errors, and gradients of what the battery does
not sample."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import minitorch
from minitorch.testing import gradcheck


def arr(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def T(a, device="cpu", grad=False):
    return minitorch.tensor(a, device=device, requires_grad=grad)


# ------------------------------------------------- tril_indices / triu_indices ----

@pytest.mark.parametrize(("row", "col", "offset"), [(3, 3, 0), (3, 4, 1), (4, 3, -1), (4, 2, 5), (3, 3, -7),
                                                     (0, 3, 0), (1, 1, 0)])
def test_tril_and_triu_indices_match_numpy(device, row, col, offset):
    lo = minitorch.tril_indices(row, col, offset, device=device)
    hi = minitorch.triu_indices(row, col, offset=offset, device=device)
    assert lo.dtype == minitorch.int64 and hi.dtype == minitorch.int64
    assert lo.device.type == device and lo.shape[0] == 2
    np.testing.assert_array_equal(lo.cpu().numpy(), np.stack(np.tril_indices(row, offset, col)))
    np.testing.assert_array_equal(hi.cpu().numpy(), np.stack(np.triu_indices(row, offset, col)))


def test_tri_indices_dtype_and_errors():
    assert minitorch.tril_indices(2, 2, dtype=minitorch.float32).dtype == minitorch.float32
    assert minitorch.tril_indices(2, 2).tolist() == [[0, 1, 1], [0, 0, 1]]
    with pytest.raises(RuntimeError, match="row must be non-negative"):
        minitorch.tril_indices(-1, 2)
    with pytest.raises(RuntimeError, match="col must be non-negative"):
        minitorch.triu_indices(2, -3)
    with pytest.raises(TypeError, match="'row' must be an int"):
        minitorch.tril_indices(2.0, 2)


# ------------------------------------------------------------------ vander ----

@pytest.mark.parametrize(("n", "kw"), [(None, {}), (4, {}), (2, dict(increasing=True)), (0, {}), (1, {})])
def test_vander_matches_numpy(device, n, kw):
    x = np.array([1.5, -2.0, 0.5])
    got = minitorch.vander(T(x, device), N=n, **kw)
    np.testing.assert_allclose(got.cpu().numpy(), np.vander(x, n, **kw), rtol=1e-12)


def test_vander_of_integers_and_bools_is_int64():
    got = minitorch.vander(minitorch.tensor([1, 2, 3]))
    assert got.dtype == minitorch.int64 and got.tolist() == np.vander([1, 2, 3]).tolist()
    got = minitorch.vander(minitorch.tensor([True, False]), 3)
    assert got.dtype == minitorch.int64 and got.tolist() == [[1, 1, 1], [0, 0, 1]]


def test_vander_gradient_and_errors():
    assert gradcheck(lambda x: minitorch.vander(x, 4), (T(arr(3), grad=True),))
    assert gradcheck(lambda x: minitorch.vander(x, 3, increasing=True), (T(arr(4), grad=True),))
    with pytest.raises(RuntimeError, match="one-dimensional"):
        minitorch.vander(minitorch.zeros(2, 2))
    with pytest.raises(RuntimeError, match="N must be non-negative"):
        minitorch.vander(minitorch.zeros(2), -1)
    with pytest.raises(TypeError):
        minitorch.vander([1.0, 2.0])


# ---------------------------------------------------------- inference_mode ----

def test_inference_mode_records_no_graph_and_restores():
    x = minitorch.ones(2, requires_grad=True)
    assert not minitorch.is_inference_mode_enabled()
    with minitorch.inference_mode():
        assert minitorch.is_inference_mode_enabled() and not minitorch.is_grad_enabled()
        y = x * 2
        assert not y.requires_grad and y.grad_fn is None
    assert not minitorch.is_inference_mode_enabled() and minitorch.is_grad_enabled()
    assert (x * 2).requires_grad


def test_inference_mode_false_turns_recording_back_on():
    x = minitorch.ones(2, requires_grad=True)
    with minitorch.inference_mode():
        with minitorch.inference_mode(False):
            assert not minitorch.is_inference_mode_enabled() and minitorch.is_grad_enabled()
            assert (x * 2).requires_grad
        assert minitorch.is_inference_mode_enabled() and not minitorch.is_grad_enabled()
    with minitorch.no_grad(), minitorch.inference_mode(mode=False):
        assert minitorch.is_grad_enabled()
    assert minitorch.is_grad_enabled()


def test_inference_mode_as_a_decorator_and_after_an_error():
    @minitorch.inference_mode()
    def with_parens():
        return minitorch.is_inference_mode_enabled(), minitorch.is_grad_enabled()

    @minitorch.inference_mode
    def bare():
        return minitorch.is_inference_mode_enabled(), minitorch.is_grad_enabled()

    assert with_parens() == (True, False) and bare() == (True, False)
    assert bare.__name__ == "bare"
    with pytest.raises(KeyError):
        with minitorch.inference_mode():
            raise KeyError("x")
    assert not minitorch.is_inference_mode_enabled() and minitorch.is_grad_enabled()
    assert minitorch.autograd.inference_mode is minitorch.inference_mode
    with pytest.raises(TypeError):
        minitorch.inference_mode("yes")


# ------------------------------------------------ values and argument forms ----

def test_tile_rot90_repeat_interleave_match_numpy(device):
    a = arr((2, 3))
    x = T(a, device)
    np.testing.assert_array_equal(x.tile(2).cpu().numpy(), np.tile(a, 2))
    np.testing.assert_array_equal(minitorch.tile(x, (3, 1, 2)).cpu().numpy(), np.tile(a, (3, 1, 2)))
    np.testing.assert_array_equal(x.tile(2, 2).cpu().numpy(), np.tile(a, (2, 2)))
    for k in (-3, -1, 0, 1, 2, 5):
        np.testing.assert_array_equal(x.rot90(k).cpu().numpy(), np.rot90(a, k))
    np.testing.assert_array_equal(x.repeat_interleave(2, dim=1).cpu().numpy(), np.repeat(a, 2, axis=1))
    reps = np.array([0, 3])
    np.testing.assert_array_equal(x.repeat_interleave(T(reps, device), 0).cpu().numpy(), np.repeat(a, reps, 0))
    assert minitorch.repeat_interleave(minitorch.tensor([2, 0, 1])).tolist() == [0, 0, 2]


def test_take_along_dim_matches_numpy(device):
    a = arr((3, 4))
    idx = np.argsort(a, axis=1)
    got = minitorch.take_along_dim(T(a, device), T(idx, device), dim=1)
    np.testing.assert_array_equal(got.cpu().numpy(), np.take_along_axis(a, idx, 1))
    got = T(a, device).take_along_dim(T(np.array([11, 0]), device))
    np.testing.assert_array_equal(got.cpu().numpy(), a.reshape(-1)[[11, 0]])


def test_meshgrid_forms_and_warning():
    a, b = minitorch.tensor([1, 2]), minitorch.tensor([3, 4, 5])
    with pytest.warns(UserWarning, match="indexing argument"):
        gi = minitorch.meshgrid(a, b)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gl = minitorch.meshgrid([a, b], indexing="ij")
        gx = minitorch.meshgrid(a, b, indexing="xy")
    for got, want in ((gi, np.meshgrid([1, 2], [3, 4, 5], indexing="ij")), (gl, np.meshgrid([1, 2], [3, 4, 5],
                      indexing="ij")), (gx, np.meshgrid([1, 2], [3, 4, 5]))):
        assert isinstance(got, tuple) and [g.tolist() for g in got] == [w.tolist() for w in want]
    assert gi[0].stride() == (1, 0)  # views: expanded, as in PyTorch


def test_views_and_identity_where_pytorch_gives_them():
    x = minitorch.zeros(2, 3)
    assert minitorch.atleast_1d(x) is x and minitorch.atleast_2d(x) is x
    assert minitorch.atleast_3d(minitorch.zeros(4)).shape == (1, 4, 1)
    assert minitorch.atleast_2d(minitorch.tensor(1.0)).shape == (1, 1)
    assert isinstance(minitorch.atleast_1d([x]), tuple)
    assert x.broadcast_to((4, 2, 3)).stride() == (0, 3, 1)
    a, b = minitorch.broadcast_tensors(minitorch.zeros(3, 1), minitorch.zeros(4))
    assert a.shape == b.shape == (3, 4) and b.stride() == (0, 1)
    parts = minitorch.arange(6).tensor_split(minitorch.tensor(4))
    assert [p.tolist() for p in parts] == [[0, 1], [2, 3], [4], [5]]
    parts = minitorch.arange(6).tensor_split(minitorch.tensor([1, 4]))
    assert [p.tolist() for p in parts] == [[0], [1, 2, 3], [4, 5]]
    assert minitorch.block_diag().shape == (1, 0)
    v = minitorch.tensor([1.0, 2.0])
    assert minitorch.cartesian_prod(v) is v


def test_block_diag_promotes_like_pytorch():
    out = minitorch.block_diag(minitorch.tensor([[1, 2]]), minitorch.tensor([3.0], dtype=minitorch.float64))
    assert out.dtype == minitorch.float64 and out.tolist() == [[1, 2, 0], [0, 0, 3]]
    # a 0-dim tensor of the same category does not widen the dimensioned ones' dtype
    out = minitorch.block_diag(minitorch.tensor([[1.0]]), minitorch.tensor(2.0, dtype=minitorch.float64))
    assert out.dtype == minitorch.float32


def test_diagonal_is_a_copy_with_the_right_gradient():
    x = T(arr((3, 4)), grad=True)
    d = x.diagonal(1)
    d.sum().backward()
    want = np.zeros((3, 4))
    want[[0, 1, 2], [1, 2, 3]] = 1
    np.testing.assert_array_equal(x.grad.numpy(), want)
    with minitorch.no_grad():
        d.zero_()
    assert x.diagonal(1).abs().sum().item() > 0  # a copy, not a view (documented)
    assert gradcheck(lambda t: t.diagonal(-1, 2, 0), (T(arr((3, 2, 4)), grad=True),))
    assert gradcheck(lambda t: t.diag_embed(1, 0, 2), (T(arr((2, 3)), grad=True),))
    assert gradcheck(lambda t: minitorch.diag(t, -2), (T(arr(3), grad=True),))


def test_gradients_of_repeat_interleave_and_take_along_dim():
    assert gradcheck(lambda t: t.repeat_interleave(minitorch.tensor([2, 0, 1]), dim=0), (T(arr((3, 2)), grad=True),))
    idx = minitorch.tensor([[0, 0, 1]])
    assert gradcheck(lambda t: minitorch.take_along_dim(t, idx, 0), (T(arr((2, 3)), grad=True),))
    assert gradcheck(lambda t: minitorch.block_diag(t, t[:1]), (T(arr((2, 2)), grad=True),))


# ------------------------------------------------------------------ errors ----

ERRORS = [
    (lambda: minitorch.zeros(2, 3).rot90(1, (0, 1, 2)), RuntimeError, "rotation dims == 2"),
    (lambda: minitorch.zeros(3).rot90(), RuntimeError, "total dims >= 2"),
    (lambda: minitorch.zeros(2, 3).rot90(1, (1, -1)), RuntimeError, "rotation dims to be different"),
    (lambda: minitorch.zeros(2, 3).tile(1.5), TypeError, "tile"),
    (lambda: minitorch.zeros(2, 3).broadcast_to((4, 3, 2)), RuntimeError, r"broadcast_to: .*\(2, 3\) to \(4, 3, 2\)"),
    (lambda: minitorch.zeros(2, 2, 2).diag(), RuntimeError, "Supports 1D or 2D tensors. Got 3D"),
    (lambda: minitorch.zeros(2, 3).diagonal(0, 1, -1), RuntimeError, "cannot be identical"),
    (lambda: minitorch.zeros(3).diagonal(), IndexError, "out of range"),
    (lambda: minitorch.zeros(3).diag_embed(0, 0, -2), RuntimeError, "cannot be identical"),
    (lambda: minitorch.tensor(1.0).diag_embed(), IndexError, "out of range"),
    (lambda: minitorch.atleast_2d(1.0), TypeError, "atleast_2d"),
    (lambda: minitorch.zeros(5).tensor_split(0), RuntimeError, "number of sections must be larger than 0"),
    (lambda: minitorch.tensor(1.0).tensor_split(2), RuntimeError, "at least a 1-dimensional"),
    (lambda: minitorch.zeros(5).tensor_split(minitorch.tensor([1.0])), RuntimeError, "int64"),
    (lambda: minitorch.zeros(3, 4).hsplit(3), RuntimeError, "not divisible by the split_size 3"),
    (lambda: minitorch.zeros(4).vsplit(2), RuntimeError, "at least 2 dimensions"),
    (lambda: minitorch.zeros(2, 4).dsplit([1]), RuntimeError, "at least 3 dimensions"),
    (lambda: minitorch.broadcast_tensors(minitorch.zeros(3), minitorch.zeros(4)), RuntimeError,
     r"broadcast_tensors: .*\(3,\) and \(4,\)"),
    (lambda: minitorch.broadcast_tensors(minitorch.zeros(3), 1.0), TypeError, "broadcast_tensors"),
    (lambda: minitorch.meshgrid(indexing="ij"), RuntimeError, "non-empty"),
    (lambda: minitorch.meshgrid(minitorch.zeros(2), indexing="yx"), RuntimeError, 'one of "xy" or "ij"'),
    (lambda: minitorch.meshgrid(minitorch.zeros(2, 2), indexing="ij"), RuntimeError, "0D or 1D"),
    (lambda: minitorch.meshgrid(minitorch.zeros(2), minitorch.tensor([1]), indexing="ij"), TypeError, "same dtype"),
    (lambda: minitorch.cartesian_prod(minitorch.tensor(1.0), minitorch.zeros(2)), RuntimeError, "1D vector"),
    (lambda: minitorch.block_diag(minitorch.zeros(1, 1, 1)), RuntimeError, "Input 0 has 3 dimensions"),
    (lambda: minitorch.block_diag([minitorch.zeros(1)]), TypeError, "block_diag"),
    (lambda: minitorch.zeros(2, 3).take_along_dim(minitorch.tensor([0]), 1), RuntimeError,
     "same number of dimensions"),
    (lambda: minitorch.zeros(2, 3).take_along_dim(minitorch.tensor([[0.0]]), 1), TypeError, "int64"),
    (lambda: minitorch.zeros(2, 3).take_along_dim(minitorch.tensor([[0]]), 2), IndexError, "out of range"),
    (lambda: minitorch.zeros(2, 3).take_along_dim(minitorch.zeros(3, 3, dtype=minitorch.int64), 1), RuntimeError,
     r"take_along_dim: .*\(2, 3\).*\(3, 3\)"),
    (lambda: minitorch.zeros(3).repeat_interleave(-1), RuntimeError, "can not be negative"),
    (lambda: minitorch.zeros(3).repeat_interleave(minitorch.tensor([1, 2]), 0), RuntimeError, "same size"),
    (lambda: minitorch.zeros(3).repeat_interleave(minitorch.tensor([[1]]), 0), RuntimeError, "0-dim or 1-dim"),
    (lambda: minitorch.zeros(3).repeat_interleave(2, output_size=5), RuntimeError, "does not match"),
    (lambda: minitorch.zeros(3).repeat_interleave(minitorch.tensor([1.0]), 0), TypeError, "int64"),
    (lambda: minitorch.zeros(3).repeat_interleave(1.5), TypeError, "repeats"),
]


@pytest.mark.parametrize(("fn", "error", "match"), ERRORS, ids=range(len(ERRORS)))
def test_bad_arguments_raise_like_pytorch(fn, error, match):
    with pytest.raises(error, match=match):
        fn()
