"""The Label Studio task data the setup builds (kb_pages HyperText) and the relation-extraction HTML are safe."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pandas as pd
import pytest

from posthoc.labelstudio.tasks import kb_pages_html
from security.htmlcheck import HOSTILE, HOSTILE_URLS, assert_safe_html, hrefs, shown


@pytest.mark.parametrize("url", HOSTILE_URLS)
def test_kb_pages_never_links_a_hostile_url(url: str) -> None:
    markup = kb_pages_html([{"surface": HOSTILE[1], "link": url}, {"surface": "ok",
                                                                  "link": "https://en.wikipedia.org/wiki/Ghent"}])
    assert_safe_html(markup)
    assert hrefs(markup) == ["https://en.wikipedia.org/wiki/Ghent"]
    assert shown(HOSTILE[1]) in markup


def test_setup_task_data_from_a_hostile_manifest_is_safe_and_blind(tmp_path: Path) -> None:
    """Plan the sample corpus with hostile dataset names, document ids and links; build every worker's tasks."""
    from posthoc.jobs.setup import import_items
    from posthoc.paths import label_config
    from posthoc.study import plan_study, read_study_inputs, sample_study_config
    from posthoc.study.plan.index import ManifestIndex
    from posthoc.study.plan.manifest import Manifest

    config = dataclasses.replace(sample_study_config(name=HOSTILE[0], n_workers=3), tasks_per_batch=5,
                                 control_tasks=False)
    documents, mentions = read_study_inputs(config)
    keep = documents.head(6)[["dataset", "doc_id"]]
    documents, mentions = documents.merge(keep), mentions.merge(keep)
    hostile_links = {link: HOSTILE_URLS[i % len(HOSTILE_URLS)] for i, link in enumerate(sorted(set(mentions["link"])))}

    def rename(frame: pd.DataFrame) -> pd.DataFrame:
        return frame.assign(dataset=HOSTILE[1], doc_id=HOSTILE[2] + frame["doc_id"].astype(str))

    documents, mentions = rename(documents), rename(mentions)
    web = mentions["link"].str.startswith("https://en.wikipedia.org/wiki/")
    mentions.loc[~web, "link"] = mentions.loc[~web, "link"].map(lambda link: hostile_links.get(link, HOSTILE[3]))
    mentions.loc[mentions.index % 3 == 0, "link"] = mentions.loc[mentions.index % 3 == 0, "link"].map(hostile_links)
    assert mentions["link"].isin(HOSTILE_URLS).any()
    manifest = Manifest.create(tmp_path / "hostile.manifest.sqlite", plan_study(documents, mentions, config))
    try:
        workers = sorted(set(manifest.tasks()["worker"]))
        index = ManifestIndex.from_manifest(manifest)
        keys = {w: list(manifest.tasks(w)["task_key"]) for w in workers}
        tasks = [item["data"] for worker in workers for item in import_items(
            index, keys[worker], range(len(keys[worker])), label_config=label_config("entity_verification"),
            model_version="posthoc-v1")]
    finally:
        manifest.close()
    assert tasks
    linked = 0
    for data in tasks:
        assert_safe_html(data["kb_pages"])
        linked += len(hrefs(data["kb_pages"]))
        for value in data.values():  # blind verification: nothing names a dataset or a document
            assert HOSTILE[1] not in value and HOSTILE[2] not in value
    assert linked > 0  # the Wikipedia links that stayed are still clickable
    pages = "".join(data["kb_pages"] for data in tasks)
    shown_hostile = {url for url in HOSTILE_URLS if f": <span>{shown(url)}</span>" in pages}
    assert len(shown_hostile) >= 3  # hostile links reached the annotators' page, as plain text


def test_relation_extraction_task_html_is_escaped() -> None:
    from posthoc.crowdtruth.io import relation_extraction_task

    sentence = f"{HOSTILE[0]} treats {HOSTILE[1]} daily"
    start2 = sentence.index(HOSTILE[1])
    task = relation_extraction_task(HOSTILE[2], sentence, (0, len(HOSTILE[0])), (start2, start2 + len(HOSTILE[1])))
    assert_safe_html(task["sentence_html"])
    assert shown(HOSTILE[0]) in task["sentence_html"] and shown(HOSTILE[1]) in task["sentence_html"]
