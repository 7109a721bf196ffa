#!/usr/bin/env bash
# Prints the path of a server binary built from source by a tool module
# under tools/, building it first when this machine has none of that
# version. No prebuilt binary can be downloaded where CI runs, and the
# builds take minutes, so each binary is cached per version outside the
# work tree (CI builds it once per machine):
#   ${XDG_CACHE_HOME:-$HOME/.cache}/gpulens/<name>-<version>
# Usage: tool-binary.sh NAME OVERRIDE_VAR TOOL_DIR MODULE PACKAGE TAGS [--cached]
# OVERRIDE_VAR, when set in the environment, names a binary to use instead.
# With --cached it never builds: it prints the path, or fails when there is
# none. scripts/kube-apiserver.sh and scripts/thanos.sh call it.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
name=$1 override=$2 dir=$3 module=$4 pkg=$5 tags=$6 mode=${7:-}

if [ -n "${!override:-}" ]; then
	echo "${!override}"
	exit 0
fi
# The version comes from the tool module's go.mod, so bumping it there
# invalidates the cache without anyone remembering to.
ver=$(awk -v m="$module" '$1 == "require" && $2 == m {print $3}' "$root/$dir/go.mod")
[ -n "$ver" ] || { echo "$name: no $module version in $dir/go.mod" >&2; exit 1; }
cache="${XDG_CACHE_HOME:-$HOME/.cache}/gpulens"
bin="$cache/$name-$ver"
if [ ! -x "$bin" ]; then
	if [ "$mode" = "--cached" ]; then
		echo "$name: $bin not built (scripts/$name.sh builds it)" >&2
		exit 1
	fi
	mkdir -p "$cache"
	echo "$name: building $ver from source into $bin (minutes)" >&2
	start=$(date +%s)
	# A tool's go.mod may need a newer Go than the machine's own (whose go
	# env may say GOTOOLCHAIN=local; Thanos needs 1.26.10); the main
	# module's toolchain line names one that satisfies them, which the go
	# command fetches from the module proxy.
	GOTOOLCHAIN="$(awk '$1 == "toolchain" {print $2}' "$root/go.mod")"
	export GOTOOLCHAIN
	# Built under a temporary name and renamed, so an interrupted build never
	# leaves a truncated binary that later runs would take for the real one.
	(cd "$root/$dir" && go build -trimpath ${tags:+-tags "$tags"} -o "$bin.tmp.$$" "$pkg")
	mv "$bin.tmp.$$" "$bin"
	echo "$name: built in $(($(date +%s) - start))s" >&2
fi
echo "$bin"
