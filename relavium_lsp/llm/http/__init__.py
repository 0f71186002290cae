"""What every HTTP adapter shares: the streaming call, SSE, JSON decoding, the stream guard."""
