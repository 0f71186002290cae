"""relavium-lsp: multi-turn AI agent chat sessions inside the editor, over LSP.

The package is layered (``docs/design.md`` §1, enforced by ``tests/unit/test_architecture.py``):
front ends (``server``, ``acp``, ``commands``, ``demo``) over the ``engine`` over its libraries
(``export``, ``tools``, ``llm``, ``config``, ``store``) over the ``contracts``.
"""

__version__ = "0.1.0"
