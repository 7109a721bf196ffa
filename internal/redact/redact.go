// Package redact is gpulens's one rule for secrets in what it shows: every
// log line, error and message that may quote a URL, a header or a server's
// answer goes through a Secrets holding every credential the process was
// given (a password, a token, the user info and query of a URL), in every
// form a library or a server may print it: as given, URL-escaped, and as
// the base64 of user:password that a Basic Authorization header carries.
package redact

import (
	"encoding/base64"
	"net/url"
	"slices"
	"strings"
)

// Mask replaces a secret.
const Mask = "<redacted>"

// minLen: shorter values ("1", "on") would blank unrelated text.
const minLen = 4

// Secrets is a set of values never to show. The zero value holds none.
type Secrets struct{ values []string }

// Add adds values, and their URL-escaped forms.
func (s *Secrets) Add(values ...string) {
	for _, v := range values {
		v = strings.TrimSpace(v)
		if len(v) < minLen {
			continue
		}
		s.values = append(s.values, v, url.QueryEscape(v), url.PathEscape(v))
	}
}

// AddBasicAuth adds a password and the base64 of user:password, the
// Authorization header a proxy may quote back.
func (s *Secrets) AddBasicAuth(user, password string) {
	if strings.TrimSpace(password) == "" {
		return
	}
	s.Add(password)
	s.values = append(s.values, base64.StdEncoding.EncodeToString([]byte(user+":"+password)),
		base64.StdEncoding.EncodeToString([]byte(user+":"+strings.TrimSpace(password))))
}

// AddURL adds what of a URL the user gave could be a credential: its user
// info's password (and the Basic header made of it) and its query
// (VictoriaMetrics' authKey, a token), whole and value by value. An
// incoming webhook's URL path is its credential too: AddPath adds it.
func (s *Secrets) AddURL(raw string) {
	u, err := url.Parse(raw)
	if err != nil {
		// Whatever follows the scheme may hold the credential.
		if _, rest, ok := strings.Cut(raw, "://"); ok {
			s.Add(rest)
		}
		return
	}
	if p, ok := u.User.Password(); ok {
		s.AddBasicAuth(u.User.Username(), p)
		s.values = append(s.values, url.UserPassword("", p).String()[1:])
	}
	if u.RawQuery != "" {
		s.Add(u.RawQuery, u.Query().Encode())
		for _, vs := range u.Query() {
			s.Add(vs...)
		}
	}
}

// AddPath adds a URL's path, for URLs whose path is the secret (a Slack
// incoming webhook's).
func (s *Secrets) AddPath(raw string) {
	if u, err := url.Parse(raw); err == nil && len(strings.Trim(u.Path, "/")) >= minLen {
		s.Add(u.EscapedPath(), u.Path)
	}
}

// Apply returns msg with every secret replaced by Mask, the longest first
// so that a secret holding another is masked whole.
func (s *Secrets) Apply(msg string) string {
	if s == nil || len(s.values) == 0 {
		return msg
	}
	vs := slices.Clone(s.values)
	slices.SortFunc(vs, func(a, b string) int { return len(b) - len(a) })
	for _, v := range slices.Compact(vs) {
		if len(v) >= minLen {
			msg = strings.ReplaceAll(msg, v, Mask)
		}
	}
	return msg
}

// Of is a Secrets of the URLs' credentials and the values given.
func Of(urls []string, values ...string) *Secrets {
	s := &Secrets{}
	for _, u := range urls {
		s.AddURL(u)
	}
	s.Add(values...)
	return s
}
