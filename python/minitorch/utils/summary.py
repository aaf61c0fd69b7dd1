"""``summary(model, input_size)``: per layer output shape, parameters, FLOPs and memory.

    >>> print(minitorch.utils.summary(model, (64, 1, 28, 28)))

FLOPs are counted as multiply-adds (MACs) of the layers that do arithmetic on weights
(Linear: in_features per output value; Conv: in_channels x KH x KW per output value);
pooling counts its comparisons/additions (KH x KW per output value); activations
count one operation per element; normalizations (BatchNorm, LayerNorm, GroupNorm...)
two per element (scale and shift); MultiheadAttention its projections (query, key,
value and output: E x E each per position) and its two attention products (L x S x E
each per batch). Memory is bytes of each layer's output and of its parameters and
buffers (BatchNorm's running statistics). A module with parameters of its own and
children (MultiheadAttention) is one row: its children are not listed apart.
For what a training step really holds (saved activations, gradients, optimizer
state) see ``minitorch.utils.memory.memory_breakdown``.
"""
from __future__ import annotations

from dataclasses import dataclass

from .. import _C, nn
from ..autograd import no_grad


@dataclass
class LayerInfo:
    name: str          # dotted name in the model, e.g. "features.0"
    kind: str          # class name, e.g. "Conv2d"
    output_shape: tuple
    params: int
    flops: int         # multiply-adds (see the module docstring)
    activation_bytes: int
    param_bytes: int


def _flops(m, out_shape, inputs) -> int:
    out_numel = 1
    for s in out_shape:
        out_numel *= s
    if isinstance(m, nn.Linear):
        return out_numel * m.in_features
    if isinstance(m, (nn.Conv2d, nn.Conv1d)):
        k = 1
        for s in m.kernel_size:
            k *= s
        return out_numel * m.in_channels * k
    if isinstance(m, (nn.MaxPool2d, nn.AvgPool2d)):
        k = m.kernel_size if isinstance(m.kernel_size, int) else m.kernel_size[0] * m.kernel_size[1]
        return out_numel * (k * k if isinstance(m.kernel_size, int) else k)
    if isinstance(m, (nn.ReLU, nn.Sigmoid, nn.Tanh, nn.Dropout, nn.Softmax, nn.LogSoftmax)):
        return out_numel
    if type(m).__name__ in _NORMS:
        return 2 * out_numel
    if type(m).__name__ == "MultiheadAttention" and len(inputs) >= 2:
        q, k = inputs[0], inputs[1]
        e = m.embed_dim
        if q.dim() == 2:  # unbatched (L, E)
            n, length, source = 1, q.shape[0], k.shape[0]
        elif m.batch_first:
            n, length, source = q.shape[0], q.shape[1], k.shape[1]
        else:
            n, length, source = q.shape[1], q.shape[0], k.shape[0]
        projections = n * (2 * length + 2 * source) * e * e  # q, out per query; k, v per key
        return projections + 2 * n * length * source * e
    return 0


_NORMS = {"BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LayerNorm", "GroupNorm", "InstanceNorm1d", "InstanceNorm2d",
          "InstanceNorm3d", "LocalResponseNorm", "RMSNorm"}


def _human(n: float, unit: str = "") -> str:
    for suffix in ("", "K", "M", "G", "T"):
        if abs(n) < 1000 or suffix == "T":
            return f"{n:.0f}{suffix}{unit}" if suffix == "" else f"{n:.2f}{suffix}{unit}"
        n /= 1000.0
    return str(n)


def _bytes(n: int) -> str:
    for suffix in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or suffix == "GiB":
            return f"{n:.0f} {suffix}" if suffix == "B" else f"{n:.2f} {suffix}"
        n /= 1024.0
    return str(n)


