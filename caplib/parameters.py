"""A chapter's parameters, checked before any work: one line naming the parameter and what it may be.

Every chapter's first code cell calls :func:`check_parameters` with the parameters it declares (``book`` re-exports
it), so a typo or an impossible value stops the chapter at once with a :class:`ParameterError`, instead of after
seconds of scoring or, worse, as a run on other data than the reader meant. Lists (``metrics``, ``alphas``,
``focus``) are YAML on papermill's command line: ``papermill ... -y 'metrics: [cap, bleu]'``; ``-p`` passes strings
and numbers only.

A name papermill injects that the chapter does not declare (``-p splt validation``) is an error too: papermill only
warns "Passed unknown parameter" and runs the whole chapter on the default, so :func:`check_parameters` reads the
cells the kernel ran (:func:`undeclared_parameters`) and names the misspelt parameter and the chapter's own. A
:class:`ParameterError` shows as its one line in the notebook (``_render_traceback_``), and
:mod:`caplib.papermill_hook` makes papermill's command line end on that line, without a traceback.

Example:
    >>> check_parameters(profile="offline", split="test", row_limit=40, alpha=0.85, metrics=["cap", "bleu"])
    >>> check_parameters(split="dev")
    Traceback (most recent call last):
    ...
    caplib.parameters.ParameterError: parameter split='dev': choose from None, 'validation', 'test'
"""

from __future__ import annotations

import ast
import difflib
import numbers
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from caplib.data import CORRECTNESS_SPLITS
from caplib.profiles import ProfileError, available_profiles, load_profile
from caplib.runtime import NLI_BACKENDS
from caplib.scoring import SCORERS
from caplib.taxonomy import LABELS

__all__ = ["ParameterError", "check_parameters", "undeclared_parameters"]

#: The first line of the cell papermill injects after a notebook's ``parameters`` cell (its python translator).
INJECTED_HEADER = "# Parameters"


class ParameterError(ValueError):
    """A chapter parameter that cannot be used; the message names it and its valid values.

    IPython shows an exception by its ``_render_traceback_`` when it has one: a chapter's cell, and the report
    papermill prints of it, show this error as its one line, not as a traceback through caplib's checks.

    Example:
        >>> ParameterError("parameter split='tset': choose from None, 'validation', 'test'")._render_traceback_()
        ["ParameterError: parameter split='tset': choose from None, 'validation', 'test'"]
    """

    def _render_traceback_(self) -> list[str]:
        return [f"{type(self).__name__}: {self}"]


def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _profile(value: Any) -> str | None:
    if not isinstance(value, (str, os.PathLike)):
        return f"give a profile name ({', '.join(available_profiles())}) or the path of a profile YAML file"
    try:
        load_profile(value, locked=False)
    except ProfileError as error:
        return str(error).splitlines()[0]
    return None


def _split(value: Any) -> str | None:
    if value is None or value in CORRECTNESS_SPLITS:
        return None
    return f"choose from None, {', '.join(repr(split) for split in CORRECTNESS_SPLITS)}"


def _nli_backend(value: Any) -> str | None:
    return None if value is None or value in NLI_BACKENDS else f"choose from None, {', '.join(map(repr, NLI_BACKENDS))}"


def _named_split(value: Any) -> str | None:
    """A split that must be named: a labeler is fitted on one split and judged on another (Chapter 10)."""
    return None if value in CORRECTNESS_SPLITS else f"choose from {', '.join(repr(s) for s in CORRECTNESS_SPLITS)}"


def _objective(value: Any) -> str | None:
    return None if value in ("quadratic", "accuracy") else "choose from 'quadratic', 'accuracy'"


def _row_limit(value: Any) -> str | None:
    return None if value is None or (_is_int(value) and value >= 1) else "give None or a positive whole number"


def _weight(value: Any) -> str | None:
    return None if _is_number(value) and 0 <= value <= 1 else "give a number in [0, 1]"


def _confidence(value: Any) -> str | None:
    return None if _is_number(value) and 0 < value < 1 else "give a number strictly between 0 and 1, e.g. 0.95"


def _seed(value: Any) -> str | None:
    return None if _is_int(value) and value >= 0 else "give a whole number >= 0"


