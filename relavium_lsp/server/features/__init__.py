"""server/features."""
