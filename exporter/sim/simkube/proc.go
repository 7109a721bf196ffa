package simkube

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gpulens/gpulens/exporter/sim"
)

// CgroupLine is the /proc/<pid>/cgroup content of a container process on a
// cgroup v2 node with the systemd driver and containerd, burstable QoS: the
// most common layout on current Kubernetes nodes.
func CgroupLine(p sim.PodState) string {
	uid := strings.ReplaceAll(p.UID, "-", "_")
	return fmt.Sprintf("0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod%s.slice/cri-containerd-%s.scope\n",
		uid, p.ContainerID)
}

// ProcTree is a host /proc stand-in holding only <pid>/cgroup files.
type ProcTree struct {
	Dir     string
	written map[uint32]bool
}

// NewProcTree creates the tree in dir, with PID 1 as the host's init
// (what an exporter with hostPID sees).
func NewProcTree(dir string) (*ProcTree, error) {
	t := &ProcTree{Dir: dir, written: map[uint32]bool{}}
	if err := t.write(1, "0::/init.scope\n"); err != nil {
		return nil, err
	}
	return t, nil
}

func (t *ProcTree) write(pid uint32, content string) error {
	d := filepath.Join(t.Dir, strconv.FormatUint(uint64(pid), 10))
	if err := os.MkdirAll(d, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(d, "cgroup"), []byte(content), 0o644)
}

// Sync makes the tree hold exactly the processes of pods (and init).
func (t *ProcTree) Sync(pods []sim.PodState) error {
	live := map[uint32]bool{}
	for _, p := range pods {
		line := CgroupLine(p)
		for _, pid := range p.PIDs {
			live[pid] = true
			if t.written[pid] {
				continue
			}
			if err := t.write(pid, line); err != nil {
				return err
			}
			t.written[pid] = true
		}
	}
	for pid := range t.written {
		if !live[pid] {
			os.RemoveAll(filepath.Join(t.Dir, strconv.FormatUint(uint64(pid), 10)))
			delete(t.written, pid)
		}
	}
	return nil
}
