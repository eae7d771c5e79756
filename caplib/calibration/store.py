"""Calibrations as files: fitting one from a file written by ``caplib score``, reading it back, applying it.

``caplib calibrate SCORED.csv`` is :func:`fit_scored_file`; ``caplib score ... --classify CALIBRATION.json`` is
:func:`load` with the scorer's CAP signature, then :func:`classify`. The offline profile ships the calibration
:func:`profile_calibration_path` names (``caplib/profiles/offline.calibration.json``, rebuilt by
``python -m caplib.calibration offline``).

Example:
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "uniform.json"
    >>> ThresholdLabeler.uniform().fit([0.1, 0.9], ["contradictory", "exact"]).save(path)
    >>> labeler = load(path, cap_signature="cap|nli:any#sha256:0123|alpha:0.85|lam:0.3")
    >>> classify(pd.DataFrame({"cap": [0.05, 0.95]}), labeler, None)["cap_label"].tolist()
    ['contradictory', 'exact']
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence, Union

import pandas as pd

from caplib.calibration.components import FEATURES, ComponentLabeler
from caplib.calibration.provenance import Provenance, check_applicable, read_document
from caplib.calibration.thresholds import ThresholdLabeler
from caplib.checkpoints import sha256_of
from caplib.inputs import read_input_text
from caplib.scored import read_scored
from caplib.signature import Signature

__all__ = ["METHODS", "Labeler", "classify", "fit_scored_file", "load", "profile_calibration_path"]

#: A fitted labeler of either kind.
Labeler = Union[ThresholdLabeler, ComponentLabeler]
#: ``caplib calibrate --method``: ``auto`` takes ``components`` when the file has CAP's components, else
#: ``thresholds``; ``uniform`` is the paper's fixed bins (only their band shares are measured).
METHODS = ("auto", "components", "thresholds", "uniform")


def profile_calibration_path(profile_source: str | Path) -> Path:
    """Where a profile's calibration lives: beside its YAML, ``<stem>.calibration.json``.

    Example:
        >>> profile_calibration_path("caplib/profiles/offline.yaml").name
        'offline.calibration.json'
    """
    source = Path(profile_source)
    return source.with_name(f"{source.stem}.calibration.json")


def load(path: str | Path, cap_signature: str | Signature | None = None) -> Labeler:
    """Read a calibration file of either kind; with ``cap_signature`` (the signature of the scores it is meant for)
    refuse it when it was fitted for another backbone or other CAP weights.

    Raises:
        caplib.calibration.CalibrationMismatch: fitted for other scores than ``cap_signature``'s.
        ValueError: not a calibration file.
    """
    method, provenance, model = read_document(path)
    kinds = {"thresholds": ThresholdLabeler, "components": ComponentLabeler}
    if method not in kinds:
        raise ValueError(f"{path}: unknown calibration method {method!r}; this caplib reads {sorted(kinds)}")
    labeler = kinds[method].from_dict(model, provenance)
    if cap_signature is not None:
        check_applicable(provenance, labeler.depends_on, cap_signature, f"calibration {path}")
    return labeler


def classify(frame: pd.DataFrame, labeler: Labeler, cap_signature: str | Signature | None) -> pd.DataFrame:
    """``cap_label`` and ``cap_label_confidence`` of each row of ``frame`` (CAP's ``cap`` column for thresholds, its
    components for the component model), after checking that the labeler was fitted for scores with
    ``cap_signature`` (:func:`caplib.calibration.check_applicable`; a fixed rule such as the uniform bins needs none).

    Raises:
        caplib.calibration.CalibrationMismatch: the labeler was fitted for another backbone or other weights.
    """
    check_applicable(labeler.provenance, labeler.depends_on, cap_signature, f"calibration ({labeler.signature()})")
    inputs = frame if isinstance(labeler, ComponentLabeler) else frame["cap"]
    return pd.DataFrame({"cap_label": labeler.predict(inputs), "cap_label_confidence": labeler.confidence(inputs)},
                        index=frame.index)


def _cap_signature(path: Path) -> str:
    sidecar = Path(f"{path}.signature.json")
    if not sidecar.exists():
        raise ValueError(f"{path}: no {sidecar.name} beside it, so the backbone its CAP scores came from is unknown; "
                         f"a calibration must name it: score the labelled rows with `caplib score ... -o {path.name}`, "
                         f"which writes it")
    try:
        document = json.loads(read_input_text(sidecar))
    except json.JSONDecodeError as error:
        raise ValueError(f"{sidecar}: not a signature file (not JSON: {error}); score the labelled rows again with "
                         f"`caplib score`, which writes it") from None
    entry = (document.get("metrics", {}) if isinstance(document, dict) else {}).get("cap", {})
    if entry.get("status") != "scored" or not entry.get("signature"):
        raise ValueError(f"{sidecar}: CAP was not scored in this file ({entry.get('reason', 'no cap entry')}); score "
                         f"it with `caplib score ... --metrics cap --components`")
    return str(entry["signature"])


def fit_scored_file(path: str | Path, label_column: str = "label_semantic", *, splits: str | Path | None = None,
                    split: str | None = None, method: str = "auto", objective: str = "quadratic",
                    bands: str = "auto") -> Labeler:
    """Fit a labeler on a CSV written by ``caplib score`` (its ``.signature.json`` names the backbone).

    Args:
        path: the scored CSV (``cap``; with ``--components`` also CAP's components).
        label_column: the taxonomy labels; rows with an empty label are left out.
        splits, split: fit on the rows of ``split`` only: ``splits`` is a ``row_id,split`` CSV (the scored file's
            ``row_id`` column joins it), or without ``splits`` the file's own ``split`` column. No split: every row.
        method: one of :data:`METHODS`.
        objective, bands: of a :class:`ThresholdLabeler`.

    Raises:
        ValueError: no signature file, a missing column or split, a value that is not a number or label.
    """
    path = Path(path)
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    chosen = method

    def pick_columns(header: Sequence[str]) -> tuple[str, ...]:
        nonlocal chosen
        if chosen == "auto":
            chosen = "components" if set(FEATURES) <= set(header) else "thresholds"
        if chosen == "components" and not set(FEATURES) <= set(header):
            raise ValueError(f"{path}: no column(s) {[c for c in FEATURES if c not in header]}; method 'components' "
                             f"needs CAP's components: score with `caplib score --components`")
        return FEATURES if chosen == "components" else ("cap",)

    # the scored file is read (and checked) first, then the signature file beside it
    frame, _ = read_scored(path, label_column, pick_columns, splits=splits, split=split, integer_row_ids=True)
    cap_signature = _cap_signature(path)
    method = chosen
    columns = FEATURES if method == "components" else ("cap",)
    splits_name = None if splits is None else f"{Path(splits).name}#sha256:{sha256_of([Path(splits)])[:12]}"
    values = frame[list(columns)]
    provenance = Provenance(
        cap_signature=cap_signature, data=f"{path.name}#sha256:{sha256_of([path])[:12]}", splits=splits_name,
        split=split, label_column=label_column, n=len(frame),
        row_ids=tuple(frame["row_id"]) if "row_id" in frame.columns else ())
    labels = frame[label_column].tolist()
    if method == "components":
        return ComponentLabeler().fit(values, labels, provenance)
    labeler = ThresholdLabeler.uniform() if method == "uniform" else ThresholdLabeler(bands, objective)
    return labeler.fit(values["cap"], labels, provenance)
