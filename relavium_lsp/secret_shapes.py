"""Telling a secret from an ordinary value: the one detector (issues 16 and 35).

Whatever we refuse to store or show because it holds a secret — ``startSession``
``context.variables``, the workspace memory (written by the user or merged by an automatic
pass), a model set-up's values, the diff a file tool shows in the transcript, an MCP server's
stderr — goes through this module, and only this one:

1. **Invisible characters go first** (:func:`visible`): zero-width and bidirectional
   controls and other format characters are removed and the text NFKC-normalised, so
   ``sk-proj-…`` split by a zero-width space, or spelled in fullwidth letters, is still seen.
2. **Known secrets**: a registered value (a loaded API key, the database key) or the value
   of a ``*_API_KEY`` / ``*_TOKEN`` / ``*_SECRET`` / ``*_PASSWORD`` / ``RELAVIUM_DB_KEY``
   environment variable.
3. **A maintained detector's rules**: the regular-expression plugins of Yelp's
   ``detect-secrets`` — private-key blocks (OpenSSH, RSA, EC, PGP…), JSON Web Tokens,
   credentials in URLs (``https://user:token@host``), GitHub, GitLab, AWS, Slack, Stripe,
   OpenAI (legacy format), PyPI, npm, SendGrid, Twilio, Mailchimp, Discord, Telegram,
   Artifactory, Azure storage and Square keys. Its keyword and entropy plugins are left out
   (they are made for source code and flag prose). The package is never imported at
   start-up: it takes a few tenths of a second (its plugins' base module brings
   ``requests``), so the engine loads :func:`detector_rules` on a worker thread when the
   first session is served, ahead of the first check.
4. **What that detector lacks**: the key prefixes of the model providers we talk to
   (``sk-`` and ``sk-proj-``/``sk-ant-`` among them, ``AIza``, ``hf_``, ``xai-``,
   ``github_pat_``…), found anywhere in a word, and long random-looking tokens (hex past a
   commit hash, base62/64 noise that changes character class like random text).

A reason never contains the value. Ordinary identifiers pass: UUIDs, commit hashes, words,
paths, URLs without credentials and sentences.
"""

from __future__ import annotations

import functools
import importlib
import math
import os
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterator
from itertools import pairwise

from relavium_lsp.log_secrets import MIN_SECRET_LENGTH, contains_registered_secret, redact

REDACTED = "[redacted]"
# Environment variables that hold secrets by name (provider keys, tokens, the database key).
_SECRET_ENV_NAME = re.compile(r"(_API_KEY|_TOKEN|_SECRET|_PASSWORD|^RELAVIUM_DB_KEY)$")
# Key prefixes ``detect-secrets`` has no rule for: OpenAI/Anthropic/DeepSeek (sk-, any
# project format), Stripe restricted, Groq, xAI, GitHub fine-grained, Google API keys,
# Hugging Face, Perplexity, Replicate, NVIDIA. Found anywhere in a word (a URL, a quote).
_KEY_PREFIX = re.compile(
    r"(?<![A-Za-z0-9])(sk-|rk_live_|gsk_|xai-|github_pat_|AIza|hf_|pplx-|r8_|nvapi-|"
    r"sk_live_|sk_test_|ghp_|gho_|ghu_|ghs_|ghr_|glpat-|xox[abprs]-|AKIA|ASIA)"
    r"[A-Za-z0-9_\-]{16,}"
)
# The detect-secrets plugins used (module.Class), all regular-expression based.
DETECTOR_RULES = (
    "private_key.PrivateKeyDetector",
    "jwt.JwtTokenDetector",
    "basic_auth.BasicAuthDetector",
    "github_token.GitHubTokenDetector",
    "gitlab_token.GitLabTokenDetector",
    "aws.AWSKeyDetector",
    "openai.OpenAIDetector",
    "slack.SlackDetector",
    "stripe.StripeDetector",
    "pypi_token.PypiTokenDetector",
    "npm.NpmDetector",
    "sendgrid.SendGridDetector",
    "twilio.TwilioKeyDetector",
    "mailchimp.MailchimpDetector",
    "discord.DiscordBotTokenDetector",
    "telegram_token.TelegramBotTokenDetector",
    "artifactory.ArtifactoryDetector",
    "azure_storage_key.AzureStorageKeyDetector",
    "square_oauth.SquareOAuthDetector",
)
_PRIVATE_KEY_BLOCK = re.compile(
    r"-----BEGIN[ A-Z0-9]*PRIVATE KEY( BLOCK)?-----.*?"
    r"(-----END[ A-Z0-9]*PRIVATE KEY( BLOCK)?-----|\Z)",
    re.DOTALL,
)
_TOKEN_CHARS = re.compile(r"^[A-Za-z0-9_\-+/=]+$")
_UUID = re.compile(r"^[0-9a-fA-F]{8}-([0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$")
_HEX = re.compile(r"^[0-9a-fA-F]+$")
_SEPARATORS = re.compile(r"[_\-+/=]")
# Free text (a note, a Markdown document) wraps values in quotes, backticks, ``KEY=…`` and
# ``key: …``: split on those too, but not on ``-`` or ``_`` (key prefixes contain them).
_TEXT_SEPARATORS = re.compile(r"[\s`'\"=:,;()\[\]{}<>|*@]+")
MIN_RANDOM_CORE = 24
MIN_CLASS_CHANGES = 0.5
LONG_TOKEN_CHARS = 32
MIN_TOKEN_ENTROPY_BITS = 3.5  # per character; English-ish identifiers stay below it
MAX_HEX_IDENTIFIER = 40  # a git commit hash; the database key is 64 hex digits

