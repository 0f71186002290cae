"""Base classes for every contract.

Two families exist because two audiences read them:

- :class:`WireModel` — JSON that crosses a process boundary (LSP params/results, events,
  stored rows). camelCase on the wire, snake_case in Python, unknown fields rejected.
- :class:`AuthoredModel` — files a person writes (``*.agent.yaml``, ``*.toml``). Keys are
  written exactly as the model names them (snake_case) and unknown keys are errors.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


def compact_json(value: Any) -> str:
    """JSON without spaces, non-ASCII text kept readable: stored columns and tool arguments."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class WireModel(BaseModel):
    """A JSON contract with camelCase aliases that rejects unknown fields."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        extra="forbid",
    )

    def to_wire(self) -> dict[str, Any]:
        """Dump as the camelCase JSON object clients read (``None`` fields omitted)."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


class AuthoredModel(BaseModel):
    """A human-authored configuration block: snake_case keys, unknown keys are errors."""

    model_config = ConfigDict(extra="forbid")
