#!/usr/bin/env bash
# Runs the whole Swift test suite under ThreadSanitizer and under AddressSanitizer (with
# LeakSanitizer), each built in its own scratch path (.build-tsan, .build-asan) so the normal
# .build stays valid. Any report fails the run, including reports from the feed-server child
# processes the tests start: every process writes its reports to a log folder that must stay empty.
#
#   bash scripts/sanitizers.sh [thread|address ...]      (default: both)
#
# Why locks are pthread mutexes and which leaks are suppressed: docs/testing.md.
set -euo pipefail
cd "$(dirname "$0")/.."

sanitizers=("${@:-thread address}")
read -r -a sanitizers <<<"${sanitizers[*]}"

# ThreadSanitizer cannot see Synchronization.Mutex once it is contended (it hands the lock over
# in the kernel), so a Mutex would make this run report races that do not exist.
# ConcurrencyPrimitives' Lock is the project's lock.
if grep -rnE '\bMutex *[<(]' Sources Tests Fuzz --include='*.swift'; then
  echo "Synchronization.Mutex is invisible to ThreadSanitizer: use ConcurrencyPrimitives' Lock (docs/testing.md)." >&2
  exit 1
fi

bash scripts/install-deps.sh
# A crash report from Swift's backtracer would itself read freed or foreign memory under ASan.
export SWIFT_BACKTRACE=enable=no
suppressions="$PWD/scripts/sanitizers/lsan.supp"

for sanitizer in "${sanitizers[@]}"; do
  case "$sanitizer" in
    thread) scratch=.build-tsan ;;
    address) scratch=.build-asan ;;
    *) echo "unknown sanitizer '$sanitizer' (thread or address)" >&2; exit 2 ;;
  esac
  reports="$scratch/reports"
  rm -rf "$reports"
  mkdir -p "$reports"
  echo "== $sanitizer sanitizer: building (scratch path $scratch)"
  started=$(date +%s)
  swift build --build-tests --sanitize="$sanitizer" --scratch-path "$scratch"
  built=$(date +%s)
  echo "== $sanitizer sanitizer: swift test"
  status=0
  TSAN_OPTIONS="halt_on_error=0:exitcode=66:second_deadlock_stack=1:log_path=$PWD/$reports/tsan" \
  ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:exitcode=67:log_path=$PWD/$reports/asan" \
  LSAN_OPTIONS="suppressions=$suppressions:print_suppressions=0" \
    swift test --skip-build --sanitize="$sanitizer" --scratch-path "$scratch" || status=$?
  finished=$(date +%s)
  echo "== $sanitizer sanitizer: build $((built - started)) s, tests $((finished - built)) s"
  if compgen -G "$reports/*" >/dev/null; then
    echo "== $sanitizer sanitizer reports:" >&2
    for report in "$reports"/*; do
      echo "---- $report" >&2
      cat "$report" >&2
    done
    exit 1
  fi
  if [ "$status" -ne 0 ]; then
    echo "== swift test under the $sanitizer sanitizer failed (exit $status)" >&2
    exit "$status"
  fi
done
