// Package criteria holds what the findings judge by: their kinds and their
// thresholds (Config, from defaults.yaml and a user's file over it). It is
// a leaf, so that the rule files, the dashboards and the alerts share the
// analyzer's thresholds and kinds without linking the analysis.
package criteria
