"""Checking results, for tests and for graders: ``assert_close``, ``gradcheck`` and
``check_kernel``.

    minitorch.testing.assert_close(student_out, expected)        # diff report on failure
    minitorch.testing.gradcheck(MySigmoid.apply, (x,))            # x: float64, requires_grad
    minitorch.testing.check_kernel(kernel, launch, make_inputs, reference)   # a RawKernel, every schedule
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from . import _C
from ._tensor_str import _shape_str

# PyTorch's default tolerances per dtype: (rtol, atol).
_TOLERANCES = {"float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7), "int64": (0.0, 0.0), "bool": (0.0, 0.0),
               "int32": (0.0, 0.0), "int16": (0.0, 0.0), "int8": (0.0, 0.0), "uint8": (0.0, 0.0)}


def _to_numpy(x) -> np.ndarray:
    if isinstance(x, _C.Tensor):
        return x.detach().cpu().numpy()
    return np.asarray(x)


def assert_close(actual, expected, *, rtol: float | None = None, atol: float | None = None,
                 equal_nan: bool = False, check_dtype: bool = True, msg: str | None = None) -> None:
    """Raises AssertionError unless ``|actual - expected| <= atol + rtol * |expected|`` everywhere.

    Accepts tensors, NumPy arrays, lists and numbers. Default tolerances follow the
    dtype (float32: rtol 1.3e-6, atol 1e-5; float64: 1e-7, 1e-7; integers: exact).
    The message reports how many elements differ and the worst ones, with their index.
    """
    a, e = _to_numpy(actual), _to_numpy(expected)
    prefix = f"{msg}\n\n" if msg else ""
    if a.shape != e.shape:
        raise AssertionError(f"{prefix}The values for attribute 'shape' do not match: {_shape_str(a.shape)} != "
                             f"{_shape_str(e.shape)}.")
    if check_dtype and isinstance(actual, _C.Tensor) and isinstance(expected, _C.Tensor) and actual.dtype != expected.dtype:
        raise AssertionError(f"{prefix}The values for attribute 'dtype' do not match: {actual.dtype} != {expected.dtype}.")
    dt = a.dtype.name if a.dtype.name in _TOLERANCES else "float64"
    default_rtol, default_atol = _TOLERANCES[dt]
    rtol = default_rtol if rtol is None else rtol
    atol = default_atol if atol is None else atol
    a64, e64 = a.astype(np.float64), e.astype(np.float64)
    close = np.isclose(a64, e64, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if close.all():
        return
    n_bad, n = int((~close).sum()), close.size
    with np.errstate(invalid="ignore", divide="ignore"):
        abs_diff = np.abs(a64 - e64)
        rel_diff = abs_diff / np.abs(e64)
    abs_diff = np.where(close, 0.0, np.nan_to_num(abs_diff, nan=np.inf))
    rel_diff = np.where(close, 0.0, np.nan_to_num(rel_diff, nan=np.inf))
    ia = np.unravel_index(int(np.argmax(abs_diff)), a.shape) if a.ndim else ()
    ir = np.unravel_index(int(np.argmax(rel_diff)), a.shape) if a.ndim else ()
    raise AssertionError(
        f"{prefix}Tensor-likes are not close!\n\n"
        f"Mismatched elements: {n_bad} / {n} ({100.0 * n_bad / n:.1f}%)\n"
        f"Greatest absolute difference: {abs_diff[ia]} at index {tuple(int(i) for i in ia)} "
        f"(actual {a64[ia]}, expected {e64[ia]}; up to {atol} allowed)\n"
        f"Greatest relative difference: {rel_diff[ir]} at index {tuple(int(i) for i in ir)} (up to {rtol} allowed)"
    )


class GradcheckError(RuntimeError):
    """The analytic and numerical Jacobians disagree."""


def _outputs(fn, inputs):
    out = fn(*inputs)
    return out if isinstance(out, tuple) else (out,)


def _output_values(fn, inputs, k) -> np.ndarray:
    from . import autograd

    with autograd.no_grad():
        return _outputs(fn, inputs)[k].detach().cpu().numpy().astype(np.float64).reshape(-1)


def _perturbable(x):
    """A NumPy array of ``x``'s values and a ``write_back()`` that makes ``x`` hold them.

    On the CPU the array *is* ``x``'s memory (write_back does nothing); on another
    device it is a host copy, and write_back copies it over ``x``'s storage.
    """
    base = x.detach()  # shares x's storage, so writes reach x without autograd seeing them
    if base.device.type == "cpu":
        return base.numpy(), lambda: None
    arr = base.cpu().numpy().copy()
    return arr, lambda: base.copy_(_C._from_numpy_copy(arr, base.dtype, None))


def gradcheck(fn, inputs, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True) -> bool:
    """Compares every element of the analytic Jacobian (from backward) with central
    finite differences ``(f(x + eps) - f(x - eps)) / (2 eps)``.

    ``inputs`` is a tensor or a tuple; tensors with ``requires_grad=True`` are checked
    and must be float64 (float32 is too coarse for finite differences). Returns True,
    or raises :class:`GradcheckError` naming the worst element.
    """
    from . import autograd

    inputs = (inputs,) if isinstance(inputs, _C.Tensor) else tuple(inputs)
    wrt = [i for i, x in enumerate(inputs) if isinstance(x, _C.Tensor) and x.requires_grad]
    if not wrt:
        raise ValueError("gradcheck: no input has requires_grad=True")
    for i in wrt:
        if inputs[i].dtype != _C.dtype.float64:
            raise TypeError(f"gradcheck: input {i} is {inputs[i].dtype}; use float64 inputs (x.double()) — "
                            "finite differences in float32 are too inaccurate")

    outputs = _outputs(fn, inputs)
    for k in range(len(outputs)):
        # A fresh graph per later output: perturbing a cuda input for the previous
        # output wrote into its memory, which the old graph would (rightly) refuse.
        out = (outputs if k == 0 else _outputs(fn, inputs))[k]
        out_np = out.detach().cpu().numpy().reshape(-1)
        # Analytic: one backward per output element, with a one-hot gradient.
        analytic = {i: np.zeros((out_np.size, inputs[i].numel())) for i in wrt}
        if out.requires_grad:
            for j in range(out_np.size):
                onehot = np.zeros(out_np.size)
                onehot[j] = 1.0
                g = _C._from_numpy_copy(onehot.reshape(tuple(out.shape)), out.dtype, out.device)
                grads = autograd.grad(out, [inputs[i] for i in wrt], grad_outputs=g, retain_graph=True,
                                      allow_unused=True)
                for i, gi in zip(wrt, grads):
                    if gi is not None:
                        analytic[i][j] = gi.cpu().numpy().reshape(-1)
        # Numerical: nudge each input element both ways, in the input's own memory.
        for i in wrt:
            numerical = np.zeros_like(analytic[i])
            arr, write_back = _perturbable(inputs[i])
            for e in range(arr.size):
                orig = arr.flat[e]
                arr.flat[e] = orig + eps
                write_back()
                plus = _output_values(fn, inputs, k)
                arr.flat[e] = orig - eps
                write_back()
                minus = _output_values(fn, inputs, k)
                arr.flat[e] = orig
                write_back()
                numerical[:, e] = (plus - minus) / (2 * eps)
            bad = np.abs(analytic[i] - numerical) > atol + rtol * np.abs(numerical)
            if bad.any():
                err = np.where(bad, np.abs(analytic[i] - numerical), -1.0)
                j, e = np.unravel_index(int(np.argmax(err)), err.shape)
                message = (
                    f"gradcheck: Jacobian mismatch for output {k} with respect to input {i} "
                    f"({int(bad.sum())} of {bad.size} elements differ); worst at output element {j}, "
                    f"input element {e}: analytic {analytic[i][j, e]:.6g}, numerical {numerical[j, e]:.6g}"
                )
                if raise_exception:
                    raise GradcheckError(message)
                return False
    return True


# ----------------------------------------------------------------- CUDA kernels

DEFAULT_SCHEDULES = ("forward", "reverse", "random:1", "random:2")


@dataclass(frozen=True)
class KernelCheck:
    """What :func:`check_kernel` ran, when every run was right.

    Attributes:
        kernel: the kernel's name.
        schedules: the emulator schedules it ran under; ``()`` on a real GPU, which has none.
        trials: launches per schedule (on a real GPU: launches), each with fresh inputs.
        max_abs_error: the largest ``|got - expected|`` over every output and run.
        emulated: whether the kernel ran in the CUDA emulator.
        note: what the check could not see (on a real GPU: the thread order).
        counters: in the emulator, what the first run did with memory
            (:class:`minitorch.cuda.KernelCounters`: global requests and sectors,
            coalescing, bank conflicts, divergent branches, barriers, atomics) in one more
            run once every run was right; else None.
    """

    kernel: str
    schedules: tuple[str, ...]
    trials: int
    max_abs_error: float
    emulated: bool
    note: str = ""
    counters: Any = None

    def __str__(self) -> str:
        runs = f"{self.trials} run(s)" if not self.emulated else \
            f"{len(self.schedules)} schedule(s) ({', '.join(self.schedules)}) x {self.trials} run(s)"
        text = f"{self.kernel}: right in {runs}; max |error| {self.max_abs_error:.3g}"
        if self.counters is not None:
            text += "\ncounted in the first run: " + str(self.counters).partition(": ")[2]
        return f"{text}\n{self.note}" if self.note else text


def _compiled_kernel(kernel):
    """The RawKernel to check: `kernel` itself, or what the zero-argument callable
    `kernel` builds (so that a compile error becomes a failed check, with the log)."""
    from .cuda import CompileError, RawKernel

    if isinstance(kernel, RawKernel):
        return kernel
    if not callable(kernel):
        raise TypeError(f"check_kernel: kernel must be a minitorch.cuda.RawKernel or a function that builds one, "
                        f"got {type(kernel).__name__}")
    try:
        built = kernel()
    except CompileError as err:
        raise AssertionError(f"the kernel did not compile:\n{err.log}") from err
    except (ValueError, TypeError) as err:  # e.g. no __global__ function of that name
        raise AssertionError(f"building the kernel failed: {err}") from err
    if not isinstance(built, RawKernel):
        raise TypeError(f"check_kernel: the kernel factory returned {type(built).__name__}, not a RawKernel")
    return built


def _device_arg(value):
    """A kernel argument: arrays (and tensors) become contiguous "cuda" tensors of their
    own; numbers are passed as they are."""
    if isinstance(value, _C.Tensor):
        return value.detach().contiguous().cuda().clone()
    if isinstance(value, np.ndarray):
        from . import from_numpy

        return from_numpy(np.ascontiguousarray(value)).cuda()
    return value


def _expected_outputs(reference, inputs: dict, outputs: tuple[str, ...]) -> dict:
    """reference(**inputs) as {output name: array}: it may return one array (one output),
    a tuple with one array per output, or a dict by name."""
    got = reference(**{k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in inputs.items()})
    if isinstance(got, Mapping):
        missing = [name for name in outputs if name not in got]
        if missing:
            raise ValueError(f"check_kernel: the reference returned no value for output(s) {missing}")
        values = [got[name] for name in outputs]
    elif len(outputs) == 1:
        values = [got]
    else:
        if not isinstance(got, (tuple, list)) or len(got) != len(outputs):
            raise ValueError(f"check_kernel: the reference must return {len(outputs)} arrays, one per output "
                             f"{list(outputs)} (or a dict by name)")
        values = list(got)
    expected = {}
    for name, value in zip(outputs, values):
        value = np.asarray(value)
        shape = np.shape(inputs[name])
        if value.shape != shape:
            raise ValueError(f"check_kernel: the reference's value for output '{name}' has shape "
                             f"{_shape_str(value.shape)}, the output has {_shape_str(shape)}")
        expected[name] = value
    return expected


def _index_str(flat: int, shape: tuple) -> str:
    if len(shape) <= 1:
        return f"flat index {flat}"
    return f"flat index {flat}, index {tuple(int(i) for i in np.unravel_index(flat, shape))}"


def check_kernel(kernel, launch, make_inputs: Callable[[np.random.Generator], dict], reference: Callable[..., Any],
                 *, outputs: str | Sequence[str] = "out", schedules: Sequence[str] = DEFAULT_SCHEDULES,
                 trials: int = 1, rtol: float | None = None, atol: float | None = None,
                 seed: int = 0, counters: bool = True) -> KernelCheck:
    """Runs a RawKernel under every emulator schedule, with fresh inputs each time, and
    checks its outputs against a NumPy reference.

    A kernel that is right under one thread order and wrong under another is missing a
    ``__syncthreads()``; the emulator's reports (a barrier some threads skipped, a
    deadlock) fail the check too, even when the numbers came out right. On a real GPU
    there are no schedules: each trial runs once, and the result says so.

    Example::

        N = 256
        check_kernel(
            kernel,                                        # a RawKernel, or lambda: RawKernel(src, name)
            launch=(N // 64, 64),                          # (grid, block[, shared_mem]), or a function of the args
            make_inputs=lambda rng: {"x": rng.standard_normal(N, dtype=np.float32),
                                     "out": np.zeros(N, np.float32), "n": np.int32(N)},
            reference=lambda x, n, out: np.cumsum(x),      # the expected "out"
        )

    Args:
        kernel: a ``minitorch.cuda.RawKernel``, or a function of no arguments that builds
            one; with a function, a ``CompileError`` fails the check with the compiler's log.
        launch: ``(grid, block)`` or ``(grid, block, shared_mem)``, or a function that takes
            the arguments (a dict of "cuda" tensors and numbers) and returns that tuple.
        make_inputs: ``make_inputs(rng)`` returns the kernel's arguments in order, as a dict
            name -> NumPy array (passed as a "cuda" tensor of its own) or number (passed
            as it is: ``np.int32(n)`` for an ``int``). Output buffers are arguments too.
            ``rng`` is a ``np.random.Generator``, seeded differently for every run.
        reference: ``reference(**inputs)`` gets the same values as NumPy arrays and numbers
            and returns the expected output: one array, a tuple with one per name in
            `outputs`, or a dict by name. Compute it in float64.
        outputs: the name(s) of the arguments the kernel writes and that are checked.
        schedules: emulator schedules to try, in order ("forward", "reverse", "random:SEED", "warps",
            "warps-reverse").
        trials: runs per schedule, each with new inputs.
        rtol, atol: as in :func:`assert_close`; the defaults follow the output's dtype
            (float32: 1.3e-6 and 1e-5). Loosen them for long sums.
        seed: makes the inputs of every run different (and the same on every call).
        counters: in the emulator, once every run was right, run the kernel once more
            (inputs of the first run, first schedule) counting its memory requests, sectors,
            bank conflicts, divergent branches, barriers and atomics (this compiles it once
            more, instrumented); they come back as the result's ``counters``.

    Returns:
        A :class:`KernelCheck`: the schedules run and the largest error.

    Raises:
        AssertionError: on the first run that is wrong, naming the schedule, the output,
            the first wrong element (flat and multi-dimensional index), expected and got,
            and how many elements differ; or with the emulator's report, the compiler's
            log, or the error the launch raised.
    """
    __tracebackhide__ = True  # pytest shows the grader's line and the message, not this function
    from . import cuda

    if trials < 1:
        raise ValueError(f"check_kernel: trials must be at least 1, got {trials}")
    # The schedules are checked on every machine, so a grader's mistake shows on a laptop and on a GPU alike.
    schedule_runs = [cuda.emulator_schedule(s) for s in schedules]
    if not schedule_runs:
        raise ValueError("check_kernel: give at least one schedule")
    if not cuda.is_available():
        try:
            cuda.emulate(True)  # no GPU: the kernel runs in the emulator
        except RuntimeError as e:
            raise RuntimeError(f"check_kernel: there is no CUDA device to run kernels on ({e})") from None
    outputs = (outputs,) if isinstance(outputs, str) else tuple(outputs)
    emulated = cuda.is_emulated()
    runs = schedule_runs if emulated else [None]  # a GPU has no schedule to choose
    kernel = _compiled_kernel(kernel)
    name = kernel.name
    passed: list[str] = []
    max_abs = 0.0
    first_inputs: dict = {}
    for s, schedule in enumerate(runs):
        for trial in range(trials):
            where = f"under schedule '{schedule.spec}'" if schedule else "on the GPU"
            if trials > 1:
                where += f" (run {trial + 1} of {trials})"
            inputs = make_inputs(np.random.default_rng([seed, s, trial]))
            if not isinstance(inputs, Mapping):
                raise TypeError(f"check_kernel: make_inputs must return a dict of the kernel's arguments by name, "
                                f"got {type(inputs).__name__}")
            inputs = dict(inputs)
            first_inputs = first_inputs if s or trial else inputs  # for the counted run at the end
            unknown = [o for o in outputs if o not in inputs]
            if unknown:
                raise ValueError(f"check_kernel: output(s) {unknown} are not among the arguments {list(inputs)}")
            expected = _expected_outputs(reference, inputs, outputs)
            args = {k: _device_arg(v) for k, v in inputs.items()}
            config = launch(args) if callable(launch) else launch
            if not isinstance(config, (tuple, list)) or len(config) not in (2, 3):
                raise TypeError(f"check_kernel: launch must be (grid, block) or (grid, block, shared_mem), "
                                f"got {config!r}")
            grid, block, shared_mem = (*config, 0)[:3]

            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                before = cuda.emulator_diagnostics()
                try:
                    if schedule is None:
                        kernel(grid, block, tuple(args.values()), shared_mem=shared_mem)
                    else:
                        with schedule:
                            kernel(grid, block, tuple(args.values()), shared_mem=shared_mem)
                except Exception as err:
                    raise AssertionError(f"{name}: the launch {where} raised {type(err).__name__}: {err}") from err
                reports = cuda.emulator_diagnostics() - before
            others = [w for w in caught if not (w.category is RuntimeWarning and "CUDA emulator" in str(w.message))]
            for w in others:  # not ours to swallow
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
            if reports:
                text = "\n".join(str(w.message) for w in caught if w not in others)
                raise AssertionError(f"{name}: the CUDA emulator reported a problem {where}. On a GPU this is "
                                     f"undefined behaviour, even where the numbers come out right:\n{text}")

            for out in outputs:
                got = args[out].cpu().numpy() if isinstance(args[out], _C.Tensor) else np.asarray(args[out])
                want = expected[out]
                dt = got.dtype.name if got.dtype.name in _TOLERANCES else "float64"
                r = _TOLERANCES[dt][0] if rtol is None else rtol
                a = _TOLERANCES[dt][1] if atol is None else atol
                g64, w64 = got.astype(np.float64), want.astype(np.float64)
                close = np.isclose(g64, w64, rtol=r, atol=a)
                with np.errstate(invalid="ignore"):
                    diff = np.abs(g64 - w64)
                if close.all():
                    max_abs = max(max_abs, float(diff.max(initial=0.0)))
                    continue
                bad = ~close.ravel()
                first = int(np.argmax(bad))
                message = (f"{name}: output '{out}' is wrong {where}: {int(bad.sum())} of {bad.size} elements differ "
                           f"(rtol={r:g}, atol={a:g}).\n"
                           f"First wrong element at {_index_str(first, got.shape)}: expected {w64.flat[first]:.6g}, "
                           f"got {g64.flat[first]:.6g}.")
                if passed:
                    message += (f"\nIt was right under {', '.join(repr(p) for p in passed)}: an answer that depends "
                                f"on the order in which a block's threads run usually means a missing "
                                f"__syncthreads() between writing shared memory and reading it.")
                raise AssertionError(message)
        if schedule is not None:
            passed.append(schedule.spec)
    note = "" if emulated else ("ran on a real GPU, where the hardware picks the order of the threads: no "
                                "schedules were tried, so a missing __syncthreads() can go unnoticed here; "
                                "run the check in the emulator as well")
    counted = None
    if emulated and counters:
        args = {k: _device_arg(v) for k, v in first_inputs.items()}
        config = launch(args) if callable(launch) else launch
        grid, block, shared_mem = (*config, 0)[:3]
        with schedule_runs[0], cuda.emulator_counters() as counting:
            kernel(grid, block, tuple(args.values()), shared_mem=shared_mem)
        counted = counting.launches[-1] if counting.launches else None
    return KernelCheck(name, tuple(passed), trials, max_abs, emulated, note, counted)
