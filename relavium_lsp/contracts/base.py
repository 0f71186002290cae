"""Base classes for every contract.

Two families exist because two audiences read them:

- :class:`WireModel` — JSON that crosses a process boundary (LSP params/results, events,
  stored rows). camelCase on the wire, snake_case in Python, unknown fields rejected.
- :class:`AuthoredModel` — files a person writes (``*.agent.yaml``, ``*.toml``). Keys are
  written exactly as the model names them (snake_case) and unknown keys are errors.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic.alias_generators import to_camel

M = TypeVar("M", bound=BaseModel)
# The largest integer the store holds (SQLite INTEGER is a signed 64-bit number).
MAX_STORED_INT = 2**63 - 1


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


def validate_request(model: type[M], raw: Any) -> M:
    """Validate a peer's params: strictly, and with every integer within what the store holds.

    Strict (issue 35): ``"yes"`` is not ``true`` and ``"5"`` is not ``5`` — a client that
    sends the wrong type gets ``InvalidParams`` naming the field, never a guess. Integers past
    64 bits (``afterSequence: 2**80``) are refused here, naming the field, instead of
    surfacing as an ``OverflowError`` from SQLite. A missing ``params`` is an empty object.
    """
    params = {} if raw is None else raw
    too_big = [(location, value) for location, value in _integers(params) if _oversized(value)]
    if too_big:
        raise ValidationError.from_exception_data(
            model.__name__,
            [
                {
                    "type": "less_than_equal" if value > 0 else "greater_than_equal",
                    "loc": location,
                    "input": value,
                    "ctx": {"le": MAX_STORED_INT} if value > 0 else {"ge": -MAX_STORED_INT - 1},
                }
                for location, value in too_big
            ],
        )
    return model.model_validate(params, strict=True)


def _oversized(value: int) -> bool:
    return not -MAX_STORED_INT - 1 <= value <= MAX_STORED_INT


def _integers(
    value: Any, location: tuple[str | int, ...] = ()
) -> Iterator[tuple[tuple[str | int, ...], int]]:
    """Every integer in decoded JSON with where it sits (bools are not integers here)."""
    if isinstance(value, bool):
        return
    if isinstance(value, int):
        yield location, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _integers(item, (*location, str(key)))
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from _integers(item, (*location, index))
