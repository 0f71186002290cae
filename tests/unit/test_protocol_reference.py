"""docs/protocol.md is generated from the contracts and must be current and complete."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from pydantic import BaseModel

from relavium_lsp.server import methods
from relavium_lsp.server.app import create_server

REPO = Path(__file__).resolve().parents[2]


def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "generate_protocol", REPO / "docs" / "generate_protocol.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_reference_is_current() -> None:
    committed = (REPO / "docs" / "protocol.md").read_text(encoding="utf-8")
    assert committed == generator().render(), "run: python docs/generate_protocol.py"


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
    assert set(server.request_handlers) <= set(documented)
    for method, handler in server.request_handlers.items():
        # register_request closes over the pydantic model it validates params with.
        cells = [cell.cell_contents for cell in handler.__closure__ or ()]
        models = [c for c in cells if isinstance(c, type) and issubclass(c, BaseModel)]
        assert models == [documented[method]], method


def test_every_event_type_has_a_section() -> None:
    text = (REPO / "docs" / "protocol.md").read_text(encoding="utf-8")
    for payload in generator()._event_payloads():
        assert f"### `{payload.model_fields['type'].default}`" in text


def test_check_mode_reports_staleness(tmp_path: Path) -> None:
    module = generator()
    stale = tmp_path / "protocol.md"
    stale.write_text("old\n", encoding="utf-8")
    module.OUTPUT = stale
    assert module.main(["--check"]) == 1
    assert module.main([]) == 0
    assert module.main(["--check"]) == 0
