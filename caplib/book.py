"""The chapters' shared glue: what every chapter of the book does the same way, so that a chapter holds its prose,
its ``parameters`` cell and calls.

A chapter's imports cell calls :func:`setup` (headless figures shown as PNG). The data chapters load both datasets
at once with the reason for each one that cannot be read (:func:`load_datasets`, :func:`unavailable_note`); the
metric chapters load CAP-Correctness, select a split and score it in one call (:func:`score_split`), which returns
the rows, their scores, the numbers to record and a summary to show (:class:`SplitScores`). CAP's own chapters build
one :class:`caplib.cap.CAPScorer` (:func:`cap_scorer`) and reuse it for the statements, the scores
(``score_frame(..., cap_scorer=scorer)``) and the probabilities CAP is recomputed from (:func:`probabilities`). Every chapter ends with
:func:`record`.

This module is the top of the house below the chapters: it imports from the rest of ``caplib``, and nothing in
``caplib`` imports it.

Example:
    >>> import pandas as pd
    >>> rows = pd.DataFrame({"question": ["Capital of France?", "Capital of Italy?"],
    ...                      "gold_answer": ["Paris", "Rome"], "answer": ["Paris", "Milan"],
    ...                      "label_semantic": ["exact", "invalid"]})
    >>> scores = score_rows(rows, "offline", ["em", "comet"], runtime=Runtime(cache=False, progress=False))
    >>> scores.run, scores.numbers["signatures"], list(scores.skipped)
    (['em'], {'em': 'em|norm:squad'}, ['comet'])
"""

from __future__ import annotations

import json
import logging
import os
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from caplib.cap import PROBABILITY_COMPONENTS, CAPScorer, StatementGenerator
from caplib.checkpoints import CheckpointNotAvailable
from caplib import data, paper
from caplib.data import select_split
from caplib.datasets import OFFICIAL_DIR, load_dataset_or_reason
from caplib.evaluation import (class_means, head_to_head, monotonicity_violations, pairwise_accuracy,
                                rank_correlation)
from caplib.parameters import ParameterError, check_parameters
from caplib.plots import PRINTED_METRIC
from caplib.profiles import Profile, load_profile
from caplib.runtime import Runtime
from caplib.scoring import ScoredFrame, score_frame
from caplib.taxonomy import LABELS

__all__ = [
    "DATASET_NAMES",
    "MIN_ROWS_PER_CLASS",
    "ParameterError",
    "check_parameters",
    "Datasets",
    "backbone_figures",
    "beside_paper",
    "SplitScores",
    "cap_scorer",
    "class_summary",
    "load_datasets",
    "probabilities",
    "record",
    "score_rows",
    "score_split",
    "setup",
    "statement_generator",
    "unavailable_note",
]

#: How the book names the two datasets (``caplib.data`` names them ``cap_correctness`` and ``cap_statements``).
DATASET_NAMES: Mapping[str, str] = {"cap_correctness": "CAP-Correctness", "cap_statements": "CAP-Statements"}


def setup(device: str | None = None, allow_unpinned: bool = False, dtype: str | None = None,
          nli_backend: str | None = None) -> Runtime:
    """Prepare a chapter's kernel and return the chapter's :class:`caplib.runtime.Runtime`.

    The kernel: matplotlib without a display (Agg, so papermill and CI draw the same figures), returned figures
    shown as PNG, table cells shown whole (pandas cuts text after 50 characters with "..."). The runtime: the chapter's ``device``, ``allow_unpinned`` and ``dtype`` parameters (None: the profile's, ``auto`` = float16 on CUDA,
    float32 on CPU) and ``nli_backend`` (None: torch), without progress bars (a book page is not a terminal).
    Called once by every chapter's imports cell; calling it again changes nothing.

    Example:
        >>> setup(dtype="float32").dtype
        'float32'
        >>> import matplotlib
        >>> matplotlib.get_backend().lower()
        'agg'
    """
    import matplotlib

    matplotlib.use("Agg")
    # bert_score and the Hub client import tqdm.auto, which in a kernel without ipywidgets warns once on stderr;
    # caplib's own bars are plain tqdm (and off in chapters), so nothing here needs the widget
    warnings.filterwarnings("ignore", message="IProgress not found")
    warnings.simplefilter("ignore", data.DroppedRowsWarning)  # said once, in chapter 2's text
    logging.getLogger("caplib.nli").setLevel(logging.ERROR)  # truncated pairs: in the summary (SplitScores.notes)
    pd.set_option("display.max_colwidth", None)  # a table shows a cell's whole text, never cut after 50 characters
    runtime = Runtime(device=device, dtype=dtype, allow_unpinned=allow_unpinned, progress=False,
                      nli_backend=nli_backend or "torch")
    try:
        from IPython import get_ipython
        from matplotlib_inline.backend_inline import set_matplotlib_formats
    except ImportError:  # plain Python: nothing to display
        return runtime
    if get_ipython() is not None:
        set_matplotlib_formats("png")
    return runtime


