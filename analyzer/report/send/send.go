// Package send posts a report to a Slack-compatible incoming webhook
// (gpulens report --send-webhook). It is apart from analyzer/report so
// that the renderer links no HTTP client.
package send

import (
	"context"
	"fmt"
	"time"

	"github.com/gpulens/gpulens/analyzer/report"
	"github.com/gpulens/gpulens/internal/webhook"
)

// Retries and Backoff are the webhook post's: a receiver that fails for
// a moment (a 429, a 5xx) should not cost the week's report.
const (
	Retries = 3
	Backoff = time.Second
)

// Webhook posts r's Markdown (report.WebhookText, cut to the receiver's
// size) to url.
func Webhook(ctx context.Context, url string, r *report.Report) error {
	return webhookTo(ctx, webhook.Hook{URL: url, Retries: Retries, Backoff: Backoff}, r)
}

func webhookTo(ctx context.Context, hook webhook.Hook, r *report.Report) error {
	md, err := report.WebhookText(r)
	if err != nil {
		return err
	}
	if err := hook.Send(ctx, report.WebhookPayload(md)); err != nil {
		return fmt.Errorf("the report was not sent: %w", err)
	}
	return nil
}
