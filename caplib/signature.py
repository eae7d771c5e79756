"""Settings signatures: the value that stands beside every score (sacrebleu's ``Signature`` is the model).

A signature names a metric and, in order, every setting that changes its numbers: package versions, checkpoint
and revision, options. It is written as ``name|key:value|key:value...`` (the format of earlier caplib versions
and of sacrebleu) and read back with :meth:`Signature.parse`, so two runs can be compared field by field. Keys
may repeat (CAP's signature holds the NLI model's ``rev`` and the statement model's), so fields are an ordered
tuple of pairs, not a dict.

Example:
    >>> signature = Signature("bleu", (("nltk", "3.10.4"), ("tok", "word")))
    >>> signature.format()
    'bleu|nltk:3.10.4|tok:word'
    >>> Signature.parse("bleu|nltk:3.10.4|tok:word") == signature
    True
    >>> signature["tok"]
    'word'
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

__all__ = ["Signature"]


@dataclass(frozen=True)
class Signature:
    """A metric name and its ordered ``(key, value)`` settings; ``str()`` is :meth:`format`."""

    name: str
    fields: tuple[tuple[str, str], ...] = ()
    #: a value of the head itself, for signatures that are parts of others: ``nli:<checkpoint>|rev:...``
    value: str | None = None

    def __post_init__(self) -> None:
        if not self.name or "|" in self.name or ":" in self.name:
            raise ValueError(f"a signature's name must be non-empty and free of '|' and ':', got {self.name!r}")
        if self.value is not None and "|" in self.value:
            raise ValueError(f"a signature's value must be free of '|', got {self.value!r}")
        for key, value in self.fields:
            if not key or ":" in key or "|" in key or "|" in str(value):
                raise ValueError(f"signature field {key!r}: {value!r} must not contain '|' (nor ':' in the key)")
        object.__setattr__(self, "fields", tuple((str(key), str(value)) for key, value in self.fields))

    @classmethod
    def of(cls, name: str, fields: Mapping[str, object] | Iterable[tuple[str, object]] = ()) -> Signature:
        """A signature from a mapping or pairs; values are turned into text.

        Example:
            >>> Signature.of("em", {"norm": "squad"}).format()
            'em|norm:squad'
        """
        pairs = fields.items() if isinstance(fields, Mapping) else fields
        return cls(name, tuple((str(key), str(value)) for key, value in pairs))

    def format(self) -> str:
        """``name|key:value|...`` (``name:value|key:value|...`` when the head has a value)."""
        head = self.name if self.value is None else f"{self.name}:{self.value}"
        return "|".join([head, *(f"{key}:{value}" for key, value in self.fields)])

    def __str__(self) -> str:
        return self.format()

    @classmethod
    def parse(cls, text: str) -> Signature:
        """Read a formatted signature back; each field splits at its first ``:``.

        Example:
            >>> Signature.parse("cap|statements:builtin:template|alpha:0.85")["statements"]
            'builtin:template'

        Raises:
            ValueError: empty text, or a field without ``key:value``.
        """
        head, *parts = text.split("|")
        name, head_colon, head_value = head.partition(":")
        fields = []
        for part in parts:
            key, colon, value = part.partition(":")
            if not colon or not key:
                raise ValueError(f"signature {text!r}: field {part!r} is not key:value")
            fields.append((key, value))
        return cls(name, tuple(fields), head_value if head_colon else None)

    def __getitem__(self, key: str) -> str:
        """The value of the first field named ``key``."""
        for name, value in self.fields:
            if name == key:
                return value
        raise KeyError(f"{self.name} signature has no field {key!r}; it has {[name for name, _ in self.fields]}")

    def get(self, key: str, default: str | None = None) -> str | None:
        """The value of the first field named ``key``, or ``default``."""
        try:
            return self[key]
        except KeyError:
            return default

    def as_fields(self) -> tuple[tuple[str, str], ...]:
        """This signature as fields of an enclosing one: its head (``name:value``) first, then its fields.

        Example:
            >>> nli = Signature("nli", (("dtype", "float32"),), value="m#sha256:0123")
            >>> Signature("cap", (("caplib", "0.1.0"), *nli.as_fields())).format()
            'cap|caplib:0.1.0|nli:m#sha256:0123|dtype:float32'
        """
        return ((self.name, self.value if self.value is not None else ""), *self.fields)

    def differences(self, other: Signature) -> list[str]:
        """What differs between two signatures, one line per field (empty when equal).

        Example:
            >>> Signature.parse("bleu|tok:word|smooth:method1").differences(Signature.parse("bleu|tok:word|smooth:none"))
            ['smooth: method1 != none']
        """
        lines = [] if (self.name, self.value) == (other.name, other.value) else \
            [f"name: {self.format().split('|')[0]} != {other.format().split('|')[0]}"]
        mine, theirs = dict(self.fields), dict(other.fields)
        for key in dict.fromkeys([*mine, *theirs]):
            if mine.get(key) != theirs.get(key):
                lines.append(f"{key}: {mine.get(key, '<missing>')} != {theirs.get(key, '<missing>')}")
        return lines
