"""``python -m volcano_py``: the same entry point as the ``volcano-py`` console script."""

from volcano_py.cli import main

raise SystemExit(main())
