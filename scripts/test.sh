#!/usr/bin/env bash
# Install what the tests need (see scripts/setup.sh --test), then run the whole suite.
# Extra arguments go to pytest, e.g. scripts/test.sh -k ingest
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --test || exit 1
.venv/bin/python -m pytest "$@"
rc=$?
if [ $rc -eq 5 ]; then echo "tracekit: no tests were collected" >&2; exit 1; fi
exit $rc
