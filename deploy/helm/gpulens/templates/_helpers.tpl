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

{{/* The source flags serve and the weekly report share. */}}
{{- define "gpulens.analyzer.sourceArgs" -}}
- --prometheus-url={{ .Values.analyzer.prometheusURL }}
- --team-label={{ .Values.analyzer.teamLabel }}
{{- with .Values.analyzer.bearerTokenFile }}
- --bearer-token-file={{ . }}
{{- end }}
{{- range .Values.analyzer.headers }}
- --header={{ . }}
{{- end }}
{{- end -}}
