# gpulens — see README.md. Every target works on a fresh machine with Go.
# The Go of go.mod's toolchain line (go1.27.3), which the go command fetches
# from the module proxy. Exported because a machine may set
# GOTOOLCHAIN=local, under which the toolchain line is ignored, and an older
# Go lacks the standard-library fixes that `make vuln` checks for. go.mod's
# go line stays at the oldest Go that builds the code, so plain go commands
# still work on such a machine.
export GOTOOLCHAIN := $(shell awk '$$1 == "toolchain" {print $$2}' go.mod)
GO       ?= go
# go-nvml's cgo (built into the exporter and into the demo's simulated GPUs)
# calls NVML functions its own header marks deprecated; the warnings are
# go-nvml's, not ours, and would be a newcomer's first screen.
export CGO_CFLAGS ?= -O2 -g -Wno-deprecated-declarations
BIN      ?= bin
# What `gpulens version` and the exporter's build_info say: git's, set with
# -ldflags because a machine may set GOFLAGS=-buildvcs=false, which keeps the
# toolchain from stamping the revision (internal/buildinfo fills the rest).
VPKG     := github.com/prometheus/common/version
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null)
REVISION ?= $(shell git rev-parse HEAD 2>/dev/null)
BRANCH   ?= $(shell git rev-parse --abbrev-ref HEAD 2>/dev/null)
LDFLAGS  ?= -X $(VPKG).Version=$(VERSION) -X $(VPKG).Revision=$(REVISION) -X $(VPKG).Branch=$(BRANCH)
PKGS     ?= ./...
TESTFLAGS ?= -count=1 -timeout 20m
# The race detector runs where goroutines share state: the exporter (sampler
# vs scrapes, per-GPU readers, kubelet client, informer) and the fleet
# runner. The analyzer's packages are sequential and spend their time in
# the Prometheus engine, which the race detector slows tenfold.
# (GNU make before 4.4 does not pass exported variables to $(shell).)
RACE_PKGS := $(shell GOTOOLCHAIN=$(GOTOOLCHAIN) $(GO) list ./exporter/... ./internal/... ./cmd/gpulens-exporter/... 2>/dev/null)
OTHER_PKGS := $(filter-out $(RACE_PKGS),$(shell GOTOOLCHAIN=$(GOTOOLCHAIN) $(GO) list $(PKGS) 2>/dev/null))

.PHONY: all build test demo bench lint generate manifests vuln fuzz clean

all: build

build:
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/ ./cmd/...

test:
	$(GO) test -race $(TESTFLAGS) $(RACE_PKGS)
	$(GO) test $(TESTFLAGS) $(OTHER_PKGS)

# The demo keeps its week in ./demo-data (replaced on each run: the
# simulated week ends now) and the CLI in ./bin/gpulens, so the README's next
# commands (./bin/gpulens report --data-dir ./demo-data ...) work as written.
DEMO_DATA ?= demo-data
demo:
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/gpulens ./cmd/gpulens
	rm -rf $(DEMO_DATA)
	$(BIN)/gpulens demo --data-dir $(DEMO_DATA)

# Go benchmarks plus the RSS measurement of a running exporter; figures go in docs/BENCHMARKS.md.
bench: build
	$(GO) test -run '^$$' -bench . -benchmem -count=1 ./exporter/...
	./scripts/bench-rss.sh

# promtool is Debian's prometheus package; locally a missing promtool is
# skipped with a notice, in CI (CI=true) it fails the target.
lint:
	./scripts/check-tracked.sh
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	@if command -v promtool >/dev/null; then \
		promtool check metrics < cmd/gpulens-exporter/testdata/metrics.golden.prom && \
		promtool check rules alerts/gpulens.rules.yml alerts/dcgm-exporter.rules.yml && \
		(cd alerts && promtool test rules testdata/*.test.yml); \
	elif [ "$$CI" = true ]; then echo "CI=true: promtool is not installed (Debian package prometheus)"; exit 1; \
	else echo "promtool not installed: skipping promtool check metrics, check rules and test rules"; fi

# Known vulnerabilities the code reaches, against a database built offline
# from the golang.org/x/vulndb version pinned in tools/go.mod.
vuln:
	./scripts/vuln.sh

# Every fuzz target for FUZZTIME each (default 10s); crashers land in the
# package's testdata/fuzz/ as regression cases.
fuzz:
	./scripts/fuzz.sh

# Refreshes the golden files from the code (review the diff before committing).
generate:
	$(GO) generate $(PKGS)
	$(GO) test -count=1 ./exporter/collector/ ./cmd/gpulens-exporter/ -run 'Golden' -update
	$(GO) test -count=1 ./dashboards/ ./alerts/ -run 'Committed' -update

# Plain manifests rendered from the Helm chart with default values, and with
# gpulens reclaim enabled for e2e/kube's RBAC test, by Helm's own Go
# packages (tools/chart, a module of its own): no helm binary.
# tools/chart's tests fail when the committed file is stale.
manifests:
	$(GO) -C tools/chart run ./cmd/render -chart ../../deploy/helm/gpulens -o ../../deploy/manifests/gpulens.yaml
	$(GO) -C tools/chart run ./cmd/render -chart ../../deploy/helm/gpulens -name reclaimrbac -namespace reclaimrbac-gpulens \
		-f ../../e2e/kube/testdata/reclaim/values.yaml -o ../../e2e/kube/testdata/reclaim/chart.yaml

clean:
	rm -rf $(BIN)
