package cgroup

import (
	"errors"
	"io/fs"
	"regexp"
	"strings"
	"testing"
)

const procRoot = "testdata/proc"

func TestReadPID(t *testing.T) {
	tests := []struct {
		pid  uint32
		name string
		want Ref
		// wantErr is ErrNotKubernetes, errAny for a parse failure, or nil.
		wantErr error
	}{
		{
			pid: 1001, name: "v2 systemd containerd burstable",
			want: Ref{"6f1c2a4e-8b3d-4e5f-9a7b-0c1d2e3f4a5b", "fe675fe7aaee830b6fed09b64e034f84dcbdaeb429d9cccd4ebb90e15af8dd71", RuntimeContainerd, QoSBurstable},
		},
		{
			pid: 1002, name: "v2 systemd CRI-O guaranteed",
			want: Ref{"0a9b8c7d-6e5f-4a3b-8c2d-1e0f9a8b7c6d", "b281bc2c616cb3c3a097215fdc9397ae87e6e06b156cc34e656be7a1a9ce8839", RuntimeCRIO, QoSGuaranteed},
		},
		{
			pid: 1003, name: "v2 systemd docker besteffort",
			want: Ref{"d3e4f5a6-b7c8-4d9e-8f0a-1b2c3d4e5f6a", "8c9a013ab70c0434313e3e881c310b9ff24aff1075255ceede3f2c239c231623", RuntimeDocker, QoSBestEffort},
		},
		{
			pid: 1004, name: "v1 cgroupfs besteffort",
			want: Ref{"5c8e2f1a-3b4d-4c6e-9f8a-7b6c5d4e3f2a", "75992a5ac67ff644d3063976c2effd10bdd93fcc109798e3d5c1acf2e530d01a", RuntimeUnknown, QoSBestEffort},
		},
		{
			pid: 1005, name: "v1 cgroupfs guaranteed",
			want: Ref{"e1f2a3b4-c5d6-4e7f-8a9b-0c1d2e3f4a5b", "7f861bcee185de001377d79e08af62e94b1e7718e2470e08520c917f8d953602", RuntimeUnknown, QoSGuaranteed},
		},
		{
			pid: 1006, name: "v1 systemd containerd burstable hybrid",
			want: Ref{"7b3c9d1e-2f4a-4b5c-8d6e-9f0a1b2c3d4e", "478c4ffb1cbcea37956a748e6c19d8eadd0a47e86f5e308d26cad39453b5d1ab", RuntimeContainerd, QoSBurstable},
		},
		{
			pid: 1007, name: "kind on cgroup v2 with a cgroup root",
			want: Ref{"4a5b6c7d-8e9f-4a0b-9c1d-2e3f4a5b6c7d", "2c8b871e52d4e5f5db5ff84a82a45327e20df77edef961c4b6fa0e9c3d97ce5b", RuntimeContainerd, QoSBestEffort},
		},
		{
			pid: 1008, name: "kind on cgroup v1 under the node container",
			want: Ref{"9f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a", "9aaf689fbcdfe9f64a071f9cbe28ae44193fa218e72af24456f44bed64583b4d", RuntimeUnknown, QoSBurstable},
		},
		{
			pid: 1009, name: "v2 through a private cgroup namespace",
			want: Ref{"2c3d4e5f-6a7b-4c8d-9e0f-1a2b3c4d5e6f", "6ad4a6b1e5ea5569795e516d71909e0ce4809d9dc983d2c219144f684f816e12", RuntimeContainerd, QoSBestEffort},
		},
		{pid: 1010, name: "user session", wantErr: ErrNotKubernetes},
		{pid: 1011, name: "init scope", wantErr: ErrNotKubernetes},
		{pid: 1012, name: "v1 plain docker container", wantErr: ErrNotKubernetes},
		{
			pid: 1013, name: "static pod with hash UID",
			want: Ref{"8d4bd8e2c3dc0c3e0e8f6e5b0c0e0d4a", "2ec42bc1f3e672fc1cf7fdcfc23246415dcf20f03c0d4a5bbbd92a185708f5b7", RuntimeContainerd, QoSBurstable},
		},
		{pid: 1014, name: "CRI-O conmon is not the container", wantErr: errAny},
		{
			pid: 1015, name: "v2 deleted cgroup",
			want: Ref{"b1c2d3e4-f5a6-4b7c-8d9e-0f1a2b3c4d5e", "9553627933b214db60798fe40d2b4f8497781d024f53d62dc1b12469b7d53784", RuntimeContainerd, QoSBurstable},
		},
		{
			pid: 1016, name: "v1 cgroupfs CRI-O",
			want: Ref{"c4d5e6f7-a8b9-4c0d-9e1f-2a3b4c5d6e7f", "ef32cc5c2b7c62093d3ec4844b36a02b08bb83eee2efa6b6b5e85ad605790192", RuntimeCRIO, QoSBurstable},
		},
		{
			pid: 1017, name: "sub-cgroup inside a container",
			want: Ref{"a0b1c2d3-e4f5-4a6b-8c7d-9e0f1a2b3c4d", "b0ab628c9e14621846c58b4eb35060ef3885253a457d2d76136716d4850bad45", RuntimeContainerd, QoSGuaranteed},
		},
		{
			pid: 1018, name: "v1 without memory controller",
			want: Ref{"f9e8d7c6-b5a4-4938-8271-605f4e3d2c1b", "9989a37538faecc495bbe774b30fb447a1582b8f1bc14ac88dfd84996a7b799a", RuntimeUnknown, QoSBestEffort},
		},
		{pid: 1019, name: "pod cgroup without container", wantErr: errAny},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadPID(procRoot, tt.pid)
			checkResult(t, got, err, tt.want, tt.wantErr)
		})
	}
}

