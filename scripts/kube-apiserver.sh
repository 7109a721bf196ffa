#!/usr/bin/env bash
# Prints the path of a kube-apiserver built from source by tools/kube and
# cached per version (scripts/tool-binary.sh says how).
# GPULENS_KUBE_APISERVER, when set, names a binary to use instead. With
# --cached it never builds: it prints the path, or fails when there is none.
set -euo pipefail
exec "$(dirname "$0")/tool-binary.sh" kube-apiserver GPULENS_KUBE_APISERVER tools/kube \
	k8s.io/kubernetes k8s.io/kubernetes/cmd/kube-apiserver "" "$@"
