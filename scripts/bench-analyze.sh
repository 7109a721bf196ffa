#!/usr/bin/env bash
# Benchmarks the analyzer's 7-day, 1-minute query set on the embedded engine
# (BenchmarkAnalyze in analyzer/query), as docs/BENCHMARKS.md reports it.
# Usage:
#   scripts/bench-analyze.sh [GPUS ...]        (default: 100 1000 10000)
# Environment:
#   TIMEOUT  limit per size, setup included, for timeout(1) (default 10m)
#   MAX_RSS_GIB  the run of a size is killed above this resident set
#            (default 16)
#   COUNT    repetitions per size, each with its own setup (default 1)
#   DAYS     the window in days, 1 to 7 (default 7), for fleets whose week
#            does not fit this machine
#   PROFILE  a directory: each sub-benchmark writes the CPU profile of its
#            timed loop and heap profiles before and after it there
#            (gpus=N-analyzer.cpu.pprof, ...heap0.pprof, ...heap1.pprof; the
#            last repetition's), for go tool pprof. Profiling costs a few
#            per cent of CPU: take the table's figures from a run without it.
#   CLUSTERS a number C: the fleet is written as C clusters of GPUS/C GPUs
#            (a cluster label on every series, node and pod names repeated
#            across clusters), and "analyzer" gives way to "clusters": the
#            analysis gpulens's pipeline does of a shared store (the
#            clusters' values, then each cluster alone, sharded within the
#            default sample budget, one at a time, results merged)
#   ANALYZER_ONLY  set to 1 to skip "engine" and "floor" (they run the
#            passes unsharded: a 10,000-GPU week needs about 20 GiB for them)
#   MEMCG_LIMIT_GIB  a number G (root, Linux cgroup v1 or v2 memory
#            controller): each run is put in a memory cgroup of its own,
#            which is limited to G GiB just before the timed loop (after the
#            setup, which needs more), as a Kubernetes memory limit limits
#            a pod: the kernel then reclaims the store's mapped block pages
#            as it needs to, and a run whose own memory does not fit is
#            killed by the OOM killer ("did not finish")
# With CLUSTERS or ANALYZER_ONLY set the table has a clusters column and
# the analysis's peak anonymous and file-backed resident memory (each its
# own peak, polled every 20 ms: file-backed is the store's blocks mapped
# in), and leaves out what was not run; without them it is as before.
#
# Each size runs in its own process (the test binary, under /usr/bin/time
# -v), which first writes 7 days of one-minute samples for the fleet and
# compacts them (not timed), then runs three sub-benchmarks on the same
# TSDB: "analyzer" (query.Analyze), "engine" (the bare promql.Engine
# running the exact queries Analyze issues, same concurrency, answers
# discarded) and "floor" (the bare engine reading every sample of every
# metric the analysis selects once: one count_over_time over the window per
# metric, same concurrency). analyzer / floor is how many times over the
# analysis pays for reading its data. Wall times are of one analysis (-benchtime=1x); the machine
# may be shared, so CPU seconds are reported too.
set -euo pipefail
cd "$(dirname "$0")/.."
# go.mod's toolchain line: the machine's own Go may be older and set GOTOOLCHAIN=local.
export GOTOOLCHAIN="$(awk '$1 == "toolchain" {print $2}' go.mod)"
TIMEOUT="${TIMEOUT:-10m}"
MAX_RSS_GIB="${MAX_RSS_GIB:-16}"
COUNT="${COUNT:-1}"
DAYS="${DAYS:-7}"
PROFILE="${PROFILE:-}"
CLUSTERS="${CLUSTERS:-}"
ANALYZER_ONLY="${ANALYZER_ONLY:-}"
MEMCG_LIMIT_GIB="${MEMCG_LIMIT_GIB:-}"
[ "$ANALYZER_ONLY" = 0 ] && ANALYZER_ONLY=""
# The table of the cluster / analyzer-only runs.
extended=""
[ -n "$CLUSTERS$ANALYZER_ONLY" ] && extended=1
if [ -n "$PROFILE" ]; then
	mkdir -p "$PROFILE"
	PROFILE=$(cd "$PROFILE" && pwd)
fi
sizes=("$@")
[ "${#sizes[@]}" -gt 0 ] || sizes=(100 1000 10000)

