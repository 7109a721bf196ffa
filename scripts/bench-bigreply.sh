#!/usr/bin/env bash
# Peak memory of `gpulens report` against a Prometheus API whose every reply
# is too large (issue 52): scripts/bigreply streams a well-formed 600 MB JSON
# reply to each query, chunked and then with its Content-Length, and the
# report must exit non-zero with an error naming --query.max-reply-size and
# its limit, under 1.5 GiB of RSS. Before the limit it read each reply whole:
# 3.2 GiB for a 600 MB reply, OOM-killed at about 4 GB.
# Usage:
#   scripts/bench-bigreply.sh [ARG ...]   (ARGs go to gpulens report, e.g.
#                                          --query.max-reply-size 1GiB)
# Environment:
#   GPULENS    a gpulens binary to measure instead of building this tree's
#   SIZE       bytes of each reply (default 600000000)
# Each run's line: bench-bigreply mode=M rc=R wall=W rss_mib=M, then the
# error; the last line says whether every run failed under 1.5 GiB.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOTOOLCHAIN="$(awk '$1 == "toolchain" {print $2}' go.mod)"
export CGO_CFLAGS="${CGO_CFLAGS:--O2 -g -Wno-deprecated-declarations}"
SIZE="${SIZE:-600000000}"
command -v /usr/bin/time >/dev/null || { echo "bench-bigreply: needs GNU time (/usr/bin/time, Debian package time)" >&2; exit 1; }

work=$(mktemp -d)
server=""
trap '[ -z "$server" ] || kill "$server" 2>/dev/null; rm -rf "$work"' EXIT
bin="${GPULENS:-}"
if [ -z "$bin" ]; then
	go build -o "$work/gpulens" ./cmd/gpulens
	bin="$work/gpulens"
fi
go build -o "$work/bigreply" ./scripts/bigreply

ok=1
for mode in chunked content-length; do
	flag=()
	[ "$mode" = chunked ] || flag=(-content-length)
	"$work/bigreply" -size "$SIZE" "${flag[@]}" >"$work/addr" 2>"$work/server.log" &
	server=$!
	for _ in $(seq 50); do [ -s "$work/addr" ] && break; sleep 0.1; done
	url="http://$(cat "$work/addr")"
	rc=0
	/usr/bin/time -v -o "$work/time" "$bin" report --prometheus-url "$url" --no-kubernetes -q "$@" \
		>/dev/null 2>"$work/stderr" || rc=$?
	kill "$server" 2>/dev/null || true
	wait "$server" 2>/dev/null || true
	server=""
	rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$work/time")
	wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$work/time")
	printf 'bench-bigreply mode=%s size=%s rc=%d wall=%s rss_mib=%.1f\n' "$mode" "$SIZE" "$rc" "$wall" "$(echo "$rss/1024" | bc -l)"
	grep '^error:' "$work/stderr" || tail -n 3 "$work/stderr"
	sed 's/^/  server: /' "$work/server.log"
	if [ "$rc" -eq 0 ] || [ "$rss" -ge $((1536 * 1024)) ] || ! grep -q -- '--query.max-reply-size' "$work/stderr"; then
		ok=0
	fi
done
if [ "$ok" -eq 1 ]; then
	echo "bench-bigreply: every run failed naming --query.max-reply-size, under 1.5 GiB"
else
	echo "bench-bigreply: a run succeeded, did not name the limit, or took 1.5 GiB or more"
	exit 1
fi
