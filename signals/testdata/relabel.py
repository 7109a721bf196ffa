# Generates the *.servicemonitor.prom and *.honorlabels.prom fixtures from
# the plain ones: python3 relabel.py dcgm-exporter.prom dcgm [honor].
# Rewrites an exposition as Prometheus stores it when a prometheus-operator
# ServiceMonitor with honorLabels: false scrapes it (scrape.mutateSampleLabels).
import re, sys
src, kind = sys.argv[1], sys.argv[2]
honor = len(sys.argv) > 3 and sys.argv[3] == 'honor'
lab = re.compile(r'([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)"')
targets = {}
out = []
for line in open(src):
    line = line.rstrip("\n")
    if line.startswith("#") or not line.strip():
        out.append(line); continue
    name, rest = line.split("{", 1)
    body, val = rest.rsplit("}", 1)
    labels = lab.findall(body)
    d = dict(labels)
    node = d.get("node") or d.get("Hostname") or d.get("hostname")
    if kind == "dcgm":
        t = [("namespace", "gpu-operator"), ("pod", "nvidia-dcgm-exporter-" + node[-1] + "x7k2"),
             ("container", "nvidia-dcgm-exporter"), ("service", "nvidia-dcgm-exporter"),
             ("endpoint", "gpu-metrics"), ("job", "nvidia-dcgm-exporter"), ("instance", "10.0.0.%s:9400" % node[-1])]
    else:
        t = [("namespace", "gpulens"), ("pod", "gpulens-exporter-" + node[-1] + "q9zt"),
             ("container", "exporter"), ("service", "gpulens-exporter"),
             ("endpoint", "metrics"), ("job", "gpulens-exporter"), ("instance", "10.0.0.%s:9845" % node[-1])]
    targets[node] = t
    if honor:
        # honorLabels: true keeps the scraped value on a conflict and adds
        # the target's label only where the series has none.
        res = [(k, v) for k, v in labels if v != ""]
        res += [(k, v) for k, v in t if d.get(k, "") == ""]
    else:
        res = [(k, v) for k, v in labels if k not in dict(t)]
        for k, v in t:
            if d.get(k, "") != "":
                res.append(("exported_" + k, d[k]))
            res.append((k, v))
    out.append(name + "{" + ",".join('%s="%s"' % kv for kv in res) + "}" + val)
out.append("# TYPE up gauge")
for node in sorted(targets):
    out.append("up{" + ",".join('%s="%s"' % kv for kv in targets[node]) + "} 1")
print("\n".join(out))
