"""The ACP agent: ``initialize``, the session lifecycle, ``session/prompt`` and cancellation.

One :class:`RelaviumAcpAgent` serves one client connection. It opens the engine (encrypted
store, providers, tools) in the background right after ``initialize`` — every later request
waits for it — and adapts requests to the engine's front door (:mod:`relavium_lsp.engine.api`)
exactly as the LSP features do, so both surfaces share sessions through the same database.

Cancellation follows ACP: ``session/cancel`` cancels the task driving the prompt, which
aborts the engine turn (rolled back, ``turn_completed{aborted}``); pending permission requests
end with it, the remaining updates are flushed, and the prompt answers
``stopReason: "cancelled"`` — never an error.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Callable
from typing import Any

from acp import PROTOCOL_VERSION, RequestError
from acp.schema import (
    AcpMcpServer,
    AuthenticateResponse,
    ClientCapabilities,
    CloseSessionResponse,
    DeleteSessionResponse,
    FileSystemCapabilities,
    ForkSessionResponse,
    HttpMcpServer,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpServerStdio,
    NewSessionResponse,
    PromptResponse,
    ResumeSessionResponse,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
    SseMcpServer,
)

from relavium_lsp.acp.capabilities import agent_capabilities, agent_info
from relavium_lsp.acp.client_profile import EARLY_CLIENT, client_profile
from relavium_lsp.acp.commands import (
    CommandHooks,
    SlashCommand,
    commands_update,
    parse_command,
    run_command,
)
from relavium_lsp.acp.connection import ClientPeer
from relavium_lsp.acp.context import (
    ListSessionsMeta,
    NewSessionMeta,
    absolute_path,
    broad_cwd_refusal,
    context_for,
    note_unsupported,
    relavium_meta,
)
from relavium_lsp.acp.dispatch import AcpToolDispatcher
from relavium_lsp.acp.errors import acp_edge
from relavium_lsp.acp.host import AcpEditorHost, ClientLink
from relavium_lsp.acp.mcp_session import SessionMcp
from relavium_lsp.acp.outbox import SessionUpdate, UpdateOutbox
from relavium_lsp.acp.prompt_content import PromptBlock, prompt_to_message
from relavium_lsp.acp.prompt_turns import PromptTurns
from relavium_lsp.acp.session_config import ApprovalChoices
from relavium_lsp.acp.session_views import SessionViews
from relavium_lsp.acp.settings import SessionSettings
from relavium_lsp.acp.tool_calls import CallBook
from relavium_lsp.acp.updates import (
    EventMapper,
    message_chunk,
    plan_update,
    prompt_response,
    session_info,
    title_from_prompt,
    title_update,
)
from relavium_lsp.contracts.content import ContentPart
from relavium_lsp.contracts.events import StampedEvent, TurnResult
from relavium_lsp.contracts.session import SessionSource
from relavium_lsp.engine.api import Engine, SessionSnapshot, open_engine
from relavium_lsp.errors import BroadWorkingDir
from relavium_lsp.mcp.source import new_mcp_source
from relavium_lsp.store.models import utc_timestamp
from relavium_lsp.tools.registry import default_registry

_log = logging.getLogger(__name__)
ACP_SOURCE = SessionSource(kind="acp")
LIST_PAGE_SIZE = 50
McpServer = HttpMcpServer | SseMcpServer | AcpMcpServer | McpServerStdio


class RelaviumAcpAgent:
    """An ACP ``Agent`` backed by the relavium engine (one per client connection)."""

    def __init__(self, *, history_path: str | None = None) -> None:
        self._history_path = history_path
        self._client: ClientPeer | None = None
        self._outbox: UpdateOutbox | None = None
        self._profile = EARLY_CLIENT
        self._book = CallBook()
        self._views = SessionViews()
        self._approvals = ApprovalChoices()
        self._settings = SessionSettings(self._approvals, self._views, self._require_outbox)
        self._mapper = EventMapper(self._book, self._views.context_window)
        self._runtime_task: asyncio.Task[Engine] | None = None
        self._runtime: Engine | None = None
        self._turns = PromptTurns()
        self._mcp = SessionMcp()
        self._unsubscribe: Callable[[], None] | None = None

    # -- connection ------------------------------------------------------------------------

    def on_connect(self, conn: ClientPeer) -> None:
        """Remember the client side of the connection (called by the connection)."""
        self._client = conn
        self._outbox = UpdateOutbox(self._send_update)

    async def _send_update(self, session_id: str, update: SessionUpdate) -> None:
        # The one way out for updates: nothing reaches a client that would reject it.
        if self._client is not None and self._profile.knows(update.session_update):
            await self._client.session_update(session_id=session_id, update=update)

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        """Answer with our capabilities and start opening the engine."""
        with acp_edge("initialize"):
            if self._client is None or self._outbox is None:
                raise RequestError.internal_error({"details": "no client connection"})
            fs = (client_capabilities.fs if client_capabilities else None) or (
                FileSystemCapabilities()
            )
            self._profile = client_profile(client_capabilities, client_info)
            if self._runtime_task is None:
                link = ClientLink(
                    client=self._client,
                    can_read=bool(fs.read_text_file),
                    can_write=bool(fs.write_text_file),
                    outbox=self._outbox,
                    book=self._book,
                    settle_events=self._settle_events,
                    cancel_prompt=self.cancel_prompt,
                )
                self._runtime_task = asyncio.create_task(self._open_runtime(link))
            _log.info(
                "ACP client %s (protocol %d; fs read=%s write=%s; later v1 updates: %s)",
                self._profile.name,
                protocol_version,
                bool(fs.read_text_file),
                bool(fs.write_text_file),
                self._profile.knows_later_updates,
            )
            return InitializeResponse(
                protocol_version=PROTOCOL_VERSION,
                agent_capabilities=agent_capabilities(),
                auth_methods=[],
                agent_info=agent_info(),
            )

    async def authenticate(self, method_id: str, **kwargs: Any) -> AuthenticateResponse | None:
        """No authentication methods are advertised; provider keys come from our config."""
        raise RequestError.invalid_params({"methodId": method_id, "reason": "no auth methods"})

    # -- sessions --------------------------------------------------------------------------

    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[McpServer] | None = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        """Open a session whose workspace (and scope-jail root) is ``cwd``."""
        with acp_edge("session/new"):
            runtime = await self._ready()
            options = relavium_meta(kwargs, NewSessionMeta)
            context = await context_for(cwd)
            note_unsupported(additional_directories)
            try:
                session = await runtime.start(
                    context=context,
                    agent_ref=options.agent_ref,
                    title=options.title,
                    source=ACP_SOURCE,
                    allow_broad_working_dir=options.allow_broad_working_dir,
                )
            except BroadWorkingDir as refused:
                raise broad_cwd_refusal(refused) from None
            self._mcp.bind(runtime, session.id, mcp_servers, context.working_dir)
            self._views.attach(session)
            _log.info("ACP session %s opened in %s", session.id, context.working_dir)
            modes, config = await self._settings.describe(runtime, session)
            # The client learns the session id from this answer: the commands follow it (the
            # SDK queues the answer before this callback can run).
            asyncio.get_running_loop().call_soon(self._announce_commands, session.id)
            return NewSessionResponse(
                session_id=session.id,
                modes=modes,
                config_options=list(config),
                field_meta={
                    "relavium": {
                        "agentRef": session.agent.id,
                        "model": session.model,
                        "gitRef": context.git_ref,
                    }
                },
            )

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: list[McpServer] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> LoadSessionResponse | None:
        """Resume a stored session and replay its whole visible history as updates."""
        with acp_edge("session/load"):
            runtime = await self._ready()
            absolute_path(cwd)
            note_unsupported(additional_directories)
            session = await self._resume(runtime, session_id)
            self._mcp.bind(runtime, session_id, mcp_servers, session.record.context.working_dir)
            outbox = self._require_outbox()
            for update in await self._views.replay(runtime, session):
                outbox.push(session_id, update)
            await self._announce_plan(runtime, session_id)
            self._announce_title(session)
            self._announce_commands(session_id)
            await outbox.flush()
            modes, config = await self._settings.describe(runtime, session)
            return LoadSessionResponse(modes=modes, config_options=list(config))

    async def resume_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[McpServer] | None = None,
        **kwargs: Any,
    ) -> ResumeSessionResponse:
        """Resume a stored session without replaying its history."""
        with acp_edge("session/resume"):
            runtime = await self._ready()
            absolute_path(cwd)
            note_unsupported(additional_directories)
            session = await self._resume(runtime, session_id)
            self._mcp.bind(runtime, session_id, mcp_servers, session.record.context.working_dir)
            await self._announce_plan(runtime, session_id)
            self._announce_title(session)
            self._announce_commands(session_id)
            await self._require_outbox().flush()
            modes, config = await self._settings.describe(runtime, session)
            return ResumeSessionResponse(modes=modes, config_options=list(config))

    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse | None:
        """End a session (``ended``; still resumable later), cancelling any running turn."""
        with acp_edge("session/close"):
            runtime = await self._ready()
            await runtime.cancel(session_id)
            await self._require_outbox().flush()
            self._views.detach(session_id)
            self._settings.forget(session_id)
            await self._mcp.release(runtime, session_id)
            return CloseSessionResponse()

    async def delete_session(self, session_id: str, **kwargs: Any) -> DeleteSessionResponse | None:
        """Delete a session from ``session/list`` (refused while its prompt runs)."""
        with acp_edge("session/delete"):
            runtime = await self._ready()
            await runtime.delete(session_id)
            self._views.detach(session_id)
            self._settings.forget(session_id)
            return DeleteSessionResponse()

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        """Sessions newest first (every surface's), optionally in ``cwd`` or matching a query."""
        with acp_edge("session/list"):
            runtime = await self._ready()
            options = relavium_meta(kwargs, ListSessionsMeta)
            workspace = absolute_path(cwd) if cwd is not None else None
            page = await runtime.list_sessions(
                workspace=workspace,
                status=options.status,
                query=options.query,
                limit=LIST_PAGE_SIZE,
                cursor=cursor,
            )
            sessions = [session_info(summary) for summary in page.sessions]
            return ListSessionsResponse(sessions=sessions, next_cursor=page.next_cursor)

    async def set_session_mode(
        self, session_id: str, mode_id: str, **kwargs: Any
    ) -> SetSessionModeResponse | None:
        """Pick the session's approval mode (its modes are the approval modes)."""
        with acp_edge("session/set_mode"):
            runtime = await self._ready()
            await self._settings.set_mode(runtime, session_id, mode_id)
            return SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse | None:
        """Set the ``model`` or the ``approval`` option; answers with every option."""
        with acp_edge("session/set_config_option"):
            runtime = await self._ready()
            options = await self._settings.set_option(runtime, session_id, config_id, value)
            return SetSessionConfigOptionResponse(config_options=list(options))

    async def fork_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[McpServer] | None = None,
        **kwargs: Any,
    ) -> ForkSessionResponse:
        """Forking is not advertised over ACP."""
        raise RequestError.method_not_found("session/fork")

    # -- prompting -------------------------------------------------------------------------

    async def prompt(
        self, session_id: str, prompt: list[PromptBlock], **kwargs: Any
    ) -> PromptResponse:
        """Run one turn; updates stream as ``session/update``, the stop reason is the answer."""
        with acp_edge("session/prompt"):
            runtime = await self._ready()
            command = parse_command(prompt)
            if command is not None:
                return await self._answer_command(runtime, session_id, command)
            text, attachments = prompt_to_message(prompt)
            picked = await self._mcp.expand(session_id, prompt)
            if picked is not None and picked.problem is not None:
                return await self._answer(session_id, picked.problem)
            text = picked.text if picked is not None and picked.text is not None else text
            # Everything from here on runs in the cancellable task, so a session/cancel
            # that overtakes the turn's start still ends the prompt as cancelled.
            task = self._turns.start(
                session_id, self._run_turn(runtime, session_id, text, attachments)
            )
            try:
                await asyncio.wait({task})
            except asyncio.CancelledError:
                # The connection is closing: the turn stops with the request.
                task.cancel()
                raise
            await self._settle_events(session_id)
            if await self._mcp.refresh(runtime, session_id):
                self._announce_commands(session_id)
            await self._require_outbox().flush()
            if task.cancelled():
                return PromptResponse(stop_reason="cancelled")
            return prompt_response(task.result())

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        """``session/cancel``: stop the running prompt turn of a session (if any)."""
        if self.cancel_prompt(session_id):
            _log.info("cancelling the prompt turn of session %s", session_id)

    def cancel_prompt(self, session_id: str) -> bool:
        """Cancel a session's running prompt once; ``True`` when one is (being) cancelled."""
        return self._turns.cancel(session_id)

    # -- extensions ------------------------------------------------------------------------

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """No extension methods."""
        raise RequestError.method_not_found(f"_{method}")

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        """Unknown extension notifications are ignored, as ACP asks."""
        _log.debug("ignoring extension notification _%s", method)

    # -- shutdown --------------------------------------------------------------------------

    async def close(self) -> None:
        """Stop running turns, flush updates and close the engine."""
        await self._turns.close()
        opening = self._runtime_task
        if opening is not None:
            if not opening.done():
                opening.cancel()
            # Collect the outcome (a failed open was already reported to every request).
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await opening
        if self._unsubscribe is not None:
            self._unsubscribe()
        if self._runtime is not None:
            await self._runtime.close()
            self._runtime = None
        if self._outbox is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._outbox.close(), timeout=5.0)

    # -- internals -------------------------------------------------------------------------

    async def _open_runtime(self, link: ClientLink) -> Engine:
        mcp = new_mcp_source()
        registry = default_registry(sources=[mcp])
        runtime = await open_engine(
            AcpEditorHost(link),
            history_path=self._history_path,
            tools=AcpToolDispatcher(registry, link, self._approvals),
            mcp=mcp,
            auto_introspection=True,
        )
        self._views.bind(registry)
        self._unsubscribe = await runtime.subscribe(self._on_event)
        self._runtime = runtime
        return runtime

    async def _ready(self) -> Engine:
        if self._runtime_task is None:
            raise RequestError.invalid_request({"details": "initialize must come first"})
        return await asyncio.shield(self._runtime_task)

    def _require_outbox(self) -> UpdateOutbox:
        if self._outbox is None:
            raise RequestError.internal_error({"details": "no client connection"})
        return self._outbox

    def _on_event(self, event: StampedEvent) -> None:
        if self._outbox is None or not self._views.is_attached(event.session_id):
            return
        for update in self._mapper.map(event):
            self._outbox.push(event.session_id, update)

    async def _settle_events(self, session_id: str) -> None:
        """Wait until events emitted so far for the session were mapped into the outbox."""
        if self._runtime is not None:
            await self._runtime.flush_events(session_id)

    async def _resume(self, runtime: Engine, session_id: str) -> SessionSnapshot:
        await runtime.resume(session_id)
        session = await runtime.session(session_id)
        self._views.attach(session)
        return session

    async def _announce_plan(self, runtime: Engine, session_id: str) -> None:
        """Send the session's current plan, if the agent made one (a resumed client has none)."""
        plan = await runtime.plan(session_id)
        if plan:
            self._require_outbox().push(session_id, plan_update(plan))

    def _announce_title(self, session: SessionSnapshot) -> None:
        record = session.record
        if record.title:
            self._require_outbox().push(session.id, title_update(record.title, record.updated_at))

    async def _answer_command(
        self, runtime: Engine, session_id: str, command: SlashCommand
    ) -> PromptResponse:
        await runtime.session(session_id)  # an unknown session is an error, as for any prompt
        hooks = CommandHooks(
            title_changed=self._push_title,
            model_changed=functools.partial(self._settings.model_changed, runtime),
        )
        answer = await run_command(runtime, session_id, command, hooks)
        return await self._answer(session_id, answer)

    async def _answer(self, session_id: str, text: str) -> PromptResponse:
        """Answer a prompt with a message instead of a turn (a command's result)."""
        outbox = self._require_outbox()
        outbox.push(session_id, message_chunk(text))
        await outbox.flush()
        return PromptResponse(stop_reason="end_turn")

    def _announce_commands(self, session_id: str) -> None:
        self._require_outbox().push(session_id, commands_update(self._mcp.commands(session_id)))

    def _push_title(self, session_id: str, title: str) -> None:
        self._require_outbox().push(session_id, title_update(title, utc_timestamp()))

    async def _run_turn(
        self,
        runtime: Engine,
        session_id: str,
        text: str,
        attachments: list[ContentPart],
    ) -> TurnResult:
        session = await runtime.session(session_id)
        self._views.attach(session)
        await self._title_from_first_prompt(runtime, session, text)
        return await runtime.send(session_id, text, attachments)

    async def _title_from_first_prompt(
        self, runtime: Engine, session: SessionSnapshot, text: str
    ) -> None:
        if session.record.title or session.record.turn_count:
            return
        title = title_from_prompt(text)
        if title is None:
            return
        await runtime.rename(session.id, title)
        self._push_title(session.id, title)
