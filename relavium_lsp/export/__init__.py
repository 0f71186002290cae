"""Export documents of sessions and the pure parts of import and replay (``docs/design.md`` §9).

No store and no events here: the engine (``relavium_lsp.engine.history.exports`` /
``.replay``) reads sessions, calls these functions and records what happened.

- :mod:`.documents` — an export document of a session, a saved scaffold recognised, a fork's row;
- :mod:`.turns` — how a transcript splits into logical turns;
- :mod:`.workflow_yaml` (+ :mod:`.yaml_io`) — the ``.relavium.yaml`` scaffold and its parser;
- :mod:`.jsonl` (+ :mod:`.jsonl_records`) — the ``relavium-session/1.0`` transcript;
- :mod:`.replay` (+ :mod:`.replay_cassettes`) — what a replay runs, against which recordings,
  and how it is compared;
- :mod:`.files` — writing an export into the workspace safely.
"""
