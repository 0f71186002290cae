"""What the agent may touch, and how the user stays in control (``docs/design.md`` §6).

- ``base`` / ``host`` — the engine-facing contract (dispatcher, call context, editor host).
- ``registry`` — :class:`ToolRegistry` (the dispatcher) and ``default_registry()``.
- ``definition`` — what a tool is: arguments model, side-effect and replay classes, limits.
- ``approval`` — the one approval gate; ``bounding`` — result caps and event sanitizing.
- ``jail`` — the one path check; ``command_policy`` — the ``run_command`` allowlist;
  ``netguard`` — the SSRF guard; ``runner`` — bounded, shell-free child processes.
- Built-ins: ``fs`` (read/write/list), ``search`` (+ ``search_worker``), ``process``,
  ``git``, ``http``, ``tool_output`` (``read_tool_output``).
"""
