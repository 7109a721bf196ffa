package source

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
)

// TestReleaseDropsBlockPages: a read-only store's raw samples can give
// back the pages of its blocks that a read made resident (RawStore.
// Release), and a read after it answers as before, its pages faulted back.
func TestReleaseDropsBlockPages(t *testing.T) {
	for _, tc := range []struct{ name, link string }{{name: "absolute"}, {name: "relative, through a link", link: "data"}} {
		t.Run(tc.name, func(t *testing.T) { releaseDropsBlockPages(t, tc.link) })
	}
}

// releaseDropsBlockPages opens the store by its path, or where link is
// set, by link, a relative path to a symbolic link to it.
func releaseDropsBlockPages(t *testing.T, link string) {
	dir := t.TempDir()
	rw := openTest(t, dir, EmbeddedOptions{})
	end := t0.Add(5 * time.Hour)
	for i := range 200 {
		appendSeries(t, rw, labels.FromStrings("__name__", "x", "i", strconv.Itoa(i)), t0, end, func(ts time.Time) float64 { return float64(ts.Unix() % 97) })
	}
	if err := rw.PersistHead(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := rw.Close(); err != nil {
		t.Fatal(err)
	}
	open := dir
	if link != "" {
		parent := t.TempDir()
		if err := os.Symlink(dir, filepath.Join(parent, link)); err != nil {
			t.Fatal(err)
		}
		t.Chdir(parent)
		open = link
	}
	ro := openTest(t, open, EmbeddedOptions{ReadOnly: true})
	st, ok := ro.RawSamples()
	if !ok || st.Release == nil {
		t.Fatalf("a read-only store's raw samples have no Release (ok %v)", ok)
	}
	const q = `sum(sum_over_time(x[5h]))`
	before, err := ro.Query(context.Background(), q, end)
	if err != nil {
		t.Fatal(err)
	}
	if kb := residentUnder(t, dir); kb == 0 {
		t.Fatalf("no page of the blocks under %s is resident after a read", dir)
	}
	st.Release()
	if kb := residentUnder(t, dir); kb != 0 {
		t.Errorf("%d kB of the blocks' pages resident after Release, want 0", kb)
	}
	after, err := ro.Query(context.Background(), q, end)
	if err != nil {
		t.Fatal(err)
	}
	if after.String() != before.String() {
		t.Errorf("after Release: %s, before: %s", after, before)
	}
}

// residentUnder is the resident kB of this process's mappings of files
// under dir (/proc/self/smaps).
func residentUnder(t *testing.T, dir string) int {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no smaps: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	in, kb := false, 0
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		switch {
		case len(fs) >= 5 && strings.Contains(fs[0], "-") && !strings.HasSuffix(fs[0], ":"):
			in = len(fs) >= 6 && strings.HasPrefix(fs[5], dir+"/")
		case in && len(fs) >= 2 && fs[0] == "Rss:":
			n, _ := strconv.Atoi(fs[1])
			kb += n
		}
	}
	return kb
}
