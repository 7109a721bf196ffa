package report

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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

// TestHTMLInChromium renders the golden pages in headless Chromium, as
// their reader sees them on a laptop (1400×900): the screenshot has
// content, the DOM Chromium builds holds every chart with data marks, the
// headline's money is on the first screen, above every chart and table,
// and no bar chart's text is cut (issue 54: "1,553.8 allocat…" ran past
// the chart's edge). The measures are taken in the browser, by a script
// added to a copy of the page (the page itself has none), which writes
// them into the DOM that --dump-dom prints.
func TestHTMLInChromium(t *testing.T) {
	chromium := testenv.LookPath(t, "chromium")
	for _, golden := range []string{"testdata/report.golden.html", "testdata/report.clusters.golden.html"} {
		t.Run(filepath.Base(golden), func(t *testing.T) {
			src, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			tmp := t.TempDir()
			page := filepath.Join(tmp, "report.html")
			measured := strings.Replace(string(src), "</body>", "<script>"+measureScript+"</script>\n</body>", 1)
			if err := os.WriteFile(page, []byte(measured), 0o644); err != nil {
				t.Fatal(err)
			}
			run := func(extra ...string) []byte {
				t.Helper()
				args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
					"--disable-component-update", "--disable-sync", "--hide-scrollbars", "--window-size=1400,900",
					"--user-data-dir=" + filepath.Join(tmp, "profile")}, extra...)
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
			run("--screenshot=" + png)
			img, err := os.ReadFile(png)
			if err != nil {
				t.Fatal(err)
			}
			// A blank 1400×900 PNG compresses to a few kilobytes; a
			// screen of figures and charts does not.
			if !bytes.HasPrefix(img, []byte("\x89PNG")) || len(img) < 30_000 {
				t.Errorf("screenshot is %d bytes, want a PNG with content", len(img))
			}
			if dir := os.Getenv("GPULENS_SCREENSHOT_DIR"); dir != "" {
				// To look at the first screen: GPULENS_SCREENSHOT_DIR=/tmp go test -run Chromium
				_ = os.WriteFile(filepath.Join(dir, filepath.Base(golden)+".png"), img, 0o644)
			}

			doc, err := html.Parse(bytes.NewReader(run("--dump-dom", "--virtual-time-budget=2000")))
			if err != nil {
				t.Fatal(err)
			}
			checkCharts(t, doc)
			var m measures
			if err := json.Unmarshal([]byte(textOf(find(doc, "gpulens-measures"))), &m); err != nil {
				t.Fatalf("the page's measures: %v", err)
			}
			if m.Headline == nil {
				t.Fatal("no #headline in the page")
			}
			checkFirstScreen(t, m)
		})
	}
}

// measures is what measureScript writes: the headline's box and the
// first chart's and table's tops in CSS pixels from the page's top, and
// every bar chart text drawn wider than its room or past its chart.
type measures struct {
	Viewport struct{ W, H float64 }
	Headline *struct {
		Top, Bottom float64
		Figures     []string
	}
	FirstChart, FirstTable float64
	Texts                  int
	Cut                    []string
}

