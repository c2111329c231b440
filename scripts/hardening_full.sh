#!/usr/bin/env bash
# The full hardening run (issue 10): long fuzzing, many hypothesis examples, 100,000
# messages through each proxy with 64 stdio clients, and the 1 MB adversarial benchmark.
# CI runs the small variants of the same tests (tests/hardening/). Takes about 45 minutes
# on 2 cores; FUZZ_SECONDS (default 600 per target) sets the fuzzing time.
set -euo pipefail
cd "$(dirname "$0")/.."
py=.venv/bin/python
export ELICITGUARD_REQUIRE_INTEGRATION=1
export ELICITGUARD_HYPOTHESIS_EXAMPLES="${ELICITGUARD_HYPOTHESIS_EXAMPLES:-2000}"
export ELICITGUARD_FUZZ_RUNS="${ELICITGUARD_FUZZ_RUNS:-20000}"
export ELICITGUARD_LOAD_MESSAGES="${ELICITGUARD_LOAD_MESSAGES:-100000}"
export ELICITGUARD_LOAD_STDIO_CLIENTS="${ELICITGUARD_LOAD_STDIO_CLIENTS:-64}"
fuzz/run.sh all "${FUZZ_SECONDS:-600}"
.venv/bin/pytest -q -s -p no:cacheprovider tests/hardening tests/security \
  tests/audit/test_secrets_never_logged.py tests/engine/test_policy_loading.py
$py benchmarks/bench_adversarial.py --size 1048576
