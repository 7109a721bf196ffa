package manifest

import (
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpulens/gpulens/internal/safetext"
)

// Where the NVIDIA GPU operator is told to read configs from: its
// ClusterPolicy's devicePlugin.config.name names a ConfigMap of device
// plugin configs, one key each, which a node's
// nvidia.com/device-plugin.config label selects; migManager.config.name a
// ConfigMap whose config.yaml is mig-parted's config, whose mig-configs
// entry a node's nvidia.com/mig.config label selects.
const (
	OperatorNamespace       = "gpu-operator"
	DevicePluginConfigMap   = "gpulens-device-plugin-config"
	MIGConfigMap            = "gpulens-mig-parted-config"
	migConfigKey            = "config.yaml"
	devicePluginConfigLabel = "nvidia.com/device-plugin.config"
	migConfigLabel          = "nvidia.com/mig.config"
	devicePluginPolicyField = "devicePlugin.config.name"
	migManagerPolicyField   = "migManager.config.name"
)

// configs gathers the device plugin and MIG configs of a cluster's advice
// into one ConfigMap each: applied as several, by one field manager, each
// would take back the keys of the one before.
type configs struct {
	devicePlugin map[string]string
	mig          map[string]any
	notes        []string
}

func (c *configs) addDevicePlugin(name, config string, notes ...string) {
	if c.devicePlugin == nil {
		c.devicePlugin = map[string]string{}
	}
	c.devicePlugin[name] = config
	c.notes = append(c.notes, notes...)
}

// addMIG adds mig-parted's mig-configs entries of doc (version: v1,
// mig-configs: {name: [...]}).
func (c *configs) addMIG(doc map[string]any, notes ...string) {
	if c.mig == nil {
		c.mig = map[string]any{}
	}
	entries, _ := doc["mig-configs"].(map[string]any)
	maps.Copy(c.mig, entries)
	c.notes = append(c.notes, notes...)
}

// docs are the ConfigMaps, device plugin's first.
func (c *configs) docs(cluster string) []Doc {
	var out []Doc
	if len(c.devicePlugin) > 0 {
		cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: DevicePluginConfigMap, Namespace: OperatorNamespace},
			Data:       map[string]string{}}
		maps.Copy(cm.Data, c.devicePlugin)
		comments := []string{
			fmt.Sprintf("NVIDIA device plugin configs, one key each: point the GPU operator's ClusterPolicy at it (%s=%s), merge it with the configs you have, and label each node %s=<key>, e.g.:",
				devicePluginPolicyField, DevicePluginConfigMap, devicePluginConfigLabel),
		}
		for _, k := range slices.Sorted(maps.Keys(c.devicePlugin)) {
			comments = append(comments, "  kubectl label node <node> "+safetext.ShellArg(devicePluginConfigLabel+"="+k)+" --overwrite")
		}
		out = append(out, Doc{Cluster: cluster, Comments: comments, Object: toMap(cm)})
	}
	if len(c.mig) > 0 {
		b := mustYAMLBytes(map[string]any{"version": "v1", "mig-configs": c.mig})
		cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: MIGConfigMap, Namespace: OperatorNamespace},
			Data:       map[string]string{migConfigKey: string(b)}}
		comments := []string{
			fmt.Sprintf("MIG manager (mig-parted) config: point the GPU operator's ClusterPolicy at it (%s=%s), merge it with the mig-configs you have, and label each node %s=<entry>, e.g.:",
				migManagerPolicyField, MIGConfigMap, migConfigLabel),
		}
		for _, k := range slices.Sorted(maps.Keys(c.mig)) {
			comments = append(comments, "  kubectl label node <node> "+safetext.ShellArg(migConfigLabel+"="+k)+" --overwrite")
		}
		out = append(out, Doc{Cluster: cluster, Comments: comments, Object: toMap(cm)})
	}
	if len(out) > 0 {
		out[len(out)-1].Comments = append(out[len(out)-1].Comments, c.notes...)
	}
	return out
}
