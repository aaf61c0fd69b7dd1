"""``minitorch.utils.summary`` on the lectures' CNN, and ``minitorch.backends.cpu.matmul``
switching between the naive, blocked and BLAS kernels.

The summary's numbers are checked for a model on every device (the table must not
depend on it); its bookkeeping (training flags, hooks, grad mode) runs on the CPU,
and the matmul kernels are the CPU backend's."""
from __future__ import annotations

import subprocess
import sys
import zlib

import numpy as np
import pytest

import minitorch
from minitorch import nn
from minitorch.testing import assert_close
from minitorch.utils import LayerInfo, Summary, summary

INPUT = (64, 1, 28, 28)


def lecture_cnn() -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(784, 10),
    )


# What every row must say, worked out by hand (N = 64).
EXPECTED = [  # name, kind, output shape, params, MACs
    ("0", "Conv2d", (64, 8, 28, 28), 8 * 1 * 9 + 8, 64 * 8 * 28 * 28 * (1 * 3 * 3)),
    ("1", "ReLU", (64, 8, 28, 28), 0, 64 * 8 * 28 * 28),
    ("2", "MaxPool2d", (64, 8, 14, 14), 0, 64 * 8 * 14 * 14 * 4),
    ("3", "Conv2d", (64, 16, 14, 14), 16 * 8 * 9 + 16, 64 * 16 * 14 * 14 * (8 * 3 * 3)),
    ("4", "ReLU", (64, 16, 14, 14), 0, 64 * 16 * 14 * 14),
    ("5", "MaxPool2d", (64, 16, 7, 7), 0, 64 * 16 * 7 * 7 * 4),
    ("6", "Flatten", (64, 784), 0, 0),
    ("7", "Linear", (64, 10), 784 * 10 + 10, 64 * 10 * 784),
]


@pytest.fixture(scope="module")
def cnn_summary(device) -> Summary:
    minitorch.manual_seed(0)
    return summary(lecture_cnn().to(device), INPUT, device=device)


def numel(shape) -> int:
    return int(np.prod(shape, dtype=np.int64))


# ------------------------------------------------------------------ the rows ----

def test_one_row_per_leaf_layer_in_order(cnn_summary):
    assert all(isinstance(layer, LayerInfo) for layer in cnn_summary.layers)
    assert [(layer.name, layer.kind) for layer in cnn_summary.layers] == [(n, k) for n, k, *_ in EXPECTED]


def test_output_shapes(cnn_summary):
    assert [tuple(layer.output_shape) for layer in cnn_summary.layers] == [e[2] for e in EXPECTED]


def test_param_counts(cnn_summary):
    params = [layer.params for layer in cnn_summary.layers]
    assert params == [80, 0, 0, 1168, 0, 0, 0, 7850] == [e[3] for e in EXPECTED]
    assert cnn_summary.total_params == 9098
    assert [layer.param_bytes for layer in cnn_summary.layers] == [4 * p for p in params]
    assert cnn_summary.total_param_bytes == 4 * 9098


def test_macs_of_conv_and_linear(cnn_summary):
    rows = {layer.name: layer for layer in cnn_summary.layers}
    assert rows["0"].flops == 64 * 8 * 28 * 28 * 9
    assert rows["3"].flops == 64 * 16 * 14 * 14 * 72
    assert rows["7"].flops == 64 * 10 * 784


def test_ops_of_the_other_layers_follow_the_docstring(cnn_summary):
    # ReLU: one op per element; MaxPool2d 2: 2x2 comparisons per output; Flatten: none.
    assert [layer.flops for layer in cnn_summary.layers] == [e[4] for e in EXPECTED]
    assert cnn_summary.total_flops == sum(e[4] for e in EXPECTED) == 19_769_344


def test_activation_bytes_are_float32_output_sizes(cnn_summary):
    assert [layer.activation_bytes for layer in cnn_summary.layers] == [4 * numel(e[2]) for e in EXPECTED]
    assert cnn_summary.total_activation_bytes == 4 * sum(numel(e[2]) for e in EXPECTED) == 5_622_272


def test_float64_input_counts_eight_bytes_per_element(device):
    model = nn.Sequential(nn.Linear(3, 4, dtype=minitorch.float64, device=device), nn.ReLU())
    s = summary(model, (5, 3), dtype=minitorch.float64, device=device)
    assert [layer.activation_bytes for layer in s.layers] == [8 * 5 * 4, 8 * 5 * 4]
    assert s.layers[0].param_bytes == 8 * (3 * 4 + 4)


