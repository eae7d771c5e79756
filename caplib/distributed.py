"""Scoring a corpus on Ray Data: the rows in blocks, one scorer per actor, the results in input order.

``caplib score ... --engine ray`` and ``score_frame(..., engine="ray")`` come here (issue 19). The rows, read and
validated by caplib's own reader as for the local engine, become a Ray dataset of blocks of ``block_rows`` rows;
``map_batches`` sends each block to an actor of a pool of ``actors`` (each builds its scorers once: the CAP scorer
with its NLI model and the baselines, ``num_gpus=1`` per actor where GPUs exist, one CPU otherwise); the blocks come
back in input order (``preserve_order``) and are checked against their positions. ``address`` joins a running
cluster (``ray.init(address=...)``); otherwise a local Ray starts and stops with the job.

Scores do not depend on the engine: a score depends only on its own inputs and the settings in its signature,
never on the other rows of a call (fixed tiles, ``caplib.batching``), so a block scored by any actor equals the same
rows scored in one local call, bit for bit (tested). Actors write every block's model outputs to the on-disk
content cache as they finish it, so a job that is killed and started again computes only the blocks it had not
finished.

Ray is an optional dependency: ``pip install 'caplib[distributed]'`` (``make test`` installs it).

Example:
    >>> import pandas as pd
    >>> rows = pd.DataFrame({"x": range(5)})
    >>> class Double:
    ...     def __call__(self, block):
    ...         return block.assign(y=2 * block["x"])
    >>> pd.concat(map_blocks(rows, Double, {}, actors=1, block_rows=2))["y"].tolist()  # doctest: +SKIP
    [0, 2, 4, 6, 8]
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Iterator, Mapping
from typing import Any

import pandas as pd

__all__ = ["BLOCK_ROWS", "POSITION", "map_blocks", "ray_version"]

#: Rows per block (a Ray Data block and one actor call): large enough that a block fills many NLI tiles, small
#: enough that an interrupted job loses little and that two actors share a small file.
BLOCK_ROWS = 256
#: The column that carries each row's position through Ray (checked on the way back, then dropped).
POSITION = "__caplib_position"


def ray_version() -> str:
    """The installed Ray's version.

    Raises:
        ValueError: Ray (with Ray Data) is not installed.
    """
    try:
        import ray
        import ray.data  # noqa: F401
    except ImportError:
        raise ValueError("the ray engine needs Ray Data: pip install 'caplib[distributed]'") from None
    return str(ray.__version__)


def map_blocks(frame: pd.DataFrame, actor: type, actor_kwargs: Mapping[str, Any], *, actors: int = 1,
               block_rows: int = BLOCK_ROWS, address: str | None = None, num_gpus: float = 0,
               progress: bool = False) -> Iterator[pd.DataFrame]:
    """Each block of ``frame`` through ``actor(**actor_kwargs)(block)`` on a Ray actor pool, yielded in input order.

    ``actor`` is a class whose instances are called with a block (a DataFrame, ``frame``'s index reset, plus the
    ``POSITION`` column) and return a DataFrame with the same rows and ``POSITION``; one instance per actor, built
    once. A local Ray is started when none is running and no ``address`` is given, and shut down at the end.

    Raises:
        ValueError: Ray is not installed, ``actors`` or ``block_rows`` below 1.
        RuntimeError: a block came back out of order or with other rows.
    """
    ray_version()
    import ray

    if actors < 1 or block_rows < 1:
        raise ValueError(f"actors and block_rows must be positive, got {actors} and {block_rows}")
    started = not ray.is_initialized()
    if started:
        local = {} if address else {"num_cpus": actors}  # a CPU per actor: Ray starts no idle workers beyond
        ray.init(address=address, include_dashboard=False, log_to_driver=False, configure_logging=False,
                 logging_level=logging.WARNING, **local)
    try:
        context = ray.data.DataContext.get_current()
        context.execution_options.preserve_order = True
        context.enable_progress_bars = progress
        context.print_on_execution_start = False
        # Ray Data logs each execution's start, end and settings; with progress off, only its errors are shown
        logging.getLogger("ray.data").setLevel(logging.INFO if progress else logging.ERROR)
        rows = frame.reset_index(drop=True).assign(**{POSITION: range(len(frame))})
        blocks = [rows.iloc[start:start + block_rows] for start in range(0, len(rows), block_rows)]
        with warnings.catch_warnings():  # max_restarts is passed through ray_remote_args, deprecated in Ray 2.60
            warnings.simplefilter("ignore", DeprecationWarning)
            dataset = ray.data.from_pandas(blocks).map_batches(
                actor, fn_constructor_kwargs=dict(actor_kwargs), compute=ray.data.ActorPoolStrategy(size=actors),
                batch_size=None, batch_format="pandas", num_cpus=0 if num_gpus else 1, num_gpus=num_gpus,
                max_restarts=0)  # a failed actor fails the job; its finished blocks are in the cache for the rerun
        expected = 0
        for block in dataset.iter_batches(batch_format="pandas", batch_size=None, prefetch_batches=1):
            positions = block[POSITION].tolist()
            if positions != list(range(expected, expected + len(block))):
                raise RuntimeError(f"Ray returned rows {positions[:3]}... where rows from {expected} were due")
            expected += len(block)
            yield block.drop(columns=[POSITION])
        if expected != len(frame):
            raise RuntimeError(f"Ray returned {expected} of {len(frame)} rows")
    finally:
        if started:
            ray.shutdown()
