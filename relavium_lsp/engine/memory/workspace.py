"""Workspace long-term memory (``docs/design.md`` §2.6).

One Markdown document per workspace root (its real path), stored encrypted in the history
database with a revision counter (``store/rows/workspace_memory.py``). Three things use it:

- **the agent**: a session reads it at its first turn in this process (and again after a
  resume) and gets it with its system prompt, inside clear delimiters, cut to a budget;
- **the user**: :class:`WorkspaceMemories` reads and writes it for the front ends
  (optimistic concurrency on the revision; text shaped like a secret is refused);
- **introspection**: a checkpoint's answer may end with a ``WORKSPACE MEMORY:`` part of
  ``## Title`` sections. It is a **proposal** (issue 35): stored apart, marked with its
  session and reason (``store/memory_proposals.py``), in no prompt, until the user accepts
  it — then merged in section by section (:func:`merge_sections`) — or rejects it. The
  model that wrote it read files and tool output a repository controls ("save this to
  workspace memory" in a README), so nothing it proposes reaches later sessions unseen.

Every new revision is announced to :meth:`WorkspaceMemories.watch` listeners: this process's
own writes at once, other processes' when the shared-log watcher sees their commits (§3.1).
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable
from dataclasses import dataclass

from relavium_lsp.contracts.memory import (
    WORKSPACE_MEMORY_MAX_CHARS,
    DecideMemoryProposalResult,
    MemoryProposal,
    MemorySource,
    ProposalDecision,
    ProposalStatus,
    WorkspaceMemory,
    WorkspaceMemoryChangedParams,
)
from relavium_lsp.contracts.session import AgentSessionRecord
from relavium_lsp.errors import InvalidInput
from relavium_lsp.secret_shapes import text_secret_reason
from relavium_lsp.store.async_store import AsyncSessionStore
from relavium_lsp.store.rows.memory_proposals import (
    ProposalRow,
    add_proposal,
    get_proposal,
    mark_decided,
    pending_proposals,
)
from relavium_lsp.store.rows.workspace_memory import (
    newest_revisions,
    read_memory,
    update_memory,
    write_memory,
)
from relavium_lsp.tools.text_edit import file_diff

_log = logging.getLogger(__name__)
MemoryListener = Callable[[WorkspaceMemoryChangedParams], None]

# At most this much of the document reaches a prompt, and at most an eighth of the model's
# context window (about four characters a token).
PROMPT_MAX_CHARS = 12_000
# At most this much of one checkpoint's proposal is merged.
PROPOSAL_MAX_CHARS = 4_000
PROMPT_START = (
    "=== Workspace memory: long-term notes about this workspace, kept across sessions. The "
    "user can read and edit them; treat them as background knowledge. ==="
)
PROMPT_END = "=== End of workspace memory ==="
# What the introspection pass is asked for, after its own DESCRIPTION / MEMORY parts.
INTROSPECTION_INSTRUCTIONS = (
    "\nWORKSPACE MEMORY:\n<optional: durable facts about this workspace that later sessions "
    "should know (conventions, architecture, commands, the user's preferences), as '## Title' "
    "sections; a section replaces the one with the same title, a new title is added, a body "
    "of (remove) deletes it; write (none) when nothing should change. Never secrets.>"
)
_PROPOSAL = re.compile(r"(?:^|\n)[ \t]*WORKSPACE MEMORY:[ \t]*\n?", re.IGNORECASE)
_HEADING = re.compile(r"^##[ \t]+(?P<title>.+?)[ \t]*#*[ \t]*$")
_NOTES = "Notes"
_REMOVE = frozenset({"(remove)", "(delete)"})


def workspace_key(working_dir: str) -> str:
    """The identity of a workspace: its root folder's real path."""
    return os.path.realpath(working_dir)


def refuse_unstorable(text: str) -> None:
    """Raise :class:`InvalidInput` for text the memory must not hold (too long, a secret)."""
    if len(text) > WORKSPACE_MEMORY_MAX_CHARS:
        raise InvalidInput(
            f"the workspace memory is {len(text):,} characters; at most "
            f"{WORKSPACE_MEMORY_MAX_CHARS:,} are kept — shorten it"
        )
    reason = text_secret_reason(text)
    if reason is not None:
        raise InvalidInput(
            f"the workspace memory was refused because {reason}; it is given to every "
            "session's model, so it never holds secrets — keep keys in the keychain or the "
            "environment (relavium-lsp keys set)"
        )


