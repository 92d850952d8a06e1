"""MediaWiki SQL dump files (``{wiki}-{date}-page.sql.gz``, ``-redirect``, ``-page_props`` ...): the one parser.

A dump is what ``mysqldump`` writes for one table: comment lines, ``DROP TABLE``, the ``CREATE TABLE `name` (...)``
statement (one column a line, ```name` type ...``), then ``INSERT INTO `name` VALUES (...),(...);`` statements,
each one line of up to a few MB holding many rows. :func:`read_rows` streams such a file (gzip or plain, told by
its first bytes, not its name) line by line, so memory stays bounded by one INSERT line whatever the file's size,
and yields, for each row, the values of the columns asked for **by name**, found in the file's own
``CREATE TABLE`` (an older or newer schema with other or reordered columns still reads).

Values, in MySQL's dump syntax:

``'text'``              a string; backslash escapes ``\\0 \\b \\n \\r \\t \\Z`` are NUL, backspace, newline,
                        carriage return, tab and Ctrl-Z, any other ``\\x`` is ``x`` (``\\'``, ``\\"``, ``\\\\``);
                        the bytes are UTF-8 (an invalid byte becomes U+FFFD);
``_binary 'text'``      a binary string (newer mysqldump / MariaDB for ``varbinary`` columns): the same;
``0x4142``              a hex literal (``--hex-blob``): its bytes as UTF-8 text;
``NULL``                ``None``;
``12``, ``-3``          ``int``; ``0.5``, ``1e-05``: ``float``.

The tokenizer is one compiled regular expression a table, the tuple of all its columns, capturing only the
columns asked for; ``finditer`` over each INSERT line checks that the tuples follow one another with nothing but a
comma between them and that the statement ends with ``;`` (a line cut short is a truncated file).

Bad input raises :class:`~posthoc.errors.PosthocInputError`, one line naming the file and what is wrong: not a SQL
dump, a dump of another table than the one asked for, a column the table lacks, a row that is not a tuple of the
table's columns, a truncated gzip stream or INSERT statement.

Examples:
    >>> import tempfile
    >>> from pathlib import Path
    >>> folder = tempfile.TemporaryDirectory()
    >>> dump = Path(folder.name) / "xxwiki-redirect.sql"
    >>> _ = dump.write_text(
    ...     "CREATE TABLE `redirect` (\\n  `rd_from` int(8) unsigned NOT NULL DEFAULT 0,\\n"
    ...     "  `rd_namespace` int(11) NOT NULL DEFAULT 0,\\n  `rd_title` varbinary(255) NOT NULL DEFAULT '',\\n"
    ...     "  `rd_interwiki` varbinary(32) DEFAULT NULL,\\n  `rd_fragment` varbinary(255) DEFAULT NULL,\\n"
    ...     "  PRIMARY KEY (`rd_from`)\\n) ENGINE=InnoDB DEFAULT CHARSET=binary;\\n"
    ...     "INSERT INTO `redirect` VALUES (7,0,'People\\\\'s_Republic',NULL,''),(9,0,'A\\\\\\\\B','','x');\\n",
    ...     encoding="utf-8")
    >>> table_columns(dump, table="redirect")
    ('rd_from', 'rd_namespace', 'rd_title', 'rd_interwiki', 'rd_fragment')
    >>> list(read_rows(dump, table="redirect", columns=("rd_from", "rd_title", "rd_interwiki")))
    [(7, "People's_Republic", None), (9, 'A\\\\B', '')]
    >>> folder.cleanup()
"""

from __future__ import annotations

import gzip
import itertools
import os
import re
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Final

from posthoc.errors import PosthocInputError

