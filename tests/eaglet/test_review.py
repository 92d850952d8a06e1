"""The review loop (paper 003 Sect. 4.4): flags -> Label Studio review tasks -> reviewer -> corrected gold.

The scenario is the paper's two examples with a KB in which People's_Republic_of_China redirects to
China. The reviewer accepts some flags, rejects some, modifies a span and a link, deletes one region
and adds a missed mention; the corrected gold standard must hold exactly those changes, and the
change log one row per decision. It runs twice: on a hand-built export (the pure function) and
through a real Label Studio (tasks imported with predictions, an annotator's annotation posted with
their own token, the project exported), with the CLI commands.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from click.testing import CliRunner

from posthoc.cli.flags import apply_command, check_command, review_command
from posthoc.eaglet.review import apply_review_decisions, review_tasks
from posthoc.links import normalise_link
from posthoc.readers import Corpus, read_mentions

EX1 = "http://example.org/Example1FromThePaper"
EX2 = "http://example.org/Example2FromThePaper"
W = "https://en.wikipedia.org/wiki/"


@pytest.fixture
def flags_dir(shared_data: Path, tmp_path: Path) -> Path:
    kb = tmp_path / "kb.tsv"
    kb.write_text("People's Republic of China\tredirect\tChina\n", encoding="utf-8")
    out = tmp_path / "flags"
    result = CliRunner().invoke(check_command, [str(shared_data / "eaglet" / "paper_examples.ttl"), "--out", str(out),
                                                "--kb-tsv", str(kb)])
    assert result.exit_code == 0, result.output
    return out


def flag_id(flags: pd.DataFrame, doc: str, rule: str, start: int, suggestion: str | None = None) -> str:
    hit = flags[(flags["doc_id"] == doc) & (flags["rule"] == rule) & (flags["start"] == start)]
    if suggestion:
        hit = hit[hit["suggestion"] == suggestion]
    assert len(hit) == 1, (doc, rule, start)
    return str(hit["flag_id"].iloc[0])


def decisions(flags: pd.DataFrame) -> dict[str, tuple[str | None, tuple[int, int] | None, str | None]]:
    """flag id -> (decision or None to delete the region, new span or None, new link or None)."""
    return {
        flag_id(flags, EX1, "combined_marking", 3, "insert"): ("accept", None, "December 2012"),
        flag_id(flags, EX1, "combined_marking", 3, "check"): ("accept", None, None),
        flag_id(flags, EX1, "combined_marking", 12, "check"): ("accept", None, None),
        flag_id(flags, EX1, "overlapping", 44): ("reject", None, None),
        flag_id(flags, EX1, "overlapping", 48): ("modify", (44, 60), "MLS Cup Playoffs"),
        flag_id(flags, EX2, "positioning", 12): ("accept", None, None),
        flag_id(flags, EX2, "outdated_uri", 62): ("accept", None, None),
        flag_id(flags, EX2, "long_description", 76): ("reject", None, None),
        flag_id(flags, EX2, "inconsistent_marking", 25): (None, None, None),
    }


NEW_MENTION = (EX2, "Supporters' Shield", "Supporters' Shield")


def annotate(prediction: list[dict[str, Any]], text: str, doc: str, flags: pd.DataFrame) -> list[dict[str, Any]]:
    """The reviewer's annotation result, made from the prediction as the labeling UI would."""
    wanted = decisions(flags)
    result = []
    for item in prediction:
        decision, span, link = wanted[item["id"]]
        if decision is None:
            continue  # the reviewer deleted the region
        item = json.loads(json.dumps(item))
        item.pop("origin", None)
        if span:
            item["value"].update(start=span[0], end=span[1], text=text[span[0]:span[1]])
        if item["from_name"] == "link" and link is not None:
            item["value"]["text"] = [link]
        result.append(item)
        if item["from_name"] == "flag":
            value = {k: item["value"][k] for k in ("start", "end", "text")}
            result.append({"id": item["id"], "from_name": "decision", "to_name": "text", "type": "choices",
                           "value": {**value, "choices": [decision]}})
    if doc == NEW_MENTION[0]:
        start = text.index(NEW_MENTION[1])
        value = {"start": start, "end": start + len(NEW_MENTION[1]), "text": NEW_MENTION[1]}
        result += [{"id": "new1", "from_name": "flag", "to_name": "text", "type": "labels",
                    "value": {**value, "labels": ["new_mention"]}},
                   {"id": "new1", "from_name": "link", "to_name": "text", "type": "textarea",
                    "value": {**value, "text": [NEW_MENTION[2]]}}]
    return result


