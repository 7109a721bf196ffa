# Generates the dcgm-exporter 4.9 fixtures from dcgm-exporter.prom: the
# same GPUs and pods, every field under its DCGM 4.7 name and in its base
# unit, and the driver label renamed, as dcgm-exporter 4.9.0's release
# notes describe ("Rename the 23 default and profiling-preset fields that
# DCGM 4.7 deprecates to their new DCGM 4.7 names. Eleven of them also
# change unit: clocks from MHz to hertz, energy from millijoules to joules,
# utilization from a percentage to a 0 to 1 ratio, GPU memory from MiB to
# bytes"; "Rename the driver-version label on every metric from
# DCGM_FI_DRIVER_VERSION to DCGM_FI_SYSTEM_DRIVER_VERSION"). The names:
# NVIDIA/DCGM 72fa3fe dcgm_fields.h (GPU_UTIL_RATIO, GR_ENGINE_UTIL_RATIO),
# go-dcgm b7fa315 (GPU_ENERGY_JOULES_TOTAL); FB_*_BYTES are inferred
# (signals/dcgm/eras.go, docs/research/dcgm-eras.md).
#   python3 eras.py 4.9 > dcgm-exporter.4.9.prom
#   python3 eras.py upgrading > dcgm-exporter.upgrading.prom  (node-2 on 4.9, the rest before)
import sys
from decimal import Decimal
mode = sys.argv[1]
renames = {
    "DCGM_FI_DEV_GPU_UTIL": ("DCGM_FI_DEV_GPU_UTIL_RATIO", Decimal("0.01"), "GPU utilization (ratio)."),
    "DCGM_FI_PROF_GR_ENGINE_ACTIVE": ("DCGM_FI_PROF_GR_ENGINE_UTIL_RATIO", Decimal(1), None),
    "DCGM_FI_DEV_FB_USED": ("DCGM_FI_DEV_FB_USED_BYTES", Decimal(1 << 20), "Framebuffer memory used (in bytes)."),
    "DCGM_FI_DEV_FB_FREE": ("DCGM_FI_DEV_FB_FREE_BYTES", Decimal(1 << 20), "Framebuffer memory free (in bytes)."),
    "DCGM_FI_DEV_FB_RESERVED": ("DCGM_FI_DEV_FB_RESERVED_BYTES", Decimal(1 << 20), "Framebuffer memory reserved (in bytes)."),
    "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION": ("DCGM_FI_DEV_GPU_ENERGY_JOULES_TOTAL", Decimal("0.001"), "Total energy consumption since boot (in J)."),
}
legacy, new = [], {}
for line in open("dcgm-exporter.prom"):
    line = line.rstrip("\n")
    if line.startswith("# "):
        kind, name, rest = line[2:].split(" ", 2)
        if name in renames:
            to, _, help_ = renames[name]
            if kind == "HELP" and help_:
                rest = help_
            new.setdefault(name, []).append("# %s %s %s" % (kind, to, rest))
        legacy.append(line)
        continue
    name = line.split("{")[0]
    body, value = line.rsplit(" ", 1)
    to, scale, _ = renames[name]
    body = to + body[len(name):]
    body = body.replace("DCGM_FI_DRIVER_VERSION=", "DCGM_FI_SYSTEM_DRIVER_VERSION=")
    v = format((Decimal(value) * scale).normalize(), "f")
    upgraded = mode == "4.9" or 'ostname="node-2"' in line
    if upgraded:
        new.setdefault(name, []).append(body + " " + v)
    else:
        legacy.append(line)
# Families stay together, as an exposition wants them.
out = []
for line in legacy:
    out.append(line)
seen = set()
for name in renames:
    for l in new.get(name, []):
        out.append(l)
if mode == "4.9":
    out = [l for l in out if not l.startswith("# ") or any(l.split(" ")[2] == r[0] for r in renames.values())]
    out = [l for l in out if l.startswith("# ") or l.split("{")[0] in [r[0] for r in renames.values()]]
print("\n".join(out))
