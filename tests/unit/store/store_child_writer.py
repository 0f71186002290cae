"""A writer process for the multi-process store tests (run as a script, by path).

Usage: store_child_writer.py DB SHARED_SESSION OWN_SESSION COUNT PAYLOAD_CHARS
(``-`` skips a session; COUNT 0 writes until killed). The key comes from RELAVIUM_DB_KEY.
Prints ``ready``, waits for a line on stdin, then one line per commit:
``m <session> <sequence>`` for a message and ``e <session> <seq> <seq> …`` for an event batch.
A line is printed only after its transaction committed.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from relavium_lsp.contracts.content import TextPart
from relavium_lsp.contracts.events import AgentToken
from relavium_lsp.store.db.keys import resolve_db_key
from relavium_lsp.store.sessions import SessionStore


def main() -> int:
    db, shared, own, count, payload_chars = sys.argv[1:6]
    path = Path(db)
    store = SessionStore.open(path, resolve_db_key(path.parent))
    filler = "x" * int(payload_chars)
    print("ready", flush=True)
    sys.stdin.readline()
    iteration = 0
    while int(count) == 0 or iteration < int(count):
        for session_id in (shared, own):
            if session_id == "-":
                continue
            body = f"pid {os.getpid()} message {iteration} {filler}"
            message = store.append_message(session_id, "user", [TextPart(text=body)])
            print(f"m {session_id} {message.sequence_number}", flush=True)
        if shared != "-" and iteration % 10 == 0:
            batch = [AgentToken(token=f"{iteration}-{n}", model="m") for n in range(3)]
            events = store.append_events(shared, batch)
            print(f"e {shared} " + " ".join(str(e.sequence_number) for e in events), flush=True)
        iteration += 1
    store.close()
    print("done", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
