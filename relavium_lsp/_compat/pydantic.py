"""pydantic internals we rely on, for want of a fast public way (see the package docstring)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)


# The instance slots of every pydantic model (``BaseModel.__slots__``), written through their
# descriptors: a frozen model refuses its own ``__setattr__``.
_SLOTS = ("__dict__", "__pydantic_fields_set__", "__pydantic_extra__", "__pydantic_private__")
_setters = [getattr(BaseModel.__dict__.get(slot), "__set__", None) for slot in _SLOTS]


def trusted_builder(cls: type[M], constants: dict[str, Any], field: str) -> Callable[[Any], M]:
    """A function making an instance of ``cls`` from the one value that varies, unchecked.

    For the per-delta path (``llm/seam.py: new_text_delta``), once per streamed token:
    validating a string known to be one costs twice this, and pydantic's public way to skip
    validation, ``model_construct``, is slower still (a generic loop over the fields). Every
    field but ``field`` (the last one) has its value in ``constants``; ``field`` is the one
    counted as set. The builder fills the four slots ``model_construct`` fills, sharing one
    "fields set" between every instance: pydantic only copies it, or adds to it on
    assignment, which a frozen model refuses. Should pydantic's slots change, the builder
    validates instead.
    """
    set_dict, set_fields, set_extra, set_private = _setters
    if set_dict is None or set_fields is None or set_extra is None or set_private is None:
        return lambda value: cls.model_validate({**constants, field: value})
    new = object.__new__
    fields_set = {field}
    copy_constants = constants.copy

    def build(value: Any) -> M:
        instance = new(cls)
        values = copy_constants()
        values[field] = value
        set_dict(instance, values)
        set_fields(instance, fields_set)
        set_extra(instance, None)
        set_private(instance, None)
        return instance

    return build
