"""The shell commands of README.md and docs/*.md, and the output shown under them.

``tests/unit/test_docs_commands.py`` runs what this module finds. The rules, so a new page
needs nothing registered:

- A *shell block* is a fenced block marked ``sh``, ``bash``, ``shell`` or ``console``, or an
  unmarked block whose first line is a command (it starts with one of ``PROGRAMS``). Other
  unmarked blocks (trees, layouts, log samples) are prose.
- In a ``console`` block a command is a line starting with ``$ ``. In an ``sh`` block every
  line but comments is a command; ``# ...`` after it is a comment, never compared. In an
  unmarked block a line starting with a program is a command, an indented line right after a
  command continues it (a usage synopsis), and a trailing ``\\`` joins the next line.
- The other lines of a ``console`` or unmarked block, up to the next command, are the output
  the doc shows for that command. In a shown line ``...`` stands for any text; a line that is
  only ``...`` stands for any number of lines.
- A usage line is checked with its optional ``[...]`` parts and run without them; one with
  ``|`` alternatives or a ``<placeholder>`` is checked, never run.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHELL_LANGS = {"sh", "bash", "shell", "console"}
PROGRAMS = (
    ".venv/bin/volcano-py",
    ".venv/bin/python",
    "volcano-py",
    "python",
    "python3",
    "kubectl",
    "make",
    "helm",
    "docker",
    "export",
    "unset",
    "curl",
    "go",
)
_FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)


@dataclass(slots=True)
class DocCommand:
    """One command of a doc, where it is and the output shown under it."""

    doc: str
    line: int
    text: str
    shown: list[str] = field(default_factory=list)

    @property
    def where(self) -> str:
        """``README.md:42``: where the command is written."""
        return f"{self.doc}:{self.line}"

    @property
    def runnable(self) -> bool:
        """Whether the command runs once its optional ``[...]`` parts are left out.

        A usage line with alternatives (``-o yaml|json``) or placeholders (``<ns>``) does not.
        """
        return not re.search(r"\[|\]|<[a-z]|\w\|\w", re.sub(r"\[[^]]*\]", "", self.text))

    def segments(self, *, optional: bool = True) -> list[list[str]]:
        """The simple commands of the line (split at ``&&``, ``;``, ``|``), redirects dropped.

        ``optional=False`` leaves out the ``[...]`` parts of a usage line.
        """
        text = self.text if optional else re.sub(r"\[[^]]*\]", "", self.text)
        body = re.sub(r"\s#.*$", "", text) if not text.startswith("#") else ""
        words = shlex.split(body.replace("[", " ").replace("]", " "), posix=True)
        out: list[list[str]] = [[]]
        skip = False
        for word in words:
            if skip:
                skip = False
                continue
            if word in {"&&", ";", "|", "||"}:
                out.append([])
            elif word in {">", ">>", "2>", "<"}:
                skip = True
            elif word.startswith((">", "2>")):
                continue
            else:
                out[-1].append(word)
        return [seg for seg in out if seg]


def doc_files() -> list[Path]:
    """README.md and every page under docs/."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _starts_with_program(line: str) -> bool:
    word = line.strip().removeprefix("$ ").split(" ", 1)[0]
    return word in PROGRAMS


def doc_commands(path: Path) -> list[DocCommand]:
    """Every command of the shell blocks of one page, with the output it shows."""
    text = path.read_text()
    name = str(path.relative_to(ROOT))
    found: list[DocCommand] = []
    for block in _FENCE.finditer(text):
        lang, body = block.group(1), block.group(2)
        first_line = text.count("\n", 0, block.start()) + 2
        lines = body.splitlines()
        first = next((line for line in lines if line.strip()), "")
        if lang not in SHELL_LANGS and not (lang == "" and _starts_with_program(first)):
            continue
        found.extend(_block_commands(name, first_line, lang, lines))
    return found


def _block_commands(doc: str, first_line: int, lang: str, lines: list[str]) -> list[DocCommand]:
    commands: list[DocCommand] = []
    current: DocCommand | None = None
    joining = False
    for offset, raw in enumerate(lines):
        line = raw.rstrip()
        if joining and current is not None:
            current.text = current.text[:-1].rstrip() + " " + line.strip()
            joining = line.endswith("\\")
            continue
        if lang == "console":
            is_command = line.startswith("$ ")
        elif lang == "":
            is_command = _starts_with_program(line)
            if current is not None and not current.shown and raw[:1].isspace() and line:
                current.text += " " + line.strip()
                continue
        else:
            is_command = bool(line.strip()) and not line.lstrip().startswith("#")
        if is_command:
            current = DocCommand(doc, first_line + offset, line.removeprefix("$ ").strip())
            commands.append(current)
            joining = line.endswith("\\")
        elif current is not None and lang in {"", "console"} and line.strip():
            current.shown.append(line)
    return commands


def output_matches(shown: list[str], actual: list[str]) -> bool:
    """Whether ``actual`` lines are what ``shown`` shows (``...`` as a wildcard)."""
    patterns = []
    for line in shown:
        if line.strip() == "...":
            patterns.append(r"(?:[^\n]*\n)*?")
        else:
            parts = [re.escape(part) for part in line.rstrip().split("...")]
            patterns.append(r"[^\n]*?".join(parts) + r"[ \t]*\n")
    text = "".join(line.rstrip() + "\n" for line in actual)
    return re.fullmatch("".join(patterns), text) is not None


def path_words(words: list[str]) -> list[str]:
    """The words of a command that name a file or folder of the repository.

    A word names one when it ends in a file extension (``.yaml``, ``.conf``, ...) or its first
    part is a folder of the repository (``examples/``, ``manifests/``); ``team-a/llm-train`` or
    ``svc/volcano-py`` do not. A ``VARIABLE=value`` word (a make variable) is read as the
    words of its value.
    """
    paths = []
    for word in words:
        variable = re.match(r"^[A-Z][A-Z0-9_]*=(.*)$", word, re.DOTALL)
        if variable:  # make run MANAGER_ARGS='--scheduler-conf FILE': the words of its value
            paths += path_words(shlex.split(variable.group(1)))
            continue
        value = word.split("=", 1)[1] if word.startswith("--") and "=" in word else word
        if value.startswith(("-", "<", "http", "~", "$", "/", ".venv")) or "://" in value:
            continue
        top = value.split("/", 1)[0]
        if re.search(r"\.(ya?ml|json|conf|md|py|txt)$", value) or (
            "/" in value and (ROOT / top).is_dir()
        ):
            paths.append(value)
    return paths
