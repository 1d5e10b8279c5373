#!/usr/bin/env bash
# Every check CI runs, in order, stopping at the first that fails (non-zero exit, naming it):
#   ruff (pyflakes, pycodestyle errors, bugbear), mypy (tracekit/, tests/, dashboards/,
#   scripts/, benchmarks/), the import contracts of the layers (import-linter), the generated
#   docs up to date (scripts/gen_docs.py --check), the docs site (mkdocs build --strict, where
#   mkdocs.yml exists), then pytest. Configuration: pyproject.toml.
# Usage: scripts/check.sh [--fast] [PYTEST ARGS...]
#   --fast   skip the tests marked slow (pytest -m "not slow"): the quick loop while editing
# Expects .venv from `scripts/setup.sh --test` (scripts/test.sh runs both).
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin
fast=0
args=()
for a in "$@"; do
  if [ "$a" = "--fast" ]; then fast=1; else args+=("$a"); fi
done

step() {
  local name=$1; shift
  printf '[check] %s\n' "$name" >&2
  "$@"
  local rc=$?
  if [ $rc -ne 0 ]; then printf '[check] FAILED: %s (exit %d)\n' "$name" "$rc" >&2; exit 1; fi
}

for tool in ruff mypy lint-imports python; do
  [ -x "$BIN/$tool" ] || { echo "check: $BIN/$tool is missing; run scripts/setup.sh --test" >&2; exit 1; }
done
step "ruff check" "$BIN/ruff" check --quiet .
step "mypy (files: pyproject.toml)" "$BIN/mypy"
contracts() {   # lint-imports prints a banner: show its report only when a contract is broken
  local out
  out=$("$BIN/lint-imports" --no-cache 2>&1) || { printf '%s\n' "$out"; return 1; }
  printf '%s\n' "$out" | grep -E '^Contracts:'
}
step "import contracts (lint-imports)" contracts
step "generated docs (scripts/gen_docs.py --check)" "$BIN/python" scripts/gen_docs.py --check
if [ -f mkdocs.yml ]; then
  [ -x "$BIN/mkdocs" ] || { echo "[check] FAILED: docs site: $BIN/mkdocs is missing; run scripts/setup.sh --test" >&2; exit 1; }
  # into a temporary directory: the check leaves no site/ behind
  site=$(mktemp -d) || exit 1
  trap 'rm -rf "$site"' EXIT
  # (mkdocs-material's banner about a future MkDocs 2 is not about this site)
  NO_MKDOCS_2_WARNING=1 step "docs site (mkdocs build --strict)" "$BIN/mkdocs" build --strict --quiet --site-dir "$site"
fi
fast_path() {   # which parsers this checkout runs: the wired and wireless C fast paths
  "$BIN/python" -c 'from tracekit.formats.parsers import wired, wireless; print("built" if wired._fast and wireless._fast else "not built")'
}
printf '[check] wired and wireless parsers C fast paths: %s\n' "$(fast_path)" >&2
if [ "${TRACEKIT_REQUIRE_FAST:-0}" = 1 ] && [ "$(fast_path)" != built ]; then
  echo "[check] FAILED: the C fast paths (tracekit/formats/parsers/_wiredc.c, _wirelessc.c) are not built: see scripts/setup.sh's output" >&2; exit 1
fi
marker=()
[ $fast -eq 1 ] && marker=(-m "not slow")
printf '[check] pytest %s\n' "${marker[*]:-}" >&2
"$BIN/python" -m pytest ${marker[@]+"${marker[@]}"} ${args[@]+"${args[@]}"}
rc=$?
if [ $rc -eq 5 ]; then echo "check: pytest collected no tests" >&2; exit 1; fi
[ $rc -ne 0 ] && { echo "[check] FAILED: pytest (exit $rc)" >&2; exit $rc; }
if [ ${#args[@]} -eq 0 ]; then
  # the same files once more on the pure-Python parser (the fallback where no C compiler is)
  pure=(tests/test_parsers.py tests/test_hardening_ingest.py)
  printf '[check] pytest, pure-Python parser (TRACEKIT_PURE_PYTHON=1): %s\n' "${pure[*]}" >&2
  TRACEKIT_PURE_PYTHON=1 "$BIN/python" -m pytest -q ${marker[@]+"${marker[@]}"} "${pure[@]}"
  rc=$?
  [ $rc -ne 0 ] && echo "[check] FAILED: pytest, pure-Python parser (exit $rc)" >&2
fi
exit $rc
