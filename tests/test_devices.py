"""The same computation on "cuda" and on the CPU must agree: values AND gradients, for
every kernel family, every backward, nn layers and a short training run. Skipped
with a reason when minitorch has no CUDA device (the emulator provides one).
Also: moving between devices, mixing devices, and the memory API."""
import numpy as np
import pytest

import minitorch
from conftest import CUDA_SKIP_REASON

F = minitorch.nn.functional
pytestmark = pytest.mark.skipif(not minitorch.cuda.is_available(), reason=CUDA_SKIP_REASON)

rng = np.random.default_rng(0)
A = rng.standard_normal((3, 4))
B = rng.standard_normal((4, 5))
V = rng.standard_normal(4)
POS = rng.uniform(0.5, 2.0, (3, 4))
IMG = rng.standard_normal((2, 3, 6, 5))
W = rng.standard_normal((4, 3, 3, 2))
LOGITS = rng.standard_normal((5, 3)) * 3
LABELS = np.array([0, 2, 1, 1, 0])

CASES = {
    "add_broadcast": ((A, V), lambda a, v: a + v * 2.0),
    "sub_div_pow": ((POS, V), lambda a, v: (a - v) / (a ** 2 + 1.0)),
    "unary": ((A,), lambda a: a.exp().sigmoid() + a.tanh() - a.relu() + a.abs().sqrt() + (a.abs() + 1).log()),
    "max_min_where": ((A, V), lambda a, v: minitorch.where(a > 0, minitorch.maximum(a, v), minitorch.minimum(a, v))),
    "clamp": ((A,), lambda a: a.clamp(-0.5, 0.5) * 3),
    "sum_mean": ((A,), lambda a: a.sum(0) * a.mean(1, keepdim=True)),
    "max_dim": ((A,), lambda a: a.max(1, keepdim=True).values + a.min(0, keepdim=True).values),
    "max_all": ((A,), lambda a: a.max() * a),
    "matmul": ((A, B), lambda a, b: a @ b),
    "matmul_batched": ((IMG[:, :, :4, :4], B[:4, :4]), lambda x, b: (x @ b).sum(1)),
    "views": ((A,), lambda a: a.t().reshape(2, 6)[:, ::2].unsqueeze(0).expand(3, 2, 3).permute(2, 0, 1).flatten()),
    "index": ((A,), lambda a: a[minitorch.tensor([2, 0, 2]).to(a.device)] * a[1]),
    "linear": ((A, B.T), lambda x, w: F.linear(x, w)),
    "softmax": ((A,), lambda a: F.softmax(a, 1) + F.log_softmax(a, 0)),
    "cross_entropy": ((LOGITS,), lambda z: F.cross_entropy(z, minitorch.tensor(LABELS).to(z.device))),
    "conv2d": ((IMG, W), lambda x, w: F.conv2d(x, w, stride=(2, 1), padding=1)),
    "pools": ((IMG,), lambda x: F.max_pool2d(x, 2, padding=1).sum() + F.avg_pool2d(x, 3, 2, 1).sum()),
}


@pytest.mark.parametrize("name", list(CASES))
def test_cuda_matches_cpu_values_and_gradients(name):
    arrays, fn = CASES[name]
    results = {}
    for device in ("cpu", "cuda"):
        xs = [minitorch.tensor(a, dtype=minitorch.float64, device=device, requires_grad=True) for a in arrays]
        out = fn(*xs)
        assert out.device.type == device
        g = minitorch.tensor(np.linspace(-1, 1, max(out.numel(), 1)).reshape(tuple(out.shape)), dtype=out.dtype,
                             device=device)
        out.backward(g)
        results[device] = (out.detach().cpu().numpy(), [x.grad.cpu().numpy() for x in xs])
    np.testing.assert_allclose(results["cuda"][0], results["cpu"][0], rtol=1e-10, atol=1e-12)
    for gc, gg in zip(results["cpu"][1], results["cuda"][1]):
        np.testing.assert_allclose(gg, gc, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dtype", [minitorch.float32, minitorch.int64, minitorch.bool])
def test_round_trip_and_casts(dtype):
    x = minitorch.tensor(rng.integers(0, 3, (3, 4))).to(dtype)
    y = x.cuda()
    assert y.device == minitorch.device("cuda") and y.is_cuda
    np.testing.assert_array_equal(y.cpu().numpy(), x.numpy())
    np.testing.assert_array_equal(y.t().contiguous().cpu().numpy(), x.numpy().T)
    np.testing.assert_array_equal(y.double().cpu().numpy(), x.numpy().astype(np.float64))
    assert "device='cuda:0'" in repr(y)


def test_creation_on_cuda():
    # Random fills run on the GPU (counter-based stream): reproducible per seed, and a
    # second fill continues the stream rather than repeating it.
    minitorch.manual_seed(3)
    a, a2 = minitorch.randn(4, 5, device="cuda"), minitorch.randn(4, 5, device="cuda")
    minitorch.manual_seed(3)
    b = minitorch.randn(4, 5, device="cuda")
    assert a.device.type == "cuda"
    np.testing.assert_array_equal(a.cpu().numpy(), b.cpu().numpy())
    assert not np.array_equal(a.cpu().numpy(), a2.cpu().numpy())
    np.testing.assert_array_equal(minitorch.eye(3, device="cuda").cpu().numpy(), np.eye(3))
    np.testing.assert_array_equal(minitorch.arange(5, device="cuda").cpu().numpy(), np.arange(5))
    assert minitorch.zeros(2, device="cuda").sum().item() == 0.0


def test_mixing_devices_is_a_clear_error():
    with pytest.raises(RuntimeError, match="same device"):
        minitorch.ones(3) + minitorch.ones(3, device="cuda")
    with pytest.raises(RuntimeError, match="device"):
        minitorch.ones(2, 3) @ minitorch.ones(3, 2, device="cuda")
    with pytest.raises(TypeError, match="cpu"):
        minitorch.ones(3, device="cuda").numpy()


def test_module_to_cuda_trains():
    minitorch.manual_seed(0)
    model = minitorch.nn.Sequential(minitorch.nn.Linear(6, 8), minitorch.nn.ReLU(), minitorch.nn.Linear(8, 3)).to("cuda")
    assert all(p.device.type == "cuda" for p in model.parameters())
    opt = minitorch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = minitorch.randn(32, 6, device="cuda")
    y = (x[:, 0] > 0).long() + (x[:, 1] > 0).long()
    losses = []
    for _ in range(30):
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]


