"""What users run: the CLI, its output formats, the HTML report, the dashboard launcher."""
