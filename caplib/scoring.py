"""Score a frame of (question, gold answer, answer[, premise, hypothesis]) rows with CAP and the baselines of a
profile: the one place where the CLI's ``caplib score`` and the book's chapters turn data into score columns.

Every metric is registered in :data:`SCORERS` (CAP and decomposed CAP, :mod:`caplib.cap_decomposed`, beside the
baselines of :mod:`caplib.baselines`), and :func:`score_frame` loops once over the metrics asked for, with one
:class:`caplib.runtime.Runtime` for all. Score columns are named exactly as the metric (``cap``, ``cap_decomposed``,
``bleu``, ``rouge_l``, ``meteor``, ``bertscore``, ``comet``, ``em``, ``acc``); CAP's components keep the ``cap_``
prefix of :data:`caplib.cap.COMPONENT_COLUMNS`, decomposed CAP's are :data:`caplib.cap_decomposed.COLUMNS`. ``long_inputs="chunk"`` scores NLI pairs longer than
the profile's ``max_length`` in sentence chunks instead of truncating them (:mod:`caplib.nli`); the CAP report
entries count ``truncated_pairs`` and ``chunked_pairs``.
A metric that cannot run here (a checkpoint that is not on this machine) is *skipped with its reason* and has
no column: never a made-up score. Baseline scores are cached by content like CAP's NLI probabilities.

Example:
    >>> import pandas as pd
    >>> rows = pd.DataFrame({"question": ["Capital of France?"], "gold_answer": ["Paris"], "answer": ["Paris"]})
    >>> scored = score_frame(rows, "offline", metrics=("em", "rouge_l"), runtime=Runtime(progress=False))
    >>> scored.frame[["em", "rouge_l"]].values.tolist()
    [[1.0, 1.0]]
    >>> str(scored.signatures["em"])
    'em|norm:squad'
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd

from caplib import baselines
from caplib.cache import cached_values
from caplib import release
from caplib.cap import COMPONENT_COLUMNS, PAPER_ALPHA, PAPER_LAM, PROBABILITY_COMPONENTS, CAPScorer, cap
from caplib.cap import directional_score
from caplib.cap_decomposed import DecomposedCAPScorer
from caplib.checkpoints import CheckpointNotAvailable, pick_device, sha256_of
from caplib.distributed import BLOCK_ROWS, POSITION, map_blocks, ray_version
from caplib.profiles import Profile, load_profile
from caplib.runtime import Runtime
from caplib.signature import Signature

__all__ = ["EXTENSION_METRICS", "METRIC_NAMES", "SCORERS", "BlockScorer", "ScoredFrame", "ScoringJob", "score_frame"]


@dataclass(frozen=True)
class ScoringJob:
    """What every registered metric gets: the rows, the profile, the runtime and how to read the rows."""

    frame: pd.DataFrame
    profile: Profile
    runtime: Runtime
    gold_column: str | None = "gold_answer"
    regenerate_statements: bool = False
    components: bool = True
    cap_scorer: CAPScorer | None = None  #: a scorer the caller already holds (else one is built from the profile)
    long_inputs: str | None = None  #: ``"truncate"`` or ``"chunk"`` for CAP's NLI pairs (None: CAPScorer's default)


#: A registered metric: a job -> (its score columns, or None when skipped; its report entry).
FrameScorer = Callable[[ScoringJob], "tuple[pd.DataFrame | None, dict[str, Any]]"]


@dataclass(frozen=True)
class ScoredFrame:
    """The input rows with one column per scored metric, and what happened to each metric.

    ``metrics`` maps a metric name to ``{"status": "scored"|"skipped", "signature": Signature | None,
    "reason"?: ..., "statements"?: ...}``; :attr:`signatures` and :attr:`skipped` are views of it.
    """

    frame: pd.DataFrame
    metrics: dict[str, dict[str, Any]] = field(default_factory=dict)
    replaced: list[str] = field(default_factory=list)  #: input columns that a new score replaced
    engine: dict[str, Any] = field(default_factory=lambda: {"name": "local"})  #: what ran it (ray: versions, devices)

    @property
    def signatures(self) -> dict[str, Signature]:
        """Settings signature of each scored metric (sacrebleu style)."""
        return {name: entry["signature"] for name, entry in self.metrics.items() if entry["status"] == "scored"}

    @property
    def skipped(self) -> dict[str, str]:
        """Reason of each metric that could not run here."""
        return {name: entry["reason"] for name, entry in self.metrics.items() if entry["status"] == "skipped"}

    def report(self) -> dict[str, dict[str, Any]]:
        """``metrics`` as JSON-ready dicts (signatures formatted), as ``caplib score`` writes them."""
        return {name: {key: str(value) if isinstance(value, Signature) else value for key, value in entry.items()}
                for name, entry in self.metrics.items()}


def _cap_scorer(job: ScoringJob, regenerate: bool) -> CAPScorer:
    """The job's CAP scorer, or one built from its profile (without a generator when the statements are given)."""
    if job.cap_scorer is not None:
        if job.long_inputs is not None and job.long_inputs != job.cap_scorer.nli.long_inputs:
            raise ValueError(f"long_inputs={job.long_inputs!r} differs from the given cap_scorer's "
                             f"{job.cap_scorer.nli.long_inputs!r}; build the scorer with it instead")
        return job.cap_scorer
    overrides: dict[str, Any] = {} if regenerate else {"statement_model": None}
    if job.long_inputs is not None:
        overrides["long_inputs"] = job.long_inputs
    return CAPScorer.from_profile(job.profile, job.runtime, **overrides)


