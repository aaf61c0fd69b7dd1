"""Errors: the right exception type, and a message that names the op and the culprit.

minitorch.InputError is both a ValueError and a RuntimeError, DTypeError both a
TypeError and a RuntimeError, so code written for either convention catches them.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import minitorch
from conftest import DEVICES


def esc(s: str) -> str:
    return re.escape(s)


def test_error_classes():
    assert issubclass(minitorch.InputError, ValueError) and issubclass(minitorch.InputError, RuntimeError)
    assert issubclass(minitorch.DTypeError, TypeError) and issubclass(minitorch.DTypeError, RuntimeError)


# ------------------------------------------------------------------ shapes ----

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "pow", "maximum", "eq", "lt"])
def test_unbroadcastable_shapes(device, op):
    a, b = minitorch.ones(2, 3, device=device), minitorch.ones(4, device=device)
    pattern = rf"{op}: shapes \(2, 3\) and \(4,\) cannot be broadcast together \(size 3 != 4"
    with pytest.raises(ValueError, match=pattern) as info:
        getattr(minitorch, op)(a, b)
    assert isinstance(info.value, minitorch.InputError) and isinstance(info.value, RuntimeError)


@pytest.mark.parametrize("device", DEVICES)
def test_unbroadcastable_operator_and_where(device):
    a, b = minitorch.ones(2, 3, device=device), minitorch.ones(3, 2, device=device)
    with pytest.raises(ValueError, match=r"add: shapes \(2, 3\) and \(3, 2\) cannot be broadcast"):
        a + b
    with pytest.raises(ValueError, match=r"where: shapes .* cannot be broadcast"):
        minitorch.where(a > 0, a, b)


@pytest.mark.parametrize("device", DEVICES)
def test_inplace_output_shape_mismatch(device):
    a = minitorch.ones(3, device=device)
    with pytest.raises(ValueError, match=r"add_: output with shape \(3,\) doesn't match the broadcast shape \(2, 3\)"):
        a += minitorch.ones(2, 3, device=device)


@pytest.mark.parametrize("device", DEVICES)
def test_expand_errors(device):
    t = minitorch.ones(2, 3, device=device)
    with pytest.raises(ValueError, match=r"expand: the expanded size of the tensor \(4\) must match the existing size \(3\)"):
        t.expand(2, 4)
    with pytest.raises(ValueError, match=r"expand: the number of sizes provided \(1\) must be greater or equal"):
        t.expand(3)


# -------------------------------------------------------------------- dims ----

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(
    ("call", "op", "bad"),
    [
        (lambda t: t.sum(2), "sum", 2),
        (lambda t: t.sum((0, -3)), "sum", -3),
        (lambda t: t.mean(5), "mean", 5),
        (lambda t: t.max(2), "max", 2),
        (lambda t: t.argmin(-3), "argmin", -3),
        (lambda t: t.transpose(0, 2), "transpose", 2),
        (lambda t: t.permute(0, 2), "permute", 2),
        (lambda t: t.squeeze(3), "squeeze", 3),
        (lambda t: t.flatten(0, 4), "flatten", 4),
        (lambda t: t.size(2), "size", 2),
    ],
    ids=["sum", "sum-tuple", "mean", "max", "argmin", "transpose", "permute", "squeeze", "flatten", "size"],
)
def test_bad_dims_raise_index_error(device, call, op, bad):
    t = minitorch.ones(2, 3, device=device)
    with pytest.raises(IndexError, match=rf"{op}: dimension out of range \(expected to be in range of \[-2, 1\], but got {bad}\)"):
        call(t)


@pytest.mark.parametrize("device", DEVICES)
def test_unsqueeze_dim_range_counts_the_new_dim(device):
    t = minitorch.ones(2, 3, device=device)
    assert tuple(t.unsqueeze(2).shape) == (2, 3, 1) and tuple(t.unsqueeze(-3).shape) == (1, 2, 3)
    with pytest.raises(IndexError, match=r"unsqueeze: dimension out of range \(expected to be in range of \[-3, 2\], but got 3\)"):
        t.unsqueeze(3)


@pytest.mark.parametrize("device", DEVICES)
def test_permute_wrong_count_and_repeats(device):
    t = minitorch.ones(2, 3, device=device)
    with pytest.raises(ValueError, match=r"permute: number of dims \(0,\) doesn't match the tensor's 2 dims"):
        t.permute(0)
    with pytest.raises(ValueError, match=r"permute: dim 0 appears more than once in \(0, -2\)"):
        t.permute(0, -2)


# -------------------------------------------------------------------- view ----

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(
    ("shape", "pattern"),
    [
        ((4, 2), r"view: shape \(4, 2\) is invalid for input of size 6"),
        ((4, -1), r"view: shape \(4, -1\) is invalid for input of size 6"),
        ((-1, -1), r"view: only one dimension can be inferred \(-1\), got \(-1, -1\)"),
        ((0, -1), r"view: cannot infer the -1 in shape \(0, -1\) for a tensor of 6 elements"),
        ((-2, 3), r"view: invalid shape dimension -2 in \(-2, 3\)"),
    ],
    ids=str,
)
def test_wrong_view_sizes(device, shape, pattern):
    t = minitorch.ones(2, 3, device=device)
    with pytest.raises(ValueError, match=pattern):
        t.view(*shape)
    with pytest.raises(ValueError, match=pattern.replace("view", "reshape")):
        t.reshape(shape)


@pytest.mark.parametrize("device", DEVICES)
def test_view_of_non_contiguous_suggests_reshape(device):
    t = minitorch.ones(2, 3, device=device).T
    with pytest.raises(
        ValueError,
        match=esc("view: size (6,) is not compatible with input of size (3, 2) and stride (1, 3)") + r".*reshape",
    ):
        t.view(6)


# ---------------------------------------------------------------- indexing ----

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(
    ("idx", "pattern"),
    [
        (3, r"index 3 is out of bounds for dimension 0 with size 3"),
        (-4, r"index -4 is out of bounds for dimension 0 with size 3"),
        ((0, 4), r"index 4 is out of bounds for dimension 1 with size 4"),
        ((slice(None), -5), r"index -5 is out of bounds for dimension 1 with size 4"),
        ((0, 0, 0), r"index: too many indices for tensor of dimension 2 \(got 3\)"),
        ((Ellipsis, 0, Ellipsis), r"an index can only have a single ellipsis"),
    ],
    ids=str,
)
def test_out_of_range_indices(device, idx, pattern):
    t = minitorch.zeros(3, 4, device=device)
    with pytest.raises(IndexError, match=pattern):
        t[idx]
    with pytest.raises(IndexError, match=pattern):
        t[idx] = 1.0


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("how", ["tensor", "list", "index_select"])
def test_index_tensors_out_of_range(device, how):
    t = minitorch.arange(6.0, device=device).reshape(3, 2)
    idx = minitorch.tensor([0, 3], device=device)
    select = {"tensor": lambda x, i: x[i], "list": lambda x, i: x[i.tolist()],
              "index_select": lambda x, i: x.index_select(0, i)}[how]
    # .cpu(): on a GPU the kernel's finding is reported at the next synchronization
    with pytest.raises(IndexError, match=r"index 3 is out of bounds for dimension with size 3"):
        select(t, idx).cpu()
    # An empty dim has no valid index at all: said at once, on every device (found by the fuzz test
    # on cuda, where a kernel used to read row 0 of an empty tensor).
    with pytest.raises(IndexError, match=r"out of bounds for dimension with size 0"):
        select(t[:0], minitorch.tensor([0], device=device))
    assert tuple(select(t[:0], minitorch.tensor([], dtype=minitorch.int64, device=device)).shape) == (0, 2)


@pytest.mark.parametrize("device", DEVICES)
def test_index_of_a_zero_dim_tensor(device):
    z = minitorch.full((), 1.0, device=device)
    with pytest.raises(IndexError, match=r"too many indices for tensor of dimension 0"):
        z[0]


@pytest.mark.parametrize("device", DEVICES)
def test_bad_slices_and_index_types(device):
    t = minitorch.zeros(5, device=device)
    with pytest.raises(ValueError, match=r"slice step cannot be zero"):
        t[::0]
    with pytest.raises(ValueError, match=r"step must be greater than zero, got -1"):
        t[::-1]
    with pytest.raises(TypeError, match=r"index: only integers, slices .* got str"):
        t["a"]
    with pytest.raises(TypeError, match=r"index: indexing with a Python bool"):
        t[True]


# ------------------------------------------------------------ tensor() data ----

@pytest.mark.parametrize(
    ("data", "pattern"),
    [
        ([[1, 2], [3]], r"tensor: expected sequence of length 2 at dim 1 \(got 1\)"),
        ([[1, 2], [3, 4, 5]], r"tensor: expected sequence of length 2 at dim 1 \(got 3\)"),
        ([[[1], [2]], [[3]]], r"tensor: expected sequence of length 2 at dim 1 \(got 1\)"),
        ([1, [2]], r"tensor: "),
    ],
    ids=str,
)
def test_ragged_lists(data, pattern, recwarn):
    with pytest.raises(ValueError, match=pattern) as info:
        minitorch.tensor(data)
    # only minitorch's message: no NumPy exception chained before it, no NumPy warning
    assert info.value.__cause__ is None and info.value.__suppress_context__
    assert not recwarn.list


@pytest.mark.parametrize(
    ("data", "pattern"),
    [
        (np.array([1 + 2j]), r"tensor: can't convert np.ndarray of type complex128"),
        (np.array(["a", "b"]), r"tensor: can't convert np.ndarray of type str"),
        (np.array([object(), 1], dtype=object), r"tensor: could not infer dtype"),
        ([1 + 2j], r"tensor: could not infer a dtype from data of NumPy kind complex128"),
        (["a"], r"tensor: could not infer a dtype"),
        (np.array([1], dtype=np.uint64), r"tensor: can't convert np.ndarray of type uint64"),
    ],
    ids=["complex-array", "str-array", "object-array", "complex-list", "str-list", "uint64"],
)
def test_unsupported_dtypes_in_tensor(data, pattern):
    with pytest.raises(TypeError, match=pattern):
        minitorch.tensor(data)


def test_unsupported_dtypes_elsewhere():
    with pytest.raises(TypeError, match=r"from_numpy: can't convert np.ndarray of type uint16"):
        minitorch.from_numpy(np.zeros(2, dtype=np.uint16))
    with pytest.raises(TypeError, match=r"from_numpy: can't convert np.ndarray of type complex64"):
        minitorch.from_numpy(np.zeros(2, dtype=np.complex64))
    with pytest.raises(TypeError, match=r"from_numpy: expected np.ndarray, but got list"):
        minitorch.from_numpy([1.0])
    with pytest.raises(TypeError, match=r"unsupported dtype 'complex64'"):
        minitorch.zeros(2, dtype="complex64")
    with pytest.raises(TypeError, match=r"unsupported dtype 'uint16'"):
        minitorch.ones(2, dtype=np.uint16)
    with pytest.raises(TypeError, match=r"invalid dtype"):
        minitorch.zeros(2, dtype=object())


# -------------------------------------------------------------------- sizes ----

@pytest.mark.parametrize("make", [minitorch.zeros, minitorch.ones, minitorch.empty, minitorch.rand, minitorch.randn])
def test_negative_sizes(make):
    with pytest.raises(ValueError, match=r"negative dimension -1 in size \(-1,\)"):
        make(-1)
    with pytest.raises(ValueError, match=r"negative dimension -2 in size \(3, -2\)"):
        make(3, -2)


def test_negative_sizes_full_eye_linspace():
    with pytest.raises(ValueError, match=r"negative dimension -1"):
        minitorch.full((2, -1), 1.0)
    with pytest.raises(ValueError, match=r"eye: sizes must be non-negative, got n=-1, m=-1"):
        minitorch.eye(-1)
    with pytest.raises(ValueError, match=r"linspace: number of steps must be non-negative, got -2"):
        minitorch.linspace(0, 1, -2)


@pytest.mark.parametrize(
    "make",
    [
        lambda: minitorch.zeros(10**12),
        lambda: minitorch.empty(10**6, 10**6),
        lambda: minitorch.ones(10**7, 10**7, dtype=minitorch.float64),
    ],
    ids=["zeros(10**12)", "empty(10**6, 10**6)", "ones(10**7, 10**7)"],
)
def test_too_large_allocation_raises_memory_error(make):
    with pytest.raises(MemoryError, match=r"cannot allocate .*(TiB|PiB|EiB)"):
        make()


def test_element_count_overflow_raises_memory_error():
    with pytest.raises(MemoryError, match=r"size \(4611686018427387904, 4611686018427387904\) has too many elements"):
        minitorch.zeros(2**62, 2**62)
    with pytest.raises(MemoryError):
        minitorch.empty(2**40, 2**40, 2**40)


def test_sizes_must_be_ints():
    with pytest.raises(TypeError, match=r"zeros\(\): size must be a tuple of ints, but got an element of type float"):
        minitorch.zeros(2.5)
    with pytest.raises(TypeError, match=r"ones\(\): size must be a tuple of ints, but got an element of type bool"):
        minitorch.ones(True)


# ------------------------------------------------------ values and dtypes ----

@pytest.mark.parametrize("device", DEVICES)
def test_item_on_many_elements(device):
    with pytest.raises(RuntimeError, match=r"item: a Tensor with 6 elements cannot be converted to Scalar"):
        minitorch.ones(2, 3, device=device).item()
    with pytest.raises(RuntimeError, match=r"item: a Tensor with 0 elements"):
        minitorch.ones(0, device=device).item()
    with pytest.raises(RuntimeError, match=r"only one element tensors can be converted to Python scalars"):
        float(minitorch.ones(2, device=device))
    with pytest.raises(RuntimeError, match=r"Boolean value of Tensor with 2 values is ambiguous"):
        bool(minitorch.ones(2, device=device))


def test_numpy_on_a_tensor_that_requires_grad():
    t = minitorch.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"numpy: can't call numpy\(\) on a Tensor that requires grad.*detach\(\)"):
        t.cpu().numpy()
    np.testing.assert_array_equal(t.detach().cpu().numpy(), [1.0, 1.0])


@pytest.mark.parametrize("dtype", [minitorch.int64, minitorch.bool])
def test_requires_grad_on_non_float(dtype):
    t = minitorch.zeros(2, dtype=dtype)
    pattern = rf"only Tensors of floating point dtype can require gradients \(got {dtype.name}\)"
    with pytest.raises(RuntimeError, match=pattern):
        t.requires_grad = True
    with pytest.raises(RuntimeError, match=pattern):
        t.requires_grad_()
    with pytest.raises(RuntimeError, match=pattern):
        minitorch.ones(2, dtype=dtype, requires_grad=True)
    assert t.requires_grad is False
    with pytest.raises(RuntimeError, match=r"floating point dtype can require gradients \(got int64\)"):
        minitorch.tensor([1, 2], requires_grad=True)


@pytest.mark.parametrize("device", DEVICES)
def test_bool_negation_and_subtraction(device):
    b = minitorch.tensor([True, False], device=device)
    with pytest.raises(TypeError, match=r"neg: negation, the `-` operator, on a bool tensor is not supported.*logical_not"):
        -b
    with pytest.raises(TypeError, match=r"neg: negation"):
        minitorch.neg(b)
    with pytest.raises(TypeError, match=r"sub: subtraction, the `-` operator, with two bool tensors is not supported"):
        b - b
    with pytest.raises(TypeError, match=r"sub: subtraction"):
        b.sub(True)
    np.testing.assert_array_equal((~b).cpu().numpy(), [False, True])  # the supported way
    with pytest.raises(TypeError, match=r"bitwise_not: only bool and integer tensors are supported, got float32"):
        ~minitorch.ones(2, device=device)


@pytest.mark.parametrize("device", DEVICES)
def test_int_to_negative_int_power(device):
    x = minitorch.tensor([1, 2, 3], device=device)
    with pytest.raises(ValueError, match=r"pow: integers to negative integer powers are not allowed"):
        x**-1
    with pytest.raises(ValueError, match=r"pow: integers to negative integer powers are not allowed"):
        x.pow(-2)
    np.testing.assert_allclose((x**-1.0).cpu().numpy(), [1.0, 0.5, 1 / 3], rtol=1e-6)  # a float exponent is fine
    np.testing.assert_array_equal((x**2).cpu().numpy(), [1, 4, 9])  # the exponent's sign is read on any device


@pytest.mark.parametrize("device", DEVICES)
def test_randint_bounds_beyond_exact_doubles(device):
    limit = 2**62 if device == "cpu" else 2**53
    with pytest.raises(ValueError, match=rf"randint: on {device}.* bounds must lie within \+-{limit}"):
        minitorch.randint(0, limit + 1, (3,), device=device)
    r = minitorch.randint(-(2**53), 2**53, (1000,), device=device).cpu().numpy()
    assert r.min() >= -(2**53) and r.max() < 2**53 and len(np.unique(r)) == 1000


@pytest.mark.parametrize("device", DEVICES)
def test_inplace_result_cannot_be_cast_back(device):
    x = minitorch.tensor([1, 2], device=device)
    with pytest.raises(TypeError, match=r"add_: result type float32 can't be cast to the desired output type int64"):
        x += 0.5
    with pytest.raises(TypeError, match=r"div_: result type float32 can't be cast to the desired output type int64"):
        x /= 2
    np.testing.assert_array_equal(x.cpu().numpy(), [1, 2])  # unchanged


@pytest.mark.parametrize("device", DEVICES)
def test_bad_operand_types(device):
    x = minitorch.ones(2, device=device)
    with pytest.raises(TypeError):
        x + "a"
    with pytest.raises(TypeError, match=r"add: other must be a Tensor or a number, but got str"):
        x.add("a")
    with pytest.raises(TypeError, match=r"exp: argument 'input' must be a Tensor, not list"):
        minitorch.exp([1.0])
    with pytest.raises(TypeError, match=r"sum\(\): argument 'input' must be a Tensor, not list"):
        minitorch.sum([1.0])
    with pytest.raises(TypeError, match=r"where: expected condition to be a bool tensor, but got float32"):
        minitorch.where(x, x, x)
    with pytest.raises(ValueError, match=r"clamp: at least one of 'min' or 'max' must not be None"):
        x.clamp()


def test_from_numpy_negative_strides():
    a = np.arange(6.0)[::-1]
    with pytest.raises(ValueError, match=r"from_numpy: at least one stride in the given numpy array is negative \(-8 bytes\).*copy"):
        minitorch.from_numpy(a)
    np.testing.assert_array_equal(minitorch.from_numpy(a.copy()).cpu().numpy(), a)


def test_creation_argument_errors():
    with pytest.raises(ValueError, match=r"randint: expected low < high, got low=5, high=5"):
        minitorch.randint(5, 5, (2,))
    with pytest.raises(ValueError, match=r"arange: step must be nonzero"):
        minitorch.arange(0, 1, 0)
    with pytest.raises(ValueError, match=r"arange: upper bound and step are inconsistent \(start=0, end=5, step=-1\)"):
        minitorch.arange(0, 5, -1)
    with pytest.raises(TypeError, match=r"rand: expected a floating dtype, got int64"):
        minitorch.rand(2, dtype=minitorch.int64)
    with pytest.raises(ValueError, match=r"set_num_threads: expected a positive number of threads, got -1"):
        minitorch.set_num_threads(-1)


def test_devices_that_cannot_be_used():
    with pytest.raises(ValueError, match=r"invalid device string 'gpu'"):
        minitorch.zeros(2, device="gpu")
    if not minitorch.cuda.is_available():
        with pytest.raises(RuntimeError, match=r"cannot allocate on device 'cuda:0'.*CUDA is not available"):
            minitorch.zeros(2, device="cuda")


# ------------------------------------------------------------------ layers do not promote ----
# A float64 NumPy array fed to a float32 model would otherwise run every layer after it in
# float64 (twice the cost) without a word. PyTorch refuses these too; elementwise ops promote.

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(("da", "db"), [("float64", "float32"), ("float32", "float64"), ("int64", "float32"),
                                        ("float32", "int64")])
def test_matmul_refuses_mixed_dtypes(device, da, db):
    a = minitorch.ones(2, 3, dtype=getattr(minitorch, da), device=device)
    b = minitorch.ones(3, 4, dtype=getattr(minitorch, db), device=device)
    pattern = esc(f"matmul: expected both arguments to have the same dtype, got {da} (shape (2, 3)) and {db} "
                  "(shape (3, 4))")
    for call in (lambda: a @ b, lambda: minitorch.matmul(a, b), lambda: a.matmul(b)):
        with pytest.raises(TypeError, match=pattern) as info:
            call()
        assert isinstance(info.value, minitorch.DTypeError) and isinstance(info.value, RuntimeError)
    with pytest.raises(TypeError, match="same dtype"):  # vector forms too
        a[0] @ b[:, 0]


@pytest.mark.parametrize("device", DEVICES)
def test_matmul_same_dtype_still_works(device):
    for dt in (minitorch.float32, minitorch.float64, minitorch.int64):
        out = minitorch.ones(2, 3, dtype=dt, device=device) @ minitorch.ones(3, 4, dtype=dt, device=device)
        assert out.dtype == dt and out.tolist() == [[3, 3, 3, 3]] * 2


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("bias", [True, False])
def test_linear_refuses_float64_input(device, bias):
    lin = minitorch.nn.Linear(3, 2, bias=bias).to(device)
    x = minitorch.tensor(np.ones((4, 3)), device=device)  # NumPy's default dtype: float64
    assert x.dtype == minitorch.float64
    names = "input (float64), weight (float32) and bias (float32)" if bias else "input (float64) and weight (float32)"
    with pytest.raises(TypeError, match=esc(f"linear: {names} must have the same dtype. Convert the input with "
                                            ".to(minitorch.float32); NumPy arrays are float64")):
        lin(x)
    with pytest.raises(TypeError, match="linear: input"):
        minitorch.nn.functional.linear(x, lin.weight, lin.bias)
    assert lin(x.float()).dtype == minitorch.float32
    assert lin.double()(x).dtype == minitorch.float64  # a float64 model takes float64 input


@pytest.mark.parametrize("device", DEVICES)
def test_linear_refuses_mismatched_bias(device):
    w = minitorch.ones(2, 3, device=device)
    b = minitorch.ones(2, dtype=minitorch.float64, device=device)
    with pytest.raises(TypeError, match=esc("linear: input (float32), weight (float32) and bias (float64) must")):
        minitorch.nn.functional.linear(minitorch.ones(4, 3, device=device), w, b)


@pytest.mark.parametrize("device", DEVICES)
def test_conv2d_refuses_float64_input(device):
    conv = minitorch.nn.Conv2d(1, 2, 3).to(device)
    x = minitorch.tensor(np.ones((1, 1, 5, 5)), device=device)
    with pytest.raises(TypeError, match=esc("conv2d: input (float64), weight (float32) and bias (float32) must have "
                                            "the same dtype. Convert the input with .to(minitorch.float32)")):
        conv(x)
    assert conv(x.float()).shape == (1, 2, 3, 3)


@pytest.mark.parametrize("device", DEVICES)
def test_elementwise_ops_still_promote(device):
    a = minitorch.ones(2, device=device)
    assert (a + minitorch.ones(2, dtype=minitorch.float64, device=device)).dtype == minitorch.float64


# ------------------------------------------------------------------ in-place ops and gradients ----
# copy_ from a source that requires grad is recorded (as in PyTorch): the gradient reaches it.

@pytest.mark.parametrize("device", DEVICES)
def test_copy_from_a_source_that_requires_grad(device):
    z = minitorch.zeros(2, device=device)
    w = minitorch.ones(2, device=device, requires_grad=True)
    z.copy_(w)
    assert z.requires_grad and z.tolist() == [1.0, 1.0]
    (z * 3).sum().backward()
    assert w.grad.tolist() == [3.0, 3.0]
    z2 = minitorch.zeros(2, device=device)
    with minitorch.no_grad():  # no gradient wanted: a plain copy
        z2.copy_(w)
    assert not z2.requires_grad


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("op, dz, dw", [("add_", 1.0, 1.0), ("sub_", 1.0, -1.0), ("mul_", 3.0, 2.0),
                                        ("div_", 1 / 3, -2 / 9)])
def test_inplace_with_a_source_that_requires_grad_records_it(device, op, dz, dw):
    """z.add_(w) with w requiring grad: z joins the graph, as in PyTorch (z = 2, w = 3)."""
    x = minitorch.full((2,), 2.0, device=device, requires_grad=True)
    w = minitorch.full((2,), 3.0, device=device, requires_grad=True)
    z = x * 1
    assert getattr(z, op)(w) is z and z.requires_grad and not z.is_leaf
    z.sum().backward()
    assert x.grad.tolist() == pytest.approx([dz, dz]) and w.grad.tolist() == pytest.approx([dw, dw])
    plain = minitorch.zeros(2, device=device)  # a tensor outside any graph joins it too
    plain.add_(w)
    assert plain.grad_fn is not None and plain.tolist() == [3.0, 3.0]


def test_inplace_with_a_plain_source_still_works():
    z = minitorch.zeros(2)
    z.add_(minitorch.ones(2))
    z.mul_(3.0)
    assert z.tolist() == [3.0, 3.0]
