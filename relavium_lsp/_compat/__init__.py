"""Every use of another library's private API, in one place (``docs/design.md`` §1.6).

One module per library. Nothing else in ``relavium_lsp`` touches another library's internals:
a test scans the package for it (``tests/unit/test_compat.py``), and another fails loudly,
naming the library, when a release changes what is relied on here. Each use says why no
public way exists.
"""
