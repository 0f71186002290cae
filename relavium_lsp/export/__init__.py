"""Export, import, replay and fork of sessions (SPEC §9).

- :mod:`.turns` — how a transcript splits into logical turns;
- :mod:`.workflow_yaml` (+ :mod:`.yaml_io`) — the ``.relavium.yaml`` scaffold and its parser;
- :mod:`.jsonl` (+ :mod:`.jsonl_records`) — the ``relavium-session/1.0`` transcript;
- :mod:`.replay` (+ :mod:`.replay_cassettes`) — re-running a session against its recordings;
- :mod:`.files` — writing an export into the workspace safely;
- :mod:`.service` — the operations the LSP server, the CLI and ACP call.
"""
