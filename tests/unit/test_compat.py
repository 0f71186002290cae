"""Other libraries' private API: only in ``relavium_lsp/_compat/``, and still there.

The first tests fail, naming the library, when a release changes what ``_compat`` relies
on. The scan fails when anything else in the package reaches into an installed library's
private names (the standard library's are left to its pinned Python version):
``lib._name``, ``from lib._module import``, ``getattr(x, "_name")``, ``super()._name``, and
— in a class built on another library's class — overriding or reading a ``_name`` that
class has.
"""

from __future__ import annotations

import ast
import asyncio
import importlib
import inspect
import re
import sys
import threading
from functools import cache
from pathlib import Path

from pydantic import BaseModel
from pygls.client import JsonRPCClient
from pygls.protocol import JsonRPCProtocol, default_converter
from pygls.server import JsonRPCServer

from relavium_lsp._compat.pydantic import trusted_builder
from relavium_lsp._compat.pygls import client_process, use_stop_event
from relavium_lsp.llm.seam import TextDelta

PACKAGE = Path(__file__).resolve().parents[2] / "relavium_lsp"
COMPAT = PACKAGE / "_compat"
# A named tuple's public API is spelled with a leading underscore.
NAMED_TUPLE_API = {"_asdict", "_replace", "_fields", "_make", "_field_defaults"}
PRIVATE = re.compile(r"(?:\.|\bdef\s+)(_[A-Za-z]\w*)")


def test_pygls_shutdown_still_sets_the_stop_event_we_give_it() -> None:
    server = JsonRPCServer(JsonRPCProtocol, default_converter)  # type: ignore[no-untyped-call]
    stop = threading.Event()
    use_stop_event(server, stop)
    server.shutdown()  # type: ignore[no-untyped-call]
    assert stop.is_set(), "pygls: JsonRPCServer.shutdown() no longer sets _stop_event"


async def test_a_pygls_client_still_keeps_the_process_it_started() -> None:
    client = JsonRPCClient()  # type: ignore[no-untyped-call]
    assert client_process(client) is None, "pygls: JsonRPCClient._server is gone"
    await client.start_io(sys.executable, "-c", "import sys; sys.stdin.read()")
    process = client_process(client)
    assert isinstance(process, asyncio.subprocess.Process), "pygls: _server is not the process"
    assert process.pid > 0
    process.kill()
    await process.wait()
    await client.stop()  # type: ignore[no-untyped-call]


def test_pydantic_still_has_the_slots_a_trusted_builder_fills() -> None:
    assert BaseModel.__slots__ == (
        "__dict__",
        "__pydantic_fields_set__",
        "__pydantic_extra__",
        "__pydantic_private__",
    ), "pydantic: BaseModel's instance slots changed (see _compat/pydantic.py)"
    trusted = trusted_builder(TextDelta, {"type": "text_delta"}, "text")("é")
    validated = TextDelta(text="é")
    assert trusted == validated and hash(trusted) == hash(validated)
    assert trusted.__dict__ == validated.__dict__
    assert trusted.model_fields_set == validated.model_fields_set
    assert trusted.__pydantic_extra__ == validated.__pydantic_extra__
    assert trusted.__pydantic_private__ == validated.__pydantic_private__
    assert trusted.model_dump_json() == validated.model_dump_json()


def modules() -> list[tuple[Path, ast.Module]]:
    return [
        (path, ast.parse(path.read_text(encoding="utf-8")))
        for path in sorted(PACKAGE.rglob("*.py"))
        if COMPAT not in path.parents
    ]


def external_roots(tree: ast.Module) -> set[str]:
    roots = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots - {"relavium_lsp", "__future__"}


@cache
def private_names(root: str) -> frozenset[str]:
    """The ``_names`` an installed library's source defines or uses (empty for built-ins)."""
    if root in sys.stdlib_module_names:
        return frozenset()
    try:
        module = importlib.import_module(root)
    except ImportError:
        return frozenset()
    files = getattr(module, "__path__", None)
    paths = [Path(p) for p in files] if files else [Path(module.__file__ or "")]
    names: set[str] = set()
    for base in paths:
        for source in base.rglob("*.py") if base.is_dir() else [base]:
            names.update(PRIVATE.findall(source.read_text(encoding="utf-8", errors="replace")))
    return frozenset(names - NAMED_TUPLE_API)