def _list_of(name: str, allowed: tuple[Any, ...] | None, check: Callable[[Any], str | None] | None = None,
             ) -> Callable[[Any], str | None]:
    """A check of a non-empty list without repeats whose items are in ``allowed`` (or pass ``check``)."""

    def checked(value: Any) -> str | None:
        if not isinstance(value, (list, tuple)) or not value:
            example = ", ".join(map(str, allowed[:2])) if allowed else "0.5, 0.85"
            return (f"give a non-empty list; with papermill pass lists as YAML: -y '{name}: [{example}]' "
                    f"(-p passes a string)")
        if len(set(map(str, value))) != len(value):
            return "give each value once"
        for item in value:
            problem = check(item) if check else (None if item in allowed else "")
            if problem is not None:
                valid = f"choose from {', '.join(map(str, allowed))}" if allowed else problem
                return f"{item!r} is not allowed: {valid}"
        return None

    return checked


_CHECKS: Mapping[str, Callable[[Any], str | None]] = {
    "profile": _profile,
    "released": _profile,
    "nli_backend": _nli_backend,
    "split": _split,
    "fit_split": _named_split,
    "eval_split": _named_split,
    "objective": _objective,
    "row_limit": _row_limit,
    "alpha": _weight,
    "lam": _weight,
    "confidence": _confidence,
    "n_resamples": _seed,  # a whole number >= 0 (0: no bootstrap where a chapter allows it)
    "release_resamples": _row_limit,  # a positive whole number (None: not allowed by the chapter itself)
    "seed": _seed,
    "metrics": _list_of("metrics", tuple(SCORERS)),
    "alphas": _list_of("alphas", None, _weight),
    "focus": _list_of("focus", LABELS),
}


def _assigned(source: str) -> list[str]:
    """The names a cell assigns at its top level, in order (``a = 1``, ``a: int = 1``)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    names = []
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, ast.AnnAssign) else []
        names += [target.id for target in targets if isinstance(target, ast.Name)]
    return names


def undeclared_parameters(cells: Sequence[str]) -> tuple[list[str], list[str]]:
    """``(undeclared, declared)``: the names papermill injected that the notebook's ``parameters`` cell does not
    assign, and the names that cell assigns, from the sources of the cells a kernel ran, in order (IPython's
    ``In``). Papermill injects its cell (:data:`INJECTED_HEADER`) right after the ``parameters`` cell; without one
    nothing was injected and nothing is undeclared.

    Example:
        >>> ran = ["", "split = 'test'\\nrow_limit = None", "# Parameters\\nsplt = 'validation'\\n", "import caplib"]
        >>> undeclared_parameters(ran)
        (['splt'], ['split', 'row_limit'])
    """
    for index, source in enumerate(cells):
        if index and source.lstrip().startswith(INJECTED_HEADER):
            declared = _assigned(cells[index - 1])
            injected = [name for name in _assigned(source) if not name.startswith("PAPERMILL_")]  # --inject-paths
            return [name for name in injected if name not in declared], declared
    return [], []


def _check_injected() -> None:
    """Raise :class:`ParameterError` for a name papermill injected that the running chapter does not declare."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is None:
        return
    undeclared, declared = undeclared_parameters(list(shell.user_ns.get("In", [])))
    if undeclared:
        name = undeclared[0]
        close = difflib.get_close_matches(name, declared, n=1)
        raise ParameterError(f"parameter {name} is not a parameter of this chapter"
                             + (f" (did you mean {close[0]}?)" if close else "")
                             + f"; its parameters: {', '.join(declared)}")


def check_parameters(**parameters: Any) -> None:
    """Check every given chapter parameter; the first unusable one raises :class:`ParameterError`. In a kernel that
    papermill runs, a name it injected that the chapter does not declare raises first (:func:`undeclared_parameters`).

    Known parameters: ``profile``, ``split``, ``fit_split``, ``eval_split``, ``objective``, ``row_limit``, ``alpha``,
    ``lam``, ``confidence``, ``n_resamples``, ``release_resamples``, ``seed``, ``metrics``, ``alphas``, ``focus``.

    Example:
        >>> check_parameters(row_limit=-5)
        Traceback (most recent call last):
        ...
        caplib.parameters.ParameterError: parameter row_limit=-5: give None or a positive whole number
    """
    unknown = sorted(set(parameters) - set(_CHECKS))
    if unknown:
        raise TypeError(f"check_parameters does not know {unknown}; it checks {', '.join(_CHECKS)}")
    _check_injected()
    for name, value in parameters.items():
        problem = _CHECKS[name](value)
        if problem is not None:
            raise ParameterError(f"parameter {name}={value!r}: {problem}")
