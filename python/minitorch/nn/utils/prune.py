"""``nn.utils.prune``: zeroing a chosen part of a module's weights, as PyTorch's
``torch.nn.utils.prune`` does.

Pruning ``module.weight`` keeps the dense tensor and adds a mask:

* the parameter moves to ``module.weight_orig`` (same Parameter object, so an optimizer
  that holds it keeps working);
* the 0/1 mask is the buffer ``module.weight_mask`` (so it is saved in the state_dict and
  moved by ``module.to(...)``);
* ``module.weight`` becomes a plain attribute, ``weight_orig * weight_mask``, recomputed
  by a forward pre-hook before every call. The gradient therefore reaches only the
  entries the mask keeps.

Pruning the same tensor again combines the masks (a ``PruningContainer``): the new method
only looks at the entries still alive. ``remove(module, "weight")`` makes it permanent
(``weight`` is a Parameter again, holding the zeros; the mask and hook are gone).

What this does *not* do is make anything faster: the tensor stays dense and the matmul
does the same work on the zeros. Speed needs a sparse format the kernels exploit; the 2:4
pattern of ``semi_structured`` (2 of every 4 consecutive weights kept) is the one recent
GPUs' sparse tensor cores run at up to twice the dense rate.

>>> m = nn.Linear(4, 3)
>>> _ = prune.l1_unstructured(m, "weight", amount=0.5)   # the 6 smallest |w| become 0
>>> list(m.state_dict())
['bias', 'weight_orig', 'weight_mask']
"""
from __future__ import annotations

import math
import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable

import numpy as np

from ... import _C
from ..module import Module

__all__ = ["BasePruningMethod", "CustomFromMask", "Identity", "L1Unstructured", "LnStructured",
           "PruningContainer", "RandomStructured", "RandomUnstructured", "SemiStructured",
           "custom_from_mask", "global_unstructured", "identity", "is_pruned", "l1_unstructured",
           "ln_structured", "random_structured", "random_unstructured", "remove", "semi_structured",
           "sparsity"]


def _mt():
    import minitorch  # the package imports nn first: look it up when called
    return minitorch


def _pre_hooks(module: Module) -> dict:
    return module.__dict__.setdefault("_forward_pre_hooks", {})


# ---------------------------------------------------------------------------------------
# The base class and the container
# ---------------------------------------------------------------------------------------
class BasePruningMethod(ABC):
    """A way of choosing a mask. Subclasses set ``PRUNING_TYPE`` ("unstructured",
    "structured" with a ``dim``, or "global") and define ``compute_mask``; ``apply``
    reparametrizes a module's tensor with it. An applied method is also the forward
    pre-hook that recomputes ``module.<name>``."""

    _tensor_name: str | None = None
    PRUNING_TYPE: str

    def __call__(self, module: Module, inputs) -> None:
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t, default_mask):
        """The new mask for ``t`` (same shape), given the mask already in place."""

    def apply_mask(self, module: Module):
        """``<name>_orig * <name>_mask``: the pruned tensor."""
        assert self._tensor_name is not None, f"Module {module} has to be pruned"
        orig = getattr(module, self._tensor_name + "_orig")
        mask = getattr(module, self._tensor_name + "_mask")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module: Module, name: str, *args, importance_scores=None, **kwargs):
        """Prunes ``module.<name>`` with ``cls(*args, **kwargs)``, on top of any pruning
        already there; returns the method (or the container holding it)."""
        hooks = _pre_hooks(module)
        old = [(k, h) for k, h in hooks.items() if isinstance(h, BasePruningMethod) and h._tensor_name == name]
        assert len(old) <= 1, (f"Avoid adding multiple pruning hooks to the same tensor {name} of module "
                               f"{module}. Use a PruningContainer.")
        method = cls(*args, **kwargs)
        method._tensor_name = name
        if old:
            old_method = old[0][1]
            if isinstance(old_method, PruningContainer):
                old_method.add_pruning_method(method)
                method = old_method
            else:
                container = PruningContainer(old_method)
                container.add_pruning_method(method)
                method = container

        orig = getattr(module, name)
        if importance_scores is not None:
            assert tuple(importance_scores.shape) == tuple(orig.shape), (
                f"importance_scores should have the same shape as parameter {name} of {module}")
        else:
            importance_scores = orig

        first_time = not isinstance(method, PruningContainer)
        if first_time:
            # weight -> weight_orig (the same Parameter); weight itself is recomputed below
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = _mt().ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone().contiguous()

        try:
            mask = method.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            for k, _ in old:  # the container (or the new method) replaces the old hook
                del hooks[k]
            module.register_forward_pre_hook(method)
        except Exception:
            if first_time:  # undo the reparametrization: the module is as it was
                orig = module._parameters.pop(name + "_orig")
                module.register_parameter(name, orig)
            raise
        return method

    def prune(self, t, default_mask=None, importance_scores=None):
        """``t`` times the mask this method computes for it (no module involved)."""
        if importance_scores is not None:
            assert tuple(importance_scores.shape) == tuple(t.shape), \
                "importance_scores should have the same shape as tensor t"
        else:
            importance_scores = t
        default_mask = default_mask if default_mask is not None else _mt().ones_like(t)
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module: Module) -> None:
        """Makes the pruning permanent: ``<name>`` is a Parameter again, holding
        ``orig * mask``; ``<name>_orig``, ``<name>_mask`` are deleted (the hook is
        removed by the module-level ``remove``)."""
        assert self._tensor_name is not None, f"Module {module} has to be pruned before pruning can be removed"
        name = self._tensor_name
        weight = self.apply_mask(module)
        if name in module.__dict__:
            delattr(module, name)
        orig = module._parameters[name + "_orig"]
        orig.data = weight.data
        del module._parameters[name + "_orig"]
        del module._buffers[name + "_mask"]
        setattr(module, name, orig)


