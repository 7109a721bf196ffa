# Generates the per-layout dcgm-exporter fixtures from dcgm-exporter.prom,
# whose time-sliced GPU (UUID ...61, inference-a and inference-b) is in the
# --kubernetes-virtual-gpus copies layout, following dcgm-exporter's
# PodMapper.Process:
#   python3 layouts.py no-virtual-gpus > dcgm-exporter.no-virtual-gpus.prom
#   python3 layouts.py virtual-gpus-2025 > dcgm-exporter.virtual-gpus-2025.prom
import sys
layout = sys.argv[1]
shared = 'UUID="GPU-5f0b3c2e-8d1a-4f6b-9c7e-1a2b3c4d5e61"'
# The tenants' own processes under the 2025 layout: per-process memory in
# MiB and SM utilization in percent of the GPU, summing to the device's.
own = {"inference-a": {"DCGM_FI_DEV_FB_USED": 12000, "DCGM_FI_DEV_GPU_UTIL": 30},
       "inference-b": {"DCGM_FI_DEV_FB_USED": 8000, "DCGM_FI_DEV_GPU_UTIL": 20}}
vgpu = {"inference-a": "0", "inference-b": "1"}
for line in open("dcgm-exporter.prom"):
    line = line.rstrip("\n")
    if shared not in line:
        print(line)
        continue
    name = line.split("{")[0]
    pod = "inference-a" if 'pod="inference-a"' in line else "inference-b"
    if layout == "no-virtual-gpus":
        # One pod per device ID: the last listed wins, and no vgpu.
        if pod == "inference-b":
            print(line)
        continue
    body, value = line.rsplit("} ", 1)
    tenant = ',container="server",namespace="team-b",pod="%s"' % pod
    device = body.replace(tenant, "")
    if name in own[pod]:
        if pod == "inference-a":
            print(device + "} " + value)  # the device's own series, kept
        print(body + ',vgpu="%s",pod_uid="uid-%s"} %d' % (vgpu[pod], pod, own[pod][name]))
    else:
        print(body + ',vgpu="%s"} %s' % (vgpu[pod], value))
