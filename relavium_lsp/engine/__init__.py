"""The session engine: sessions, turns, the event bus, compaction and the cost governor.

Outer layers (the LSP server, ACP mode, the CLI) use only :mod:`relavium_lsp.engine.api` —
:func:`~relavium_lsp.engine.api.open_engine` and the :class:`~relavium_lsp.engine.api.Engine`
it returns. Everything else here is the engine's own, grouped by concept (``docs/design.md``
§1.2):

- ``sessions/`` — the sessions this process serves, one session's lifecycle, leases,
  snapshots, model choice;
- ``turn/`` — one turn's fixed inputs (planning, prompt), the runner (streaming and the tool
  loop), its context window, priced model calls, the cost governor, compaction;
- ``events/`` — the bus that numbers, persists and delivers events; the cross-process watch;
- ``collab/`` — delegation and peer messages between sessions;
- ``memory/`` — workspace memory and introspection;
- ``history/`` — export, import, fork, replay, file checkpoints, rewind, turn review;
- ``scope`` — what a turn may use (:class:`~relavium_lsp.engine.scope.SessionScope`);
  ``waiting`` — commits awaited to their end, timers; ``model_setup`` — setting up a model.
"""
