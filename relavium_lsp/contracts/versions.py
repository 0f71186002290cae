"""The two version numbers a client compares at ``initialize``.

``serverInfo.version`` is the package version (:data:`relavium_lsp.__version__`, the one number
the wheel, the sdist, the VSIX and the Neovim plugin share). ``capabilities.experimental
.relavium.protocolVersion`` is :data:`PROTOCOL_VERSION`: the version of the ``relavium/*`` wire
protocol. The protocol generator writes both into the clients' protocol modules
(``PACKAGE_VERSION`` and ``PROTOCOL_VERSION``), so a client compares the server's answer with
constants generated from the same source.

The rule for :data:`PROTOCOL_VERSION`: bump it (by one) on a breaking wire change — a method or
notification removed or renamed, a field removed, renamed or made required, a field's type or
meaning changed, a closed set losing a value. Additive changes (a new method, an optional
field, a new event type clients may ignore) keep it. A client that sees another protocol
version offers the matching server; a different package version alone is only worth a notice.

No imports: ``initialize`` reads this module, and must stay free of pydantic (cold start,
``relavium_lsp.server.app``).
"""

PROTOCOL_VERSION = 1