class PruningContainer(BasePruningMethod):
    """The history of pruning methods applied to one tensor. Its mask is the last
    method's mask computed on the entries (unstructured), or the channels (structured),
    the earlier ones left alive, combined with the mask already there."""

    def __init__(self, *args):
        self._pruning_methods: tuple = ()
        if len(args) == 1:
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        else:
            for method in args:
                self.add_pruning_method(method)

    def add_pruning_method(self, method) -> None:
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError(f"Can only add pruning methods acting on the parameter named '{self._tensor_name}' "
                             f"to PruningContainer {self}. Found '{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self) -> int:
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t, default_mask):
        method = self._pruning_methods[-1]
        new_mask = default_mask.to(dtype=t.dtype)
        if method.PRUNING_TYPE == "unstructured":
            slc = default_mask == 1  # the entries still alive, as a 1-d tensor
        elif method.PRUNING_TYPE == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError("Pruning methods of PRUNING_TYPE 'structured' need to have the attribute "
                                     "`dim` defined.")
            n_dims = t.dim()
            dim = method.dim + n_dims if method.dim < 0 else method.dim
            if dim < 0:
                raise IndexError(f"Index is out of bounds for tensor with dimensions {n_dims}")
            # the channels along dim with at least one entry alive
            keep_channel = default_mask.sum(dim=[d for d in range(n_dims) if d != dim]) != 0
            slc = [slice(None)] * n_dims
            slc[dim] = keep_channel
            slc = tuple(slc)
        elif method.PRUNING_TYPE == "global":
            slc = tuple([slice(None)] * t.dim())
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {method.PRUNING_TYPE}")
        partial = method.compute_mask(t[slc], default_mask=default_mask[slc])
        new_mask[slc] = partial.to(dtype=new_mask.dtype)
        return new_mask


# ---------------------------------------------------------------------------------------
# Amount validation and PyTorch's choice among equal values
# ---------------------------------------------------------------------------------------
def _validate_pruning_amount_init(amount) -> None:
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or (
            not isinstance(amount, numbers.Integral) and (float(amount) > 1.0 or float(amount) < 0.0)):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a non-negative integer")


def _validate_pruning_amount(amount, tensor_size: int) -> None:
    if isinstance(amount, numbers.Integral) and amount > tensor_size:
        raise ValueError(f"amount={amount} should be smaller than the number of parameters to prune={tensor_size}")


def _compute_nparams_toprune(amount, tensor_size: int) -> int:
    """An int is a count; a float a fraction, rounded half to even (Python's round)."""
    if isinstance(amount, numbers.Integral):
        return int(amount)
    return round(amount * tensor_size)


