package report

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/gpulens/gpulens/internal/testenv"
)

// TestHTMLSelfContained: one file, no scripts, nothing fetched.
func TestHTMLSelfContained(t *testing.T) {
	b, err := os.ReadFile("testdata/report.golden.html")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, bad := range []string{"<script", "http://", "https://", "@import", "url(", "<link", "@font-face"} {
		if strings.Contains(s, bad) {
			t.Errorf("the page contains %q", bad)
		}
	}
	for _, want := range []string{"<style>", "@media print", `id="chart-allocated-used"`, `id="chart-waste"`, `class="chart chart-timeline"`} {
		if !strings.Contains(s, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

// TestHTMLInChromium renders the golden page in headless Chromium: it must
// produce a screenshot with content, and the DOM Chromium builds must hold
// every chart with data marks.
func TestHTMLInChromium(t *testing.T) {
	chromium := testenv.LookPath(t, "chromium")
	page, err := filepath.Abs("testdata/report.golden.html")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	run := func(extra ...string) []byte {
		t.Helper()
		args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
			"--disable-component-update", "--disable-sync", "--user-data-dir=" + filepath.Join(tmp, "profile")}, extra...)
		cmd := exec.Command(chromium, append(args, "file://"+page)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("chromium %v: %v\n%s", extra, err, stderr.String())
		}
		return out
	}

	png := filepath.Join(tmp, "report.png")
	run("--screenshot="+png, "--window-size=1280,2400")
	img, err := os.ReadFile(png)
	if err != nil {
		t.Fatal(err)
	}
	// A blank 1280×2400 PNG compresses to a few kilobytes; a page with
	// tables and charts does not.
	if !bytes.HasPrefix(img, []byte("\x89PNG")) || len(img) < 50_000 {
		t.Errorf("screenshot is %d bytes, want a PNG with content", len(img))
	}

	doc, err := html.Parse(bytes.NewReader(run("--dump-dom")))
	if err != nil {
		t.Fatal(err)
	}
	charts := map[string]int{}
	var kinds = map[string]int{}
	var walk func(n *html.Node, chart string)
	walk = func(n *html.Node, chart string) {
		if n.Type == html.ElementNode && n.Data == "svg" {
			chart = attr(n, "id")
			charts[chart] += 0
			kinds[attr(n, "class")]++
		}
		if chart != "" && n.Type == html.ElementNode && strings.Contains(" "+attr(n, "class")+" ", " mark ") && attr(n, "data-value") != "" {
			charts[chart]++
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, chart)
		}
	}
	walk(doc, "")
	if kinds["chart chart-timeline"] != 3 || kinds["chart chart-bars"] != 2 {
		t.Errorf("charts by kind %v, want 3 timelines (one per team) and 2 bar charts", kinds)
	}
	for id, marks := range charts {
		if marks == 0 {
			t.Errorf("chart %s has no data marks", id)
		}
	}
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}
