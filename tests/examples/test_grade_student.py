"""Grader for Exercise 3: ``Sigmoid`` and ``Linear`` as autograd Functions, and ``softmax``.

Grades ``student_solution.py`` beside this file, or the file named by the
``STUDENT_SOLUTION`` environment variable:

    STUDENT_SOLUTION=submissions/alice.py python -m pytest tests/examples -q

Each ``check_*`` function takes the solution module and raises ``AssertionError`` (or
``GradcheckError``) when the submission is wrong; each ``test_*`` function is one
line of the score sheet (``POINTS``). The last section runs the same checks against
``buggy_solution.py`` and two hand-made cheats and asserts that they FAIL, so we know
the grader can fail.

docs/grading.md explains the choices (seeds, tolerances, hidden shapes, float64 gradcheck).
"""
from __future__ import annotations

import contextlib
import importlib.util
import os
import types
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitorch
import minitorch.nn.functional as F
from minitorch.autograd import Function
from minitorch.autograd.function import FunctionCtx
from minitorch.testing import GradcheckError, assert_close, gradcheck

HERE = Path(__file__).resolve().parent

# Points per test; a score sheet sums the passing ones (see docs/grading.md).
POINTS = {
    "test_sigmoid_is_a_function": 1,
    "test_sigmoid_forward": 2,
    "test_sigmoid_grad_fn_is_students": 1,
    "test_sigmoid_gradcheck": 3,
    "test_linear_forward": 2,
    "test_linear_error_message": 1,
    "test_linear_grad_fn_is_students": 1,
    "test_linear_backward_shapes": 2,
    "test_linear_gradcheck": 3,
    "test_softmax_forward": 2,
    "test_softmax_hidden_shapes": 2,
    "test_softmax_large_inputs": 1,
    "test_softmax_bad_dim": 1,
    "test_softmax_gradcheck": 2,
    "test_no_builtin_ops": 2,
    "test_gradients_match_builtin_ops": 2,
    "test_mixes_with_builtin_ops": 2,
}


# ------------------------------------------------------------ loading a solution ----

def load_solution(path, name: str = "submission") -> types.ModuleType:
    """Imports a Python file as a module without touching ``sys.path``."""
    path = Path(path).resolve()
    if not path.is_file():
        raise FileNotFoundError(f"no solution file at {path}")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


STUDENT_PATH = Path(os.environ.get("STUDENT_SOLUTION") or HERE / "student_solution.py")


@pytest.fixture(scope="module")
def student() -> types.ModuleType:
    return load_solution(STUDENT_PATH, "graded_submission")


# ------------------------------------------------------------------- helpers ----

def rng(seed: int) -> np.random.Generator:
    """Every random input comes from a seeded generator: same inputs on every run."""
    return np.random.default_rng(seed)


def make(arr, layout: str = "contiguous", requires_grad: bool = False) -> minitorch.Tensor:
    """``arr`` as a tensor (same dtype) laid out as asked:

    "contiguous"; "transpose" (a reversed-dims copy permuted back, ``.T``-style
    strides); "step" (the values at every other position of the last dim of a
    bigger tensor: stride 2).
    """
    arr = np.asarray(arr)
    if layout == "contiguous" or arr.ndim == 0:
        t = minitorch.tensor(arr)
    elif layout == "transpose":
        rev = tuple(reversed(range(arr.ndim)))
        t = minitorch.tensor(np.ascontiguousarray(arr.transpose(rev))).permute(*rev)
    elif layout == "step":
        big = np.full(arr.shape[:-1] + (2 * arr.shape[-1],), 77, dtype=arr.dtype)
        big[..., ::2] = arr
        t = minitorch.tensor(big)[(slice(None),) * (arr.ndim - 1) + (slice(None, None, 2),)]
    else:
        raise ValueError(layout)
    np.testing.assert_array_equal(t.numpy(), arr)  # the helper itself must be right
    if requires_grad:
        t.requires_grad_(True)
    return t


def np_sigmoid(x):
    return 1.0 / (1.0 + np.exp(-np.asarray(x, dtype=np.float64)))


def np_softmax(x, dim):
    x = np.asarray(x, dtype=np.float64)
    e = np.exp(x - x.max(axis=dim, keepdims=True))
    return e / e.sum(axis=dim, keepdims=True)


