#!/usr/bin/env bash
# Peak memory of `gpulens report` over a window much longer than the data:
# the analysis starts its window at the store's first sample, so --since
# 3650d over a two-day demo store must stay under 1.5 times the peak of
# --since 7d (issue 45). Before that, the PromQL engine's subqueries held
# every step of the window asked for: over 3 GB within 5 s.
# Usage:
#   scripts/bench-window.sh [SINCE ...]     (default: 7d 3650d)
# Environment:
#   GPULENS    a gpulens binary to measure instead of building this tree's
#   DURATION   the demo store's length (default 2d)
#   DATA_DIR   reuse (or keep) the demo store in this directory
# Each run's line: bench-window since=S rc=R wall_s=W rss_mib=M; the last
# line says whether the longest window stayed under 1.5 times the first.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOTOOLCHAIN="$(awk '$1 == "toolchain" {print $2}' go.mod)"
export CGO_CFLAGS="${CGO_CFLAGS:--O2 -g -Wno-deprecated-declarations}"
DURATION="${DURATION:-2d}"
windows=("$@")
[ "${#windows[@]}" -gt 0 ] || windows=(7d 3650d)
command -v /usr/bin/time >/dev/null || { echo "bench-window: needs GNU time (/usr/bin/time, Debian package time)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bin="${GPULENS:-}"
if [ -z "$bin" ]; then
	go build -o "$work/gpulens" ./cmd/gpulens
	bin="$work/gpulens"
fi
data="${DATA_DIR:-$work/demo}"
if [ ! -d "$data" ]; then
	"$bin" demo --duration "$DURATION" --data-dir "$data" -q >/dev/null
fi

first=""
last=""
for since in "${windows[@]}"; do
	rc=0
	/usr/bin/time -v -o "$work/time" "$bin" report --data-dir "$data" --since "$since" --no-kubernetes -q --format json \
		>/dev/null 2>"$work/stderr" || rc=$?
	[ "$rc" -eq 0 ] || { echo "bench-window: --since $since failed (exit $rc):" >&2; cat "$work/stderr" >&2; }
	rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$work/time")
	wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$work/time")
	printf 'bench-window since=%s rc=%d wall=%s rss_mib=%.1f\n' "$since" "$rc" "$wall" "$(echo "$rss/1024" | bc -l)"
	[ -n "$first" ] || first=$rss
	last=$rss
done
ratio=$(echo "$last/$first" | bc -l)
printf 'bench-window ratio=%.2f (%s over %s; limit 1.5)\n' "$ratio" "${windows[-1]}" "${windows[0]}"
[ "$(echo "$ratio < 1.5" | bc -l)" -eq 1 ]