def _validate_structured_pruning(t) -> None:
    if t.dim() <= 1:
        raise ValueError(f"Structured pruning can only be applied to multidimensional tensors. Found tensor of "
                         f"shape {tuple(t.shape)} with {t.dim()} dims")


def _validate_pruning_dim(t, dim: int) -> None:
    if dim >= t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {tuple(t.shape)}")


def _topk_indices(values, k: int, largest: bool):
    """The positions ``torch.topk(values, k, largest=largest).indices`` holds, as a set
    (values: 1-d). Where values tie across the k-th place the choice is PyTorch's: on
    "cuda" the lowest positions (minitorch's topk does the same), on the CPU the ones
    libstdc++'s selection leaves in front (see ``_libstdcxx_select``)."""
    mt = _mt()
    n = values.numel()
    if k == 0 or k >= n or values.device.type != "cpu":
        return mt.topk(values, k, largest=largest).indices
    a = values.detach().numpy().astype(np.float64)
    key = np.where(np.isnan(a), np.inf, -a if largest else a)  # NaN counts as the largest either way
    nan_rank = np.isnan(a)
    order = np.lexsort((np.arange(n), key, nan_rank if not largest else ~nan_rank))
    before, after = order[k - 1], order[k]
    same = (key[before] == key[after]) and (nan_rank[before] == nan_rank[after])
    if not same:  # the k-th and (k+1)-th differ: every algorithm returns the same set
        chosen = order[:k]
    else:
        chosen = _libstdcxx_select(a.tolist(), k, largest)
    return mt.tensor(np.asarray(chosen, dtype=np.int64), device=values.device)


def _libstdcxx_select(vals: list, k: int, largest: bool) -> list:
    """Which k positions PyTorch's CPU topk returns, ties included: it fills a vector of
    (value, position) pairs and calls ``std::partial_sort`` (when k * 64 <= n) or
    ``std::nth_element`` with a value-only comparison, so among equal values the winners
    are whichever the GNU library's heap select / introselect leave in the first k slots.
    This replays those algorithms step by step (slow in Python: used only at ties)."""
    if largest:
        def less(x, y):  # "x goes before y": larger first, NaN first
            return (x != x and y == y) or x > y
    else:
        def less(x, y):  # smaller first, NaN last
            return (x == x and y != y) or x < y
    v = list(vals)
    ix = list(range(len(v)))
    n = len(v)

    def swap(i, j):
        v[i], v[j] = v[j], v[i]
        ix[i], ix[j] = ix[j], ix[i]

    def cdiv2(x):  # C's integer division by 2 (towards zero)
        return int(x / 2)

    def push_heap(first, hole, top, val):
        parent = cdiv2(hole - 1)
        while hole > top and less(v[first + parent], val[0]):
            v[first + hole], ix[first + hole] = v[first + parent], ix[first + parent]
            hole = parent
            parent = cdiv2(hole - 1)
        v[first + hole], ix[first + hole] = val

    def adjust_heap(first, hole, length, val):
        top = hole
        child = hole
        while child < cdiv2(length - 1):
            child = 2 * (child + 1)
            if less(v[first + child], v[first + child - 1]):
                child -= 1
            v[first + hole], ix[first + hole] = v[first + child], ix[first + child]
            hole = child
        if (length & 1) == 0 and child == cdiv2(length - 2):
            child = 2 * (child + 1)
            v[first + hole], ix[first + hole] = v[first + child - 1], ix[first + child - 1]
            hole = child - 1
        push_heap(first, hole, top, val)

    def make_heap(first, last):
        length = last - first
        if length < 2:
            return
        parent = cdiv2(length - 2)
        while True:
            adjust_heap(first, parent, length, (v[first + parent], ix[first + parent]))
            if parent == 0:
                return
            parent -= 1

    def heap_select(first, middle, last):
        make_heap(first, middle)
        for i in range(middle, last):
            if less(v[i], v[first]):  # pop_heap(first, middle, i)
                val = (v[i], ix[i])
                v[i], ix[i] = v[first], ix[first]
                adjust_heap(first, 0, middle - first, val)

    def move_median_to_first(result, a, b, c):
        if less(v[a], v[b]):
            if less(v[b], v[c]):
                swap(result, b)
            elif less(v[a], v[c]):
                swap(result, c)
            else:
                swap(result, a)
        elif less(v[a], v[c]):
            swap(result, a)
        elif less(v[b], v[c]):
            swap(result, c)
        else:
            swap(result, b)

    def unguarded_partition(first, last, pivot):
        while True:
            while less(v[first], v[pivot]):
                first += 1
            last -= 1
            while less(v[pivot], v[last]):
                last -= 1
            if not first < last:
                return first
            swap(first, last)
            first += 1

    def insertion_sort(first, last):
        if first == last:
            return
        for i in range(first + 1, last):
            val = (v[i], ix[i])
            if less(val[0], v[first]):
                v[first + 1:i + 1], ix[first + 1:i + 1] = v[first:i], ix[first:i]
                v[first], ix[first] = val
            else:  # unguarded linear insert
                j = i
                while less(val[0], v[j - 1]):
                    v[j], ix[j] = v[j - 1], ix[j - 1]
                    j -= 1
                v[j], ix[j] = val

    if k * 64 <= n:  # std::partial_sort: the set is what heap_select leaves in front
        heap_select(0, k, n)
        return sorted(ix[:k])
    # std::nth_element(begin, begin + k - 1, end): introselect
    first, nth, last = 0, k - 1, n
    depth = 2 * (n.bit_length() - 1)
    while last - first > 3:
        if depth == 0:
            heap_select(first, nth + 1, last)
            swap(first, nth)
            return sorted(ix[:k])
        depth -= 1
        mid = first + (last - first) // 2
        move_median_to_first(first, first + 1, mid, last - 1)
        cut = unguarded_partition(first + 1, last, first)
        if cut <= nth:
            first = cut
        else:
            last = cut
    insertion_sort(first, last)
    return sorted(ix[:k])


