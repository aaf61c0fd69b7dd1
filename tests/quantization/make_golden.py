"""Writes tests/quantization/golden.npz: PyTorch's quantized tensors and quantized Linear /
Conv2d (the fbgemm engine) on fixed inputs, for test_qtensor.py and test_qkernels.py.

Run it with a Python that has PyTorch, from the repository root:

    OPENBLAS_NUM_THREADS=1 /usr/bin/python3 tests/quantization/make_golden.py

Keys: ``<case>/<name>``; every input is stored, so the tests need neither PyTorch nor this file.
"""
from __future__ import annotations

import pathlib

import numpy as np
import torch

HERE = pathlib.Path(__file__).resolve().parent
QDT = {"quint8": torch.quint8, "qint8": torch.qint8, "qint32": torch.qint32}


def main() -> None:
    # fbgemm where this PyTorch has it (PyTorch's x86 default); Debian's build has onednn
    # instead, whose requantization can differ from fbgemm's by 1 LSB (the tests allow that).
    engines = torch.backends.quantized.supported_engines
    torch.backends.quantized.engine = "fbgemm" if "fbgemm" in engines else "onednn"
    g = np.random.default_rng(1234)
    out: dict[str, np.ndarray] = {}

    # ---- quantize_per_tensor: ties at .5, clamping, each dtype ----
    for name, scale, zp in (("quint8", 0.1, 10), ("qint8", 0.05, -3), ("qint32", 0.001, 7)):
        ties = (np.arange(-40, 41, dtype=np.float32) * 0.5 * np.float32(scale)).astype(np.float32)
        x = np.concatenate([ties, g.standard_normal(60).astype(np.float32) * 3,
                            np.array([1e6, -1e6, 0.0, -0.0], np.float32)]).astype(np.float32)
        q = torch.quantize_per_tensor(torch.from_numpy(x), scale, zp, QDT[name])
        c = f"per_tensor_{name}"
        out[f"{c}/x"], out[f"{c}/qparams"] = x, np.array([scale, zp], np.float64)
        out[f"{c}/int_repr"], out[f"{c}/dequant"] = q.int_repr().numpy(), q.dequantize().numpy()

    # ---- quantize_per_channel ----
    for name, axis, shape in (("quint8", 0, (3, 5)), ("qint8", 1, (2, 4, 3)), ("qint32", 0, (2, 6))):
        x = (g.standard_normal(shape) * 2).astype(np.float32)
        n = shape[axis]
        scales = g.uniform(0.01, 0.2, n)
        lo, hi = {"quint8": (0, 255), "qint8": (-128, 127), "qint32": (-1000, 1000)}[name]
        zps = g.integers(max(lo, -20), min(hi, 20) + 1 if lo < 0 else 30, n)
        q = torch.quantize_per_channel(torch.from_numpy(x), torch.from_numpy(scales), torch.from_numpy(zps), axis,
                                       QDT[name])
        c = f"per_channel_{name}"
        out[f"{c}/x"], out[f"{c}/scales"], out[f"{c}/zero_points"] = x, scales, zps.astype(np.int64)
        out[f"{c}/axis"] = np.array(axis)
        out[f"{c}/int_repr"], out[f"{c}/dequant"] = q.int_repr().numpy(), q.dequantize().numpy()

    # ---- quantize_per_tensor_dynamic ----
    x = (g.standard_normal((4, 9)) * 1.7 + 0.3).astype(np.float32)
    out["dynamic/x"] = x
    for name in ("quint8", "qint8"):
        for rr in (False, True):
            q = torch.quantize_per_tensor_dynamic(torch.from_numpy(x), QDT[name], rr)
            c = f"dynamic/{name}_{int(rr)}"
            out[f"{c}/int_repr"] = q.int_repr().numpy()
            out[f"{c}/qparams"] = np.array([q.q_scale(), q.q_zero_point()], np.float64)

    # ---- quantized linear (static and dynamic), per tensor and per channel weights ----
    M, K, N = 5, 37, 7
    x = (g.standard_normal((M, K))).astype(np.float32)
    w = (g.standard_normal((N, K)) * 0.3).astype(np.float32)
    b = (g.standard_normal(N) * 0.5).astype(np.float32)
    out["linear/x"], out["linear/w"], out["linear/b"] = x, w, b
    out["linear/x_qparams"] = np.array([0.02, 120], np.float64)
    out["linear/out_qparams"] = np.array([0.05, 110], np.float64)
    w_scales = np.abs(w).max(1).astype(np.float64) / 127
    out["linear/w_scales"] = w_scales
    qx = torch.quantize_per_tensor(torch.from_numpy(x), 0.02, 120, torch.quint8)
    weights = {"pt": torch.quantize_per_tensor(torch.from_numpy(w), 0.007, 0, torch.qint8),
               "pt_zp": torch.quantize_per_tensor(torch.from_numpy(w), 0.007, 3, torch.qint8),
               "pc": torch.quantize_per_channel(torch.from_numpy(w), torch.from_numpy(w_scales),
                                                torch.zeros(N, dtype=torch.int64), 0, torch.qint8)}
    for wn, qw in weights.items():
        # A fresh packed weight per call: onednn in 1.13 caches its primitive in the packed
        # object, and linear_relu / linear_dynamic after linear on the same one reuse it wrongly.
        def pack(bias=torch.from_numpy(b)):
            return torch.ops.quantized.linear_prepack(qw, bias)

        try:
            y = torch.ops.quantized.linear(qx, pack(), 0.05, 110)
        except RuntimeError as e:  # onednn takes symmetric weights only (zero point 0)
            print(f"skipping linear/{wn}: {str(e).splitlines()[0]}")
            continue
        yr = torch.ops.quantized.linear_relu(qx, pack(), 0.05, 110)
        out[f"linear/{wn}/y"], out[f"linear/{wn}/y_relu"] = y.int_repr().numpy(), yr.int_repr().numpy()
        for rr in (False, True):
            yd = torch.ops.quantized.linear_dynamic(torch.from_numpy(x), pack(), rr)
            out[f"linear/{wn}/dyn_{int(rr)}"] = yd.numpy()
        out[f"linear/{wn}/y_nobias"] = torch.ops.quantized.linear(qx, pack(None), 0.05, 110).int_repr().numpy()

    # ---- quantized conv2d ----
    import torch.nn.quantized.functional as qF

    for cn, (groups, stride, padding, dilation) in {"g1": (1, 1, 1, 1), "g2": (2, 2, (1, 0), (1, 2))}.items():
        x = g.standard_normal((2, 4, 7, 8)).astype(np.float32)
        w = (g.standard_normal((6, 4 // groups, 3, 3)) * 0.3).astype(np.float32)
        b = (g.standard_normal(6) * 0.2).astype(np.float32)
        c = f"conv_{cn}"
        out[f"{c}/x"], out[f"{c}/w"], out[f"{c}/b"] = x, w, b
        out[f"{c}/args"] = np.array([groups, stride, *np.broadcast_to(padding, 2), *np.broadcast_to(dilation, 2)])
        qx = torch.quantize_per_tensor(torch.from_numpy(x), 0.03, 100, torch.quint8)
        w_scales = np.abs(w).reshape(6, -1).max(1).astype(np.float64) / 127
        out[f"{c}/w_scales"] = w_scales
        for wn, qw in {"pt": torch.quantize_per_tensor(torch.from_numpy(w), 0.01, 0, torch.qint8),
                       "pc": torch.quantize_per_channel(torch.from_numpy(w), torch.from_numpy(w_scales),
                                                        torch.zeros(6, dtype=torch.int64), 0, torch.qint8)}.items():
            y = qF.conv2d(qx, qw, torch.from_numpy(b), stride=stride, padding=padding, dilation=dilation,
                          groups=groups, scale=0.04, zero_point=90)
            out[f"{c}/{wn}/y"] = y.int_repr().numpy()
    out["engine"] = np.array(torch.backends.quantized.engine)
    np.savez_compressed(HERE / "golden.npz", **out)
    print(f"wrote {HERE / 'golden.npz'} ({len(out)} arrays), torch {torch.__version__}")


if __name__ == "__main__":
    main()