def expected_gold(original: Corpus) -> set[tuple[str, int, int, str]]:
    gold = {(str(r.doc_id), int(r.start), int(r.end), str(r.link)) for r in original.mentions.itertuples()}
    text2 = original.text_of(str(original.documents["dataset"].iloc[0]), EX2)
    shield = text2.index("Supporters' Shield")
    gold -= {(EX1, 3, 11, W + "December"), (EX1, 12, 16, W + "2012"), (EX1, 48, 60, W + "Playoffs"),
             (EX2, 12, 16, W + "Foot"), (EX2, 62, 67, W + "People%27s_Republic_of_China")}
    gold |= {(EX1, 3, 16, W + "December_2012"), (EX1, 44, 60, W + "MLS_Cup_Playoffs"), (EX2, 62, 67, W + "China"),
             (EX2, shield, shield + 18, normalise_link("Supporters' Shield").link)}
    return gold


def check_changes(changes: pd.DataFrame) -> None:
    assert len(changes) == 10  # nine flags and one added mention, one row each
    assert sorted(changes["action"].tolist()) == sorted(["insert", "delete", "delete", "none", "update", "delete",
                                                         "update", "none", "none", "insert"])
    deleted = changes[changes["note"] == "region deleted"]
    assert deleted["rule"].tolist() == ["inconsistent_marking"] and deleted["decision"].tolist() == ["reject"]
    update = changes[(changes["rule"] == "outdated_uri")].iloc[0]
    assert (update["old_link"], update["new_link"]) == (W + "People%27s_Republic_of_China", W + "China")


def test_review_decisions_from_a_hand_built_export(flags_dir: Path) -> None:
    from posthoc.eaglet.flags import read_flags

    flags = read_flags(flags_dir / "flags.csv")
    original = read_mentions(flags_dir / "checked.jsonl")
    tasks = review_tasks(flags, original.documents)
    assert [t["data"]["doc_id"] for t in tasks] == [EX1, EX2]
    exported = []
    for number, task in enumerate(tasks, start=1):
        result = annotate(task["predictions"][0]["result"], task["data"]["text"], task["data"]["doc_id"], flags)
        exported.append({"id": number, "data": task["data"], "annotations": [
            {"id": 10 + number, "completed_by": 7, "was_cancelled": False, "result": result,
             "updated_at": "2026-01-01T00:00:00Z"},
            {"id": 20 + number, "completed_by": 7, "was_cancelled": True, "result": [],
             "updated_at": "2026-01-02T00:00:00Z"}]})
    corrected, changes = apply_review_decisions(original, flags, exported)
    got = {(str(r.doc_id), int(r.start), int(r.end), str(r.link)) for r in corrected.mentions.itertuples()}
    assert got == expected_gold(original)
    check_changes(changes)


def test_review_tasks_prefill_every_flag_with_its_suggested_link(flags_dir: Path) -> None:
    from label_studio_sdk.label_interface import LabelInterface

    from posthoc.eaglet.flags import read_flags
    from posthoc.paths import label_config

    flags = read_flags(flags_dir / "flags.csv")
    original = read_mentions(flags_dir / "checked.jsonl")
    tasks = review_tasks(flags, original.documents)
    interface = LabelInterface(label_config("gold_review"))
    items = [item for task in tasks for item in task["predictions"][0]["result"]]
    assert interface.validate_prediction(tasks[0]["predictions"][0], return_errors=True) == []
    assert {item["id"] for item in items} == set(flags["flag_id"])
    china = [i for i in items if i["from_name"] == "link" and i["value"]["text"] == [W + "China"]]
    assert len(china) == 1 and china[0]["value"]["start"] == 62
    reasons = {i["id"]: i["meta"]["text"][0] for i in items if i["from_name"] == "flag"}
    assert len(reasons) == len(flags)
    merge = flag_id(flags, EX1, "combined_marking", 3, "insert")
    assert reasons[merge] == "insert: combined annotation of 'December' + '2012': 'December 2012' is a date; " \
                             "choose the most precise entity"


