"""DuckDB over the store: the sql/ files, the metric catalogue, connections with their limits."""
