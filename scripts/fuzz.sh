#!/usr/bin/env bash
# Builds the fuzz targets with libFuzzer and AddressSanitizer and runs each for the given number
# of seconds (default 30), starting from its committed corpus in Fuzz/Corpus/<target> (read only;
# inputs found now go to .build-fuzz/corpus/<target>). Fails on any crash, sanitizer report or
# broken property, printing how to replay the input; prints executions/s and coverage per target.
#
#   bash scripts/fuzz.sh [seconds] [target ...]      (targets: bash scripts/fuzz.sh 0 list)
#
# The fuzz build has its own scratch path, so it never invalidates the normal .build.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-30}"
shift || true
all_targets=(json format routing etags parameters multipart archive profile expectation)
targets=("${@:-${all_targets[@]}}")

scratch=.build-fuzz
bash scripts/install-deps.sh
echo "== building feed-fuzz with -sanitize=fuzzer,address (scratch path $scratch)"
build_started=$(date +%s)
# -O: about twice the executions per second of -Onone; the debug configuration keeps testability
# (the checks use @testable import) and -DFUZZING makes the binary drive libFuzzer.
build_log=$(mktemp)
if ! swift build --product feed-fuzz --scratch-path "$scratch" \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING -Xswiftc -O >"$build_log" 2>&1; then
  grep -v "Cannot export local symbol" "$build_log" | tail -40
  exit 1
fi
rm -f "$build_log"
echo "   built in $(( $(date +%s) - build_started )) s"
binary="$scratch/debug/feed-fuzz"
if [ "${targets[0]}" = list ]; then
  "$binary" list
  exit 0
fi

# Swift's own crash reporter would read the crashed process's memory under ASan and confuse the
# report; libFuzzer prints the stack itself. Leaks are checked per input (LeakSanitizer).
export SWIFT_BACKTRACE=enable=no
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"

failed=()
printf '\n%-11s %10s %9s %6s %7s %7s  %s\n' target executions "exec/s" cov features corpus result
for target in "${targets[@]}"; do
  work="$scratch/corpus/$target"
  findings="$scratch/findings/$target"
  log="$scratch/logs/$target.log"
  mkdir -p "$work" "$findings" "$(dirname "$log")"
  dictionary=()
  [ -f "Fuzz/Dictionaries/$target.dict" ] && dictionary=(-dict="Fuzz/Dictionaries/$target.dict")
  status=0
  "$binary" "$target" -max_total_time="$seconds" -print_final_stats=1 -timeout=10 -rss_limit_mb=4096 \
    -max_len=8192 -artifact_prefix="$findings/" "${dictionary[@]}" "$work" "Fuzz/Corpus/$target" >"$log" 2>&1 || status=$?
  executions=$(awk '/stat::number_of_executed_units/ {print $2}' "$log")
  rate=$(awk '/stat::average_exec_per_sec/ {print $2}' "$log")
  last=$(grep -E '^#[0-9]+.*cov: ' "$log" | tail -1 || true)
  cov=$(sed -nE 's/.*cov: ([0-9]+).*/\1/p' <<<"$last")
  features=$(sed -nE 's/.*ft: ([0-9]+).*/\1/p' <<<"$last")
  corpus=$(sed -nE 's/.*corp: ([0-9]+).*/\1/p' <<<"$last")
  result=ok
  [ "$status" -ne 0 ] && result="FAILED (exit $status)"
  printf '%-11s %10s %9s %6s %7s %7s  %s\n' "$target" "${executions:--}" "${rate:--}" "${cov:--}" "${features:--}" "${corpus:--}" "$result"
  if [ "$status" -ne 0 ]; then
    failed+=("$target")
    echo "---- $log (last 60 lines)"
    tail -60 "$log"
    for artifact in "$findings"/*; do
      [ -e "$artifact" ] || continue
      echo "---- input saved as $artifact; replay it with:"
      echo "     swift build --product feed-fuzz && .build/debug/feed-fuzz $target $artifact"
      echo "     (fix, then add it to Fuzz/Corpus/$target/regression-<what> and write a regression test: docs/testing.md)"
    done
  fi
done

if [ "${#failed[@]}" -gt 0 ]; then
  echo "fuzzing found problems in: ${failed[*]}"
  exit 1
fi
