#!/usr/bin/env bash
# Measures the running exporter's memory and CPU under a scrape loop, as
# docs/BENCHMARKS.md reports them. Usage:
#   scripts/bench-rss.sh [scenario.yaml ...]
# Environment: DURATION (seconds, default 180), SCRAPE_INTERVAL (default 15),
# COLLECT_INTERVAL (default 10s), EXPORTER (a binary to measure instead of
# building bin/gpulens-exporter from this tree, for before/after runs).
set -euo pipefail
cd "$(dirname "$0")/.."
# go.mod's toolchain line: the machine's own Go may be older and set GOTOOLCHAIN=local.
export GOTOOLCHAIN="$(awk '$1 == "toolchain" {print $2}' go.mod)"
DURATION="${DURATION:-180}"
SCRAPE_INTERVAL="${SCRAPE_INTERVAL:-15}"
COLLECT_INTERVAL="${COLLECT_INTERVAL:-10s}"
scenarios=("$@")
[ "${#scenarios[@]}" -gt 0 ] || scenarios=(testdata/scenarios/a100-mig56.yaml testdata/scenarios/h100-timeslice64.yaml)

exporter="${EXPORTER:-}"
if [ -z "$exporter" ]; then
	go build -o bin/gpulens-exporter ./cmd/gpulens-exporter
	exporter=bin/gpulens-exporter
fi
clk_tck=$(getconf CLK_TCK)

# RSS counts the binary's file-backed pages that the kernel maps in (with
# fault-around, most of a binary that sits in the page cache); anonymous RSS
# is the exporter's own memory (heap, stacks). Both are reported.
echo "binary: $exporter ($(stat -c %s "$exporter") bytes); collect interval: $COLLECT_INTERVAL; scrape interval: ${SCRAPE_INTERVAL}s"
echo "| scenario | scrapes | peak RSS (MiB) | final RSS (MiB) | final anon RSS (MiB) | CPU (cores, avg) | exposition bytes |"
echo "|---|---|---|---|---|---|---|"
for sc in "${scenarios[@]}"; do
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	"$exporter" --backend=sim --sim.scenario="$sc" --collect.interval="$COLLECT_INTERVAL" \
		--web.listen-address="127.0.0.1:$port" --log.level=warn &
	pid=$!
	trap 'kill $pid 2>/dev/null || true' EXIT
	for _ in $(seq 1 100); do curl -fsS -o /dev/null "http://127.0.0.1:$port/healthz" 2>/dev/null && break; sleep 0.1; done
	read -r t0 < <(awk '{print $14+$15}' /proc/$pid/stat)
	start=$(date +%s.%N)
	peak=0; n=0; bytes=0
	end=$(( $(date +%s) + DURATION ))
	while [ "$(date +%s)" -lt "$end" ]; do
		bytes=$(curl -fsS "http://127.0.0.1:$port/metrics" | wc -c)
		n=$((n+1))
		rss=$(awk '/VmRSS/{print $2}' /proc/$pid/status)
		[ "$rss" -gt "$peak" ] && peak=$rss
		sleep "$SCRAPE_INTERVAL"
	done
	read -r t1 < <(awk '{print $14+$15}' /proc/$pid/stat)
	elapsed=$(echo "$(date +%s.%N) - $start" | bc -l)
	final=$(awk '/VmRSS/{print $2}' /proc/$pid/status)
	anon=$(awk '/RssAnon/{print $2}' /proc/$pid/status)
	kill "$pid"; wait "$pid" 2>/dev/null || true
	printf '| %s | %d | %.1f | %.1f | %.1f | %.4f | %d |\n' "$(basename "$sc")" "$n" \
		"$(echo "$peak/1024" | bc -l)" "$(echo "$final/1024" | bc -l)" "$(echo "$anon/1024" | bc -l)" \
		"$(echo "($t1-$t0)/$clk_tck/$elapsed" | bc -l)" "$bytes"
done
