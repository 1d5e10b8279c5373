"""Questions over runs: the selection language, statistics, compare, reproduce, explain-awk."""
