"""The device and generator calls scripts make: cuda.current_device / set_device / device /
device_of / init / is_initialized / is_bf16_supported, cuda.manual_seed(_all) / seed /
initial_seed / get_rng_state_all, the deprecated memory_cached names, and random.fork_rng,
with CUDA (the emulator or a GPU) and without it."""
from __future__ import annotations

import pytest

import minitorch
from conftest import CUDA_SKIP_REASON

cuda = minitorch.cuda


def test_generator_calls_without_cuda_are_ignored_or_explained():
    if cuda.is_available():
        pytest.skip("this process has CUDA")
    cuda.manual_seed(1)  # silently ignored, as PyTorch's
    cuda.manual_seed_all(1)
    cuda.seed()
    assert not cuda.is_bf16_supported() and not cuda.is_initialized()
    assert cuda.get_rng_state_all() == []  # one per device: none (checkpoints save it on CPU machines)
    with pytest.raises(RuntimeError, match="current_device"):
        cuda.current_device()
    with pytest.raises(RuntimeError, match="initial_seed"):
        cuda.initial_seed()


@pytest.mark.skipif(not cuda.is_available(), reason=CUDA_SKIP_REASON)
def test_device_calls():
    assert cuda.current_device() == 0 and cuda.is_initialized()
    cuda.init()
    for d in (0, "cuda", "cuda:0", minitorch.device("cuda:0"), -1):
        cuda.set_device(d)
    with pytest.raises(ValueError, match="one CUDA device"):
        cuda.set_device(1)
    with pytest.raises(ValueError, match="Expected a cuda device"):
        cuda.set_device("cpu")
    with cuda.device(0):
        x = minitorch.ones(2, device="cuda")
    with cuda.device_of(x), cuda.device_of(minitorch.ones(1)), cuda.device(None):
        pass
    assert isinstance(cuda.is_bf16_supported(), bool)
    with pytest.warns(FutureWarning, match="memory_reserved"):
        assert cuda.memory_cached() == cuda.memory_reserved()
    with pytest.warns(FutureWarning, match="max_memory_reserved"):
        cuda.max_memory_cached()
    cuda.ipc_collect()


@pytest.mark.skipif(not cuda.is_available(), reason=CUDA_SKIP_REASON)
def test_cuda_generator_seeding():
    cuda.manual_seed_all(7)
    a = minitorch.rand(4, device="cuda")
    cuda.manual_seed(7)
    assert cuda.initial_seed() == 7
    assert (minitorch.rand(4, device="cuda") == a).all().item()
    minitorch.manual_seed(7)  # the global seed reaches "cuda" the same way
    assert (minitorch.rand(4, device="cuda") == a).all().item()
    states = cuda.get_rng_state_all()
    b = minitorch.rand(3, device="cuda")
    cuda.set_rng_state_all(states)
    assert (minitorch.rand(3, device="cuda") == b).all().item()
    cuda.seed_all()
    fresh = cuda.initial_seed()
    assert isinstance(fresh, int) and 0 <= fresh < 2**63


def test_fork_rng_restores_the_generators(device):
    minitorch.manual_seed(3)
    with minitorch.random.fork_rng():
        minitorch.rand(10, device=device)
        minitorch.manual_seed(99)
        minitorch.rand(3, device=device)
    after = minitorch.rand(4, device=device)
    minitorch.manual_seed(3)
    assert (minitorch.rand(4, device=device) == after).all().item()
    assert minitorch.initial_seed() == 3
    with minitorch.random.fork_rng(enabled=False):
        minitorch.rand(1)
