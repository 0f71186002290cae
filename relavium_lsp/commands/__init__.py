"""One module per ``relavium-lsp`` subcommand; each exposes ``register(subparsers)``.

``register`` adds its parser and sets ``handler`` (a function taking the parsed arguments and
returning an exit code) with ``parser.set_defaults(handler=...)``.
"""
