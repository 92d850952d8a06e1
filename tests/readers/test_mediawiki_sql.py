"""The MediaWiki SQL dump parser (issue 42): hard cases by hand, row for row against ``mwsql`` (PyPI, the
MediaWiki utilities' reader) on the same files, and bad input."""

from __future__ import annotations

import gzip
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from posthoc.errors import PosthocInputError
from posthoc.readers.mediawiki_sql import read_rows, table_columns

DATA = Path(__file__).parent / "data" / "kb"
PAGE = DATA / "enwiki-20261201-page.sql"
REDIRECT = DATA / "enwiki-20261201-redirect.sql"
PROPS = DATA / "enwiki-20261201-page_props.sql"
MWSQL_REPO = Path("/work/.mirror/mediawiki-utilities+python-mwsql/repo")
sys.path.insert(0, str(Path(__file__).parents[2] / "bench"))

#: what mwsql's csv reader makes of MySQL's escapes \\n and \\r: the letter (MySQL means the control character)
_MWSQL_LETTERS = str.maketrans({"\n": "n", "\r": "r"})


def _as_mwsql(row: tuple[object, ...]) -> list[object]:
    """A row as mwsql 1.0.4 gives it (``convert_dtypes=True``), its three departures from MySQL's syntax applied
    to ours: NULL as '', ``\\n`` / ``\\r`` as the letter, and ``),(`` inside a string dropped (it splits the
    statement there, and its csv reader joins the two halves of the quoted field again)."""
    return ["" if v is None else v.translate(_MWSQL_LETTERS).replace("),(", "") if isinstance(v, str) else v
            for v in row]


def _mwsql_rows(path: Path) -> tuple[tuple[str, ...], list[list[object]]]:
    mwsql = pytest.importorskip("mwsql", reason="mwsql (the bench / test extra) is not installed")
    dump = mwsql.Dump.from_file(path)
    return tuple(dump.col_names), [list(row) for row in dump.rows(convert_dtypes=True)]


def test_the_hard_cases_by_hand() -> None:
    rows = {row[0]: row for row in read_rows(PAGE, table="page", columns=("page_id", "page_title", "page_namespace",
                                                                           "page_lang"))}
    assert rows[2][1] == "People's_Republic_of_China"
    assert rows[14][1] == 'It\'s_a_"quote"_with_back\\slash'
    assert rows[15][1] == "Two\nlines" and rows[21][1] == "Tab\tand\rreturn"
    assert rows[16][1] == "\U0001d11e_Music" and len(rows[16][1]) == 7  # an astral character is one code point
    assert rows[20][1] == "A_(b),(c)" and rows[17][2] == 1 and rows[1][3] is None
    redirects = list(read_rows(REDIRECT, table="redirect", columns=("rd_fragment", "rd_from", "rd_interwiki")))
    assert redirects[2] == (None, 6, None) and ("History", 11, "") in redirects and ("", 12, "wikt") in redirects
    props = list(read_rows(PROPS, table="page_props", columns=("pp_value", "pp_sortkey")))
    assert ("It's \\ \"x\"", None) in props and ("\U0001d11e music,\nnew line", 0.5) in props


def test_where_keeps_the_rows_of_namespace_0() -> None:
    titles = [t for (t,) in read_rows(PAGE, table="page", columns=("page_title",), where={"page_namespace": 0})]
    assert len(titles) == 19 and "Cities" not in titles and titles.count("China") == 1


def test_where_on_text_columns_tests_the_raw_tokens_in_every_form(tmp_path: Path) -> None:
    dump = tmp_path / "props.sql"
    text = PROPS.read_text(encoding="utf-8").replace("'wikibase_item','Q148'", "_binary 'wikibase_item','Q148'")
    dump.write_text(text.replace("'disambiguation',", "0x" + b"disambiguation".hex().upper() + ",", 1),
                    encoding="utf-8")
    columns = ("pp_page", "pp_propname", "pp_value")
    wanted = ("disambiguation", "wikibase_item")
    every = list(read_rows(dump, table="page_props", columns=columns))
    kept = list(read_rows(dump, table="page_props", columns=columns, where={"pp_propname": wanted}))
    assert kept == [row for row in every if row[1] in wanted] and len(kept) < len(every)
    assert {row[1] for row in kept} == set(wanted)
    assert list(read_rows(dump, table="page_props", columns=columns, where={"pp_propname": "wikibase_item"})) == \
        [row for row in every if row[1] == "wikibase_item"]


