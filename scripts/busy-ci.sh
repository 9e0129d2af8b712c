#!/usr/bin/env bash
# The suite on a busy machine (issue 34): CI's own run (.ci/run: npm ci, npm run lint,
# npm test, npm run test:artifact, npm run test:deploy) on a fresh clone of this repository's HEAD, while two CPU-bound processes run
# beside it for the whole run, as other work on a 2-core machine would. Passes when .ci/run
# passes; prints how long it took and checks that no process of the run is left behind.
#
#   scripts/busy-ci.sh            # clone HEAD into a temporary directory and run there
#   BUSY=3 scripts/busy-ci.sh     # three CPU-bound processes instead of two
#   KEEP=1 scripts/busy-ci.sh     # keep the clone (its path is printed)
#   CI_COMMAND='npm test' scripts/busy-ci.sh   # another command than .ci/run, in the clone
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
busy="${BUSY:-2}"
work="$(mktemp -d "${TMPDIR:-/tmp}/secrets-api-busy-ci-XXXXXX")"
hogs=()

cleanup() {
  local status=$?
  for pid in "${hogs[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait "${hogs[@]}" 2>/dev/null || true
  if [[ "${KEEP:-}" == 1 ]]; then echo "busy-ci: clone kept in $work"; else rm -rf "$work"; fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

git clone --quiet --no-hardlinks "$repo" "$work/repo"
git -C "$work/repo" checkout --quiet "$(git -C "$repo" rev-parse HEAD)"
echo "busy-ci: fresh clone of $(git -C "$repo" rev-parse --short HEAD) in $work/repo; $busy CPU-bound processes beside it ($(nproc) cores)"

# each busy process spins one core at 100 % until the run ends
for _ in $(seq "$busy"); do
  node -e 'for (;;) {}' &
  hogs+=("$!")
done

start=$(date +%s)
set +e
# a session of its own (its id is this pid): what the run leaves behind is found by session
setsid bash -c 'cd "$1" && eval "$2"' busy-ci "$work/repo" "${CI_COMMAND:-.ci/run}" &
run=$!
wait "$run"
status=$?
set -e
elapsed=$(( $(date +%s) - start ))

# the run's session (setsid) must be empty: nothing it started may outlive it
left="$(ps -eo sid=,pid=,args= | awk -v s="$run" '$1 == s { $1 = ""; print }')"
if [[ -n "$left" ]]; then
  echo "busy-ci: FAIL processes of the run still running after it ended (killed now):"
  echo "$left"
  pkill -KILL -s "$run" || true
  status=1
fi
echo "busy-ci: ${CI_COMMAND:-.ci/run} exit $status after ${elapsed} s with $busy busy processes"
exit "$status"