Finder = Callable[[str], Iterator[str]]


def visible(text: str) -> str:
    """``text`` as a reader sees it: format characters (zero-width, bidi) out, NFKC."""
    if text.isascii():
        return text
    kept = "".join(ch for ch in text if unicodedata.category(ch) != "Cf")
    return unicodedata.normalize("NFKC", kept)


@functools.cache
def detector_rules() -> tuple[Finder, ...]:
    """The ``detect-secrets`` plugins' finders, imported once, on first use."""
    finders: list[Finder] = []
    for rule in DETECTOR_RULES:
        module, name = rule.split(".")
        plugin = getattr(importlib.import_module(f"detect_secrets.plugins.{module}"), name)()
        finders.append(plugin.analyze_string)
    return tuple(finders)


def _rule_matches(text: str) -> Iterator[str]:
    """Every secret a rule finds in ``text`` (already made visible)."""
    for finder in detector_rules():
        yield from (found for found in finder(text) if found)
    yield from (found.group() for found in _KEY_PREFIX.finditer(text))


def secret_reason(value: str) -> str | None:
    """Why ``value`` must not be stored as plain context, or None; never quotes the value."""
    shown = visible(value)
    if _known_secret(value) or _known_secret(shown):
        return "it is a configured secret (an API key or the database key)"
    if next(_rule_matches(shown), None) is not None:
        return "it looks like an API key, token or credential"
    if any(_high_entropy_token(token) for token in shown.split()):
        return "it looks like a key or token (a long random string)"
    return None


def text_secret_reason(text: str) -> str | None:
    """Why free text must not be stored (naming the line), or None; never quotes the value."""
    shown = visible(text)
    if _known_secret(text) or _known_secret(shown):
        return "it holds a configured secret (an API key or the database key)"
    for number, line in enumerate(shown.splitlines(), start=1):
        if next(_rule_matches(line), None) is not None:
            return f"line {number} looks like it holds an API key, token or credential"
        if any(_high_entropy_token(token) for token in _TEXT_SEPARATORS.split(line)):
            return f"line {number} looks like it holds a key or token (a long random string)"
    return None


def redact_secrets(text: str) -> str:
    """``text`` with every secret this module finds replaced by ``[redacted]``.

    Registered secrets first (:func:`~relavium_lsp.log_secrets.redact`), then what the rules
    and the token check find, on each line as a reader sees it (a line holding invisible
    characters is replaced by its visible form). Private-key blocks go whole.
    """
    text = _PRIVATE_KEY_BLOCK.sub(REDACTED, redact(text))
    lines = text.splitlines(keepends=True)
    for index, line in enumerate(lines):
        shown = visible(line)
        found = {*_rule_matches(shown)}
        found.update(t for t in _TEXT_SEPARATORS.split(shown) if _high_entropy_token(t))
        for secret in sorted(found, key=len, reverse=True):
            shown = shown.replace(secret, REDACTED)
        if found:
            lines[index] = shown
    return "".join(lines)


def _known_secret(value: str) -> bool:
    if contains_registered_secret(value):
        return True
    for name, secret in os.environ.items():
        secret = secret.strip()
        if len(secret) >= MIN_SECRET_LENGTH and _SECRET_ENV_NAME.search(name) and secret in value:
            return True
    return False


def _high_entropy_token(token: str) -> bool:
    """A long random-looking token: hex past a commit hash, or base62/64 noise.

    Random base62 changes character class (upper, lower, digit) between neighbours about
    60 % of the time; a CamelCase or snake_case identifier, however long, far less.
    """
    if len(token) < LONG_TOKEN_CHARS or not _TOKEN_CHARS.match(token) or _UUID.match(token):
        return False
    if _HEX.match(token):
        return len(token) > MAX_HEX_IDENTIFIER
    core = _SEPARATORS.sub("", token)
    if len(core) < MIN_RANDOM_CORE or not (
        any(ch.isupper() for ch in core)
        and any(ch.islower() for ch in core)
        and any(ch.isdigit() for ch in core)
    ):
        return False
    return (
        _class_changes(core) >= MIN_CLASS_CHANGES
        and _entropy_bits_per_char(core) >= MIN_TOKEN_ENTROPY_BITS
    )


def _class_changes(text: str) -> float:
    classes = ["u" if ch.isupper() else "l" if ch.islower() else "d" for ch in text]
    changes = sum(1 for left, right in pairwise(classes) if left != right)
    return changes / max(1, len(text) - 1)


def _entropy_bits_per_char(token: str) -> float:
    counts = Counter(token)
    total = len(token)
    return -sum(n / total * math.log2(n / total) for n in counts.values())
