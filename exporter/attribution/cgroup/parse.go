package cgroup

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// maxLineBytes bounds one line of /proc/<pid>/cgroup: a path is at most
// PATH_MAX (4096) plus the hierarchy and controller fields.
const maxLineBytes = 16 << 10

// Line ranks: lower is preferred. Under cgroup v1 each controller has its
// own hierarchy and some (net_cls, perf_event, rdma, misc) are often left at
// "/" by runtimes, while memory and cpu are always placed per container by
// the kubelet. name=systemd follows because systemd always places it, and the
// unified line of cgroup v2 (or of hybrid mode) comes next.
const (
	rankMemory = iota
	rankCPU
	rankSystemd
	rankUnified
	rankOther
)

// Parse reads the content of /proc/<pid>/cgroup and returns the container
// the process runs in. A process outside Kubernetes gives ErrNotKubernetes;
// any other error means the content was not understood.
func Parse(r io.Reader) (Ref, error) {
	type candidate struct {
		rank int
		path string
	}
	var candidates []candidate
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1024), maxLineBytes)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		// hierarchy-ID:controller-list:path; the path may itself hold colons.
		fields := strings.SplitN(line, ":", 3)
		if len(fields) != 3 || !strings.HasPrefix(fields[2], "/") {
			return Ref{}, fmt.Errorf("malformed cgroup line %q", line)
		}
		candidates = append(candidates, candidate{rank: rankLine(fields[0], fields[1]), path: fields[2]})
	}
	if err := sc.Err(); err != nil {
		return Ref{}, fmt.Errorf("read cgroup file: %w", err)
	}
	if len(candidates) == 0 {
		return Ref{}, errors.New("cgroup file has no cgroup lines")
	}
	slices.SortStableFunc(candidates, func(a, b candidate) int { return a.rank - b.rank })

	// The first line naming a container wins. A preferred line that is
	// outside Kubernetes does not veto a lower one: that only means the
	// controller was not delegated to the container.
	var firstErr error
	for _, c := range candidates {
		ref, err := ParsePath(c.path)
		if err == nil {
			return ref, nil
		}
		if firstErr == nil && !errors.Is(err, ErrNotKubernetes) {
			firstErr = err
		}
	}
	if firstErr != nil {
		return Ref{}, firstErr
	}
	return Ref{}, ErrNotKubernetes
}

func rankLine(hierarchy, controllers string) int {
	if hierarchy == "0" && controllers == "" {
		return rankUnified
	}
	best := rankOther
	for _, c := range strings.Split(controllers, ",") {
		switch c {
		case "memory":
			best = min(best, rankMemory)
		case "cpu", "cpuacct":
			best = min(best, rankCPU)
		case "name=systemd":
			best = min(best, rankSystemd)
		}
	}
	return best
}

// ReadPID parses <procRoot>/<pid>/cgroup. procRoot is the host's /proc as
// mounted into the exporter (hostPID). A process that exited meanwhile gives
// an error matching fs.ErrNotExist.
func ReadPID(procRoot string, pid uint32) (Ref, error) {
	path := filepath.Join(procRoot, strconv.FormatUint(uint64(pid), 10), "cgroup")
	f, err := os.Open(path)
	if err != nil {
		return Ref{}, fmt.Errorf("pid %d: %w", pid, err)
	}
	defer f.Close()
	ref, err := Parse(f)
	if err != nil {
		return Ref{}, fmt.Errorf("pid %d (%s): %w", pid, path, err)
	}
	return ref, nil
}