def call(what: str, fn, *args):
    """Runs student code; a crash becomes an AssertionError that says what crashed."""
    try:
        return fn(*args)
    except AssertionError:
        raise
    except Exception as e:  # noqa: BLE001 - any crash in student code is a failed check
        raise AssertionError(f"{what} raised {type(e).__name__}: {e}") from e


def check_gradients(what: str, fn, inputs) -> None:
    """float64 gradcheck; a crash inside the student's backward fails the check too."""
    for i, x in enumerate(inputs):
        if isinstance(x, minitorch.Tensor) and x.requires_grad:
            assert x.dtype == minitorch.float64, f"grader bug: input {i} must be float64"
    try:
        gradcheck(fn, inputs)
    except GradcheckError as e:
        raise GradcheckError(f"{what}: {e}") from e
    except Exception as e:  # noqa: BLE001
        raise AssertionError(f"{what}: forward/backward raised {type(e).__name__}: {e}") from e


def graph_names(t: minitorch.Tensor) -> list[str]:
    """Names of every node in the backward graph of ``t``."""
    names, stack, seen = [], [t.grad_fn], {}
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen[id(node)] = node  # keeps the node alive, so its id is not reused
        names.append(node.name())
        stack.extend(fn for fn, _ in node.next_functions)
    return names


class UsedBuiltin(AssertionError):
    pass


@contextlib.contextmanager
def builtins_forbidden():
    """Makes the built-in sigmoid/linear/softmax raise while student code runs."""
    targets = [(minitorch.Tensor, "sigmoid"), (minitorch, "sigmoid"), (minitorch._C, "sigmoid"), (F, "sigmoid"),
               (F, "linear"), (minitorch._C, "_linear"),
               (F, "softmax"), (F, "log_softmax"), (minitorch._C, "_softmax"), (minitorch._C, "_log_softmax")]
    saved = [(obj, name, getattr(obj, name)) for obj, name in targets if hasattr(obj, name)]

    def forbid(name):
        def fn(*args, **kwargs):
            raise UsedBuiltin(f"the solution called the built-in {name}; the exercise asks you to write it")
        return fn

    try:
        for obj, name, _ in saved:
            setattr(obj, name, forbid(name))
        yield
    finally:
        for obj, name, orig in saved:
            setattr(obj, name, orig)


# Hidden cases: students never see these. They include size-1 dims, 0-d and 1-D
# tensors, a bias broadcast over more than one leading dim, and bias=None.
SIGMOID_SHAPES = [(), (1,), (7,), (3, 1), (1, 5), (2, 3, 4), (2, 1, 3, 2)]
LINEAR_CASES = [  # (x shape, out_features, with bias)
    ((4, 3), 2, True),
    ((1, 1), 1, True),
    ((5,), 3, True),
    ((2, 3, 4), 5, True),
    ((3, 1, 2), 1, True),
    ((4, 3), 2, False),
]
SOFTMAX_CASES = [((5,), 0), ((5,), -1), ((3, 4), 1), ((3, 4), 0), ((2, 3, 4), 1), ((2, 3, 4), -1), ((1, 1), 0),
                 ((4, 1, 3), 1), ((4, 1, 3), -2)]


def linear_inputs(seed, x_shape, out_features, with_bias, dtype=np.float32, layout="contiguous",
                  requires_grad=False):
    r = rng(seed)
    in_features = x_shape[-1]
    x = r.uniform(-1, 1, x_shape).astype(dtype)
    w = r.uniform(-1, 1, (out_features, in_features)).astype(dtype)
    b = r.uniform(-1, 1, (out_features,)).astype(dtype) if with_bias else None
    tx = make(x, layout, requires_grad)
    tw = make(w, requires_grad=requires_grad)
    tb = None if b is None else make(b, requires_grad=requires_grad)
    expected = x.astype(np.float64) @ w.astype(np.float64).T + (0.0 if b is None else b)
    return (tx, tw, tb), expected


# ------------------------------------------------------------------- sigmoid ----

def check_sigmoid_is_a_function(m) -> None:
    assert isinstance(m.Sigmoid, type) and issubclass(m.Sigmoid, Function), \
        "Sigmoid must be a subclass of minitorch.autograd.Function"


