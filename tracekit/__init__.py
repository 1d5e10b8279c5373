"""tracekit: ns-2 traces into Parquet, metrics as DuckDB SQL views."""
__version__ = "0.1.0"
