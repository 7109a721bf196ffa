package source

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// dropMappedPages gives back this process's pages of the read-only file
// mappings under dirs (MADV_DONTNEED): the TSDB's blocks, whose chunks
// and index tsdb maps whole and reads through the mapping. The pages stay
// in the page cache, and a read of them again faults them back from it;
// until then they are not the process's resident memory, which otherwise
// grows by every chunk the analysis has read (2.4 GiB of a 10,000-GPU
// week) and stays there until the source is closed. The caller keeps the
// mappings from being unmapped meanwhile.
func dropMappedPages(dirs []string) {
	if len(dirs) == 0 {
		return
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return
	}
	sc := bufio.NewScanner(bytes.NewReader(maps))
	for sc.Scan() {
		// address perms offset dev inode pathname
		f := strings.Fields(sc.Text())
		if len(f) < 6 || !strings.HasPrefix(f[1], "r-") {
			continue
		}
		if !under(f[5], dirs) {
			continue
		}
		lo, hi, ok := strings.Cut(f[0], "-")
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil || end <= start {
			continue
		}
		_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, uintptr(start), uintptr(end-start), syscall.MADV_DONTNEED)
	}
}

func under(path string, dirs []string) bool {
	for _, d := range dirs {
		if strings.HasPrefix(path, d+string(os.PathSeparator)) {
			return true
		}
	}
	return false
}
