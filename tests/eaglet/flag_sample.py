"""The seeded sample of flags labelled by hand (issue 17), and the precision it gives.

The flags are those of the default pipeline on the two NIF gold standards in ``../shared/data/nif``
(Reuters-128 and RSS-500, checked system GT, no KB). Per rule and corpus at most
:data:`PER_RULE_AND_CORPUS` flags are drawn with :data:`SEED` (all when there are fewer):

- ``positioning``: every flag;
- ``combined_marking``: the proposed merges (``insert``); the ``check`` flags on their parts are the
  same decision and are judged with them;
- ``inconsistent_marking``: the proposals.

Each drawn flag is labelled ``right`` / ``wrong`` / ``debatable`` by paper 003's rules (Sect. 3.2,
3.4) with a one-line reason, in ``data/flag_sample.tsv``. Precision is ``right / labelled``
(debatable counts against the rule); ``lenient`` leaves debatable ones out.

``python -m tests.eaglet.flag_sample [--wned]`` writes the unlabelled draw (it never overwrites
labels); ``--wned`` draws the held-out sample from WNED-Wikipedia, a corpus the rules were not
designed on (:data:`HELD_OUT_PER_RULE` per rule), with :data:`HELD_OUT_SEED`.

Two rounds (issue 17). *Before*: the rules of commit 50d3db7, sample drawn with seed 17
(``data/flag_sample_before.tsv``, ``data/flag_sample_wned_before.tsv``, kept as labelled). *After*:
inconsistent marking changed from their wrong and debatable rows (commit 82b1d17), then drawn again:
the main sample with a new seed (:data:`SEED`), so its inconsistent-marking rows are not mostly the
ones the change was designed on; the held-out one with seed 17 as before, so its positioning and
combined-marking rows (rules unchanged) are the same flags.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Final

import pandas as pd

from posthoc.eaglet.pipeline import default_pipeline
from posthoc.readers import Corpus, read_mentions

SEED: Final = 20261201
HELD_OUT_SEED: Final = 17
PER_RULE_AND_CORPUS: Final = 40
SAMPLED_RULES: Final = {"positioning": ("delete", "update-span"), "combined_marking": ("insert",),
                        "inconsistent_marking": ("insert",)}
LABELS: Final = ("right", "wrong", "debatable")
SAMPLE_FILE: Final = Path(__file__).parent / "data" / "flag_sample.tsv"
#: The first round (rules of commit 50d3db7, seed 17), kept as labelled: the "before" figures.
BEFORE_FILE: Final = Path(__file__).parent / "data" / "flag_sample_before.tsv"
HELD_OUT_BEFORE_FILE: Final = Path(__file__).parent / "data" / "flag_sample_wned_before.tsv"
#: A corpus the rules were not designed on (drawn after they were merged): WNED-Wikipedia, 20 per rule.
HELD_OUT_FILE: Final = Path(__file__).parent / "data" / "flag_sample_wned.tsv"
HELD_OUT_PER_RULE: Final = 20
COLUMNS: Final = ("flag_id", "dataset", "doc_id", "rule", "start", "end", "surface", "link", "label", "reason")


def held_out(shared_data: Path) -> Corpus:
    """WNED-Wikipedia (``../shared/data/wned-wikipedia``), the held-out corpus."""
    return read_mentions(shared_data / "wned-wikipedia")


def corpora(shared_data: Path) -> Corpus:
    """Reuters-128 and RSS-500 as one corpus (datasets kept apart)."""
    return read_mentions(shared_data / "nif" / "Reuters-128.ttl").merge(read_mentions(shared_data / "nif" /
                                                                                      "RSS-500.ttl"))


def default_flags(corpus: Corpus) -> pd.DataFrame:
    """The default pipeline's flags for GT (what a user gets without options)."""
    return default_pipeline().run(corpus.documents, corpus.mentions, system="GT")


def draw(flags: pd.DataFrame, *, per_rule_and_corpus: int = PER_RULE_AND_CORPUS, seed: int = SEED) -> pd.DataFrame:
    """The seeded sample (module docstring), ordered by rule, dataset and flag id."""
    parts = []
    for rule, suggestions in SAMPLED_RULES.items():
        chosen = flags[(flags["rule"] == rule) & flags["suggestion"].isin(suggestions)]
        for _, group in chosen.groupby("dataset", sort=True):
            group = group.sort_values("flag_id").reset_index(drop=True)
            if len(group) > per_rule_and_corpus:
                group = group.sample(n=per_rule_and_corpus, random_state=seed)
            parts.append(group.sort_values("flag_id"))
    sample = pd.concat(parts, ignore_index=True) if parts else flags.head(0)
    return sample[list(COLUMNS[:8])].reset_index(drop=True)


def counts(flags: pd.DataFrame) -> pd.DataFrame:
    """Flags per rule and dataset of the sampled kinds (the population the sample is drawn from)."""
    rows = []
    for rule, suggestions in SAMPLED_RULES.items():
        chosen = flags[(flags["rule"] == rule) & flags["suggestion"].isin(suggestions)]
        for dataset, group in chosen.groupby("dataset", sort=True):
            rows.append({"rule": rule, "dataset": str(dataset), "flags": len(group)})
    return pd.DataFrame(rows, columns=["rule", "dataset", "flags"])


def read_sample(path: Path = SAMPLE_FILE) -> pd.DataFrame:
    """The labelled sample (comment lines ``#`` hold the date and commits)."""
    return pd.read_csv(path, sep="\t", comment="#", dtype=str, keep_default_na=False)


def precision(sample: pd.DataFrame) -> pd.DataFrame:
    """Per rule and dataset (and ``all`` datasets): labelled, right, wrong, debatable, precision, lenient."""
    rows = []
    groups = [*sample.groupby(["rule", "dataset"], sort=True),
              *(((rule, "all"), group) for rule, group in sample.groupby("rule", sort=True))]
    for (rule, dataset), group in groups:
        tally = group["label"].value_counts()
        right, wrong, debatable = (int(tally.get(label, 0)) for label in LABELS)
        judged = right + wrong
        rows.append({"rule": rule, "dataset": dataset, "labelled": len(group), "right": right, "wrong": wrong,
                     "debatable": debatable, "precision": right / len(group) if len(group) else float("nan"),
                     "lenient": right / judged if judged else float("nan")})
    return pd.DataFrame(rows)


def main(shared_data: Path, *, wned: bool = False) -> None:
    target = HELD_OUT_FILE if wned else SAMPLE_FILE
    if target.exists():
        sys.exit(f"{target} exists; it holds labels, remove it by hand to draw again")
    flags = default_flags(held_out(shared_data) if wned else corpora(shared_data))
    sample = draw(flags, per_rule_and_corpus=HELD_OUT_PER_RULE if wned else PER_RULE_AND_CORPUS,
                  seed=HELD_OUT_SEED if wned else SEED)
    target.parent.mkdir(parents=True, exist_ok=True)
    sample.assign(label="", reason="").to_csv(target, sep="\t", index=False)
    print(counts(flags).to_string(index=False))
    print(f"{len(sample)} flags drawn to {target}")


if __name__ == "__main__":
    arguments = [a for a in sys.argv[1:] if a != "--wned"]
    main(Path(__file__).resolve().parents[3] / "shared" / "data" if not arguments else Path(arguments[0]),
         wned="--wned" in sys.argv)
