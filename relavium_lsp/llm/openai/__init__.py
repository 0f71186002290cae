"""The OpenAI-compatible Chat Completions adapter: the provider, its request body and stream."""
