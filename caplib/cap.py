"""CAP, Context-Aware Precision (Sec. 4, Eq. 2-3; App. A, C.2).

For a question q, gold answer g and predicted answer p, with declarative statements
s_g = s(q, g) and s_p = s(q, p):

    D(s_g -> s_p) = P_entailment(s_g -> s_p) + lam * P_neutral(s_g -> s_p)              (Eq. 2)
    CAP(s_g, s_p) = alpha * D(s_g -> s_p) + (1 - alpha) * D(s_p -> s_g)                 (Eq. 3)

g -> p (gold statement as premise, predicted statement as hypothesis) measures semantic
compatibility, p -> g semantic completeness. The paper uses alpha = 0.85 and lam = 0.30 (Tab. 12).
CAP lies in [0, 1] because it is a convex combination of two directional scores in [0, 1] (App. A).

Probability arrays have shape ``(n, 3)`` with columns ``caplib.nli.LABEL_ORDER`` =
(entailment, neutral, contradiction).

The parts of CAP (:meth:`CAPScorer.components`) are a DataFrame with the columns ``COMPONENT_COLUMNS``:

=====================  =============================================================
``cap``                CAP (Eq. 3)
``cap_d_forward``      D(s_g -> s_p), gold statement as premise (Eq. 2)
``cap_d_backward``     D(s_p -> s_g), predicted statement as premise
``cap_p_entail_fwd``   P_entailment(s_g -> s_p); ``cap_p_neutral_fwd``, ``cap_p_contra_fwd`` alike
``cap_p_entail_bwd``   P_entailment(s_p -> s_g); ``cap_p_neutral_bwd``, ``cap_p_contra_bwd`` alike
``cap_gold_index``     only with several golds per row: which gold gave the maximum (0-based)
``cap_premise``        ``answer_components`` only: the generated gold statement used
``cap_hypothesis``     ``answer_components`` only: the generated predicted statement
=====================  =============================================================

Several gold answers per question: give a list of golds (or gold statements) for a row; CAP is
computed against each and the maximum is returned (ties: the first gold).

Example:
    >>> import numpy as np
    >>> forward = np.array([[0.90, 0.08, 0.02]])   # s_g -> s_p
    >>> backward = np.array([[0.20, 0.70, 0.10]])  # s_p -> s_g
    >>> round(float(cap(forward, backward)[0]), 4)  # 0.85 * (0.90 + 0.3 * 0.08) + 0.15 * (0.20 + 0.3 * 0.70)
    0.8469
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import os
import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, Union

import numpy as np
import pandas as pd

from caplib.batching import TILE_ROWS
from caplib.nli import LABEL_ORDER, PROBABILITY_COLUMNS, NLIScorer
from caplib.runtime import Runtime
from caplib.signature import Signature

if TYPE_CHECKING:
    from caplib.profiles import Profile

__all__ = [
    "COMPONENT_COLUMNS",
    "PROBABILITY_COMPONENTS",
    "PAPER_ALPHA",
    "PAPER_LAM",
    "PAPER_NLI_MODEL",
    "CAPScorer",
    "StatementGenerator",
    "cap",
    "directional_score",
]

#: Hyperparameters of the paper (Sec. 4, App. C.2, Tab. 12).
PAPER_ALPHA = 0.85
PAPER_LAM = 0.30
#: The paper's NLI checkpoint (App. C.2).
PAPER_NLI_MODEL = "cross-encoder/nli-deberta-v3-large"
#: Tolerance on probabilities: each in [-PROB_ATOL, 1 + PROB_ATOL], each row summing to 1 +- PROB_ATOL.
PROB_ATOL = 1e-4
#: Suffixes of the two directions in column names: gold -> prediction, prediction -> gold.
DIRECTION_SUFFIXES: tuple[str, str] = ("fwd", "bwd")
#: The six directional probability columns, ``cap_p_<label>_<direction>``, forward first (``LABEL_ORDER`` within).
PROBABILITY_COMPONENTS: tuple[str, ...] = tuple(
    f"cap_p_{label}_{direction}" for direction in DIRECTION_SUFFIXES for label in PROBABILITY_COLUMNS)
#: Columns of :meth:`CAPScorer.components` (see the module docstring); the CLI writes them as they are.
COMPONENT_COLUMNS: tuple[str, ...] = ("cap", "cap_d_forward", "cap_d_backward", *PROBABILITY_COMPONENTS)

#: One gold (answer or statement) per row, or several (CAP takes the maximum over them).
Gold = Union[str, Sequence[str]]


class StatementGenerator(Protocol):
    """Anything that turns (question, answer) pairs into declarative statements (``caplib.statements``)."""

    def generate(self, questions: Sequence[str], answers: Sequence[str]) -> list[str]: ...


def _check_weight(value: float, name: str) -> float:
    if not isinstance(value, (int, float)) or not 0.0 <= float(value) <= 1.0:
        raise ValueError(f"{name} must be a number in [0, 1], got {value!r}")
    return float(value)


def _check_probs(probs: Any, name: str) -> np.ndarray:
    array = np.asarray(probs, dtype=np.float64)
    if array.ndim != 2 or array.shape[1] != len(LABEL_ORDER):
        raise ValueError(f"{name} must have shape (n, 3) with columns {LABEL_ORDER}, got shape {array.shape}")
    bad = ~np.isfinite(array).all(axis=1) | (array < -PROB_ATOL).any(axis=1) | (array > 1 + PROB_ATOL).any(axis=1)
    bad |= np.abs(array.sum(axis=1) - 1.0) > PROB_ATOL
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name} row {row} is {array[row].tolist()}: not a probability distribution (each value in "
                         f"[0, 1], summing to 1 within {PROB_ATOL}); {int(bad.sum())} such row(s)")
    return array


def directional_score(probs: Any, lam: float) -> np.ndarray:
    """D(s_a -> s_b) = P_entailment + lam * P_neutral of each row (Eq. 2), in [0, 1].

    Example:
        >>> directional_score([[0.5, 0.4, 0.1]], lam=0.3).round(2).tolist()
        [0.62]
    """
    array = _check_probs(probs, "probs")
    lam = _check_weight(lam, "lam")
    return np.clip(array[:, 0] + lam * array[:, 1], 0.0, 1.0)  # clip only the PROB_ATOL slack


def cap(forward: Any, backward: Any, alpha: float = PAPER_ALPHA, lam: float = PAPER_LAM) -> np.ndarray:
    """CAP = alpha * D(s_g -> s_p) + (1 - alpha) * D(s_p -> s_g) for each row (Eq. 3), in [0, 1].

    Args:
        forward: NLI probabilities of gold statement -> predicted statement, shape (n, 3).
        backward: NLI probabilities of predicted statement -> gold statement, shape (n, 3).
        alpha: weight of the forward direction (compatibility); paper 0.85.
        lam: weight of the neutral class in D; paper 0.30.

    Example:
        >>> cap([[1.0, 0.0, 0.0]], [[0.0, 0.0, 1.0]], alpha=0.85, lam=0.3).tolist()
        [0.85]
    """
    alpha = _check_weight(alpha, "alpha")
    forward_d, backward_d = directional_score(forward, lam), directional_score(backward, lam)
    if forward_d.shape != backward_d.shape:
        raise ValueError(f"forward has {len(forward_d)} rows but backward has {len(backward_d)}; they must pair up")
    return alpha * forward_d + (1.0 - alpha) * backward_d


def _flatten(golds: Sequence[Gold], n: int, what: str) -> tuple[list[str], list[int]]:
    """Golds of every row as one flat list, with the row each came from."""
    if len(golds) != n:
        raise ValueError(f"got {len(golds)} {what} for {n} rows; give one {what[:-1]} (or a list of them) per row")
    flat, owners = [], []
    for row, gold in enumerate(golds):
        options = [gold] if isinstance(gold, str) else list(gold)
        if not options:
            raise ValueError(f"{what} row {row} is an empty list")
        flat.extend(options)
        owners.extend([row] * len(options))
    return flat, owners


def _statement_generator(spec: Any, runtime: Runtime, settings: Mapping[str, Any] | None = None) -> StatementGenerator:
    """A statement generator from an object with ``.generate``, ``"builtin:template"``, or a model path / Hub id
    (decoded with ``settings``: a profile's ``statements.generation``)."""
    if hasattr(spec, "generate"):
        return spec
    from caplib import statements

    if spec == "builtin:template":
        return statements.TemplateStatementGenerator()
    if isinstance(spec, (str, os.PathLike)):
        return statements.Seq2SeqStatementGenerator(os.fspath(spec), runtime=runtime, **dict(settings or {}))
    raise TypeError(f"statement_model must be a model directory, a Hub id, 'builtin:template' or an object with "
                    f".generate(questions, answers); got {type(spec).__name__}")


def _describe_generator(generator: Any, spec: Any) -> tuple[tuple[str, str], ...]:
    """The ``statements:...`` fields of the signature (the generator's own signature when it has one)."""
    if callable(getattr(generator, "signature", None)):
        described = generator.signature()
        if isinstance(described, Signature):
            return described.as_fields()
        text = str(described)
    else:
        text = os.fspath(spec) if isinstance(spec, (str, os.PathLike)) else type(spec).__name__
    return Signature.parse(text if text.startswith("statements:") else f"statements:{text}").as_fields()


class CAPScorer:
    """CAP over an NLI checkpoint, with an optional statement generator for raw (q, g, p) triples.

    Args:
        nli_model: Hub id (with ``revision``), local model directory, or ``"builtin:offline-nli"``.
            Default: the paper's cross-encoder/nli-deberta-v3-large, whose commit the paper does not
            state: pass ``revision=<commit>``, or ``Runtime(allow_unpinned=True)`` to load ``main`` (the
            signature records the commit used).
        statement_model: a statement generator (object with ``.generate(questions, answers)``), a
            fine-tuned seq2seq model directory or Hub id (``caplib.statements.Seq2SeqStatementGenerator``),
            ``"builtin:template"``, or None (then only :meth:`score` on given statements works).
        alpha, lam: CAP weights (Eq. 2-3); paper 0.85 and 0.30.
        revision, max_length, batch_size, long_inputs: of the NLI model (:class:`caplib.nli.NLIScorer`;
            ``batch_size`` is the fixed tile every pair is computed in, paper: 16; ``long_inputs`` is
            ``"truncate"``, the paper's, or ``"chunk"``: sentence chunks of the longer statement).
        runtime: where and how the models run (:class:`caplib.runtime.Runtime`; paper: float16 on a GPU).
        statement_settings: decoding settings of a seq2seq ``statement_model`` (``num_beams``,
            ``max_input_length``, ``max_new_tokens``; a profile's ``statements.generation``).

    Example:
        >>> scorer = CAPScorer(nli_model="cross-encoder/nli-deberta-v3-large", revision="main")  # doctest: +SKIP
        >>> scorer.score(["The powerhouse of the cell is the mitochondria."],        # gold statements
        ...              ["The mitochondria is the powerhouse of the cell."])        # doctest: +SKIP
        array([0.97...])
    """

    def __init__(
        self,
        nli_model: str | os.PathLike[str] = PAPER_NLI_MODEL,
        statement_model: Any = None,
        alpha: float = PAPER_ALPHA,
        lam: float = PAPER_LAM,
        *,
        revision: str | None = None,
        max_length: int = 512,
        batch_size: int = TILE_ROWS,
        runtime: Runtime | None = None,
        device: str | None = None,
        long_inputs: str = "truncate",
        statement_settings: Mapping[str, Any] | None = None,
    ):
        self.alpha = _check_weight(alpha, "alpha")
        self.lam = _check_weight(lam, "lam")
        self.runtime = runtime if runtime is not None else Runtime()
        if device is not None:  # the previous README's spelling, CAPScorer(..., device="cuda")
            warnings.warn("CAPScorer(device=...) is deprecated; pass runtime=Runtime(device=...)",
                          DeprecationWarning, stacklevel=2)
            self.runtime = dataclasses.replace(self.runtime, device=device)
        self.nli = NLIScorer(nli_model, revision=revision, max_length=max_length, batch_size=batch_size,
                             runtime=self.runtime, long_inputs=long_inputs)
        self.statement_model = statement_model
        self.statement_settings = dict(statement_settings or {})
        self._generator: StatementGenerator | None = None

    @classmethod
    def from_profile(cls, profile: str | os.PathLike[str] | Profile = "offline", runtime: Runtime | None = None,
                     **overrides: Any) -> CAPScorer:
        """A scorer with every model and setting of a profile (``caplib/profiles/*.yaml``), e.g. ``"paper"``.

        The profile's dtype fills what ``runtime`` leaves open; ``overrides`` replace other profile
        settings (``statement_model``, ``alpha``, ...).

        Example:
            >>> scorer = CAPScorer.from_profile("offline", Runtime(device="cpu"))  # doctest: +SKIP
        """
        from caplib.profiles import load_profile

        resolved = load_profile(profile)
        runtime = runtime if runtime is not None else Runtime()
        runtime = runtime.replace(dtype=runtime.dtype or resolved.dtype)
        return cls(**{**resolved.cap_kwargs(), **overrides}, runtime=runtime)

    @property
    def statement_generator(self) -> StatementGenerator:
        """The statement generator (built on first use)."""
        if self._generator is None:
            if self.statement_model is None:
                raise ValueError(
                    "score_answers needs a statement model to turn (question, answer) pairs into statements: pass "
                    "statement_model=<fine-tuned model directory, Hub id or 'builtin:template'> to CAPScorer, or "
                    "statement_generator=<object with .generate(questions, answers)> to score_answers; "
                    "score(premises, hypotheses) scores statements you already have"
                )
            self._generator = _statement_generator(self.statement_model, self.runtime, self.statement_settings)
        return self._generator

    def score(self, premises: Sequence[Gold], hypotheses: Sequence[str]) -> np.ndarray:
        """CAP of each (gold statement, predicted statement) pair (Eq. 3).

        Args:
            premises: gold statements s_g, one per row, or a list of them (maximum over the list).
            hypotheses: predicted statements s_p.
        """
        return self.components(premises, hypotheses)["cap"].to_numpy()

    def components(self, premises: Sequence[Gold], hypotheses: Sequence[str]) -> pd.DataFrame:
        """CAP with its parts for each pair: the DataFrame of ``COMPONENT_COLUMNS`` (module docstring).

        Both directions go through one NLI call, so deduplication and length-sorted batching cover both.
        """
        hypotheses = list(hypotheses)
        flat, owners = _flatten(premises, len(hypotheses), "premises")
        candidates = [hypotheses[row] for row in owners]
        probs = self.nli.predict(flat + candidates, candidates + flat)
        forward, backward = probs[: len(flat)], probs[len(flat) :]
        values = cap(forward, backward, self.alpha, self.lam)
        best = _best_per_row(values, owners, len(hypotheses))
        columns = {"cap": values[best], "cap_d_forward": directional_score(forward[best], self.lam),
                   "cap_d_backward": directional_score(backward[best], self.lam)}
        directional = np.concatenate([forward[best], backward[best]], axis=1)
        columns |= {name: directional[:, i] for i, name in enumerate(PROBABILITY_COMPONENTS)}
        frame = pd.DataFrame(columns)
        if len(flat) > len(hypotheses):
            first = np.searchsorted(np.asarray(owners), np.arange(len(hypotheses)))
            frame["cap_gold_index"] = best - first
        return frame

    def score_answers(self, questions: Sequence[str], golds: Sequence[Gold], answers: Sequence[str],
                      statement_generator: StatementGenerator | None = None) -> np.ndarray:
        """CAP of raw (question, gold answer(s), predicted answer) triples: statements first, then :meth:`score`."""
        return self.answer_components(questions, golds, answers, statement_generator)["cap"].to_numpy()

    def answer_components(
        self,
        questions: Sequence[str],
        golds: Sequence[Gold],
        answers: Sequence[str],
        statement_generator: StatementGenerator | None = None,
    ) -> pd.DataFrame:
        """:meth:`components` of raw triples, with the statements used (``cap_premise``, ``cap_hypothesis``)."""
        premises, hypotheses = self.statements(questions, golds, answers, statement_generator)
        result = self.components(premises, hypotheses)
        index = result["cap_gold_index"] if "cap_gold_index" in result else np.zeros(len(answers), dtype=int)
        result["cap_premise"] = [premises[row][i] for row, i in enumerate(index)]
        result["cap_hypothesis"] = hypotheses
        return result

    def statements(self, questions: Sequence[str], golds: Sequence[Gold], answers: Sequence[str],
                   statement_generator: StatementGenerator | None = None) -> tuple[list[list[str]], list[str]]:
        """The gold statements (a list per row) and predicted statements of raw triples (Sec. 4).

        Each distinct (question, answer) pair is turned into a statement once.
        """
        questions, answers = list(questions), list(answers)
        if len(questions) != len(answers):
            raise ValueError(f"got {len(questions)} questions but {len(answers)} answers; give one question per answer")
        flat_golds, owners = _flatten(golds, len(answers), "golds")
        generator = statement_generator if statement_generator is not None else self.statement_generator
        wanted = [(questions[row], gold) for row, gold in zip(owners, flat_golds)]
        wanted += list(zip(questions, answers))
        unique = list(dict.fromkeys(wanted))
        generated = generator.generate([q for q, _ in unique], [a for _, a in unique])
        if len(generated) != len(unique):
            raise RuntimeError(f"the statement generator returned {len(generated)} statements for {len(unique)} inputs")
        statement = dict(zip(unique, generated))
        premises: list[list[str]] = [[] for _ in answers]
        for row, gold in zip(owners, flat_golds):
            premises[row].append(statement[(questions[row], gold)])
        return premises, [statement[pair] for pair in zip(questions, answers)]

    def signature(self, given_statements: bool = False) -> Signature:
        """sacrebleu-style settings, e.g. ``cap|caplib:0.1.0|nli:...|statements:...|alpha:0.85|lam:0.3|...``.

        ``statements:given`` when the scores came from statements the caller provided (:meth:`score`,
        :meth:`components`) or when there is no generator; else the generator's own signature.
        """
        from caplib import __version__

        statements = (("statements", "given"),) if given_statements or self.statement_model is None else \
            _describe_generator(self.statement_generator, self.statement_model)
        return Signature("cap", (
            ("caplib", __version__), *self.nli.signature().as_fields(), *statements,
            ("alpha", f"{self.alpha:g}"), ("lam", f"{self.lam:g}"),
            ("torch", importlib.metadata.version("torch")),
            ("transformers", importlib.metadata.version("transformers")),
        ))


def _best_per_row(values: np.ndarray, owners: list[int], n: int) -> np.ndarray:
    """Index (into ``values``) of each row's maximum; the first on ties."""
    best = np.full(n, -1)
    for index, (row, value) in enumerate(zip(owners, values)):
        if best[row] < 0 or value > values[best[row]]:
            best[row] = index
    return best
