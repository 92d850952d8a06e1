"""The tidy tables' contracts stay in the signatures (``posthoc.tables``' module docstring), checked on the source.

A public function, method or dataclass field of ``metrics/``, ``export/``, ``crowdtruth/`` and ``sequence/`` whose
name says it holds a table of a known kind (``judgements``, ``mentions``, ``gt``, ``rows``, ...) is annotated with that
kind's alias (``Judgements``, ``Mentions``, ...: ``Annotated[pd.DataFrame, TableContract(...)]``), never with a
bare ``pd.DataFrame``; and every such alias carries a :class:`posthoc.tables.TableContract`.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("metrics", "export", "crowdtruth", "sequence")

#: parameter or field name -> the aliases a table of that name may have
TABLE_NAMES: dict[str, frozenset[str]] = {
    "judgements": frozenset({"Judgements"}),
    "mentions": frozenset({"Mentions"}),
    "documents": frozenset({"Documents"}),
    "gt": frozenset({"Mentions"}),
    "original_gt": frozenset({"Mentions"}),
    "rows": frozenset({"Judgements", "Mentions"}),  # validated rows of one of the two (the docstring says which)
}
#: names that hold something else too (``rows`` of an index array, a list of tuples): only a DataFrame is checked
LOOSE_NAMES = frozenset({"rows"})
#: a package's own table kind that its ``judgements`` parameters may hold besides posthoc's (with the reason)
OWN_KINDS: dict[str, dict[str, frozenset[str]]] = {
    # CrowdTruth's judgement table (unit, worker, annotation): build_vectors, run_crowdtruth
    "crowdtruth": {"judgements": frozenset({"JudgementTable"})},
    # the order audit reads worker, item, position of a sequence table (or judgements renamed to one)
    "sequence": {"judgements": frozenset({"Sequences"})},
}


def _is_dataframe(node: ast.expr) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "DataFrame") or (
        isinstance(node, ast.Name) and node.id == "DataFrame")


def table_aliases(tree: ast.Module) -> dict[str, str]:
    """``alias -> its metadata's source`` of every ``X = Annotated[pd.DataFrame, META]`` at a module's top."""
    found = {}
    for node in tree.body:
        target, value = (node.target, node.value) if isinstance(node, ast.AnnAssign) else (
            (node.targets[0], node.value) if isinstance(node, ast.Assign) and len(node.targets) == 1 else (None, None))
        if not isinstance(target, ast.Name) or not isinstance(value, ast.Subscript):
            continue
        if not (isinstance(value.value, ast.Name) and value.value.id == "Annotated"):
            continue
        parts = value.slice.elts if isinstance(value.slice, ast.Tuple) else [value.slice]
        if _is_dataframe(parts[0]):
            found[target.id] = ast.unparse(parts[1]) if len(parts) > 1 else ""
    return found


def _annotation_names(annotation: ast.expr) -> list[ast.expr]:
    """The members of ``A | B | None`` (``None`` left out)."""
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        return _annotation_names(annotation.left) + _annotation_names(annotation.right)
    if isinstance(annotation, ast.Constant) and annotation.value is None:
        return []
    return [annotation]


def named_tables(tree: ast.Module) -> Iterator[tuple[int, str, str, ast.expr]]:
    """``(line, where, name, annotation)`` of every public function's parameter and public class's field whose
    name is one of :data:`TABLE_NAMES`."""
    def public(name: str) -> bool:
        return not name.startswith("_") or name == "__init__"

    def functions(body: list[ast.stmt], owner: str) -> Iterator[tuple[int, str, str, ast.expr]]:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and public(node.name):
                args = node.args
                for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs):
                    if arg.arg in TABLE_NAMES and arg.annotation is not None:
                        yield node.lineno, f"{owner}{node.name}()", arg.arg, arg.annotation
            elif isinstance(node, ast.ClassDef) and public(node.name):
                for item in node.body:
                    if (isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)
                            and item.target.id in TABLE_NAMES):
                        yield item.lineno, node.name, item.target.id, item.annotation
                yield from functions(node.body, f"{node.name}.")

    yield from functions(tree.body, "")


def contract_violations(source: str, *, package: str, aliases: dict[str, str]) -> list[str]:
    """What in ``source`` (a module of ``package``) breaks the rule of the module docstring."""
    own = OWN_KINDS.get(package, {})
    allowed = {name: kinds | own.get(name, frozenset()) for name, kinds in TABLE_NAMES.items()}
    problems = []
    for line, where, name, annotation in named_tables(ast.parse(source)):
        for member in _annotation_names(annotation):
            if _is_dataframe(member):
                wanted = " or ".join(sorted(allowed[name]))
                problems.append(f"line {line}: {where} {name}: a bare pd.DataFrame; use {wanted}")
            elif not (isinstance(member, ast.Name) and member.id in aliases):
                if name in LOOSE_NAMES:
                    continue
                problems.append(f"line {line}: {where} {name}: {ast.unparse(member)} is no table alias")
            elif member.id not in allowed[name]:
                problems.append(f"line {line}: {where} {name}: {member.id}, not {' or '.join(sorted(allowed[name]))}")
    return problems


def _sources() -> list[Path]:
    return sorted(p for package in PACKAGES for p in (ROOT / "plugin/posthoc" / package).rglob("*.py"))


def contract_names(tree: ast.Module) -> set[str]:
    """The names a module binds to a ``TableContract(...)`` at its top."""
    found = set()
    for node in tree.body:
        target = node.target if isinstance(node, ast.AnnAssign) else (
            node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None)
        value = node.value if isinstance(node, ast.AnnAssign | ast.Assign) else None
        if (isinstance(target, ast.Name) and isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
                and value.func.id == "TableContract"):
            found.add(target.id)
    return found


def _trees() -> list[ast.Module]:
    return [ast.parse(path.read_text(encoding="utf-8")) for path in sorted((ROOT / "plugin/posthoc").rglob("*.py"))]


TREES = _trees()
ALIASES = {alias: meta for tree in TREES for alias, meta in table_aliases(tree).items()}
CONTRACTS = {name for tree in TREES for name in contract_names(tree)}


def test_every_table_alias_carries_a_contract() -> None:
    assert {"Documents", "Mentions", "Judgements", "JudgementTable", "Sequences"} <= set(ALIASES)
    assert {"DOCUMENTS", "MENTIONS", "JUDGEMENTS", "JUDGEMENT_TABLE", "SEQUENCES"} <= CONTRACTS
    plain = {alias: meta for alias, meta in ALIASES.items()
             if not (meta in CONTRACTS or meta.startswith("TableContract("))}
    assert not plain, f"Annotated DataFrame aliases without a TableContract: {plain}"


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(ROOT / "plugin/posthoc")))
def test_public_signatures_name_their_tables(path: Path) -> None:
    package = path.relative_to(ROOT / "plugin/posthoc").parts[0]
    problems = contract_violations(path.read_text(encoding="utf-8"), package=package, aliases=ALIASES)
    assert not problems, f"{path.relative_to(ROOT)}:\n" + "\n".join(problems)


def test_the_check_sees_the_signatures_it_guards() -> None:
    seen = [(path.name, name) for path in _sources()
            for _, _, name, _ in named_tables(ast.parse(path.read_text(encoding="utf-8")))]
    assert ("score.py", "judgements") in seen and ("score.py", "mentions") in seen
    assert ("vectors.py", "judgements") in seen and ("flatten.py", "judgements") in seen
    assert len(seen) >= 30, seen


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import pandas as pd\ndef f(judgements: pd.DataFrame) -> None: ...", "a bare pd.DataFrame"),
        ("import pandas as pd\ndef f(*, mentions: pd.DataFrame | None = None) -> None: ...", "a bare pd.DataFrame"),
        ("from pandas import DataFrame\nclass C:\n    gt: DataFrame", "a bare pd.DataFrame"),
        ("class C:\n    def m(self, documents: Frame) -> None: ...", "Frame is no table alias"),
        ("def f(mentions: Judgements) -> None: ...", "Judgements, not Mentions"),
    ],
    ids=["bare parameter", "optional keyword", "dataclass field", "not an alias", "another kind"],
)
def test_the_check_finds_a_table_without_its_alias(source: str, expected: str) -> None:
    problems = contract_violations(source, package="metrics", aliases=ALIASES)
    assert len(problems) == 1 and expected in problems[0], problems


def test_private_names_and_other_parameters_are_free() -> None:
    source = ("import pandas as pd\ndef _f(judgements: pd.DataFrame) -> None: ...\n"
              "def g(frame: pd.DataFrame, judgements: Judgements, rows: Ints) -> None: ...")
    assert contract_violations(source, package="metrics", aliases=ALIASES) == []
    bare_rows = "import pandas as pd\ndef f(rows: pd.DataFrame) -> None: ..."
    assert len(contract_violations(bare_rows, package="metrics", aliases=ALIASES)) == 1
