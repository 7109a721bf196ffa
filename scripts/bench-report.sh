#!/usr/bin/env bash
# Times the commands a platform team runs on a synthetic week, as a user
# runs them: `gpulens report`, `recommend` and `plan` over a data directory
# holding BenchmarkAnalyze's fleet of N whole GPUs (7 days at one minute,
# compacted into blocks; analyzer/query TestWriteBenchWeek writes it), with
# the default --query.max-samples, no cluster access, JSON output.
# Usage:
#   scripts/bench-report.sh [GPUS ...]        (default: 1000 2000)
# Environment:
#   COMMANDS   the commands to time (default: "report recommend plan")
#   GPULENS    a gpulens binary to time instead of building this tree's
#              (to compare with another commit's on the same data)
#   DAYS       the window in days (default 7)
#   KEEP_DIR   keep the data directories under this path (and reuse them)
# Each command's last line: bench-report gpus=N cmd=C rc=R wall_s=W cpu_s=S rss_mib=M analysis_cpu_s=A
# (/usr/bin/time -v: elapsed, user + system, maximum resident set). A is the
# analysis alone on the same week, timed first in its own process: the
# directory opened read-only and one sharded analysis of the window
# (analyzer/query TestAnalyzeBenchWeek, this tree's), the yardstick of what
# a command adds to it.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOTOOLCHAIN="$(awk '$1 == "toolchain" {print $2}' go.mod)"
export CGO_CFLAGS="${CGO_CFLAGS:--O2 -g -Wno-deprecated-declarations}"
COMMANDS="${COMMANDS:-report recommend plan}"
DAYS="${DAYS:-7}"
sizes=("$@")
[ "${#sizes[@]}" -gt 0 ] || sizes=(1000 2000)
command -v /usr/bin/time >/dev/null || { echo "bench-report: needs GNU time (/usr/bin/time, Debian package time)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bin="${GPULENS:-}"
if [ -z "$bin" ]; then
	go build -o "$work/gpulens" ./cmd/gpulens
	bin="$work/gpulens"
fi
go test -c -o "$work/query.test" ./analyzer/query/
base="${KEEP_DIR:-$work}"
for n in "${sizes[@]}"; do
	dir="$base/week-$n-$DAYS"
	if [ ! -d "$dir" ]; then
		echo "bench-report: writing the week of $n GPUs to $dir" >&2
		GPULENS_BENCH_WRITE_DIR="$dir" GPULENS_BENCH_GPUS="$n" GPULENS_BENCH_DAYS="$DAYS" \
			go test -count=1 -timeout 60m -run '^TestWriteBenchWeek$' ./analyzer/query/ >/dev/null
	fi
	# The fleet's week starts at analyzer/query's t0, 2026-03-02T00:00:00Z.
	until=$(date -u -d "2026-03-02T00:00:00Z + $DAYS days" +%Y-%m-%dT%H:%M:%SZ)
	analysis=$( (cd analyzer/query && GPULENS_BENCH_READ_DIR="$dir" GPULENS_BENCH_DAYS="$DAYS" GPULENS_BENCH_GPUS="$n" \
		"$work/query.test" -test.count=1 -test.timeout=60m -test.run '^TestAnalyzeBenchWeek$' || true) | awk '/^analysis cpu_s=/ { print }')
	echo "bench-report gpus=$n $analysis" >&2
	analysis_cpu=$(echo "$analysis" | sed -n 's/.*cpu_s=\([0-9.]*\).*/\1/p')
	for cmd in $COMMANDS; do
		log="$work/$cmd-$n.time"
		rc=0
		/usr/bin/time -v -o "$log" "$bin" "$cmd" --data-dir "$dir" --since "${DAYS}d" --until "$until" \
			--no-kubernetes --quiet --format json >"$work/$cmd-$n.out" 2>"$work/$cmd-$n.err" || rc=$?
		[ "$rc" = 0 ] || sed 's/^/  /' "$work/$cmd-$n.err" | tail -3 >&2
		awk -v n="$n" -v cmd="$cmd" -v rc="$rc" -v analysis="${analysis_cpu:-?}" '
			/Elapsed \(wall clock\)/ { split($NF, t, ":"); wall = (length(t) == 3) ? t[1]*3600 + t[2]*60 + t[3] : t[1]*60 + t[2] }
			/User time/ { cpu += $NF } /System time/ { cpu += $NF }
			/Maximum resident set size/ { rss = $NF / 1024 }
			END { printf "bench-report gpus=%d cmd=%s rc=%d wall_s=%.1f cpu_s=%.1f rss_mib=%.0f analysis_cpu_s=%s\n", n, cmd, rc, wall, cpu, rss, analysis }' "$log"
	done
done
