package manifest

import (
	"github.com/gpulens/gpulens/analyzer/plan"
)

// FromPlan is the plan's changes as objects: per cluster the device plugin
// and MIG manager configs, one ConfigMap each with the labels that select
// them, then a patch per workload that moves; node groups and pools
// without a config to roll out are words alone.
func FromPlan(p *plan.Plan) []Doc {
	var out []Doc
	cfg := map[string]*configs{}
	var order []string
	for _, ch := range plan.Changes(p) {
		if cfg[ch.Cluster] == nil {
			cfg[ch.Cluster] = &configs{}
			order = append(order, ch.Cluster)
		}
		switch {
		case ch.DevicePluginConfig != nil:
			b := mustYAML(ch.DevicePluginConfig.Config)
			cfg[ch.Cluster].addDevicePlugin(ch.DevicePluginConfig.Name, b, ch.Notes...)
		case ch.MIGConfig != nil:
			cfg[ch.Cluster].addMIG(ch.MIGConfig.Config, ch.Notes...)
		case ch.Patch != nil:
			d := patchDoc(ch.Patch)
			d.Cluster, d.Comments = ch.Cluster, append(ch.Notes, d.Comments...)
			out = append(out, d)
		default:
			out = append(out, Doc{Cluster: ch.Cluster, Comments: ch.Notes})
		}
	}
	var head []Doc
	for _, c := range order {
		head = append(head, cfg[c].docs(c)...)
	}
	return Merged(append(head, out...))
}
