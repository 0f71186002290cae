"""The protocol reference and both clients' protocol modules are generated and must be current."""

from __future__ import annotations

import importlib.util
import re
import typing
from pathlib import Path
from types import ModuleType

import pytest
from pydantic import BaseModel

from relavium_lsp.contracts import events
from relavium_lsp.server import methods
from relavium_lsp.server.app import create_server

REPO = Path(__file__).resolve().parents[2]
TS_MODULE = REPO / "vscode-client" / "src" / "protocol.ts"
LUA_MODULE = REPO / "lua" / "relavium" / "protocol.lua"


def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "generate_protocol", REPO / "docs" / "generate_protocol.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_reference_and_client_modules_are_current() -> None:
    outputs = generator().render_all()
    assert set(outputs) == {REPO / "docs" / "protocol.md", TS_MODULE, LUA_MODULE}
    for path, text in outputs.items():
        assert path.read_text(encoding="utf-8") == text, f"{path}: python docs/generate_protocol.py"


def test_every_method_is_documented_with_the_params_model_the_server_validates() -> None:
    documented = {entry[0]: entry[3] for entry in generator().REQUESTS}
    constants = {
        value
        for name, value in vars(methods).items()
        if name.isupper()
        and isinstance(value, str)
        and value.startswith(("relavium/", "relavium.codeAction."))
    }
    assert constants - {methods.SESSION_EVENT} == set(documented)
    server = create_server()
    assert server.request_handlers == {}  # deferred past initialize (cold start)
    assert server.load_deferred_features()
    assert not server.load_deferred_features()  # once only
    assert set(server.request_handlers) == set(methods.REQUESTS)
    assert set(server.request_handlers) <= set(documented)
    for method, handler in server.request_handlers.items():
        # register_request closes over the pydantic model it validates params with.
        cells = [cell.cell_contents for cell in handler.__closure__ or ()]
        models = [c for c in cells if isinstance(c, type) and issubclass(c, BaseModel)]
        assert models == [documented[method]], method


def test_every_event_type_has_a_section_a_typescript_payload_and_a_lua_name() -> None:
    text = (REPO / "docs" / "protocol.md").read_text(encoding="utf-8")
    typescript = TS_MODULE.read_text(encoding="utf-8")
    lua = LUA_MODULE.read_text(encoding="utf-8")
    payloads = generator().protocol().events
    union = typing.get_args(events.EventPayload)[0]
    assert [p.model for p in payloads] == list(typing.get_args(union))
    for payload in payloads:
        assert f"### `{payload.tag}`" in text
        assert f"export interface {payload.name}Payload {{\n  type: '{payload.tag}';" in typescript
        assert f" = '{payload.tag}',\n" in lua


def test_every_method_constant_reaches_both_clients() -> None:
    typescript = TS_MODULE.read_text(encoding="utf-8")
    lua = LUA_MODULE.read_text(encoding="utf-8")
    for name, value in vars(methods).items():
        if name.isupper() and isinstance(value, str) and value.startswith("relavium/"):
            assert f": '{value}',\n" in typescript, name
            assert f"M.{name} = '{value}'" in lua, name


@pytest.mark.parametrize(
    ("member", "why"),
    [
        ("  resumed: boolean;", "the server always writes a defaulted field"),
        ("  model?: string;", "the server omits a null field"),
        ("  limit?: number;", "a client may leave out what the server defaults"),
        ("  approvals?: boolean;", "capabilities are client-written"),
        ("  events: SessionEvent[];", "a loosely declared field shows what it carries"),
    ],
)
def test_typescript_optionality_follows_who_writes_the_json(member: str, why: str) -> None:
    assert member in TS_MODULE.read_text(encoding="utf-8"), why


def test_clients_name_methods_and_event_types_only_through_the_generated_modules() -> None:
    # TypeScript checks event-type literals against the generated unions; method names and
    # every Lua string are unchecked, so they must come from the generated module.
    quoted_method = re.compile(r"""['"]relavium/""")
    quoted_event = re.compile(r"""['"](session|agent|cost):[a-z_]+['"]""")
    for source in (REPO / "vscode-client" / "src").rglob("*.ts"):
        if source != TS_MODULE:
            assert not quoted_method.search(source.read_text(encoding="utf-8")), source
    for source in (*(REPO / "lua").rglob("*.lua"), *(REPO / "plugin").rglob("*.lua")):
        if source != LUA_MODULE:
            text = source.read_text(encoding="utf-8")
            assert not quoted_method.search(text), source
            assert not quoted_event.search(text), source


def test_check_mode_reports_staleness_of_each_output(tmp_path: Path) -> None:
    module = generator()
    module.OUTPUT = tmp_path / "protocol.md"
    module.TS_OUTPUT = tmp_path / "protocol.ts"
    module.LUA_OUTPUT = tmp_path / "protocol.lua"
    assert module.main(["--check"]) == 1
    assert module.main([]) == 0
    assert module.main(["--check"]) == 0
    for stale in (module.OUTPUT, module.TS_OUTPUT, module.LUA_OUTPUT):
        current = stale.read_text(encoding="utf-8")
        stale.write_text(current + "\n", encoding="utf-8")
        assert module.main(["--check"]) == 1
        stale.write_text(current, encoding="utf-8")
    assert module.main(["--check"]) == 0