class Summary:
    """The table ``summary`` builds: ``layers`` (LayerInfo rows) and totals.
    Printed as text; shown as an HTML table in Jupyter."""

    def __init__(self, model_name: str, input_size: tuple, layers: list[LayerInfo], total_params: int):
        self.model_name = model_name
        self.input_size = input_size
        self.layers = layers
        self.total_params = total_params
        self.total_flops = sum(layer.flops for layer in layers)
        self.total_activation_bytes = sum(layer.activation_bytes for layer in layers)
        self.total_param_bytes = sum(layer.param_bytes for layer in layers)

    def _rows(self):
        for layer in self.layers:
            yield (f"{layer.name} ({layer.kind})", str(tuple(layer.output_shape)), f"{layer.params:,}",
                   _human(layer.flops), _bytes(layer.activation_bytes), _bytes(layer.param_bytes))

    _HEAD = ("layer", "output shape", "params", "FLOPs (MACs)", "activations", "param memory")

    def __str__(self) -> str:
        rows = [self._HEAD] + list(self._rows())
        total = ("total", "", f"{self.total_params:,}", _human(self.total_flops), _bytes(self.total_activation_bytes),
                 _bytes(self.total_param_bytes))
        widths = [max(len(r[i]) for r in rows + [total]) for i in range(len(self._HEAD))]
        line = "-" * (sum(widths) + 3 * (len(widths) - 1))

        def fmt(r):
            return " | ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))

        return "\n".join([f"{self.model_name}, input {tuple(self.input_size)}", line, fmt(rows[0]), line]
                         + [fmt(r) for r in rows[1:]] + [line, fmt(total)])

    __repr__ = __str__

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{h}</th>" for h in self._HEAD)
        body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in self._rows())
        total = (f"<tr style='font-weight:bold'><td>total</td><td></td><td>{self.total_params:,}</td>"
                 f"<td>{_human(self.total_flops)}</td><td>{_bytes(self.total_activation_bytes)}</td>"
                 f"<td>{_bytes(self.total_param_bytes)}</td></tr>")
        return (f"<p><b>{self.model_name}</b>, input {tuple(self.input_size)}</p>"
                f"<table><thead><tr>{head}</tr></thead><tbody>{body}{total}</tbody></table>")


def summary(model, input_size, dtype=None, device=None) -> Summary:
    """Runs one forward pass of zeros of ``input_size`` (batch dim included) and
    measures every leaf layer. Returns a :class:`Summary`. The zeros are made on
    ``device``, by default the device of the model's parameters."""
    if not isinstance(model, nn.Module):
        raise TypeError(f"summary: expected an nn.Module, got {type(model).__name__}")
    input_size = tuple(input_size)
    if device is None:  # the input goes where the model lives, as its forward expects
        first = next(iter([*model.parameters(), *model.buffers()]), None)
        device = first.device if first is not None else None
    layers: list[LayerInfo] = []
    handles = []
    names = {id(m): n for n, m in model.named_modules()}

    def hook(m, inputs, out):
        if isinstance(out, (tuple, list)):  # MultiheadAttention: (output, weights)
            out = out[0]
        shape = tuple(out.shape)
        recurse = id(m) in own  # a layer with children of its own counts theirs too
        params = sum(p.numel() for p in m.parameters(recurse=recurse))
        item = out.element_size()
        memory = sum(t.numel() * t.element_size() for t in [*m.parameters(recurse=recurse), *m.buffers(recurse=recurse)])
        layers.append(LayerInfo(names.get(id(m), "?"), type(m).__name__, shape, params, _flops(m, shape, inputs),
                                out.numel() * item, memory))

    # The layers: leaves, and modules with parameters of their own (MultiheadAttention),
    # whose children are then part of them. Containers would double count.
    own = {id(m) for m in model.modules()
           if any(True for _ in m.children()) and any(True for _ in m.parameters(recurse=False))}
    inside = {id(c) for m in model.modules() if id(m) in own for c in m.modules() if c is not m}
    for m in model.modules():
        if id(m) not in inside and (id(m) in own or not any(True for _ in m.children())):
            handles.append(m.register_forward_hook(hook))
    flags = [(m, m.training) for m in model.modules()]  # restored one by one (a frozen part stays frozen)
    model.eval()
    try:
        with no_grad():
            model(_C._full(input_size, 0.0, dtype, device))
    finally:
        for h in handles:
            h.remove()
        for m, flag in flags:
            object.__setattr__(m, "training", flag)
    total = sum(p.numel() for p in model.parameters())
    return Summary(type(model).__name__, input_size, layers, total)
