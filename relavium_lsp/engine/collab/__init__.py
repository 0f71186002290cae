"""Sessions working with sessions: delegation to child sessions, handoff context, peer messages."""