def base_private_names(module_name: str, class_node: ast.ClassDef) -> set[str]:
    """The ``_names`` of the other libraries' classes ``class_node`` is built on."""
    module = importlib.import_module(module_name)
    found: set[str] = set()
    for base in class_node.bases:
        try:
            value = eval(ast.unparse(base), vars(module))
        except Exception:  # a generic alias or a name only typing knows: not a class
            continue
        for klass in getattr(value, "__mro__", ()):
            root = klass.__module__.split(".")[0]
            if root == "relavium_lsp" or root in sys.stdlib_module_names:
                continue  # ours, or the standard library's (its Python version is pinned)
            try:
                found.update(PRIVATE.findall(inspect.getsource(klass)))
            except (OSError, TypeError):
                continue
    return found - NAMED_TUPLE_API


def violations(path: Path, tree: ast.Module) -> list[str]:
    found: list[str] = []
    where = path.relative_to(PACKAGE.parent)
    theirs: set[str] = set().union(*(private_names(root) for root in external_roots(tree)))
    module_name = ".".join(where.with_suffix("").parts).removesuffix(".__init__")
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            parts = node.module.split(".")
            if parts[0] != "relavium_lsp" and any(
                part.startswith("_") and not part.startswith("__") for part in parts
            ):
                found.append(f"{where}:{node.lineno}: from {node.module} import …")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] != "relavium_lsp" and any(
                    part.startswith("_") and not part.startswith("__") for part in parts
                ):
                    found.append(f"{where}:{node.lineno}: import {alias.name}")
        elif isinstance(node, ast.Attribute) and _private(node.attr):
            value = node.value
            if isinstance(value, ast.Call) and ast.unparse(value.func) == "super":
                found.append(f"{where}:{node.lineno}: super().{node.attr}")
            elif not (isinstance(value, ast.Name) and value.id in ("self", "cls")):
                if node.attr in theirs:
                    found.append(f"{where}:{node.lineno}: {ast.unparse(node)}")
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "setattr", "hasattr", "delattr")
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
            and _private(node.args[1].value)
        ):
            found.append(f"{where}:{node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.ClassDef):
            inherited = base_private_names(module_name, node)
            for inner in ast.walk(node):
                name = None
                if isinstance(inner, ast.FunctionDef | ast.AsyncFunctionDef):
                    name = inner.name
                elif isinstance(inner, ast.Attribute) and ast.unparse(inner.value) == "self":
                    name = inner.attr
                if name is not None and _private(name) and name in inherited:
                    found.append(f"{where}:{inner.lineno}: {node.name} uses its base's {name}")
    return found


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__") and name not in NAMED_TUPLE_API


def test_no_private_api_of_another_library_outside_compat() -> None:
    found = [line for path, tree in modules() for line in violations(path, tree)]
    assert found == [], "move these into relavium_lsp/_compat/:\n" + "\n".join(found)


def test_the_scan_sees_what_it_must_refuse(tmp_path: Path) -> None:
    sample = (
        "import httpx\n"
        "from pygls.protocol import JsonRPCProtocol\n"
        "from yaml._yaml import CParser\n"
        "class P(JsonRPCProtocol):\n"
        "    def _send_data(self, data):\n"
        "        return self._include_headers\n"
        "def f(client: httpx.AsyncClient):\n"
        "    return client._transport, getattr(client, '_mounts')\n"
    )
    path = PACKAGE / "sample_for_the_scan.py"
    tree = ast.parse(sample)
    # The class's bases resolve in the module namespace: give it one without writing a file.
    module = type(sys)("relavium_lsp.sample_for_the_scan")
    exec(compile(tree, str(path), "exec"), vars(module))
    sys.modules[module.__name__] = module
    try:
        found = violations(path, tree)
    finally:
        del sys.modules[module.__name__]
    joined = "\n".join(found)
    for expected in (
        "from yaml._yaml",
        "uses its base's _send_data",
        "uses its base's _include_headers",
        "client._transport",
        "getattr(client, '_mounts')",
    ):
        assert expected in joined
