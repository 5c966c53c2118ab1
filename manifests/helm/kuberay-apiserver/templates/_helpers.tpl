{{/* ---------------------------------------------------------------- names */}}

{{/* Chart name, or nameOverride; at most 63 characters. */}}
{{- define "kuberay-apiserver.name" -}}
{{- .Values.nameOverride | default .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
Base name of the release's objects: fullnameOverride, else the release name when it already
contains the chart name, else "<release>-<name>" (KubeRay's rule).
*/}}
{{- define "kuberay-apiserver.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := .Values.nameOverride | default .Chart.Name -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "kuberay-apiserver.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "kuberay-apiserver.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- .Values.serviceAccount.name | default (include "kuberay-apiserver.fullname" .) -}}
{{- else -}}
{{- .Values.serviceAccount.name | default "default" -}}
{{- end -}}
{{- end -}}

{{/* The Secret holding the listener's certificate (tls.enabled). */}}
{{- define "kuberay-apiserver.tlsSecretName" -}}
{{- .Values.tls.secretName | default (printf "%s-tls" (include "kuberay-apiserver.fullname" .)) -}}
{{- end -}}

{{/* ---------------------------------------------------------------- labels */}}

{{- define "kuberay-apiserver.labels" -}}
helm.sh/chart: {{ include "kuberay-apiserver.chart" . }}
app.kubernetes.io/name: {{ include "kuberay-apiserver.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- with .Chart.AppVersion }}
app.kubernetes.io/version: {{ . | quote }}
{{- end }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/*
What the Deployment and the Service select on: KubeRay's chart's pair (component = chart
name, name = release name), kept because a Deployment's selector cannot change, so
`helm upgrade` from KubeRay's chart works.
*/}}
{{- define "kuberay-apiserver.selectorLabels" -}}
app.kubernetes.io/component: {{ include "kuberay-apiserver.name" . }}
app.kubernetes.io/name: {{ .Release.Name }}
{{- end -}}

{{/* ---------------------------------------------------------------- values */}}

{{/* The containerPort of the `containerPort` entry named http ("" when there is none). */}}
{{- define "kuberay-apiserver.httpPort" -}}
{{- range .Values.containerPort -}}
{{- if eq .name "http" -}}{{- .containerPort -}}{{- end -}}
{{- end -}}
{{- end -}}

{{/* "HTTPS" with tls.enabled, else "HTTP": the probes' and scrapers' scheme. */}}
{{- define "kuberay-apiserver.scheme" -}}
{{- if .Values.tls.enabled -}}HTTPS{{- else -}}HTTP{{- end -}}
{{- end -}}

{{/* Fail rendering on values the server would refuse or could not honour. */}}
{{- define "kuberay-apiserver.checkValues" -}}
{{- if not (has .Values.authMode (list "caller" "service-account")) -}}
{{- fail (printf "authMode must be caller or service-account, got %q" (toString .Values.authMode)) -}}
{{- end -}}
{{- if and .Values.security (eq .Values.authMode "service-account") -}}
{{- fail "security (KubeRay's static-token proxy sidecar) is not supported: with authMode service-account anyone reaching the port would act with the server's rights. Use authMode caller (every request then needs the caller's Kubernetes token) or remove security" -}}
{{- end -}}
{{- if not (include "kuberay-apiserver.httpPort" .) -}}
{{- fail "containerPort needs an entry named http (the server's listener)" -}}
{{- end -}}
{{- end -}}

{{/* The server's arguments (a YAML list). */}}
{{- define "kuberay-apiserver.args" -}}
{{- $args := list (printf "--httpPortFlag=:%v" (include "kuberay-apiserver.httpPort" .)) -}}
{{- $args = append $args (printf "--enable-api-server-v2=%t" .Values.enableAPIServerV2) -}}
{{- with .Values.cors -}}
{{- with .allowOrigin -}}
{{- $args = append $args (printf "--cors-allow-origin=%s" .) -}}
{{- end -}}
{{- end -}}
{{- $args = append $args (printf "--auth-mode=%s" .Values.authMode) -}}
{{- if .Values.tls.enabled -}}
{{- $args = append $args "--tls-cert-file=/etc/kuberay-apiserver/tls/tls.crt" -}}
{{- $args = append $args "--tls-private-key-file=/etc/kuberay-apiserver/tls/tls.key" -}}
{{- end -}}
{{- with .Values.historyServerUrl -}}
{{- $args = append $args (printf "--history-server-url=%s" .) -}}
{{- end -}}
{{- $args = concat $args (.Values.extraArgs | default list) -}}
{{- toYaml $args -}}
{{- end -}}

{{/* ---------------------------------------------------------------- RBAC */}}

{{/* KubeRay's rules for the server's own ServiceAccount (authMode service-account). */}}
{{- define "kuberay-apiserver.rules" -}}
- apiGroups: [""]
  resources: [namespaces]
  verbs: [list]
- apiGroups: [events.k8s.io]
  resources: [events]
  verbs: [get, list]
- apiGroups: [""]
  resources: [configmaps]
  verbs: [get, list, watch, create, update, patch, delete]
- apiGroups: [ray.io]
  resources: [rayclusters, rayjobs, rayservices]
  verbs: [get, list, watch, create, update, patch, delete]
{{- end -}}

{{/* KubeRay's V2 rules: the Service label check and the Service proxy. */}}
{{- define "kuberay-apiserver.serviceAccessRules" -}}
- apiGroups: [""]
  resources: [services]
  verbs: [get, list, watch]
- apiGroups: [""]
  resources: [services/proxy]
  verbs: [get, list, watch]
{{- end -}}
