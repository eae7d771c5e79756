"""What a calibration was fitted for and on, and the refusal to apply it to other scores (Sec. 8.2).

A calibration maps CAP's outputs to taxonomy classes; those outputs depend on the NLI backbone (App. C.2) and on
CAP's weights ``alpha`` and ``lam`` (Eq. 2-3). :class:`Provenance` keeps the CAP signature of the scores a labeler
was fitted on (its ``nli`` field names the backbone) and the labelled rows (file, split, row ids);
:func:`check_applicable` refuses scores whose signature differs in a setting the labeler depends on.

Example:
    >>> fitted = Provenance(cap_signature="cap|nli:m#sha256:0123|alpha:0.85|lam:0.3", split="validation")
    >>> fitted.backbone
    'm#sha256:0123'
    >>> check_applicable(fitted, ("nli", "lam"), "cap|nli:other#sha256:9999|alpha:0.85|lam:0.3",
    ...                  "calibration")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    caplib.calibration.provenance.CalibrationMismatch: calibration was fitted for CAP scores with nli m#sha256:0123, but these scores have nli other#sha256:9999; ...
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from caplib.files import write_atomically
from caplib.inputs import read_input_text
from caplib.signature import Signature

__all__ = ["FORMAT", "REFIT_HINT", "CalibrationMismatch", "Provenance", "check_applicable", "read_document",
           "write_document"]

#: The ``format`` field of a calibration file (bumped when the file's layout changes).
FORMAT = "caplib-calibration/1"

#: How to get a calibration for the scores at hand (said by every refusal).
REFIT_HINT = ("refit it on labelled rows scored with this backbone and these weights: `caplib score LABELLED.csv "
              "--components -o SCORED.csv`, then `caplib calibrate SCORED.csv --label-column label_semantic "
              "-o CALIBRATION.json` (the offline profile's own: `python -m caplib.calibration offline`)")


class CalibrationMismatch(ValueError):
    """A calibration applied to CAP scores of another backbone (or other CAP weights) than it was fitted for."""


@dataclass(frozen=True)
class Provenance:
    """The scores and labelled rows a labeler was fitted on.

    Attributes:
        cap_signature: the CAP signature of the fitting scores (``caplib score`` writes it beside its output);
            None when fitted on bare arrays (such a labeler predicts, but :func:`check_applicable` refuses it).
        data: the fitting file, ``name#sha256:<12 hex>``.
        splits: the splits file the split was read from, ``name#sha256:<12 hex>`` (None: the file's own column).
        split: the split fitted on (None: every row).
        label_column: the column of the labels.
        n: the number of fitting rows.
        row_ids: the ``row_id`` of every fitting row, so that an evaluation can prove it holds none of them.
    """

    cap_signature: str | None = None
    data: str | None = None
    splits: str | None = None
    split: str | None = None
    label_column: str = "label_semantic"
    n: int = 0
    row_ids: tuple[int, ...] = field(default=(), repr=False)

    @property
    def backbone(self) -> str | None:
        """The NLI backbone of the fitting scores (the CAP signature's ``nli`` field), or None."""
        return self.setting("nli")

    def setting(self, key: str) -> str | None:
        """A field of the CAP signature (``nli``, ``alpha``, ``lam``, ...), or None."""
        return None if self.cap_signature is None else Signature.parse(self.cap_signature).get(key)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields, the backbone spelled out for a reader of the file, the row ids as ranges (``"3-5,9"``)."""
        return {"backbone": self.backbone, **asdict(self), "row_ids": _ranges(self.row_ids)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Provenance:
        """The inverse of :meth:`to_dict` (``backbone`` is derived, so it is not read)."""
        known = {key: data.get(key) for key in ("cap_signature", "data", "splits", "split")}
        return cls(**known, label_column=str(data.get("label_column", "label_semantic")), n=int(data.get("n", 0)),
                   row_ids=_parse_ranges(data.get("row_ids", "")))

    def signature_fields(self) -> list[tuple[str, str]]:
        """The fields a labeler's signature takes from here: what it was fitted for (backbone, CAP weights) and on
        (data, split, rows, label column)."""
        return [("nli", self.backbone or "none"), ("alpha", self.setting("alpha") or "none"),
                ("lam", self.setting("lam") or "none"), ("data", self.data or "none"),
                ("split", self.split or "all"), ("n", str(self.n)), ("label", self.label_column)]

    def overlap(self, row_ids: Sequence[int]) -> list[int]:
        """The given row ids that this labeler was fitted on (an evaluation on them would be tuned on its test)."""
        fitted = set(self.row_ids)
        return sorted(int(i) for i in row_ids if int(i) in fitted)


def _ranges(ids: Sequence[int]) -> str:
    """``"0-3,7,9-10"`` for ``[0, 1, 2, 3, 7, 9, 10]`` (sorted, each id once)."""
    parts: list[str] = []
    for value in sorted(set(int(i) for i in ids)):
        if parts and value == parts[-1][1] + 1:
            parts[-1] = (parts[-1][0], value)
        else:
            parts.append((value, value))
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in parts)


def _parse_ranges(text: str | Sequence[int]) -> tuple[int, ...]:
    if not isinstance(text, str):
        return tuple(int(i) for i in text)
    ids: list[int] = []
    for part in filter(None, text.split(",")):
        low, _, high = part.partition("-")
        ids.extend(range(int(low), int(high or low) + 1))
    return tuple(ids)


def check_applicable(provenance: Provenance, depends_on: Sequence[str], cap_signature: str | Signature | None,
                     where: str) -> None:
    """Refuse to apply a labeler to scores whose CAP signature differs in a field of ``depends_on``.

    ``depends_on`` lists the CAP signature fields that change the labeler's inputs (``nli``: the backbone;
    ``alpha``, ``lam``: Eq. 2-3); empty for a rule that depends on no data (the paper's uniform bins).

    Raises:
        CalibrationMismatch: the labeler names no backbone, no signature of the scores is given, or a setting
            differs; the message names both values and how to refit.
    """
    if not depends_on:
        return
    if provenance.cap_signature is None:
        raise CalibrationMismatch(f"{where} names no backbone (it was fitted on bare scores, without a CAP "
                                  f"signature), so it cannot be checked against these scores; {REFIT_HINT}")
    if cap_signature is None:
        raise CalibrationMismatch(f"{where} was fitted for nli {provenance.backbone}; the scores to classify carry "
                                  f"no CAP signature to check it against")
    mine, theirs = Signature.parse(provenance.cap_signature), Signature.parse(str(cap_signature))
    differing = [f"{key} {mine.get(key)}, but these scores have {key} {theirs.get(key)}"
                 for key in depends_on if mine.get(key) != theirs.get(key)]
    if differing:
        raise CalibrationMismatch(f"{where} was fitted for CAP scores with {'; '.join(differing)}; {REFIT_HINT}")


def write_document(path: str | Path, method: str, signature: Signature, provenance: Provenance,
                   model: Mapping[str, Any]) -> None:
    """Write a calibration file (JSON, atomically): ``format``, ``method``, ``signature``, ``fitted_for`` (the
    provenance, backbone first) and ``model`` (the labeler's own numbers)."""
    document = {"format": FORMAT, "method": method, "signature": str(signature), "fitted_for": provenance.to_dict(),
                "model": dict(model)}
    # one line per list of numbers (coefficients, counts), so that the file reads and diffs by row
    text = re.sub(r"\[\s+([-+0-9.eE,\s]+?)\s+\]", lambda match: "[" + " ".join(match.group(1).split()) + "]",
                  json.dumps(document, indent=1, ensure_ascii=False)) + "\n"
    write_atomically(Path(path), lambda temporary: temporary.write_text(text, encoding="utf-8"))  # mode: the umask's


def read_document(path: str | Path) -> tuple[str, Provenance, dict[str, Any]]:
    """``(method, provenance, model)`` of a calibration file written by :func:`write_document`.

    Raises:
        ValueError: not a readable regular file (``caplib.inputs``), not JSON, or not a calibration file of this
            format (the message names the file).
        FileNotFoundError: no such file.
    """
    path = Path(path)
    try:
        document = json.loads(read_input_text(path, what="calibration"))
    except json.JSONDecodeError as error:
        raise ValueError(f"{path}: not a calibration file (not JSON: {error})") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        found = document.get("format") if isinstance(document, dict) else type(document).__name__
        raise ValueError(f"{path}: not a caplib calibration file (format {found!r}, expected {FORMAT!r}); write one "
                         f"with `caplib calibrate`")
    return str(document["method"]), Provenance.from_dict(document["fitted_for"]), dict(document["model"])
