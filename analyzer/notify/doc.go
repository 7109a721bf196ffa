// Package notify pushes findings to Alertmanager through its API v2
// (POST /api/v2/alerts), the way Prometheus's own notifier does: every
// active alert is re-sent each resend interval with an endsAt a few
// intervals ahead, so an Alertmanager that restarts or misses a batch has
// it again by the next resend, and one that stops hearing from gpulens
// resolves the alerts by itself. A finding that goes away is sent once
// more with endsAt at the time it went, and repeated for a while, so that
// an Alertmanager that was down at that moment resolves it too.
//
// Each Alertmanager of an HA set gets every alert from its own bounded
// queue: a slow or dead one cannot hold back the others.
package notify