// measureScript measures in the browser what the test asserts: layout is
// Chromium's, fonts are the machine's, nothing is estimated. A text's
// getComputedTextLength is in its SVG's units, as data-room (charts.go)
// and the viewBox are.
const measureScript = `
(function () {
  var out = {Viewport: {W: innerWidth, H: innerHeight}, Headline: null, FirstChart: -1, FirstTable: -1, Texts: 0, Cut: []};
  var h = document.getElementById("headline");
  if (h) {
    var b = h.getBoundingClientRect();
    out.Headline = {Top: b.top + scrollY, Bottom: b.bottom + scrollY, Figures: []};
    h.querySelectorAll(".figure").forEach(function (f) { out.Headline.Figures.push(f.getAttribute("data-key")); });
  }
  var c = document.querySelector("svg.chart");
  if (c) out.FirstChart = c.getBoundingClientRect().top + scrollY;
  var tb = document.querySelector("table");
  if (tb) out.FirstTable = tb.getBoundingClientRect().top + scrollY;
  document.querySelectorAll("svg.chart-bars").forEach(function (svg) {
    var w = svg.viewBox.baseVal.width;
    svg.querySelectorAll("text").forEach(function (t) {
      out.Texts++;
      var len = t.getComputedTextLength(), box = t.getBBox();
      var room = parseFloat(t.getAttribute("data-room") || "NaN");
      if (len > room + 0.5 || box.x < -0.5 || box.x + box.width > w + 0.5) {
        out.Cut.push(svg.id + ": " + JSON.stringify(t.textContent) + " is " + len.toFixed(1) + " wide, room " + room + ", from x=" + box.x.toFixed(1) + " to " + (box.x + box.width).toFixed(1) + " of " + w);
      }
    });
  });
  var pre = document.createElement("pre");
  pre.id = "gpulens-measures";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
`

// checkFirstScreen: the headline, every figure of it, is within the
// first 900 pixels, and precedes every chart and table.
func checkFirstScreen(t *testing.T, m measures) {
	t.Helper()
	// Headless Chromium's window of 1400×900 holds a viewport of
	// 1400×757 or so for --dump-dom (the window's frame is counted), the
	// screen a browser's tabs and toolbar leave on a 900-pixel laptop
	// screen: the headline must fit the smaller of the two.
	if m.Viewport.W != 1400 || m.Viewport.H < 700 || m.Viewport.H > 900 {
		t.Errorf("viewport %vx%v, want 1400 wide and 700 to 900 high", m.Viewport.W, m.Viewport.H)
	}
	t.Logf("viewport %vx%v; headline from %.0f to %.0fpx; first chart at %.0fpx, first table at %.0fpx; %d chart texts measured",
		m.Viewport.W, m.Viewport.H, m.Headline.Top, m.Headline.Bottom, m.FirstChart, m.FirstTable, m.Texts)
	h := m.Headline
	if h.Bottom > min(m.Viewport.H, 900) {
		t.Errorf("the headline ends at %.0fpx, past the first screen's %.0fpx", h.Bottom, min(m.Viewport.H, 900))
	}
	want := []string{"fleet_cost", "used", "idle", "unallocated", "banked", "capacity_freed", "change_vs_previous"}
	for _, k := range want {
		if !slices.Contains(h.Figures, k) {
			t.Errorf("the headline has figures %v, no %s", h.Figures, k)
		}
	}
	if m.FirstChart < h.Bottom || m.FirstTable < h.Bottom {
		t.Errorf("the first chart (at %.0fpx) and table (at %.0fpx) come before the headline's end (%.0fpx)", m.FirstChart, m.FirstTable, h.Bottom)
	}
	if m.Texts == 0 {
		t.Error("no bar chart text measured")
	}
	for _, c := range m.Cut {
		t.Errorf("cut: %s", c)
	}
}

// checkCharts: every chart has data marks, and there are the bar charts
// and timelines the fixture has.
func checkCharts(t *testing.T, doc *html.Node) {
	t.Helper()
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
	if kinds["chart chart-bars"] != 3 || kinds["chart chart-timeline"] == 0 {
		t.Errorf("charts by kind %v, want timelines and 3 bar charts (allocated vs used, waste, cost)", kinds)
	}
	if charts["chart-cost"] == 0 {
		t.Error("no cost per team chart")
	}
	for id, marks := range charts {
		if marks == 0 {
			t.Errorf("chart %s has no data marks", id)
		}
	}
}

func find(n *html.Node, id string) *html.Node {
	if n.Type == html.ElementNode && attr(n, "id") == id {
		return n
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if f := find(c, id); f != nil {
			return f
		}
	}
	return nil
}

func textOf(n *html.Node) string {
	if n == nil {
		return ""
	}
	var b strings.Builder
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
	}
	return b.String()
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}
