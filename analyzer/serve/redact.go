package serve

import (
	"net/url"
	"strings"
)

// redactURLSecrets removes from msg what of raw, a URL the user gave,
// could be a credential: the password of its user info and its query
// (VictoriaMetrics' authKey, a token), as given and as re-encoded. Libraries
// quote the URL they were given in their errors; net/url's Redacted hides
// the password alone.
func redactURLSecrets(msg, raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return msg
	}
	var secrets []string
	if p, ok := u.User.Password(); ok {
		secrets = append(secrets, p, url.UserPassword("", p).String()[1:])
	}
	if u.RawQuery != "" {
		secrets = append(secrets, u.RawQuery, u.Query().Encode())
		for _, vs := range u.Query() {
			secrets = append(secrets, vs...)
		}
	}
	for _, s := range secrets {
		// Short values ("1", "true") would blank unrelated text.
		if len(s) >= 4 {
			msg = strings.ReplaceAll(msg, s, "<redacted>")
		}
	}
	return msg
}
