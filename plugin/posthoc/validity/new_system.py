"""Validity of a new system's posthoc precision from reused, sampled and predicted verdicts (issue 46).

:func:`simulate_new_system` draws the new system's annotations in documents with effects (a difficulty each
document shares and a new-system x document term, logit scale): each annotation is reused (the study judged it in
another system's task) with probability ``overlap``, has a strict class (:data:`CLASS_MIX`) whose base rate
(:data:`BASE_RATES`, pulled towards their mean by ``link`` < 1) sets its verify probability, and sits in a chunk of
``chunk_size`` annotations; a seeded ``fraction`` of the chunks is judged. A reused verdict was given in another
task: ``context`` shifts its logit (0: context does not matter). The truth is the new system's expected verify
probability in its own tasks (Gauss-Hermite, :func:`posthoc.synthetic.document_verify_probability`).

:func:`new_system_checks` runs :func:`posthoc.metrics.new_system.new_system_precision` on cross-fitted predictions
(:func:`~posthoc.metrics.new_system.cross_fitted_predictions`) over many studies: coverage of the 95% interval and
mean bias per setting. In a context setting the reuse check refuses reuse (tests/metrics/test_reuse.py), so the
estimate there judges and predicts every annotation; the bias reuse would have caused is reported beside it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

import numpy as np
from tqdm import tqdm

from posthoc.arrays import Bools, Floats, Ints, Strings
from posthoc.metrics.new_system import cross_fitted_predictions, new_system_precision
from posthoc.synthetic import document_verify_probability
from posthoc.validity import Check, at_most, within

BASE_RATES: Final = {"exact": 0.95, "same_span_other_link": 0.45, "no_gt_span": 0.7}
#: P(class | reused), P(class | novel): a reused annotation mostly matches the ground truth exactly
CLASS_MIX: Final = {"reused": (0.8, 0.1, 0.1), "novel": (0.15, 0.3, 0.55)}


@dataclass(frozen=True)
class NewSystemSetting:
    """One simulated setting: documents, annotations per document, reused share, judged share of chunks, the
    class-verdict link (1: :data:`BASE_RATES`, 0: no link), document effects and the context shift of reused
    verdicts; ``reuse``: whether the estimate reuses them (the reuse check's decision)."""

    n_docs: int = 40
    per_doc: int = 12
    chunk_size: int = 4
    overlap: float = 0.6
    fraction: float = 0.3
    link: float = 1.0
    doc_sd: float = 1.0
    system_doc_sd: float = 0.5
    context: float = 0.0
    reuse: bool = True

    def label(self) -> str:
        return (f"{self.n_docs} docs x {self.per_doc}, overlap {self.overlap:g}, judged {self.fraction:g} of chunks, "
                f"link {self.link:g}, doc sd {self.doc_sd:g}/{self.system_doc_sd:g}, context {self.context:+g}"
                f"{'' if self.reuse else ', reuse refused'}")


def _base(link: float) -> dict[str, float]:
    logits = {c: math.log(p / (1 - p)) for c, p in BASE_RATES.items()}
    centre = float(np.mean(list(logits.values())))
    return {c: 1 / (1 + math.exp(-(centre + link * (v - centre)))) for c, v in logits.items()}


def true_precision(setting: NewSystemSetting) -> float:
    """The new system's expected verify probability in its own tasks (classes mixed by ``overlap``)."""
    base = _base(setting.link)
    total = 0.0
    for i, name in enumerate(BASE_RATES):
        share = setting.overlap * CLASS_MIX["reused"][i] + (1 - setting.overlap) * CLASS_MIX["novel"][i]
        total += share * document_verify_probability(base[name], doc_effect_sd=setting.doc_sd,
                                                     system_doc_sd=setting.system_doc_sd)
    return total


def simulate_new_system(setting: NewSystemSetting, rng: np.random.Generator
                        ) -> tuple[Floats, Bools, Bools, Strings, Ints, Floats]:
    """One study: ``(verdicts, reused, in_sample, classes, documents, verdicts_in_own_tasks)`` per annotation
    (``in_sample``: its chunk is in the judged sample; ``verdicts``: the reused one where reused)."""
    n = setting.n_docs * setting.per_doc
    documents = np.repeat(np.arange(setting.n_docs), setting.per_doc)
    chunks = documents * setting.per_doc + np.tile(np.arange(setting.per_doc) // setting.chunk_size, setting.n_docs)
    reused = rng.random(n) < setting.overlap
    names = np.asarray(list(BASE_RATES), dtype=object)
    draw = np.where(reused, 0, 1)
    mixes = np.asarray([CLASS_MIX["reused"], CLASS_MIX["novel"]])
    classes = names[(rng.random(n)[:, None] > np.cumsum(mixes[draw], axis=1)).sum(axis=1)]
    base = _base(setting.link)
    logit = np.log(np.array([base[c] for c in classes]) / (1 - np.array([base[c] for c in classes])))
    logit = logit + rng.normal(0, setting.doc_sd, setting.n_docs)[documents] + rng.normal(
        0, setting.system_doc_sd, setting.n_docs)[documents]
    own = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(float)
    elsewhere = (rng.random(n) < 1 / (1 + np.exp(-(logit + setting.context)))).astype(float)
    verdicts = np.where(reused, elsewhere, own)
    chunk_sampled = rng.random(int(chunks.max()) + 1) < setting.fraction
    return verdicts, reused, chunk_sampled[chunks], classes.astype(str), documents, own


def full_study_halfwidth(verdicts: Floats, documents: Ints) -> float:
    """The 95% half-width of a full posthoc study of the new system (every annotation judged): its verification
    rate with the cluster jackknife t over documents, as :func:`new_system_precision`'s."""
    from scipy import stats

    sums, counts = np.bincount(documents, weights=verdicts), np.bincount(documents).astype(float)
    left_out = (sums.sum() - sums) / (counts.sum() - counts)
    g = len(left_out)
    return float(stats.t.ppf(0.975, g - 1) * np.sqrt((g - 1) / g * np.sum((left_out - left_out.mean()) ** 2)))


def _one_study(setting: NewSystemSetting, rng: np.random.Generator) -> tuple[float, ...]:
    """``(estimate, low, high, naive, judgements, full half-width)``: naive reuses whatever the setting's estimate
    does not; judgements: the sample's (a full study judges every annotation)."""
    verdicts, reused, in_sample, classes, documents, own = simulate_new_system(setting, rng)
    judged = in_sample & ~reused
    if not setting.reuse:  # the check refused reuse: the study's verdicts are not used; the sample covers all
        chunk_judged = in_sample
        as_novel = np.where(chunk_judged, own, 0.0)
        predictions = cross_fitted_predictions(classes, as_novel, chunk_judged, documents,
                                               seed=int(rng.integers(1_000_000_000)))
        result = new_system_precision(as_novel, reused=np.zeros(len(own), dtype=bool), judged=chunk_judged,
                                      predictions=predictions, doc_ids=documents)
        judgements = float(chunk_judged.sum())
    else:
        known = reused | judged
        predictions = cross_fitted_predictions(classes, verdicts, known, documents,
                                               seed=int(rng.integers(1_000_000_000)))
        result = new_system_precision(verdicts, reused=reused, judged=judged, predictions=predictions,
                                      doc_ids=documents)
        judgements = float(judged.sum())
    naive_known = reused | judged
    naive_predictions = cross_fitted_predictions(classes, verdicts, naive_known, documents, seed=1)
    naive = new_system_precision(verdicts, reused=reused, judged=judged, predictions=naive_predictions,
                                 doc_ids=documents).estimate
    return (result.estimate, result.low, result.high, naive, judgements,
            full_study_halfwidth(own, documents.astype(np.int64)))


def new_system_checks(settings: tuple[NewSystemSetting, ...], *, n_studies: int = 200, seed: int = 0,
                      coverage_band: tuple[float, float] = (0.93, 0.97), bias_target: float = 0.01,
                      progress: bool = False) -> list[Check]:
    """Coverage and mean bias of the new system's posthoc precision per setting; in a context setting also the
    mean bias reuse would have had (reported)."""
    checks = []
    for number, setting in enumerate(settings):
        rng = np.random.default_rng([seed, number])
        truth = true_precision(setting)
        found = np.array([_one_study(setting, rng) for _ in tqdm(range(n_studies), desc="new system",
                                                                 disable=not progress, unit=" study")])
        name = "new system posthoc precision (reused + judged + PPI)"
        where = f"{setting.label()}, truth {truth:.3f}"
        checks.append(within(name, where, n_studies, "95% coverage",
                             float(np.mean((found[:, 1] <= truth) & (truth <= found[:, 2]))), *coverage_band))
        checks.append(at_most(name, where, n_studies, "mean bias", float(np.mean(found[:, 0] - truth)), bias_target,
                              absolute=True))
        checks.append(Check(name, where, n_studies, "mean half-width", float(np.mean(found[:, 2] - found[:, 1]) / 2),
                            "(reported)", True))
        checks.append(Check(name, where, n_studies, "judgements / a full study's", float(np.mean(found[:, 4]))
                            / (setting.n_docs * setting.per_doc), "(reported)", True))
        checks.append(Check("full posthoc study of the new system (every annotation judged)", where, n_studies,
                            "mean half-width", float(np.mean(found[:, 5])), "(reported)", True))
        if setting.context != 0:
            checks.append(Check(f"{name}, had the verdicts been reused", where, n_studies, "mean bias",
                                float(np.mean(found[:, 3] - truth)), "(reported)", True))
    return checks
