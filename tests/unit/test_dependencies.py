"""Every third-party module the package imports is a dependency pyproject.toml declares.

Optional extras count (``bedrock``, ``vertex``: imported only when that provider is used).

A module that arrives only through another dependency works until that dependency drops it;
declaring it (with the floor of the feature used) keeps a fresh install working. The few
modules that are parts of a declared dependency's own distribution family are listed with it.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "relavium_lsp"
# module -> the declared dependency that brings (and pins) it
PART_OF: dict[str, str] = {
    "pydantic_core": "pydantic",  # pydantic pins its exact core
}


def _imported_top_level_modules() -> set[str]:
    modules: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        if "testing" in path.relative_to(PACKAGE).parts:
            continue  # the test harness is not part of what users run
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                modules.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules.add(node.module.split(".")[0])
    return modules - set(sys.stdlib_module_names) - {"relavium_lsp", "__future__"}


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _declared() -> set[str]:
    """The required dependencies and the users' optional extras (not the developers' ``dev``)."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project.get("optional-dependencies", {})
    specs = [*project["dependencies"]]
    for extra, extra_specs in extras.items():
        if extra != "dev":
            specs.extend(extra_specs)
    return {_normalized(re.split(r"[<>=!~;\[ ]", spec, maxsplit=1)[0]) for spec in specs}


def test_every_imported_module_is_declared() -> None:
    declared = _declared()
    distributions = packages_distributions()
    undeclared = []
    for module in sorted(_imported_top_level_modules()):
        if module in PART_OF:
            assert _normalized(PART_OF[module]) in declared, module
            continue
        names = {_normalized(name) for name in distributions.get(module, [module])}
        if not names & declared:
            undeclared.append(f"{module} (from {', '.join(sorted(names))})")
    assert undeclared == []