def unavailable_note(dataset: str, reason: str) -> str:
    """Markdown for a book reader: ``dataset`` could not be read, why, and where the official files are.

    Example:
        >>> print(unavailable_note("CAP-Statements", "no file").splitlines()[0])
        **CAP-Statements is not available, so every computation on it is skipped below** (no number is made up).
    """
    links = ", ".join(f"[{file}]({url})" for file, url in data.OFFICIAL_URLS.items())
    return (f"**{dataset} is not available, so every computation on it is skipped below** (no number is made up)."
            f"\n\n> {reason}\n\nThe official files are listed in `caplib.data.OFFICIAL_URLS`: {links}. "
            f"`caplib fetch --profile paper` downloads them to `{OFFICIAL_DIR}` and locks them.")


def sample_label_passes(rows: pd.DataFrame) -> pd.DataFrame | None:
    """The bundled sample's two blind labelling passes on the rows both labelled (issue 12), or None.

    Columns ``row_id``, ``intended`` (``label_semantic``), ``pass_a`` (``label_semantic_manual``) and ``pass_b``
    (the independent second pass of ``data/sample/second_labels/pass_b/``), for the rows of ``rows`` (a loaded
    CAP-Correctness frame with ``row_id``) that carry both blind labels. None where the pass-B files are absent,
    e.g. outside a caplib checkout, or where ``rows`` holds none of its rows (another data file).
    """
    labels = data.read_label_pass(data.SAMPLE_DIR / "second_labels" / "pass_b")
    if not labels or "row_id" not in rows.columns:
        return None
    pass_b = pd.DataFrame({"row_id": list(labels), "pass_b": list(labels.values())})
    both = rows[rows["label_semantic_manual"].notna()][["row_id", "label_semantic", "label_semantic_manual"]]
    merged = both.merge(pass_b, on="row_id").rename(columns={"label_semantic": "intended",
                                                            "label_semantic_manual": "pass_a"})
    return merged if len(merged) else None


def record(numbers: Mapping[str, Any], path: str | os.PathLike[str]) -> str:
    """Write a chapter's key numbers as indented JSON (numpy numbers as floats) for the appendix and the tests; return
    the sentence a chapter ends with, naming the file (a papermill run writes it into its working folder).

    Example:
        >>> import tempfile, pathlib; target = pathlib.Path(tempfile.mkdtemp()) / "00_demo.numbers.json"
        >>> record({"n": 3, "mean": np.float32(0.5)}, target)[-37:], json.loads(target.read_text())
        ('/00_demo.numbers.json` (`record_to`).', {'n': 3, 'mean': 0.5})
    """
    with open(path, "w") as handle:
        json.dump(numbers, handle, indent=2, default=float)
    return f"Chapter 9 and the tests read this run's numbers from `{os.path.abspath(path)}` (`record_to`)."


# --- The two datasets (chapters 2 and 8) -----------------------------------------------------------------------

@dataclass(frozen=True)
class Datasets:
    """Both datasets of a profile: whole, and restricted to a split and ``row_limit``; None where unreadable.

    Attributes:
        full_correctness, full_statements: every row of the files.
        correctness, statements: the chosen split's first ``row_limit`` rows.
        skipped: ``{"CAP-Correctness" | "CAP-Statements": why it cannot be read}``, only for the missing ones.
    """

    full_correctness: pd.DataFrame | None
    full_statements: pd.DataFrame | None
    correctness: pd.DataFrame | None
    statements: pd.DataFrame | None
    skipped: dict[str, str] = field(default_factory=dict)

    @property
    def notes(self) -> list[str]:
        """One :func:`unavailable_note` per missing dataset, to show the reader."""
        return [unavailable_note(name, reason) for name, reason in self.skipped.items()]


