#!/usr/bin/env bash
# Separate Python >= 3.12 venvs for the external harnesses skillci drives (they pin their own
# litellm/rich and cannot share skillci's venv):
#
#   eval "$(bash scripts/ci_venvs.sh)"   # prints `export SKILLCI_BENCH=... SKILLCI_HARBOR=...`
#
# BenchFlow (bench) and Harbor (harbor) are installed from PyPI once per version into
# $SKILLCI_CI_CACHE (default /var/cache/skillci-ci, else ~/.cache/skillci-ci when that is not
# writable) and reused by later runs on the same machine.
set -euo pipefail

BENCHFLOW_VERSION=${SKILLCI_BENCHFLOW_VERSION:-0.7.11}
HARBOR_VERSION=${SKILLCI_HARBOR_VERSION:-0.25.0}
CACHE=${SKILLCI_CI_CACHE:-/var/cache/skillci-ci}
mkdir -p "$CACHE" 2>/dev/null && [ -w "$CACHE" ] || CACHE="$HOME/.cache/skillci-ci"
mkdir -p "$CACHE"

say() { printf 'ci_venvs: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

# pyenv roots to look in: $PYENV_ROOT, `pyenv root`, the current user's and root's default
# (a root CI job may run with HOME set elsewhere while pyenv lives in /root/.pyenv).
pyenv_roots() {
  printf '%s\n' "${PYENV_ROOT:-}"
  command -v pyenv >/dev/null 2>&1 && pyenv root 2>/dev/null
  printf '%s\n' "$HOME/.pyenv" /root/.pyenv
}

find_python312() {
  local c r v
  local cands=("${SKILLCI_PYTHON312:-}" python3.12 python3.13)
  if command -v pyenv >/dev/null 2>&1; then
    for v in 3.12 3.13; do
      cands+=("$(pyenv which "python$v" 2>/dev/null || true)")
    done
  fi
  while IFS= read -r r; do
    [ -n "$r" ] || continue
    cands+=("$r"/versions/3.12*/bin/python "$r"/versions/3.13*/bin/python)
  done < <(pyenv_roots)
  cands+=(/usr/bin/python3)
  for c in "${cands[@]}"; do
    [ -n "$c" ] || continue
    command -v "$c" >/dev/null 2>&1 || continue
    if "$c" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' 2>/dev/null; then
      command -v "$c"
      return 0
    fi
  done
  return 1
}

venv() { # venv NAME PACKAGE==VERSION EXE -> prints the executable's path
  local name=$1 req=$2 exe=$3 dir="$CACHE/$1"
  if [ ! -x "$dir/bin/$exe" ] || [ "$(cat "$dir/.skillci-req" 2>/dev/null)" != "$req" ]; then
    local py
    py=$(find_python312) || die "no Python >= 3.12 found (set SKILLCI_PYTHON312 or install one)"
    say "installing $req into $dir with $py"
    rm -rf "$dir"
    "$py" -m venv "$dir"
    "$dir/bin/python" -m pip install -q --disable-pip-version-check "$req" 2>&1 |
      grep -v 'is ignored' >&2 || true
    [ -x "$dir/bin/$exe" ] || die "installing $req did not produce $dir/bin/$exe"
    printf '%s' "$req" >"$dir/.skillci-req"
  fi
  printf '%s\n' "$dir/bin/$exe"
}

bench=$(venv "benchflow-$BENCHFLOW_VERSION" "benchflow==$BENCHFLOW_VERSION" bench)
harbor=$(venv "harbor-$HARBOR_VERSION" "harbor==$HARBOR_VERSION" harbor)
printf 'export SKILLCI_BENCH=%q SKILLCI_HARBOR=%q\n' "$bench" "$harbor"
