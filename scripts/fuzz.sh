#!/usr/bin/env bash
# Runs every fuzz target in the module for a bounded time each: `go test
# -fuzz` takes one target per invocation, so they are listed and run one by
# one. A failing input is written by go test to the package's
# testdata/fuzz/FuzzX/ and fails the run; commit it as a regression case
# (plain `go test` replays it from then on).
# Environment: FUZZTIME (per target, default 10s), PKGS (default ./...).
set -euo pipefail
cd "$(dirname "$0")/.."
# go.mod's toolchain line: the machine's own Go may be older and set GOTOOLCHAIN=local.
export GOTOOLCHAIN="$(awk '$1 == "toolchain" {print $2}' go.mod)"
FUZZTIME="${FUZZTIME:-10s}"
PKGS="${PKGS:-./...}"

targets=0
failed=()
# `go test -list` prints the package's tests and fuzz targets, then "ok".
for pkg in $(go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{end}}' $PKGS); do
	dir=$(go list -f '{{.Dir}}' "$pkg")
	grep -qs '^func Fuzz' "$dir"/*_test.go || continue
	for fn in $(go test -list '^Fuzz' "$pkg" | grep '^Fuzz'); do
		targets=$((targets + 1))
		echo "fuzz: $pkg $fn for $FUZZTIME"
		# -run selects the target's seed corpus alone before fuzzing
		# starts, so the package's other tests are not rerun each time.
		if ! go test -run "^$fn\$" -fuzz "^$fn\$" -fuzztime "$FUZZTIME" "$pkg"; then
			failed+=("$pkg $fn")
		fi
	done
done
echo "fuzz: $targets targets, ${#failed[@]} failed"
if [ "${#failed[@]}" -gt 0 ]; then
	printf 'fuzz: FAIL %s (new inputs in its testdata/fuzz/)\n' "${failed[@]}"
	exit 1
fi