def load_datasets(
    profile: str | os.PathLike[str] | Profile,
    split: str | None = None,
    row_limit: int | None = None,
    *,
    data_path: str | os.PathLike[str] | None = None,
    splits_path: str | os.PathLike[str] | None = None,
    statements_path: str | os.PathLike[str] | None = None,
    statements_splits_path: str | os.PathLike[str] | None = None,
) -> Datasets:
    """CAP-Correctness and CAP-Statements of ``profile`` (name, YAML path or :class:`Profile`; ``offline``: the
    bundled sample; ``paper``: the official files), or the reason each cannot be read; then the rows of ``split``
    (all when None), at most ``row_limit`` of them. Paths override the profile's files.

    Example:
        >>> datasets = load_datasets("offline", "validation", row_limit=5)
        >>> len(datasets.correctness), len(datasets.statements), datasets.skipped
        (5, 5, {})

    Raises:
        ProfileError: ``profile`` is no bundled profile name and no profile file.
    """
    profile = load_profile(profile)
    full_correctness, missing_correctness = load_dataset_or_reason("cap_correctness", profile, data_path,
                                                                   splits_path)
    full_statements, missing_statements = load_dataset_or_reason("cap_statements", profile, statements_path,
                                                                 statements_splits_path)
    correctness, statements = (None if frame is None else select_split(frame, split, row_limit)
                               for frame in (full_correctness, full_statements))
    skipped = {DATASET_NAMES[name]: reason for name, reason in
               (("cap_correctness", missing_correctness), ("cap_statements", missing_statements)) if reason}
    return Datasets(full_correctness, full_statements, correctness, statements, skipped)


# --- One split, every metric (chapters 4-7) --------------------------------------------------------------------

#: Below this many rows in some class, chapters show :attr:`SplitScores.caution` instead of their conclusions.
MIN_ROWS_PER_CLASS = 20
#: Rows of the paper's test split of CAP-Correctness (Sec. 6.3), the size its tables are computed on.
PAPER_TEST_ROWS = 7827


