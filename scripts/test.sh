#!/usr/bin/env bash
# Install what the tests need (see scripts/setup.sh --test), then run every check
# (scripts/check.sh: ruff, mypy, import contracts, the whole test suite).
# Arguments go to check.sh: scripts/test.sh --fast (skips slow tests), scripts/test.sh -k ingest
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --test || exit 1
exec scripts/check.sh "$@"
