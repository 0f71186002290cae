"""Hypothesis profiles: deterministic in CI, quick while developing, wide when fuzzing.

The profile comes from ``HYPOTHESIS_PROFILE`` when set, else ``ci`` when the ``CI``
environment variable is set (``.ci/run`` sets it), else ``dev``:

- ``ci``: ``derandomize=True`` and no example database, so a landing run explores the same
  examples every time and can only go red on a real change;
- ``dev``: random seeds (the default Hypothesis behaviour), half the examples, so local runs
  keep finding new cases without slowing the edit loop;
- ``fuzz``: random seeds and ten times the examples; ``make fuzz`` picks a seed, prints it,
  and passes it with ``--hypothesis-seed`` so any failure can be replayed exactly.

Tests state their example counts as ``examples(n)``: ``n`` is the ``ci`` count, scaled for the
other profiles.
"""

from __future__ import annotations

import os

from hypothesis import settings

_SCALE = {"ci": 1.0, "dev": 0.5, "fuzz": 10.0}
MIN_EXAMPLES = 10

settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
settings.register_profile("dev", print_blob=True)
settings.register_profile("fuzz", print_blob=True)


def active_profile() -> str:
    """The profile this run uses."""
    chosen = os.environ.get("HYPOTHESIS_PROFILE")
    if chosen:
        if chosen not in _SCALE:
            raise ValueError(f"HYPOTHESIS_PROFILE={chosen!r}: expected one of {sorted(_SCALE)}")
        return chosen
    return "ci" if os.environ.get("CI") else "dev"


def examples(ci_count: int) -> int:
    """How many examples a property test runs under the active profile."""
    return max(MIN_EXAMPLES, round(ci_count * _SCALE[active_profile()]))


settings.load_profile(active_profile())
