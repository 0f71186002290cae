"""``new_text_delta`` skips validation: its result must be a validated ``TextDelta``."""

from __future__ import annotations

import pydantic
import pytest
from hypothesis import given
from hypothesis import strategies as st

from relavium_lsp.llm.seam import TextDelta, new_text_delta


@given(st.text())
def test_the_fast_delta_equals_a_validated_one_in_state(text: str) -> None:
    fast, validated = new_text_delta(text), TextDelta(text=text)
    assert fast == validated
    assert type(fast) is TextDelta
    assert fast.__dict__ == validated.__dict__
    assert list(fast.__dict__) == list(validated.__dict__)  # field order: dumps are identical
    assert fast.model_fields_set == validated.model_fields_set
    assert fast.__pydantic_extra__ == validated.__pydantic_extra__
    assert fast.__pydantic_private__ == validated.__pydantic_private__
    assert fast.model_dump_json() == validated.model_dump_json()
    assert hash(fast) == hash(validated)


def test_the_fast_delta_behaves_like_a_validated_one() -> None:
    fast = new_text_delta("hello")
    with pytest.raises(pydantic.ValidationError):
        fast.text = "changed"  # type: ignore[misc]  # frozen, like every seam value
    assert fast.model_copy(update={"text": "other"}).text == "other"
    assert TextDelta.model_validate(fast.model_dump()) == fast
    # fields set: a copy made from it keeps the same "explicitly set" view as a validated one
    assert fast.model_dump(exclude_unset=True) == TextDelta(text="hello").model_dump(
        exclude_unset=True
    )


def test_fast_deltas_share_a_fields_set_that_nothing_changes() -> None:
    first, second = new_text_delta("a"), new_text_delta("b")
    assert first.model_fields_set is second.model_fields_set  # shared: one less set per delta
    copied = first.model_copy(update={"text": "c"})
    assert copied.model_fields_set == {"text"}
    assert copied.model_fields_set is not first.model_fields_set  # pydantic copies it
    assert TextDelta.model_construct(text="d").model_fields_set == {"text"}
    assert first.model_copy().model_dump(exclude_unset=True) == {"text": "a"}
    assert second.model_fields_set == {"text"}  # still, after all of the above
