"""`volcano-py validate`: output lines, exit codes, file:line errors, and every example passes."""

from __future__ import annotations

from pathlib import Path

import pytest

from volcano_py.cli import main

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = sorted(
    p for p in (ROOT / "examples").rglob("*") if p.suffix in {".yaml", ".yml", ".json"}
)

GOOD = """\
apiVersion: topology.volcano.sh/v1alpha1
kind: HyperNode
metadata: {name: spine-a}
spec:
  tier: 2
  members:
  - {type: HyperNode, selector: {exactMatch: {name: rack-a}}}
  - {type: HyperNode, selector: {exactMatch: {name: rack-z}}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: ignored}
"""

EXISTING = """\
{"apiVersion": "v1", "kind": "List", "items": [
 {"apiVersion": "topology.volcano.sh/v1alpha1", "kind": "HyperNode", "metadata": {"name": "rack-a"},
  "spec": {"tier": 1, "members": [{"type": "Node", "selector": {"exactMatch": {"name": "n1"}}}]}}]}
"""

BAD = """\
apiVersion: topology.volcano.sh/v1alpha1
kind: HyperNode
metadata: {name: spine-b}
spec:
  tier: 2
  members:
  - {type: HyperNode, selector: {exactMatch: {name: rack-a}}}
  - {type: Node, selector: {regexMatch: {pattern: "n("}}}
"""


@pytest.mark.parametrize("path", EXAMPLES, ids=[str(p.relative_to(ROOT)) for p in EXAMPLES])
def test_validate_passes_every_example(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(path)]) == 0, capsys.readouterr().out


def test_validate_prints_ok_and_warnings_and_exits_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "good.yaml").write_text(GOOD)
    (tmp_path / "existing.json").write_text(EXISTING)
    code = main(
        ["validate", str(tmp_path / "good.yaml"), "--existing", str(tmp_path / "existing.json")]
    )
    assert code == 0
    assert capsys.readouterr().out.splitlines() == [
        "OK spine-a",
        'WARNING spine-a: member HyperNode "rack-z" of HyperNode "spine-a" does not exist yet; '
        "it joins the tree when it is created",
    ]


def test_validate_denies_with_message_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "input.yaml").write_text(GOOD + "---\n" + BAD)
    (tmp_path / "existing.json").write_text(EXISTING)
    code = main(
        ["validate", str(tmp_path / "input.yaml"), "--existing", str(tmp_path / "existing.json")]
    )
    lines = capsys.readouterr().out.splitlines()
    assert code == 1
    assert lines[-1] == (
        'DENIED spine-b: spec.members[1].selector.regexMatch.pattern: Invalid value: "n(": '
        "member regexMatch pattern is invalid: error parsing regexp: missing closing ): `n(`"
    )


def test_validate_applies_input_in_order_for_tree_checks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fixed = BAD.replace('"n("', '"n.*"')
    (tmp_path / "input.yaml").write_text(GOOD + "---\n" + fixed)
    (tmp_path / "existing.json").write_text(EXISTING)
    code = main(
        ["validate", str(tmp_path / "input.yaml"), "--existing", str(tmp_path / "existing.json")]
    )
    assert code == 1
    lines = capsys.readouterr().out.splitlines()
    assert (
        'DENIED spine-b: member HyperNode "rack-a" of HyperNode "spine-b" already has the parent '
        'HyperNode "spine-a"; a HyperNode can have only one parent'
    ) in lines
    # n.* may select rack-a's node n1 too
    assert lines[-1].startswith('WARNING spine-b: the Node members of HyperNode "spine-b" may')


@pytest.mark.parametrize(
    ("text", "where"),
    [("a: [\n", ":2:"), ("kind: HyperNode\n---\n- 1\n- 2\n", ":3:"), ("x: 'open\n", ":")],
    ids=["unclosed-list", "non-object-document", "unclosed-quote"],
)
def test_validate_unreadable_input_exits_2_with_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, where: str
) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text(text)
    assert main(["validate", str(path)]) == 2
    assert f"{path}{where}" in capsys.readouterr().err


def test_validate_missing_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(tmp_path / "nope.yaml")]) == 2
    assert "nope.yaml: cannot read" in capsys.readouterr().err