def test_nested_modules_get_dotted_names():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(nn.Linear(6, 5), nn.ReLU())
            self.head = nn.Linear(5, 2)

        def forward(self, x):
            return self.head(self.features(x))

    s = summary(Net(), (3, 6))
    assert s.model_name == "Net"
    assert [(layer.name, layer.kind, tuple(layer.output_shape)) for layer in s.layers] == [
        ("features.0", "Linear", (3, 5)), ("features.1", "ReLU", (3, 5)), ("head", "Linear", (3, 2))]
    assert s.total_params == 6 * 5 + 5 + 5 * 2 + 2
    assert [layer.flops for layer in s.layers] == [3 * 5 * 6, 3 * 5, 3 * 2 * 5]


# ----------------------------------------------------------------- the table ----

def test_text_table_names_every_layer_and_the_totals(cnn_summary):
    text = str(cnn_summary)
    assert repr(cnn_summary) == text
    lines = text.splitlines()
    assert lines[0] == "Sequential, input (64, 1, 28, 28)"
    for name, kind, shape, params, _ in EXPECTED:
        row = next((line for line in lines if line.startswith(f"{name} ({kind})")), None)
        assert row is not None, f"no row for {name} ({kind}) in\n{text}"
        assert str(shape) in row and f"{params:,}" in row, row
    total = lines[-1].split("|")
    assert [c.strip() for c in total] == ["total", "", "9,098", "19.77M", "5.36 MiB", "35.54 KiB"], lines[-1]


def test_html_table(cnn_summary):
    html = cnn_summary._repr_html_()
    assert "<table>" in html and html.rstrip().endswith("</table>")
    assert html.count("<tr") == 1 + len(EXPECTED) + 1  # header, one per layer, total
    for name, kind, *_ in EXPECTED:
        assert f"<td>{name} ({kind})</td>" in html
    assert "<td>9,098</td>" in html and "<td>19.77M</td>" in html


# ------------------------------------------------------- inputs and side effects ----

@pytest.mark.parametrize("not_a_module", [lambda x: x, minitorch.zeros(2), "Sequential", None],
                         ids=["function", "tensor", "str", "None"])
def test_not_a_module_is_a_type_error(not_a_module):
    with pytest.raises(TypeError, match="summary: expected an nn.Module"):
        summary(not_a_module, (1, 3))


class Probe(nn.Module):
    """Records ``self.training``, the grad mode and the input's device at each forward;
    raises when asked to."""

    def __init__(self, fail: bool = False):
        super().__init__()
        self.seen, self.grad_mode, self.devices, self.fail = [], [], [], fail

    def forward(self, x):
        self.seen.append(self.training)
        self.grad_mode.append(minitorch.is_grad_enabled())
        self.devices.append(x.device)
        if self.fail:
            raise RuntimeError("forward failed")
        return x


@pytest.mark.parametrize("mode", [True, False], ids=["train", "eval"])
def test_training_flag_is_restored_and_forward_runs_in_eval(mode):
    probe = Probe()
    model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5), probe)
    model.train(mode)
    summary(model, (2, 4))
    assert probe.seen == [False], "summary must run the forward in eval mode"
    assert [m.training for m in model.modules()] == [mode] * 4


def test_mixed_training_flags_are_restored_module_by_module():
    # A partly frozen model: the backbone in eval mode, the head training.
    model = nn.Sequential(nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5)), nn.Linear(4, 2))
    model.train()
    model[0].eval()
    before = [m.training for m in model.modules()]
    summary(model, (2, 4))
    assert [m.training for m in model.modules()] == before


def test_training_flag_and_hooks_restored_when_forward_raises():
    probe = Probe(fail=True)
    model = nn.Sequential(nn.Linear(4, 4), probe)
    model.train()
    with pytest.raises(RuntimeError, match="forward failed"):
        summary(model, (2, 4))
    assert model.training and model[0].training and probe.training
    assert not any(m.__dict__.get("_forward_hooks") for m in model.modules()), "hooks left behind"


def test_forward_records_no_graph_and_grad_mode_comes_back():
    probe = Probe()
    summary(nn.Sequential(nn.Linear(4, 4), probe), (2, 4))
    assert probe.grad_mode == [False], "summary's forward should run under no_grad (no graph to keep)"
    assert minitorch.is_grad_enabled()


