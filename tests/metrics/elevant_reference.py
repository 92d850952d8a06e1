"""ELEVANT's error labels, written from its source (not run): the reference of tests/metrics/test_error_categories.py.

Transcribed from ad-freiburg/elevant (fetched HEAD): ``src/elevant/evaluation/case_generator.py``
(``word_boundary``, ``get_evaluation_cases``: GT cases detected through the span or its word-boundary expansion,
then predicted cases whose span is neither a GT span nor an expanded one), ``case.py`` (``_get_ner_eval_type``,
``_get_linking_eval_type`` in the default ``EvaluationMode.IGNORED``), ``mention_type.py`` (``is_non_named_entity``,
``is_nominal``), ``utils/pronoun_finder.py`` (``is_pronoun``) and ``errors.py`` (``label_undetected_errors``,
``label_false_detections``, ``label_span_errors``, ``label_disambiguation_errors`` with ``is_partial_name``; an
entity database without demonyms, types or candidates, so demonym, metonymy and rare never apply). No optional,
child, date or quantity labels (the benchmarks here have none). Entity ids are canonical links; unknown is NIL.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

PRONOUNS = {"i", "my", "me", "myself", "mine", "you", "your", "yourself", "yours", "he", "his", "him", "himself", "she",
            "her", "herself", "hers", "it", "its", "itself", "we", "us", "our", "ourselves", "ours", "yourselves",
            "they", "their", "them", "themselves", "theirs"}
_COREF_PREFIXES = ("the ", "that ", "this ", "that ", "these ", "those ", "my ", "your ", "his ", "her ", "its ",
                   "our ", "their ")
Span = tuple[int, int]


def word_boundary(span: Span, text: str) -> Span:
    start, end = span
    while start > 0 and (text[start - 1].isalnum() or text[start - 1] in "'\"_"):
        start -= 1
    while end < len(text) - 1 and (text[end].isalnum() or text[end] in "'\"_"):
        end += 1
    if text[start] == '"' and '"' not in text[start + 1:end]:
        start += 1
    return start, end


def is_pronoun(text: str) -> bool:
    return text.lower() in PRONOUNS and (not text.isupper() or text.lower() == "i")


def is_nominal(mention: str) -> bool:
    lower = mention.lower()
    return any(lower.startswith(p) and len(mention) > len(p) and not mention[len(p)].isupper()
               for p in _COREF_PREFIXES)


def is_non_named_entity(name: str) -> bool:
    alpha = [c for c in name if c.isalpha()]
    return not (alpha and alpha[0].isupper())


def is_unknown(entity: str | None) -> bool:
    return entity is None or entity.startswith("nil:")


def entity_name(link: str) -> str:
    from urllib.parse import unquote

    title = unquote(link.rsplit("/wiki/", 1)[-1]).replace("_", " ") if "/wiki/" in link else ""
    return re.sub(r"\s+\([^()]*\)$", "", title)


def overlaps(a: Span, b: Span) -> bool:
    return not (a[0] >= b[1] or b[0] >= a[1])


@dataclass
class Case:
    span: Span
    text: str
    true_entity: str | None
    predicted: str | None
    labels: set[str] = field(default_factory=set)

    def coreference(self) -> bool:
        return is_pronoun(self.text) or is_nominal(self.text)

    def ner(self) -> list[str]:  # _get_ner_eval_type, IGNORED, no optional labels
        if self.true_entity is None:
            return [] if self.predicted is None or is_unknown(self.predicted) else ["FP"]
        if self.predicted is None:
            return [] if is_unknown(self.true_entity) else ["FN"]
        if not is_unknown(self.true_entity):
            return ["TP"] if not is_unknown(self.predicted) else ["FN"]
        return ["FP"] if not is_unknown(self.predicted) else []

    def linking(self) -> list[str]:  # _get_linking_eval_type, IGNORED
        if self.true_entity is None:
            return [] if self.predicted is None or is_unknown(self.predicted) else ["FP"]
        if self.predicted is None:
            return [] if is_unknown(self.true_entity) else ["FN"]
        if not is_unknown(self.true_entity):
            if not is_unknown(self.predicted):
                return ["TP"] if self.true_entity == self.predicted else ["FN", "FP"]
            return ["FN"]
        return ["FP"] if not is_unknown(self.predicted) else []


def evaluation_cases(text: str, gt: dict[Span, str], predictions: dict[Span, str]) -> list[Case]:
    """``get_evaluation_cases``: one case a GT label, then one a prediction on no (expanded) GT span."""
    expanded = {word_boundary(span, text): link for span, link in predictions.items()}
    every = {**predictions, **expanded}
    gt_spans = set(gt) | {word_boundary(span, text) for span in gt}
    cases = []
    for span, link in sorted(gt.items()):
        wide = word_boundary(span, text)
        predicted = every.get(span, every.get(wide)) if span in every or wide in every else None
        cases.append(Case(span, text[span[0]:span[1]], link, predicted))
    for span, link in sorted(predictions.items()):
        if span not in gt_spans and word_boundary(span, text) not in gt_spans and link is not None:
            cases.append(Case(span, text[span[0]:span[1]], None, link))
    return sorted(cases, key=lambda case: case.span)


def label_errors(cases: list[Case], *, contains_unknowns: bool) -> None:
    """``label_undetected_errors``, ``label_disambiguation_errors``, ``label_false_detections``,
    ``label_span_errors`` in ``label_errors``' order (IGNORED mode, no entity database)."""
    fp_spans = [case.span for case in cases if "FP" in case.ner()]
    for case in cases:
        if not case.coreference() and "FN" in case.ner():
            case.labels.add("NER_FN")
            if is_non_named_entity(case.text):
                case.labels.add("NER_FN_LOWERCASED")
            elif any(fp != case.span and case.span[0] <= fp[0] and case.span[1] >= fp[1] for fp in fp_spans):
                case.labels.add("NER_FN_PARTIALLY_INCLUDED")
            elif any(overlaps(case.span, fp) for fp in fp_spans):
                case.labels.add("NER_FN_PARTIAL_OVERLAP")
            else:
                case.labels.add("NER_FN_OTHER")
    for case in cases:
        linking = case.linking()
        if not case.coreference() and "FN" in linking and "FP" in linking:
            case.labels.add("DISAMBIGUATION_WRONG")
            name = entity_name(case.true_entity or "") if not is_unknown(case.true_entity) else ""
            partial = bool(name) and " " in name and len(case.text) < len(name) and case.text in name
            case.labels.add("DISAMBIGUATION_PARTIAL_NAME_WRONG" if partial else "DISAMBIGUATION_OTHER_WRONG")
    relevant = {case.span: case.true_entity for case in cases
                if case.true_entity is not None and not is_unknown(case.true_entity)}
    for case in cases:
        if not case.coreference() and "FP" in case.ner():
            case.labels.add("NER_FP")
            overlap = any(overlaps(case.span, span) for span in relevant)
            named = not is_non_named_entity(case.text)
            if not overlap and not named:
                case.labels.add("NER_FP_LOWERCASED")
            elif named and ((not overlap and not contains_unknowns) or
                            (case.true_entity is not None and is_unknown(case.true_entity))):
                case.labels.add("NER_FP_GROUNDTRUTH_UNKNOWN")
            else:
                case.labels.add("NER_FP_OTHER")
    for case in cases:
        if "FP" in case.ner():
            for span, entity in relevant.items():
                if span != case.span and overlaps(case.span, span) and case.predicted == entity:
                    case.labels.add("NER_FP_WRONG_SPAN")
                    break
