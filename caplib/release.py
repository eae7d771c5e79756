"""The authors' official release: which files, where upstream, and its per-row scores and evaluation output.

The paper's authors publish their data, per-row scores and evaluation output in the public GitHub repository
:data:`REPOSITORY` (the poster's address, :data:`POSTER_REPOSITORY`, names the same project). caplib reads five of
its files (:data:`RELEASE_FILES`), each pinned to the upstream commit it was published at; ``caplib fetch``
(:mod:`caplib.fetch`) downloads them, or copies them from a local mirror with the upstream layout, into a profile's
data directory, flat, and locks each with its SHA-256:

* ``CAP-Correctness.csv``, ``CAP-Correctness-splits.csv``, ``CAP-Statements.csv`` (read by :mod:`caplib.data`);
* ``scores.json``: the authors' per-row scores over 8,826 rows (row 4306, the one without an answer, is absent):
  ``row_id`` (the row of CAP-Correctness.csv), ``split``, ``label`` (= ``label_semantic``), ``dataset``, the five
  metrics :data:`SCORE_METRICS` and the paper backbone's NLI probabilities per direction, ``pe_f``, ``pn_f``,
  ``pc_f`` (premise -> hypothesis, i.e. gold -> prediction) and ``pe_r``, ``pn_r``, ``pc_r`` (the reverse),
  :data:`PROBABILITY_KEYS`, read by :func:`load_scores` as a frame;
* ``results.json``: the authors' evaluation of the test split (:func:`load_results`).

The files' licences: labels and statements CC BY 4.0 (attribute the repository); questions and answers keep their
sources' licences (ARC CC BY-SA 4.0, OpenBookQA Apache-2.0, MMLU MIT). Nothing of the release is committed to
caplib's repository.

Example:
    >>> [file.name for file in RELEASE_FILES][:3]
    ['CAP-Correctness.csv', 'CAP-Correctness-splits.csv', 'CAP-Statements.csv']
    >>> release_file("scores.json").url.split("/")[-3:]
    ['docs', 'data', 'scores.json']
"""

from __future__ import annotations

import functools
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from caplib.taxonomy import LABELS, normalize_label

__all__ = ["CSV_FILES", "DATA_URL_ENV", "MIRROR_ENV", "POSTER_REPOSITORY", "PROBABILITY_KEYS", "RELEASE_FILES",
           "REPOSITORY", "SCORE_FILES", "SCORE_METRICS", "ReleaseError", "ReleasedFile", "is_scores_file",
           "load_results", "load_scores", "release_file"]

#: The authors' repository (MIRROR.md of the verified copy; the data files sit at the paths the poster gives).
REPOSITORY = "ElitsaY/Correctness_eval"
#: The address printed on the poster: a documented alias of :data:`REPOSITORY`, not fetched from.
POSTER_REPOSITORY = "ElitsaY/EMNLP-2026-How-Correct-Is-Your-Answer-"
#: Environment variable naming a local folder with the release's upstream layout (``data/...``, ``docs/data/...``):
#: ``caplib fetch`` copies the files from there instead of downloading them (``--mirror``).
MIRROR_ENV = "CAPLIB_MIRROR"
#: Environment variable replacing the base of every download URL (an HTTP mirror; the upstream paths stay).
DATA_URL_ENV = "CAPLIB_DATA_URL"
#: The metrics ``scores.json`` carries (no COMET column), in the order of the paper's Tab. 2.
SCORE_METRICS: tuple[str, ...] = ("cap", "bleu", "rouge_l", "meteor", "bertscore")
_RAW_BASE = "https://raw.githubusercontent.com"
#: scores.json's NLI probabilities: entailment, neutral, contradiction of premise -> hypothesis (gold -> prediction,
#: ``_f``), then of the reverse direction (``_r``).
PROBABILITY_KEYS: tuple[str, ...] = ("pe_f", "pn_f", "pc_f", "pe_r", "pn_r", "pc_r")


class ReleaseError(ValueError):
    """A release file is not what the release publishes (its shape, its keys, its row ids); names file and key."""


@dataclass(frozen=True)
class ReleasedFile:
    """One file of the release: its local name (flat in a profile's data directory), its path upstream and the
    upstream commit it is pinned to."""

    name: str
    path: str
    commit: str

    @property
    def upstream_url(self) -> str:
        """The raw file of :data:`REPOSITORY` at the pinned commit."""
        return f"{_RAW_BASE}/{REPOSITORY}/{self.commit}/{self.path}"

    @property
    def url(self) -> str:
        """Where it is downloaded from: ``$CAPLIB_DATA_URL/<path>`` when that is set (a copy served over HTTP with
        the upstream layout), else :attr:`upstream_url`."""
        base = os.environ.get(DATA_URL_ENV)
        return f"{base.rstrip('/')}/{self.path}" if base else self.upstream_url


#: The five files, pinned to the commits of the verified copy (MIRROR.md): the three CSVs, then the scores.
RELEASE_FILES: tuple[ReleasedFile, ...] = (
    ReleasedFile("CAP-Correctness.csv", "data/CAP-Correctness.csv", "4491248acba112183356df05c1f74fc0d7ece826"),
    ReleasedFile("CAP-Correctness-splits.csv", "data/CAP-Correctness-splits.csv",
                 "fef4a58cf08465cb829142a3f1548f800d4cdf04"),
    ReleasedFile("CAP-Statements.csv", "data/CAP-Statements.csv", "bdc6a5a4b68e74f868aa6d105d0bb6a15bcfd026"),
    ReleasedFile("scores.json", "docs/data/scores.json", "fef4a58cf08465cb829142a3f1548f800d4cdf04"),
    ReleasedFile("results.json", "docs/data/results.json", "c7e8ed3fe970f2697489e0d207cf9cc349c90f4d"),
)
#: The data files every profile with official data reads, and the two a profile of released scores adds.
CSV_FILES: tuple[str, ...] = tuple(file.name for file in RELEASE_FILES[:3])
SCORE_FILES: tuple[str, ...] = tuple(file.name for file in RELEASE_FILES[3:])


