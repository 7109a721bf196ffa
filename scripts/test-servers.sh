#!/usr/bin/env bash
# Starts (or stops) Prometheus, Alertmanager and VictoriaMetrics on loopback
# for end-to-end tests and prints the environment the tests read:
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
}

stop() {
	for n in prometheus alertmanager victoria-metrics; do
		if [ -f "$dir/$n.pid" ]; then
			kill "$(cat "$dir/$n.pid")" 2>/dev/null || true
			rm -f "$dir/$n.pid"
		fi
	done
}

case "${1:-}" in
start) start ;;
stop) stop ;;
*) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
