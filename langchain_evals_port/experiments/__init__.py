"""Experiments: run an application over a dataset, score it, compare with last time.

``Target`` wraps the application (a Runnable, a compiled graph, a function or
``"module:attr"``) and captures what it did on each case with the runtime's capture
machinery.
"""

from ._target import Target, TargetLike, TargetRun

__all__ = ["Target", "TargetLike", "TargetRun"]
