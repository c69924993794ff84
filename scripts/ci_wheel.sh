#!/usr/bin/env bash
# The wheel users install: build the sdist and the wheel (the wheel is built from the sdist,
# so both are checked), install the wheel into a fresh venv outside the checkout, and run
# `skillci demo` from an empty directory with it — the bundled skill and tasks must come from
# the wheel's package data (skillci/data/, see setup.py), not from this checkout.
#
#   bash scripts/ci_wheel.sh [OUTDIR]    # OUTDIR (default dist/) keeps the sdist and wheel
#
# The release workflow (.github/workflows/publish.yml) builds what it publishes with this
# script, and so does the release dry-run test. SKILLCI_BUILD_PYTHON: a python with `build`
# installed (default: the checkout's .venv). The wheel's `skillci --version` must name the
# commit it was built from (design 350). SKILLCI_WHEEL_INDEX=URL (a pypiserver): upload there
# with twine and install skillci from that index instead of the wheel file (the dry run).
set -euo pipefail
unset PYTHONPATH PYTHONHOME  # the fresh venv must import the installed skillci, nothing else
SRC=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:-$SRC/dist}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/skillci-wheel.XXXXXX")
say() { printf 'ci_wheel: %s\n' "$*" >&2; }
PY=${SKILLCI_WHEEL_PYTHON:-python3.11}
BUILD_PY=${SKILLCI_BUILD_PYTHON:-$SRC/.venv/bin/python}
command -v "$PY" >/dev/null 2>&1 || PY=python3

rm -rf "$OUT"
"$BUILD_PY" -m build --outdir "$OUT" "$SRC" >"$WORK/build.log" 2>&1 ||
  { tail -30 "$WORK/build.log" >&2; say "error: python -m build failed"; exit 1; }
sdist=$(ls "$OUT"/skillci-*.tar.gz) wheel=$(ls "$OUT"/skillci-*.whl)
say "built $(basename "$sdist") and $(basename "$wheel")"
# every tracked file of skills/ and evals/ (dotfiles such as a task's .env included) is in the
# wheel under skillci/data/
git -C "$SRC" ls-files skills evals >"$WORK/tracked"
"$PY" - "$wheel" "$WORK/tracked" <<'PY' || { say "error: the wheel lacks bundled files"; exit 1; }
import sys, zipfile
names = set(zipfile.ZipFile(sys.argv[1]).namelist())
want = [f"skillci/data/{line.strip()}" for line in open(sys.argv[2]) if line.strip()]
missing = [w for w in want if w not in names] + [n for n in ["skillci/py.typed"] if n not in names]
print(f"ci_wheel: {len(want) - len(missing)}/{len(want)} bundled files in the wheel", file=sys.stderr)
if missing:
    sys.exit("missing: " + ", ".join(missing[:20]))
PY
tar -tzf "$sdist" >"$WORK/sdist.list"
grep -q '/skills/repo-debugger/SKILL.md$' "$WORK/sdist.list" || { say "error: skills/ is not in the sdist"; exit 1; }
grep -q '/evals/tasks/sec-secret-reveal/environment/.env$' "$WORK/sdist.list" || { say "error: evals/ is not whole in the sdist"; exit 1; }

install=("$wheel") pip_env=()
if [[ -n "${SKILLCI_WHEEL_INDEX:-}" ]]; then
  # the publish step, dry run: twine (what pypa/gh-action-pypi-publish runs) uploads both
  # files to the index at SKILLCI_WHEEL_INDEX (a loopback pypiserver in
  # tests/integration/test_release_dry_run.py), and the fresh venv installs skillci from that
  # index alone: no pip configuration, find-links or extra index, no cache
  version=${wheel##*/skillci-} version=${version%%-*}
  "$BUILD_PY" -m twine check --strict "$sdist" "$wheel" >&2
  "$BUILD_PY" -m twine upload --non-interactive --disable-progress-bar \
    --repository-url "$SKILLCI_WHEEL_INDEX/" -u dry-run -p dry-run "$sdist" "$wheel" >&2
  say "uploaded skillci $version to $SKILLCI_WHEEL_INDEX"
  install=(--no-cache-dir --index-url "$SKILLCI_WHEEL_INDEX/simple/" "skillci==$version")
  pip_env=(-u PIP_FIND_LINKS -u PIP_EXTRA_INDEX_URL -u PIP_INDEX_URL -u PIP_CONSTRAINT
    PIP_CONFIG_FILE=/dev/null)
fi
"$PY" -m venv "$WORK/venv"
env "${pip_env[@]}" "$WORK/venv/bin/python" -m pip install -q --disable-pip-version-check \
  "${install[@]}" 2>&1 | grep -v '^WARNING: Location' >&2 || true
"$WORK/venv/bin/python" -c 'import skillci' ||
  { say "error: skillci did not install from ${install[*]}"; exit 1; }
mkdir "$WORK/empty"
cd "$WORK/empty"
start=$(date +%s)
LITELLM_LOCAL_MODEL_COST_MAP=True "$WORK/venv/bin/skillci" demo --dir "$WORK/empty/demo" --no-html \
  >"$WORK/demo.log" 2>&1 || { tail -40 "$WORK/demo.log" >&2; say "error: skillci demo from the wheel failed"; exit 1; }
tail -12 "$WORK/demo.log"
"$WORK/venv/bin/python" - "$SRC" <<'PY'
import sys, pathlib, skillci
where = pathlib.Path(skillci.__file__).resolve()
assert not where.is_relative_to(pathlib.Path(sys.argv[1]).resolve()), f"skillci imported from the checkout: {where}"
PY
version=$("$WORK/venv/bin/skillci" --version)
head=$(git -C "$SRC" rev-parse HEAD)
[[ "$version" == *"(commit ${head:0:12})" ]] ||
  { say "error: the wheel's \`skillci --version\` is '$version', not built from ${head:0:12}"; exit 1; }
say "$version"
say "OK: skillci demo ran from the wheel in $(($(date +%s) - start)) s (outside the checkout)"
rm -rf "$WORK"
