"""Pydantic contracts: the single source of truth for every shape relavium-lsp exchanges.

``content`` (message parts, in flight and durable), ``session`` (context, records, messages),
``events`` (event payloads, the stamped envelope, token usage, turn results), ``wire`` (the
``relavium/*`` params and results), ``agent``, ``config`` and ``workflow`` (authored files).
The bottom layer: it imports nothing else from relavium_lsp (``docs/design.md`` §1).
"""