#: a quoted string, unrolled so that it never backtracks; ``_binary`` strings, hex, NULL and numbers
_QUOTED: Final = r"'[^'\\]*(?:\\.[^'\\]*)*'"
_VALUE: Final = rf"{_QUOTED}|_binary {_QUOTED}|0x[0-9A-Fa-f]*|NULL|[-+]?[0-9][0-9.eE+\-]*"
#: the value of a column, its type's common form tried first (the regular expression engine tries the alternatives
#: in order): an integer column's digits, a float column's number, a text column's quoted string, then NULL
_INTEGER_VALUE: Final = rf"-?[0-9]+|NULL|{_VALUE}"
_FLOAT_VALUE: Final = rf"[-+]?[0-9][0-9.eE+\-]*|NULL|{_VALUE}"
_TEXT_VALUE: Final = rf"{_QUOTED}|NULL|{_VALUE}"
_FLOAT_TYPES: Final = ("float", "double", "decimal", "numeric", "real")
_CREATE = re.compile(rb"^CREATE TABLE `([^`]+)`")
_COLUMN = re.compile(rb"^\s*`([^`]+)`\s+([a-z]+)")
_INSERT = re.compile(rb"^INSERT INTO `([^`]+)` VALUES ")
_ESCAPE = re.compile(r"\\(.)", re.DOTALL)
_ESCAPES: Final = {"0": "\0", "b": "\b", "n": "\n", "r": "\r", "t": "\t", "Z": "\x1a"}
#: lines that may come before CREATE TABLE in a dump (mysqldump's header, comments, SET, DROP TABLE)
_PREAMBLE: Final = (b"--", b"/*", b"DROP TABLE", b"SET ", b"LOCK TABLES", b"UNLOCK TABLES", b"USE ", b"#")


def _unescape(text: str) -> str:
    return _ESCAPE.sub(lambda m: _ESCAPES.get(m.group(1), m.group(1)), text)


def sql_value(token: str) -> str | int | float | None:
    """One value of a dump's tuple as Python (the module's table of values).

    Examples:
        >>> sql_value("'It\\\\'s'"), sql_value("NULL"), sql_value("42"), sql_value("0.5")
        ("It's", None, 42, 0.5)
        >>> sql_value("_binary 'a\\\\nb'")
        'a\\nb'
    """
    first = token[0]
    if first == "'":
        text = token[1:-1]
        return _unescape(text) if "\\" in text else text
    if first == "N":
        return None
    if first == "_":
        text = token[9:-1]
        return _unescape(text) if "\\" in text else text
    if token.startswith("0x"):
        return bytes.fromhex(token[2:]).decode("utf-8", errors="replace")
    try:
        return int(token)
    except ValueError:
        return float(token)


def _text(token: str) -> str | int | float | None:
    if token[0] == "'":
        text = token[1:-1]
        return _unescape(text) if "\\" in text else text
    return sql_value(token)


def _integer(token: str) -> str | int | float | None:
    try:
        return int(token)
    except ValueError:
        return sql_value(token)


def _open_binary(path: Path) -> IO[bytes]:  # gzip.GzipFile and a file opened "rb" are both IO[bytes]
    try:
        with path.open("rb") as probe:
            magic = probe.read(2)
        handle: IO[bytes] = gzip.open(path, "rb") if magic == b"\x1f\x8b" else path.open("rb")  # type: ignore[assignment]  # noqa: SIM115 (returned, closed by the caller)
        return handle
    except OSError as error:
        raise PosthocInputError(f"{path}: cannot read this dump file ({error.strerror or error}); check the path") \
            from None


def _lines(path: Path, handle: IO[bytes]) -> Iterator[bytes]:
    try:
        yield from handle
    except (EOFError, zlib.error, gzip.BadGzipFile) as error:
        raise PosthocInputError(f"{path}: the gzip stream is truncated or corrupt ({error}); download the dump "
                                "again") from None


