"""Sorting along a dim: ``sort``, ``argsort`` (its indices) and ``topk`` (its first k), C++ ops
(``cpp/src/ops/sort.cpp``) whose gradient goes back through the indices.
Each function takes the tensor first and is both ``Tensor.<name>`` and ``minitorch.<name>``
(attached by ops/registry.py from ops/declarations.py).
"""
from __future__ import annotations

import collections

from .. import _C
from .._C import Tensor
from ._args import int_arg

SortResult = collections.namedtuple("sort", ["values", "indices"])
TopkResult = collections.namedtuple("topk", ["values", "indices"])


def sort(self, dim: int = -1, descending: bool = False, stable: bool = False) -> SortResult:
    """``(values, indices)`` of ``self`` sorted along ``dim``. Always stable (equal
    values keep their order); NaN sorts above every number."""
    values, indices = _C._sort(self, int_arg("sort", "dim", dim), bool(descending))
    return SortResult(values, indices)


def argsort(self, dim: int = -1, descending: bool = False, stable: bool = False) -> Tensor:
    """The indices that sort ``self`` along ``dim``."""
    return _C._sort(self, int_arg("argsort", "dim", dim), bool(descending))[1]


def topk(self, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> TopkResult:  # noqa: A002
    """The ``k`` largest (or smallest) values along ``dim`` and their indices, largest
    (smallest) first; always sorted."""
    values, indices = _C._topk(self, int_arg("topk", "k", k), int_arg("topk", "dim", dim), bool(largest))
    return TopkResult(values, indices)