@dataclass(frozen=True)
class SplitScores:
    """The rows a chapter scored, their scores, and what to record and show about them.

    Attributes:
        rows: the selected rows; None when the data could not be read (then ``reason`` says why).
        scored: :func:`caplib.scoring.score_frame`'s result on ``rows`` (None without rows).
        metrics: the metrics asked for, in order.
        split, row_limit: how the rows were selected (for the summary).
        reason: why there are no rows.
    """

    rows: pd.DataFrame | None
    scored: ScoredFrame | None
    metrics: tuple[str, ...]
    split: str | None = None
    row_limit: int | None = None
    reason: str | None = None

    @property
    def available(self) -> bool:
        """Whether there were rows to score (the data could be read)."""
        return self.scored is not None

    @property
    def frame(self) -> pd.DataFrame:
        """The rows with one score column per metric that ran (CAP with its components)."""
        if self.scored is None:
            raise ValueError(f"nothing was scored: {self.reason}")
        return self.scored.frame

    @property
    def run(self) -> list[str]:
        """The metrics that ran, in the order asked for."""
        return [] if self.scored is None else [m for m in self.metrics if m in self.scored.signatures]

    @property
    def signatures(self) -> dict[str, str]:
        """The settings signature of each metric that ran, as text (what the chapters record)."""
        return {} if self.scored is None else {m: str(s) for m, s in self.scored.signatures.items()}

    @property
    def skipped(self) -> dict[str, str]:
        """Why each metric that did not run was skipped (``{"data": ...}`` when there were no rows)."""
        return {"data": str(self.reason)} if self.scored is None else dict(self.scored.skipped)

    @property
    def class_counts(self) -> dict[str, int]:
        """Rows per class of ``label_semantic``, every class of Eq. 1 in order (absent ones with 0); empty without
        rows or labels."""
        if self.rows is None or "label_semantic" not in self.rows.columns:
            return {}
        return {label: int((self.rows["label_semantic"] == label).sum()) for label in LABELS}

    @property
    def caution(self) -> str | None:
        """A warning to show *instead of* a conclusion when some class has fewer than ``MIN_ROWS_PER_CLASS`` rows
        (a ``row_limit`` smoke run): class means and rankings of a handful of rows are noise. None otherwise.

        Example:
            >>> rows = pd.DataFrame({"label_semantic": ["exact"] * 3})
            >>> SplitScores(rows, None, ("em",)).caution.startswith("**Too few rows for a conclusion**")
            True
        """
        thin = {label: count for label, count in self.class_counts.items() if count < MIN_ROWS_PER_CLASS}
        if not thin:
            return None
        listed = ", ".join(f"{label} {count}" for label, count in thin.items())
        return (f"**Too few rows for a conclusion**: {listed} (fewer than {MIN_ROWS_PER_CLASS} rows per class"
                f"{f', row_limit={self.row_limit}' if self.row_limit else ''}). The figures below are shown, but no "
                f"comparison with the paper is drawn from them.")

    @property
    def numbers(self) -> dict[str, Any]:
        """What a chapter records about the scoring (a new dict on every call): ``signatures``, ``skipped`` and,
        with rows, ``n_rows``."""
        recorded: dict[str, Any] = {"signatures": self.signatures, "skipped": self.skipped}
        if self.rows is not None:
            recorded["n_rows"] = len(self.rows)
        return recorded

    @property
    def notes(self) -> str:
        """Markdown, one paragraph per skipped metric with its reason (empty when all ran), and how many NLI pairs
        were longer than the model's input and truncated (the paper's rule; a page shows this, not a log line)."""
        cut = 0 if self.scored is None else int(self.scored.metrics.get("cap", {}).get("truncated_pairs", 0))
        return ("".join(f"\n\n**{metric} skipped**: {reason}" for metric, reason in self.skipped.items())
                + (f"\n\n{cut:,} NLI pair(s) exceed the model's max_length and were truncated." if cut else "")).lstrip()

    @property
    def summary(self) -> str:
        """Markdown for the reader: how many rows of which split, per class, which metrics ran, which did not, and
        the :attr:`caution` when classes are too thin for a conclusion."""
        if self.rows is None:
            return f"**No data, nothing computed.** {self.reason}."
        head = f"**{len(self.rows)} rows**" + ("" if self.split is None else f" of split `{self.split}`")
        if self.split is not None and "split" not in self.rows.columns:
            head += " (no splits file given: all rows)"
        if self.row_limit:
            head += f", first {self.row_limit} only (`row_limit`)"
        if self.class_counts:
            head += f"; classes: {self.class_counts}"
        notes = "\n\n".join(note for note in (self.caution, self.notes) if note)
        return f"{head}. Scored: {', '.join(self.run) or 'nothing'}." + (f"\n\n{notes}" if notes else "")

    def with_shortcut(self, seed: int = 0) -> SplitScores:
        """These scores plus the shortcut baseline (:mod:`caplib.shortcut`) as one more metric, ``"shortcut"``.

        Its scores are out-of-fold (folds grouped by question) from surface features of gold and answer only;
        they need the ``label_semantic`` column to fit. Without rows, or without two labelled questions, the
        baseline is recorded as skipped with the reason, like any metric that cannot run.
        """
        if self.scored is None:
            return self
        from caplib.shortcut import frame_shortcut_scores, shortcut_signature

        frame, metrics = self.scored.frame.copy(), dict(self.scored.metrics)
        try:
            frame["shortcut"] = frame_shortcut_scores(frame, seed=seed)
            metrics["shortcut"] = {"status": "scored", "signature": shortcut_signature(seed=seed)}
        except ValueError as error:
            metrics["shortcut"] = {"status": "skipped", "signature": None, "reason": str(error)}
        scored = ScoredFrame(frame, metrics, list(self.scored.replaced))
        return replace(self, scored=scored, metrics=(*self.metrics, "shortcut"))

    def differences_from_paper(self, profile: str) -> dict[str, str]:
        """What differs from the paper's setup in this run, per cause (``"data"``, ``"cap"``, ``"bertscore"``,
        ``"comet"``), read off the rows and the signatures; only the causes that apply, each a phrase for the
        text beside a paper-vs-run table.

        Example:
            >>> rows = pd.DataFrame({"label_semantic": ["exact"] * 3})
            >>> SplitScores(rows, None, ("em",)).differences_from_paper("offline")["data"][:13]
            'the data (3 r'
        """
        fields = {metric: dict(part.split(":", 1) for part in signature.split("|")[1:] if ":" in part)
                  for metric, signature in self.signatures.items()}
        rows, found = 0 if self.rows is None else len(self.rows), {}
        if profile != "paper" or rows != PAPER_TEST_ROWS:
            sample = " of the bundled sample: real questions, 8 candidates authored for this book"
            found["data"] = (f"the data ({rows:,} rows{sample if profile == 'offline' else ''}; "
                             f"the paper: {PAPER_TEST_ROWS:,} generated rows)")
        nli = fields.get("cap", {}).get("nli", "")
        if nli and "nli-deberta-v3-large" not in nli:
            backbone = "the offline MiniLM cross-encoder trained for this book" if "offline-nli" in nli else nli
            found["cap"] = f"CAP's NLI backbone ({backbone}, not DeBERTa-v3-large)"
        encoder = fields.get("bertscore", {}).get("model", "")
        if encoder and "roberta-large" not in encoder:
            found["bertscore"] = f"BERTScore's encoder ({encoder}, not roberta-large)"
        if "comet" in self.skipped:
            found["comet"] = "COMET did not run (its reason is in the table of signatures)"
        return found

    def not_run(self, metric: str = "cap") -> str:
        """Markdown saying that ``metric`` did not run here, and why."""
        reason = self.skipped.get(metric, "not in `metrics`") if self.scored is not None else self.reason
        return f"**{PRINTED_METRIC.get(metric, metric)} did not run here**: {reason}."


