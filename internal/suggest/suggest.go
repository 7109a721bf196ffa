// Package suggest finds the known name a mistyped one was meant to be, for
// errors that say "did you mean …" instead of leaving a typo to pass as a
// new name.
package suggest

import "strings"

// Nearest returns the candidate closest to word by edit distance, case
// folded, and whether it is close enough to be a likely typo: at most a
// third of the longer name's characters changed (and at least one).
func Nearest(word string, candidates []string) (string, bool) {
	w := strings.ToLower(word)
	best, bestD := "", -1
	for _, c := range candidates {
		d := distance(w, strings.ToLower(c))
		if bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	if bestD < 0 {
		return "", false
	}
	return best, bestD <= max(1, max(len(w), len(best))/3)
}

// distance is the optimal string alignment distance over bytes (names
// here are ASCII): Levenshtein's, with two swapped neighbours one edit, the
// commonest typo (tema for team).
func distance(a, b string) int {
	rows := [3][]int{make([]int, len(b)+1), make([]int, len(b)+1), make([]int, len(b)+1)}
	pp, prev, cur := rows[0], rows[1], rows[2]
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], pp[j-2]+1)
			}
		}
		pp, prev, cur = prev, cur, pp
	}
	return prev[len(b)]
}
