"""What the zoo programs share: NumPy-drawn weights and data, so that PyTorch and
minitorch start from the very same numbers."""
from __future__ import annotations

import zlib

import numpy as np


def init_weights(torch, model, seed: int = 0, dtype: str = "float32"):
    """Replaces every floating tensor of ``model.state_dict()`` by NumPy draws (each named
    entry from its own seeded generator, so the order of the entries does not matter):
    parameter matrices and kernels uniform in +-1/sqrt(fan_in), biases uniform in +-0.1, 1-D weights
    (norm layers) near 1, running means 0 and variances 1, weight norm's g near 1, spectral norm's u and v
    random unit vectors; other buffers are kept."""
    state = {}
    params = {name for name, _ in model.named_parameters()}
    for name, value in model.state_dict().items():
        stat = name.endswith("running_mean") or name.endswith("running_var")
        power = name.endswith("._u") or name.endswith("._v")  # spectral_norm's power-iteration vectors
        if not value.dtype.is_floating_point or (name not in params and not stat and not power):
            state[name] = value  # e.g. a positional-encoding table, num_batches_tracked
            continue
        shape = tuple(value.shape)
        rng = np.random.default_rng([seed, zlib.crc32(name.encode())])
        if name.endswith("running_mean"):
            a = np.zeros(shape)
        elif name.endswith("running_var"):
            a = np.ones(shape)
        elif power:
            a = rng.standard_normal(shape)
            a /= np.linalg.norm(a)
        elif name.endswith("_g") or name.endswith("original0"):  # weight norm's g
            a = 1.0 + rng.uniform(-0.1, 0.1, shape)
        elif len(shape) >= 2:
            bound = 1.0 / np.sqrt(int(np.prod(shape[1:])))
            a = rng.uniform(-bound, bound, shape)
        elif name.endswith("weight"):
            a = 1.0 + rng.uniform(-0.1, 0.1, shape)
        else:
            a = rng.uniform(-0.1, 0.1, shape)
        state[name] = torch.tensor(a.astype(dtype))
    model.load_state_dict(state)
    return model


def data(shape, seed: int, low: float = -1.0, high: float = 1.0, dtype: str = "float32"):
    """A NumPy array, uniform in [low, high)."""
    return np.random.default_rng(seed).uniform(low, high, shape).astype(dtype)


def labels(shape, classes: int, seed: int):
    return np.random.default_rng(seed).integers(0, classes, shape).astype(np.int64)
