"""``minitorch.save`` / ``load`` of whole checkpoints, as classic training scripts write them:
nested dicts, lists and tuples of tensors, numbers, strings, None and bools come back exactly,
and a model and optimizer restored from one resume training as if never stopped."""
from __future__ import annotations

import io
import json
import math

import numpy as np
import pytest

import minitorch
from minitorch import nn


def test_a_checkpoint_round_trips_exactly(tmp_path, device):
    t = minitorch.arange(6, dtype=minitorch.float32, device=device).reshape(2, 3)
    obj = {"epoch": 5, "loss": 0.3, "name": "run-1", "done": False, "note": None, "inf": math.inf,
           "shapes": [(2, 3), [4]], "pair": (t, 2.0), "nested": {"a": [t.T, {"b": True}], 7: "seven", (1, 2): 3},
           "dtype": minitorch.float64, "device": minitorch.device("cpu"), "big": 2 ** 62, "empty": {}, "none": []}
    path = tmp_path / "ckpt.pt"
    minitorch.save(obj, path)
    back = minitorch.load(path)
    assert back["epoch"] == 5 and type(back["epoch"]) is int
    assert back["loss"] == 0.3 and type(back["loss"]) is float
    assert (back["name"], back["done"], back["note"], back["inf"]) == ("run-1", False, None, math.inf)
    assert back["shapes"] == [(2, 3), [4]] and type(back["shapes"][0]) is tuple
    assert isinstance(back["pair"], tuple) and back["pair"][1] == 2.0
    np.testing.assert_array_equal(back["pair"][0].numpy(), t.cpu().numpy())
    np.testing.assert_array_equal(back["nested"]["a"][0].numpy(), t.T.cpu().numpy())
    assert back["nested"]["a"][1] == {"b": True} and back["nested"][7] == "seven" and back["nested"][(1, 2)] == 3
    assert back["dtype"] is minitorch.float64 or back["dtype"] == minitorch.float64
    assert back["device"] == minitorch.device("cpu") and back["big"] == 2 ** 62
    assert back["empty"] == {} and back["none"] == []
    assert list(back) == list(obj)  # key order kept


def test_checkpoint_files_are_safetensors_with_the_structure_as_metadata(tmp_path):
    from safetensors import safe_open
    model = nn.Linear(40, 2)
    minitorch.save({"epoch": 1, "model_state_dict": model.state_dict()}, tmp_path / "c.safetensors")
    with safe_open(str(tmp_path / "c.safetensors"), "np") as f:  # the bias (2 values) is packed with the small ones
        assert set(f.keys()) == {"model_state_dict.weight", "minitorch.small"}
        json.loads(f.metadata()["minitorch.structure"])


def test_small_tensors_share_one_entry_in_their_narrowest_exact_dtype(tmp_path):
    # float64 values that are float32 numbers, int64 values that fit int8: stored narrow, loaded back
    # with their own dtype; values that do not fit (0.1 in float64, -0.0 kept) stay wide
    state = {"a": minitorch.tensor([0.5, -0.0, 3.0], dtype=minitorch.float64),
             "b": minitorch.tensor([0.1, 1.0], dtype=minitorch.float64),
             "c": minitorch.tensor([0, -3, 100], dtype=minitorch.int64),
             "d": minitorch.tensor([70000, 1], dtype=minitorch.int64),
             "e": minitorch.tensor(float("nan")), "f": minitorch.tensor([True, False]),
             "big": minitorch.arange(65).to(minitorch.int64), "extra": (1, "x")}
    minitorch.save(state, tmp_path / "s.safetensors")
    back = minitorch.load(tmp_path / "s.safetensors")
    for k in "abcdf":
        assert back[k].dtype == state[k].dtype and back[k].shape == state[k].shape
        np.testing.assert_array_equal(back[k].numpy(), state[k].numpy())
    assert np.signbit(back["a"].numpy()[1]) and np.isnan(back["e"].item()) and back["extra"] == (1, "x")
    np.testing.assert_array_equal(back["big"].numpy(), np.arange(65))
    from safetensors.numpy import load_file
    raw = load_file(str(tmp_path / "s.safetensors"))
    assert set(raw) == {"big", "minitorch.small"}
    # a: 3 float32, c: 3 int8, the others wide: 24 + 16 + 3 + 16 + 4 + 2 bytes, with alignment padding
    assert raw["minitorch.small"].size < 3 * 8 + 2 * 8 + 3 * 8 + 2 * 8 + 4 + 2


def test_long_structures_are_stored_compressed(tmp_path):
    from safetensors import safe_open
    state = {f"layer{i}.{name}": minitorch.tensor(float(i)) for i in range(40) for name in ("scale", "zero_point")}
    minitorch.save(state | {"n": 3}, tmp_path / "l.safetensors")
    with safe_open(str(tmp_path / "l.safetensors"), "np") as f:
        assert set(f.metadata()) == {"minitorch.structure.zlib"}
    back = minitorch.load(tmp_path / "l.safetensors")
    assert list(back) == list(state) + ["n"] and back["layer7.scale"].item() == 7.0


def test_file_objects_and_bfloat16_and_map_location(device):
    buf = io.BytesIO()
    minitorch.save({"w": [minitorch.ones(2, device=device).to(minitorch.bfloat16)], "step": 3}, buf)
    buf.seek(0)
    back = minitorch.load(buf, map_location=device, weights_only=True)
    assert back["step"] == 3 and back["w"][0].dtype == minitorch.bfloat16
    assert back["w"][0].device == minitorch.device(device)


@pytest.mark.parametrize("opt_name", ["SGD", "Adam"])
def test_model_and_optimizer_resume_training_identically(tmp_path, opt_name):
    def make():
        minitorch.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
        kw = dict(lr=0.1, momentum=0.9) if opt_name == "SGD" else dict(lr=0.01, betas=(0.8, 0.99))
        return model, getattr(minitorch.optim, opt_name)(model.parameters(), **kw)

    x, y = minitorch.randn(16, 4), minitorch.randn(16, 1)

    def step(model, opt):
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        return loss.item()

    model, opt = make()
    for _ in range(3):
        loss = step(model, opt)
    path = tmp_path / "ckpt.tar"
    minitorch.save({"epoch": 3, "model_state_dict": model.state_dict(), "optimizer_state_dict": opt.state_dict(),
                    "loss": loss}, path)
    straight = [step(model, opt) for _ in range(3)]

    model2, opt2 = make()
    checkpoint = minitorch.load(path)
    model2.load_state_dict(checkpoint["model_state_dict"])
    opt2.load_state_dict(checkpoint["optimizer_state_dict"])
    assert checkpoint["epoch"] == 3 and checkpoint["loss"] == loss
    assert opt2.state_dict()["param_groups"] == opt.state_dict()["param_groups"]
    resumed = [step(model2, opt2) for _ in range(3)]
    assert resumed == straight
