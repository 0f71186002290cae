"""The architecture holds: layers, no import cycles, one engine front door, true docs.

The layer contracts live in ``pyproject.toml`` (``[tool.importlinter]``) and are checked here
with import-linter; the rest is read from the source with ``ast``: every import statement
counts, at module level or inside a function, except those under ``if TYPE_CHECKING:``.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

import relavium_lsp

PACKAGE = Path(relavium_lsp.__file__).parent
REPO = PACKAGE.parent
ENGINE = "relavium_lsp.engine"
FRONT_DOOR = "relavium_lsp.engine.api"
LAYERS_START, LAYERS_END = "<!-- layers:start -->", "<!-- layers:end -->"

Graph = dict[str, set[str]]


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST, *, type_checking: bool) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement, skipping ``if TYPE_CHECKING:`` bodies unless asked for."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
            continue
        if isinstance(node, ast.If) and _is_type_checking(node) and not type_checking:
            stack.extend(node.orelse)
            continue
        stack.extend(ast.iter_child_nodes(node))


def import_graph(root: Path, *, type_checking: bool = False) -> Graph:
    """Module → the modules of the same package it imports (names resolved, externals left out)."""
    files = {_module_name(path, root): path for path in root.rglob("*.py")}
    graph: Graph = {name: set() for name in files}
    for name, path in files.items():
        is_package = path.name == "__init__.py"
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in _imports(tree, type_checking=type_checking):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    package = name.split(".") if is_package else name.split(".")[:-1]
                    package = package[: len(package) - node.level + 1]
                    base = ".".join([*package, base] if base else package)
                # ``from package import module`` imports the submodule too.
                targets = [base, *(f"{base}.{alias.name}" for alias in node.names)]
            graph[name].update(target for target in targets if target in files)
        graph[name].discard(name)
    return graph


def import_cycles(graph: Graph) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), sorted."""
    index: dict[str, int] = {}
    lowlink: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = lowlink[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in sorted(graph[module]):
            if target not in index:
                visit(target)
                lowlink[module] = min(lowlink[module], lowlink[target])
            elif target in on_stack:
                lowlink[module] = min(lowlink[module], index[target])
        if lowlink[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return sorted(cycles)


def test_the_layer_contracts_are_kept() -> None:
    # In a child process: import-linter configures logging with dictConfig, which disables
    # every logger that already exists — and tests that run after it in this process would
    # then see pygls's loggers silenced.
    linted = subprocess.run(
        [
            str(Path(sys.executable).with_name("lint-imports")),
            "--config",
            "pyproject.toml",
            "--no-cache",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert linted.returncode == 0, linted.stdout + linted.stderr


def test_there_are_no_import_cycles() -> None:
    assert import_cycles(import_graph(PACKAGE)) == []


def test_the_cycle_check_sees_function_level_imports_but_not_type_only_ones(
    tmp_path: Path,
) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text('"""A package."""\n')
    (package / "app.py").write_text("from pkg import features\n")
    (package / "features.py").write_text("def setup():\n    from pkg.app import thing\n")
    (package / "typed.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import hints\n"
    )
    (package / "hints.py").write_text("from . import typed\n")
    assert import_cycles(import_graph(package)) == [["pkg.app", "pkg.features"]]


def test_outer_layers_use_only_the_engine_front_door() -> None:
    graph = import_graph(PACKAGE, type_checking=True)
    reaching_in = sorted(
        f"{module} -> {target}"
        for module, targets in graph.items()
        if not (module == ENGINE or module.startswith(ENGINE + "."))
        for target in targets
        if target.startswith(ENGINE + ".") and target != FRONT_DOOR
    )
    assert reaching_in == []


def test_every_package_says_what_it_owns() -> None:
    vague = []
    for init in sorted(PACKAGE.rglob("__init__.py")):
        docstring = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        words = docstring.split()
        if len(words) < 8 or docstring.rstrip(".").lower() == init.parent.name:
            vague.append(str(init.relative_to(REPO)))
    assert vague == []


def _design_sections() -> set[str]:
    text = (REPO / "docs" / "design.md").read_text(encoding="utf-8")
    return set(re.findall(r"^#{2,3} (\d+(?:\.\d+)?)\. ", text, flags=re.MULTILINE))


def _cited_files() -> Iterator[Path]:
    for folder, pattern in (
        ("relavium_lsp", "*.py"),
        ("tests", "*.py"),
        ("bench", "*.py"),
        ("lua", "*.lua"),
        ("plugin", "*.lua"),
        ("vscode-client/src", "*.ts"),
    ):
        for path in (REPO / folder).rglob(pattern):
            if path != Path(__file__).resolve():
                yield path


def test_every_design_citation_points_at_a_section() -> None:
    sections = _design_sections()
    assert {"1", "2", "3", "4", "5", "6", "7", "8", "9"} <= sections
    dangling, spec = [], []
    for path in _cited_files():
        text = path.read_text(encoding="utf-8")
        shown = str(path.relative_to(REPO))
        if re.search(r"\bSPEC §", text):
            spec.append(shown)
        for citation in re.findall(r"design\.md`*\s+((?:§\d+(?:\.\d+)?(?:,\s*)?)+)", text):
            for number in re.findall(r"§(\d+(?:\.\d+)?)", citation):
                if number not in sections:
                    dangling.append(f"{shown}: §{number}")
    assert spec == [], "cite docs/design.md, not the SPEC (it is not in the repository)"
    assert dangling == []


def _contract_layers() -> list[list[str]]:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    [layers] = [
        contract["layers"]
        for contract in config["tool"]["importlinter"]["contracts"]
        if contract["type"] == "layers"
    ]
    return [
        sorted(part.strip().removeprefix("relavium_lsp.") for part in layer.split("|"))
        for layer in layers
    ]


def _pictured_layers(document: Path) -> list[list[str]]:
    text = document.read_text(encoding="utf-8")
    block = text[text.index(LAYERS_START) + len(LAYERS_START) : text.index(LAYERS_END)]
    layers = []
    for line in block.splitlines():
        # A picture line is "name | name   what it is"; fences and blank lines are not.
        names = line.split("  ")[0].strip()
        if names and not names.startswith("```"):
            layers.append(sorted(name.strip() for name in names.split("|")))
    return layers


@pytest.mark.parametrize("document", ["CONTRIBUTING.md", "docs/design.md"])
def test_the_layer_pictures_are_the_contract(document: str) -> None:
    assert _pictured_layers(REPO / document) == _contract_layers()


def test_test_modules_have_unique_names() -> None:
    """pytest imports test modules by basename (no packages under tests/): two files with one
    name fail the whole collection, which targeted runs of one directory never show."""
    seen: dict[str, Path] = {}
    clashes = []
    for path in sorted((REPO / "tests").rglob("test_*.py")):
        if path.name in seen:
            clashes.append(f"{seen[path.name].relative_to(REPO)} and {path.relative_to(REPO)}")
        seen.setdefault(path.name, path)
    assert not clashes, "test modules sharing a name: " + "; ".join(clashes)
