package main

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
)

// webhookEnv holds the webhook URL where no flag names one: the form a
// Kubernetes Secret reaches a container in without the URL entering its
// command line, which ps on the node and the shell's history show.
const webhookEnv = "GPULENS_WEBHOOK_URL"

// webhookURL is the incoming webhook to post to, "" for none: from
// --send-webhook, --send-webhook-file or $GPULENS_WEBHOOK_URL, in that
// order, two flags being an error. An incoming webhook's URL is its
// credential, so no error quotes it, only where it came from.
func (o *reportOptions) webhookURL() (string, error) {
	from, raw := "--send-webhook", o.webhook
	switch {
	case o.webhook != "" && o.webhookFile != "":
		return "", usageError{errors.New("--send-webhook and --send-webhook-file are exclusive: give one (the file keeps the URL out of ps)")}
	case o.webhookFile != "":
		b, err := os.ReadFile(o.webhookFile)
		if err != nil {
			return "", usageError{fmt.Errorf("--send-webhook-file: %w", err)}
		}
		from, raw = "--send-webhook-file: "+o.webhookFile, strings.TrimSpace(string(b))
		if raw == "" {
			return "", usageError{fmt.Errorf("%s is empty; it should hold the webhook URL", from)}
		}
	case o.webhook == "":
		from, raw = "$"+webhookEnv, strings.TrimSpace(o.getenv(webhookEnv))
		if raw == "" {
			return "", nil
		}
	}
	if u, err := url.Parse(raw); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", usageError{fmt.Errorf("%s: not an http(s) URL with a host (the value is not shown: a webhook URL is a secret)", from)}
	}
	return raw, nil
}
