"""The SQL of each table family, as free functions over one connection (used by the repository)."""