def _header(path: Path, lines: Iterator[bytes], table: str) -> dict[str, str]:
    """The column names of ``table``'s CREATE TABLE and their SQL types (``int``, ``varbinary`` ...), in order;
    the lines before it must be a dump's preamble."""
    for line in lines:
        stripped = line.strip()
        if not stripped or stripped.startswith(_PREAMBLE):
            continue
        create = _CREATE.match(stripped)
        if create is None:
            raise PosthocInputError(f"{path}: not a MediaWiki SQL dump (no CREATE TABLE before "
                                    f"{stripped[:40].decode('utf-8', 'replace')!r}); give a "
                                    f"{{wiki}}-{{date}}-{table}.sql(.gz) file from dumps.wikimedia.org")
        found = create.group(1).decode("utf-8", "replace")
        if found != table:
            raise PosthocInputError(f"{path}: a dump of table {found!r}, not {table!r}; give the "
                                    f"{{wiki}}-{{date}}-{table}.sql(.gz) file")
        columns: dict[str, str] = {}
        for column_line in lines:
            if column_line.lstrip().startswith(b")"):
                return columns
            column = _COLUMN.match(column_line)
            if column is not None:
                columns[column.group(1).decode("utf-8")] = column.group(2).decode("ascii")
        break
    raise PosthocInputError(f"{path}: not a MediaWiki SQL dump (no complete CREATE TABLE `{table}`); give a "
                            f"{{wiki}}-{{date}}-{table}.sql(.gz) file from dumps.wikimedia.org")


def table_columns(path: str | os.PathLike[str], *, table: str) -> tuple[str, ...]:
    """The columns of ``table`` as the dump's CREATE TABLE names them, in order (PosthocInputError if the file is
    not a dump of ``table``).

    Examples:
        See the module's example.
    """
    source = Path(path)
    with _open_binary(source) as handle:
        return tuple(_header(source, _lines(source, handle), table))


def tuple_pattern(columns: Sequence[str], wanted: Sequence[str], *,
                  types: Sequence[str] | None = None) -> re.Pattern[str]:
    """The regular expression of one row ``(v1,v2,...)`` of a table with ``columns``, a group for each of
    ``wanted`` in the order of ``wanted``'s first use in ``columns`` (callers reorder); ``types``: the columns'
    SQL types, the common form of each type's values tried first.

    Examples:
        >>> tuple_pattern(["a", "b"], ["b"]).match("(1,'x');").groups()
        ("'x'",)
    """
    kinds = types or [""] * len(columns)
    values = [_INTEGER_VALUE if kind.endswith("int") else _FLOAT_VALUE if kind in _FLOAT_TYPES
              else _TEXT_VALUE if kind else _VALUE for kind in kinds]
    parts = [f"({value})" if name in wanted else f"(?:{value})" for name, value in zip(columns, values, strict=True)]
    return re.compile(r"\(" + ",".join(parts) + r"\)[,;]", re.DOTALL)


def read_rows(path: str | os.PathLike[str], *, table: str, columns: Sequence[str],
              where: Mapping[str, int | str | tuple[int | str, ...]] | None = None,
              progress: Callable[[int], None] | None = None) -> Iterator[tuple[str | int | float | None, ...]]:
    """Each row of the dump of ``table`` at ``path``, as a tuple of the values of ``columns`` (by name, in that
    order; module docstring for the values and the errors). ``where`` keeps only the rows whose columns hold
    these values, or one of a tuple of values (``{"page_namespace": 0}``, ``{"pp_propname": ("disambiguation",
    "wikibase_item")}``), tested on the raw tokens before any value is converted (a string as a quoted or
    ``_binary`` token, escaped as mysqldump writes it). ``progress`` is called
    with the number of bytes each line held (uncompressed), e.g. a progress bar's ``update``.

    Examples:
        See the module's example.
    """
    source = Path(path)
    conditions = dict(where or {})
    with _open_binary(source) as handle:
        lines = _lines(source, handle)
        types = _header(source, lines, table)
        missing = [name for name in (*columns, *conditions) if name not in types]
        if missing:
            raise PosthocInputError(f"{source}: table {table!r} has no column {', '.join(missing)} (it has "
                                    f"{', '.join(types)}); give a dump of a MediaWiki schema that has it")
        captured = [name for name in types if name in columns or name in conditions]
        pattern = tuple_pattern(list(types), captured, types=list(types.values()))
        reading = Reading(types=tuple(types[name] for name in captured),
                          pick=tuple(captured.index(name) for name in columns),
                          tests=tuple((captured.index(name), _tokens(value)) for name, value in conditions.items()))
        prefix = f"INSERT INTO `{table}` VALUES ".encode()  # noqa: S608 (a dump's text, not a query)
        for line in lines:
            if progress is not None:
                progress(len(line))
            if not line.startswith(prefix):
                if line.startswith(b"INSERT INTO"):
                    other = _INSERT.match(line)
                    name = other.group(1).decode("utf-8", "replace") if other else "?"
                    raise PosthocInputError(f"{source}: an INSERT INTO `{name}` in a dump of {table!r}; "
                                            "give a file holding one table")
                continue
            text = line.decode("utf-8", errors="replace").rstrip("\r\n")
            yield from _rows_of_statement(source, text, len(prefix), pattern, reading)