def check_sigmoid_forward(m) -> None:
    for k, shape in enumerate(SIGMOID_SHAPES):
        x = rng(k).uniform(-6, 6, shape).astype(np.float32)
        for layout in ("contiguous", "transpose", "step"):
            y = call("Sigmoid.apply", m.Sigmoid.apply, make(x, layout))
            assert y.dtype == minitorch.float32, f"float32 in, {y.dtype} out"
            assert_close(y, np_sigmoid(x).astype(np.float32), msg=f"Sigmoid forward, shape {shape}, {layout}")
    # Large inputs must not give nan (exp overflows to inf; 1 / inf = 0 is fine).
    x = np.array([-100.0, -30.0, 0.0, 30.0, 100.0], dtype=np.float32)
    y = call("Sigmoid.apply", m.Sigmoid.apply, make(x))
    assert_close(y, np_sigmoid(x).astype(np.float32), msg="Sigmoid forward, large |x|")
    y64 = call("Sigmoid.apply", m.Sigmoid.apply, make(x.astype(np.float64)))
    assert y64.dtype == minitorch.float64, f"float64 in, {y64.dtype} out"


def check_sigmoid_grad_fn(m) -> None:
    x = make(rng(1).uniform(-2, 2, (3, 4)), requires_grad=True)
    y = call("Sigmoid.apply", m.Sigmoid.apply, x)
    name = y.grad_fn.name() if y.grad_fn is not None else None
    assert name == "SigmoidBackward", (
        f"the result's grad_fn is {name}; expected SigmoidBackward (your Function). "
        "SigmoidBackward0 means the built-in sigmoid was used")


def check_sigmoid_gradcheck(m) -> None:
    for k, (shape, layout) in enumerate([((5,), "contiguous"), ((3, 4), "contiguous"), ((2, 1, 3), "contiguous"),
                                         ((3, 4), "transpose"), ((2, 3), "step")]):
        x = make(rng(10 + k).uniform(-3, 3, shape), layout, requires_grad=True)
        assert layout == "contiguous" or not x.is_contiguous()
        check_gradients(f"Sigmoid, shape {shape}, {layout}", m.Sigmoid.apply, (x,))


# -------------------------------------------------------------------- linear ----

def check_linear_forward(m) -> None:
    for k, (x_shape, out_f, with_bias) in enumerate(LINEAR_CASES):
        for layout in ("contiguous", "transpose"):
            args, expected = linear_inputs(20 + k, x_shape, out_f, with_bias, layout=layout)
            y = call("Linear.apply", m.Linear.apply, *args)
            assert y.dtype == minitorch.float32, f"float32 in, {y.dtype} out"
            assert_close(y, expected.astype(np.float32),
                         msg=f"Linear forward, x {x_shape}, out_features {out_f}, bias {with_bias}, {layout}")


def check_linear_error_message(m) -> None:
    x, w, b = make(np.ones((4, 3), np.float32)), make(np.ones((2, 5), np.float32)), make(np.ones(2, np.float32))
    try:
        m.Linear.apply(x, w, b)
    except ValueError as e:
        msg = str(e)
    except Exception as e:  # noqa: BLE001
        raise AssertionError(f"expected ValueError, got {type(e).__name__}: {e}") from e
    else:
        raise AssertionError("Linear accepted x with 3 features and a weight expecting 5")
    assert msg.startswith("Linear:") and "3" in msg and "5" in msg, \
        f"the message must start with 'Linear:' and name both feature counts (3 and 5); got {msg!r}"


def check_linear_grad_fn(m) -> None:
    (x, w, b), _ = linear_inputs(2, (4, 3), 2, True, dtype=np.float64, requires_grad=True)
    y = call("Linear.apply", m.Linear.apply, x, w, b)
    name = y.grad_fn.name() if y.grad_fn is not None else None
    assert name == "LinearBackward", f"the result's grad_fn is {name}; expected LinearBackward (your Function)"


