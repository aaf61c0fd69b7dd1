"""``minitorch.utils``: tools around models (``summary``)."""
from .summary import LayerInfo, Summary, summary

__all__ = ["LayerInfo", "Summary", "summary"]
