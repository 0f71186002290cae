"""Session events: the bus that numbers, persists and delivers them; the cross-process watch."""