def prompt_block(text: str, context_window: int) -> str:
    """The memory as the system prompt carries it: delimited, cut to the budget ('' if none)."""
    shown = text.strip()
    if not shown:
        return ""
    budget = max(1_000, min(PROMPT_MAX_CHARS, context_window * 4 // 8))
    if len(shown) > budget:
        head = shown[:budget]
        cut = head.rsplit("\n", 1)[0] if "\n" in head else head
        hidden = len(shown) - len(cut)
        shown = f"{cut}\n[… workspace memory truncated: {hidden:,} more characters not shown]"
    return f"{PROMPT_START}\n{shown}\n{PROMPT_END}"


@dataclass(frozen=True)
class Section:
    """A ``## Title`` section of the document (``title`` None: the text before the first)."""

    title: str | None
    body: str


def split_sections(text: str) -> list[Section]:
    """The document's sections in order; headings are ``## `` lines outside code fences."""
    sections: list[Section] = []
    title: str | None = None
    lines: list[str] = []
    fenced = False  # a "## " line inside a ``` block is code, not a heading
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        match = None if fenced else _HEADING.match(line)
        if match is None:
            lines.append(line)
            continue
        if title is not None or "\n".join(lines).strip():
            sections.append(Section(title, "\n".join(lines).strip("\n")))
        title, lines = match.group("title").strip(), []
    if title is not None or "\n".join(lines).strip():
        sections.append(Section(title, "\n".join(lines).strip("\n")))
    return sections


def join_sections(sections: list[Section]) -> str:
    """The document the sections make (blank line between them, one newline at the end)."""
    parts = [
        section.body.strip("\n")
        if section.title is None
        else f"## {section.title}\n{section.body.strip(chr(10))}".rstrip("\n")
        for section in sections
    ]
    text = "\n\n".join(part for part in parts if part.strip())
    return f"{text}\n" if text else ""


def merge_sections(document: str, proposal: str) -> str:
    """``document`` with the proposal's sections merged in (see the module doc).

    A titled section replaces the one with the same title (case-insensitive) or is appended;
    a body of ``(remove)`` deletes it; text under no title is appended to ``## Notes``.
    """
    sections = split_sections(document)

    def find(title: str) -> int | None:
        wanted = title.casefold()
        for index, section in enumerate(sections):
            if section.title is not None and section.title.casefold() == wanted:
                return index
        return None

    for update in split_sections(proposal):
        body = update.body.strip("\n")
        if update.title is None:
            index = find(_NOTES)
            if index is None:
                sections.append(Section(_NOTES, body))
            else:
                old = sections[index]
                sections[index] = Section(old.title, f"{old.body.rstrip()}\n{body}".strip("\n"))
            continue
        index = find(update.title)
        if body.strip().casefold() in _REMOVE:
            if index is not None:
                del sections[index]
        elif index is None:
            sections.append(Section(update.title, body))
        else:
            sections[index] = Section(sections[index].title, body)
    return join_sections(sections)


def split_proposal(answer: str) -> tuple[str, str | None]:
    """``(the answer without its WORKSPACE MEMORY part, the proposal or None)``."""
    match = _PROPOSAL.search(answer)
    if match is None:
        return answer, None
    rest, proposal = answer[: match.start()], answer[match.end() :].strip()
    if not proposal or proposal.casefold().strip(" .") in {"(none)", "none"}:
        return rest, None
    if len(proposal) > PROPOSAL_MAX_CHARS:
        head = proposal[:PROPOSAL_MAX_CHARS]
        proposal = head.rsplit("\n", 1)[0] if "\n" in head else head
    return rest, proposal


class WorkspaceMemories:
    """Reading, writing, merging and watching workspace memories for one engine."""

    def __init__(self, store: AsyncSessionStore) -> None:
        self._store = store
        self._listeners: list[MemoryListener] = []
        # The newest revision announced per workspace (None until someone watches).
        self._seen: dict[str, int] | None = None

    async def read(self, working_dir: str) -> WorkspaceMemory:
        """The workspace's document (revision 0 and no text when none was written)."""
        key = workspace_key(working_dir)
        return await self._store.run(lambda s: read_memory(s.connection, key))

    async def prompt_text(self, working_dir: str) -> str:
        """The text a session of ``working_dir`` is given (see :func:`prompt_block`)."""
        return (await self.read(working_dir)).text

    async def write(self, working_dir: str, text: str, *, base_revision: int) -> WorkspaceMemory:
        """The user's edit: stored if ``base_revision`` is still the newest (else a conflict)."""
        refuse_unstorable(text)
        key = workspace_key(working_dir)
        memory = await self._store.run(
            lambda s: write_memory(
                s.connection, key, text, base_revision=base_revision, source="user"
            )
        )
        self._announce(memory.workspace, memory.revision, "user")
        return memory

    async def propose(
        self, working_dir: str, proposal: str, *, session_id: str, reason: str
    ) -> str | None:
        """Keep an introspection pass's proposal for the user; its id, or None if refused.

        Refused (logged, never stored): a proposal holding a secret, or one that changes
        nothing in the document as it is now.
        """
        if text_secret_reason(proposal) is not None:
            _log.warning("an introspection memory update of %s looked like a secret", session_id)
            return None
        key = workspace_key(working_dir)
        current = (await self.read(working_dir)).text
        if merge_sections(current, proposal) == current:
            return None
        row = await self._store.run(
            lambda s: add_proposal(
                s.connection, key, proposal, session_id=session_id, reason=reason
            )
        )
        return row.id

    async def proposals(self, working_dir: str) -> list[MemoryProposal]:
        """The workspace's pending proposals, each with the diff accepting it would make."""
        key = workspace_key(working_dir)
        rows = await self._store.run(lambda s: pending_proposals(s.connection, key))
        current = (await self.read(working_dir)).text
        return [_shown(row, current) for row in rows]

    async def decide(
        self, proposal_id: str, decision: ProposalDecision
    ) -> DecideMemoryProposalResult:
        """The user's answer: accept merges the proposal into the document, reject drops it."""
        row = await self._store.run(lambda s: get_proposal(s.connection, proposal_id))
        if row is None:
            raise InvalidInput(f"there is no workspace-memory proposal {proposal_id!r}")
        if row.status != "pending":
            raise InvalidInput(f"the proposal {proposal_id!r} was {row.status} already")
        memory: WorkspaceMemory | None = None
        if decision == "accept":

            def change(document: str) -> str | None:
                merged = merge_sections(document, row.text)
                if len(merged) > WORKSPACE_MEMORY_MAX_CHARS:
                    raise InvalidInput(
                        f"accepting it would make the workspace memory longer than "
                        f"{WORKSPACE_MEMORY_MAX_CHARS:,} characters; edit the memory first"
                    )
                return merged

            memory = await self._store.run(
                lambda s: update_memory(
                    s.connection,
                    row.workspace,
                    change,
                    source="introspection",
                    session_id=row.session_id,
                )
            )
            if memory is not None:
                self._announce(memory.workspace, memory.revision, "introspection")
        status: ProposalStatus = "accepted" if decision == "accept" else "rejected"
        revision = memory.revision if memory is not None else None
        if not await self._store.run(
            lambda s: mark_decided(s.connection, proposal_id, status, revision)
        ):
            raise InvalidInput(f"the proposal {proposal_id!r} was decided meanwhile")
        decided = await self._store.run(lambda s: get_proposal(s.connection, proposal_id))
        assert decided is not None
        current = (await self.read(decided.workspace)).text if memory is None else memory.text
        return DecideMemoryProposalResult(proposal=_shown(decided, current), memory=memory)

    async def watch(self, listener: MemoryListener) -> Callable[[], None]:
        """Call ``listener`` for every new revision from now on; returns an unsubscribe."""
        if self._seen is None:
            newest = await self._store.run(lambda s: newest_revisions(s.connection))
            self._seen = {key: revision for key, (revision, _source) in newest.items()}
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    async def poll(self) -> None:
        """Announce revisions other processes committed (the watcher calls it on their commits)."""
        if self._seen is None or not self._listeners:
            return
        newest = await self._store.run(lambda s: newest_revisions(s.connection))
        for key, (revision, source) in sorted(newest.items()):
            self._announce(key, revision, source)

    def _announce(self, workspace: str, revision: int, source: MemorySource) -> None:
        if self._seen is None or self._seen.get(workspace, 0) >= revision:
            return
        self._seen[workspace] = revision
        change = WorkspaceMemoryChangedParams(workspace=workspace, revision=revision, source=source)
        for listener in list(self._listeners):
            try:
                listener(change)
            except Exception:
                _log.exception("a workspace-memory listener failed")


async def introspection_context(memories: WorkspaceMemories | None, working_dir: str) -> str:
    """What an introspection pass is told about the workspace memory (its current text)."""
    if memories is None:
        return ""
    text = (await memories.read(working_dir)).text.strip()
    if len(text) > PROMPT_MAX_CHARS:
        text = text[:PROMPT_MAX_CHARS] + "\n[… truncated]"
    return f"\n\nThe workspace memory now:\n{text or '(empty)'}"


async def keep_proposal(
    memories: WorkspaceMemories | None,
    working_dir: str,
    proposal: str | None,
    *,
    session_id: str,
    reason: str,
) -> str | None:
    """Keep a checkpoint's proposal for the user; its id, or None when there is none."""
    if memories is None or proposal is None:
        return None
    return await memories.propose(working_dir, proposal, session_id=session_id, reason=reason)


def _shown(row: ProposalRow, current: str) -> MemoryProposal:
    """A stored proposal as the wire shows it; pending ones with their diff against now."""
    diff = None
    if row.status == "pending":
        merged = merge_sections(current, row.text)
        diff = file_diff("Workspace Memory.md", current or None, merged)
    return MemoryProposal(
        id=row.id,
        workspace=row.workspace,
        session_id=row.session_id,
        reason=row.reason,
        status=row.status,
        created_at=row.created_at,
        text=row.text,
        diff=diff,
    )


async def prompt_memory(memories: WorkspaceMemories | None, record: AgentSessionRecord) -> str:
    """The memory text a session's turns are given ('' without a memory store)."""
    if memories is None:
        return ""
    return await memories.prompt_text(record.context.working_dir)
