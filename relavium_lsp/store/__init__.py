"""The encrypted history store (SPEC §7).

``keys`` finds the database key, ``db`` opens SQLCipher, ``migrations`` shapes the schema,
``sessions`` is the synchronous repository and ``async_store`` runs it off the event loop.
"""
