#!/usr/bin/env bash
# Prints the path of a thanos binary built from source by tools/thanos,
# building it first when this machine has none of that version. No prebuilt
# binary can be downloaded where CI runs, and the build takes minutes, so the
# binary is cached per version outside the work tree (CI builds it once per
# machine):
#   ${XDG_CACHE_HOME:-$HOME/.cache}/gpulens/thanos-<version>
# GPULENS_THANOS, when set, names a binary to use instead. With --cached it
# never builds: it prints the path, or fails when there is none.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

if [ -n "${GPULENS_THANOS:-}" ]; then
	echo "$GPULENS_THANOS"
	exit 0
fi
# The version comes from tools/thanos/go.mod, so bumping it there invalidates
# the cache without anyone remembering to.
ver=$(awk '$1 == "require" && $2 == "github.com/thanos-io/thanos" {print $3}' "$root/tools/thanos/go.mod")
[ -n "$ver" ] || { echo "thanos: no github.com/thanos-io/thanos version in tools/thanos/go.mod" >&2; exit 1; }
cache="${XDG_CACHE_HOME:-$HOME/.cache}/gpulens"
bin="$cache/thanos-$ver"
if [ ! -x "$bin" ]; then
	if [ "${1:-}" = "--cached" ]; then
		echo "thanos: $bin not built (scripts/thanos.sh builds it)" >&2
		exit 1
	fi
	mkdir -p "$cache"
	echo "thanos: building $ver from source into $bin (minutes)" >&2
	start=$(date +%s)
	# Thanos's go.mod needs Go 1.26.10, newer than the machine's own may be
	# (and its go env may say GOTOOLCHAIN=local); the main module's
	# toolchain line names one that satisfies it, which the go command
	# fetches from the module proxy.
	GOTOOLCHAIN="$(awk '$1 == "toolchain" {print $2}' "$root/go.mod")"
	export GOTOOLCHAIN
	# The build tags of Thanos's own release builds (.promu.yml): slicelabels
	# selects the labels representation its code is written for.
	# Built under a temporary name and renamed, so an interrupted build never
	# leaves a truncated binary that later runs would take for the real one.
	(cd "$root/tools/thanos" && go build -trimpath -tags netgo,slicelabels -o "$bin.tmp.$$" github.com/thanos-io/thanos/cmd/thanos)
	mv "$bin.tmp.$$" "$bin"
	echo "thanos: built in $(($(date +%s) - start))s" >&2
fi
echo "$bin"
