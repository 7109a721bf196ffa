#!/usr/bin/env bash
# Measures the running exporter's memory and CPU under a scrape loop, as
# docs/BENCHMARKS.md reports them. Usage:
#   scripts/bench-rss.sh [scenario.yaml ...]
# Environment: DURATION (seconds, default 180), SCRAPE_INTERVAL (default 15),
# COLLECT_INTERVAL (default 10s), EXPORTER (a binary to measure instead of
# building bin/gpulens-exporter from this tree, for before/after runs),
# PAGECACHE (read, the default, or linked: below). The exporter inherits
# the environment, so GOGC=... or GOMEMLIMIT=... apply to it.
set -euo pipefail
cd "$(dirname "$0")/.."
# go.mod's toolchain line: the machine's own Go may be older and set GOTOOLCHAIN=local.
export GOTOOLCHAIN="$(awk '$1 == "toolchain" {print $2}' go.mod)"
DURATION="${DURATION:-180}"
SCRAPE_INTERVAL="${SCRAPE_INTERVAL:-15}"
COLLECT_INTERVAL="${COLLECT_INTERVAL:-10s}"
PAGECACHE="${PAGECACHE:-read}"
scenarios=("$@")
[ "${#scenarios[@]}" -gt 0 ] || scenarios=(testdata/scenarios/a100-mig56.yaml testdata/scenarios/h100-timeslice64.yaml)

exporter="${EXPORTER:-}"
if [ -z "$exporter" ]; then
	go build -o bin/gpulens-exporter ./cmd/gpulens-exporter
	exporter=bin/gpulens-exporter
fi
clk_tck=$(getconf CLK_TCK)

# RSS counts the binary's file-backed pages that the kernel maps in, and how
# many depends on how the binary came into the page cache. Pages read in on
# a fault come in readahead windows, and the windows touched are mapped:
# PAGECACHE=read (the default) runs a copy of the binary whose pages were
# dropped from the page cache first (posix_fadvise DONTNEED, that file
# only), as when a node runs a binary it reads from disk; every run, and the
# before and after binaries, start from that same state. Pages the linker
# wrote through its mmap are large folios (ext4 and xfs, Linux 6.x), and a
# fault on one maps all of it: right after `go build` the whole binary ends
# up resident. PAGECACHE=linked runs the binary as it is, for that worst case
# (build it just before, as the default EXPORTER is).
case "$PAGECACHE" in read | linked) ;; *) echo "PAGECACHE must be read or linked, got $PAGECACHE" >&2; exit 2 ;; esac
tmp=$(mktemp -d)
run_bin="$exporter"
page_cache() {
	[ "$PAGECACHE" = read ] || return 0
	run_bin="$tmp/gpulens-exporter"
	rm -f "$run_bin"
	cp "$exporter" "$run_bin"
	python3 -c 'import os,sys; fd=os.open(sys.argv[1],os.O_RDONLY); os.fsync(fd); os.posix_fadvise(fd,0,0,os.POSIX_FADV_DONTNEED)' "$run_bin"
}
trap 'rm -rf "$tmp"' EXIT

# kib_of PID PERM: resident KiB of the binary's mappings with permissions PERM
# (r-xp: text; r--p: read-only data, type data and pclntab; rw-p: data).
kib_of() {
	awk -v bin="$(readlink -f "$run_bin")" -v perm="$2" \
		'/^[0-9a-f]+-[0-9a-f]+ / {m = ($6 == bin && $2 == perm)} m && /^Rss:/ {s += $2} END {print s + 0}' "/proc/$1/smaps"
}
mib() { echo "$1/1024" | bc -l; }

echo "binary: $exporter ($(stat -c %s "$exporter") bytes); collect interval: $COLLECT_INTERVAL; scrape interval: ${SCRAPE_INTERVAL}s; page cache: $PAGECACHE; GOGC=${GOGC:-} GOMEMLIMIT=${GOMEMLIMIT:-}"
echo "| scenario | scrapes | peak RSS (MiB) | final RSS (MiB) | binary text | binary rodata | other file-backed | anonymous | Go heap in use | Go stacks | CPU (cores, avg) | exposition bytes |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
for sc in "${scenarios[@]}"; do
	page_cache
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	"$run_bin" --backend=sim --sim.scenario="$sc" --collect.interval="$COLLECT_INTERVAL" \
		--web.listen-address="127.0.0.1:$port" --log.level=warn &
	pid=$!
	trap 'kill $pid 2>/dev/null || true; rm -rf "$tmp"' EXIT
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
	file=$(awk '/RssFile/{print $2}' /proc/$pid/status)
	text=$(kib_of "$pid" r-xp)
	rodata=$(kib_of "$pid" r--p)
	# The exporter's own Go runtime figures, from its /metrics.
	read -r heap stacks < <(curl -fsS "http://127.0.0.1:$port/metrics" |
		awk '$1 == "go_memstats_heap_inuse_bytes" {h = $2} $1 == "go_memstats_stack_inuse_bytes" {s = $2} END {printf "%d %d\n", h / 1024, s / 1024}')
	kill "$pid"; wait "$pid" 2>/dev/null || true
	printf '| %s | %d | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.4f | %d |\n' "$(basename "$sc")" "$n" \
		"$(mib "$peak")" "$(mib "$final")" "$(mib "$text")" "$(mib "$rodata")" "$(mib "($file-$text-$rodata)")" \
		"$(mib "$anon")" "$(mib "$heap")" "$(mib "$stacks")" \
		"$(echo "($t1-$t0)/$clk_tck/$elapsed" | bc -l)" "$bytes"
done