def _compute_norm(t, n, dim: int):
    """The L``n`` norm of each slice along ``dim`` (over every other dim)."""
    dims = list(range(t.dim()))
    if dim < 0:
        dim = dims[dim]
    dims.remove(dim)
    return _mt().norm(t, p=n, dim=dims)


# ---------------------------------------------------------------------------------------
# The methods
# ---------------------------------------------------------------------------------------
class Identity(BasePruningMethod):
    """Prunes nothing: a mask of ones (useful to get the ``_orig``/``_mask`` form)."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        return default_mask

    @classmethod
    def apply(cls, module, name):
        return super().apply(module, name)


class _Unstructured(BasePruningMethod):
    """What the two unstructured methods share: ``amount`` entries (an int) or that fraction
    of them (a float) are zeroed, the ones ``_chosen(t, k)`` names (flat indices)."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        tensor_size = t.numel()
        nparams_toprune = _compute_nparams_toprune(self.amount, tensor_size)
        _validate_pruning_amount(nparams_toprune, tensor_size)
        mask = default_mask.clone().contiguous()
        if nparams_toprune != 0:
            mask.view(-1)[self._chosen(t, nparams_toprune)] = 0
        return mask


class RandomUnstructured(_Unstructured):
    """Prunes ``amount`` entries (an int) or that fraction of them (a float), chosen at random."""

    def _chosen(self, t, k):
        prob = _mt().rand_like(t)
        return _mt().topk(prob.reshape(-1), k=k).indices

    @classmethod
    def apply(cls, module, name, amount):
        return super().apply(module, name, amount=amount)


