"""``python -m bench [NAME...]``: run the named benchmarks (default: all), one process each."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent


def main(argv: list[str]) -> int:
    names = argv or sorted(p.stem for p in HERE.glob("bench_*.py"))
    failed = 0
    for name in names:
        module = name if name.startswith("bench_") else f"bench_{name}"
        print(f"== {module}", flush=True)
        failed += subprocess.call([sys.executable, "-m", f"bench.{module}"]) != 0
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
