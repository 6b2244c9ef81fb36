"""One ``JSON`` alias (issue 39): ``volcano_py.api.JSON``, imported wherever raw JSON is typed.

Modules written side by side kept declaring their own ``JSON = dict[str, Any]``; this names
every module that does it again. ``webhooks/hypernodes/tree.py``'s alias is a different,
read-only type (``Mapping``) and stays.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DECLARATION = re.compile(r"^JSON\s*(?::[^=]+)?=\s*dict\[str,\s*Any\]", re.MULTILINE)
HOME = ROOT / "volcano_py" / "api" / "__init__.py"


def declarations(folders: tuple[str, ...] = ("volcano_py", "webhooks", "devcluster")) -> list[str]:
    """Modules (other than the alias's home) that declare ``JSON = dict[str, Any]``."""
    return [
        str(path.relative_to(ROOT))
        for folder in folders
        for path in sorted((ROOT / folder).rglob("*.py"))
        if path != HOME and DECLARATION.search(path.read_text())
    ]


def test_the_product_declares_the_json_alias_once() -> None:
    assert DECLARATION.search(HOME.read_text())
    assert declarations() == []


def test_the_check_finds_a_second_declaration() -> None:
    module = "from typing import Any\n\nJSON = dict[str, Any]\n"
    assert DECLARATION.search(module)
    assert not DECLARATION.search("JSON = Mapping[str, Any]\n")
