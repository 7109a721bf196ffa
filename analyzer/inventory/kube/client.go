package kube

import (
	"errors"
	"fmt"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// The inventory issues a handful of paged lists per run; client-go's
// default of 5 QPS would make a 20k-pod cluster take many seconds for no
// benefit to the API server, which sees the same requests either way.
const (
	clientQPS   = 20
	clientBurst = 40
	userAgent   = "gpulens-analyzer"
)

// ErrNoConfig is returned by NewClient when neither an in-cluster service
// account nor a kubeconfig is available.
var ErrNoConfig = errors.New("no Kubernetes configuration found: not running in a pod and no kubeconfig " +
	"($KUBECONFIG, ~/.kube/config); pass --kubeconfig, or run without Kubernetes state")

// NewClient builds a clientset from Options. An explicit Kubeconfig or
// Context always wins; otherwise the in-cluster service account is
// preferred, then the usual kubeconfig loading rules.
func NewClient(o Options) (kubernetes.Interface, error) {
	o = o.withDefaults()
	cfg, err := restConfig(o)
	if err != nil {
		return nil, err
	}
	cfg = rest.CopyConfig(cfg)
	cfg.Timeout = o.Timeout
	cfg.QPS = clientQPS
	cfg.Burst = clientBurst
	cfg = rest.AddUserAgent(cfg, userAgent)
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client for %s: %w", cfg.Host, err)
	}
	return c, nil
}

func restConfig(o Options) (*rest.Config, error) {
	if o.Kubeconfig == "" && o.Context == "" {
		cfg, err := rest.InClusterConfig()
		if err == nil {
			o.Logger.Debug("using in-cluster Kubernetes config", "host", cfg.Host)
			return cfg, nil
		}
		if !errors.Is(err, rest.ErrNotInCluster) {
			// In a pod but without a usable service account token: say so
			// rather than silently trying a kubeconfig that is not there.
			return nil, fmt.Errorf("in-cluster Kubernetes config: %w", err)
		}
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = o.Kubeconfig
	overrides := &clientcmd.ConfigOverrides{CurrentContext: o.Context}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides).ClientConfig()
	switch {
	case err == nil:
		return cfg, nil
	case clientcmd.IsEmptyConfig(err):
		return nil, ErrNoConfig
	case o.Kubeconfig != "":
		return nil, fmt.Errorf("kubeconfig %s: %w", o.Kubeconfig, err)
	default:
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
}
