"""The Parquet store: runs written atomically, their tables' columns, locks, damage checks, verify."""