def score_rows(
    rows: pd.DataFrame,
    profile: str | Profile,
    metrics: Sequence[str],
    *,
    runtime: Runtime | None = None,
    regenerate_statements: bool = False,
    split: str | None = None,
    row_limit: int | None = None,
) -> SplitScores:
    """Score ``rows`` with ``metrics`` under ``profile`` (:func:`caplib.scoring.score_frame`, CAP with its
    components); ``split`` and ``row_limit`` only say in the summary how the rows were chosen.

    Example:
        >>> rows = pd.DataFrame({"question": ["2+2?"], "gold_answer": ["four"], "answer": ["four"],
        ...                      "label_semantic": ["exact"]})
        >>> scores = score_rows(rows, "offline", ["rouge_l"], runtime=Runtime(cache=False, progress=False))
        >>> scores.frame["rouge_l"].tolist(), scores.numbers["n_rows"]
        ([1.0], 1)
    """
    scored = score_frame(rows, profile, list(metrics), regenerate_statements=regenerate_statements,
                         runtime=runtime)
    return SplitScores(rows, scored, tuple(metrics), split, row_limit)


def score_split(
    profile: str | os.PathLike[str] | Profile,
    metrics: Sequence[str],
    *,
    split: str | None = "test",
    row_limit: int | None = None,
    data_path: str | os.PathLike[str] | None = None,
    splits_path: str | os.PathLike[str] | None = None,
    runtime: Runtime | None = None,
    shortcut_seed: int | None = None,
) -> SplitScores:
    """Load CAP-Correctness of ``profile`` (or ``data_path``), keep one split's first ``row_limit`` rows and score
    them with every metric of ``metrics``: the first cell of every metric chapter. When the data cannot be read,
    nothing is scored and the reason is kept (``skipped["data"]``), never a made-up number. With ``shortcut_seed``
    the shortcut baseline is added as one more metric (:meth:`SplitScores.with_shortcut`).

    Example:
        >>> scores = score_split("offline", ["em", "rouge_l"], split="validation", row_limit=16,
        ...                      runtime=Runtime(cache=False, progress=False))
        >>> scores.run, scores.numbers["n_rows"], sum(scores.class_counts.values())
        (['em', 'rouge_l'], 16, 16)
        >>> score_split("paper", ["em"], data_path="no/such.csv").skipped["data"]  # doctest: +ELLIPSIS
        '...no/such.csv...'
    """
    frame, reason = load_dataset_or_reason("cap_correctness", profile, data_path, splits_path)
    if frame is None:
        return SplitScores(None, None, tuple(metrics), split, row_limit, reason=reason)
    scores = score_rows(select_split(frame, split, row_limit), profile, metrics, runtime=runtime, split=split,
                        row_limit=row_limit)
    return scores if shortcut_seed is None else scores.with_shortcut(seed=shortcut_seed)


