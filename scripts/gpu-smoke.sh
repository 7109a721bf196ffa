#!/usr/bin/env bash
# Runs the nvml backend against the real GPUs of this machine, once, and
# records what NVML returned, for docs/ and for fixtures. Meant for the
# device machine: build the exporter elsewhere, carry bin/gpulens-exporter.
#   OUT=dir scripts/gpu-smoke.sh
# Writes under $OUT: snapshot.json (two samples apart, so GPM ratios are
# present), metrics.prom (one scrape), nvidia-smi.txt, exporter.log and
# summary.txt. It only reads: it never changes the GPUs' settings.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-out}"
BIN="${BIN:-bin/gpulens-exporter}"
mkdir -p "$OUT"

{ command -v nvidia-smi >/dev/null && nvidia-smi -q; } >"$OUT/nvidia-smi.txt" 2>&1 || true

# NVML's own answers, before any series is built.
timeout 120 "$BIN" --backend=nvml --collect.interval=5s --debug.dump-snapshot --log.level=info \
	>"$OUT/snapshot.json" 2>"$OUT/dump.log" || echo "dump failed: see dump.log" >>"$OUT/summary.txt"

# The exporter as it runs on a node (no kubelet here: attribution is off).
port=9845
"$BIN" --backend=nvml --collect.interval=5s --web.listen-address="127.0.0.1:$port" \
	--kubelet.pod-resources-socket= >"$OUT/exporter.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
	curl -fsS -o /dev/null "http://127.0.0.1:$port/healthz" 2>/dev/null && break
	sleep 0.2
done
sleep 6 # a second collection, for GPM
curl -fsS "http://127.0.0.1:$port/metrics" >"$OUT/metrics.prom"
curl -sS "http://127.0.0.1:$port/healthz" >"$OUT/healthz.txt" || true
{
	echo "gpus: $(grep -c '^gpulens_gpu_up{' "$OUT/metrics.prom")"
	echo "up: $(grep '^gpulens_gpu_up{' "$OUT/metrics.prom" | awk '{s+=$NF} END {print s}')"
	echo "gpm series: $(grep -c '^gpulens_gpu_sm_active_ratio{' "$OUT/metrics.prom" || true)"
	echo "nvml errors:"; grep '^gpulens_exporter_nvml_errors_total' "$OUT/metrics.prom" || echo "  none"
	echo "rss kB: $(awk '/VmRSS/{print $2}' /proc/$pid/status)"
} >>"$OUT/summary.txt"
cat "$OUT/summary.txt"
