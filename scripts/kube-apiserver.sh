#!/usr/bin/env bash
# Prints the path of a kube-apiserver built from source by tools/kube, building
# it first when this machine has none of that version. No prebuilt binary can
# be downloaded where CI runs, and the build takes minutes, so the binary is
# cached per version outside the work tree (CI builds it once per machine):
#   ${XDG_CACHE_HOME:-$HOME/.cache}/gpulens/kube-apiserver-<version>
# GPULENS_KUBE_APISERVER, when set, names a binary to use instead. With
# --cached it never builds: it prints the path, or fails when there is none.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

if [ -n "${GPULENS_KUBE_APISERVER:-}" ]; then
	echo "$GPULENS_KUBE_APISERVER"
	exit 0
fi
# The version comes from tools/kube/go.mod, so bumping it there invalidates
# the cache without anyone remembering to.
ver=$(awk '$1 == "require" && $2 == "k8s.io/kubernetes" {print $3}' "$root/tools/kube/go.mod")
[ -n "$ver" ] || { echo "kube-apiserver: no k8s.io/kubernetes version in tools/kube/go.mod" >&2; exit 1; }
cache="${XDG_CACHE_HOME:-$HOME/.cache}/gpulens"
bin="$cache/kube-apiserver-$ver"
if [ ! -x "$bin" ]; then
	if [ "${1:-}" = "--cached" ]; then
		echo "kube-apiserver: $bin not built (scripts/kube-apiserver.sh builds it)" >&2
		exit 1
	fi
	mkdir -p "$cache"
	echo "kube-apiserver: building $ver from source into $bin (minutes)" >&2
	start=$(date +%s)
	# Built under a temporary name and renamed, so an interrupted build never
	# leaves a truncated binary that later runs would take for the real one.
	(cd "$root/tools/kube" && go build -trimpath -o "$bin.tmp.$$" k8s.io/kubernetes/cmd/kube-apiserver)
	mv "$bin.tmp.$$" "$bin"
	echo "kube-apiserver: built in $(($(date +%s) - start))s" >&2
fi
echo "$bin"
