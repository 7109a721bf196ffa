package cgroup

import (
	"fmt"
	"strings"
)

const (
	podPrefix      = "pod"
	sliceSuffix    = ".slice"
	scopeSuffix    = ".scope"
	kubepods       = "kubepods"
	containerIDLen = 64
	podUUIDLen     = 36
	staticUIDLen   = 32 // md5 hex of the manifest, used as UID of static pods
	parentDir      = ".."
)

// containerPrefixes are the scope prefixes of the systemd driver, also used
// by CRI-O under cgroupfs. The conmon scope of CRI-O (crio-conmon-<id>) is
// deliberately absent: its processes are the monitor, not the container.
var containerPrefixes = []struct {
	prefix  string
	runtime Runtime
}{
	{"cri-containerd-", RuntimeContainerd},
	{"crio-", RuntimeCRIO},
	{"docker-", RuntimeDocker},
}

// ParsePath reads one cgroup path, such as the part of a /proc/<pid>/cgroup
// line after the second colon. It finds the innermost pod cgroup, so a
// cluster nested in a pod (kind, vcluster) resolves to the inner pod, and
// takes the container from the cgroup right below it, so processes in
// sub-cgroups a container creates still resolve to that container.
func ParsePath(path string) (Ref, error) {
	path = strings.TrimSuffix(path, " (deleted)") // cgroup v2 marks removed cgroups
	segments := strings.Split(path, "/")
	for i := len(segments) - 1; i >= 0; i-- {
		uid, qos, ok := parsePodSegment(segments, i)
		if !ok {
			continue
		}
		if i+1 >= len(segments) || segments[i+1] == "" {
			return Ref{}, fmt.Errorf("cgroup path %q is in pod %s but in no container", path, uid)
		}
		id, runtime, err := parseContainerSegment(segments[i+1])
		if err != nil {
			return Ref{}, fmt.Errorf("cgroup path %q: %w", path, err)
		}
		return Ref{PodUID: uid, ContainerID: id, Runtime: runtime, QoS: qos}, nil
	}
	return Ref{}, fmt.Errorf("cgroup path %q: %w", path, ErrNotKubernetes)
}

// parsePodSegment recognises segments[i] as a pod cgroup in either driver's
// naming and returns the pod UID and QoS class.
func parsePodSegment(segments []string, i int) (uid string, qos QoS, ok bool) {
	seg := segments[i]
	if name, isSlice := strings.CutSuffix(seg, sliceSuffix); isSlice {
		return parseSystemdPod(name)
	}
	raw, isPod := strings.CutPrefix(seg, podPrefix)
	if !isPod || !validUID(raw) {
		return "", "", false
	}
	// cgroupfs: <root>/kubepods[/burstable|/besteffort]/pod<uid>. A private
	// cgroup namespace shows the path relative to the reader's own cgroup,
	// so the parent may be "..": the pod is still certain, the QoS is not.
	if i == 0 {
		return "", "", false
	}
	switch segments[i-1] {
	case kubepods:
		return raw, QoSGuaranteed, true
	case string(QoSBurstable), string(QoSBestEffort):
		return raw, QoS(segments[i-1]), true
	case parentDir:
		return raw, QoSUnknown, true
	default:
		return "", "", false
	}
}

// parseSystemdPod parses the name of a systemd pod slice, without ".slice":
// [<root>-]kubepods[-burstable|-besteffort]-pod<uid with _>. The slice name
// carries its whole ancestry, so it is enough even through a private cgroup
// namespace. Pod UIDs are hex, so "pod" cannot occur inside them.
func parseSystemdPod(name string) (uid string, qos QoS, ok bool) {
	i := strings.LastIndex(name, "-"+podPrefix)
	if i < 0 {
		return "", "", false
	}
	uid = strings.ReplaceAll(name[i+1+len(podPrefix):], "_", "-")
	if !validUID(uid) {
		return "", "", false
	}
	parts := strings.Split(name[:i], "-")
	switch {
	case parts[len(parts)-1] == kubepods:
		return uid, QoSGuaranteed, true
	case len(parts) >= 2 && parts[len(parts)-2] == kubepods &&
		(parts[len(parts)-1] == string(QoSBurstable) || parts[len(parts)-1] == string(QoSBestEffort)):
		return uid, QoS(parts[len(parts)-1]), true
	default:
		return "", "", false
	}
}

// parseContainerSegment parses a container cgroup: <prefix><id>.scope under
// systemd, <id> or crio-<id> under cgroupfs.
func parseContainerSegment(seg string) (string, Runtime, error) {
	name := strings.TrimSuffix(seg, scopeSuffix)
	runtime := RuntimeUnknown
	for _, p := range containerPrefixes {
		if id, ok := strings.CutPrefix(name, p.prefix); ok {
			name, runtime = id, p.runtime
			break
		}
	}
	if !isLowerHex(name, containerIDLen) {
		return "", "", fmt.Errorf("%q is not a container cgroup", seg)
	}
	return name, runtime, nil
}

// validUID accepts the two UID shapes the kubelet names pod cgroups by: an
// API server UUID (8-4-4-4-12) or a static pod's 32-digit hash.
func validUID(s string) bool {
	if len(s) == staticUIDLen {
		return isLowerHex(s, staticUIDLen)
	}
	if len(s) != podUUIDLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch i {
		case 8, 13, 18, 23:
			if s[i] != '-' {
				return false
			}
		default:
			if !isLowerHexByte(s[i]) {
				return false
			}
		}
	}
	return true
}

func isLowerHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isLowerHexByte(s[i]) {
			return false
		}
	}
	return true
}

func isLowerHexByte(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')
}
