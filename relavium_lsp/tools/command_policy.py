r"""Which argv ``run_command`` may execute: exact entries plus opt-in globs.

The rule (argv is what the model sends; nothing is ever parsed by a shell):

- **Exact entries** (``allowed_commands``): each entry is split like a shell would split it
  (``shlex.split``: ``"pytest -q"`` → ``["pytest", "-q"]``) and the call's argv must equal
  that list element for element. ``"ls"`` allows ``ls`` with no arguments and nothing
  else; ``"git status"`` does not allow ``git -c core.pager=sh status`` or ``git status
  --upload-pack=…``. No argument can be smuggled past an exact entry.
- **Globs** (``allowed_command_globs``, opt-in): also split with ``shlex``; the first token
  must be a literal program name equal to ``argv[0]``; each further token is matched against
  the argv element in the same position with ``fnmatch.fnmatchcase`` (a wildcard never
  spans two arguments); a final lone ``*`` token matches any number of remaining
  arguments, including none. Any argument holding a shell metacharacter (``; & | ` $ ( ) <
  > \\ { } [ ] * ? ! # ~ ' "``, newline, tab) is refused unless the pattern spells that
  character literally. Globs trust a program with many arguments: ``"git log *"`` also
  allows ``git log --output=FILE`` — list exact entries where that matters.
- ``argv[0]`` is compared literally (a path form such as ``/tmp/x/ls`` never matches an
  entry ``ls``); bare names are found on a fixed safe PATH, never in the workspace.
- NUL, control (other than newline and tab, which globs refuse anyway) and invisible or
  bidirectional characters are refused in every argument: they would spoof the command line
  the approval prompt shows.
- Both lists empty ⇒ ``run_command`` is disabled (``tool_unavailable``). A call matching
  nothing is ``tool_denied``.
"""

from __future__ import annotations

import fnmatch
import logging
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from relavium_lsp.errors import ToolDenied, ToolError

logger = logging.getLogger(__name__)

SHELL_METACHARACTERS = frozenset(";&|`$()<>\\{}[]*?!#~'\"\n\r\t")
_WILDCARDS = frozenset("*?[")
MAX_ARGUMENTS = 256
MAX_ARGUMENT_CHARS = 32_768


def _literal_characters(token: str) -> frozenset[str]:
    """Characters a glob token spells literally (``[;]`` spells ``;``; ``*`` spells nothing)."""
    literal: set[str] = set()
    index = 0
    while index < len(token):
        character = token[index]
        if character in "*?":
            index += 1
        elif character == "[":
            close = token.find("]", index + 2)
            if close == -1:
                literal.add(character)
                index += 1
                continue
            body = token[index + 1 : close]
            if len(body) == 1:
                literal.add(body)
            index = close + 1
        else:
            literal.add(character)
            index += 1
    return frozenset(literal)


@dataclass(frozen=True)
class _Glob:
    pattern: str
    tokens: tuple[str, ...]
    literal: frozenset[str]

    def matches(self, argv: Sequence[str]) -> bool:
        if argv[0] != self.tokens[0]:
            return False
        tokens = self.tokens[1:]
        rest = argv[1:]
        open_ended = bool(tokens) and tokens[-1] == "*"
        fixed = tokens[:-1] if open_ended else tokens
        if len(rest) < len(fixed) or (not open_ended and len(rest) != len(fixed)):
            return False
        return all(
            fnmatch.fnmatchcase(argument, token)
            for argument, token in zip(rest, fixed, strict=False)
        )

    def smuggled(self, argv: Sequence[str]) -> str | None:
        for argument in argv:
            for character in argument:
                if character in SHELL_METACHARACTERS and character not in self.literal:
                    return character
        return None


@dataclass(frozen=True)
class CommandPolicy:
    """The parsed allowlists (build with :meth:`from_lists`)."""

    exact: frozenset[tuple[str, ...]]
    globs: tuple[_Glob, ...]

    @classmethod
    def from_lists(cls, commands: Iterable[str], globs: Iterable[str]) -> CommandPolicy:
        """Parse the config lists; malformed entries are skipped (and logged), never widened."""
        exact: set[tuple[str, ...]] = set()
        for entry in commands:
            try:
                argv = tuple(shlex.split(entry))
            except ValueError:
                logger.warning("ignoring unparsable allowed_commands entry %r", entry)
                continue
            if argv:
                exact.add(argv)
        parsed: list[_Glob] = []
        for pattern in globs:
            try:
                tokens = tuple(shlex.split(pattern))
            except ValueError:
                logger.warning("ignoring unparsable allowed_command_globs entry %r", pattern)
                continue
            if not tokens or any(ch in _WILDCARDS for ch in tokens[0]):
                logger.warning("ignoring glob %r: its program name must be literal", pattern)
                continue
            literal = frozenset().union(*(_literal_characters(t) for t in tokens[1:]))
            parsed.append(_Glob(pattern, tokens, literal))
        return cls(exact=frozenset(exact), globs=tuple(parsed))

    @property
    def enabled(self) -> bool:
        """Whether any command is allowed at all."""
        return bool(self.exact or self.globs)

    def check(self, argv: Sequence[str]) -> str:
        """Return the rule that allows ``argv``; raise if none does (see the module doc)."""
        if not self.enabled:
            raise ToolError(
                "run_command is disabled: [chat].allowed_commands and allowed_command_globs "
                "are empty",
                code="tool_unavailable",
            )
        if not argv or not argv[0]:
            raise ToolDenied("the command is empty")
        if len(argv) > MAX_ARGUMENTS:
            raise ToolDenied(f"the command has more than {MAX_ARGUMENTS} arguments")
        for argument in argv:
            if "\0" in argument:
                raise ToolDenied("an argument contains a NUL byte")
            if any(not ch.isprintable() and ch not in "\n\t" for ch in argument):
                # Escape sequences and bidi controls would spoof the approval prompt.
                raise ToolDenied("an argument contains a control or invisible character")
            if len(argument) > MAX_ARGUMENT_CHARS:
                raise ToolDenied(f"an argument is longer than {MAX_ARGUMENT_CHARS} characters")
        if tuple(argv) in self.exact:
            return shlex.join(argv)
        refusal = f"{shlex.join(argv)[:300]!r} is not an allowed command"
        for glob in self.globs:
            if glob.matches(argv):
                character = glob.smuggled(argv)
                if character is None:
                    return glob.pattern
                refusal = (
                    f"{shlex.join(argv)[:300]!r} matches {glob.pattern!r} but an argument holds "
                    f"the shell metacharacter {character!r}, which that glob does not list"
                )
        raise ToolDenied(refusal)
