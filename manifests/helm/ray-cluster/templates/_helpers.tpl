{{/* Name of the chart, or nameOverride. */}}
{{- define "ray-cluster.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The RayCluster's name: fullnameOverride, else <release>-<name> (just the release name
when it already contains <name>), at most 63 characters. */}}
{{- define "ray-cluster.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* <chart>-<version> for the helm.sh/chart label. */}}
{{- define "ray-cluster.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The chart's labels (KubeRay's four; version only with an appVersion). */}}
{{- define "ray-cluster.chartLabels" -}}
helm.sh/chart: {{ include "ray-cluster.chart" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- with .Chart.AppVersion }}
app.kubernetes.io/version: {{ . | quote }}
{{- end }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* Labels of an object: the chart's, then .Values.labels, then "extra" (later ones win).
Argument: dict root extra. */}}
{{- define "ray-cluster.labels" -}}
{{- $labels := fromYaml (include "ray-cluster.chartLabels" .root) -}}
{{- $labels = mustMergeOverwrite $labels (deepCopy (.root.Values.labels | default dict)) -}}
{{- $labels = mustMergeOverwrite $labels (deepCopy (.extra | default dict)) -}}
{{- toYaml $labels -}}
{{- end -}}

{{/* rayStartParams (and its deprecated alias initArgs) of a group, every value a string;
nothing when both are empty. Argument: the group's values. */}}
{{- define "ray-cluster.rayStartParams" -}}
{{- if or .rayStartParams .initArgs -}}
rayStartParams:
{{- range $key, $val := .rayStartParams }}
  {{ $key }}: {{ $val | quote }}
{{- end }}
{{- range $key, $val := .initArgs }}
  {{ $key }}: {{ $val | quote }}
{{- end }}
{{- end }}
{{- end -}}
