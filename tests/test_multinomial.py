"""minitorch.multinomial / Tensor.multinomial: draws from the rows of a 1-D or 2-D weight
tensor, with and without replacement, reproducible under manual_seed, PyTorch's errors."""
from __future__ import annotations

import numpy as np
import pytest

import minitorch
from conftest import DEVICES


@pytest.mark.parametrize("device", DEVICES)
def test_frequencies_match_the_weights_with_replacement(device):
    minitorch.manual_seed(0)
    w = minitorch.tensor([1.0, 2.0, 0.0, 5.0], device=device)  # unnormalized, one impossible category
    draws = minitorch.multinomial(w, 20000, replacement=True)
    assert draws.dtype == minitorch.int64 and draws.shape == (20000,) and draws.device == w.device
    freq = np.bincount(draws.cpu().numpy(), minlength=4) / 20000
    assert freq[2] == 0
    np.testing.assert_allclose(freq, [1 / 8, 2 / 8, 0, 5 / 8], atol=0.015)


def test_without_replacement_never_repeats_and_first_draw_follows_the_weights():
    minitorch.manual_seed(1)
    w = minitorch.tensor([[0.1, 0.2, 0.3, 0.4]]).expand(4000, 4)
    draws = w.multinomial(3).numpy()
    assert draws.shape == (4000, 3)
    assert all(len(set(row)) == 3 for row in draws)
    np.testing.assert_allclose(np.bincount(draws[:, 0], minlength=4) / 4000, [0.1, 0.2, 0.3, 0.4], atol=0.025)
    # all of them: a permutation of the categories
    full = minitorch.multinomial(minitorch.tensor([0.5, 0.25, 0.25]), 3).numpy()
    assert sorted(full) == [0, 1, 2]


def test_zero_weight_categories_are_never_drawn_without_replacement():
    minitorch.manual_seed(2)
    draws = minitorch.multinomial(minitorch.tensor([[0.0, 1.0, 0.0, 3.0]]).expand(200, 4), 2).numpy()
    assert set(draws.ravel()) == {1, 3}


def test_manual_seed_and_generator_reproduce_the_draws():
    w = minitorch.rand(3, 5, dtype=minitorch.float64)
    minitorch.manual_seed(7)
    a = minitorch.multinomial(w, 4)
    minitorch.manual_seed(7)
    b = minitorch.multinomial(w, 4)
    assert minitorch.equal(a, b)
    g = minitorch.Generator().manual_seed(3)
    c = minitorch.multinomial(w, 6, True, generator=g)
    d = minitorch.multinomial(w, 6, True, generator=minitorch.Generator().manual_seed(3))
    assert minitorch.equal(c, d) and c.shape == (3, 6)


@pytest.mark.parametrize("args, match", [
    (([0.5, -0.1, 0.6], 1), "element < 0"),
    (([0.5, float("nan")], 1), "nan"),
    (([[0.0, 0.0], [1.0, 1.0]], 1), "sum of probabilities <= 0"),
    (([0.5, 0.5], 3), "without replacement"),
    (([0.5, 0.0, 0.5], 3), "not enough non-negative category"),
    (([0.5, 0.5], 0), "n_sample <= 0"),
    (([[[0.5, 0.5]]], 1), "1 or 2 dim"),
])
def test_bad_inputs_raise_like_pytorch(args, match):
    data, n = args
    with pytest.raises(RuntimeError, match=match):
        minitorch.multinomial(minitorch.tensor(data), n)


def test_integer_weights_and_non_tensors_are_rejected():
    with pytest.raises(RuntimeError, match="floating-point"):
        minitorch.multinomial(minitorch.tensor([1, 2]), 1)
    with pytest.raises(TypeError, match="multinomial"):
        minitorch.multinomial([0.5, 0.5], 1)
