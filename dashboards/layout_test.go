package dashboards

import (
	"strconv"

	"testing"

	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

type box struct {
	title      string
	x, y, w, h uint32
}

func (a box) overlaps(b box) bool {
	return a.x < b.x+b.w && b.x < a.x+a.w && a.y < b.y+b.h && b.y < a.y+a.h
}

// layout checks one dashboard's grid: rows span the width, panels do not
// overlap, and the panels of each line fill exactly 24 columns.
func layout(d dashboard.Dashboard) []string {
	var probs []string
	var boxes []box
	widths := map[uint32]uint32{} // line (y) -> columns used
	for _, p := range d.Panels {
		switch {
		case p.RowPanel != nil:
			g := p.RowPanel.GridPos
			if g == nil || g.W != 24 || g.X != 0 {
				probs = append(probs, "row "+*p.RowPanel.Title+" does not span the grid")
				continue
			}
			boxes = append(boxes, box{"row " + *p.RowPanel.Title, g.X, g.Y, g.W, g.H})
		case p.Panel != nil:
			g := p.Panel.GridPos
			if g == nil {
				probs = append(probs, *p.Panel.Title+": no position")
				continue
			}
			if g.X+g.W > 24 {
				probs = append(probs, *p.Panel.Title+": wider than the grid")
			}
			boxes = append(boxes, box{*p.Panel.Title, g.X, g.Y, g.W, g.H})
			widths[g.Y] += g.W
		}
	}
	for i := range boxes {
		for j := i + 1; j < len(boxes); j++ {
			if boxes[i].overlaps(boxes[j]) {
				probs = append(probs, boxes[i].title+" overlaps "+boxes[j].title)
			}
		}
	}
	for y, w := range widths {
		if w != 24 {
			probs = append(probs, "the line at y="+itoa(y)+" is "+itoa(w)+" columns wide, not 24")
		}
	}
	return probs
}

func itoa(v uint32) string { return strconv.FormatUint(uint64(v), 10) }

func TestGridLayout(t *testing.T) {
	for _, ds := range generated(t) {
		for _, d := range ds {
			for _, p := range layout(d) {
				t.Errorf("%s: %s", *d.Uid, p)
			}
		}
	}
}

// The checker itself must catch what it is there to catch.
func TestGridLayoutChecker(t *testing.T) {
	pos := func(x, y, w, h uint32) *dashboard.GridPos { return &dashboard.GridPos{X: x, Y: y, W: w, H: h} }
	title := func(s string) *string { return &s }
	for _, tc := range []struct {
		name   string
		panels []dashboard.PanelOrRowPanel
		probs  int
	}{
		{"fills", []dashboard.PanelOrRowPanel{
			{RowPanel: &dashboard.RowPanel{Title: title("r"), GridPos: pos(0, 0, 24, 1)}},
			{Panel: &dashboard.Panel{Title: title("a"), GridPos: pos(0, 1, 12, 8)}},
			{Panel: &dashboard.Panel{Title: title("b"), GridPos: pos(12, 1, 12, 8)}},
		}, 0},
		{"overlap", []dashboard.PanelOrRowPanel{
			{Panel: &dashboard.Panel{Title: title("a"), GridPos: pos(0, 0, 16, 8)}},
			{Panel: &dashboard.Panel{Title: title("b"), GridPos: pos(8, 0, 16, 8)}},
		}, 2}, // overlap, and the line is 32 wide
		{"gap", []dashboard.PanelOrRowPanel{
			{Panel: &dashboard.Panel{Title: title("a"), GridPos: pos(0, 0, 16, 8)}},
		}, 1},
		{"too wide", []dashboard.PanelOrRowPanel{
			{Panel: &dashboard.Panel{Title: title("a"), GridPos: pos(12, 0, 16, 8)}},
		}, 2},
	} {
		if got := layout(dashboard.Dashboard{Panels: tc.panels}); len(got) != tc.probs {
			t.Errorf("%s: %d problems %v, want %d", tc.name, len(got), got, tc.probs)
		}
	}
}