def _cap_statements(job: ScoringJob, metric: str) -> tuple[bool, str]:
    """(regenerate the statements?, where they come from) for a CAP metric; raises when neither way works."""
    frame, profile = job.frame, job.profile
    regenerate = job.regenerate_statements or not {"premise", "hypothesis"} <= set(frame.columns)
    if regenerate and (job.gold_column is None or not {"question", "answer"} <= set(frame.columns)):
        raise ValueError(f"{metric} needs premise/hypothesis statements, or the columns question, gold answer and "
                         f"answer to generate them")
    statement_model = profile.statement_model if job.cap_scorer is None else job.cap_scorer.statement_model
    if regenerate and statement_model is None:
        raise ValueError(f"profile {profile.name!r} names no statement model; give premise/hypothesis columns")
    # Sec. 6.3: the released CAP-Correctness carries its statements; score those, as the paper did.
    return regenerate, (f"regenerated with {statement_model}" if regenerate else
                        "input columns premise (gold) and hypothesis (answer)")


def _long_input_counts(scorer: CAPScorer) -> dict[str, int]:
    return {"truncated_pairs": int(scorer.nli.last_stats.get("truncated", 0)),
            "chunked_pairs": int(scorer.nli.last_stats.get("chunked", 0))}


def _score_cap(job: ScoringJob) -> tuple[pd.DataFrame | None, dict[str, Any]]:
    """CAP (Eq. 3) on the rows' own statements, or on statements made by the profile's generator."""
    frame = job.frame
    regenerate, origin = _cap_statements(job, "CAP")
    try:
        scorer = _cap_scorer(job, regenerate)
    except CheckpointNotAvailable as exc:
        return None, {"status": "skipped", "reason": str(exc), "signature": None}
    if regenerate:
        result = scorer.answer_components(frame["question"], frame[job.gold_column], frame["answer"])
    else:
        result = scorer.components(frame["premise"], frame["hypothesis"])
    entry = {"status": "scored", "signature": scorer.signature(given_statements=not regenerate),
             "statements": origin, **_long_input_counts(scorer),
             "nli_pairs_computed": int(scorer.nli.last_stats.get("computed", 0)),  # the rest came from the cache
             "nli_pairs_cached": int(scorer.nli.last_stats.get("cached", 0))}
    return (result if job.components else result[["cap"]]).set_index(frame.index), entry


