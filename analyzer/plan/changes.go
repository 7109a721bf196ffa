package plan

import (
	"fmt"
	"io"
	"strings"

	"github.com/gpulens/gpulens/analyzer/recommend"
	"github.com/gpulens/gpulens/internal/safetext"
)

// Change is one of the plan's changes in data, for analyzer/manifest to
// build as Kubernetes objects: what it is in words (Notes, one comment line
// each, from the store's names and so escaped when written), and at most
// one of a device plugin config, a MIG manager (mig-parted) config or a
// workload patch. A Change with none is notes alone: labels to set, a
// layout kept, a DRA claim to change by hand.
type Change struct {
	// Cluster is the cluster the change is made in, in a plan of several.
	Cluster string
	Notes   []string
	// DevicePluginConfig is a config for the NVIDIA device plugin's config
	// map, under Name, which the nodes' nvidia.com/device-plugin.config
	// label selects.
	DevicePluginConfig *NamedConfig
	// MIGConfig is a mig-parted config (version and mig-configs), whose
	// entry Name the nodes' nvidia.com/mig.config label selects.
	MIGConfig *NamedConfig
	Patch     *recommend.Patch
}

// NamedConfig is a config document and the name that selects it.
type NamedConfig struct {
	Name   string
	Config map[string]any
}

// Changes are p's changes in the order 'plan --format yaml' writes them.
func Changes(p *Plan) []Change {
	d := &dataEmitter{}
	emitChanges(p, d)
	return d.out
}

// emitter receives the plan's changes: documents of notes, each with at
// most one config or patch.
type emitter interface {
	doc(cluster string)
	note(format string, args ...any)
	// empty ends a document that is notes alone.
	empty()
	devicePluginConfig(name string, cfg map[string]any)
	migConfig(name string, cfg map[string]any)
	patch(*recommend.Patch)
}

// textEmitter writes the plan's YAML as version: v1 documents with their
// comments.
type textEmitter struct {
	w io.Writer
	n int
}

func (t *textEmitter) doc(string) {
	if t.n > 0 {
		fmt.Fprintln(t.w, "---")
	}
	t.n++
}

// note writes a comment line, "# " and all, of format; what it says comes
// from the store (workload names, labels), so a line break in it is
// escaped rather than ending the comment.
func (t *textEmitter) note(format string, args ...any) {
	fmt.Fprintln(t.w, safetext.Comment(fmt.Sprintf(format, args...)))
}

func (t *textEmitter) empty() { fmt.Fprintln(t.w, "version: v1") }

func (t *textEmitter) devicePluginConfig(_ string, cfg map[string]any) { writeYAMLDoc(t.w, cfg) }

func (t *textEmitter) migConfig(_ string, cfg map[string]any) { writeYAMLDoc(t.w, cfg) }

func (t *textEmitter) patch(p *recommend.Patch) {
	fmt.Fprint(t.w, strings.TrimRight(p.YAML, "\n")+"\n")
}

// dataEmitter collects the changes.
type dataEmitter struct{ out []Change }

func (d *dataEmitter) doc(cluster string) { d.out = append(d.out, Change{Cluster: cluster}) }

func (d *dataEmitter) last() *Change { return &d.out[len(d.out)-1] }

func (d *dataEmitter) note(format string, args ...any) {
	d.last().Notes = append(d.last().Notes, strings.TrimPrefix(strings.TrimPrefix(fmt.Sprintf(format, args...), "#"), " "))
}

func (d *dataEmitter) empty() {}

func (d *dataEmitter) devicePluginConfig(name string, cfg map[string]any) {
	d.last().DevicePluginConfig = &NamedConfig{Name: name, Config: cfg}
}

func (d *dataEmitter) migConfig(name string, cfg map[string]any) {
	d.last().MIGConfig = &NamedConfig{Name: name, Config: cfg}
}

func (d *dataEmitter) patch(p *recommend.Patch) { d.last().Patch = p }