def test_model_on_a_device_runs_there_without_a_device_argument(device):
    # Like torchinfo: the input is made on the model's device, so summary(model, size)
    # works for a model moved to CUDA, and its rows are those of the same model on the CPU.
    probe = Probe()
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), probe).to(device)
    s = summary(model, (2, 4))
    assert probe.devices == [device]
    assert all(p.device == device for p in model.parameters())  # the model stays where it was
    on_cpu = summary(nn.Sequential(nn.Linear(4, 3), nn.ReLU(), Probe()), (2, 4))
    assert s.layers == on_cpu.layers and str(s) == str(on_cpu)


def test_no_hooks_left_and_no_gradients_after_summary():
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU())
    s = summary(model, (2, 4))
    rows = len(s.layers)
    out = model(minitorch.ones(2, 4))  # a leftover hook would add rows to s.layers
    assert len(s.layers) == rows == 2
    assert out.requires_grad  # the model itself still records gradients
    assert all(p.grad is None for p in model.parameters())


# ----------------------------------------------- backends.cpu.matmul switching ----

KERNELS = ["naive", "blocked", "blas"]


@pytest.fixture(autouse=True)
def restore_matmul_choice():
    prev = minitorch.backends.cpu.matmul
    yield
    minitorch.backends.cpu.matmul = prev


def strided(arr: np.ndarray, how: str) -> minitorch.Tensor:
    """``arr`` as a minitorch tensor: contiguous, a transposed view, or a stepped view."""
    if how == "contiguous":
        return minitorch.tensor(arr)
    if how == "T":  # the last two dims swapped in memory, swapped back as a view
        return minitorch.tensor(np.ascontiguousarray(np.swapaxes(arr, -1, -2))).transpose(-1, -2)
    if how == "step":
        big = np.zeros(arr.shape[:-1] + (2 * arr.shape[-1],), arr.dtype)
        big[..., ::2] = arr
        return minitorch.tensor(big)[(slice(None),) * (arr.ndim - 1) + (slice(None, None, 2),)]
    raise ValueError(how)


MATMUL_CASES = [  # a shape, b shape, a layout, b layout
    ((1, 1), (1, 1), "contiguous", "contiguous"),
    ((3, 5), (5, 4), "contiguous", "contiguous"),
    ((70, 65), (65, 67), "contiguous", "contiguous"),  # more than one cache tile each way
    ((33, 40), (40, 17), "T", "contiguous"),
    ((33, 40), (40, 17), "contiguous", "T"),
    ((33, 40), (40, 17), "T", "T"),
    ((9, 6), (6, 5), "step", "step"),
    ((4, 7, 6), (4, 6, 5), "contiguous", "contiguous"),   # batched
    ((2, 3, 7, 6), (6, 5), "contiguous", "T"),            # batch broadcast against a matrix
    ((3, 1, 7, 6), (2, 6, 5), "T", "contiguous"),         # batch dims broadcast
    ((6,), (6, 5), "contiguous", "contiguous"),           # vector @ matrix
    ((7, 6), (6,), "contiguous", "contiguous"),           # matrix @ vector
]


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("a_shape, b_shape, a_layout, b_layout", MATMUL_CASES,
                         ids=[f"{a}@{b}-{la}-{lb}" for a, b, la, lb in MATMUL_CASES])
def test_every_kernel_matches_numpy(kernel, a_shape, b_shape, a_layout, b_layout):
    r = np.random.default_rng(zlib.crc32(repr((a_shape, b_shape)).encode()))
    a_np = r.uniform(-1, 1, a_shape).astype(np.float32)
    b_np = r.uniform(-1, 1, b_shape).astype(np.float32)
    a, b = strided(a_np, a_layout), strided(b_np, b_layout)
    if a_layout != "contiguous":
        assert not a.is_contiguous()
    with minitorch.backends.cpu.use_matmul(kernel):
        assert minitorch.backends.cpu.matmul == kernel
        c = a @ b
    expected = a_np.astype(np.float64) @ b_np.astype(np.float64)
    assert c.dtype == minitorch.float32
    # float32 sums of up to 65 products of values in [-1, 1]: a few float32 ulps of K.
    assert_close(c, expected.astype(np.float32), rtol=1e-5, atol=1e-5 * a_shape[-1])