def class_summary(scores: Sequence[float] | pd.Series, labels: Sequence[str] | pd.Series,
                  missing: str = "raise") -> dict[str, Any]:
    """The protocol's measures of one metric (App. C.1): ``class_means``, ``spearman``, ``kendall``,
    ``pairwise_accuracy`` and the violating pairs as ``[higher, lower]`` lists (``violations``); ``missing`` as in
    :func:`caplib.evaluation.monotonicity_violations`.

    Example:
        >>> summary = class_summary([0.9, 0.2, 0.5], ["exact", "invalid", "partial"], missing="skip")
        >>> summary["pairwise_accuracy"], summary["violations"]
        (1.0, [])
    """
    means = class_means(scores, labels)
    spearman, kendall = rank_correlation(scores, labels)
    return {"class_means": means, "spearman": spearman, "kendall": kendall,
            "pairwise_accuracy": pairwise_accuracy(scores, labels),
            "violations": [list(pair) for pair in monotonicity_violations(means, missing=missing)]}


def against_shortcut(table: pd.DataFrame, metric: str = "cap",
                     paired: pd.DataFrame | None = None) -> tuple[dict[str, list[str]], str]:
    """Where ``metric`` is ahead of the shortcut baseline in an :func:`caplib.evaluation.report` table, level with it
    or behind, in words (:func:`caplib.evaluation.head_to_head`: by ``paired``'s tests where they apply).

    Example:
        >>> table = pd.DataFrame({"spearman": [0.6, 0.5], "pairwise_accuracy": [0.7, 0.8], "violations": [3, 3]},
        ...                      index=["cap", "shortcut"])
        >>> against_shortcut(table)[0]
        {'beats': ['spearman'], 'ties': ['violations'], 'loses': ['pairwise_accuracy']}
    """
    verdict, text = head_to_head(table, metric, "shortcut", paired)
    name = PRINTED_METRIC.get(metric, metric)
    return verdict, f"**{name} against the shortcut baseline** (surface cues alone): {text}"


def beside_paper(number: int | pd.DataFrame, this_run: pd.DataFrame | None,
                 columns: Sequence[str] | None = None, *, index: str | Sequence[str] = "metric",
                 decimals: int | Mapping[str, int] = 2, extra_rows: bool = True) -> pd.DataFrame | None:
    """The paper's Tab. ``number`` beside this run's values: for each column the paper's value, this run's
    and the difference (this run minus paper), at the paper's precision; the paper's rows first, in its order,
    then (with ``extra_rows``) the rows only this run has. None without values of this run.

    Args:
        number: a table of :mod:`caplib.paper`, or a frame of the paper's values already indexed like
            ``this_run`` (numbers the paper prints in its text, e.g. the statement quality of Sec. 4).
        this_run: this run's values on the paper's scale (x100, counts as counts), one row per paper row.
            Metric keys (``rouge_l``) are renamed to the printed names (``ROUGE-L``).
        columns: the columns to compare (default: all); only those both frames have are kept, in this order.
        index: the paper table's column(s) that name a row: ``"metric"`` (Tab. 2, 4, 13, 14), ``"label"`` (the
            class rows of Tab. 5 and 17), ``"key"`` (Tab. 8, 16), ``["alpha", "lam"]`` (Tab. 12).
        decimals: the paper's precision, for every column or per column (``{column: decimals}``, the others
            2); 0 marks a count, kept a whole number (pandas ``Int64``, missing values ``<NA>``).
        extra_rows: False keeps the paper's rows only (Tab. 12: its five settings of this run's larger grid).

    Example:
        >>> beside_paper(2, pd.DataFrame({"spearman": [44.25]}, index=["cap"])).loc["CAP"].tolist()
        [60.37, 44.25, -16.12]
        >>> run = pd.DataFrame({"Synthetic": [90.07], "Annotator": [None]}, index=["exact"])
        >>> beside_paper(17, run, index="label").loc["exact"].tolist()  # a table of classes
        [98.79, 90.07, -8.72, 98.62, nan, nan]
        >>> grid = pd.DataFrame({"alpha": [0.85], "lam": [0.3], "violations": [6]})
        >>> grid = grid.set_index(["alpha", "lam"])
        >>> beside_paper(12, grid, ["violations"], index=["alpha", "lam"], decimals={"violations": 0},
        ...              extra_rows=False).loc[(0.85, 0.3)].tolist()  # a count stays a count
        [4, 6, 2]
    """
    if this_run is None or this_run.empty:
        return None
    if isinstance(number, pd.DataFrame):
        table = number
    else:
        keys = [index] if isinstance(index, str) else list(index)
        table = paper.load_table(number).set_index(keys)
    run = this_run.rename(index=lambda key: PRINTED_METRIC.get(key, key) if isinstance(key, str) else key)
    columns = [c for c in (columns or table.columns) if c in table.columns and c in run.columns]
    rows = list(table.index) + ([key for key in run.index if key not in table.index] if extra_rows else [])
    rows = pd.Index(rows, name=table.index.name) if table.index.nlevels == 1 else \
        pd.MultiIndex.from_tuples(rows, names=table.index.names)
    parts: dict[tuple[str, str], pd.Series] = {}
    for column in columns:
        places = decimals if isinstance(decimals, int) else decimals.get(column, 2)
        ours, theirs = (pd.to_numeric(frame[column], errors="coerce").reindex(rows) for frame in (run, table))
        for name, values in (("paper", theirs), ("this run", ours), ("difference", ours - theirs)):
            values = values.round(places)
            parts[(column, name)] = values.astype("Int64") if places == 0 else values
    return pd.DataFrame(parts, index=rows)


