"""The session engine: sessions, turns, the event bus, compaction and the cost governor.

Outer layers (the LSP server, ACP mode, the CLI) use only :mod:`relavium_lsp.engine.api` —
:func:`~relavium_lsp.engine.api.open_engine` and the :class:`~relavium_lsp.engine.api.Engine`
it returns. Everything else here is the engine's own (``docs/design.md`` §1):

- ``live`` — the sessions this process serves (load once, recover a crashed turn);
- ``session`` — one live session's lifecycle and the rollback rules of a settled turn;
- ``scope`` — what a turn may use (:class:`~relavium_lsp.engine.scope.SessionScope`: store,
  media, tools, editor host, ``emit``, ``ask_user``, ``set_status``); ``snapshot`` — a
  session's state as a frozen value;
- ``planning`` (+ ``prompt``) — a turn's fixed inputs; ``turn`` — streaming and the tool loop;
- ``bus`` — stamping, persisting and delivering events; ``governor`` — spend and the cost
  cap; ``compaction`` — summarise or trim; ``exports`` / ``replay`` — export, import, fork
  and replay as engine operations.
"""
