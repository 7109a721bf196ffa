package serve

import "github.com/gpulens/gpulens/internal/redact"

// redactURLSecrets removes from msg what of raw, a URL the user gave,
// could be a credential, by internal/redact's one rule: the password of
// its user info (plain, escaped and as a Basic header's base64) and its
// query (VictoriaMetrics' authKey, a token), whole and value by value.
// Libraries quote the URL they were given in their errors; net/url's
// Redacted hides the password alone.
func redactURLSecrets(msg, raw string) string { return redact.Of([]string{raw}).Apply(msg) }
