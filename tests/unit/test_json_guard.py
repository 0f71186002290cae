"""The decode boundary (``json_guard.py``): nesting counted before decoding, ids recovered."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from relavium_lsp.json_guard import (
    MAX_NESTING_DEPTH,
    RateLimitedLog,
    UntrustedJson,
    decode_message,
    nesting_depth,
    top_level_member,
)
from tests.hypothesis_profiles import examples

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.text(alphabet=st.sampled_from('ab[]{}"\\ :,\n\u00e9\ud7ff'), max_size=12),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.text(alphabet="[]{}\"'x\\", max_size=4), children, max_size=4)
    ),
    max_leaves=30,
)


def reference_depth(value: Any) -> int:
    """How deep a decoded value nests (the oracle)."""
    if isinstance(value, list):
        return 1 + max((reference_depth(item) for item in value), default=0)
    if isinstance(value, dict):
        return 1 + max((reference_depth(item) for item in value.values()), default=0)
    return 0


@settings(max_examples=examples(300), deadline=None)
@given(JSON_VALUES, st.booleans())
def test_the_scan_counts_what_the_decoder_would_nest(value: Any, ascii_only: bool) -> None:
    data = json.dumps(value, ensure_ascii=ascii_only).encode()
    assert nesting_depth(data) == reference_depth(value)


def test_deep_input_is_refused_before_the_decoder_recurses() -> None:
    with pytest.raises(UntrustedJson) as refused:
        decode_message(b"[" * 100_000 + b"]" * 100_000, max_bytes=10**7)
    assert refused.value.too_deep
    bound = b"[" * MAX_NESTING_DEPTH + b"]" * MAX_NESTING_DEPTH
    assert nesting_depth(bound) == MAX_NESTING_DEPTH
    decode_message(bound, max_bytes=10**7)  # at the bound is accepted


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b'{"a":1} trailing', "not JSON (Extra data)"),
        (b"\xff\xfe{}", "not UTF-8 text"),
        (b'{"n":' + b"9" * 5000 + b"}", "not JSON we accept (ValueError)"),
        (b"x" * 11, "larger than 10 bytes"),
    ],
)
def test_every_refusal_is_one_error_naming_the_problem(data: bytes, reason: str) -> None:
    with pytest.raises(UntrustedJson) as refused:
        decode_message(data, max_bytes=10 if len(data) == 11 else 10**6)
    assert refused.value.reason == reason
    assert not refused.value.too_deep


def test_the_id_of_a_message_too_deep_to_decode_is_found_at_the_top_level() -> None:
    deep = b"[" * 5_000 + b"]" * 5_000
    body = b'{"method":"id","params":{"id":3,"x":' + deep + b'},"id" : 42}'
    assert top_level_member(body, "id") == 42
    assert top_level_member(body, "method") == "id"
    assert top_level_member(b'{"id":"a\\"b","x":[' + deep + b"]}", "id") == 'a"b'
    assert top_level_member(b'{"id":[1],"x":' + deep + b"}", "id") is None
    assert top_level_member(b'{"id":1.5}', "id") is None
    assert top_level_member(b'[{"id":1}]', "id") is None


def test_a_flood_is_logged_a_bounded_number_of_times(caplog: pytest.LogCaptureFixture) -> None:
    now = [0.0]
    log = RateLimitedLog(
        logging.getLogger("test.flood"), burst=3, window_s=10, clock=lambda: now[0]
    )
    with caplog.at_level(logging.INFO, logger="test.flood"):
        for index in range(100):
            log.log(logging.INFO, "bad %d", index)
        now[0] = 11.0
        log.log(logging.INFO, "bad %d", 100)
    assert [record.getMessage() for record in caplog.records] == [
        "bad 0",
        "bad 1",
        "bad 2",
        "bad 100 (97 similar lines left out before this one)",
    ]
