"""Writing the model choice into the user's ``config.toml``, keeping everything else as it was.

The editor's model setup (``relavium/setupModel``) changes a file the user also edits by hand,
so it goes through a round-trip TOML library (tomlkit): comments, blank lines, key order and
quoting outside the keys it sets stay byte for byte. Only two things change:

- ``default_model``: where the file already sets it under ``[chat]`` (which wins over
  ``[preferences]``), there; otherwise under ``[preferences]``;
- the provider's ``[providers.<id>]`` table, created when missing, with the fields given.

The new text is validated as a :class:`~relavium_lsp.contracts.config.GlobalConfigFile`
before it replaces the old one (atomically, mode 0600 in a 0700 directory), so a setup never
leaves a file the server cannot read. A file that does not parse is refused, not rewritten.
API keys never come here.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path

import tomlkit
from pydantic import ValidationError
from tomlkit.exceptions import TOMLKitError
from tomlkit.items import Table

from relavium_lsp.atomic_write import atomic_write_text
from relavium_lsp.config.locate import config_error_from_validation, read_config_text
from relavium_lsp.config.toml_files import toml_key_lines
from relavium_lsp.contracts.config import GlobalConfigFile
from relavium_lsp.errors import ConfigError
from relavium_lsp.paths import ensure_private_dir

ProviderFields = Mapping[str, str | bool]


def write_model_choice(
    path: Path,
    *,
    default_model: str,
    provider_id: str,
    provider_fields: ProviderFields | None,
) -> None:
    """Set ``default_model`` (and ``[providers.<provider_id>]`` unless ``None``) in ``path``."""
    old_text = read_config_text(path) if path.exists() else ""
    try:
        document = tomlkit.parse(old_text)
    except TOMLKitError as error:
        line = getattr(error, "line", None)
        raise ConfigError(
            "is not valid TOML, so the setup did not change it; fix it first",
            file=str(path),
            line=line if isinstance(line, int) else None,
        ) from None
    _set_default_model(document, default_model)
    if provider_fields is not None:
        _set_provider(document, provider_id, provider_fields)
    new_text = tomlkit.dumps(document)
    _validate(path, new_text)
    ensure_private_dir(path.parent)
    atomic_write_text(path, new_text)


def _set_default_model(document: tomlkit.TOMLDocument, default_model: str) -> None:
    chat = document.get("chat")
    if isinstance(chat, Table) and "default_model" in chat:
        chat["default_model"] = default_model
        return
    preferences = document.get("preferences")
    if not isinstance(preferences, Table):
        preferences = tomlkit.table()
        document["preferences"] = preferences
    preferences["default_model"] = default_model


def _set_provider(document: tomlkit.TOMLDocument, provider_id: str, fields: ProviderFields) -> None:
    providers = document.get("providers")
    if not isinstance(providers, Table):
        providers = tomlkit.table(is_super_table=True)
        document["providers"] = providers
    entry = providers.get(provider_id)
    if not isinstance(entry, Table):
        entry = tomlkit.table()
        providers[provider_id] = entry
    for name, value in fields.items():
        entry[name] = value


def _validate(path: Path, text: str) -> None:
    """Refuse to write a file the server would reject (say, a key the user mistyped)."""
    try:
        GlobalConfigFile.model_validate(tomllib.loads(text), strict=True)
    except ValidationError as error:
        raise config_error_from_validation(error, path, toml_key_lines(text)) from None
