"""The KB pages annotators see follow redirects (issue 42): ``study create --kb INDEX`` shows after a pre-filled link
that redirects the page a reader lands on, found in the index built from Wikipedia's dumps."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from tests.eaglet.test_kb_index import W
from tests.eaglet.test_kb_index import _index as kb_index

from posthoc.jobs.setup import import_items, links_landing
from posthoc.labelstudio.tasks import kb_pages_html


def test_the_index_gives_where_each_redirect_lands_and_nothing_else(tmp_path: Path) -> None:
    landing = links_landing(kb_index(tmp_path), [W + "Paris_(France)", W + "Double_to_Paris", W + "Paris",
                                               W + "Loop_A", W + "Atlantis", "http://www.wikidata.org/entity/Q90"])
    assert landing[W + "Paris_(France)"] == W + "Paris" and landing[W + "Double_to_Paris"] == W + "Paris"
    assert landing["http://www.wikidata.org/entity/Q90"] == W + "Paris"  # a Wikidata id: its article
    assert W + "Paris" not in landing and W + "Atlantis" not in landing  # lands on itself; not in the index
    assert W + "Loop_A" not in landing  # a redirect loop lands nowhere: the link is shown as it is


def test_a_redirecting_link_is_shown_with_its_page_both_escaped() -> None:
    markup = kb_pages_html([{"surface": "<b>Paris</b>", "link": W + "Paris_(France)", "lands_on": W + "Paris"},
                            {"surface": "Paris", "link": W + "Paris", "lands_on": W + "Paris"},
                            {"surface": "NIL", "link": "", "is_nil": True, "lands_on": W + "Paris"},
                            {"surface": "x", "link": W + "X", "lands_on": "javascript:alert(1)"}])
    items = markup.split("<li>")[1:]
    assert "lands on" in items[0] and f'href="{W}Paris"' in items[0] and "&lt;b&gt;Paris" in items[0]
    assert "lands on" not in items[1] and "lands on" not in items[2]  # itself; a NIL mention has no page
    assert 'href="javascript' not in items[3]  # only http(s) links are clickable


def test_the_tasks_imported_show_the_landing_page_after_the_link(tmp_path: Path) -> None:
    from posthoc.paths import label_config
    from posthoc.study import plan_study, read_study_inputs, sample_study_config
    from posthoc.study.plan.index import ManifestIndex
    from posthoc.study.plan.manifest import Manifest

    config = dataclasses.replace(sample_study_config(name="kb-pages", n_workers=3), tasks_per_batch=5,
                                 control_tasks=False)
    documents, mentions = read_study_inputs(config)
    manifest = Manifest.create(tmp_path / "m.sqlite", plan_study(documents, mentions, config))
    try:
        index, worker = ManifestIndex.from_manifest(manifest), str(manifest.tasks()["worker"].iloc[0])
        keys = list(manifest.tasks(worker)["task_key"])
        plain = import_items(index, keys, range(len(keys)), label_config=label_config("entity_verification"),
                             model_version="v1")
        link = next(str(row["link"]) for key in keys for row in index.prefill_rows(key)
                    if str(row.get("link", "")).startswith(W))
        landed = import_items(index, keys, range(len(keys)), label_config=label_config("entity_verification"),
                              model_version="v1", landing={link: W + "Landing_page"})
    finally:
        manifest.close()
    pages = [item["data"]["kb_pages"] for item in landed]
    assert any(f'href="{W}Landing_page"' in page for page in pages)
    assert sum(page.count("lands on") for page in pages) == sum(
        str(row.get("link")) == link for key in keys for row in index.prefill_rows(key))
    assert [item["predictions"] for item in landed] == [item["predictions"] for item in plain]  # pre-fills as they were
    assert all("lands on" not in item["data"]["kb_pages"] for item in plain)

