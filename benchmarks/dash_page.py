"""One dashboard session on a store, as a user meets it: the Compare page's first load, then
a control change (the Seeds box set to one seed). Run by bench_study.py as a whole process
(the first load is its wall time); prints {"change_s": ...}, the second script run's wall time,
on stdout. Not a test.

Usage: python benchmarks/dash_page.py STORE
"""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

APP = Path(__file__).resolve().parent.parent / "dashboards" / "app.py"


def main() -> None:
    os.environ["TRACEKIT_DATA"] = sys.argv[1]
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(APP), default_timeout=600)
    at.switch_page("tk_pages/compare.py").run()
    if at.exception:
        raise SystemExit(f"first load failed: {at.exception[0].message}")
    seeds = next(s for s in at.selectbox if str(s.key).startswith("seed-"))
    t0 = time.perf_counter()
    # the first seed (options[0]: all seeds; shown as 'seed N only')
    seeds.set_value(int(seeds.options[1].split()[1])).run()
    change_s = time.perf_counter() - t0
    if at.exception:
        raise SystemExit(f"control change failed: {at.exception[0].message}")
    print(json.dumps({"change_s": round(change_s, 3)}))


if __name__ == "__main__":
    main()
