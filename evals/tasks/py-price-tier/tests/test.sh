#!/usr/bin/env bash
# Verifier: the checks listed in verify.json (hidden tests, no unrelated changes, task
# checks, no secret leaks). Writes ${LOGS_DIR:-/logs}/verifier/reward.txt and reward.json.
set -u
TESTS_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
LOGS="${LOGS_DIR:-/logs}"
mkdir -p "$LOGS/verifier"
python3 "$TESTS_DIR/verify.py" --tests-dir "$TESTS_DIR" --logs "$LOGS" --workspace "$PWD"
