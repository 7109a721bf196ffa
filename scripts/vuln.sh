#!/usr/bin/env bash
# Checks the code for known vulnerabilities without reaching vuln.go.dev:
# the database is built from the golang.org/x/vulndb module pinned in
# tools/go.mod (its data/osv, turned into a govulncheck database by the
# module's own cmd/gendb), cached by version, and govulncheck (pinned there
# too) scans ./... against it. Fails on every finding the code reaches,
# unless tools/vuln-exceptions.txt excuses it (only allowed while no fixed
# version exists, and only until its expiry date).
#
# Environment: VULNDB_DIR (use this database instead of building one),
# GPULENS_CACHE (default ${XDG_CACHE_HOME:-$HOME/.cache}/gpulens).
set -euo pipefail
cd "$(dirname "$0")/.."
# go.mod's toolchain line: the machine's own Go may be older and set GOTOOLCHAIN=local.
export GOTOOLCHAIN="$(awk '$1 == "toolchain" {print $2}' go.mod)"
root=$PWD
GO="${GO:-go}"
cache="${GPULENS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gpulens}"

db="${VULNDB_DIR:-}"
if [ -z "$db" ]; then
	version=$("$GO" -C tools list -m -f '{{.Version}}' golang.org/x/vulndb)
	db="$cache/vulndb/$version"
	if [ ! -f "$db/index/db.json" ]; then
		"$GO" -C tools mod download golang.org/x/vulndb
		src=$("$GO" -C tools list -m -f '{{.Dir}}' golang.org/x/vulndb)
		# gendb reads the reports from a git repository (each entry's
		# modified date is its last commit), and a module zip has no
		# history: commit data/osv once, dated by the pseudo-version's
		# timestamp so the database is the same wherever it is built.
		stamp=$(echo "$version" | sed -E 's/^v[0-9]+\.[0-9]+\.[0-9]+-(0\.)?([0-9]{14})-.*/\2/')
		date="${stamp:0:4}-${stamp:4:2}-${stamp:6:2}T${stamp:8:2}:${stamp:10:2}:${stamp:12:2}Z"
		work=$(mktemp -d)
		trap 'rm -rf "$work"' EXIT
		mkdir -p "$work/repo/data"
		cp -r "$src/data/osv" "$work/repo/data/"
		chmod -R u+w "$work/repo"
		git -C "$work/repo" init -q
		git -C "$work/repo" add data/osv
		GIT_AUTHOR_DATE="$date" GIT_COMMITTER_DATE="$date" \
			git -C "$work/repo" -c user.name=gpulens -c user.email=gpulens@localhost \
			-c commit.gpgsign=false commit -q -m "vulndb $version"
		echo "vuln: building the vulnerability database $version ($(ls "$src/data/osv" | wc -l) reports)" >&2
		"$GO" -C tools tool gendb -repo "$work/repo" -out "$work/db"
		mkdir -p "$(dirname "$db")"
		# A half-written database from an interrupted run is replaced whole.
		rm -rf "$db.tmp" "$db" && mv "$work/db" "$db.tmp" && mv -T "$db.tmp" "$db"
	fi
fi

"$GO" version
echo "vuln: database $db (modified $(sed -E 's/.*"modified":"([^"]*)".*/\1/' "$db/index/db.json"))" >&2
# govulncheck exits 3 when it finds anything, reachable or not; the gate
# decides from the JSON what counts, so that exit code is not the verdict.
out=$(mktemp)
trap 'rm -f "$out"; [ -n "${work:-}" ] && rm -rf "$work"' EXIT
set +e
"$GO" -C tools tool govulncheck -C "$root" -db "file://$db" -format json ./... >"$out"
rc=$?
set -e
if [ "$rc" -ne 0 ] && [ "$rc" -ne 3 ]; then
	echo "vuln: govulncheck failed (exit $rc)" >&2
	exit "$rc"
fi
"$GO" -C tools run ./vulngate -exceptions "$root/tools/vuln-exceptions.txt" <"$out"
