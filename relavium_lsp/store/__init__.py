"""The encrypted history store (``docs/design.md`` §7).

``keys`` finds the database key, ``db`` opens SQLCipher, ``migrations`` shapes the schema,
``sessions`` is the synchronous repository (with ``messages``, ``listing``, ``transfer`` and
``models``) and ``async_store`` runs it off the event loop; ``media`` keeps attachment bytes,
content-addressed, next to the database. Only the engine writes through it.
"""
