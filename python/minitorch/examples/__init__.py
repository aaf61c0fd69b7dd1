"""Runnable examples: ``python -m minitorch.examples.<name>``."""
