"""A trace into a run: the pipeline and the stored per-flow facts."""