// errAny stands for "some error other than ErrNotKubernetes".
var errAny = errors.New("any parse error")

func checkResult(t *testing.T, got Ref, err error, want Ref, wantErr error) {
	t.Helper()
	switch {
	case wantErr == nil && err != nil:
		t.Fatalf("unexpected error: %v", err)
	case wantErr == ErrNotKubernetes && !errors.Is(err, ErrNotKubernetes):
		t.Fatalf("got %+v, %v; want ErrNotKubernetes", got, err)
	case wantErr == errAny && (err == nil || errors.Is(err, ErrNotKubernetes)):
		t.Fatalf("got %+v, %v; want a parse error", got, err)
	}
	if got != want {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

func TestReadPIDMissing(t *testing.T) {
	_, err := ReadPID(procRoot, 4242)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadPID of an exited process = %v, want fs.ErrNotExist", err)
	}
	if err != nil && !strings.Contains(err.Error(), "4242") {
		t.Errorf("error %q does not name the pid", err)
	}
}

const (
	uid = "11111111-2222-4333-8444-555555555555"
	cid = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
)

func TestParse(t *testing.T) {
	podPath := "/kubepods/burstable/pod" + uid + "/" + cid
	tests := []struct {
		name    string
		content string
		want    Ref
		wantErr error
	}{
		{
			name:    "memory at the root does not veto cpu",
			content: "4:memory:/\n3:cpu,cpuacct:" + podPath + "\n1:name=systemd:/\n",
			want:    Ref{uid, cid, RuntimeUnknown, QoSBurstable},
		},
		{
			name:    "memory preferred over a conflicting unified line",
			content: "0::/kubepods/besteffort/pod" + uid + "/" + strings.Repeat("f", 64) + "\n2:memory:" + podPath + "\n",
			want:    Ref{uid, cid, RuntimeUnknown, QoSBurstable},
		},
		{
			name:    "cpuacct,cpu order",
			content: "5:cpuacct,cpu:" + podPath + "\n",
			want:    Ref{uid, cid, RuntimeUnknown, QoSBurstable},
		},
		{
			name:    "path with colons",
			content: "0::/weird:dir/kubepods/pod" + uid + "/" + cid + "\n",
			want:    Ref{uid, cid, RuntimeUnknown, QoSGuaranteed},
		},
		{
			name:    "cgroupfs through a cgroup namespace loses the QoS",
			content: "0::/../../pod" + uid + "/" + cid + "\n",
			want:    Ref{uid, cid, RuntimeUnknown, QoSUnknown},
		},
		{
			name:    "nested cluster resolves to the inner pod",
			content: "0::/kubepods/pod" + strings.Repeat("a", 32) + "/" + strings.Repeat("b", 64) + "/kubepods/besteffort/pod" + uid + "/" + cid + "\n",
			want:    Ref{uid, cid, RuntimeUnknown, QoSBestEffort},
		},
		{name: "empty file", content: "", wantErr: errAny},
		{name: "blank lines only", content: "\n\n", wantErr: errAny},
		{name: "malformed line", content: "garbage\n", wantErr: errAny},
		{name: "relative path", content: "0::kubepods/pod" + uid + "/" + cid + "\n", wantErr: errAny},
		{name: "root cgroup", content: "0::/\n", wantErr: ErrNotKubernetes},
		{name: "pod dir outside kubepods", content: "0::/srv/pod" + uid + "/" + cid + "\n", wantErr: ErrNotKubernetes},
		{name: "slice without kubepods", content: "0::/machine.slice/machine-pod" + strings.ReplaceAll(uid, "-", "_") + ".slice/" + cid + "\n", wantErr: ErrNotKubernetes},
		{name: "upper-case container ID", content: "0::/kubepods/pod" + uid + "/" + strings.ToUpper(cid) + "\n", wantErr: errAny},
		{name: "short container ID", content: "0::/kubepods/pod" + uid + "/" + cid[:63] + "\n", wantErr: errAny},
		{name: "malformed pod UID", content: "0::/kubepods/pod" + uid[:35] + "x/" + cid + "\n", wantErr: ErrNotKubernetes},
		{name: "unknown QoS slice", content: "0::/kubepods.slice/kubepods-gold-pod" + strings.ReplaceAll(uid, "-", "_") + ".slice/crio-" + cid + ".scope\n", wantErr: ErrNotKubernetes},
		{name: "parse error is reported over not-kubernetes", content: "2:memory:/kubepods/pod" + uid + "/nope\n0::/\n", wantErr: errAny},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(strings.NewReader(tt.content))
			checkResult(t, got, err, tt.want, tt.wantErr)
		})
	}
}

