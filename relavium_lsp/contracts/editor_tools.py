"""Tools the editor answers: diagnostics, symbols, references and definitions.

The server sends ``relavium/editorQuery`` to a client that advertised the matching feature in
``experimental.relavium.editorTools``; the client answers from its own language intelligence
(other language servers, its diagnostic collections). Positions are 1-based lines and
columns; paths are absolute file paths.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from relavium_lsp.contracts.base import WireModel

EditorFeature = Literal["diagnostics", "symbols", "references", "definition"]
DiagnosticSeverity = Literal["error", "warning", "information", "hint"]
MAX_EDITOR_ITEMS = 500


class EditorQueryParams(WireModel):
    """``relavium/editorQuery`` (server → client request).

    ``diagnostics``: ``path`` (or the whole workspace without it). ``symbols``: the symbols of
    ``path``, or the workspace symbols matching ``query``. ``references`` / ``definition``:
    ``path``, ``line`` and ``character`` of the symbol.
    """

    session_id: str
    kind: EditorFeature
    path: str | None = Field(default=None, max_length=4096)
    line: int | None = Field(default=None, ge=1)
    character: int | None = Field(default=None, ge=1)
    query: str | None = Field(default=None, max_length=500)
    max_items: int = Field(default=200, ge=1, le=MAX_EDITOR_ITEMS)


class EditorDiagnostic(WireModel):
    """One problem the editor knows about."""

    path: str
    line: int = Field(ge=1)
    character: int = Field(default=1, ge=1)
    severity: DiagnosticSeverity = "error"
    message: str
    source: str | None = None
    code: str | None = None


class EditorSymbol(WireModel):
    """One symbol (a document or workspace symbol)."""

    name: str
    kind: str
    path: str
    line: int = Field(ge=1)
    character: int = Field(default=1, ge=1)
    container: str | None = None


class EditorLocation(WireModel):
    """One place in a file (a reference or a definition)."""

    path: str
    line: int = Field(ge=1)
    character: int = Field(default=1, ge=1)


class EditorQueryResult(WireModel):
    """The client's answer to ``relavium/editorQuery`` (the list matching the kind)."""

    diagnostics: list[EditorDiagnostic] = Field(default_factory=list)
    symbols: list[EditorSymbol] = Field(default_factory=list)
    locations: list[EditorLocation] = Field(default_factory=list)
