"""Pydantic contracts: the single source of truth for every shape relavium-lsp exchanges."""
