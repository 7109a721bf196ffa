#!/usr/bin/env bash
# Builds both images with buildah from local bases only (no registry, no
# daemon, no network) and runs them: CI's check that the Dockerfiles build,
# that the binaries start inside them, and that they run as non-root.
#   analyzer: FROM scratch (the binary is static);
#   exporter: a base of the host's glibc, the libraries ldd names.
# The binaries are built on the host (BINARY_FROM=prebuilt): the release
# path compiles in golang's image, which cannot be pulled here.
set -euo pipefail
cd "$(dirname "$0")/../.."
# go.mod's toolchain line: the machine's own Go may be older and set GOTOOLCHAIN=local.
export GOTOOLCHAIN="$(awk '$1 == "toolchain" {print $2}' go.mod)"
export STORAGE_DRIVER=vfs
B=(buildah --storage-driver vfs)
tag=localhost/gpulens-build-test

mkdir -p bin
# glibc warns about every NSS function a static binary links; netgo and
# osusergo mean none is called, so only a failure prints.
if ! out=$(CGO_ENABLED=1 go build -tags netgo,osusergo -ldflags '-s -w -linkmode external -extldflags -static' \
	-o bin/gpulens ./cmd/gpulens 2>&1); then
	echo "$out" >&2
	exit 1
fi
go build -o bin/gpulens-exporter ./cmd/gpulens-exporter

# The exporter's base: the dynamic loader and every library it needs.
# bud leaves a working container behind for the stage that only names
# another (FROM ${BINARY_FROM}); those created by this run are removed.
before=$("${B[@]}" containers -q)
base=$("${B[@]}" from scratch)
# The images are only for this check: remove them and the stages' images
# (vfs keeps full copies, about 300 MB a run).
cleanup() {
	for c in $("${B[@]}" containers -q); do
		grep -qx "$c" <<<"$before" || "${B[@]}" rm "$c" >/dev/null 2>&1 || true
	done
	"${B[@]}" rmi "$tag-gpulens" "$tag-exporter" "$tag-glibc-base" >/dev/null 2>&1 || true
	"${B[@]}" rmi --prune >/dev/null 2>&1 || true
}
trap cleanup EXIT
mnt=$("${B[@]}" mount "$base")
for lib in $(ldd bin/gpulens-exporter | grep -o '/[^ ]*'); do
	mkdir -p "$mnt$(dirname "$lib")"
	cp -L "$lib" "$mnt$lib"
done
"${B[@]}" umount "$base" >/dev/null
"${B[@]}" commit -q "$base" "$tag-glibc-base" >/dev/null

build() { # dockerfile image base
	"${B[@]}" bud -q --isolation chroot -f "$1" --build-arg GO_IMAGE=scratch --build-arg BINARY_FROM=prebuilt \
		--build-arg BASE_IMAGE="$3" -t "$2" . >/dev/null
	local user
	user=$("${B[@]}" inspect --format '{{.OCIv1.Config.User}}' "$2")
	case "$user" in "" | 0 | 0:* | root | root:*) echo "build-test: $2 runs as root ($user)" >&2; exit 1 ;; esac
	echo "build-test: built $2 (user $user, $("${B[@]}" images --format '{{.Size}}' "$2"))"
}
run() { # image command...
	local c out rc attempt
	# buildah run has once exited 0 with no output at all on a loaded CI
	# machine (the same image answered at once when run again): an empty
	# answer gets a second try in a fresh container, anything else counts.
	for attempt in 1 2; do
		rc=0
		c=$("${B[@]}" from -q "$1")
		out=$("${B[@]}" run --isolation chroot "$c" -- "${@:2}" 2>&1) || rc=$?
		"${B[@]}" rm "$c" >/dev/null
		[ -n "$out" ] && break
		echo "build-test: $1 ${*:2}: no output (exit $rc), attempt $attempt" >&2
	done
	printf '%s\n' "$out"
	return $rc
}

build deploy/images/gpulens/Dockerfile "$tag-gpulens" scratch
# Output first, grep after: grep -q closing a pipe early would fail run
# with SIGPIPE under pipefail.
out=$(run "$tag-gpulens" /usr/local/bin/gpulens version)
grep -q '^gpulens, version' <<<"$out" || { echo "build-test: gpulens version failed: $out" >&2; exit 1; }

build deploy/images/gpulens-exporter/Dockerfile "$tag-exporter" "$tag-glibc-base"
out=$(run "$tag-exporter" /usr/local/bin/gpulens-exporter --version)
grep -q 'gpulens-exporter, version' <<<"$out" || { echo "build-test: exporter --version failed: $out" >&2; exit 1; }
# The simulator for a few seconds: it must be collecting, not crashing on a
# missing library. The image has no timeout(1): buildah run is stopped
# from outside, and SIGTERM reaches the exporter, which exits cleanly.
c=$("${B[@]}" from -q "$tag-exporter")
out=$(timeout -s TERM 5 "${B[@]}" run --isolation chroot "$c" -- /usr/local/bin/gpulens-exporter --backend=sim \
	--web.listen-address=127.0.0.1:0 --kubelet.pod-resources-socket= 2>&1 || true)
"${B[@]}" rm "$c" >/dev/null
grep -q 'msg=collecting' <<<"$out" || { echo "build-test: the exporter did not start collecting:" >&2; echo "$out" >&2; exit 1; }
echo "build-test: both images run"