class L1Unstructured(_Unstructured):
    """Prunes the ``amount`` entries with the smallest absolute value."""

    def _chosen(self, t, k):
        return _topk_indices(t.detach().abs().reshape(-1), k, largest=False)

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class RandomStructured(BasePruningMethod):
    """Prunes ``amount`` whole channels along ``dim``, chosen at random."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim: int = -1):
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t, default_mask):
        mt = _mt()
        _validate_structured_pruning(t)
        _validate_pruning_dim(t, self.dim)
        tensor_size = t.shape[self.dim]
        nparams_toprune = _compute_nparams_toprune(self.amount, tensor_size)
        _validate_pruning_amount(nparams_toprune, tensor_size)
        if nparams_toprune == 0:
            return default_mask
        prob = mt.rand(tensor_size, device=t.device)
        threshold = mt.kthvalue(prob, k=nparams_toprune).values
        mask = mt.zeros_like(t)
        slc = [slice(None)] * t.dim()
        slc[self.dim] = prob > threshold
        mask[tuple(slc)] = 1
        return mask * default_mask.to(dtype=mask.dtype)

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prunes the ``amount`` channels along ``dim`` with the smallest L``n`` norm
    (``n``: 1, 2, ``float("inf")``, ``"fro"``, ... as ``minitorch.norm``'s ``p``)."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, n, dim: int = -1):
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t, default_mask):
        mt = _mt()
        _validate_structured_pruning(t)
        _validate_pruning_dim(t, self.dim)
        tensor_size = t.shape[self.dim]
        nparams_toprune = _compute_nparams_toprune(self.amount, tensor_size)
        nparams_tokeep = tensor_size - nparams_toprune
        _validate_pruning_amount(nparams_toprune, tensor_size)
        if nparams_toprune == 0:
            return default_mask
        norm = _compute_norm(t.detach(), self.n, self.dim)
        keep = _topk_indices(norm.reshape(-1), nparams_tokeep, largest=True)
        mask = mt.zeros_like(t)
        slc = [slice(None)] * t.dim()
        slc[self.dim] = keep
        mask[tuple(slc)] = 1
        return mask * default_mask.to(dtype=mask.dtype)

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        return super().apply(module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prunes where a given 0/1 ``mask`` is 0."""

    PRUNING_TYPE = "global"

    def __init__(self, mask):
        self.mask = mask

    def compute_mask(self, t, default_mask):
        assert tuple(default_mask.shape) == tuple(self.mask.shape), (
            f"custom_from_mask: mask of shape {tuple(self.mask.shape)} for a tensor of shape "
            f"{tuple(default_mask.shape)}")
        return default_mask * self.mask.to(dtype=default_mask.dtype, device=default_mask.device)

    @classmethod
    def apply(cls, module, name, mask):
        return super().apply(module, name, mask=mask)


class SemiStructured(BasePruningMethod):
    """N:M ("2:4") semi-structured pruning — minitorch's own, PyTorch has no such method in
    ``nn.utils.prune``: in every group of ``m`` consecutive weights along a row (the input
    dim of a Linear; ``in * kh * kw`` flattened for a Conv2d) only the ``n`` largest |w|
    are kept. 2:4 is the pattern sparse tensor cores (Ampere and later, what
    ``torch.sparse.to_sparse_semi_structured`` packs) run at up to 2x the dense rate.
    Entries already pruned count as 0, so they are the first to go."""

    PRUNING_TYPE = "global"

    def __init__(self, n: int = 2, m: int = 4):
        if not (isinstance(n, numbers.Integral) and isinstance(m, numbers.Integral) and 0 <= n <= m and m > 0):
            raise ValueError(f"SemiStructured: expected integers 0 <= n <= m, m > 0; got n={n}, m={m}")
        self.n, self.m = int(n), int(m)

    def compute_mask(self, t, default_mask):
        mt = _mt()
        if t.dim() < 2:
            raise ValueError(f"SemiStructured: expected a weight with at least 2 dims, got shape {tuple(t.shape)}")
        row = t.numel() // t.shape[0]
        if row % self.m:
            raise ValueError(f"SemiStructured: a row of {row} weights (shape {tuple(t.shape)}) does not split "
                             f"into groups of {self.m}")
        groups = (t.detach().abs() * default_mask.to(dtype=t.dtype)).reshape(-1, self.m)
        mask = mt.zeros_like(groups)
        if self.n:
            # stable sort: among equal values the first in the group stays
            keep = mt.argsort(groups, dim=1, descending=True, stable=True)[:, :self.n]
            mask.scatter_(1, keep, 1.0)
        return mask.reshape(t.shape).to(dtype=default_mask.dtype) * default_mask

    @classmethod
    def apply(cls, module, name, n=2, m=4, importance_scores=None):
        return super().apply(module, name, n=n, m=m, importance_scores=importance_scores)


