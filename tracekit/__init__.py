"""tracekit: ns-2 traces into Parquet, metrics as DuckDB SQL views."""
import os as _os

__version__ = "0.1.0"

# numpy (imported by the ingest) loads its bundled OpenBLAS, which starts a thread per core that
# spins waiting for matrix work tracekit never gives it, CPU taken from an ingest's parse and
# write threads (docs/performance.md, "Ingest"). One BLAS thread, unless the
# user chose otherwise; set before numpy is imported (no effect if it was, by a caller).
_os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
