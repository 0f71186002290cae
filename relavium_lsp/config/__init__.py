"""Configuration loading (``docs/design.md`` §8): agent files, ``project.toml``, ``config.toml``.

Call :func:`load_workspace_config` for the merged view of a workspace and
:func:`load_agent_file` to validate one agent file. Every invalid file raises
:class:`~relavium_lsp.errors.ConfigError` naming the file, the line and the field.
"""

from __future__ import annotations

from relavium_lsp.config.agents import load_agent_file
from relavium_lsp.config.workspace import WorkspaceConfig, WorkspaceConfigs, load_workspace_config

__all__ = ["WorkspaceConfig", "WorkspaceConfigs", "load_agent_file", "load_workspace_config"]
