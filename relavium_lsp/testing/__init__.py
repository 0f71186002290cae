"""Test and benchmark harness shipped beside the package, never used by the server itself.

- :mod:`.loopback` — a real HTTP server on 127.0.0.1 that answers with scripted bytes;
- :mod:`.wire_scripts` — OpenAI and Anthropic streaming bodies built from simple scripts;
- :mod:`.prompt_cache` — Anthropic's prompt-cache billing rules, simulated for a loopback
  server, so a long session's cached and uncached input can be measured offline;
- :mod:`.record_demo` — re-records the bundled offline cassette through the real adapter.
"""