def _score_cap_decomposed(job: ScoringJob) -> tuple[pd.DataFrame | None, dict[str, Any]]:
    """Decomposed CAP (:mod:`caplib.cap_decomposed`) on the rows' statements (one gold each), with their questions."""
    frame = job.frame
    regenerate, origin = _cap_statements(job, "cap_decomposed")
    try:
        scorer = DecomposedCAPScorer(_cap_scorer(job, regenerate))
    except CheckpointNotAvailable as exc:
        return None, {"status": "skipped", "reason": str(exc), "signature": None}
    questions = list(frame["question"]) if "question" in frame.columns else None
    if regenerate:
        golds, hypotheses = scorer.cap.statements(frame["question"], frame[job.gold_column], frame["answer"])
        premises = [options[0] if len(options) == 1 else options for options in golds]
    else:
        premises, hypotheses = list(frame["premise"]), list(frame["hypothesis"])
    result = scorer.components(premises, hypotheses, questions)
    entry = {"status": "scored", "signature": scorer.signature(given_statements=not regenerate),
             "statements": origin, **_long_input_counts(scorer.cap)}
    return (result if job.components else result[["cap_decomposed"]]).set_index(frame.index), entry


def _score_baseline(metric: str, job: ScoringJob) -> tuple[pd.DataFrame | None, dict[str, Any]]:
    """``baselines.score`` for the rows not yet in the content cache (keyed by the metric's signature + texts)."""
    frame, gold = job.frame, job.gold_column
    if gold is None or not {gold, "answer"} <= set(frame.columns):
        raise ValueError(f"{metric} compares the gold answer with the answer: the frame needs the columns "
                         f"{gold or 'gold_answer'} and answer")
    options = job.profile.metric_options(metric)
    signature = baselines.signature(metric, **options)
    runtime = {"device": job.runtime.device, "progress": job.runtime.progress}
    has_questions = "question" in frame.columns
    questions = list(frame["question"]) if has_questions else [""] * len(frame)
    store = job.runtime.content_cache("baselines", {"signature": str(signature)})

    def compute(todo: list[tuple[str, str, str]]) -> np.ndarray:
        golds, answers, asked = (list(column) for column in zip(*todo))
        return baselines.score(metric, golds, answers, questions=asked if has_questions else None, **options,
                               **runtime)

    try:
        values, _ = cached_values(store, list(zip(frame[gold], frame["answer"], questions)), compute)
    except baselines.MetricUnavailable as exc:
        return None, {"status": "skipped", "reason": exc.reason, "signature": signature}
    scores = pd.Series(np.asarray(values, dtype=float), index=frame.index, name=metric)
    return scores.to_frame(), {"status": "scored", "signature": signature}


def _released_signature(metric: str, profile: Profile) -> Signature:
    """``<metric>|released:<repository>@<commit>|sha256:<scores.json>|...``: where the authors' values come from and,
    for CAP, which backbone and weights (the profile's)."""
    assert profile.scores_file is not None
    file = release.release_file("scores.json")
    fields: list[tuple[str, str]] = [("released", f"{release.REPOSITORY}@{file.commit[:7]}"),
                                     ("sha256", sha256_of([profile.scores_file])[:12])]
    if metric == "cap":
        fields += [("nli", profile.nli_model), ("rev", (profile.nli_revision or "unpinned")[:7]),
                   ("alpha", f"{profile.alpha:g}"), ("lam", f"{profile.lam:g}")]
    elif metric == "bertscore":
        fields.append(("model", str(profile.metric_options(metric).get("model"))))
    return Signature(metric, tuple(fields))


