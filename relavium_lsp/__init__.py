"""relavium-lsp: multi-turn AI agent chat sessions inside the editor, over LSP."""

__version__ = "0.1.0"
