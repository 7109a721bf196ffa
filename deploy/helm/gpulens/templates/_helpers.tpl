{{- define "gpulens.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "gpulens.exporter.fullname" -}}
{{- printf "%s-exporter" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "gpulens.labels" -}}
app.kubernetes.io/name: {{ include "gpulens.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "gpulens.exporter.selectorLabels" -}}
app.kubernetes.io/name: {{ include "gpulens.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: exporter
{{- end -}}

{{- define "gpulens.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "gpulens.exporter.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "gpulens.analyzer.fullname" -}}
{{- printf "%s-analyzer" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "gpulens.analyzer.selectorLabels" -}}
app.kubernetes.io/name: {{ include "gpulens.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: analyzer
{{- end -}}

{{- define "gpulens.analyzer.serviceAccountName" -}}
{{- if .Values.analyzer.serviceAccount.create -}}
{{- default (include "gpulens.analyzer.fullname" .) .Values.analyzer.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.analyzer.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "gpulens.analyzer.image" -}}
{{- $a := .Values.analyzer -}}
{{ $a.repository }}/{{ $a.image }}:{{ default .Chart.AppVersion $a.version }}
{{- end -}}

{{/* The source flags serve and the weekly report share: the store, and
the fleet's kubeconfig and contexts (analyzer.fleet, docs/FLEET.md). */}}
{{- define "gpulens.analyzer.sourceArgs" -}}
{{- $f := .Values.analyzer.fleet -}}
- --prometheus-url={{ .Values.analyzer.prometheusURL }}
- --team-label={{ .Values.analyzer.teamLabel }}
- --cluster-label={{ .Values.analyzer.clusterLabel }}
{{- with .Values.analyzer.maxReplySize }}
- --query.max-reply-size={{ . }}
{{- end }}
{{- with .Values.analyzer.bearerTokenFile }}
- --bearer-token-file={{ . }}
{{- end }}
{{- range .Values.analyzer.headers }}
- --header={{ . }}
{{- end }}
{{- if $f.kubeconfigSecret.name }}
- --kubeconfig={{ include "gpulens.analyzer.kubeconfigPath" . }}
{{- else if or $f.contexts $f.allContexts }}
{{- fail "analyzer.fleet.contexts and analyzer.fleet.allContexts name contexts of a kubeconfig: set analyzer.fleet.kubeconfigSecret.name to the Secret holding it" }}
{{- end }}
{{- range $f.contexts }}
- {{ printf "--context=%s" . | quote }}
{{- end }}
{{- if $f.allContexts }}
- --all-contexts
{{- end }}
{{- end -}}

{{/* Where the fleet's kubeconfig is mounted: a directory of its own, not
/etc/gpulens, which holds the web config's Secret when there is one. */}}
{{- define "gpulens.analyzer.kubeconfigDir" -}}
/etc/gpulens-fleet
{{- end -}}

{{- define "gpulens.analyzer.kubeconfigPath" -}}
{{ include "gpulens.analyzer.kubeconfigDir" . }}/kubeconfig
{{- end -}}

{{/* The fleet kubeconfig's volume mount, read-only; empty without one. */}}
{{- define "gpulens.analyzer.fleetVolumeMounts" -}}
{{- if .Values.analyzer.fleet.kubeconfigSecret.name }}
- name: fleet-kubeconfig
  mountPath: {{ include "gpulens.analyzer.kubeconfigDir" . }}
  readOnly: true
{{- end }}
{{- end -}}

{{/* The fleet kubeconfig's volume: only its key, as the file "kubeconfig".
(Secret files are root's; the analyzer's user reads them by the default
mode, 0644, as it does the web config.) */}}
{{- define "gpulens.analyzer.fleetVolumes" -}}
{{- with .Values.analyzer.fleet.kubeconfigSecret }}
{{- if .name }}
- name: fleet-kubeconfig
  secret:
    secretName: {{ .name }}
    items:
      - key: {{ .key }}
        path: kubeconfig
{{- end }}
{{- end }}
{{- end -}}

{{/* gpulens reclaim's Lease (--leader-election.name), in the release namespace. */}}
{{- define "gpulens.analyzer.reclaimLeaseName" -}}
{{- default (printf "%s-reclaim" .Release.Name | trunc 63 | trimSuffix "-") .Values.analyzer.reclaim.leaseName -}}
{{- end -}}

{{/* Whether reclaim renders; it fails on values it cannot honour. */}}
{{- define "gpulens.analyzer.reclaimEnabled" -}}
{{- $r := .Values.analyzer.reclaim -}}
{{- if and .Values.analyzer.enabled $r.enabled -}}
{{- if not $r.namespaces -}}
{{- fail "analyzer.reclaim.enabled: list the namespaces it may act in under analyzer.reclaim.namespaces; none are implied" -}}
{{- end -}}
{{- if not .Values.analyzer.rbac.create -}}
{{- fail "analyzer.reclaim.enabled needs analyzer.rbac.create: its Role is what confines it to analyzer.reclaim.namespaces" -}}
{{- end -}}
{{- if .Values.analyzer.fleet.kubeconfigSecret.name -}}
{{- fail "analyzer.reclaim acts on this cluster, with the pod's ServiceAccount; it does not combine with analyzer.fleet: run it in each member cluster" -}}
{{- end -}}
true
{{- end -}}
{{- end -}}
