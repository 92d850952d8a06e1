"""Eaglet's error detection pipeline (paper 003, Sect. 4.3) with the completion module (Sect. 4.2).

The order is explicit (:data:`~posthoc.eaglet.rules.DEFAULT_ORDER`, from each rule class's ``order``) and
follows the paper's list: long description, positioning, overlapping, combined marking, URI errors,
inconsistent marking (which indexes only annotations no earlier module flagged), then the completion
module's missing entities. Every rule is a configurable object and can be left out (``only=`` /
``Pipeline(rules=...)``).

``run_pipeline(corpus, system="GT")`` checks the annotations of one system of a
:class:`~posthoc.readers.Corpus` -- a ground truth, a system's output or a verification union --
and returns the flags table (:mod:`posthoc.eaglet.flags`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
from tqdm import tqdm

from posthoc.eaglet.flags import flags_frame
from posthoc.eaglet.kb import KnowledgeBase
from posthoc.eaglet.rules import DEFAULT_ORDER, RULE_TYPES, CheckContext, Flag, Rule
from posthoc.errors import PosthocInputError
from posthoc.readers.corpus import Corpus

__all__ = ["DEFAULT_ORDER", "Pipeline", "default_pipeline", "run_pipeline"]


@dataclass(frozen=True)
class Pipeline:
    """Rules run in the given order; disabled ones (``enabled=False``) are skipped."""

    rules: tuple[Rule, ...]

    @property
    def names(self) -> list[str]:
        return [rule.name for rule in self.rules if rule.enabled]

    def run(self, documents: pd.DataFrame, mentions: pd.DataFrame, *, system: str = "GT",
            progress: bool = False) -> pd.DataFrame:
        """The flags table for ``system``'s annotations in ``mentions`` over ``documents``."""
        if system not in set(mentions["system"].astype(str)) and not mentions.empty:
            present = ", ".join(sorted(set(mentions["system"].astype(str))))
            raise PosthocInputError(f"system {system!r} has no annotations here; systems present: {present}")
        context = CheckContext.from_tables(documents, mentions, system=system)
        flags: list[Flag] = []
        active = [rule for rule in self.rules if rule.enabled]
        for rule in tqdm(active, desc="eaglet rules", disable=not progress, unit="rule"):
            flags.extend(rule.run(context))
        return flags_frame(flags)


def default_pipeline(*, kb: KnowledgeBase | None = None, only: Sequence[str] | None = None, tagger: str = "auto",
                     touching: bool = False, cross_line_breaks: bool = False, normalise: str = "exact",
                     common_words: bool = False, match: str = "span", min_votes: int | None = None) -> Pipeline:
    """The pipeline in :data:`DEFAULT_ORDER` with the given options.

    ``only``: names from :data:`DEFAULT_ORDER` to run (default all); ``kb``: a KB for the URI
    module (without one it checks only the form of links) and combined marking's evidence;
    ``tagger``: the long description tagger (pattern / rules / auto); ``touching``: Eaglet's
    overlap rule (touching spans overlap); ``cross_line_breaks``: combined marking across line
    breaks; ``normalise``: inconsistent marking's token comparison (exact / casefold / lemma);
    ``common_words``: inconsistent marking also proposes numbers, lower-case words, a month or
    weekday and one-word adjectives, as the paper's module does;
    ``match``, ``min_votes``: the completion module's vote (span / span_link; default a strict
    majority).
    """
    selected = set(DEFAULT_ORDER if only is None else only)
    unknown = selected - set(DEFAULT_ORDER)
    if unknown:
        raise PosthocInputError(f"unknown rule(s) {', '.join(sorted(unknown))}; known: {', '.join(DEFAULT_ORDER)}")
    options: dict[str, Any] = {"kb": kb, "tagger": tagger, "touching": touching,
                               "cross_line_breaks": cross_line_breaks, "normalise": normalise,
                               "common_words": common_words, "match": match, "min_votes": min_votes}
    rules = tuple(rule_type(enabled=name in selected,  # type: ignore[call-arg]
                            **{key: options[key] for key in rule_type.pipeline_options})
                  for rule_type, name in zip(RULE_TYPES, DEFAULT_ORDER, strict=True))
    return Pipeline(rules)


def run_pipeline(corpus: Corpus, *, system: str = "GT", pipeline: Pipeline | None = None,
                 progress: bool = False) -> pd.DataFrame:
    """Flags for ``system``'s annotations in ``corpus`` (default pipeline when ``pipeline`` is None)."""
    return (pipeline or default_pipeline()).run(corpus.documents, corpus.mentions, system=system, progress=progress)
