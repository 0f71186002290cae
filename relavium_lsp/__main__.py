"""``python -m relavium_lsp`` runs the command-line interface."""

from relavium_lsp.cli import main

raise SystemExit(main())
