"""Read a tracekit store with Apache Spark, without tracekit, and compare the row counts with
`tracekit sql` (issue 38; not a test, not imported by tracekit).

Example (pyspark in its own venv, Java 17 on the PATH):

    python3 -m venv /work/spark-venv && /work/spark-venv/bin/pip install pyspark==4.3.0
    /work/spark-venv/bin/python benchmarks/read_with_spark.py --data /tmp/open-store \\
        --tracekit "/work/wt/open/.venv/bin/python -m tracekit"

What Spark reads, as docs/store-layout.md shows it:

- every table from the runs' own files, `runs/run_id=*/<table>-*.parquet` (`run.parquet` for
  the run records), with `basePath` set to `runs/` so that `run_id` comes from the directory
  name (partition type inference off: the id stays a string);
- the run records also from the current compacted generation (`compacted/CURRENT`):
  `gen-<N>/runs.parquet` restricted to the live runs (those whose directory exists), plus the
  own `run.parquet` of the runs not in the generation's manifest, listed first (only those
  files are opened).

Then it runs one `tracekit sql` with the same counts and prints both side by side.
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path


def per_run_glob(store: Path, table: str) -> str:
    name = "run.parquet" if table == "runs" else f"{table}-*.parquet"
    return f"{store}/runs/run_id=*/{name}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 epilog="example: /work/spark-venv/bin/python benchmarks/read_with_spark.py "
                                        "--data /tmp/open-store --tracekit '.venv/bin/python -m tracekit'",
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, required=True, help="the store directory")
    ap.add_argument("--tracekit", default="tracekit",
                    help="the command that runs tracekit, for the comparison (default: tracekit)")
    ap.add_argument("--tables", default="runs,events",
                    help="comma-separated tables to read from the per-run files; 'all': every table "
                         "with per-run files in the store (default: runs,events)")
    args = ap.parse_args()
    store = args.data.resolve()
    if not (store / "runs").is_dir():
        ap.error(f"{store}: no runs/ directory (not a tracekit store)")

    names = {p.name for p in (store / "runs").glob("run_id=*/*.parquet")}
    found = sorted({"runs" if n == "run.parquet" else n.rsplit("-", 1)[0] for n in names})
    tables = found if args.tables == "all" else [t for t in args.tables.split(",") if t]

    t0 = time.monotonic()
    from pyspark import __version__ as pyspark_version
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    spark = (SparkSession.builder.master("local[1]").appName("tracekit-open-store")
             .config("spark.ui.enabled", "false")
             .config("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    started = time.monotonic() - t0
    java = spark.sparkContext._jvm.java.lang.System.getProperty("java.version")  # type: ignore[union-attr]

    counts: dict[str, int] = {}
    for t in tables:
        df = spark.read.option("basePath", f"{store}/runs").parquet(per_run_glob(store, t))
        # every column aggregated, so that every column is decoded, not only the row count
        counts[t] = df.agg(F.count(F.lit(1)), *[F.count(F.col(f"`{c}`")) for c in df.columns]).first()[0]

    live = [p.name.removeprefix("run_id=") for p in (store / "runs").glob("run_id=*")]
    cur = store / "compacted" / "CURRENT"
    compacted_runs: int | None = None
    if cur.exists():
        gen = store / "compacted" / cur.read_text().strip()
        in_gen = json.loads((gen / "manifest.json").read_text())["run_ids"]
        since = [f"{store}/runs/run_id={r}/run.parquet" for r in sorted(set(live) - set(in_gen))]
        runs = spark.read.parquet(f"{gen}/runs.parquet").where(F.col("run_id").isin(sorted(set(live) & set(in_gen))))
        if since:
            runs = runs.unionByName(spark.read.option("basePath", f"{store}/runs").parquet(*since))
        compacted_runs = runs.agg(F.count(F.lit(1)), *[F.count(F.col(f"`{c}`")) for c in runs.columns]).first()[0]
    spark.stop()
    spark_s = time.monotonic() - t0

    query = " UNION ALL ".join(f"SELECT '{t}' AS t, count(*) AS n FROM {t}" for t in tables)
    res = subprocess.run([*shlex.split(args.tracekit), "sql", query, "-f", "json", "--data", str(store)],
                         capture_output=True, text=True, env={k: v for k, v in os.environ.items() if k != "TRACEKIT_DATA"})
    if res.returncode != 0:
        print(f"tracekit sql failed: {res.stderr.strip()}", file=sys.stderr)
        return 1
    tk = {r["t"]: r["n"] for r in json.loads(res.stdout)}

    print(f"store {store}: {len(live)} live runs; pyspark {pyspark_version}, Spark {spark.version}, Java {java}; "
          f"Spark session started in {started:.1f} s, all reads done in {spark_s:.1f} s")
    print(f"{'table':<22} {'read from':<32} {'spark rows':>11} {'tracekit rows':>14}  same")
    rows = [(t, "runs/run_id=*/ (basePath runs/)", counts[t], tk[t]) for t in tables]
    if compacted_runs is not None and "runs" in tk:
        rows.append(("runs", "compacted gen + runs since", compacted_runs, tk["runs"]))
    ok = True
    for t, src, n, m in rows:
        ok &= n == m
        print(f"{t:<22} {src:<32} {n:>11,} {m:>14,}  {'yes' if n == m else 'NO'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
