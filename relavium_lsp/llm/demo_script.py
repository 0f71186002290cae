"""The scripted demo conversation the bundled offline cassette was recorded from.

The demo (``make demo``) builds its sample workspace from :data:`DEMO_FILES`, selects
:data:`DEMO_SELECTION` and sends :data:`DEMO_PROMPTS` in order; the offline model then
replays the recorded answers: an explanation of the selection, then for the change a plan
(``update_plan``) and a code search (``search_files``), ``read_file`` → ``edit_file`` (one
exact-text replacement, :data:`DEMO_EDIT`), the plan ticked off, and a closing summary. Anything
else gets the offline model's explanation of how to configure a real provider.
"""

from __future__ import annotations

from dataclasses import dataclass

DEMO_SOURCE_PATH = "src/greeting.py"

DEMO_SOURCE = """def greet(name):
    return "Hello, " + name + "!"


if __name__ == "__main__":
    print(greet("world"))
"""

DEMO_SOURCE_AFTER = '''def greet(name: str) -> str:
    """Return a friendly greeting for ``name``."""
    return "Hello, " + name + "!"


if __name__ == "__main__":
    print(greet("world"))
'''

# The one replacement the recorded ``edit_file`` call makes: DEMO_SOURCE -> DEMO_SOURCE_AFTER.
DEMO_EDIT_OLD = "def greet(name):\n"
DEMO_EDIT_NEW = 'def greet(name: str) -> str:\n    """Return a friendly greeting for ``name``."""\n'
DEMO_EDIT: dict[str, str] = {"old": DEMO_EDIT_OLD, "new": DEMO_EDIT_NEW}

DEMO_FILES: dict[str, str] = {
    DEMO_SOURCE_PATH: DEMO_SOURCE,
    "README.md": "# greeting\n\nA tiny sample project for the Relavium demo.\n",
}


@dataclass(frozen=True)
class DemoSelection:
    """A 1-based inclusive line range in a workspace file."""

    path: str
    start_line: int
    end_line: int


DEMO_SELECTION = DemoSelection(path=DEMO_SOURCE_PATH, start_line=1, end_line=2)

ASK_ABOUT_SELECTION = "What does the selected function do?"
ASK_FOR_CHANGE = f"Add type hints and a docstring to greet in {DEMO_SOURCE_PATH}."
DEMO_PROMPTS: tuple[str, ...] = (ASK_ABOUT_SELECTION, ASK_FOR_CHANGE)

SELECTION_ANSWER = (
    '`greet(name)` builds a greeting: it joins `"Hello, "`, the given `name` and `"!"` '
    'and returns the result, so `greet("world")` returns `"Hello, world!"`. It has no type '
    "hints, so nothing says that `name` must be a string."
)
PLAN_PREAMBLE = "First a short plan, and a search for where `greet` is defined."
SEARCH_PATTERN = "def greet"
PLAN_STEPS: tuple[str, ...] = (
    "Find greet",
    "Add type hints and a docstring",
    "Check the edited file",
)
CHANGE_PREAMBLE = "I'll add the annotations and a one-line docstring."
CHANGE_SUMMARY = (
    f"Done: `greet` in `{DEMO_SOURCE_PATH}` now takes `name: str`, returns `str` and has a "
    "docstring. The change arrived as an editor edit, so you can review or undo it."
)
PLAN_CALL_ID = "call_demo_plan"
SEARCH_CALL_ID = "call_demo_search_files"
PLAN_DONE_CALL_ID = "call_demo_plan_done"
READ_CALL_ID = "call_demo_read_file"
EDIT_CALL_ID = "call_demo_edit_file"


def plan_entries(done: int) -> list[dict[str, str]]:
    """The plan with its first ``done`` steps completed and the next one in progress."""
    entries = []
    for index, step in enumerate(PLAN_STEPS):
        status = "completed" if index < done else "in_progress" if index == done else "pending"
        entries.append({"content": step, "status": status})
    return entries
