"""Prediction-powered mean (issue 46): parity with the authors' ppi_py on its own examples, and coverage over documents.

ppi_py's examples (its tests' Gaussian data; the galaxies and ballots notebooks, whose data files are downloads, as
data of the same shape generated here: a binary verdict, a probability or a 0/1 prediction, small labelled samples
of a large set) are run through both; the estimate and both bounds must agree to 1e-9 for PPI++ (tuned ``lam``),
PPI (``lam = 1``) and the classical mean (``lam = 0``) at every level the examples use.
"""

from __future__ import annotations

import numpy as np
import pytest

from posthoc.errors import PosthocInputError
from posthoc.metrics.ppi import ppi_mean

ppi_py = pytest.importorskip("ppi_py", reason="ppi-python (the test extra) is not installed")

ALPHAS = (0.5, 0.2, 0.1, 0.05, 0.01)  # ppi_py's tests' levels


def _gaussian_shift(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """ppi_py tests/test_mean.py ``test_ppi_mean_ci``: Y ~ N(0, 1), predictions N(-2, 1), 10,000 each."""
    return rng.normal(0, 1, 10_000), rng.normal(-2, 1, 10_000), rng.normal(-2, 1, 10_000)


def _offset(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """ppi_py ``test_ppi_mean_pointestimate``: Y ~ N(0, 1) (100), predictions Y + 2, unlabelled all 2."""
    y = rng.normal(0, 1, 100)
    return y, y + 2, np.full(10_000, 2.0)


def _galaxies(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """As examples/galaxies.ipynb: 16,743 galaxies, a binary label (spiral, ~26%), a classifier's probability;
    ``n`` labelled at random, the rest unlabelled."""
    total = 16_743
    label = (rng.random(total) < 0.26).astype(float)
    probability = np.clip(0.15 + 0.7 * label + rng.normal(0, 0.15, total), 0, 1)
    chosen = rng.permutation(total)
    return label[chosen[:n]], probability[chosen[:n]], probability[chosen[n:]]


def _ballots(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """As examples/ballots.ipynb: ~100,000 ballots, a 0/1 vote read by hand (``n``), a 0/1 prediction (~95% right)."""
    total = 100_000
    vote = (rng.random(total) < 0.51).astype(float)
    predicted = np.where(rng.random(total) < 0.95, vote, 1 - vote)
    chosen = rng.permutation(total)
    return vote[chosen[:n]], predicted[chosen[:n]], predicted[chosen[n:]]


CASES = {
    "gaussian shift (test_ppi_mean_ci)": lambda rng: _gaussian_shift(rng),
    "offset predictions (test_ppi_mean_pointestimate)": lambda rng: _offset(rng),
    **{f"galaxies, n = {n}": (lambda rng, n=n: _galaxies(rng, n)) for n in (10, 50, 100, 500, 1000)},
    **{f"ballots, n = {n}": (lambda rng, n=n: _ballots(rng, n)) for n in (50, 200, 1000)},
}


@pytest.mark.parametrize("lam", [None, 1.0, 0.0], ids=["PPI++ (tuned lam)", "PPI (lam 1)", "classical (lam 0)"])
@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_estimate_and_interval_equal_ppi_py(case, lam):
    worst = 0.0
    for seed in range(3):
        y, predicted, unlabeled = CASES[case](np.random.default_rng(seed))
        expected = float(np.asarray(ppi_py.ppi_mean_pointestimate(y, predicted, unlabeled, lam=lam)).ravel()[0])
        for alpha in ALPHAS:
            ours = ppi_mean(y, predicted, unlabeled, lam=lam, confidence=1 - alpha)
            low, high = (float(np.asarray(b).ravel()[0]) for b in
                         ppi_py.ppi_mean_ci(y, predicted, unlabeled, alpha=alpha, lam=lam))
            worst = max(worst, abs(ours.estimate - expected), abs(ours.low - low), abs(ours.high - high))
        # every item its own unit, spelled out: the same numbers
        spelled = ppi_mean(y, predicted, unlabeled, lam=lam, clusters=np.arange(len(y)),
                           clusters_unlabeled=np.arange(len(y), len(y) + len(unlabeled)), confidence=1 - ALPHAS[-1])
        worst = max(worst, abs(spelled.low - ours.low), abs(spelled.high - ours.high))
    assert worst <= 1e-9


def test_the_tuned_lam_is_ppi_pys():
    from ppi_py.ppi import _calc_lam_glm

    rng = np.random.default_rng(9)
    y = rng.normal(0, 1, 300)
    predicted, unlabeled = 0.5 * y + rng.normal(0, 1, 300), rng.normal(0, 1.1, 3000)
    centre = float(np.asarray(ppi_py.ppi_mean_pointestimate(y, predicted, unlabeled, lam=1)).ravel()[0])
    theirs = _calc_lam_glm((y - centre)[:, None], (predicted - centre)[:, None], (unlabeled - centre)[:, None],
                           np.eye(1), clip=True)
    assert ppi_mean(y, predicted, unlabeled).lam == pytest.approx(theirs, abs=1e-12)
    assert 0.2 < theirs < 0.6  # tuned: neither PPI (1) nor the judged mean alone (0)


def _document_study(rng: np.random.Generator, *, n_docs: int, judged_docs: int, per_doc: int = 8,
                    doc_sd: float = 1.2) -> tuple[np.ndarray, ...]:
    """Documents with a shared difficulty (logit scale): each document's items verified with its own probability;
    the predictor knows the item's class (a strict-match class, its base rate) but not the document. A random set of
    ``judged_docs`` documents is judged whole. Truth: the population's mean verify probability (simulated)."""
    base = np.log(np.array([0.92, 0.6, 0.3]) / (1 - np.array([0.92, 0.6, 0.3])))
    kind = rng.choice(3, size=(n_docs, per_doc), p=[0.6, 0.25, 0.15])
    shift = rng.normal(0, doc_sd, (n_docs, 1))
    probability = 1 / (1 + np.exp(-(base[kind] + shift)))
    verdict = (rng.random(probability.shape) < probability).astype(float)
    predicted = np.array([0.87, 0.58, 0.33])[kind]
    documents = np.repeat(np.arange(n_docs)[:, None], per_doc, axis=1)
    judged = np.zeros(n_docs, dtype=bool)
    judged[rng.choice(n_docs, judged_docs, replace=False)] = True
    return verdict, predicted, documents, judged


def test_the_document_clustered_interval_covers_where_the_items_interval_does_not():
    """A difficulty documents share: the interval clustered over documents covers the truth at its level (0.95 +-
    0.03 at 400 studies), the one that treats items as independent falls short (below 0.90)."""
    rng = np.random.default_rng(0)
    kind = rng.choice(3, 2_000_000, p=[0.6, 0.25, 0.15])
    logit = np.log(np.array([0.92, 0.6, 0.3]) / (1 - np.array([0.92, 0.6, 0.3])))[kind] + rng.normal(0, 1.2, len(kind))
    truth = float(np.mean(1 / (1 + np.exp(-logit))))  # a standard error of 2e-4, far below the intervals' width
    covered = {"documents": 0, "items": 0}
    n_studies = 400
    for repeat in range(n_studies):
        verdict, predicted, documents, judged = _document_study(np.random.default_rng(1000 + repeat), n_docs=120,
                                                                judged_docs=40)
        args = (verdict[judged].ravel(), predicted[judged].ravel(), predicted[~judged].ravel())
        clustered = ppi_mean(*args, clusters=documents[judged].ravel(), clusters_unlabeled=documents[~judged].ravel())
        plain = ppi_mean(*args)
        covered["documents"] += clustered.low <= truth <= clustered.high
        covered["items"] += plain.low <= truth <= plain.high
    assert 0.92 <= covered["documents"] / n_studies <= 0.98
    assert covered["items"] / n_studies < 0.90


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"y": [1, 0], "predicted": [1], "predicted_unlabeled": [1]}, "y has 2 items, predicted 1"),
    ({"y": [1], "predicted": [1], "predicted_unlabeled": [1]}, "at least 2 judged items"),
    ({"y": [1, np.nan], "predicted": [1, 1], "predicted_unlabeled": [1]}, "y holds a missing"),
    ({"y": [1, 0], "predicted": [1, 1], "predicted_unlabeled": [1], "clusters": ["a"]}, "clusters needs one unit"),
    ({"y": [1, 0], "predicted": [1, 1], "predicted_unlabeled": [1], "confidence": 1.0}, "confidence must be"),
], ids=["lengths differ", "one judged item", "a missing verdict", "too few clusters", "confidence 1"])
def test_bad_input_is_one_line(kwargs, message):
    with pytest.raises(PosthocInputError, match=message):
        ppi_mean(**kwargs)
