"""Classic PyTorch programs, each a plain module with ``run(torch, device, steps)``.

Every program is written exactly as it would be for PyTorch, against the module passed
as ``torch`` (PyTorch itself, or ``minitorch``). Only the starting point is made
reproducible across the two libraries: weights come from NumPy (``common.init_weights``,
loaded with ``load_state_dict``) and so do the data and any noise.
"""
