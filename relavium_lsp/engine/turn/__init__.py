"""One turn: its fixed inputs (planning, prompt), the runner, the cost governor, compaction."""
