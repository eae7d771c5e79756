"""What every baseline metric shares: the registry entry, the unavailable-metric error, the runtime options."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Union

import numpy as np

__all__ = ["RUNTIME_OPTIONS", "Gold", "Metric", "MetricUnavailable", "yes_no"]

#: A gold answer: one reference, or several (the prediction gets its best score over them).
Gold = Union[str, Sequence[str]]

#: Options that only decide how a model runs (never a number); accepted by every metric.
RUNTIME_OPTIONS: Mapping[str, Any] = MappingProxyType({"device": None, "progress": False})


class MetricUnavailable(RuntimeError):
    """A metric cannot run here (checkpoint not available offline, WordNet missing).

    Notebooks report the metric as skipped with ``.reason``; no score is ever made up.
    """

    def __init__(self, metric: str, reason: str) -> None:
        super().__init__(f"{metric} is not available: {reason}")
        self.metric = metric
        self.reason = reason


@dataclass(frozen=True)
class Metric:
    """One registry entry: how to score flat (gold, prediction, question) triples and describe the settings."""

    name: str
    defaults: Mapping[str, Any]
    #: (golds, predictions, questions, ``**options`` incl. runtime) -> scores in [0, 1]
    pairwise: Callable[..., np.ndarray]
    #: options -> ordered signature fields after the metric name
    describe: Callable[..., dict[str, str]]
    #: the allowed values of enumerated options
    choices: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    needs_questions: bool = False


def yes_no(flag: bool) -> str:
    """How a boolean option reads in a signature.

    Example:
        >>> yes_no(True)
        'yes'
    """
    return "yes" if flag else "no"
