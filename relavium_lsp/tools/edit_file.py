r"""``edit_file``: exact-text replacements on the editor's current text.

The model names text it has read (``old``) and what replaces it (``new``); each ``old`` must
occur exactly once — unless ``replaceAll`` — in the text as the previous replacements left
it, line breaks compared as ``\n`` whatever the file uses (its own endings are put back:
:mod:`~relavium_lsp.tools.line_endings`). Everything is checked before the user is asked: a
replacement that does not apply is a failed call naming the first line that differs, and
nothing changes. The result reaches the
editor as ranged edits (see :func:`~relavium_lsp.tools.text_edit.minimal_edits`), never as a
whole-file replacement, and the approval carries the diff.
"""

from __future__ import annotations

from pydantic import Field

from relavium_lsp.errors import ToolDenied, ToolError
from relavium_lsp.tools.base import (
    PreparedCall,
    ToolArgs,
    ToolCallContext,
    ToolDefinition,
    ToolLimits,
    ToolRun,
)
from relavium_lsp.tools.fs import (
    file_change_approval,
    read_current_text,
    transcript_diff,
    write_through_host,
)
from relavium_lsp.tools.host import FileChange
from relavium_lsp.tools.jail import resolve_in_scope
from relavium_lsp.tools.line_endings import keep_line_endings, normalize_newlines
from relavium_lsp.tools.text_edit import (
    Replacement,
    apply_replacements,
    diff_stat_text,
    file_diff,
)

MAX_EDITS_PER_CALL = 100


class TextReplacement(ToolArgs):
    """One replacement of ``edit_file``."""

    old: str = Field(
        min_length=1,
        description=(
            "The exact text to replace, copied from the file (whitespace included); include "
            "enough surrounding lines that it occurs only once."
        ),
    )
    new: str = Field(description="The text that replaces it.")
    replace_all: bool = Field(
        default=False, description="Replace every occurrence instead of exactly one."
    )


class EditFileArgs(ToolArgs):
    """Arguments of ``edit_file``."""

    path: str = Field(min_length=1, max_length=4096, description="Path relative to the workspace.")
    edits: list[TextReplacement] = Field(
        min_length=1,
        max_length=MAX_EDITS_PER_CALL,
        description="Replacements, applied in order to the file's current text.",
    )


def edit_tools(limits: ToolLimits) -> list[ToolDefinition[EditFileArgs]]:
    """``edit_file`` with the given limits."""

    async def prepare_edit(args: EditFileArgs, ctx: ToolCallContext) -> PreparedCall:
        roots = ctx.scope_roots()
        resolved = resolve_in_scope(args.path, roots, must_exist=True, for_write=True)
        if resolved.is_dir():
            raise ToolError(f"{args.path!r} is a directory")
        label = roots.display(resolved)
        refusal = ctx.host.write_refusal(creating=False)
        if refusal is not None:
            raise ToolError(f"{label} was not changed: {refusal}")
        old_text = await read_current_text(ctx, resolved, roots, limits.read_max_bytes)
        if old_text is None:
            raise ToolError(f"{label!r} does not exist; create it with write_file")
        # Matched and replaced with every line break a \n (a model copies \r\n text as \n),
        # then the file's own endings put back (issue 35).
        replacements = [
            Replacement(normalize_newlines(e.old), normalize_newlines(e.new), e.replace_all)
            for e in args.edits
        ]
        replaced = apply_replacements(normalize_newlines(old_text), replacements, label)
        new_text = keep_line_endings(old_text, replaced)
        size = len(new_text.encode("utf-8"))
        if size > limits.write_max_bytes:
            raise ToolError(f"the edited file would be {size:,} bytes, over the write limit")
        change = FileChange(resolved, old_text, new_text, file_diff(label, old_text, new_text))

        async def run() -> ToolRun:
            again = resolve_in_scope(args.path, ctx.scope_roots(), must_exist=True, for_write=True)
            if again != resolved:
                raise ToolDenied(f"{args.path!r} changed while waiting for approval")
            failed = await write_through_host(ctx, resolved, change, label)
            if failed is not None:
                return failed
            count = len(replacements)
            what = "1 replacement" if count == 1 else f"{count:,} replacements"
            return ToolRun(
                f"Edited {label}: {what} ({diff_stat_text(change.diff.stat)} lines).",
                diff=transcript_diff(change),
            )

        return PreparedCall(
            run=run,
            approval=file_change_approval(args.path, resolved, roots, ctx, change, label),
        )

    return [
        ToolDefinition(
            name="edit_file",
            description=(
                "Change part of an existing text file: each edit replaces the exact text "
                "`old` (copied from the file, which must occur exactly once unless replaceAll) "
                "with `new`, in order. Works on the editor's current (unsaved) text and arrives "
                "as one undoable editor edit of just those lines; the user may refuse it. "
                "Prefer it to write_file for changes to existing files."
            ),
            args_model=EditFileArgs,
            side_effect="fs_write",
            replay="side-effecting",
            prepare=prepare_edit,
        )
    ]
