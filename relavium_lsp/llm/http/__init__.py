"""What every HTTP adapter shares: the call and its authorization, SSE, JSON, the stream guard."""
