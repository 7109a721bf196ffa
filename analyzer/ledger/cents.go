package ledger

import (
	"cmp"
	"math"
	"slices"
)

// Cents rounds parts of a sum to whole cents so that they add up to the
// sum rounded to the cent, exactly: each part is rounded down, and the
// cents left over go to the parts that lost the most (the largest
// remainder method), the first of equals first. Rounding each part on its
// own could leave the reconciliation a cent or two off its total.
func Cents(parts ...float64) (cents []int64, total int64) {
	var sum float64
	for _, p := range parts {
		sum += p
	}
	total = int64(math.Round(sum * 100))
	cents = make([]int64, len(parts))
	order := make([]int, len(parts))
	frac := make([]float64, len(parts))
	var floor int64
	for i, p := range parts {
		c := math.Floor(p * 100)
		cents[i], frac[i], order[i] = int64(c), p*100-c, i
		floor += int64(c)
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(frac[b], frac[a]) })
	for left := total - floor; left != 0 && len(parts) > 0; {
		for _, i := range order {
			if left == 0 {
				break
			}
			if left > 0 {
				cents[i]++
				left--
			} else {
				cents[i]--
				left++
			}
		}
	}
	return cents, total
}
