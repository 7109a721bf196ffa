package promdur

import (
	"errors"
	"fmt"
	"strconv"
	"time"
)

// units are PromQL's duration units, in the order a duration must give
// them (github.com/prometheus/common/model/time.go unitMap, v0.74.0).
var units = []struct {
	name string
	mult uint64
}{
	{"y", uint64(365 * 24 * time.Hour)},
	{"w", uint64(7 * 24 * time.Hour)},
	{"d", uint64(24 * time.Hour)},
	{"h", uint64(time.Hour)},
	{"m", uint64(time.Minute)},
	{"s", uint64(time.Second)},
	{"ms", uint64(time.Millisecond)},
}

// Parse reads a PromQL duration ("1d", "1w", "90s", "1h30m") as
// github.com/prometheus/common/model.ParseDuration reads it (v0.74.0,
// model/time.go): units from the largest, each at most once, "0" alone
// without a unit, no sign, no fraction. It is here, not that function, so
// that signals/ links no protobuf for one step's length
// (TestParseIsModelParseDuration holds the two alike).
func Parse(s string) (time.Duration, error) {
	switch s {
	case "0":
		return 0, nil
	case "":
		return 0, errors.New("empty duration string")
	}
	orig := s
	var dur uint64
	next := 0 // the index in units the next unit may start at
	for s != "" {
		i := 0
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if i == 0 {
			return 0, fmt.Errorf("not a valid duration string: %q", orig)
		}
		v, err := strconv.ParseUint(s[:i], 10, 0)
		if err != nil {
			return 0, fmt.Errorf("not a valid duration string: %q", orig)
		}
		s = s[i:]
		j := 0
		for j < len(s) && !isDigit(s[j]) {
			j++
		}
		if j == 0 {
			return 0, fmt.Errorf("not a valid duration string: %q", orig)
		}
		u := s[:j]
		s = s[j:]
		k := unitIndex(u)
		if k < 0 {
			return 0, fmt.Errorf("unknown unit %q in duration %q", u, orig)
		}
		if k < next {
			return 0, fmt.Errorf("not a valid duration string: %q", orig)
		}
		next = k + 1
		if v > 1<<63/units[k].mult {
			return 0, errors.New("duration out of range")
		}
		dur += v * units[k].mult
		if dur > 1<<63-1 {
			return 0, errors.New("duration out of range")
		}
	}
	return time.Duration(dur), nil
}

func unitIndex(name string) int {
	for i, u := range units {
		if u.name == name {
			return i
		}
	}
	return -1
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
