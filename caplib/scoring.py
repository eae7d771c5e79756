"""Score a frame of (question, gold answer, answer[, premise, hypothesis]) rows with CAP and the baselines of a
profile: the one place where the CLI's ``caplib score`` and the book's chapters turn data into score columns.

Score columns are named exactly as the metric (``cap``, ``bleu``, ``rouge_l``, ``meteor``, ``bertscore``,
``comet``, ``em``, ``acc``); CAP's components keep the ``cap_`` prefix of :data:`caplib.cap.COMPONENT_COLUMNS`.
A metric that cannot run here (a checkpoint that is not available offline) is *skipped with its reason* and has
no column: never a made-up score.

Example:
    >>> import pandas as pd
    >>> rows = pd.DataFrame({"question": ["Capital of France?"], "gold_answer": ["Paris"], "answer": ["Paris"]})
    >>> scored = score_frame(rows, "offline", metrics=("em", "rouge_l"), progress=False)
    >>> scored.frame[["em", "rouge_l"]].values.tolist()
    [[1.0, 1.0]]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import pandas as pd

from caplib import baselines
from caplib.cache import ContentCache
from caplib.profiles import Profile, load_profile

#: Every metric a profile can score, in the order of the paper's tables (CAP first).
METRIC_NAMES: tuple[str, ...] = ("cap", "bleu", "rouge_l", "meteor", "bertscore", "comet", "em", "acc")


@dataclass(frozen=True)
class ScoredFrame:
    """The input rows with one column per scored metric, and what happened to each metric.

    ``metrics`` maps a metric name to ``{"status": "scored"|"skipped", "signature": ..., "reason"?: ...,
    "statements"?: ...}``; :attr:`signatures` and :attr:`skipped` are views of it.
    """

    frame: pd.DataFrame
    metrics: dict[str, dict[str, Any]] = field(default_factory=dict)
    replaced: list[str] = field(default_factory=list)  #: input columns that a new score replaced

    @property
    def signatures(self) -> dict[str, str]:
        """Settings signature of each scored metric (sacrebleu style)."""
        return {name: entry["signature"] for name, entry in self.metrics.items() if entry["status"] == "scored"}

    @property
    def skipped(self) -> dict[str, str]:
        """Reason of each metric that could not run here."""
        return {name: entry["reason"] for name, entry in self.metrics.items() if entry["status"] == "skipped"}


def _score_cap(frame: pd.DataFrame, profile: Profile, gold_column: str | None, regenerate_statements: bool,
               components: bool, options: dict[str, Any]) -> tuple[pd.DataFrame, dict[str, Any]]:
    """CAP (Eq. 3) on the rows' own statements, or on statements made by the profile's generator."""
    from caplib.cap import CAPScorer

    given = {"premise", "hypothesis"} <= set(frame.columns)
    regenerate = regenerate_statements or not given
    if regenerate and (gold_column is None or not {"question", "answer"} <= set(frame.columns)):
        raise ValueError("CAP needs premise/hypothesis statements, or the columns question, gold answer and answer "
                         "to generate them")
    if not regenerate:
        options = {**options, "statement_model": None}  # the statements are given; load no generator
    scorer = CAPScorer.from_profile(profile, **options)
    if regenerate:
        if profile.statement_model is None:
            raise ValueError(f"profile {profile.name!r} names no statement model; give premise/hypothesis columns")
        result = scorer.score_answers(frame["question"], frame[gold_column], frame["answer"], return_components=True)
        origin = f"regenerated with {profile.statement_model}"
    else:
        # Sec. 6.3: the released CAP-Correctness carries its statements; score those, as the paper did.
        result = scorer.score(frame["premise"], frame["hypothesis"], return_components=True)
        origin = "input columns premise (gold) and hypothesis (answer)"
    entry = {"status": "scored", "signature": scorer.signature(), "statements": origin,
             "truncated_pairs": int(scorer.nli.last_stats.get("truncated", 0))}
    return (result if components else result[["cap"]]).set_index(frame.index), entry


def _score_baseline(metric: str, golds: list[str], answers: list[str], questions: list[str] | None,
                    options: dict[str, Any], runtime: dict[str, Any], cache: bool, cache_dir: str | None
                    ) -> np.ndarray:
    """``baselines.score`` for the rows not yet in the content cache (keyed by the metric's signature + texts)."""
    if not cache:
        return baselines.score(metric, golds, answers, questions=questions, **options, **runtime)
    store = ContentCache("baselines", {"signature": baselines.signature(metric, **options)}, directory=cache_dir)
    items = [f"{gold}\x1f{answer}\x1f{question}" for gold, answer, question
             in zip(golds, answers, questions or [""] * len(golds))]
    found = store.get_many(items)
    todo = [i for i, item in enumerate(items) if item not in found]
    if todo:
        values = baselines.score(metric, [golds[i] for i in todo], [answers[i] for i in todo],
                                 questions=[questions[i] for i in todo] if questions else None, **options, **runtime)
        computed = {items[i]: float(value) for i, value in zip(todo, values)}
        store.put_many(computed)
        found.update(computed)
    return np.array([found[item] for item in items], dtype=float)


def score_frame(
    frame: pd.DataFrame,
    profile: str | Profile = "offline",
    metrics: Sequence[str] = METRIC_NAMES,
    *,
    gold_column: str | None = "gold_answer",
    regenerate_statements: bool = False,
    components: bool = True,
    device: str | None = None,
    batch_size: int | None = None,
    dtype: str | None = None,
    cache: bool = True,
    cache_dir: str | None = None,
    progress: bool = True,
    allow_unpinned: bool = False,
    cpu_workers: int | None = None,
) -> ScoredFrame:
    """Add one score column per metric to ``frame`` under ``profile`` (name, YAML path or :class:`Profile`).

    Baselines compare ``gold_column`` with ``answer`` (COMET also reads ``question``); CAP scores the rows'
    ``premise``/``hypothesis`` statements when present, else (or with ``regenerate_statements``) generates them
    with the profile's statement generator. Unavailable metrics are skipped with their reason. Baseline scores are
    cached by content like CAP's NLI probabilities (``cache=False`` recomputes). Score columns the
    input already has (a file written by ``caplib score``) are replaced and listed in ``replaced``.
    ``cpu_workers``: NLI batches scored at a time on CPU (:class:`caplib.nli.NLIScorer`).

    Example:
        >>> rows = pd.DataFrame({"question": ["2+2?"], "gold_answer": ["four"], "answer": ["five"]})
        >>> score_frame(rows, metrics=("em",), progress=False).frame["em"].tolist()
        [0.0]
    """
    from caplib.nli import CheckpointNotAvailable

    profile = profile if isinstance(profile, Profile) else load_profile(profile)
    unknown = [name for name in metrics if name not in METRIC_NAMES]
    if unknown or not metrics:
        raise ValueError(f"unknown metric(s) {unknown or list(metrics)}; choose from {', '.join(METRIC_NAMES)}")
    columns: list[pd.DataFrame | pd.Series] = [frame]
    report: dict[str, dict[str, Any]] = {}
    for metric in dict.fromkeys(metrics):
        if metric == "cap":
            options: dict[str, Any] = {"device": device, "cache": cache, "progress": progress,
                                       "allow_unpinned": allow_unpinned, "cache_dir": cache_dir,
                                       "cpu_workers": cpu_workers}
            options |= {key: value for key, value in (("batch_size", batch_size), ("dtype", dtype))
                        if value is not None}
            try:
                scores, report["cap"] = _score_cap(frame, profile, gold_column, regenerate_statements, components,
                                                   options)
            except CheckpointNotAvailable as exc:
                report["cap"] = {"status": "skipped", "reason": str(exc), "signature": None}
                continue
            columns.append(scores)
            continue
        if gold_column is None or not {gold_column, "answer"} <= set(frame.columns):
            raise ValueError(f"{metric} compares the gold answer with the answer: the frame needs the columns "
                             f"{gold_column or 'gold_answer'} and answer")
        options = profile.metric_options(metric)
        runtime = {"device": device, "batch_size": batch_size, "progress": progress}
        questions = list(frame["question"]) if "question" in frame.columns else None
        try:
            values = _score_baseline(metric, list(frame[gold_column]), list(frame["answer"]), questions, options,
                                     runtime, cache, cache_dir)
        except baselines.MetricUnavailable as exc:
            report[metric] = {"status": "skipped", "reason": exc.reason,
                              "signature": baselines.signature(metric, **options)}
            continue
        columns.append(pd.Series(values, index=frame.index, name=metric))
        report[metric] = {"status": "scored", "signature": baselines.signature(metric, **options)}
    new = [name for part in columns[1:] for name in ([part.name] if isinstance(part, pd.Series) else part.columns)]
    replaced = [name for name in new if name in frame.columns]
    return ScoredFrame(pd.concat([frame.drop(columns=replaced), *columns[1:]], axis=1), report, replaced)
