package report

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
)

// WebhookEnv holds the webhook URL where no flag names one: the form a
// Kubernetes Secret reaches a container in without the URL entering its
// command line, which ps on the node and the shell's history show.
const WebhookEnv = "GPULENS_WEBHOOK_URL"

// WebhookURLError is a webhook URL flag, file or variable that is wrong;
// its message names where the URL came from, never the URL.
type WebhookURLError struct{ Err error }

func (e *WebhookURLError) Error() string { return e.Err.Error() }
func (e *WebhookURLError) Unwrap() error { return e.Err }

// WebhookURL is the incoming webhook to post to, "" for none: from
// --send-webhook (flag), --send-webhook-file (file) or $GPULENS_WEBHOOK_URL
// (through getenv), in that order, two flags being an error. An incoming
// webhook's URL is its credential, so no error quotes it, only where it
// came from.
func WebhookURL(flag, file string, getenv func(string) string) (string, error) {
	from, raw := "--send-webhook", flag
	switch {
	case flag != "" && file != "":
		return "", &WebhookURLError{errors.New("--send-webhook and --send-webhook-file are exclusive: give one (the file keeps the URL out of ps)")}
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return "", &WebhookURLError{fmt.Errorf("--send-webhook-file: %w", err)}
		}
		from, raw = "--send-webhook-file: "+file, strings.TrimSpace(string(b))
		if raw == "" {
			return "", &WebhookURLError{fmt.Errorf("%s is empty; it should hold the webhook URL", from)}
		}
	case flag == "":
		from, raw = "$"+WebhookEnv, strings.TrimSpace(getenv(WebhookEnv))
		if raw == "" {
			return "", nil
		}
	}
	if u, err := url.Parse(raw); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", &WebhookURLError{fmt.Errorf("%s: not an http(s) URL with a host (the value is not shown: a webhook URL is a secret)", from)}
	}
	return raw, nil
}