def release_file(name: str) -> ReleasedFile:
    """The :class:`ReleasedFile` called ``name`` (``"scores.json"``, ``"CAP-Correctness.csv"``, ...).

    Example:
        >>> release_file("CAP-Correctness.csv").commit[:7]
        '4491248'
    """
    for file in RELEASE_FILES:
        if file.name == name:
            return file
    raise KeyError(f"no release file {name!r}; the release's files: {[file.name for file in RELEASE_FILES]}")


def is_scores_file(content: Any) -> bool:
    """Whether parsed JSON has the shape of the release's ``scores.json`` (parallel arrays with ``row_id``,
    ``label`` and ``metrics``): what ``caplib evaluate`` checks to read one directly.

    Example:
        >>> is_scores_file({"row_id": [0], "label": ["exact"], "metrics": ["cap"], "cap": [0.9]}), is_scores_file([])
        (True, False)
    """
    return isinstance(content, dict) and {"row_id", "label", "metrics"} <= set(content) and \
        isinstance(content["metrics"], list)


@functools.lru_cache(maxsize=4)
def _scores_frame(path: str, size: int, mtime: int) -> pd.DataFrame:
    try:
        content = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ReleaseError(f"{path}: not readable as the release's scores.json ({error})") from error
    if not is_scores_file(content):
        raise ReleaseError(f"{path}: not the release's scores.json (a JSON object of parallel arrays with row_id, "
                           f"label, metrics and one array per metric); fetch it with `caplib fetch --profile released`")
    metrics = [str(metric) for metric in content["metrics"]]
    columns = ["row_id", "split", "label", "dataset", *metrics, *PROBABILITY_KEYS]
    missing = [key for key in columns if key not in content]
    if missing:
        raise ReleaseError(f"{path}: key(s) {missing} missing; the release's scores.json has {columns}")
    lengths = {key: len(content[key]) for key in columns}
    if len(set(lengths.values())) != 1:
        raise ReleaseError(f"{path}: the arrays differ in length ({lengths}); the file is truncated or edited")
    frame = pd.DataFrame({key: content[key] for key in columns})
    unknown = sorted(set(frame["label"]) - set(LABELS))
    if unknown:
        raise ReleaseError(f"{path}: key 'label' holds {unknown}, not labels of the taxonomy ({list(LABELS)})")
    if frame["row_id"].duplicated().any():
        raise ReleaseError(f"{path}: row_id {frame.row_id[frame.row_id.duplicated()].iloc[0]} appears twice")
    for key in [*metrics, *PROBABILITY_KEYS]:
        values = frame[key].to_numpy(dtype=float)
        if not np.isfinite(values).all():
            raise ReleaseError(f"{path}: key {key!r} has a missing or non-finite value at position "
                               f"{int(np.flatnonzero(~np.isfinite(values))[0])}")
        frame[key] = values
    frame["label"] = frame["label"].map(normalize_label)
    frame.attrs["metrics"] = tuple(metrics)
    return frame


def load_scores(path: str | os.PathLike[str]) -> pd.DataFrame:
    """The release's ``scores.json`` as a frame, one row per scored row of CAP-Correctness.

    Columns: ``row_id``, ``split``, ``label`` (normalized), ``dataset``, one column per metric of the file (in the
    release :data:`SCORE_METRICS`, ``attrs["metrics"]``) and the six NLI probabilities of the paper's backbone,
    :data:`PROBABILITY_KEYS`. Read once per file version (memoised by path, size and modification time); a copy
    is returned.

    Example:
        >>> scores = load_scores("data/official/scores.json")  # doctest: +SKIP
        >>> len(scores), scores.split.value_counts().to_dict()  # doctest: +SKIP
        (8826, {'test': 7826, 'validation': 1000})

    Raises:
        ReleaseError: the file is unreadable or not shaped like the release's (the message names the key).
    """
    resolved = Path(path).expanduser().resolve()
    if not resolved.is_file():
        raise FileNotFoundError(f"no such file: {resolved}; `caplib fetch --profile released` fetches the release's "
                                f"scores.json (or --mirror DIR copies it from a local copy of {REPOSITORY})")
    stat = resolved.stat()
    frame = _scores_frame(str(resolved), stat.st_size, stat.st_mtime_ns)
    copy = frame.copy()
    copy.attrs = dict(frame.attrs)
    return copy


def load_results(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The release's ``results.json``: the authors' evaluation of the test split (``correlations``,
    ``descriptives``, ``class_pairs``, ``monotonicity``, ``paired_differences`` as lists of records, ``severity``,
    ``hard_pairs``, ``n_bootstrap``, ``rows``, ...).

    Example:
        >>> load_results("data/official/results.json")["n_bootstrap"]  # doctest: +SKIP
        10000

    Raises:
        ReleaseError: not the release's results.json.
    """
    try:
        content = json.loads(Path(path).expanduser().read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ReleaseError(f"{path}: not readable as the release's results.json ({error})") from error
    needed = ("correlations", "descriptives", "class_pairs", "monotonicity", "paired_differences", "n_bootstrap")
    if not isinstance(content, dict) or any(key not in content for key in needed):
        raise ReleaseError(f"{path}: not the release's results.json (an object with {list(needed)})")
    return content
