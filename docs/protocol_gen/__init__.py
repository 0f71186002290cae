"""The protocol generator: one walk over the contracts (:mod:`.shapes`), three renderers.

:mod:`.markdown` writes the reference (``docs/protocol.md``), :mod:`.typescript` the VS Code
client's ``protocol.ts`` and :mod:`.lua` the Neovim plugin's ``protocol.lua``. The tables of
what to walk (methods, extra types) live in ``docs/generate_protocol.py``, the entry point.
"""
