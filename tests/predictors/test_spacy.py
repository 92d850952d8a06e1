"""The spacy predictor on real spaCy: a blank pipeline with an entity ruler whose patterns carry ids,
saved with nlp.to_disk and loaded with spacy.load like any installed pipeline."""

from __future__ import annotations

from pathlib import Path

import pytest

from posthoc.errors import PosthocInputError
from predictors.conftest import PLAIN, TEXT, TEXT2, TEXT2_MENTIONS, TEXT_MENTIONS

spacy = pytest.importorskip("spacy", reason="spaCy is the optional `spacy` extra (the `test` extra installs it)")

from posthoc.predictors.spacy_linker import SpacyLinker, entity_link  # noqa: E402
from predictors.spacy_pipeline import NO_ID, build_pipeline, save_pipeline  # noqa: E402


@pytest.fixture(scope="module")
def pipeline_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save_pipeline(tmp_path_factory.mktemp("spacy") / "ruler-pipeline")


def test_spacy_entities_are_code_point_mentions_with_their_ids_as_links(pipeline_dir: Path) -> None:
    linker = SpacyLinker(str(pipeline_dir))
    first, second, plain, empty = linker.link_texts([TEXT, TEXT2, PLAIN, ""])
    assert [(m.start, m.end, m.surface) for m in first] == TEXT_MENTIONS
    assert [(m.start, m.end, m.surface) for m in second] == TEXT2_MENTIONS
    assert plain == [] and empty == []
    links = {m.surface: m.link for m in first + second}
    assert links["東京"] == "http://www.wikidata.org/entity/Q1490"  # a Wikidata id
    assert links["Angela Merkel"] == "https://en.wikipedia.org/wiki/Angela_Merkel"  # a title
    assert links["𠮷野家"] == "https://en.wikipedia.org/wiki/Yoshinoya"


def test_spacy_entity_without_id_is_a_nil_mention() -> None:
    text = f"Shares of {NO_ID} 📉 fell in 東京."
    (found,) = SpacyLinker(build_pipeline()).link_texts([text])
    by_surface = {m.surface: m for m in found}
    assert by_surface[NO_ID].is_nil and by_surface[NO_ID].link == "nil:"
    assert (by_surface[NO_ID].start, by_surface[NO_ID].end) == (10, 23)
    assert not by_surface["東京"].is_nil


def test_entity_link_prefers_the_kb_id() -> None:
    assert entity_link("Q42", "Douglas_Adams") == "http://www.wikidata.org/entity/Q42"
    assert entity_link("", "Douglas_Adams") == "Douglas_Adams"
    assert entity_link("", "") is None


def test_a_missing_pipeline_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(PosthocInputError, match="cannot load it"):
        SpacyLinker(str(tmp_path / "no-such-pipeline"))
