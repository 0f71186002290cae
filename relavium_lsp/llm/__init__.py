"""The LLM seam, provider adapters, cassettes, fallback and pricing."""
