"""The precomputed resolver tables type plain scalars exactly as ruamel's resolvers do."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml.nodes import ScalarNode
from ruamel.yaml.resolver import VersionedResolver

from relavium_lsp.export.yaml_scalars import STR_TAG, looks_like_another_type, plain_tag
from tests.hypothesis_profiles import examples
from tests.unit.export.yaml_strategies import TRICKY_PIECES, text

RUAMEL = {version: VersionedResolver(version=version) for version in ((1, 1), (1, 2))}
SPELLINGS = [
    *("", "~", "null", "Null", "NULL", "true", "False", "yes", "No", "on", "OFF", "y", "n"),
    *("0", "-0", "+12", "012", "0o17", "0x1F", "0b101", "1_000", "190:20:30", "1.", ".5"),
    *("1e3", "-1.5E-3", ".inf", "-.Inf", ".NaN", "2024-01-01", "2024-01-01T10:00:00Z"),
    *("<<", "=", "!x", "&a", "*a", "-", "-x", ".", "..."),
]


def ruamel_tag(text: str, version: tuple[int, int]) -> str:
    return str(RUAMEL[version].resolve(ScalarNode, text, (True, False)))


@settings(max_examples=examples(500), deadline=None, suppress_health_check=list(HealthCheck))
@given(st.one_of(text, st.sampled_from(SPELLINGS), st.sampled_from(TRICKY_PIECES)))
def test_tables_agree_with_ruamel(value: str) -> None:
    for version in RUAMEL:
        assert plain_tag(value, version) == ruamel_tag(value, version)
    typed = any(ruamel_tag(value, version) != STR_TAG for version in RUAMEL)
    assert looks_like_another_type(value) == typed


def test_known_spellings() -> None:
    for value in SPELLINGS:
        for version in RUAMEL:
            assert plain_tag(value, version) == ruamel_tag(value, version), (value, version)
    assert plain_tag("yes") == STR_TAG and plain_tag("yes", (1, 1)) != STR_TAG
