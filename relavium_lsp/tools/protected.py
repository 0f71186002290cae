"""Protected files: writes that always ask, whatever the approval mode (issue 16).

Some files in a workspace are not content but control: our own configuration (an agent file
or ``project.toml`` can widen what the agent may do), editor and task configuration
(``.vscode/settings.json`` can choose the command the extension starts), direnv's ``.envrc``
(run by the shell on ``cd``), git metadata files, CI workflows and hooks (run on the next push
or commit). An agent in ``auto_edits`` or ``never_ask`` mode must not change them silently, so
a write to one of them asks every time, and "always allow" is not remembered for it.

Matching: a pattern is a glob (``*`` also matches ``/``) tested against the path's trailing
parts — ``.vscode/*`` protects ``.vscode/settings.json`` at the workspace root and in every
nested project. Users add patterns with ``[chat].protected_paths`` (a project file may add
patterns too: protecting more is never looser).
"""

from __future__ import annotations

from collections.abc import Iterable
from fnmatch import fnmatchcase
from pathlib import PurePath

BUILTIN_PROTECTED_PATTERNS: tuple[str, ...] = (
    # relavium-lsp's own configuration (agents, project.toml, MCP servers)
    ".relavium/*",
    # editor, workspace and task configuration
    ".vscode/*",
    "*.code-workspace",
    ".idea/*",
    ".zed/*",
    ".helix/*",
    ".nvim.lua",
    ".nvimrc",
    ".exrc",
    ".dir-locals.el",
    ".devcontainer/*",
    # environments run by the shell
    ".envrc",
    # git metadata files
    ".git/*",
    ".gitmodules",
    ".gitattributes",
    # CI workflows
    ".github/workflows/*",
    ".github/actions/*",
    ".gitlab-ci.yml",
    ".circleci/*",
    ".travis.yml",
    "azure-pipelines.yml",
    ".buildkite/*",
    "Jenkinsfile",
    # hooks
    ".githooks/*",
    ".husky/*",
    ".pre-commit-config.yaml",
    "lefthook.yml",
)


def protected_pattern(path: PurePath, extra: Iterable[str] = ()) -> str | None:
    """The first protected pattern ``path`` matches (built-in, then ``extra``), or None."""
    parts = [part for part in path.parts if part not in ("/", "\\")]
    tails = ["/".join(parts[index:]) for index in range(len(parts))]
    for pattern in (*BUILTIN_PROTECTED_PATTERNS, *extra):
        cleaned = pattern.strip().strip("/")
        # Case-folded: on a case-insensitive file system ``.VSCode/`` is ``.vscode/``.
        if cleaned and any(fnmatchcase(tail.lower(), cleaned.lower()) for tail in tails):
            return pattern
    return None
