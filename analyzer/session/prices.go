package session

import (
	"slices"

	"github.com/gpulens/gpulens/analyzer/pipeline"
)

// priceNotes warns of, and notes in the report, each price of the user's
// --prices file that matches no GPU of the window (price.Prices'
// Unmatched): a product name written a little wrong leaves the GPU at the
// embedded table's price, which nothing else would say.
func (s *Session) priceNotes(a *pipeline.Analysis) {
	if a.Current == nil {
		return
	}
	var models []string
	for _, g := range a.Current.GPUs {
		if g.Model != "" && !slices.Contains(models, g.Model) {
			models = append(models, g.Model)
		}
	}
	slices.Sort(models)
	for _, n := range s.prices.Unmatched(models) {
		s.cfg.Logger.Warn(n)
		a.Notes = append(a.Notes, n)
	}
}
