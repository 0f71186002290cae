"""The pure parts of workspace memory: sections, merging, proposals, the prompt block."""

from __future__ import annotations

import pytest

from relavium_lsp.engine.memory.workspace import (
    PROMPT_END,
    PROMPT_START,
    merge_sections,
    prompt_block,
    refuse_unstorable,
    split_proposal,
    split_sections,
)
from relavium_lsp.errors import InvalidInput
from relavium_lsp.secret_shapes import text_secret_reason

DOC = "Preamble line.\n\n## Build\n- make test\n\n## Style\n- ruff\n"


def test_sections_round_trip() -> None:
    sections = split_sections(DOC)
    assert [s.title for s in sections] == [None, "Build", "Style"]
    assert merge_sections(DOC, "") == DOC


def test_a_heading_inside_a_code_fence_is_code() -> None:
    doc = "## Shell\n```sh\n## not a heading\n```\n"
    assert [s.title for s in split_sections(doc)] == ["Shell"]
    assert merge_sections(doc, "## Other\nx") == doc + "\n## Other\nx\n"


def test_merge_replaces_appends_removes_and_collects_notes() -> None:
    merged = merge_sections(
        DOC, "## build\n- make unit\n\n## Style\n(remove)\n\n## Owners\n- Ana\n"
    )
    assert merged == "Preamble line.\n\n## Build\n- make unit\n\n## Owners\n- Ana\n"
    noted = merge_sections(merged, "- a loose fact")
    assert noted.endswith("## Notes\n- a loose fact\n")
    assert merge_sections(noted, "- another").endswith("## Notes\n- a loose fact\n- another\n")
    assert merge_sections("", "## A\nx") == "## A\nx\n"


def test_split_proposal() -> None:
    answer = "DESCRIPTION: d\nMEMORY:\n- m\nWORKSPACE MEMORY:\n## A\n- a\n"
    rest, proposal = split_proposal(answer)
    assert rest == "DESCRIPTION: d\nMEMORY:\n- m"
    assert proposal == "## A\n- a"
    assert split_proposal("DESCRIPTION: d\nMEMORY:\n- m\nWORKSPACE MEMORY:\n(none)")[1] is None
    assert split_proposal("DESCRIPTION: d\nMEMORY:\n- m")[1] is None
    long_rest, long_proposal = split_proposal("WORKSPACE MEMORY:\n" + "line\n" * 2_000)
    assert long_rest == "" and long_proposal is not None and len(long_proposal) <= 4_000


def test_prompt_block_is_delimited_and_bounded() -> None:
    assert prompt_block("   ", 100_000) == ""
    block = prompt_block("## A\n- a", 100_000)
    assert block.startswith(PROMPT_START) and block.endswith(PROMPT_END)
    huge = "\n".join(f"- fact {n}" for n in range(5_000))
    cut = prompt_block(huge, 100_000)
    assert len(cut) < 12_000 + 400
    assert "[… workspace memory truncated:" in cut and cut.endswith(PROMPT_END)
    # A small model gets at most an eighth of its window (about 4 characters a token).
    assert len(prompt_block(huge, 8_000)) < 4_000 + 400


@pytest.mark.parametrize(
    "text",
    [
        "key: sk-proj" + "Q7dfK29xLmP4vR8tZ1wY6nB3",
        "export TOKEN=ghp_" + "a1B2c3D4e5F6g7H8i9J0kLmNoPqRsT",
        "`AKIA" + "IOSFODNN7EXAMPLE1234`",
        "secret '" + "Zx9Qw3Er7Ty1Ui5Op2As8Df4Gh6Jk0Lz" + "'",
    ],
)
def test_secret_shaped_text_is_refused_without_echo(text: str) -> None:
    reason = text_secret_reason(f"## Notes\n{text}\n")
    assert reason is not None and "line 2" in reason
    with pytest.raises(InvalidInput) as refused:
        refuse_unstorable(text)
    assert text.split()[-1].strip("`'") not in refused.value.message


@pytest.mark.parametrize(
    "text",
    [
        "## Build\n- run `make test`; commit 3f2a9c1d9e8b7a6f5e4d3c2b1a0f9e8d7c6b5a4f",
        "uuid 123e4567-e89b-12d3-a456-426614174000, see relavium_lsp/engine/api.py",
        "Use TurnRunnerFactoryForStreamingProviders in tests.",
        "https://github.com/example/project/blob/main/README.md",
    ],
)
def test_ordinary_notes_pass(text: str) -> None:
    assert text_secret_reason(text) is None
    refuse_unstorable(text)


def test_size_cap() -> None:
    with pytest.raises(InvalidInput, match="32,000"):
        refuse_unstorable("x" * 32_001)
