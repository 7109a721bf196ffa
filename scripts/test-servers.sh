#!/usr/bin/env bash
# Starts (or stops) Prometheus, Alertmanager and VictoriaMetrics on loopback
# for end-to-end tests (and finds Thanos and starts a Kubernetes API server,
# below) and prints the environment the tests read:
#   eval "$(scripts/test-servers.sh start)"; ...; scripts/test-servers.sh stop
set -euo pipefail
dir="${GPULENS_TEST_SERVERS_DIR:-${TMPDIR:-/tmp}/gpulens-test-servers}"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

wait_ready() { # url name
	for _ in $(seq 1 100); do
		curl -fsS -o /dev/null "$1" 2>/dev/null && return 0
		sleep 0.2
	done
	echo "test-servers: $2 did not become ready at $1; log: $dir/$2.log" >&2
	return 1
}

start() {
	stop >/dev/null 2>&1 || true
	mkdir -p "$dir"
	local pp ap vp
	pp=$(free_port); ap=$(free_port); vp=$(free_port)
	cat >"$dir/prometheus.yml" <<YML
global: {scrape_interval: 15s}
YML
	prometheus --config.file="$dir/prometheus.yml" --storage.tsdb.path="$dir/prom-data" \
		--web.listen-address="127.0.0.1:$pp" --web.enable-admin-api --web.enable-lifecycle \
		>"$dir/prometheus.log" 2>&1 &
	echo $! >"$dir/prometheus.pid"
	cat >"$dir/alertmanager.yml" <<YML
route: {receiver: "null"}
receivers: [{name: "null"}]
YML
	prometheus-alertmanager --config.file="$dir/alertmanager.yml" --storage.path="$dir/am-data" \
		--web.listen-address="127.0.0.1:$ap" --cluster.listen-address= \
		>"$dir/alertmanager.log" 2>&1 &
	echo $! >"$dir/alertmanager.pid"
	victoria-metrics -storageDataPath="$dir/vm-data" -httpListenAddr="127.0.0.1:$vp" \
		>"$dir/victoria-metrics.log" 2>&1 &
	echo $! >"$dir/victoria-metrics.pid"
	trap stop ERR
	wait_ready "http://127.0.0.1:$pp/-/ready" prometheus
	wait_ready "http://127.0.0.1:$ap/-/ready" alertmanager
	wait_ready "http://127.0.0.1:$vp/health" victoria-metrics
	echo "export GPULENS_TEST_PROMETHEUS_URL=http://127.0.0.1:$pp"
	echo "export GPULENS_TEST_ALERTMANAGER_URL=http://127.0.0.1:$ap"
	echo "export GPULENS_TEST_VICTORIAMETRICS_URL=http://127.0.0.1:$vp"
	start_thanos
	start_kube
}

# Thanos for e2e/thanos_test.go, which starts its own Prometheus servers,
# sidecars and Thanos Query (a fleet of three stores per test): only the
# path of the binary that scripts/thanos.sh builds from source. Skipped with
# a warning when it is not built, so that the other servers still start;
# under CI=true the test that needs it then fails.
start_thanos() {
	local bin
	if ! bin=$("$(dirname "$0")/thanos.sh" --cached); then
		echo "test-servers: no Thanos" >&2
		return 0
	fi
	echo "export GPULENS_TEST_THANOS=$bin"
}

