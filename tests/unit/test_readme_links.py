"""The README's links work from a package index page too, where relative links break.

A package index shows README.md as the project's description: links into the repository
must be absolute, under the one canonical address pyproject.toml declares, and must name
files that exist; links within the page must name one of its headings.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text(encoding="utf-8")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6} (.+)$", re.MULTILINE)
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


def canonical_url() -> str:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    urls: dict[str, str] = project["urls"]
    assert urls["Homepage"] == urls["Source"]
    return urls["Source"]


def _anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _links() -> list[str]:
    return LINK.findall(FENCE.sub("", README))


def test_links_into_the_repository_are_absolute_and_name_existing_files() -> None:
    base = canonical_url()
    assert base == "https://github.com/relavium/relavium-lsp"
    into_repository = [link for link in _links() if not link.startswith(("https://", "#"))]
    assert into_repository == [], "relative links break on a package index page"
    missing = []
    for link in _links():
        if link.startswith(f"{base}/"):
            match = re.match(rf"{re.escape(base)}/(?:blob|tree|raw)/main/([^#]+)", link)
            if match is None or not (REPO / match.group(1)).exists():
                missing.append(link)
        elif "github.com/relavium/" in link:
            missing.append(link)  # the repository under another spelling
    assert missing == []


def test_links_within_the_page_name_its_headings() -> None:
    anchors = {_anchor(heading) for heading in HEADING.findall(FENCE.sub("", README))}
    dangling = [link for link in _links() if link.startswith("#") and link[1:] not in anchors]
    assert dangling == []


def test_the_screenshot_is_one_the_vscode_run_saves() -> None:
    images = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", README)
    assert images, "the README shows a screenshot of a real agent turn"
    for image in images:
        assert image.startswith(f"{canonical_url()}/raw/main/docs/screenshots/"), image
