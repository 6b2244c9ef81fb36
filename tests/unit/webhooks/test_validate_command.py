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
    strict = path.parent.name == "hypernodes"  # HyperNode files hold nothing else
    flags = [] if strict else ["--ignore-other-kinds"]
    assert main(["validate", str(path), *flags]) == 0, capsys.readouterr().out


def test_validate_prints_ok_and_warnings_and_exits_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "good.yaml").write_text(GOOD)
    (tmp_path / "existing.json").write_text(EXISTING)
    code = main(
        [
            "validate",
            str(tmp_path / "good.yaml"),
            "--existing",
            str(tmp_path / "existing.json"),
            "--ignore-other-kinds",
        ]
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


HYPERNODE_BODY = (
    "metadata: {name: rack-x}\nspec:\n  tier: 1\n  members:\n"
    "  - {type: Node, selector: {exactMatch: {name: n1}}}\n"
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "apiVersion: topology.volcano.sh/v1alpha1\nkind: Hypernode\n" + HYPERNODE_BODY,
            ':2: kind: Invalid value: "Hypernode": no matches for kind "Hypernode" in version '
            '"topology.volcano.sh/v1alpha1" (did you mean "HyperNode"?)',
        ),
        (
            "# a comment\nkind: HyperNode\napiVersion: topology.volcano.sh/v1beta1\n"
            + HYPERNODE_BODY,
            ':3: apiVersion: Invalid value: "topology.volcano.sh/v1beta1": no matches for kind '
            '"HyperNode" in version "topology.volcano.sh/v1beta1"',
        ),
        (
            "kind: HyperNode\napiVersion: volcano.sh/v1alpha1\n" + HYPERNODE_BODY,
            ':2: apiVersion: Invalid value: "volcano.sh/v1alpha1"',
        ),
        ("kind: HyperNode\n" + HYPERNODE_BODY, ":1: apiVersion: Required value"),
        (
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n",
            ':1: Deployment "web" (apps/v1) is not a HyperNode',
        ),
    ],
    ids=["kind-case", "api-version-field-line", "other-group", "no-api-version", "other-kind"],
)
def test_validate_refuses_what_the_cluster_would_with_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, expected: str
) -> None:
    path = tmp_path / "in.yaml"
    path.write_text(text)
    assert main(["validate", str(path)]) == 1
    out = capsys.readouterr().out
    assert out.startswith(f"DENIED {path}{expected}"), out


def test_validate_checks_every_document_and_list_item_at_its_own_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = "apiVersion: topology.volcano.sh/v1alpha1\nkind: HyperNode\n" + HYPERNODE_BODY
    text = (
        good
        + "---\napiVersion: v1\nkind: List\nitems:\n- apiVersion: topology.volcano.sh/v1alpha1\n"
        + "  kind: HyperNode\n  metadata: {name: rack-y}\n  spec:\n    tier: 1\n    members:\n"
        + "    - {type: Node, selector: {exactMatch: {name: n2}}}\n"
        + "- apiVersion: topology.volcano.sh/v1alpha1\n  kind: HyperNodes\n"
        + "---\napiVersion: topology.volcano.sh/v1alpha1\nkind: hypernode\n"
    )
    path = tmp_path / "multi.yaml"
    path.write_text(text)
    assert main(["validate", str(path)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[:2] == ["OK rack-x", "OK rack-y"]
    assert lines[2].startswith(f'DENIED {path}:20: kind: Invalid value: "HyperNodes"')
    assert lines[3].startswith(f'DENIED {path}:23: kind: Invalid value: "hypernode"')
    assert len(lines) == 4


def test_validate_ignore_other_kinds_still_refuses_a_misspelt_hypernode(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "mixed.yaml"
    path.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n---\n"
        "apiVersion: topology.volcano.sh/v1alpha1\nkind: HyperNODE\n" + HYPERNODE_BODY
    )
    assert main(["validate", "--ignore-other-kinds", str(path)]) == 1
    assert capsys.readouterr().out.splitlines() == [
        f'DENIED {path}:6: kind: Invalid value: "HyperNODE": no matches for kind "HyperNODE" in '
        'version "topology.volcano.sh/v1alpha1" (did you mean "HyperNode"?)'
    ]


@pytest.mark.parametrize(
    "text", ["", "\n# only a comment\n", "---\n---\n"], ids=["empty", "comment", "separators"]
)
def test_validate_empty_file_exits_2_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    path = tmp_path / "empty.yaml"
    path.write_text(text)
    assert main(["validate", str(path)]) == 2
    assert f"{path}:1: no objects in the file" in capsys.readouterr().err


def test_validate_accepts_an_empty_existing_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "in.yaml").write_text(
        "apiVersion: topology.volcano.sh/v1alpha1\nkind: HyperNode\n" + HYPERNODE_BODY
    )
    (tmp_path / "existing.yaml").write_text("")
    args = ["validate", str(tmp_path / "in.yaml"), "--existing", str(tmp_path / "existing.yaml")]
    assert main(args) == 0
    assert capsys.readouterr().out == "OK rack-x\n"


def test_validate_refuses_unknown_fields_like_kubectl_strict_validation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "typo.yaml"
    path.write_text(
        "apiVersion: topology.volcano.sh/v1alpha1\nkind: HyperNode\n"
        "metadata: {name: rack-x, labels: {team: a}, annotations: {note: b}}\n"
        "spec:\n  tier: 1\n  tierNmae: rack\n  members:\n"
        "  - {type: Node, selector: {exactMatch: {name: n1, nmae: n2}}}\n"
        "  - {type: Node, selector: {labelMatch: {matchLabels: {any-key: any-value}}}}\n"
    )
    assert main(["validate", str(path)]) == 1
    assert capsys.readouterr().out.splitlines() == [
        f"DENIED rack-x: {path}:4: strict decoding error: unknown field "
        '"spec.members[0].selector.exactMatch.nmae", unknown field "spec.tierNmae"'
    ]
