"""One turn: its inputs, the runner, its context window, priced model calls, cost, compaction."""