def _released_rows(job: ScoringJob) -> pd.DataFrame:
    """The release's scores of the job's rows, in the job's row order, checked to be the same rows (row_id, and the
    label where the rows carry one); ValueError naming the first row that is not."""
    assert job.profile.scores_file is not None
    scores = release.load_scores(job.profile.scores_file).set_index("row_id")
    frame = job.frame
    if "row_id" not in frame.columns:
        raise ValueError(f"profile {job.profile.name!r} reads the release's scores by row_id: the rows need the "
                         f"row_id column of CAP-Correctness.csv (load them with caplib.data.load_correctness)")
    ids = pd.to_numeric(frame["row_id"], errors="coerce")
    absent = frame.index[~ids.isin(scores.index)].tolist()
    if absent:
        raise ValueError(f"{len(absent)} row(s) have no released score (first row_id {frame.loc[absent[0], 'row_id']!r}"
                         f"); profile {job.profile.name!r} scores only the release's own rows")
    rows = scores.loc[ids.astype(int)].set_index(frame.index)
    if "label_semantic" in frame.columns:
        different = frame.index[frame["label_semantic"].to_numpy() != rows["label"].to_numpy()].tolist()
        if different:
            row = different[0]
            raise ValueError(f"row_id {frame.loc[row, 'row_id']}: label {frame.loc[row, 'label_semantic']!r} here but "
                             f"{rows.loc[row, 'label']!r} in the release's scores.json: these are not the release's "
                             f"rows ({len(different)} differ)")
    return rows


def _score_released(metric: str, job: ScoringJob) -> tuple[pd.DataFrame | None, dict[str, Any]]:
    """A metric of a profile of released scores: the authors' per-row values (:mod:`caplib.release`), never a model.
    CAP comes with its components, D(g->p) and D(p->g) from the released probabilities with the profile's lam (and
    CAP itself recomputed when alpha or lam differ from the authors'). Rows that are not the release's (or a release
    not fetched) skip the metric with the reason: never a score from another row."""
    if metric not in release.SCORE_METRICS:
        reason = ("the release has no COMET column" if metric == "comet" else
                  f"profile {job.profile.name!r} runs no model, and the release has no {metric} scores")
        return None, {"status": "skipped", "reason": reason, "signature": None}
    try:
        rows = _released_rows(job)
    except (FileNotFoundError, ValueError) as error:  # not fetched, or rows that are not the release's
        return None, {"status": "skipped", "reason": str(error), "signature": None}
    entry = {"status": "scored", "signature": _released_signature(metric, job.profile),
             "source": f"{job.profile.scores_file}"}
    if metric != "cap":
        return rows[[metric]].astype(float), entry
    probabilities = rows[list(release.PROBABILITY_KEYS)].to_numpy(dtype=float)
    forward, backward = probabilities[:, :3], probabilities[:, 3:]
    alpha, lam = job.profile.alpha, job.profile.lam
    same = (alpha, lam) == (PAPER_ALPHA, PAPER_LAM)
    parts = pd.DataFrame({"cap": rows["cap"].to_numpy(dtype=float) if same else cap(forward, backward, alpha, lam),
                          "cap_d_forward": directional_score(forward, lam),
                          "cap_d_backward": directional_score(backward, lam),
                          **dict(zip(PROBABILITY_COMPONENTS, probabilities.T))}, index=job.frame.index)
    return (parts[list(COMPONENT_COLUMNS)] if job.components else parts[["cap"]]), entry


#: Every metric a profile can score: the paper's, in the order of its tables (CAP first), then decomposed CAP.
SCORERS: Mapping[str, FrameScorer] = MappingProxyType(
    {"cap": _score_cap, **{metric: functools.partial(_score_baseline, metric) for metric in baselines.METRICS},
     "cap_decomposed": _score_cap_decomposed})
