package criteria

// AlertPrefix starts every alert name, the rules' and gpulens serve's
// (monitoring-mixins: one common prefix), so that routes and silences
// match all of gpulens's alerts with one matcher.
const AlertPrefix = "GPULens"

// RunbookBase is where runbook_url anchors point: docs/runbooks.md on the
// repository's default branch.
const RunbookBase = "https://github.com/gpulens/gpulens/blob/main/docs/runbooks.md"
