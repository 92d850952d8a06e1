"""What every rule module sees and returns (:class:`Flag`: one row of the flags table).

A rule is a frozen dataclass with its options as fields (``enabled`` among them) and a
``run(context) -> list[Flag]`` method; it is independent of the others (paper 003, Sect. 4.3:
"every error type is handled by an own independent module enabling a particular configuration of
the pipeline"). The only thing rules share is :attr:`CheckContext.faulty`: the annotations an
earlier rule flagged, which the inconsistent-marking module leaves out of its index as the paper says.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import ClassVar, Protocol

import pandas as pd

DocKey = tuple[str, str]


@dataclass(frozen=True)
class Flag:
    """One row of the flags table (:mod:`posthoc.eaglet.flags`, which re-exports it)."""

    dataset: str
    doc_id: str
    start: int
    end: int
    surface: str
    link: str
    rule: str
    suggestion: str
    system: str
    partner_start: int = -1
    partner_end: int = -1
    partner_link: str = ""
    detail: str = ""

    @property
    def flag_id(self) -> str:
        key = "\x1f".join(map(str, (self.dataset, self.doc_id, self.system, self.rule, self.start, self.end,
                                    self.link, self.partner_start, self.partner_end, self.partner_link)))
        return "f" + hashlib.sha1(key.encode("utf-8"), usedforsecurity=False).hexdigest()[:15]


@dataclass(frozen=True)
class Annotation:
    """One annotation of the checked system; ``index`` is its row in the checked mentions table."""

    index: int
    dataset: str
    doc_id: str
    start: int
    end: int
    surface: str
    link: str
    link_original: str
    is_nil: bool

    @property
    def key(self) -> DocKey:
        return (self.dataset, self.doc_id)


@dataclass
class CheckContext:
    """The corpus as the rules see it.

    ``texts``: document text per ``(dataset, doc_id)``; ``annotations``: the checked system's
    annotations per document, sorted by ``(start, end)``; ``others``: the mentions of every other
    system (the completion module's votes); ``system``: the checked system's name; ``faulty``:
    indices of annotations flagged by rules that ran earlier.
    """

    texts: dict[DocKey, str]
    annotations: dict[DocKey, list[Annotation]]
    others: pd.DataFrame
    system: str
    faulty: set[int] = field(default_factory=set)

    @classmethod
    def from_tables(cls, documents: pd.DataFrame, mentions: pd.DataFrame, *, system: str) -> CheckContext:
        texts = {(str(d), str(i)): str(t) for d, i, t in documents[["dataset", "doc_id", "text"]].itertuples(
            index=False)}
        checked = mentions[mentions["system"] == system].reset_index(drop=True)
        grouped: dict[DocKey, list[Annotation]] = {key: [] for key in texts}
        columns = ["dataset", "doc_id", "start", "end", "surface", "link", "link_original", "is_nil"]
        for index, (dataset, doc_id, start, end, surface, link, original, nil) in enumerate(
                checked[columns].itertuples(index=False)):
            link_text = "" if pd.isna(link) else str(link)
            original_text = "" if pd.isna(original) else str(original)
            annotation = Annotation(index, str(dataset), str(doc_id), int(start), int(end), str(surface),
                                    link_text, original_text, bool(nil))
            grouped.setdefault(annotation.key, []).append(annotation)
        for items in grouped.values():
            items.sort(key=lambda a: (a.start, a.end, a.link))
        others = mentions[mentions["system"] != system].reset_index(drop=True)
        return cls(texts=texts, annotations=grouped, others=others, system=system)

    def flag(self, annotation: Annotation, rule: str, suggestion: str, **extra: object) -> Flag:
        """A flag on an existing annotation (also recorded in :attr:`faulty`)."""
        self.faulty.add(annotation.index)
        return Flag(annotation.dataset, annotation.doc_id, annotation.start, annotation.end, annotation.surface,
                    annotation.link, rule, suggestion, self.system, **extra)  # type: ignore[arg-type]


class Rule(Protocol):
    """A rule module: a name, an ``enabled`` switch and ``run``; its class declares its place in the pipeline.

    ``order``: where it runs (the paper's list, in tens: a new rule slots between two); ``flag_rules``: the
    ``rule`` values of the flags it writes (the flags table sorts them in this order); ``pipeline_options``:
    the keywords of :func:`posthoc.eaglet.pipeline.default_pipeline` it is built with. A class with these in a
    module of this package is registered (:data:`posthoc.eaglet.rules.RULE_TYPES`); nothing else lists it.
    """

    order: ClassVar[int]
    flag_rules: ClassVar[tuple[str, ...]]
    pipeline_options: ClassVar[tuple[str, ...]]

    @property
    def name(self) -> str: ...

    @property
    def enabled(self) -> bool: ...

    def run(self, context: CheckContext) -> list[Flag]: ...
