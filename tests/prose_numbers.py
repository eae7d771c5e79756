"""Which numbers a chapter's prose may state without computing them (issue 33): the check behind
tests/test_notebook_sources.py's ``test_prose_states_no_number_of_a_run``.

A chapter's markdown cells, and the literal text of the strings its code cells display, may state a number only when
it cannot be contradicted by a run: a number the paper prints (``data/paper/``: its tables, their captions and notes,
and ``text.yaml``, the numbers its text and poster state), a constant of the protocol (:data:`PROTOCOL`), a
reference (Tab. 12, Sec. 7.2, chapter 5, exercise 2), a list marker, a year in a citation, or a setting written as
code (`-p row_limit 200`). Any other number is this run's or this sample's, and belongs in a computed sentence: a
later run, another profile or another sample could make it false.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pandas as pd
import yaml

from caplib import paper
from caplib.taxonomy import HARD_PAIRS, LABELS, SEPARABILITY_PAIRS, SEVERITY, STRICT_PAIRS

ROOT = Path(__file__).resolve().parents[1]

#: Constants of the protocol and of the page's conventions: class and pair counts, severity levels, the three top
#: classes, the orders of the eight class means, the chance level of 50, the ×100 scale, the 95% intervals (between
#: the 2.5th and 97.5th percentiles) and the 0.05 level, one half.
PROTOCOL: frozenset[Decimal] = frozenset(Decimal(v) for v in (
    0, 1, 2, 3, len(LABELS), len(STRICT_PAIRS), len(HARD_PAIRS), len(SEPARABILITY_PAIRS), *SEVERITY.values(),
    math.factorial(len(LABELS)), 50, 100, 95, "2.5", "97.5", "0.05", "0.5"))
#: Tables whose whole numbers prose may quote as they are: sizes (Tab. 1) and violation counts (Tab. 12, 14). The
#: other tables' whole numbers (Tab. 6's class counts) are small and many, so quoting one is more likely a run's.
COUNT_TABLES: tuple[int, ...] = (1, 12, 14)

_REFERENCE = re.compile(r"(?:Tabs?\.|Secs?\.|Eqs?\.|App\.|Figs?\.|[Cc]hapters?|[Ee]xercises?|[Pp]arts?|Steps?|"
                        r"[Ss]ections?|[Ss]olutions?|[Rr]evision|RQ)\s*(?:[A-Z]\.)?\d+(?:\.\d+)*"
                        r"(?:\s*(?:[–,-]|,?\s+and|\s+or)\s*(?:[A-Z]\.)?\d+(?:\.\d+)*)*")
_MASKS = (re.compile(r"`[^`]*`"),  # code: a setting or a command, not a claim
          re.compile(r"\]\([^)]*\)"),  # a link's target
          re.compile(r"^\s*(?:#+\s*)?\d+\.\s", re.MULTILINE),  # a list marker, a chapter heading's number
          re.compile(r"\(\d\)"),  # an enumeration: (1), (2)
          re.compile(r"[×x]\s?100\b"),  # the x100 scale
          re.compile(r"(?:et al\.,?|\()\s*(?:19|20)\d\d\b"),  # a citation's year
          re.compile(r"\{doc\}`[^`]*`"))
# a number standing alone: not part of a name (Qwen3-8B, L6-v2), possibly an ordinal (97.5th) or the first word of
# a compound (7,827-example)
_NUMBER = re.compile(r"(?<![\w.,/^_{])(?<![A-Za-z]-)(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?"
                     r"(?=(?:th|st|nd|rd)?(?:-[A-Za-z]|[^\w.,]|[.,](?!\d)|$))")


def paper_numbers() -> set[Decimal]:
    """Every number the paper prints: its tables' cells (also /100, for shares written as fractions), the numbers in
    the tables' captions and notes, and ``data/paper/text.yaml``."""
    found: set[Decimal] = set()
    for number in paper.TABLES:
        for value in paper.load_table(number).select_dtypes("number").to_numpy().ravel():
            if pd.notna(value) and (number in COUNT_TABLES or float(value) != int(value) or value >= 100):
                found |= {Decimal(repr(float(value))), Decimal(repr(float(value))) / 100}
    texts = [yaml.safe_dump(yaml.safe_load((ROOT / "data" / "paper" / "tables.yaml").read_text(encoding="utf-8")))]
    found |= {number for text in texts for number, _ in numbers_in(text)}
    entries = yaml.safe_load((ROOT / "data" / "paper" / "text.yaml").read_text(encoding="utf-8"))
    found |= {Decimal(str(entry["value"]).replace(",", "")) for entry in entries}
    return found


def numbers_in(text: str) -> Iterator[tuple[Decimal, str]]:
    """The numbers of ``text`` outside code, references, list markers and citations, each with its context."""
    text = text.replace("{,}", ",")  # TeX's thousands separator
    for mask in _MASKS:
        text = mask.sub(" ", text)
    text = _REFERENCE.sub(" ", text)
    for match in _NUMBER.finditer(text):
        value = Decimal(match.group(1).replace(",", "") + (match.group(2) or ""))
        yield value, text[max(0, match.start() - 50):match.end() + 30].replace("\n", " ")


def matches(value: Decimal, known: set[Decimal]) -> bool:
    """Whether ``value`` is a known number: exactly, or rounded to the decimals it is written with (``26.9`` for a
    printed 26.93; a whole number is never a rounded decimal)."""
    places = -value.as_tuple().exponent if value.as_tuple().exponent < 0 else 0
    if value in PROTOCOL or value in known or not places:
        return value in PROTOCOL or value in known
    quantum = Decimal(1).scaleb(-places)
    return any(number.quantize(quantum, rounding="ROUND_HALF_UP") == value for number in known
               if abs(number - value) < 1)


def prose(source: Path) -> Iterator[tuple[str, str]]:
    """(where, text) of a chapter source's markdown cells and of the literal text of its code cells' strings that
    read as prose (four words or more; a format spec or a column name is no claim)."""
    import nbformat  # noqa: F401  (py2nb needs it)

    from tests.scripts import load_script

    for index, cell in enumerate(load_script("py2nb").convert(source).cells):
        if cell.cell_type == "markdown":
            yield f"{source.stem}, markdown cell {index}", cell.source
            continue
        tree = ast.parse(cell.source)
        inside = {id(part) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for part in ast.walk(node)
                  if part is not node}
        for node in ast.walk(tree):
            if isinstance(node, ast.JoinedStr) and id(node) not in inside:  # an f-string: its literal text, whole
                text = "{}".join(part.value if isinstance(part, ast.Constant) else "" for part in node.values)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in inside:
                text = node.value
            else:
                continue
            if len(text.split()) >= 4:
                yield f"{source.stem}, code cell {index}", text


def unexplained_numbers(source: Path, known: set[Decimal]) -> list[str]:
    """Every number in ``source``'s prose that is neither the paper's, the protocol's nor a reference."""
    return [f"{where}: {value} in '…{context}…'" for where, text in prose(source)
            for value, context in numbers_in(text) if not matches(value, known)]