#: Metrics beyond the paper's tables (Sec. 9's future work): scored when asked for, never by default.
EXTENSION_METRICS: tuple[str, ...] = ("cap_decomposed",)
#: The paper's metrics, the default of :func:`score_frame` (the rows of Tab. 2).
METRIC_NAMES: tuple[str, ...] = tuple(name for name in SCORERS if name not in EXTENSION_METRICS)


def score_frame(
    frame: pd.DataFrame,
    profile: str | Profile = "offline",
    metrics: Sequence[str] = METRIC_NAMES,
    *,
    gold_column: str | None = "gold_answer",
    regenerate_statements: bool = False,
    components: bool = True,
    runtime: Runtime | None = None,
    cap_scorer: CAPScorer | None = None,
    long_inputs: str | None = None,
    engine: str = "local",
    actors: int = 1,
    address: str | None = None,
    block_rows: int = BLOCK_ROWS,
) -> ScoredFrame:
    """Add one score column per metric to ``frame`` under ``profile`` (name, YAML path or :class:`Profile`).

    Baselines compare ``gold_column`` with ``answer`` (COMET also reads ``question``); CAP scores the rows'
    ``premise``/``hypothesis`` statements when present, else (or with ``regenerate_statements``) generates them
    with the profile's statement generator. Unavailable metrics are skipped with their reason. ``runtime``
    (device, batch size, cache, progress, ...) applies to every metric; ``cap_scorer`` is a
    :class:`caplib.cap.CAPScorer` to use instead of building one from the profile (a chapter that holds one);
    ``long_inputs`` (``"truncate"``, the paper's, or ``"chunk"``) decides what CAP's NLI does with pairs longer than
    the profile's ``max_length`` (None: truncate, or what ``cap_scorer`` does). Score columns the input already has
    (a file written by ``caplib score``) are replaced and listed in ``replaced``. ``engine="ray"`` scores the rows
    in blocks of ``block_rows`` on ``actors`` Ray actors (:mod:`caplib.distributed`; ``address`` joins a running
    cluster), with the same scores as the local engine; ``engine`` of the result records what ran.

    Example:
        >>> rows = pd.DataFrame({"question": ["2+2?"], "gold_answer": ["four"], "answer": ["five"]})
        >>> score_frame(rows, metrics=("em",), runtime=Runtime(progress=False)).frame["em"].tolist()
        [0.0]
    """
    job = ScoringJob(frame, load_profile(profile), runtime if runtime is not None else Runtime(), gold_column,
                     regenerate_statements, components, cap_scorer, long_inputs)
    unknown = [name for name in metrics if name not in SCORERS]
    if unknown or not metrics:
        raise ValueError(f"unknown metric(s) {unknown or list(metrics)}; choose from {', '.join(SCORERS)}")
    if engine == "ray":
        return _score_on_ray(job, list(dict.fromkeys(metrics)), actors=actors, address=address, block_rows=block_rows)
    if engine != "local" or address is not None:
        raise ValueError(f"engine must be 'local' or 'ray' (address only with ray), got {engine!r}")
    parts: list[pd.DataFrame] = []
    report: dict[str, dict[str, Any]] = {}
    released = job.profile.scores_file is not None
    for metric in dict.fromkeys(metrics):
        scorer = functools.partial(_score_released, metric) if released and metric not in ("em", "acc") else \
            SCORERS[metric]
        columns, report[metric] = scorer(job)
        if columns is not None:
            parts.append(columns)
    new = [name for part in parts for name in part.columns]
    replaced = [name for name in new if name in frame.columns]
    return ScoredFrame(pd.concat([frame.drop(columns=replaced), *parts], axis=1), report, replaced)


#: The column in which a block scored on Ray carries its report (first row; JSON) back to the driver.
_REPORT = "__caplib_report"
#: Per-block counts, summed over blocks; every other report field must be the same in every block.
_COUNTS = ("truncated_pairs", "chunked_pairs", "nli_pairs_computed", "nli_pairs_cached")