def test_memory_api_and_out_of_memory():
    minitorch.cuda.empty_cache()
    before = minitorch.cuda.memory_allocated()
    x = minitorch.empty(1024, 1024, device="cuda")
    assert minitorch.cuda.memory_allocated() >= before + 4 * 1024 * 1024
    assert minitorch.cuda.max_memory_allocated() >= minitorch.cuda.memory_allocated()
    del x
    assert minitorch.cuda.memory_allocated() == before
    with pytest.raises(minitorch.cuda.OutOfMemoryError, match="out of memory") as info:
        minitorch.empty(2**40, device="cuda")  # 4 TiB
    assert isinstance(info.value, MemoryError) and isinstance(info.value, RuntimeError)
    assert minitorch.ones(3, device="cuda").sum().item() == 3.0  # still usable
    minitorch.cuda.synchronize()


@pytest.mark.parametrize("impl", ["naive", "tiled"])
def test_gpu_matmul_implementations(impl):
    a, b = rng.standard_normal((2, 33, 17)), rng.standard_normal((17, 20))
    with minitorch.backends.cuda.use_matmul(impl):
        c = minitorch.tensor(a, device="cuda") @ minitorch.tensor(b, device="cuda")
    np.testing.assert_allclose(c.cpu().numpy(), a @ b, rtol=1e-5, atol=1e-5)


def test_bad_index_on_cuda_is_reported_at_the_next_synchronization():
    # A kernel checks the indices on the GPU (no copy back per op); the host reads its
    # record when it waits for the GPU anyway: a device-to-host copy or synchronize().
    x = minitorch.arange(6.0, device="cuda").reshape(3, 2)
    rows = x[minitorch.tensor([0, 5], device="cuda")]
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension with size 3"):
        rows.cpu()
    rows.cpu()  # reported once; the process stays usable
    logits = minitorch.zeros(2, 3, device="cuda")
    loss = F.cross_entropy(logits, minitorch.tensor([1, 3], device="cuda"))
    with pytest.raises(IndexError, match=r"target 3 is out of bounds for 3 classes \(at index 1\)"):
        minitorch.cuda.synchronize()
    ok = F.cross_entropy(logits, minitorch.tensor([1, -100], device="cuda"))  # ignore_index is allowed
    assert abs(ok.item() - np.log(3)) < 1e-6 and loss.shape == ()
    # Negative indices count from the end, as on the CPU.
    np.testing.assert_array_equal(x[minitorch.tensor([-1, 0], device="cuda")].cpu().numpy(), [[4, 5], [0, 1]])


def test_cpu_scalars_and_cpu_indices_meet_cuda_tensors():
    # As in PyTorch: a 0-dim CPU tensor combines with a tensor on any device (its
    # gradient goes back to the CPU), and a CPU index tensor may index a cuda tensor.
    x = minitorch.ones(3, device="cuda", requires_grad=True)
    s = minitorch.tensor(2.0, requires_grad=True)
    (x * s + s).sum().backward()
    assert x.grad.device.type == "cuda" and s.grad.device.type == "cpu"
    assert s.grad.item() == 6.0 and x.grad.cpu().numpy().tolist() == [2.0, 2.0, 2.0]
    y = minitorch.zeros(3, device="cuda")
    y += minitorch.tensor(1.5)
    assert y.cpu().numpy().tolist() == [1.5, 1.5, 1.5]
    assert x.detach()[minitorch.tensor([2, 0])].device.type == "cuda"
    with pytest.raises(RuntimeError, match="same device"):
        minitorch.ones(3, device="cuda") + minitorch.ones(1)  # 1-D, not a scalar


@pytest.mark.parametrize("model_name", ["mlp", "cnn"])
def test_a_training_step_never_waits_for_the_gpu(model_name):
    # Forward, cross_entropy, backward, optimizer step, all on cuda: the host must not
    # wait for the GPU once (no copy back to check a label, count, or index).
    nn = minitorch.nn
    if model_name == "mlp":
        model, shape = nn.Sequential(nn.Flatten(), nn.Linear(64, 32), nn.Sigmoid(), nn.Linear(32, 10)), (16, 64)
    else:
        model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Dropout(0.1),
                              nn.Flatten(), nn.Linear(4 * 4 * 4, 10))
        shape = (16, 1, 8, 8)
    model = model.to("cuda")
    opt = minitorch.optim.Adam(model.parameters(), lr=1e-2)
    x = minitorch.randn(*shape, device="cuda")
    y = minitorch.randint(0, 10, (16,), device="cuda")
    losses = []
    for _ in range(5):
        before = minitorch._C._cuda_host_waits()
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        assert minitorch._C._cuda_host_waits() == before
        losses.append(loss)
    assert losses[-1].item() < losses[0].item()  # .item() is a wait, and counted
    assert minitorch._C._cuda_host_waits() > before
