"""The encrypted history store (``docs/design.md`` §7).

``db/`` is the SQLCipher file (its key, connection, migrations, damage); ``rows/`` holds the
SQL of each table family as free functions over one connection; ``sessions`` is the
synchronous repository built on them and ``async_store`` runs it off the event loop on one
worker thread (``store_thread``); ``models`` are the values it returns; ``media`` keeps
attachment bytes, content-addressed, next to the database; ``salvage`` recovers a damaged
file. Only the engine writes through it.
"""
