"""Reading traces: sources (files, archives, pipes), detection, and one parser per ns-2 trace format."""
