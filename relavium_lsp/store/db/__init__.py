"""The SQLCipher database file: its key, connection, schema migrations and failure states."""
