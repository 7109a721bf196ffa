package main

import "github.com/gpulens/gpulens/internal/flagrange"

// flagRanges holds every duration and count flag of every command, by
// name; a flag of the same name means the same thing in each command.
// Durations are in seconds. The root checks them before a command runs.
var flagRanges = map[string]flagrange.Range{
	// serve
	"interval":                     {Min: 1, Why: "an analysis takes seconds; a shorter interval runs them back to back"},
	"alertmanager.resend-interval": {Min: 0.1},
	"alertmanager.timeout":         {Min: 0.1},
	"push.interval":                {Min: 0.1},
	"web.shutdown-timeout":         {Min: 0},
	// every command that reads metrics
	"timeout":           {Min: 1, Why: "one query's timeout"},
	"retries":           {Min: 0, Max: 20},
	"query.max-samples": {Min: 0},
	"step":              {Min: 1},
	// demo
	"previous-step": {Min: 0, Max: 3600, Why: "0 simulates no previous window; a scrape interval is at most an hour"},
	// plan
	"node-gpus":    {Min: 0, Max: 1024},
	"max-replicas": {Min: 0, Max: 1024},
}
