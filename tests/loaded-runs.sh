#!/usr/bin/env bash
# The whole suite N times (default 5) with both cores busy, the way CI runs it: each run is a fresh
# `git clone` of HEAD and `CI=true bash .ci/run`. Two runs go at once (two chains), and two CPU
# burners at nice 10 take whatever the suites leave idle, so no core is ever free. Prints one line
# per run and the load average every minute; exits non-zero if any run failed.
#
#   tests/loaded-runs.sh [N] [SCRATCH]        (SCRATCH defaults to /tmp/loaded-runs; about 1 h for 5)
#
# The clones need the shared kit beside them, as CI has it: ../shared, or SHARED=/path/to/shared.
set -uo pipefail
runs=${1:-5}
scratch=${2:-/tmp/loaded-runs}
repo=$(git rev-parse --show-toplevel)
shared=${SHARED:-$(cd "$repo/.." && pwd)/shared}
[ -d "$shared/nextcloud" ] || { echo "no Nextcloud kit in $shared/nextcloud (set SHARED)" >&2; exit 2; }
commit=$(git -C "$repo" rev-parse --short HEAD)
rm -rf "$scratch" && mkdir -p "$scratch"

one_run() {  # one_run I: a fresh clone beside ../shared, then CI's command
	local dir="$scratch/run$1" start rc
	mkdir -p "$dir" && ln -s "$shared" "$dir/shared"
	git clone -q "$repo" "$dir/main" && git -C "$dir/main" checkout -q "$commit"
	start=$(date +%s)
	# `make test-loaded ARGS=...` hands ARGS to every make below it (in the environment and in
	# MAKEFLAGS); CI's make must not see it: it would become pytest's arguments.
	(cd "$dir/main" && env -u ARGS -u MAKEFLAGS -u MFLAGS -u MAKELEVEL CI=true bash .ci/run \
		</dev/null >"$scratch/run$1.log" 2>&1)
	rc=$?
	echo "run $1: commit $commit exit $rc in $(($(date +%s) - start)) s," \
		"$(grep -Eo '[0-9]+ passed[^=]*' "$scratch/run$1.log" | tail -1)" | tee -a "$scratch/summary.txt"
}

chain() {  # chain FIRST: runs FIRST, FIRST+2, ... up to N
	local i
	for ((i = $1; i <= runs; i += 2)); do one_run "$i"; done
}

chain 1 &
first=$!
chain 2 &
second=$!
yes >/dev/null &
burner1=$!
yes >/dev/null &
burner2=$!
renice -n 10 -p "$burner1" "$burner2" >/dev/null
trap 'kill $burner1 $burner2 $first $second 2>/dev/null' EXIT
while kill -0 "$first" 2>/dev/null || kill -0 "$second" 2>/dev/null; do
	echo "$(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >>"$scratch/load.txt"
	for _ in $(seq 60); do
		kill -0 "$first" 2>/dev/null || kill -0 "$second" 2>/dev/null || break
		sleep 1
	done
done
cat "$scratch/load.txt"
green=$(grep -c "exit 0 " "$scratch/summary.txt" 2>/dev/null)
echo "${green:-0} of $runs runs green ($scratch/summary.txt)"
[ "${green:-0}" -eq "$runs" ]
