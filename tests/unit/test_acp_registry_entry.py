"""docs/acp-registry/relavium-lsp is a valid ACP registry entry for this version.

The rules are the registry's public ones (its FORMAT.md, CONTRIBUTING.md and
agent.schema.json): required fields, the id's shape and directory, a semantic version that
the `uvx` package pins, and a 16x16 monochrome icon.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ElementTree
from pathlib import Path

from relavium_lsp import __version__
from relavium_lsp.cli import build_parser

ENTRY = Path(__file__).resolve().parents[2] / "docs" / "acp-registry" / "relavium-lsp"
ALLOWED_PAINT = {"currentColor", "none", "inherit"}


def test_the_entry_has_the_registry_fields_and_this_version() -> None:
    entry = json.loads((ENTRY / "agent.json").read_text(encoding="utf-8"))
    assert {"id", "name", "version", "description", "distribution"} <= set(entry)
    assert set(entry) <= {
        "id", "name", "version", "description", "repository", "website", "authors", "license",
        "license_url", "icon", "distribution",
    }  # fmt: skip
    assert re.fullmatch(r"[a-z][a-z0-9-]*", entry["id"]) and entry["id"] == ENTRY.name
    assert entry["version"] == __version__
    assert entry["license"] == "MIT"
    assert set(entry["distribution"]) == {"uvx"}
    uvx = entry["distribution"]["uvx"]
    assert set(uvx) <= {"package", "args", "env"}
    assert uvx["package"] == f"relavium-lsp=={__version__}"  # never "latest"


def test_the_entry_runs_the_acp_command() -> None:
    uvx = json.loads((ENTRY / "agent.json").read_text(encoding="utf-8"))["distribution"]["uvx"]
    # `uvx relavium-lsp==V acp` runs the package's own command with these arguments
    arguments = build_parser("acp").parse_args(uvx["args"])
    assert arguments.command == "acp"


def test_the_icon_is_16_by_16_and_monochrome() -> None:
    root = ElementTree.parse(ENTRY / "icon.svg").getroot()
    assert (root.get("width"), root.get("height"), root.get("viewBox")) == ("16", "16", "0 0 16 16")
    for element in root.iter():
        for attribute in ("fill", "stroke"):
            value = element.get(attribute)
            assert value is None or value in ALLOWED_PAINT, (element.tag, attribute, value)
