"""What papermill loads of caplib when it starts: a chapter's bad parameter ends ``papermill`` on one line.

A chapter stops on a parameter it cannot use with a :class:`caplib.parameters.ParameterError` (one line naming the
parameter and its valid values). Papermill's command line re-raises a notebook's error as its own
``PapermillExecutionError``, which Python prints under a traceback through click and papermill (about 30 lines
before the one that matters). Papermill imports every ``papermill.engine`` entry point when it starts; caplib
registers this module's :data:`ENGINE` there (papermill's own nbclient engine under the name ``caplib``, so
``--engine caplib`` runs exactly as the default does), and importing it installs :func:`one_line_for_parameter_errors`
as ``sys.excepthook``: a run that ends on a ``ParameterError`` prints ``ParameterError: ...`` and exits with status 1;
every other error is printed as before.

Example:
    >>> from papermill.exceptions import PapermillExecutionError
    >>> error = PapermillExecutionError(3, 3, "", "ParameterError", "parameter split='tset': choose from ...", [])
    >>> one_line_for_parameter_errors(type(error), error, None, stream=sys.stdout)
    ParameterError: parameter split='tset': choose from ...
"""

from __future__ import annotations

import sys
from types import TracebackType
from typing import Any, TextIO

__all__ = ["ENGINE", "one_line_for_parameter_errors"]

_PREVIOUS_HOOK = sys.excepthook


def __getattr__(name: str) -> Any:
    """``ENGINE``, the engine the entry point names: papermill's default, unchanged (the entry point exists to load
    this module). Looked up only when asked for, so that importing this module never imports papermill: papermill
    asks for it while its own ``papermill.engines`` is being imported, and importing papermill from here first (as
    a plain import of this module would) made that a circular import."""
    if name == "ENGINE":
        from papermill.engines import NBClientEngine

        return NBClientEngine
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def one_line_for_parameter_errors(kind: type[BaseException], error: BaseException, trace: TracebackType | None,
                                  stream: TextIO | None = None) -> None:
    """``sys.excepthook`` for papermill's process: a notebook stopped by a ``ParameterError`` is reported as that
    one line on ``stream`` (stderr); any other exception goes to the hook that was installed before."""
    from papermill.exceptions import PapermillExecutionError

    if isinstance(error, PapermillExecutionError) and error.ename == "ParameterError":
        print(f"{error.ename}: {error.evalue}", file=stream or sys.stderr)
        return
    _PREVIOUS_HOOK(kind, error, trace)


sys.excepthook = one_line_for_parameter_errors
