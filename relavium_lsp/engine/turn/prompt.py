"""Rendering an agent's system prompt for a session.

``{{ctx.*}}`` placeholders take values from the session context (plaintext by contract).
``{{secrets.*}}`` is never resolved here or anywhere else that produces prompt or tool text:
it becomes a fixed marker, so a secret cannot reach a model, an event or the transcript.
"""

from __future__ import annotations

import re

from relavium_lsp.contracts.session import SessionContext

_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][\w.-]*)\s*\}\}")
SECRET_WITHHELD = "[secret withheld]"  # noqa: S105 - a marker, not a password


def context_values(context: SessionContext) -> dict[str, str]:
    """The ``ctx.*`` names a prompt may use, as display strings."""
    values = {
        "workingDir": context.working_dir,
        "activeFile": context.active_file or "(none)",
        "gitRef": context.git_ref or "(unknown)",
        "fsScopeTier": context.fs_scope_tier,
        "selection": "(none)",
    }
    if context.selection is not None:
        selection = context.selection
        values["selection"] = f"{selection.file}:{selection.start_line}-{selection.end_line}"
    values.update(context.variables or {})
    return values


def render_prompt(template: str, context: SessionContext) -> str:
    """Fill ``{{ctx.name}}`` placeholders; withhold secrets; leave unknown ones empty."""
    values = context_values(context)

    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name.startswith("secrets.") or name == "secrets":
            return SECRET_WITHHELD
        if name.startswith("ctx."):
            return values.get(name.removeprefix("ctx."), "")
        return match.group(0)

    return _PLACEHOLDER.sub(replace, template)


def selection_excerpt(text: str, start_line: int, end_line: int, *, max_lines: int = 200) -> str:
    """The selected lines (1-based, inclusive), capped so a huge selection cannot flood a prompt."""
    lines = text.splitlines()
    last = min(end_line, start_line + max_lines - 1, len(lines))
    excerpt = "\n".join(lines[start_line - 1 : last])
    if last < end_line:
        excerpt += f"\n… ({end_line - last} more selected lines not shown)"
    return excerpt