# A Kubernetes API server for the tests that need real field selectors, RBAC,
# admission and validation: Debian's etcd-server as its storage and the
# kube-apiserver that scripts/kube-apiserver.sh builds from source. Nothing
# else of a cluster runs (no scheduler, controllers or kubelet). Tests reach it
# as an admin through the kubeconfig in GPULENS_TEST_KUBECONFIG and take other
# identities by impersonation. Skipped with a warning when either binary is
# missing, so that the other servers still start; under CI=true the tests
# that need it then fail.
start_kube() {
	local apiserver ep pp kp kdir
	if ! command -v etcd >/dev/null 2>&1; then
		echo "test-servers: etcd not installed (Debian etcd-server); no Kubernetes API server" >&2
		return 0
	fi
	if ! apiserver=$("$(dirname "$0")/kube-apiserver.sh" --cached); then
		echo "test-servers: no Kubernetes API server" >&2
		return 0
	fi
	kdir="$dir/kube"
	rm -rf "$kdir"
	mkdir -p "$kdir"
	ep=$(free_port); pp=$(free_port); kp=$(free_port)
	etcd --name gpulens-test --data-dir "$kdir/etcd-data" \
		--listen-client-urls "http://127.0.0.1:$ep" --advertise-client-urls "http://127.0.0.1:$ep" \
		--listen-peer-urls "http://127.0.0.1:$pp" --initial-advertise-peer-urls "http://127.0.0.1:$pp" \
		--initial-cluster "gpulens-test=http://127.0.0.1:$pp" \
		>"$dir/etcd.log" 2>&1 &
	echo $! >"$dir/etcd.pid"
	# A serving certificate for 127.0.0.1 of our own, so that clients verify
	# it rather than skip verification; and the service account key pair
	# the API server insists on even though no token controller runs.
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
		-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1,DNS:localhost \
		-keyout "$kdir/serving.key" -out "$kdir/serving.crt" 2>/dev/null
	openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:prime256v1 -out "$kdir/sa.key" 2>/dev/null
	openssl pkey -in "$kdir/sa.key" -pubout -out "$kdir/sa.pub" 2>/dev/null
	local token
	token=$(openssl rand -hex 24)
	echo "$token,gpulens-test-admin,gpulens-test-admin,system:masters" >"$kdir/tokens.csv"
	wait_ready "http://127.0.0.1:$ep/health" etcd
	# --endpoint-reconciler-type=none: the kubernetes Service's endpoints
	# may not be a loopback address, and nothing in-cluster needs them.
	"$apiserver" --etcd-servers="http://127.0.0.1:$ep" \
		--bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$kp" \
		--cert-dir="$kdir/certs" --tls-cert-file="$kdir/serving.crt" --tls-private-key-file="$kdir/serving.key" \
		--service-account-key-file="$kdir/sa.pub" --service-account-signing-key-file="$kdir/sa.key" \
		--service-account-issuer=https://kubernetes.default.svc.cluster.local \
		--token-auth-file="$kdir/tokens.csv" --authorization-mode=RBAC \
		--service-cluster-ip-range=10.96.0.0/16 \
		--endpoint-reconciler-type=none \
		>"$dir/kube-apiserver.log" 2>&1 &
	echo $! >"$dir/kube-apiserver.pid"
	cat >"$kdir/kubeconfig" <<YML
apiVersion: v1
kind: Config
clusters:
- name: gpulens-test
  cluster: {server: "https://127.0.0.1:$kp", certificate-authority: "$kdir/serving.crt"}
users:
- name: gpulens-test-admin
  user: {token: "$token"}
contexts:
- name: gpulens-test
  context: {cluster: gpulens-test, user: gpulens-test-admin}
current-context: gpulens-test
YML
	# The API server bootstraps its RBAC roles and priority levels before
	# /readyz passes; on a loaded CI machine that takes tens of seconds.
	for _ in $(seq 1 300); do
		if curl -fsS -o /dev/null --cacert "$kdir/serving.crt" "https://127.0.0.1:$kp/readyz" 2>/dev/null; then
			echo "export GPULENS_TEST_KUBECONFIG=$kdir/kubeconfig"
			return 0
		fi
		if ! kill -0 "$(cat "$dir/kube-apiserver.pid")" 2>/dev/null; then
			break
		fi
		sleep 0.5
	done
	echo "test-servers: kube-apiserver did not become ready at https://127.0.0.1:$kp/readyz; log: $dir/kube-apiserver.log" >&2
	tail -n 20 "$dir/kube-apiserver.log" >&2 || true
	stop_kube
	return 1
}

# The API server goes first and is waited for: once etcd is gone, its
# graceful shutdown hangs on storage that no longer answers.
stop_kube() {
	local pid
	for n in kube-apiserver etcd; do
		[ -f "$dir/$n.pid" ] || continue
		pid=$(cat "$dir/$n.pid")
		kill "$pid" 2>/dev/null || true
		for _ in $(seq 1 50); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.2
		done
		kill -9 "$pid" 2>/dev/null || true
		rm -f "$dir/$n.pid"
	done
}

stop() {
	for n in prometheus alertmanager victoria-metrics; do
		if [ -f "$dir/$n.pid" ]; then
			kill "$(cat "$dir/$n.pid")" 2>/dev/null || true
			rm -f "$dir/$n.pid"
		fi
	done
	stop_kube
}

case "${1:-}" in
start) start ;;
stop) stop ;;
# Only the Kubernetes API server, for working on the tests that use it.
start-kube) stop_kube >/dev/null 2>&1 || true; mkdir -p "$dir"; start_kube ;;
stop-kube) stop_kube ;;
*) echo "usage: $0 start|stop|start-kube|stop-kube" >&2; exit 2 ;;
esac
