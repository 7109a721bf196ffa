package dra

import (
	"regexp"
	"strings"
)

// AttrProfile is the MIG device attribute holding the profile name, in
// the driver's domain: device.attributes['gpu.nvidia.com'].profile in CEL,
// gpu.nvidia.com/profile fully qualified (k8s-dra-driver-gpu
// cmd/gpu-kubelet-plugin/mig.go CommonAttributesMig; the driver's own
// demo, demo/specs/quickstart/v1/gpu-test4.yaml, selects profiles so).
const AttrProfile = "profile"

// profileEq matches a comparison of the profile attribute with a string
// literal, with the attribute on either side, in the member (.profile) or
// index (['profile']) form and with either quote.
var profileEq = regexp.MustCompile(
	`device\.attributes\[\s*['"]gpu\.nvidia\.com['"]\s*\]\s*(?:\.profile\b|\[\s*['"]profile['"]\s*\])\s*==\s*['"]([^'"]+)['"]` +
		`|['"]([^'"]+)['"]\s*==\s*device\.attributes\[\s*['"]gpu\.nvidia\.com['"]\s*\]\s*(?:\.profile\b|\[\s*['"]profile['"]\s*\])`)

// ProfileOf is the MIG profile the selectors pin a request to: the one
// profile every selector that names one agrees on. Selectors are ANDed, so
// one pinning selector pins the request; but an expression with || may
// accept other profiles too, and two selectors naming different profiles
// match nothing, so both leave the profile unknown ("").
func ProfileOf(selectors []string) string {
	profile := ""
	for _, expr := range selectors {
		ms := profileEq.FindAllStringSubmatch(expr, -1)
		if len(ms) == 0 {
			continue
		}
		if strings.Contains(expr, "||") {
			return ""
		}
		for _, m := range ms {
			p := m[1] + m[2]
			if profile != "" && p != profile {
				return ""
			}
			profile = p
		}
	}
	return profile
}

// MentionsProfile reports whether a selector constrains which MIG slice
// a request gets: by the profile attribute or by the device's capacity
// (memory, multiprocessors), as the driver's tests/bats/specs/
// gpu-simple-mig.yaml does. A changed request replaces such selectors.
func MentionsProfile(expr string) bool {
	return profileEq.MatchString(expr) ||
		strings.Contains(expr, "."+AttrProfile) || strings.Contains(expr, "'"+AttrProfile+"'") || strings.Contains(expr, `"`+AttrProfile+`"`) ||
		strings.Contains(expr, "device.capacity")
}

// ProfileSelector is the CEL expression that pins a MIG request to
// profile, in the form of the driver's demo specs.
func ProfileSelector(profile string) string {
	return "device.attributes['" + Driver + "']." + AttrProfile + " == '" + profile + "'"
}