@pytest.mark.labelstudio
def test_review_round_trip_in_label_studio(flags_dir: Path, ls_server: Any, ls_annotator: Any, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from posthoc.eaglet.flags import read_flags
    from posthoc.labelstudio.client import LabelStudioClient

    monkeypatch.setenv("LABEL_STUDIO_TOKEN", ls_server.token)
    runner = CliRunner()
    title = f"eaglet review {tmp_path.name}"
    first = runner.invoke(review_command, ["--flags", str(flags_dir), "--url", ls_server.url, "--title", title])
    assert first.exit_code == 0, first.output
    assert "2 task(s) created, 0 already there" in first.output
    again = runner.invoke(review_command, ["--flags", str(flags_dir), "--url", ls_server.url, "--title", title])
    assert "0 task(s) created, 2 already there" in again.output  # idempotent
    project_id = json.loads((flags_dir / "review.json").read_text())["project_id"]

    flags = read_flags(flags_dir / "flags.csv")
    reviewer = ls_annotator()
    admin = LabelStudioClient(ls_server.url, ls_server.token)
    as_reviewer = LabelStudioClient(ls_server.url, reviewer.token)
    tasks = list(admin.tasks(project_id))
    assert len(tasks) == 2
    reasons = dict(zip(flags["flag_id"], flags["detail"], strict=True))
    for task in tasks:
        predictions = admin.predictions(int(task["id"]))
        assert len(predictions) == 1 and predictions[0]["model_version"] == "eaglet"
        # every flag reaches the reviewer with its reason: the region's meta text (the info panel)
        shown = {item["id"]: item["meta"]["text"][0] for item in predictions[0]["result"]
                 if item["from_name"] == "flag"}
        assert shown and all(reasons[fid] in text for fid, text in shown.items())
        result = annotate(predictions[0]["result"], task["data"]["text"], task["data"]["doc_id"], flags)
        as_reviewer.post(f"/api/tasks/{task['id']}/annotations/", {"result": result, "lead_time": 3.5})

    out = tmp_path / "corrected"
    applied = runner.invoke(apply_command, ["--flags", str(flags_dir), "--url", ls_server.url, "--out", str(out)])
    assert applied.exit_code == 0, applied.output
    assert "7 change(s) applied" in applied.output
    original = read_mentions(flags_dir / "checked.jsonl")
    corrected = read_mentions(out / "corrected.jsonl")
    got = {(str(r.doc_id), int(r.start), int(r.end), str(r.link)) for r in corrected.mentions.itertuples()}
    assert got == expected_gold(original)
    as_nif = read_mentions(out / "corrected.nif.ttl", fmt="nif")
    assert {(str(r.doc_id), int(r.start), int(r.end), str(r.link)) for r in as_nif.mentions.itertuples()} == got
    changes = pd.read_csv(out / "changes.csv", keep_default_na=False)
    check_changes(changes)
    assert set(changes["reviewer"]) == {reviewer.email}


def test_review_without_a_token_is_one_line_and_exit_2(flags_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from posthoc.cli.main import main

    monkeypatch.delenv("LABEL_STUDIO_TOKEN", raising=False)
    monkeypatch.delenv("POSTHOC_LS_TOKEN", raising=False)  # either one is read (posthoc.cli.labelstudio_access)
    with pytest.raises(SystemExit) as exit_info:
        main(["flags", "review", "--flags", str(flags_dir), "--url", "http://127.0.0.1:9"])
    assert exit_info.value.code == 2


def test_accepting_a_trailing_space_flag_trims_the_annotation_instead_of_deleting_it() -> None:
    from tests.eaglet.helpers import build_corpus

    from posthoc.eaglet.pipeline import default_pipeline

    corpus = build_corpus({"1": ("Merck and Co Inc said so, Bonn.", [(0, 17, "Merck_&_Co."), (26, 31, "Bonn")])})
    flags = default_pipeline(only=["positioning"]).run(corpus.documents, corpus.mentions)
    assert flags["suggestion"].tolist() == ["update-span", "update-span"]
    task = review_tasks(flags, corpus.documents)[0]
    result = [dict(item) for item in task["predictions"][0]["result"]]
    for item in [i for i in result if i["from_name"] == "flag"]:
        choice = "accept" if item["value"]["start"] == 0 else "reject"
        result.append({"id": item["id"], "from_name": "decision", "to_name": "text", "type": "choices",
                       "value": {**{k: item["value"][k] for k in ("start", "end", "text")}, "choices": [choice]}})
    export = [{"id": 1, "data": task["data"], "annotations": [{"id": 5, "completed_by": 1, "result": result}]}]
    corrected, changes = apply_review_decisions(corpus, flags, export)
    got = {(int(r.start), int(r.end), str(r.surface), str(r.link)) for r in corrected.mentions.itertuples()}
    assert got == {(0, 16, "Merck and Co Inc", W + "Merck_%26_Co."), (26, 31, "Bonn.", W + "Bonn")}
    assert sorted(changes["action"]) == ["none", "update"]
