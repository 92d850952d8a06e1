"""``posthoc kb build`` and the index it writes (issue 42): the hard cases of the dump excerpts, look-ups through
redirects and Wikidata ids, atomic owner-only writes, bad input."""

from __future__ import annotations

import gzip
import shutil
import sqlite3
import stat
from pathlib import Path

import pytest

from posthoc.cli.main import main
from posthoc.errors import PosthocInputError
from posthoc.readers.wiki_index import WikiIndex
from posthoc.readers.wiki_index_build import build_index

DATA = Path(__file__).parent / "data" / "kb"
W = "https://en.wikipedia.org/wiki/"


@pytest.fixture(scope="module")
def index_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("kb") / "kb.sqlite"
    main(["kb", "build", "--dumps", str(DATA), "--out", str(out)])  # no option but the two it needs
    return out


def _build(folder: Path, out: Path) -> None:
    build_index(page=folder / "enwiki-20261201-page.sql", redirect=folder / "enwiki-20261201-redirect.sql",
                page_props=folder / "enwiki-20261201-page_props.sql", out=out)


def test_every_hard_case_of_the_excerpts(index_path: Path) -> None:
    index = WikiIndex(index_path)
    records = index.records(["People's_Republic_of_China", "Double_to_Paris", "Loop_A", "Loop_B", "To_nowhere",
                             "History_of_Paris_(section)", "Wiktionary_word", "Category_redirect", "Mercury",
                             'It\'s_a_"quote"_with_back\\slash', "Two\nlines", "\U0001d11e_Music", "Cities",
                             "Paris"])
    assert (records["People's_Republic_of_China"].target, records["People's_Republic_of_China"].problem) == \
        ("China", None)
    assert (records["Double_to_Paris"].target, records["Double_to_Paris"].hops) == ("Paris", 2)
    assert records["Double_to_Paris"].problem == "double" and records["Double_to_Paris"].lands_on == "Paris"
    assert records["Loop_A"].problem == records["Loop_B"].problem == "loop" and records["Loop_A"].lands_on is None
    assert (records["To_nowhere"].problem, records["To_nowhere"].target) == ("missing target", "Missing_page")
    assert (records["History_of_Paris_(section)"].fragment, records["History_of_Paris_(section)"].target) == \
        ("History", "Paris")
    assert records["Wiktionary_word"].problem == "interwiki"
    assert records["Category_redirect"].problem == "other namespace"
    assert records["Mercury"].disambiguation and not records["Paris"].disambiguation
    assert records["Paris"].wikidata == "Q90" and records["\U0001d11e_Music"].wikidata == "Q42"
    assert {'It\'s_a_"quote"_with_back\\slash', "Two\nlines"} <= set(records)
    assert "Cities" not in records  # namespace 14
    assert stat.S_IMODE(index_path.stat().st_mode) == 0o600
    index.close()


def test_links_compare_through_redirects_and_wikidata(index_path: Path) -> None:
    index = WikiIndex(index_path)
    keys = index.entity_keys([W + "Paris_(France)", W + "Paris", "http://www.wikidata.org/entity/Q90",
                              W + "Barack_H._Obama", W + "Loop_A", W + "Atlantis", "Q999", "nil:Foo",
                              "https://de.wikipedia.org/wiki/Paris"])
    assert keys[W + "Paris_(France)"] == keys[W + "Paris"] == keys["http://www.wikidata.org/entity/Q90"] == W + "Paris"
    assert keys[W + "Barack_H._Obama"] == W + "Barack_Obama"
    for unplaced in (W + "Loop_A", W + "Atlantis", "Q999", "nil:Foo", "https://de.wikipedia.org/wiki/Paris"):
        assert keys[unplaced] == unplaced
    index.close()


def test_one_process_builds_the_same_index(index_path: Path, tmp_path: Path) -> None:
    out = tmp_path / "kb.sqlite"
    main(["kb", "build", "--dumps", str(DATA), "--out", str(out), "--one-process", "--quiet"])
    tables = []
    for path in (index_path, out):
        db = sqlite3.connect(path)
        tables.append(db.execute("SELECT * FROM titles ORDER BY title").fetchall())
        db.close()
    assert len(tables[0]) == 19 and tables[0] == tables[1]


def test_a_failed_rebuild_leaves_the_previous_index(index_path: Path, tmp_path: Path) -> None:
    out = tmp_path / "kb.sqlite"
    shutil.copy(index_path, out)
    before = out.read_bytes()
    broken = tmp_path / "dumps"
    shutil.copytree(DATA, broken)
    props = broken / "enwiki-20261201-page_props.sql"
    props.write_text(props.read_text(encoding="utf-8").split("(16,")[0], encoding="utf-8")
    with pytest.raises(PosthocInputError, match="cut short"):
        _build(broken, out)
    assert out.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["dumps", "kb.sqlite"]


def test_a_rebuild_replaces_the_index(index_path: Path, tmp_path: Path) -> None:
    out = tmp_path / "kb.sqlite"
    shutil.copy(index_path, out)
    smaller = tmp_path / "dumps"
    shutil.copytree(DATA, smaller)
    page = smaller / "enwiki-20261201-page.sql"
    page.write_text(page.read_text(encoding="utf-8").replace("'Mercury'", "'Mercury_(planet)'"), encoding="utf-8")
    _build(smaller, out)
    assert set(WikiIndex(out).records(["Mercury", "Mercury_(planet)"])) == {"Mercury_(planet)"}


def test_bad_input_exits_2_with_one_line_and_writes_nothing(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    dumps = tmp_path / "dumps"
    shutil.copytree(DATA, dumps)
    page = dumps / "enwiki-20261201-page.sql"
    gz = dumps / "enwiki-20261201-page.sql.gz"
    gz.write_bytes(gzip.compress(page.read_bytes())[:-40])
    page.unlink()
    out = tmp_path / "out" / "kb.sqlite"
    redirect = str(dumps / "enwiki-20261201-redirect.sql")
    for args in (["--dumps", str(dumps)], ["--dumps", str(dumps), "--page", redirect],
                 ["--dumps", str(tmp_path / "absent")]):
        with pytest.raises(SystemExit) as exit_info:
            main(["kb", "build", *args, "--out", str(out), "--quiet"])
        assert exit_info.value.code == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "Traceback" not in err
        assert not out.exists() and (not out.parent.exists() or not any(out.parent.iterdir()))
    with pytest.raises(PosthocInputError, match="not a KB index"):
        WikiIndex(dumps / "enwiki-20261201-redirect.sql")
