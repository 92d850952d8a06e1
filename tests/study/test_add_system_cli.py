"""``posthoc study add-system`` at the edge: a dry run changes nothing, bad input is one line and exit 2 with nothing
written, a rerun after the revision adds nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from extend_factory import planned_study
from extend_factory import posthoc_cli as _posthoc

from posthoc.study.plan.manifest import Manifest


def _new_output(source: Path, target: Path, *, system: str = "NEW") -> None:
    """E2E's output renamed: every other annotation keeps its link (in DBpedia form: reused), the rest get
    another link (novel)."""
    lines = []
    for number, line in enumerate(source.read_text(encoding="utf-8").splitlines()):
        record = json.loads(line)
        record["system"] = system
        for i, mention in enumerate(record["mentions"]):
            title = str(mention["link"]).rsplit("/", 1)[-1]
            mention["link"] = f"dbr:{title}" if (i + number) % 2 == 0 else f"{title}_(film)"
        lines.append(json.dumps(record, ensure_ascii=False))
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture(scope="module")
def planned(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = planned_study(tmp_path_factory.mktemp("add-system-cli"))
    _new_output(folder / "pilot-E2E.jsonl", folder / "new.jsonl")
    _new_output(folder / "pilot-E2E.jsonl", folder / "again.jsonl", system="E2E")
    return folder


def test_dry_run_prints_the_split_and_the_sample_and_changes_nothing(planned: Path) -> None:
    before = (planned / "m.sqlite").read_bytes()
    runs = [_posthoc("study", "add-system", "--manifest", "m.sqlite", "--input", "new.jsonl", "--system", "NEW",
                     "--fraction", "0.5", "--dry-run", cwd=planned) for _ in range(2)]
    for done in runs:
        assert done.returncode == 0, done.stderr
        assert "system 'NEW':" in done.stdout and " reused, " in done.stdout
        assert "add-system revision 1 would add:" in done.stdout
    assert runs[0].stdout == runs[1].stdout  # seeded: the same sample each time
    assert (planned / "m.sqlite").read_bytes() == before


def test_target_halfwidth_with_the_default_rates(planned: Path) -> None:
    """Without --pilot (paper 000's rates): a wider target needs no more chunks than a narrower one."""
    from posthoc.study.planner.added_system import verified_share
    from posthoc.study.planner.rates import OutcomeRates

    sizes = []
    for target in ("0.02", "0.1"):
        done = _posthoc("study", "add-system", "--manifest", "m.sqlite", "--input", "new.jsonl", "--system", "NEW",
                        "--target-halfwidth", target, "--dry-run", cwd=planned)
        assert done.returncode == 0, done.stderr
        line = next(x for x in done.stdout.splitlines() if x.startswith("sample (--target-halfwidth"))
        assert f"verified share {verified_share(OutcomeRates(), 2):.3f}" in line  # k = 2: both judges verify
        sizes.append(int(line.split("): ")[1].split(" of ")[0]))
    assert sizes[0] >= sizes[1] >= 2


@pytest.mark.parametrize(("args", "message"), [
    (["--input", "again.jsonl", "--system", "E2E", "--fraction", "0.5"], "already in the study"),
    (["--system", "NEW"], "either --fraction"),
    (["--system", "NEW", "--fraction", "0.5", "--target-halfwidth", "0.05"], "either --fraction"),
    (["--system", "NEW", "--fraction", "1.5"], "--fraction must be in (0, 1]"),
    (["--system", "NEW", "--target-halfwidth", "2"], "between 0 and 1"),
    (["--system", "NEW", "--fraction", "0.5", "--pilot", "nothing.csv"], "nothing.csv"),
    (["--system", "NEW", "--fraction", "0.5"], "give --backend-url"),  # applying needs the setup's options
])
def test_bad_input_exits_2_and_writes_nothing(planned: Path, args: list[str], message: str) -> None:
    before = (planned / "m.sqlite").read_bytes()
    if "--input" not in args:
        args = ["--input", "new.jsonl", *args]
    done = _posthoc("study", "add-system", "--manifest", "m.sqlite", *args, cwd=planned)
    assert done.returncode == 2, done.stdout + done.stderr
    assert message in done.stderr and "Traceback" not in done.stderr
    assert (planned / "m.sqlite").read_bytes() == before


@pytest.mark.parametrize("problem", ["missing", "unreadable", "other documents"])
def test_an_unreadable_output_or_other_documents_exit_2(planned: Path, problem: str) -> None:
    before = (planned / "m.sqlite").read_bytes()
    path = planned / f"{problem.replace(' ', '-')}.jsonl"
    if problem == "unreadable":
        path.write_bytes(b"\xff\xfe not json\n")
    elif problem == "other documents":
        _new_output(planned / "pool-E2E.jsonl", path)  # the pool: documents the study does not have
    done = _posthoc("study", "add-system", "--manifest", "m.sqlite", "--input", path.name, "--system", "NEW",
                    "--fraction", "0.5", "--dry-run", cwd=planned)
    assert done.returncode == 2, done.stdout + done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert (planned / "m.sqlite").read_bytes() == before


def test_help_lists_the_exit_codes(planned: Path) -> None:
    done = _posthoc("study", "add-system", "--help", cwd=planned)
    assert done.returncode == 0
    assert "Exit codes:" in done.stdout and "--target-halfwidth" in done.stdout and "--fraction" in done.stdout


def test_a_rerun_after_the_revision_adds_nothing(planned: Path, tmp_path: Path) -> None:
    """The revision written as ``_apply`` writes it (without Label Studio), then the same command again."""
    from posthoc.readers import read_mentions
    from posthoc.study.plan.add_system import place_system, plan_added_system, sample_chunks
    from posthoc.study.plan.revision import config_of

    for name in ("m.sqlite", "new.jsonl"):
        (tmp_path / name).write_bytes((planned / name).read_bytes())
    manifest = Manifest.open(tmp_path / "m.sqlite")
    tables, config = manifest.raw_tables(), config_of(manifest.config)
    read = read_mentions(tmp_path / "new.jsonl", system="NEW", documents=tables["documents"])
    new = place_system(tables, read.documents, read.mentions, system="NEW")
    sampled = sample_chunks(new.novel_chunks(), 3, seed=config.seed, system="NEW")
    revision = plan_added_system(tables, config, new, sampled, revision=1, key_secret=None)
    Manifest.revise(tmp_path / "m.sqlite", revision.apply(tables, created="2026-01-01T00:00:00Z"),
                    expected_digest=manifest.digest).close()
    after = Manifest.open(tmp_path / "m.sqlite")
    stored = after.added_annotations()
    assert len(stored) == len(new.annotations) and set(stored["status"]) <= {"reused", "sampled", "unsampled",
                                                                              "unplaced"}
    assert sorted(set(stored.loc[stored["chunk_sampled"], "chunk_id"])) == sampled
    assert json.loads(after.revisions()["parameters"].iloc[0])["sampled_chunks"] == sampled
    before = (tmp_path / "m.sqlite").read_bytes()
    done = _posthoc("study", "add-system", "--manifest", "m.sqlite", "--input", "new.jsonl", "--system", "NEW",
                    "--fraction", "0.9", "--dry-run", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "was added in revision 1 with this output: nothing to change" in done.stdout
    assert (tmp_path / "m.sqlite").read_bytes() == before


def test_the_score_job_leaves_an_added_system_out_and_names_it(planned: Path, tmp_path: Path) -> None:
    """An added system's judgements are of its sampled chunks only: the score job leaves them out of the tables
    (its figures would be biased) and its summary names the system; the study's own systems are scored as before."""
    import pandas as pd

    from posthoc.jobs.score import _without_added_systems
    from posthoc.readers import read_mentions
    from posthoc.study.plan.add_system import place_system, plan_added_system, sample_chunks
    from posthoc.study.plan.revision import config_of
    from posthoc.study.plan.study import Study

    for name in ("m.sqlite", "new.jsonl"):
        (tmp_path / name).write_bytes((planned / name).read_bytes())
    judgements = pd.DataFrame({"system": ["GT", "E2E", "NEW", "NEW", "REL"], "outcome": ["verify"] * 5})
    unchanged, none_added = _without_added_systems(Study.open(tmp_path / "m.sqlite"), judgements)
    assert none_added == [] and unchanged is judgements  # a study without an added system: nothing left out
    manifest = Manifest.open(tmp_path / "m.sqlite")
    tables, config = manifest.raw_tables(), config_of(manifest.config)
    read = read_mentions(tmp_path / "new.jsonl", system="NEW", documents=tables["documents"])
    new = place_system(tables, read.documents, read.mentions, system="NEW")
    revision = plan_added_system(tables, config, new, sample_chunks(new.novel_chunks(), 2, seed=config.seed,
                                                                    system="NEW"), revision=1, key_secret=None)
    Manifest.revise(tmp_path / "m.sqlite", revision.apply(tables, created="2026-01-01T00:00:00Z"),
                    expected_digest=manifest.digest).close()
    kept, added = _without_added_systems(Study.open(tmp_path / "m.sqlite"), judgements)
    assert added == ["NEW"] and list(kept["system"]) == ["GT", "E2E", "REL"]


def test_the_pilot_gives_the_verified_share_and_the_correlation_within_chunks(planned: Path) -> None:
    """A judgements table where tasks are all verified or all edited: the verified share is the pooled share
    (k = 2: both judges), the correlation within chunks 1, so the design effect is the novel annotations a chunk."""
    import pandas as pd

    from posthoc.readers import read_mentions
    from posthoc.study.plan.add_system import place_system
    from posthoc.study.planner.added_system import verified_share, weighted_size
    from posthoc.study.planner.rates import rates_from_pilot

    rows = [{"dataset": "set0", "system": "E2E", "worker": "w001", "task_key": f"t{t}", "outcome": outcome,
             "lead_time": 10.0} for t, outcome in enumerate(["verify"] * 6 + ["edit"] * 2) for _ in range(3)]
    pd.DataFrame(rows).to_csv(planned / "judgements.csv", index=False)
    done = _posthoc("study", "add-system", "--manifest", "m.sqlite", "--input", "new.jsonl", "--system", "NEW",
                    "--target-halfwidth", "0.05", "--pilot", "judgements.csv", "--dry-run", cwd=planned)
    assert done.returncode == 0, done.stderr
    line = next(x for x in done.stdout.splitlines() if x.startswith("sample ("))
    expected = verified_share(rates_from_pilot(pd.DataFrame(rows)), 2)
    assert f"verified share {expected:.3f}" in line
    manifest = Manifest.open(planned / "m.sqlite")
    tables = manifest.raw_tables()
    read = read_mentions(planned / "new.jsonl", system="NEW", documents=tables["documents"])
    new = place_system(tables, read.documents, read.mentions, system="NEW")
    sizes = new.annotations.loc[new.novel].groupby("chunk_id").size().tolist()
    assert f"design effect {weighted_size(sizes):.2f}" in line  # rho = 1: 1 + (m_w - 1)
    assert f"{int(new.novel.sum())} novel in {len(sizes)} chunks" in done.stdout


def test_one_file_a_dataset_without_texts_reads_as_the_whole_output(planned: Path) -> None:
    """``--input DATASET=PATH``: lines without ``dataset`` nor ``text`` read against the study's texts give the
    same split and sample as the one file holding both datasets."""
    lines = [json.loads(line) for line in (planned / "new.jsonl").read_text(encoding="utf-8").splitlines()]
    for dataset in ("set0", "set1"):
        mine = [{k: v for k, v in record.items() if k not in ("dataset", "text")} for record in lines
                if record["dataset"] == dataset]
        (planned / f"only-{dataset}.jsonl").write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in mine)
                                                       + "\n", encoding="utf-8")
    runs = [_posthoc("study", "add-system", "--manifest", "m.sqlite", *inputs, "--system", "NEW", "--fraction",
                     "0.5", "--dry-run", cwd=planned)
            for inputs in (["--input", "new.jsonl"], ["--input", "set0=only-set0.jsonl", "--input",
                                                      "set1=only-set1.jsonl"])]
    assert all(done.returncode == 0 for done in runs), runs[1].stderr
    assert runs[0].stdout == runs[1].stdout
