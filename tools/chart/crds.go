package chart

// The Prometheus Operator's CustomResourceDefinitions for the two kinds
// the chart renders, for the e2e test's API server. They are generated
// from the operator's Go types at the version this module requires, by
// the controller-gen that generates the operator's published CRDs
// (example/prometheus-operator-crd in its repository), so they change
// only with go.mod; controller-gen writes every CRD of the package, and
// only two are kept.
//go:generate sh -c "rm -rf testdata/crds && go tool controller-gen crd:crdVersions=v1 paths=github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1 output:crd:dir=testdata/crds.tmp && mkdir testdata/crds && mv testdata/crds.tmp/monitoring.coreos.com_servicemonitors.yaml testdata/crds.tmp/monitoring.coreos.com_prometheusrules.yaml testdata/crds/ && rm -rf testdata/crds.tmp"