def _tokens(value: int | str | tuple[int | str, ...]) -> frozenset[str]:
    """The tokens of a dump that hold ``value`` (or one of a tuple of values): an integer's digits; a string
    quoted, plain or ``_binary``, with mysqldump's escapes, or a hex literal (``--hex-blob``)."""
    if isinstance(value, tuple):
        return frozenset().union(*map(_tokens, value))
    if isinstance(value, int):
        return frozenset({str(value)})
    quoted = "'" + value.replace("\\", "\\\\").replace("'", "\\'").replace('"', '\\"') + "'"
    hexadecimal = value.encode("utf-8").hex()
    return frozenset({quoted, f"_binary {quoted}", f"0x{hexadecimal}", f"0x{hexadecimal.upper()}"})


@dataclass(frozen=True)
class Reading:
    """How the captured tokens of a row become its values: the SQL type of each captured column, the tokens tested
    against ``where`` (index, accepted tokens), and the indices of the columns asked for, in their order."""

    types: tuple[str, ...]
    pick: tuple[int, ...]
    tests: tuple[tuple[int, frozenset[str]], ...]


def _convert_column(sql_type: str, tokens: list[str]) -> list[str | int | float | None] | map[int] | map[float]:
    """One column's tokens of one statement as values, column-wise (``map(int, ...)`` runs in C)."""
    if sql_type.endswith("int"):
        if "NULL" not in tokens:
            return map(int, tokens)
        return [_integer(token) for token in tokens]
    if sql_type in _FLOAT_TYPES:
        if "NULL" not in tokens:
            return map(float, tokens)
        return [sql_value(token) for token in tokens]
    return [token[1:-1] if token[0] == "'" and "\\" not in token else _text(token) for token in tokens]


def _rows_of_statement(source: Path, text: str, start: int, pattern: re.Pattern[str],
                       reading: Reading) -> Iterator[tuple[str | int | float | None, ...]]:
    """The rows of one INSERT statement ``text`` whose tuples begin at ``start``.

    ``pattern.split`` cuts the statement into, for each tuple, what lies before it (nothing, in a well-formed
    statement: the tuples follow one another with a comma and the last ends with ``;``) and its captured tokens;
    the columns are then the slices of that list, converted column by column."""
    if not text.endswith(";"):
        raise PosthocInputError(f"{source}: an INSERT statement is cut short (no ';' at its end); the file is "
                                "truncated: download the dump again")
    parts = pattern.split(text[start:])
    step = len(reading.types) + 1
    if any(parts[0::step]):
        before = next(part for part in parts[0::step] if part)
        raise PosthocInputError(f"{source}: a row that is not a tuple of the table's columns near "
                                f"{before[:40]!r}; give an unmodified MediaWiki SQL dump")
    columns = [parts[1 + i::step] for i in range(len(reading.types))]
    for index, accepted in reading.tests:
        keep = [token in accepted for token in columns[index]]
        columns = [list(itertools.compress(column, keep)) for column in columns]
    values = [_convert_column(reading.types[i], columns[i]) for i in reading.pick]
    return zip(*values, strict=True)