def check_linear_backward_shapes(m) -> None:
    """Calls forward and backward directly, as the engine would, and checks what comes back."""
    for k, (x_shape, out_f, with_bias) in enumerate(LINEAR_CASES):
        for needs in ((True, True, with_bias), (False, True, with_bias)):
            (x, w, b), expected = linear_inputs(30 + k, x_shape, out_f, with_bias, dtype=np.float64)
            ctx = FunctionCtx()
            ctx.needs_input_grad = needs
            with minitorch.no_grad():
                call("Linear.forward", m.Linear.forward, ctx, x, w, b)
                grad = make(rng(40 + k).uniform(-1, 1, expected.shape))
                grads = call("Linear.backward", m.Linear.backward, ctx, grad)
            case = f"x {x_shape}, out_features {out_f}, bias {with_bias}, needs_input_grad {needs}"
            assert isinstance(grads, tuple) and len(grads) == 3, \
                f"backward must return 3 gradients (x, weight, bias), got {grads!r} [{case}]"
            for name, g, a, needed in zip(("x", "weight", "bias"), grads, (x, w, b), needs):
                if a is None or not needed:
                    assert g is None or (a is not None and tuple(g.shape) == tuple(a.shape)), \
                        f"gradient for {name} must be None or shaped like {name} [{case}]"
                    continue
                assert isinstance(g, minitorch.Tensor), f"gradient for {name} is {g!r} [{case}]"
                assert tuple(g.shape) == tuple(a.shape), \
                    f"gradient for {name} has shape {tuple(g.shape)}, {name} has {tuple(a.shape)} [{case}]"


def check_linear_gradcheck(m) -> None:
    cases = [(c, "contiguous") for c in LINEAR_CASES] + [(((3, 4), 2, True), "transpose"),
                                                         (((2, 3, 2), 3, True), "step")]
    for k, ((x_shape, out_f, with_bias), layout) in enumerate(cases):
        args, _ = linear_inputs(50 + k, x_shape, out_f, with_bias, np.float64, layout, requires_grad=True)
        assert layout == "contiguous" or not args[0].is_contiguous()
        check_gradients(f"Linear, x {x_shape}, out_features {out_f}, bias {with_bias}, {layout}",
                        m.Linear.apply, args)
    # A weight stored transposed (non-contiguous) is common too.
    r = rng(60)
    x = make(r.uniform(-1, 1, (3, 4)), requires_grad=True)
    w = make(r.uniform(-1, 1, (2, 4)), "transpose", requires_grad=True)
    b = make(r.uniform(-1, 1, (2,)), requires_grad=True)
    assert not w.is_contiguous()
    check_gradients("Linear, non-contiguous weight", m.Linear.apply, (x, w, b))


# ------------------------------------------------------------------- softmax ----

def check_softmax_forward(m) -> None:
    for k, (shape, dim) in enumerate(SOFTMAX_CASES):
        x = rng(70 + k).uniform(-5, 5, shape).astype(np.float32)
        for layout in ("contiguous", "transpose"):
            y = call("softmax", m.softmax, make(x, layout), dim)
            assert y.dtype == minitorch.float32, f"float32 in, {y.dtype} out"
            assert_close(y, np_softmax(x, dim).astype(np.float32), msg=f"softmax, shape {shape}, dim {dim}, {layout}")


def check_softmax_hidden_shapes(m) -> None:
    """Property test: hypothesis draws shapes, a dim and values (derandomized, so
    every run grades the same examples)."""

    @settings(max_examples=30, deadline=None, derandomize=True, database=None, report_multiple_bugs=False,
              suppress_health_check=[HealthCheck.too_slow])
    @given(data=st.data())
    def run(data):
        shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=5), label="shape")
        dim = data.draw(st.integers(-len(shape), len(shape) - 1), label="dim")
        x = data.draw(hnp.arrays(np.float32, shape, elements=st.floats(-20, 20, width=32)), label="x")
        y = call("softmax", m.softmax, make(x), dim)
        assert_close(y, np_softmax(x, dim).astype(np.float32), msg=f"softmax, shape {shape}, dim {dim}")

    run()


def check_softmax_large_inputs(m) -> None:
    x = np.array([[1000.0, 1001.0, 1002.0], [-1000.0, 0.0, 1000.0], [-1e4, -1e4, -1e4]], dtype=np.float32)
    y = call("softmax", m.softmax, make(x), 1)
    assert np.isfinite(y.numpy()).all(), f"softmax overflowed: {y.numpy()} (subtract the max first)"
    assert_close(y, np_softmax(x, 1).astype(np.float32), msg="softmax of large inputs")