@pytest.mark.parametrize("kernel", KERNELS)
def test_every_kernel_float64_and_backward(kernel):
    r = np.random.default_rng(7)
    a_np, b_np, g_np = r.normal(size=(5, 8)), r.normal(size=(8, 3)), r.normal(size=(5, 3))
    a = minitorch.tensor(a_np, requires_grad=True)
    b = minitorch.tensor(b_np, requires_grad=True)
    with minitorch.backends.cpu.use_matmul(kernel):
        c = a @ b
        (c * minitorch.tensor(g_np)).sum().backward()  # backward's matmuls use the kernel too
    assert_close(c, a_np @ b_np, rtol=1e-12, atol=1e-12)
    assert_close(a.grad, g_np @ b_np.T, rtol=1e-12, atol=1e-12)
    assert_close(b.grad, a_np.T @ g_np, rtol=1e-12, atol=1e-12)


def test_kernels_agree_with_each_other():
    r = np.random.default_rng(3)
    a = minitorch.tensor(r.uniform(-1, 1, (2, 50, 70)).astype(np.float32))
    b = minitorch.tensor(r.uniform(-1, 1, (70, 45)).astype(np.float32)).T.contiguous().T
    results = {}
    for kernel in KERNELS:
        minitorch.backends.cpu.matmul = kernel
        assert minitorch.backends.cpu.matmul == kernel
        results[kernel] = (a @ b).numpy().copy()
    for kernel in ("naive", "blocked"):
        np.testing.assert_allclose(results[kernel], results["blas"], rtol=1e-5, atol=1e-4, err_msg=kernel)


def test_default_is_blas():
    # The choice is process-wide; the autouse fixture keeps tests from leaking theirs.
    assert minitorch.backends.cpu.matmul in KERNELS
    out = subprocess.run([sys.executable, "-c", "import minitorch; print(minitorch.backends.cpu.matmul)"],
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "blas"


@pytest.mark.parametrize("bad", ["fast", "BLAS", "", "cuda"])
def test_unknown_kernel_is_a_value_error_and_changes_nothing(bad):
    minitorch.backends.cpu.matmul = "blocked"
    with pytest.raises(ValueError, match="'naive', 'blocked' or 'blas'"):
        minitorch.backends.cpu.matmul = bad
    assert minitorch.backends.cpu.matmul == "blocked"
    with pytest.raises(ValueError):
        with minitorch.backends.cpu.use_matmul(bad):
            pytest.fail("the body must not run")
    assert minitorch.backends.cpu.matmul == "blocked"


def test_use_matmul_restores_the_previous_choice():
    minitorch.backends.cpu.matmul = "naive"
    with minitorch.backends.cpu.use_matmul("blocked"):
        assert minitorch.backends.cpu.matmul == "blocked"
        with minitorch.backends.cpu.use_matmul("blas"):
            assert minitorch.backends.cpu.matmul == "blas"
        assert minitorch.backends.cpu.matmul == "blocked"
    assert minitorch.backends.cpu.matmul == "naive"


def test_use_matmul_restores_the_previous_choice_when_the_body_raises():
    minitorch.backends.cpu.matmul = "naive"
    with pytest.raises(ZeroDivisionError):
        with minitorch.backends.cpu.use_matmul("blas"):
            assert minitorch.backends.cpu.matmul == "blas"
            1 / 0
    assert minitorch.backends.cpu.matmul == "naive"
    # An error from the op inside the body (a shape mismatch) is no different.
    with pytest.raises(ValueError, match="cannot be multiplied"):
        with minitorch.backends.cpu.use_matmul("blocked"):
            minitorch.ones(2, 3) @ minitorch.ones(4, 5)
    assert minitorch.backends.cpu.matmul == "naive"


def test_summary_counts_norms_buffers_and_attention():
    norm = nn.Sequential(nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4))
    rows = {r.name: r for r in summary(norm, (2, 1, 6, 6)).layers}
    assert rows["1"].flops == 2 * 2 * 4 * 4 * 4  # scale and shift per element
    assert rows["1"].param_bytes == (4 + 4 + 4 + 4) * 4 + 8  # weight, bias, running stats, num_batches_tracked

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.attn = nn.MultiheadAttention(16, 2, batch_first=True)

        def forward(self, x):
            return self.attn(x, x, x)[0]

    s = summary(Block(), (3, 5, 16))
    assert [(r.name, r.kind) for r in s.layers] == [("attn", "MultiheadAttention")]  # out_proj is part of it
    n, length, e = 3, 5, 16
    assert s.layers[0].flops == n * 4 * length * e * e + 2 * n * length * length * e
    assert s.layers[0].params == s.total_params == 4 * e * e + 4 * e