# ---------------------------------------------------------------------------------------
# The functions
# ---------------------------------------------------------------------------------------
def identity(module: Module, name: str) -> Module:
    """Reparametrizes ``module.<name>`` as ``<name>_orig * <name>_mask`` with a mask of ones."""
    Identity.apply(module, name)
    return module


def random_unstructured(module: Module, name: str, amount) -> Module:
    """Prunes ``amount`` (int: how many; float: which fraction) random entries of ``module.<name>``."""
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module: Module, name: str, amount, importance_scores=None) -> Module:
    """Prunes the ``amount`` entries of ``module.<name>`` with the smallest |value| (or
    smallest |importance_scores|, a tensor of the same shape)."""
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module: Module, name: str, amount, dim: int) -> Module:
    """Prunes ``amount`` random channels of ``module.<name>`` along ``dim``."""
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module: Module, name: str, amount, n, dim: int, importance_scores=None) -> Module:
    """Prunes the ``amount`` channels along ``dim`` with the smallest L``n`` norm."""
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs) -> None:
    """Prunes several tensors at once, as if they were one: ``amount`` then counts over
    all of them, so layers with small weights lose more. ``parameters``: (module, name)
    pairs; ``pruning_method``: an "unstructured" class such as ``L1Unstructured``.

    >>> prune.global_unstructured([(m1, "weight"), (m2, "weight")], prune.L1Unstructured, amount=0.5)
    """
    mt = _mt()
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    parameters = list(parameters)
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    scores = mt.cat([importance_scores.get((m, n), getattr(m, n)).detach().reshape(-1) for m, n in parameters])
    default_mask = mt.cat([(getattr(m, n + "_mask") if hasattr(m, n + "_mask") else mt.ones_like(getattr(m, n)))
                           .reshape(-1) for m, n in parameters])
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError(f'Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. Found method '
                        f"{pruning_method} of type {method.PRUNING_TYPE}")
    container.add_pruning_method(method)
    final_mask = container.compute_mask(scores, default_mask)
    pointer = 0
    for module, name in parameters:
        param = getattr(module, name)
        num = param.numel()
        custom_from_mask(module, name, mask=final_mask[pointer:pointer + num].view(param.shape))
        pointer += num


def custom_from_mask(module: Module, name: str, mask) -> Module:
    """Prunes ``module.<name>`` where ``mask`` (same shape) is 0."""
    CustomFromMask.apply(module, name, mask=mask)
    return module


def semi_structured(module: Module, name: str = "weight", n: int = 2, m: int = 4, importance_scores=None) -> Module:
    """Keeps the ``n`` largest |w| of every ``m`` consecutive weights of each row (2:4 by
    default; see ``SemiStructured``)."""
    SemiStructured.apply(module, name, n=n, m=m, importance_scores=importance_scores)
    return module


def remove(module: Module, name: str) -> Module:
    """Makes the pruning of ``module.<name>`` permanent: ``<name>`` is a Parameter again
    (zeros where pruned) and ``<name>_orig``, ``<name>_mask`` and the hook are gone."""
    hooks = _pre_hooks(module)
    for k, hook in list(hooks.items()):
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del hooks[k]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed")


def is_pruned(module: Module) -> bool:
    """True when ``module`` or any submodule has a pruning hook."""
    for _, sub in module.named_modules():
        if any(isinstance(h, BasePruningMethod) for h in sub.__dict__.get("_forward_pre_hooks", {}).values()):
            return True
    return False


def sparsity(obj) -> float:
    """The fraction of zeros: of a tensor, or of a module's ``weight`` tensors (every
    submodule's, pruned ones as the masked value the forward uses)."""
    mt = _mt()
    if isinstance(obj, _C.Tensor):
        return float((obj == 0).sum().item()) / max(obj.numel(), 1)
    if not isinstance(obj, Module):
        raise TypeError(f"sparsity: expected a Tensor or a Module, got {type(obj).__name__}")
    zeros = total = 0
    with mt.no_grad():
        for _, sub in obj.named_modules():
            if "weight_orig" in sub._parameters:
                w = sub.weight_orig * sub.weight_mask
            else:
                w = sub._parameters.get("weight")
            if isinstance(w, _C.Tensor):
                zeros += int((w == 0).sum().item())
                total += w.numel()
    return zeros / total if total else math.nan