def check_softmax_bad_dim(m) -> None:
    # Not pytest.raises: its "DID NOT RAISE" is pytest's Failed, not an AssertionError,
    # and the self-tests below expect every failed check to raise AssertionError.
    try:
        m.softmax(make(np.zeros((2, 3), np.float32)), 2)
    except IndexError as e:
        assert "dim" in str(e), f"the IndexError should say which dim is wrong: {e}"
    except Exception as e:  # noqa: BLE001
        raise AssertionError(f"softmax(x, dim=2) of a 2-D x: expected IndexError, got {type(e).__name__}: {e}") from e
    else:
        raise AssertionError("softmax(x, dim=2) of a 2-D x did not raise IndexError")


def check_softmax_gradcheck(m) -> None:
    cases = [((5,), -1, "contiguous"), ((3, 4), 1, "contiguous"), ((3, 4), 0, "contiguous"),
             ((2, 3, 2), 1, "contiguous"), ((3, 4), 1, "transpose"), ((2, 4), 0, "step")]
    for k, (shape, dim, layout) in enumerate(cases):
        x = make(rng(80 + k).uniform(-2, 2, shape), layout, requires_grad=True)
        check_gradients(f"softmax, shape {shape}, dim {dim}, {layout}", lambda t, d=dim: m.softmax(t, d), (x,))


# -------------------------------------------------------- not the built-in op ----

def check_no_builtin_ops(m) -> None:
    """Two ways: the graph has no node of the built-in op, and the built-ins raise
    if they are called while the student's code runs."""
    x = make(rng(90).uniform(-1, 1, (3, 4)), requires_grad=True)
    w = make(rng(91).uniform(-1, 1, (2, 4)), requires_grad=True)
    b = make(rng(92).uniform(-1, 1, (2,)), requires_grad=True)
    builtin = {"SigmoidBackward0", "LinearBackward0", "SoftmaxBackward0", "LogSoftmaxBackward0"}
    with builtins_forbidden():
        outs = {"Sigmoid": m.Sigmoid.apply(x), "Linear": m.Linear.apply(x, w, b), "softmax": m.softmax(x, 1)}
        for what, out in outs.items():
            used = builtin.intersection(graph_names(out))
            assert not used, f"{what} used the built-in op (its graph has {sorted(used)})"
            out.sum().backward()  # the student's backward may not call them either


# ------------------------------------------------ together with built-in ops ----

def check_gradients_match_builtin(m) -> None:
    """A small network written with the student's ops and with the built-ins: the
    same loss and the same gradients for every parameter (float64)."""
    r = rng(100)
    values = [r.uniform(-1, 1, s) for s in [(6, 3), (4, 3), (4,), (5, 4), (5,)]]
    target = r.uniform(0, 1, (6, 5))

    def run(sigmoid, linear, softmax):
        x, w1, b1, w2, b2 = (make(v, requires_grad=True) for v in values)
        p = softmax(linear(sigmoid(linear(x, w1, b1)), w2, b2), -1)
        loss = ((p - make(target)) ** 2).sum()
        loss.backward()
        return loss, [t.grad for t in (x, w1, b1, w2, b2)]

    loss, grads = run(m.Sigmoid.apply, m.Linear.apply, m.softmax)
    ref_loss, ref_grads = run(minitorch.sigmoid, F.linear, F.softmax)
    assert_close(loss, ref_loss, msg="loss")
    for name, g, ref in zip(("x", "w1", "b1", "w2", "b2"), grads, ref_grads):
        assert g is not None, f"no gradient reached {name}"
        assert_close(g, ref, msg=f"gradient of {name}")


