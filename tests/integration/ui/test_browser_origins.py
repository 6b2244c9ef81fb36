"""/ui tells hand-made HyperNodes and discovered ones apart when both exist.

The package's racks are hand-made; a HyperNode owned by a discovery source
(``volcano.sh/network-topology-source``) beside them makes every row say which kind it is,
so a discovered spine shown by its label value and a hand-made HyperNode of that name are
not two identical rows.
"""

from __future__ import annotations

import contextlib

from tests.builders import exact, hypernode_body
from tests.integration.ui.browser import text_of
from tests.integration.ui.conftest import UiCluster
from tests.integration.ui.test_browser import _rows, _wait, browser
from volcano_py.api import resources as R
from volcano_py.kube.errors import NotFound

__all__ = ["browser"]


def test_browser_marks_discovered_and_hand_made_rows_when_both_exist(
    ui_cluster: UiCluster, browser: object
) -> None:
    c, driver = ui_cluster, browser
    found = f"{c.prefix}-discovered-leaf"
    body = hypernode_body(found, 1, [exact(f"{c.prefix}-no-such-node")])
    body["metadata"]["labels"] = {"volcano.sh/network-topology-source": "label"}
    c.client.create(R.HYPERNODES, body)
    try:
        driver.get(f"{c.url}/ui")  # type: ignore[attr-defined]
        mine = f'div.hn[data-hn="{found}"] > .row .origin'
        _wait(driver, "the discovered HyperNode's origin", lambda d: _rows(d, mine))
        assert text_of(driver, mine) == "discovered: label"  # type: ignore[arg-type]
        rack = f'div.hn[data-hn="{c.racks[0]}"] > .row .origin'
        _wait(driver, "a hand-made rack's origin", lambda d: _rows(d, rack))
        assert text_of(driver, rack) == "made by hand"  # type: ignore[arg-type]
    finally:
        with contextlib.suppress(NotFound):
            c.client.delete(R.HYPERNODES, found)