# --- One CAP scorer for a chapter (chapters 3 and 8) -----------------------------------------------------------

def cap_scorer(profile: str | Profile, runtime: Runtime | None = None,
               **overrides: Any) -> tuple[CAPScorer | None, str | None]:
    """:meth:`caplib.cap.CAPScorer.from_profile`, or ``(None, reason)`` when a checkpoint is not on this machine or
    the profile runs no model (released scores: its CAP comes from :func:`caplib.scoring.score_frame` all the same).

    Example:
        >>> scorer, missing = cap_scorer("offline", Runtime(device="cpu"), alpha=0.5)  # doctest: +SKIP
        >>> scorer.alpha, missing  # doctest: +SKIP
        (0.5, None)
    """
    settings = load_profile(profile)
    if settings.scores_file is not None:  # released scores: CAP without a model
        return None, f"profile {settings.name!r} runs no model: its CAP is the authors' released per-row values"
    try:
        return CAPScorer.from_profile(settings, runtime, **overrides), None
    except CheckpointNotAvailable as error:
        return None, str(error)


def backbone_figures(profile: Profile) -> pd.DataFrame | None:
    """The offline NLI backbone's held-out figures (:func:`caplib.offline_nli.artifact.heldout_figures`) when
    ``profile`` scores with it; None for any other NLI model or before the backbone is built.

    Example:
        >>> from caplib.profiles import load_profile
        >>> backbone_figures(load_profile("paper")) is None
        True
    """
    from caplib.checkpoints import BUILTIN_OFFLINE_NLI
    from caplib.offline_nli.artifact import heldout_figures

    return heldout_figures() if profile.nli_model == BUILTIN_OFFLINE_NLI else None


def statement_generator(scorer: CAPScorer | None,
                        missing: str | None = None) -> tuple[StatementGenerator | None, str | None]:
    """The scorer's statement generator (its profile's), or ``(None, reason)``: ``missing`` when there is no
    scorer, or why the generator's checkpoint cannot be loaded.

    Example:
        >>> statement_generator(None, "no NLI model here")
        (None, 'no NLI model here')
    """
    if scorer is None:
        return None, missing or "CAP's scorer is not available"
    try:
        return scorer.statement_generator, None
    except CheckpointNotAvailable as error:
        return None, f"statement model {scorer.statement_model} not available: {error}"


def probabilities(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """The NLI probabilities of both directions from CAP's component columns (``PROBABILITY_COMPONENTS``): forward
    (gold -> prediction) and backward, each of shape ``(n, 3)``, columns entailment, neutral, contradiction.
    CAP can be recomputed from them for any alpha and lambda (:func:`caplib.cap.cap`) without running NLI again.

    Example:
        >>> parts = pd.DataFrame([[0.9, 0.08, 0.02, 0.2, 0.7, 0.1]], columns=list(PROBABILITY_COMPONENTS))
        >>> forward, backward = probabilities(parts)
        >>> forward.tolist(), backward.tolist()
        ([[0.9, 0.08, 0.02]], [[0.2, 0.7, 0.1]])
    """
    values = frame[list(PROBABILITY_COMPONENTS)].to_numpy()
    return values[:, :3], values[:, 3:]