def check_mixes_with_builtin_ops(m) -> None:
    """50 steps of SGD on a tiny regression (Linear -> Sigmoid -> Linear, MSE from
    built-in ops): the loss must at least halve."""
    minitorch.manual_seed(0)  # the initial weights
    r = rng(110)
    x_np = r.uniform(-2, 2, (64, 3)).astype(np.float32)
    y_np = (np.sin(x_np[:, :1]) + 0.5 * x_np[:, 1:2] - 0.3 * x_np[:, 2:3]).astype(np.float32)
    x, y = make(x_np), make(y_np)
    params = [minitorch.nn.Parameter(minitorch.randn(*s) * 0.5) for s in [(16, 3), (16,), (1, 16), (1,)]]
    opt = minitorch.optim.SGD(params, lr=0.5)
    w1, b1, w2, b2 = params
    losses = []
    for _ in range(50):
        pred = m.Linear.apply(m.Sigmoid.apply(m.Linear.apply(x, w1, b1)), w2, b2)
        loss = ((pred - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert np.isfinite(losses).all(), f"loss became {losses[-1]}"
    assert losses[-1] < 0.5 * losses[0], f"loss went from {losses[0]:.4f} to {losses[-1]:.4f} in 50 steps"


# -------------------------------------------------- the tests (the score sheet) ----

def test_sigmoid_is_a_function(student):
    check_sigmoid_is_a_function(student)


def test_sigmoid_forward(student):
    check_sigmoid_forward(student)


def test_sigmoid_grad_fn_is_students(student):
    check_sigmoid_grad_fn(student)


def test_sigmoid_gradcheck(student):
    check_sigmoid_gradcheck(student)


def test_linear_forward(student):
    check_linear_forward(student)


def test_linear_error_message(student):
    check_linear_error_message(student)


def test_linear_grad_fn_is_students(student):
    check_linear_grad_fn(student)


def test_linear_backward_shapes(student):
    check_linear_backward_shapes(student)


def test_linear_gradcheck(student):
    check_linear_gradcheck(student)


def test_softmax_forward(student):
    check_softmax_forward(student)


def test_softmax_hidden_shapes(student):
    check_softmax_hidden_shapes(student)


def test_softmax_large_inputs(student):
    check_softmax_large_inputs(student)


def test_softmax_bad_dim(student):
    check_softmax_bad_dim(student)


def test_softmax_gradcheck(student):
    check_softmax_gradcheck(student)


def test_no_builtin_ops(student):
    check_no_builtin_ops(student)


def test_gradients_match_builtin_ops(student):
    check_gradients_match_builtin(student)


def test_mixes_with_builtin_ops(student):
    check_mixes_with_builtin_ops(student)


def test_points_cover_every_test():
    tests = {name for name in globals() if name.startswith("test_") and name not in _GRADER_SELF_TESTS}
    assert tests == set(POINTS), tests.symmetric_difference(POINTS)


# ------------------------------------------------ the grader can fail (self-test) ----
# Every check above is run here against a solution that must FAIL it: the buggy
# submission beside this file, and small "mutants" of the reference solution, each
# with one deliberate mistake. A check that no mutant fails could be a check that
# never fails.

_GRADER_SELF_TESTS = {"test_points_cover_every_test", "test_grader_fails_buggy_solution",
                      "test_grader_gives_buggy_solution_partial_credit", "test_grader_fails_mutant"}


@pytest.fixture(scope="module")
def buggy() -> types.ModuleType:
    return load_solution(HERE / "buggy_solution.py", "buggy_solution")


@pytest.mark.parametrize("check", [
    check_sigmoid_gradcheck,         # BUG 1
    check_linear_error_message,      # BUG 2a
    check_linear_backward_shapes,    # BUG 2b, 2c (1-D and 3-D inputs)
    check_linear_gradcheck,          # BUG 2b, 2c
    check_softmax_large_inputs,      # BUG 3
    check_gradients_match_builtin,   # BUG 1
], ids=lambda f: f.__name__)
def test_grader_fails_buggy_solution(buggy, check):
    with pytest.raises((AssertionError, GradcheckError)):
        check(buggy)


@pytest.mark.parametrize("check", [
    check_sigmoid_is_a_function, check_sigmoid_forward, check_sigmoid_grad_fn,
    check_linear_forward, check_linear_grad_fn,
    check_softmax_forward, check_softmax_hidden_shapes, check_softmax_bad_dim, check_softmax_gradcheck,
    check_no_builtin_ops,
], ids=lambda f: f.__name__)
def test_grader_gives_buggy_solution_partial_credit(buggy, check):
    check(buggy)  # the forward passes are right: one bug must not cost every point


def _mutant(**factories) -> types.ModuleType:
    """The reference solution with some names replaced: ``name=factory``, where
    ``factory(original)`` gets the original object and returns the replacement."""
    module = load_solution(HERE / "student_solution.py", "reference_solution")
    for name, factory in factories.items():
        setattr(module, name, factory(getattr(module, name)))
    return module


def _builtin_cheat():
    """Right values and gradients, but straight from the built-in ops (no Functions)."""
    return _mutant(Sigmoid=lambda _: type("Sigmoid", (), {"apply": staticmethod(lambda x: x.sigmoid())}),
                   Linear=lambda _: type("Linear", (), {"apply": staticmethod(F.linear)}),
                   softmax=lambda _: F.softmax)


def _cheat_inside_forward():
    """A real Function, but its forward calls the built-in sigmoid."""
    class Sigmoid(Function):
        @staticmethod
        def forward(ctx, x):
            s = x.sigmoid()
            ctx.save_for_backward(s)
            return s

        @staticmethod
        def backward(ctx, grad):
            (s,) = ctx.saved_tensors
            return grad * s * (1 - s)
    return _mutant(Sigmoid=lambda _: Sigmoid)


def _sigmoid_sign_error():
    class Sigmoid(Function):
        @staticmethod
        def forward(ctx, x):
            s = 1 / (1 + x.exp())  # exp(x) instead of exp(-x)
            ctx.save_for_backward(s)
            return s

        @staticmethod
        def backward(ctx, grad):
            (s,) = ctx.saved_tensors
            return -grad * s * (1 - s)
    return _mutant(Sigmoid=lambda _: Sigmoid)


def _linear_forgets_bias():
    def make_linear(base):
        class Linear(base):
            @staticmethod
            def forward(ctx, x, weight, bias):
                return base.forward(ctx, x, weight, None)
        return Linear
    return _mutant(Linear=make_linear)


def _linear_weight_grad_missing_grad():
    def make_linear(base):
        class Linear(base):
            @staticmethod
            def backward(ctx, grad):  # the weight's gradient ignores the incoming gradient
                gx, _, gb = base.backward(ctx, grad)
                return gx, base.backward(ctx, minitorch.ones_like(grad))[1], gb
        return Linear
    return _mutant(Linear=make_linear)


def _linear_no_learning():
    def make_linear(base):
        class Linear(base):
            @staticmethod
            def backward(ctx, grad):  # every gradient zero: nothing can learn
                return tuple(None if g is None else g * 0 for g in base.backward(ctx, grad))
        return Linear
    return _mutant(Linear=make_linear)


def _softmax_ignores_dim():
    return _mutant(softmax=lambda softmax: (lambda x, dim: softmax(x, -1)))


def _softmax_detached_sum():
    def softmax(x, dim):
        e = (x - x.detach().max(dim=dim, keepdim=True).values).exp()
        return e / e.sum(dim=dim, keepdim=True).detach()  # the sum's gradient is lost
    return _mutant(softmax=lambda _: softmax)


@pytest.mark.parametrize("mutant, check", [
    (_builtin_cheat, check_sigmoid_is_a_function),
    (_builtin_cheat, check_sigmoid_grad_fn),
    (_builtin_cheat, check_linear_grad_fn),
    (_builtin_cheat, check_no_builtin_ops),
    (_cheat_inside_forward, check_no_builtin_ops),
    (_sigmoid_sign_error, check_sigmoid_forward),
    (_linear_forgets_bias, check_linear_forward),
    (_linear_forgets_bias, check_linear_gradcheck),
    (_linear_weight_grad_missing_grad, check_linear_gradcheck),
    (_linear_weight_grad_missing_grad, check_gradients_match_builtin),
    (_linear_no_learning, check_mixes_with_builtin_ops),
    (_softmax_ignores_dim, check_softmax_forward),
    (_softmax_ignores_dim, check_softmax_hidden_shapes),
    (_softmax_ignores_dim, check_softmax_bad_dim),
    (_softmax_detached_sum, check_softmax_gradcheck),
], ids=lambda f: f.__name__.lstrip("_"))
def test_grader_fails_mutant(mutant, check):
    with pytest.raises((AssertionError, GradcheckError)):
        check(mutant())
