#!/usr/bin/env bash
# Prints the path of a thanos binary built from source by tools/thanos and
# cached per version (scripts/tool-binary.sh says how).
# GPULENS_THANOS, when set, names a binary to use instead. With --cached it
# never builds: it prints the path, or fails when there is none.
# The tags are those of Thanos's own release builds (.promu.yml):
# slicelabels selects the labels representation its code is written for.
set -euo pipefail
exec "$(dirname "$0")/tool-binary.sh" thanos GPULENS_THANOS tools/thanos \
	github.com/thanos-io/thanos github.com/thanos-io/thanos/cmd/thanos netgo,slicelabels "$@"
