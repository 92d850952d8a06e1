"""The layers of the house (README, "Architecture"; CONTRIBUTING.md), checked on the source: ast, no import.

Bottom to top:

0. **ground**: utilities that know nothing of Label Studio or studies (``atomic``, ``errors``, ``html``,
   ``http``, ``tables``, ``scores``...);
1. **adapters** to outside systems, knowing nothing of studies: ``posthoc.labelstudio``, ``posthoc.readers``;
2. **rooms**: the study (plan, planner, live), export, metrics, the papers' analyses, predictors, report;
3. **jobs** (``posthoc.jobs``) composing the rooms: setup, score, simulate, demo;
4. the **command line** (``posthoc.cli``) and the **ML backend** (``posthoc_backend``).

Every import (module level or inside a function) goes to the same layer or a lower one; neither the rooms (the
packages; inside ``posthoc.study`` its folders ``plan``, ``planner``, ``live``) nor the modules import each other in
a circle.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GROUND, ADAPTERS, ROOMS, JOBS, TOP = range(5)
LAYER_NAMES = ("ground", "adapters", "rooms", "jobs", "top")
#: the first two dotted parts of a module -> its layer; anything of posthoc not named here is a room
LAYERS = {
    **dict.fromkeys(["posthoc", "posthoc.atomic", "posthoc.errors", "posthoc.html", "posthoc.http", "posthoc.lazy",
                     "posthoc.links", "posthoc.paths", "posthoc.processes", "posthoc.scores", "posthoc.tables",
                     "posthoc.turtle"], GROUND),
    "posthoc.labelstudio": ADAPTERS,
    "posthoc.readers": ADAPTERS,
    "posthoc.jobs": JOBS,
    "posthoc.cli": TOP,
    "posthoc_backend": TOP,
}


def module_files() -> dict[str, Path]:
    """Every module of ``plugin/`` and ``ml_backend/`` by dotted name (a package by its ``__init__``)."""
    found: dict[str, Path] = {}
    for base in ("plugin", "ml_backend"):
        for path in (ROOT / base).rglob("*.py"):
            parts = list(path.relative_to(ROOT / base).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def import_edges(modules: dict[str, Path]) -> dict[str, set[tuple[str, int]]]:
    """``module -> {(imported module of the project, line)}``, imports inside functions included."""
    edges: dict[str, set[tuple[str, int]]] = defaultdict(set)
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")
                    base = ".".join(parts[:len(parts) - node.level + 1] + ([base] if base else []))
                targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                           for alias in node.names]
            else:
                continue
            for target in targets:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    edges[name].add((target, node.lineno))
    return edges


def layer_of(module: str) -> int:
    """The layer of a module: its package's (first two dotted parts), the backend's, or a room's."""
    if module.split(".")[0] == "posthoc_backend":
        return TOP
    return LAYERS.get(".".join(module.split(".")[:2]), ROOMS)


#: packages whose folders are rooms of their own: a module of ``posthoc.study.plan`` stands in that room, not in
#: ``posthoc.study`` (the study's plan, its planner and the live study must not import each other in a circle)
DIVIDED = ("posthoc.study",)


def room_of(module: str) -> str:
    """The room a module stands in: its top folder (``posthoc.eaglet``), its folder one down in a package of
    :data:`DIVIDED` (``posthoc.study.plan``), or the file itself at the top."""
    parts = module.split(".")
    return ".".join(parts[:3] if ".".join(parts[:2]) in DIVIDED else parts[:2])


def room_graph(edges: dict[str, set[tuple[str, int]]]) -> dict[str, set[str]]:
    """``room -> {rooms it imports}`` (:func:`room_of`), without a room's imports of itself."""
    rooms: dict[str, set[str]] = defaultdict(set)
    for module, targets in edges.items():
        rooms[room_of(module)].update(room_of(t) for t, _ in targets if room_of(t) != room_of(module))
    return rooms


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


MODULES = module_files()
EDGES = import_edges(MODULES)


def test_the_scan_reads_relative_and_function_level_imports(tmp_path: Path) -> None:
    package = tmp_path / "plugin" / "posthoc" / "room"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "a.py").write_text("from . import b\ndef f():\n    from posthoc.jobs import score\n", encoding="utf-8")
    (package / "b.py").write_text("", encoding="utf-8")
    modules = {"posthoc.room": package / "__init__.py", "posthoc.room.a": package / "a.py",
               "posthoc.room.b": package / "b.py", "posthoc.jobs.score": package / "b.py"}
    assert {t for t, _ in import_edges(modules)["posthoc.room.a"]} == {"posthoc.room.b", "posthoc.jobs.score"}


def test_the_circle_finder_finds_a_circle_and_only_it() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_every_layer_is_populated() -> None:
    assert {layer_of(m) for m in MODULES} == set(range(len(LAYER_NAMES)))
    assert layer_of("posthoc.labelstudio.client") == ADAPTERS and layer_of("posthoc.jobs.score") == JOBS
    assert layer_of("posthoc.study.plan.manifest") == ROOMS and layer_of("posthoc.html") == GROUND


@pytest.mark.parametrize("module", sorted(MODULES), ids=str)
def test_no_import_runs_up_a_layer(module: str) -> None:
    up = sorted((line, target, LAYER_NAMES[layer_of(target)]) for target, line in EDGES.get(module, ())
                if layer_of(target) > layer_of(module))
    assert not up, (f"{module} ({LAYER_NAMES[layer_of(module)]}) imports from a higher layer {up}: move the code "
                    "down, or pass what it needs in (CONTRIBUTING.md)")


def test_the_adapter_knows_nothing_of_studies() -> None:
    study_side = ("posthoc.study", "posthoc.export", "posthoc.report", "posthoc.jobs", "posthoc.metrics")
    found = sorted((module, line, target) for module, targets in EDGES.items()
                   if module.startswith("posthoc.labelstudio")
                   for target, line in targets if target.startswith(study_side))
    assert not found


def test_the_rooms_inside_the_study_are_rooms_of_their_own() -> None:
    assert {room_of(m) for m in MODULES if m.startswith("posthoc.study.")} >= {
        "posthoc.study.plan", "posthoc.study.planner", "posthoc.study.live"}
    assert room_of("posthoc.study") == "posthoc.study" and room_of("posthoc.eaglet.rules.uri") == "posthoc.eaglet"


def test_the_room_check_catches_a_circle_inside_the_study() -> None:
    # the loop issue 43 found: the plan's study.py imported the planner's estimate_file, the planner imports the plan
    edges = {"posthoc.study.plan.study": {("posthoc.study.planner.estimate_file", 19)},
             "posthoc.study.planner.estimate": {("posthoc.study.plan.config", 30)},
             "posthoc.study.live.progress": {("posthoc.study.plan.manifest", 5)}}
    assert circles(room_graph(edges)) == [["posthoc.study.plan", "posthoc.study.planner"]]
    del edges["posthoc.study.plan.study"]
    assert circles(room_graph(edges)) == []


def test_no_room_imports_another_in_a_circle() -> None:
    assert circles(room_graph(EDGES)) == []


def test_no_module_imports_another_in_a_circle() -> None:
    graph = {module: {t for t, _ in targets} for module, targets in EDGES.items()}
    assert circles(graph) == []