func TestParseErrorNamesPath(t *testing.T) {
	path := "/kubepods/pod" + uid + "/not-a-container"
	_, err := Parse(strings.NewReader("0::" + path + "\n"))
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("Parse error %v does not name %q", err, path)
	}
}

// Written independently of the parser's own checks, so the fuzz target
// tests the contract rather than the implementation.
var (
	uidPattern         = regexp.MustCompile(`^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{32})$`)
	containerIDPattern = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

func FuzzParse(f *testing.F) {
	f.Add("0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + strings.ReplaceAll(uid, "-", "_") + ".slice/cri-containerd-" + cid + ".scope\n")
	f.Add("11:memory:/kubepods/besteffort/pod" + uid + "/" + cid + "\n0::/\n")
	f.Add("0::/../pod" + uid + "/crio-" + cid + "\n")
	f.Add("0::/kubepods.slice/kubepods-pod" + strings.Repeat("c", 32) + ".slice/docker-" + cid + ".scope (deleted)\n")
	f.Add("0::/init.scope\n")
	f.Add("1:name=systemd:/user.slice\n")
	f.Fuzz(func(t *testing.T, content string) {
		ref, err := Parse(strings.NewReader(content))
		if err != nil {
			if ref != (Ref{}) {
				t.Fatalf("error %v returned with a non-zero Ref %+v", err, ref)
			}
			return
		}
		if !uidPattern.MatchString(ref.PodUID) {
			t.Fatalf("pod UID %q from %q is neither a UUID nor a static pod hash", ref.PodUID, content)
		}
		if !containerIDPattern.MatchString(ref.ContainerID) {
			t.Fatalf("invalid container ID %q from %q", ref.ContainerID, content)
		}
		switch ref.QoS {
		case QoSUnknown, QoSGuaranteed, QoSBurstable, QoSBestEffort:
		default:
			t.Fatalf("invalid QoS %q from %q", ref.QoS, content)
		}
	})
}
