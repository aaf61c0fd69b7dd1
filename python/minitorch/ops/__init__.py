"""minitorch's ops, declared once (``declarations.py``): each public op's forms, kind,
autocast policy and gradient; the ops written in Python, one concept per module
(``creation``, ``join``, ``shape``, ``indexing``, ``reduction``, ``sorting``, ``softmax``,
``linalg``, ``pointwise``, ``comparison``, ``inplace``, ``memory``); ``registry.py`` makes
their methods and functions, the in-place forms, aliases and autocast's lists from the
declarations. See docs/ops.md (generated) and docs/ARCHITECTURE.md, "Adding an op"."""
from .declarations import OPS, Op  # noqa: F401