class BlockScorer:
    """What one Ray actor runs (:mod:`caplib.distributed`): its scorers built once, then :func:`score_frame` per
    block, returning the block's score columns, its position column and its report (JSON, first row)."""

    def __init__(self, profile: Profile, metrics: Sequence[str], options: dict[str, Any]):
        self.profile, self.metrics, self.options = profile, list(metrics), options
        self.cap: CAPScorer | None = None

    def __call__(self, block: pd.DataFrame) -> pd.DataFrame:
        import os

        frame = block.drop(columns=[POSITION])
        if self.cap is None and {"cap", "cap_decomposed"} & set(self.metrics):
            job = ScoringJob(frame, self.profile, self.options["runtime"], self.options["gold_column"],
                             self.options["regenerate_statements"], long_inputs=self.options["long_inputs"])
            try:  # one CAP scorer (and NLI model) per actor, kept for every block
                self.cap = _cap_scorer(job, _cap_statements(job, "CAP")[0])
            except CheckpointNotAvailable:
                pass  # score_frame skips the metric with its reason
        scored = score_frame(frame, self.profile, self.metrics, cap_scorer=self.cap, **self.options)
        new = [c for c in scored.frame.columns if c not in frame.columns or c in scored.replaced]
        out = scored.frame[new].assign(**{POSITION: block[POSITION].to_numpy()})
        report = {"metrics": scored.report(), "device": self.cap.nli.device if self.cap else "cpu",
                  "pid": os.getpid()}
        out[_REPORT] = [json.dumps(report)] + [""] * (len(out) - 1)
        return out


def _score_on_ray(job: ScoringJob, metrics: list[str], *, actors: int, address: str | None,
                  block_rows: int) -> ScoredFrame:
    """:func:`score_frame` with ``engine="ray"``: blocks on an actor pool, reports merged, signatures checked equal."""
    if job.cap_scorer is not None:
        raise ValueError("engine 'ray' builds one scorer per actor from the profile: pass no cap_scorer")
    version = ray_version()
    device = pick_device(job.runtime.device)  # where every actor's models run: a GPU each when it is CUDA
    options = {"gold_column": job.gold_column, "regenerate_statements": job.regenerate_statements,
               "components": job.components, "runtime": job.runtime.replace(progress=False),
               "long_inputs": job.long_inputs}
    parts, reports = [], []
    for block in map_blocks(job.frame, BlockScorer, {"profile": job.profile, "metrics": metrics, "options": options},
                            actors=actors, block_rows=block_rows, address=address,
                            num_gpus=1 if device.startswith("cuda") else 0, progress=job.runtime.progress):
        reports.append(json.loads(block[_REPORT].iloc[0]))
        parts.append(block.drop(columns=[_REPORT]))
    scores = pd.concat(parts).set_axis(job.frame.index)
    metrics_report = {}
    for metric in metrics:
        entries = [report["metrics"][metric] for report in reports]
        fixed = [{k: v for k, v in entry.items() if k not in _COUNTS} for entry in entries]
        if any(entry != fixed[0] for entry in fixed):
            raise RuntimeError(f"{metric}: the Ray actors disagree on its settings: {fixed[0]} vs "
                               f"{next(e for e in fixed if e != fixed[0])}")
        merged = {**fixed[0], **{k: sum(e[k] for e in entries) for k in _COUNTS if k in entries[0]}}
        if merged.get("signature") is not None:
            merged["signature"] = Signature.parse(merged["signature"])
        metrics_report[metric] = merged
    replaced = [name for name in scores.columns if name in job.frame.columns]
    engine = {"name": "ray", "ray": version, "actors": actors, "block_rows": block_rows, "blocks": len(reports),
              "address": address or "local", "devices": sorted({report["device"] for report in reports}),
              "actor_processes": len({report["pid"] for report in reports})}
    return ScoredFrame(pd.concat([job.frame.drop(columns=replaced), scores], axis=1), metrics_report, replaced, engine)
