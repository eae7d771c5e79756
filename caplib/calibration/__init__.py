"""CAP as a label-free classifier (Sec. 8.2, Sec. 9): class boundaries calibrated on labelled rows, applied anywhere.

"With threshold calibration, CAP functions as a label-free classifier returning both a score and a taxonomy class"
(Sec. 9). A labeler is fitted once on labelled rows (the validation split of CAP-Correctness by default, never the
split it is judged on) and then needs no label:

- :class:`ThresholdLabeler`: ordered cut points on the CAP axis in the order of Eq. 1, fitted to maximise
  quadratic-weighted kappa (or accuracy); :meth:`ThresholdLabeler.uniform` is the paper's illustrative rule
  ([0, 0.125) contradictory, [0.125, 0.25) invalid, ...), a fixed baseline;
- :class:`ComponentLabeler`: a multinomial logistic model on CAP's six directional NLI probabilities and
  D(g -> p), D(p -> g): the stronger variant.

Both have ``fit``, ``predict``, ``predict_proba``, ``confidence``, ``save`` and ``load``; a calibration file is JSON
with a signature naming the backbone (the ``nli`` field of the fitting scores' CAP signature) and the rows it was
fitted on, and :func:`load` / :func:`classify` refuse scores of another backbone (:class:`CalibrationMismatch`).
:func:`fit_scored_file` is ``caplib calibrate``; :func:`compare_labelers` judges the three on another split
(Chapter 10); :mod:`~caplib.calibration.shipped` builds the offline profile's shipped calibration.

Modules, each importing only those before it: :mod:`~caplib.calibration.provenance` (what a labeler was fitted for,
the file format, the refusal), :mod:`~caplib.calibration.thresholds`, :mod:`~caplib.calibration.components`,
:mod:`~caplib.calibration.store` (files: fit, load, classify), :mod:`~caplib.calibration.compare`,
:mod:`~caplib.calibration.shipped`.

Example:
    >>> labeler = ThresholdLabeler("labels", "accuracy").fit([0.1, 0.15, 0.5, 0.55, 0.9, 0.95],
    ...     ["contradictory", "contradictory", "partial", "partial", "exact", "exact"])
    >>> labeler.predict([0.12, 0.52, 0.97]).tolist()
    ['contradictory', 'partial', 'exact']
"""

from caplib.calibration.components import FEATURES, ComponentLabeler
from caplib.calibration.compare import SCORE_COLUMNS, LabelerComparison, compare_labelers, measure_of, paired_difference
from caplib.calibration.provenance import CalibrationMismatch, Provenance, check_applicable
from caplib.calibration.shipped import build_offline, for_this_backbone, main, shipped_path
from caplib.calibration.store import METHODS, Labeler, classify, fit_scored_file, load, profile_calibration_path
from caplib.calibration.thresholds import OBJECTIVES, STRUCTURES, UNIFORM_CUTS, ThresholdLabeler

__all__ = [
    "FEATURES",
    "METHODS",
    "OBJECTIVES",
    "SCORE_COLUMNS",
    "STRUCTURES",
    "UNIFORM_CUTS",
    "CalibrationMismatch",
    "ComponentLabeler",
    "Labeler",
    "LabelerComparison",
    "Provenance",
    "ThresholdLabeler",
    "build_offline",
    "check_applicable",
    "classify",
    "compare_labelers",
    "fit_scored_file",
    "load",
    "main",
    "measure_of",
    "paired_difference",
    "profile_calibration_path",
    "for_this_backbone",
    "shipped_path",
]
