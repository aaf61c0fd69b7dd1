"""``Tensor.__getitem__`` / ``__setitem__`` (cpp/python/indexing.cpp) import this module by
name for NumPy's advanced indexing (``x[mask]``, ``x[i, j] = v``); the code is in
ops/indexing.py. This file can go once the extension imports ``minitorch.ops.indexing``.
"""
from .ops.indexing import getitem, setitem  # noqa: F401
