#!/usr/bin/env bash
# Run one fuzz target (or all) for a given time: fuzz/run.sh TARGET|all SECONDS [libFuzzer args]
# TARGET is extract, urls, policy, captures, sse or bodies. The seed corpus under fuzz/corpus/TARGET is
# copied to a work folder (new inputs never touch the repository); crashes land in
# fuzz/findings/TARGET/ and each must become a regression test (tests/hardening/test_fuzz.py).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
py="${PYTHON:-$root/.venv/bin/python}"
target="${1:?usage: fuzz/run.sh TARGET|all SECONDS}"
seconds="${2:-60}"
shift 2 || true
if [ "$target" = all ]; then
  for t in extract urls policy captures sse bodies; do "$0" "$t" "$seconds" "$@"; done
  exit 0
fi
work="$(mktemp -d "${TMPDIR:-/tmp}/eg-fuzz-$target.XXXXXX")"
trap 'rm -rf "$work"' EXIT
cp -r "$here/corpus/$target/." "$work/"
mkdir -p "$here/findings/$target"
log="$here/findings/$target/last-run.log"
cd "$here"
set +e
"$py" "fuzz_$target.py" "$work" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
  -artifact_prefix="$here/findings/$target/" -print_final_stats=1 "$@" 2>"$log"
status=$?
set -e
runs="$(grep -Eo 'Done [0-9]+ runs' "$log" | tail -1 | grep -Eo '[0-9]+' || echo '?')"
echo "fuzz $target: ${runs} executions in ${seconds}s, exit status $status (log: $log)"
exit $status
