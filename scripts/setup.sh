#!/usr/bin/env bash
# Set up everything tracekit needs on a Debian or Ubuntu machine, idempotently:
#   system packages (python3 + venv, ns-2 from the `ns2` package, gcc and python3-dev for the
#   parsers' C fast paths; for tests also gawk, mawk, zstd and chromium),
#   a virtual environment at .venv with tracekit installed (editable) with its dashboard
#   extra (streamlit, plotly: `tracekit dashboard`, which the README and demo.sh use) and, with
#   --test, its test tools and the cluster extra (dask[distributed]: `tracekit sweep --scheduler`).
# Usage: scripts/setup.sh [--test]      (--test also installs what the test suite needs)
# Runs apt-get as root, or through sudo when that works without a password; anything it
# cannot install is reported and left to the caller (the demo falls back to sample_traces/).
set -uo pipefail
cd "$(dirname "$0")/.."
want_test=0
[ "${1:-}" = "--test" ] && want_test=1

say() { printf '[setup] %s\n' "$*" >&2; }

APT=""
if command -v apt-get >/dev/null 2>&1; then
  if [ "$(id -u)" -eq 0 ]; then APT="apt-get"
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then APT="sudo apt-get"
  fi
fi

pkgs=()
command -v python3 >/dev/null 2>&1 || pkgs+=(python3)
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || pkgs+=(python3-venv)
command -v ns >/dev/null 2>&1 || pkgs+=(ns2)
# the C fast paths of the parsers (hatch_build.py compiles them at install; without them
# tracekit uses its pure-Python parsers, same results, slower)
command -v "${CC:-gcc}" >/dev/null 2>&1 || pkgs+=(gcc)
python3 -c 'import os, sysconfig; assert os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h"))' \
  >/dev/null 2>&1 || pkgs+=(python3-dev)
if [ $want_test -eq 1 ]; then
  command -v gawk >/dev/null 2>&1 || pkgs+=(gawk)
  command -v mawk >/dev/null 2>&1 || pkgs+=(mawk)
  command -v zstd >/dev/null 2>&1 || pkgs+=(zstd)
  command -v chromium >/dev/null 2>&1 || pkgs+=(chromium)   # the dashboard's browser test
fi

if [ ${#pkgs[@]} -gt 0 ]; then
  if [ -n "$APT" ]; then
    say "installing system packages: ${pkgs[*]}"
    export DEBIAN_FRONTEND=noninteractive
    $APT update -qq >/dev/null 2>&1 || say "apt-get update failed (offline?)"
    if ! $APT install -y -qq "${pkgs[@]}" >/dev/null 2>&1; then
      # install one by one so that one missing package (ns2 on some releases) does not block the rest
      for p in "${pkgs[@]}"; do
        $APT install -y -qq "$p" >/dev/null 2>&1 || say "could not install $p"
      done
    fi
  else
    say "cannot run apt-get (not root, no password-less sudo); missing: ${pkgs[*]}"
  fi
fi

if ! command -v python3 >/dev/null 2>&1; then
  say "python3 is missing and could not be installed"; exit 1
fi
if [ ! -x .venv/bin/python ]; then
  say "creating .venv"
  python3 -m venv .venv || { say "python3 -m venv failed: install python3-venv"; exit 1; }
fi
extras="[dashboard]"
[ $want_test -eq 1 ] && extras="[dashboard,test,cluster]"
stamp=".venv/.tracekit-installed$extras"
# reinstall (which compiles them) when a C fast path is missing or older than its source
stale=0
for src in tracekit/formats/parsers/_wiredc.c tracekit/formats/parsers/_wirelessc.c; do
  so=$(ls "${src%.c}"*.so 2>/dev/null | head -1)
  if [ -z "$so" ] || [ "$src" -nt "$so" ]; then stale=1; fi
done
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ hatch_build.py -nt "$stamp" ] || [ $stale -eq 1 ]; then
  say "installing tracekit$extras into .venv"
  .venv/bin/python -m pip install -q --upgrade pip >/dev/null 2>&1 || true
  .venv/bin/python -m pip install -q -e ".$extras" || { say "pip install failed"; exit 1; }
  touch "$stamp"
fi
# the package's bytecode, as a (non-editable) pip install writes it: where
# PYTHONDONTWRITEBYTECODE is set, Python would otherwise compile every module at every start
# (~0.1 s of CPU for what ingest imports). A module edited later is compiled afresh as usual.
.venv/bin/python -m compileall -q tracekit >/dev/null 2>&1 || true
for name in wired wireless; do
  if ls tracekit/formats/parsers/_${name}c*.so >/dev/null 2>&1; then say "$name parser: C fast path built"
  else say "$name parser: C fast path not built (no C compiler or python3-dev?); using the pure-Python parser"; fi
done
if command -v ns >/dev/null 2>&1; then say "ns-2: $(command -v ns)"; else say "ns-2 not available"; fi
exit 0