work=$(mktemp -d)
memcg=""
cleanup() {
	rm -rf "$work"
	[ -z "$memcg" ] || rmdir "$memcg" 2>/dev/null || true
}
trap cleanup EXIT
# memcg_limit_file is the file that limits the memory of cgroup $memcg.
memcg_limit_file=""
if [ -n "$MEMCG_LIMIT_GIB" ]; then
	if grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
		memcg=/sys/fs/cgroup/gpulens-bench-$$
		memcg_limit_file=$memcg/memory.max
		memcg_unlimited=max
	elif [ -d /sys/fs/cgroup/memory ]; then
		memcg=/sys/fs/cgroup/memory/gpulens-bench-$$
		memcg_limit_file=$memcg/memory.limit_in_bytes
		memcg_unlimited=-1
	else
		echo "MEMCG_LIMIT_GIB: no cgroup memory controller under /sys/fs/cgroup" >&2
		exit 2
	fi
	mkdir "$memcg" || { echo "MEMCG_LIMIT_GIB: cannot create $memcg (root is needed)" >&2; exit 2; }
fi
go test -c -o "$work/query.test" ./analyzer/query/

# field LINE UNIT prints the value before UNIT on a benchmark line.
field() { awk -v u="$2" '{for (i = 2; i <= NF; i++) if ($i == u) print $(i-1)}' <<<"$1"; }

echo "date: $(date -u +%Y-%m-%dT%H:%MZ); go: $(go version | awk '{print $3}'); cpus: $(nproc);" \
	"cpu: $(awk -F': ' '/model name/{print $2; exit}' /proc/cpuinfo);" \
	"memory: $(awk '/MemTotal/{printf "%.1f GiB", $2/1048576}' /proc/meminfo); load: $(cut -d' ' -f1-3 /proc/loadavg);" \
	"window: $DAYS days at 1 minute${CLUSTERS:+; clusters: $CLUSTERS}${ANALYZER_ONLY:+; analyzer only}${MEMCG_LIMIT_GIB:+; memory cgroup limit for the timed loop: $MEMCG_LIMIT_GIB GiB}"
echo
if [ -n "$extended" ]; then
	echo "| GPUs | clusters | analysis wall (s) | analysis CPU (s) | peak RSS, analysis (MiB) | RSS at its start (MiB) | peak anonymous (MiB) | peak file-backed (MiB) | queries | shards | bare engine wall (s) | bare engine CPU (s) | floor wall (s) | floor CPU (s) | analysis / floor, CPU | process peak RSS incl. setup, polled each second (MiB) | whole run (s) |"
	echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