def test_columns_are_read_by_name_whatever_the_schema(tmp_path: Path) -> None:
    text = PAGE.read_text(encoding="utf-8").replace("`page_lang` varbinary(35) DEFAULT NULL,\n", "")
    text = text.replace(",'wikitext',NULL)", ",'wikitext')").replace(
        "  `page_id` int(10)", "  `page_extra` int(3) DEFAULT NULL,\n  `page_id` int(10)")
    text = re.sub(r"(VALUES \(|\),\()(?=[0-9])", r"\g<1>7,", text)
    older = tmp_path / "older-page.sql"
    older.write_text(text, encoding="utf-8")
    assert table_columns(older, table="page")[:2] == ("page_extra", "page_id")
    assert list(read_rows(older, table="page", columns=("page_title", "page_id"))) == \
        list(read_rows(PAGE, table="page", columns=("page_title", "page_id")))


def test_binary_strings_and_hex_literals(tmp_path: Path) -> None:
    dump = tmp_path / "props.sql"
    dump.write_text(PROPS.read_text(encoding="utf-8").replace("'Q148'", "_binary 'Q148'").replace(
        "'Paris.jpg'", "0x5061726973"), encoding="utf-8")
    values = [v for (v,) in read_rows(dump, table="page_props", columns=("pp_value",))]
    assert values[:2] == ["Q148", "Paris"]


@pytest.mark.parametrize("path", [PAGE, REDIRECT, PROPS], ids=["page", "redirect", "page_props"])
def test_row_for_row_equal_to_mwsql_on_the_hand_excerpts(path: Path) -> None:
    table = path.name.split("-")[-1].removesuffix(".sql")
    names, theirs = _mwsql_rows(path)
    ours = [_as_mwsql(row) for row in read_rows(path, table=table, columns=names)]
    assert len(ours) >= 10 and theirs == ours


def test_row_for_row_equal_to_mwsql_on_generated_dumps(tmp_path: Path) -> None:
    from kb_dumps import write_dumps

    paths = write_dumps(tmp_path, pages=3000, seed=7)
    for table, path in paths.items():
        names, theirs = _mwsql_rows(path)
        ours = [_as_mwsql(row) for row in read_rows(path, table=table, columns=names)]
        assert len(ours) > 100 and theirs == ours, table


@pytest.mark.parametrize("name", ["testfile.sql", "testfile.sql.gz", "testfile-with-null-values.sql"])
def test_row_for_row_equal_to_mwsql_on_its_own_test_files(name: str, tmp_path: Path) -> None:
    if not MWSQL_REPO.is_dir():
        pytest.skip(f"mwsql's test data (GPL-3, not copied into this repository) is not at {MWSQL_REPO}: fetch "
                    "github:mediawiki-utilities/python-mwsql to run this")
    path = tmp_path / name
    path.write_bytes(subprocess.run(["git", "--git-dir", str(MWSQL_REPO), "show", f"HEAD:data/{name}"],
                                    check=True, capture_output=True).stdout)
    names, theirs = _mwsql_rows(path)
    ours = [_as_mwsql(row) for row in read_rows(path, table="change_tag_def", columns=names)]
    assert len(ours) >= 4 and theirs == ours
    if "null" in name:
        assert next(read_rows(path, table="change_tag_def", columns=names))[0] is None


def _one_line_error(path: Path, table: str = "page") -> str:
    with pytest.raises(PosthocInputError) as error:
        list(read_rows(path, table=table, columns=("page_id",)))
    message = str(error.value)
    assert str(path) in message and "\n" not in message
    return message


def test_bad_input_names_the_file_and_what_is_wrong(tmp_path: Path) -> None:
    assert "a dump of table 'redirect', not 'page'" in _one_line_error(REDIRECT)
    text_file = tmp_path / "notes.sql"
    text_file.write_text("hello, this is not SQL\n", encoding="utf-8")
    assert "not a MediaWiki SQL dump" in _one_line_error(text_file)
    truncated_gz = tmp_path / "page.sql.gz"
    data = gzip.compress(PAGE.read_bytes())
    truncated_gz.write_bytes(data[: len(data) // 2])
    assert "gzip stream is truncated" in _one_line_error(truncated_gz)
    cut = tmp_path / "cut-page.sql"
    cut.write_text(PAGE.read_text(encoding="utf-8").split("(14,0,")[0], encoding="utf-8")
    assert "cut short" in _one_line_error(cut)
    mangled = tmp_path / "mangled-page.sql"
    mangled.write_text(PAGE.read_text(encoding="utf-8").replace("(3,0,'Paris',", "(3,0,Paris',"), encoding="utf-8")
    assert "not a tuple of the table's columns" in _one_line_error(mangled)
    two_tables = tmp_path / "two-page.sql"
    shutil.copy(PAGE, two_tables)
    with two_tables.open("a", encoding="utf-8") as handle:
        handle.write("INSERT INTO `redirect` VALUES (1,0,'A','','');\n")
    assert "INSERT INTO `redirect`" in _one_line_error(two_tables)
    with pytest.raises(PosthocInputError, match="has no column page_nonsense"):
        list(read_rows(PAGE, table="page", columns=("page_nonsense",)))
    assert "cannot read" in _one_line_error(tmp_path / "absent.sql")
