"""editor_* tools: declared only for an editor that answers them; jailed, capped, scoped."""

from __future__ import annotations

from relavium_lsp.contracts.editor_tools import (
    EditorDiagnostic,
    EditorLocation,
    EditorQueryParams,
    EditorQueryResult,
    EditorSymbol,
)
from tests.unit.tools.conftest import ScriptedHost

EDITOR_TOOLS = ["editor_diagnostics", "editor_symbols", "editor_references", "editor_definition"]


class AnsweringHost(ScriptedHost):
    """A host whose editor answers some editor questions from a script."""

    def __init__(self, features: set[str], answer: EditorQueryResult) -> None:
        super().__init__()
        self.features = frozenset(features)
        self.answer = answer
        self.queries: list[EditorQueryParams] = []

    def editor_features(self) -> frozenset[str]:
        return self.features

    async def editor_query(self, params: EditorQueryParams) -> EditorQueryResult:
        self.queries.append(params)
        return self.answer


async def test_editor_tools_exist_only_where_the_client_answers_them(harness) -> None:
    plain = await harness.registry.select(EDITOR_TOOLS, harness.context())
    assert [spec.name for spec in plain.specs] == []
    host = AnsweringHost({"diagnostics", "definition"}, EditorQueryResult())
    ctx = harness.context(host=host)
    selection = await harness.registry.select(EDITOR_TOOLS, ctx)
    names = {spec.name for spec in selection.specs}
    assert {"editor_diagnostics", "editor_definition"} <= names
    assert "editor_symbols" not in names and "editor_references" not in names
    ctx.allowed_tools = selection.allowed
    refused = await harness.call("editor_symbols", {"query": "x"}, ctx)
    assert refused.error_code == "tool_unavailable"


async def test_answers_are_formatted_jailed_and_left_out_when_outside_the_scope(harness) -> None:
    ws = harness.workspace
    (ws / "app.py").write_text("def add(a, b):\n    return a - b\n")
    answer = EditorQueryResult(
        diagnostics=[
            EditorDiagnostic(
                path=str(ws / "app.py"),
                line=2,
                character=5,
                severity="warning",
                message="suspicious minus",
                source="test-lint",
                code="W1",
            ),
            EditorDiagnostic(path=str(harness.outside / "x.py"), line=1, message="elsewhere"),
        ],
        symbols=[EditorSymbol(name="add", kind="Function", path=str(ws / "app.py"), line=1)],
        locations=[EditorLocation(path=str(ws / "app.py"), line=1, character=5)],
    )
    host = AnsweringHost({"diagnostics", "symbols", "references", "definition"}, answer)
    ctx = harness.context(host=host)
    problems = await harness.call("editor_diagnostics", {"path": "app.py"}, ctx)
    assert problems.result.splitlines() == [
        "app.py:2:5: warning: suspicious minus [test-lint W1]",
        "[1 outside the scope left out]",
    ]
    assert "elsewhere" not in problems.result
    assert host.queries[-1].kind == "diagnostics" and host.queries[-1].path == str(ws / "app.py")
    symbols = await harness.call("editor_symbols", {"path": "app.py"}, ctx)
    assert symbols.result == "app.py:1:1: Function add"
    found = await harness.call(
        "editor_definition", {"path": "app.py", "line": 2, "character": 12}, ctx
    )
    assert found.result == "app.py:1:5"
    assert (host.queries[-1].line, host.queries[-1].character) == (2, 12)
    outside = await harness.call("editor_diagnostics", {"path": "../outside/x.py"}, ctx)
    assert outside.error_code == "tool_denied"
    neither = await harness.call("editor_symbols", {}, ctx)
    assert neither.is_error and "path" in neither.result