else
echo "| GPUs | analyzer wall (s) | analyzer CPU (s) | peak RSS, analysis (MiB) | queries | shards | bare engine wall (s) | bare engine CPU (s) | analyzer / engine, wall | analyzer / engine, CPU | floor wall (s) | floor CPU (s) | analyzer / floor, wall | analyzer / floor, CPU | process peak RSS incl. setup, polled each second (MiB) | whole run (s) |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
fi
for n in "${sizes[@]}"; do
	for rep in $(seq 1 "$COUNT"); do
		log="$work/gpus-$n-$rep.log"
		start=$(date +%s)
		# The setup runs unlimited; the benchmark sets the limit itself.
		[ -z "$memcg" ] || echo "$memcg_unlimited" >"$memcg_limit_file"
		(cd analyzer/query && { [ -z "$memcg" ] || echo "$BASHPID" >"$memcg/cgroup.procs"; } &&
			GPULENS_BENCH_GPUS="$n" GPULENS_BENCH_DAYS="$DAYS" GPULENS_BENCH_PROFILE="$PROFILE" \
			GPULENS_BENCH_MEMCG_LIMIT_FILE="$memcg_limit_file" GPULENS_BENCH_MEMCG_LIMIT_GIB="$MEMCG_LIMIT_GIB" \
			GPULENS_BENCH_CLUSTERS="$CLUSTERS" GPULENS_BENCH_ANALYZER_ONLY="$ANALYZER_ONLY" exec timeout "$TIMEOUT" /usr/bin/time -v "$work/query.test" \
			-test.run '^$' -test.bench '^BenchmarkAnalyze$' -test.benchtime=1x -test.benchmem) >"$log" 2>&1 &
		pid=$!
		killed=""
		peak=0
		# Watch the test binary's resident set; kill the run above the cap.
		while kill -0 "$pid" 2>/dev/null; do
			for p in $(pgrep -f "$work/query.test" || true); do
				rss=$(awk '/VmRSS/{print $2}' "/proc/$p/status" 2>/dev/null || echo 0)
				[ "${rss:-0}" -gt "$peak" ] && peak=${rss:-0}
				if [ "${rss:-0}" -gt $((MAX_RSS_GIB * 1048576)) ]; then
					kill "$p" 2>/dev/null || true
					killed="over ${MAX_RSS_GIB} GiB RSS"
				fi
			done
			sleep 1
		done
		rc=0
		wait "$pid" || rc=$?
		# SIGKILL, not by the watch above: the cgroup's OOM killer.
		[ -n "$memcg" ] && [ -z "$killed" ] && [ "$rc" = 137 ] && killed="killed in its ${MEMCG_LIMIT_GIB} GiB memory cgroup (the OOM killer)"
		secs=$(($(date +%s) - start))
		grep -E "^Benchmark" "$log" >&2 || true
		an=$(grep -E "^BenchmarkAnalyze/gpus=$n/analyzer" "$log" || true)
		en=$(grep -E "^BenchmarkAnalyze/gpus=$n/engine" "$log" || true)
		fl=$(grep -E "^BenchmarkAnalyze/gpus=$n/floor" "$log" || true)
		# Polled, not /usr/bin/time's maximum: the benchmark resets the
		# kernel's high-water mark (clear_refs) before each timed loop.
		maxrss=$((peak / 1024))
		if [ -n "$extended" ]; then
			sub=analyzer
			[ -n "$CLUSTERS" ] && sub=clusters
			an=$(grep -E "^BenchmarkAnalyze/gpus=$n/$sub" "$log" || true)
			if [ -z "$an" ] || { [ -z "$ANALYZER_ONLY" ] && { [ -z "$en" ] || [ -z "$fl" ]; }; }; then
				why=${killed:-"exit status $rc"}
				[ "$rc" = 124 ] && why="timed out after $TIMEOUT"
				echo "| $n | ${CLUSTERS:-1} | did not finish: $why | | | | | | | | | | | | | ${maxrss:-?} | $secs |"
				grep -E '^\s+\S+_test\.go:[0-9]+:|^panic:|^--- FAIL' "$log" | head -5 >&2 || true
				tail -5 "$log" >&2
				continue
			fi
			awk -v n="$n" -v cl="$(field "$an" clusters/op)" -v ans="$(field "$an" ns/op)" -v acpu="$(field "$an" cpu-s/op)" \
				-v arss="$(field "$an" peak-RSS-MiB)" -v srss="$(field "$an" start-RSS-MiB)" \
				-v panon="$(field "$an" peak-anon-MiB)" -v pfile="$(field "$an" peak-file-MiB)" -v q="$(field "$an" queries/op)" -v sh="$(field "$an" shards/op)" \
				-v ens="$(field "$en" ns/op)" -v ecpu="$(field "$en" cpu-s/op)" -v fns="$(field "$fl" ns/op)" -v fcpu="$(field "$fl" cpu-s/op)" \
				-v maxrss="$maxrss" -v secs="$secs" 'BEGIN {
				if (cl == "") cl = 1
				e = "–"; ew = e; ec = e; fw = e; fc = e; r = e; sr = e; pa = e; pf = e
				if (srss != "") sr = sprintf("%.0f", srss)
				if (panon != "") { pa = sprintf("%.0f", panon); pf = sprintf("%.0f", pfile) }
				if (ens != "") { ew = sprintf("%.1f", ens/1e9); ec = sprintf("%.1f", ecpu) }
				if (fns != "") { fw = sprintf("%.1f", fns/1e9); fc = sprintf("%.1f", fcpu); r = sprintf("%.2f", acpu/fcpu) }
				printf "| %d | %d | %.1f | %.1f | %.0f | %s | %s | %s | %d | %d | %s | %s | %s | %s | %s | %s | %d |\n",
					n, cl, ans/1e9, acpu, arss, sr, pa, pf, q, sh, ew, ec, fw, fc, r, maxrss, secs
			}'
			continue
		fi
		if [ -z "$an" ] || [ -z "$en" ] || [ -z "$fl" ]; then
			why=${killed:-"exit status $rc"}
			[ "$rc" = 124 ] && why="timed out after $TIMEOUT"
			echo "| $n | did not finish: $why | | | | | | | | | | | | | ${maxrss:-?} | $secs |"
			# The test's own failure, then the end of the log.
			grep -E '^\s+\S+_test\.go:[0-9]+:|^panic:|^--- FAIL' "$log" | head -5 >&2 || true
			tail -5 "$log" >&2
			continue
		fi
		awk -v n="$n" -v ans="$(field "$an" ns/op)" -v acpu="$(field "$an" cpu-s/op)" -v arss="$(field "$an" peak-RSS-MiB)" \
			-v q="$(field "$an" queries/op)" -v sh="$(field "$an" shards/op)" -v ens="$(field "$en" ns/op)" -v ecpu="$(field "$en" cpu-s/op)" \
			-v fns="$(field "$fl" ns/op)" -v fcpu="$(field "$fl" cpu-s/op)" \
			-v maxrss="$maxrss" -v secs="$secs" 'BEGIN {
			printf "| %d | %.1f | %.1f | %.0f | %d | %d | %.1f | %.1f | %.2f | %.2f | %.1f | %.1f | %.2f | %.2f | %s | %d |\n",
				n, ans/1e9, acpu, arss, q, sh, ens/1e9, ecpu, ans/ens, acpu/ecpu, fns/1e9, fcpu, ans/fns, acpu/fcpu, maxrss, secs
		}'
	done
done
