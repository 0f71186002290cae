"""The Anthropic Messages adapter: the provider, its body with cache breakpoints, its stream."""
