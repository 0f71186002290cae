"""Server features: one module per concern, each exposing ``setup(server)``."""
