//go:build !linux

package source

// dropMappedPages does nothing where the process's mappings cannot be
// listed (/proc/self/maps is Linux's).
func dropMappedPages([]string) {}
