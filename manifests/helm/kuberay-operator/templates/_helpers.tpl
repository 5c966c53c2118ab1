{{/* ---------------------------------------------------------------- names */}}

{{/* Chart name, or nameOverride; at most 63 characters. */}}
{{- define "kuberay-operator.name" -}}
{{- .Values.nameOverride | default .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The pod's app.kubernetes.io/component label. */}}
{{- define "kuberay-operator.component" -}}
{{- .Values.componentOverride | default .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
Base name of the release's objects: fullnameOverride, else the release name when it already
contains the chart name, else "<release>-<name>".
*/}}
{{- define "kuberay-operator.fullname" -}}
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

{{- define "kuberay-operator.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "kuberay-operator.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- .Values.serviceAccount.name | default (include "kuberay-operator.fullname" .) -}}
{{- else -}}
{{- .Values.serviceAccount.name | default "default" -}}
{{- end -}}
{{- end -}}

{{- define "kuberay-operator.webhookServiceName" -}}
{{- printf "%s-webhook" (include "kuberay-operator.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "kuberay-operator.webhookSecretName" -}}
{{- .Values.webhook.certSecretName | default (printf "%s-webhook-cert" (include "kuberay-operator.fullname" .)) -}}
{{- end -}}

{{/* ---------------------------------------------------------------- labels */}}

{{- define "kuberay-operator.labels" -}}
app.kubernetes.io/name: {{ include "kuberay-operator.name" . }}
helm.sh/chart: {{ include "kuberay-operator.chart" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- with .Chart.AppVersion }}
app.kubernetes.io/version: {{ . | quote }}
{{- end }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* What the Deployment and the Services select on. */}}
{{- define "kuberay-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ include "kuberay-operator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* ---------------------------------------------------------------- values */}}

{{/* "true" when the webhooks are on: webhook.enabled, or KubeRay v1.8's spelling
webhooks.enabled; empty otherwise. */}}
{{- define "kuberay-operator.webhookEnabled" -}}
{{- if or .Values.webhook.enabled (dig "enabled" false (.Values.webhooks | default dict)) -}}
true
{{- end -}}
{{- end -}}

{{/* The namespaces the operator watches: watchNamespace, else (singleNamespaceInstall) the
release namespace, else none (= all). Comma-joined, "" for all. */}}
{{- define "kuberay-operator.watchNamespaces" -}}
{{- if .Values.watchNamespace -}}
{{- join "," .Values.watchNamespace -}}
{{- else if .Values.singleNamespaceInstall -}}
{{- .Release.Namespace -}}
{{- end -}}
{{- end -}}

{{/* "--feature-gates=A=true,B=false" from the featureGates list ("" when empty). */}}
{{- define "kuberay-operator.featureGatesArg" -}}
{{- $pairs := list -}}
{{- range .Values.featureGates -}}
{{- $pairs = append $pairs (printf "%s=%t" .name .enabled) -}}
{{- end -}}
{{- if $pairs -}}
--feature-gates={{ join "," $pairs }}
{{- end -}}
{{- end -}}

{{/* "true" when the KubernetesWAS gate is on. */}}
{{- define "kuberay-operator.kubernetesWAS" -}}
{{- range .Values.featureGates -}}
{{- if and (eq .name "KubernetesWAS") .enabled -}}true{{- end -}}
{{- end -}}
{{- end -}}

{{/* "true" when the NodeLabelDelivery gate is on (KubeRay v1.8: the pod webhooks are
registered only then). */}}
{{- define "kuberay-operator.nodeLabelDelivery" -}}
{{- range .Values.featureGates -}}
{{- if and (eq .name "NodeLabelDelivery") .enabled -}}true{{- end -}}
{{- end -}}
{{- end -}}

{{/* Fail rendering on values the operator would refuse anyway. */}}
{{- define "kuberay-operator.checkValues" -}}
{{- if hasKey .Values "reconcileConcurrency" -}}
{{- if not (regexMatch "^[1-9][0-9]*$" (toString .Values.reconcileConcurrency)) -}}
{{- fail (printf "reconcileConcurrency must be a positive integer, got %q" (toString .Values.reconcileConcurrency)) -}}
{{- end -}}
{{- end -}}
{{- with .Values.kubeClient -}}
{{- if and (hasKey . "qps") (not (regexMatch "^[0-9]+(\\.[0-9]+)?$" (toString .qps))) -}}
{{- fail (printf "kubeClient.qps must be a non-negative number, got %q" (toString .qps)) -}}
{{- end -}}
{{- if and (hasKey . "burst") (not (regexMatch "^[0-9]+$" (toString .burst))) -}}
{{- fail (printf "kubeClient.burst must be a non-negative integer, got %q" (toString .burst)) -}}
{{- end -}}
{{- end -}}
{{- if and (include "kuberay-operator.webhookEnabled" .) (not .Values.webhook.caBundle) (not .Values.webhook.certManager.enabled) -}}
{{- fail "webhook.enabled needs webhook.caBundle (CA of the serving certificate) or webhook.certManager.enabled" -}}
{{- end -}}
{{- if and .Values.singleNamespaceInstall .Values.nodeEventForwarder.enabled -}}
{{- fail "nodeEventForwarder is not supported with singleNamespaceInstall: Node Events are recorded in 'default' and 'kube-system', outside a single namespace" -}}
{{- end -}}
{{- if and .Values.singleNamespaceInstall (include "kuberay-operator.webhookEnabled" .) (include "kuberay-operator.nodeLabelDelivery" .) -}}
{{- fail "NodeLabelDelivery's webhooks are not supported with singleNamespaceInstall: they read Nodes, which are cluster-scoped" -}}
{{- end -}}
{{- end -}}

{{/* The operator's arguments (a YAML list), in the order KubeRay's chart renders them. */}}
{{- define "kuberay-operator.args" -}}
{{- $args := list -}}
{{- if .Values.configuration.enabled -}}
{{- $args = concat $args (list "--config" "/etc/kuberay/config.yaml") -}}
{{- else -}}
{{- with .Values.batchScheduler -}}
{{- if .enabled -}}{{- $args = append $args "--enable-batch-scheduler" -}}{{- end -}}
{{- if .name -}}{{- $args = append $args (printf "--batch-scheduler=%s" .name) -}}{{- end -}}
{{- end -}}
{{- $watch := include "kuberay-operator.watchNamespaces" . -}}
{{- if $watch -}}{{- $args = concat $args (list "--watch-namespace" $watch) -}}{{- end -}}
{{- if and .Values.logging.baseDir .Values.logging.fileName -}}
{{- $args = concat $args (list "--log-file-path" (printf "%s/%s" .Values.logging.baseDir .Values.logging.fileName)) -}}
{{- end -}}
{{- if .Values.logging.stdoutEncoder -}}
{{- $args = concat $args (list "--log-stdout-encoder" .Values.logging.stdoutEncoder) -}}
{{- end -}}
{{- if .Values.logging.fileEncoder -}}
{{- $args = concat $args (list "--log-file-encoder" .Values.logging.fileEncoder) -}}
{{- end -}}
{{- if hasKey .Values "useKubernetesProxy" -}}
{{- $args = append $args (printf "--use-kubernetes-proxy=%t" .Values.useKubernetesProxy) -}}
{{- end -}}
{{- if hasKey .Values "leaderElectionEnabled" -}}
{{- $args = append $args (printf "--enable-leader-election=%t" .Values.leaderElectionEnabled) -}}
{{- end -}}
{{- if and (hasKey .Values "metrics") (hasKey .Values.metrics "enabled") -}}
{{- $args = append $args (printf "--enable-metrics=%t" .Values.metrics.enabled) -}}
{{- end -}}
{{- if hasKey .Values "reconcileConcurrency" -}}
{{- $args = append $args (printf "--reconcile-concurrency=%v" .Values.reconcileConcurrency) -}}
{{- end -}}
{{- with .Values.kubeClient -}}
{{- if hasKey . "qps" -}}{{- $args = append $args (printf "--qps=%v" .qps) -}}{{- end -}}
{{- if hasKey . "burst" -}}{{- $args = append $args (printf "--burst=%v" .burst) -}}{{- end -}}
{{- end -}}
{{- with .Values.configuration.allowedNodeLabels -}}
{{- $args = append $args (printf "--allowed-node-labels=%s" (join "," .)) -}}
{{- end -}}
{{- with .Values.nodeEventForwarder -}}
{{- if .enabled -}}
{{- $args = append $args "--enable-node-event-forwarder" -}}
{{- range $what := list "sources" "reasons" "types" -}}
{{- with index $.Values.nodeEventForwarder $what -}}
{{- $args = append $args (printf "--node-event-forwarder-%s=%s" $what (join "," .)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $gates := include "kuberay-operator.featureGatesArg" . -}}
{{- if $gates -}}{{- $args = append $args $gates -}}{{- end -}}
{{- /* (this chart) flags read from the command line even with --config */ -}}
{{- with .Values.logging.keys -}}{{- $args = append $args (printf "--log-keys=%s" .) -}}{{- end -}}
{{- if hasKey .Values.logging "fileMaxSizeMB" -}}
{{- $args = append $args (printf "--log-file-max-size=%v" .Values.logging.fileMaxSizeMB) -}}
{{- end -}}
{{- if hasKey .Values.logging "fileMaxBackups" -}}
{{- $args = append $args (printf "--log-file-max-backups=%v" .Values.logging.fileMaxBackups) -}}
{{- end -}}
{{- if hasKey .Values.logging "fileMaxAgeDays" -}}
{{- $args = append $args (printf "--log-file-max-age=%v" .Values.logging.fileMaxAgeDays) -}}
{{- end -}}
{{- toYaml $args -}}
{{- end -}}

{{/* ---------------------------------------------------------------- RBAC */}}

{{/*
The operator's permissions, shared by the ClusterRole and the per-namespace Roles: KubeRay
v1.7's rules (config/rbac/role.yaml), rule for rule (Events are written through
events.k8s.io/v1, as KubeRay does), plus the PodGroup/Workload rules of the configured batch
scheduler.
*/}}
{{- define "kuberay-operator.rules" -}}
- apiGroups: [""]
  resources: [persistentvolumeclaims, pods/status, services]
  verbs: [create, delete, get, list, patch, update, watch]
- apiGroups: [""]
  resources: [pods]
  verbs: [create, delete, deletecollection, get, list, patch, update, watch]
- apiGroups: [""]
  resources: [pods/proxy, services/status]
  verbs: [get, patch, update]
- apiGroups: [""]
  resources: [pods/resize]
  verbs: [patch]
- apiGroups: [""]
  resources: [secrets]
  verbs: [create, delete, get, list, update, watch]
- apiGroups: [""]
  resources: [serviceaccounts]
  verbs: [create, delete, get, list, watch]
- apiGroups: [""]
  resources: [services/proxy]
  verbs: [create, get, patch, update]
- apiGroups: [batch]
  resources: [jobs]
  verbs: [create, delete, get, list, patch, update, watch]
- apiGroups: [cert-manager.io]
  resources: [certificates]
  verbs: [create, get, list, update, watch]
- apiGroups: [cert-manager.io]
  resources: [certificates/status]
  verbs: [get]
- apiGroups: [cert-manager.io]
  resources: [issuers]
  verbs: [create, get, list, watch]
- apiGroups: [coordination.k8s.io]
  resources: [leases]
  verbs: [create, get, list, update]
- apiGroups: [discovery.k8s.io]
  resources: [endpointslices]
  verbs: [get, list, watch]
- apiGroups: [events.k8s.io]
  resources: [events]
  verbs: [create, patch]
- apiGroups: [extensions, networking.k8s.io]
  resources: [ingresses]
  verbs: [create, delete, get, list, patch, update, watch]
- apiGroups: [gateway.networking.k8s.io]
  resources: [gateways, httproutes]
  verbs: [create, delete, get, list, update, watch]
- apiGroups: [networking.k8s.io]
  resources: [ingressclasses]
  verbs: [get, list, watch]
- apiGroups: [networking.k8s.io]
  resources: [networkpolicies]
  verbs: [create, delete, get, list, update, watch]
- apiGroups: [ray.io]
  resources: [rayclusters, raycronjobs, rayjobs, rayservices]
  verbs: [create, delete, get, list, patch, update, watch]
- apiGroups: [ray.io]
  resources: [rayclusters/finalizers, raycronjobs/finalizers, rayjobs/finalizers, rayservices/finalizers]
  verbs: [update]
- apiGroups: [ray.io]
  resources: [rayclusters/status, raycronjobs/status, rayjobs/status, rayservices/status]
  verbs: [get, patch, update]
- apiGroups: [rbac.authorization.k8s.io]
  resources: [rolebindings]
  verbs: [create, delete, get, list, watch]
- apiGroups: [rbac.authorization.k8s.io]
  resources: [roles]
  verbs: [create, delete, get, list, update, watch]
- apiGroups: [route.openshift.io]
  resources: [routes]
  verbs: [create, delete, get, list, patch, update, watch]
# ours, beyond KubeRay's rules: the mTLS controller adds an ownerReference to a Secret
# cert-manager issued with a metadata-only patch, so the private key never travels (without
# it, the operator falls back to reading and updating the whole Secret, as KubeRay does)
- apiGroups: [""]
  resources: [secrets]
  verbs: [patch]
{{- if include "kuberay-operator.kubernetesWAS" . }}
- apiGroups: [scheduling.k8s.io]
  resources: [podgroups, workloads]
  verbs: [create, delete, get, list, patch, update, watch]
{{- end }}
{{- if or .Values.batchScheduler.enabled (eq .Values.batchScheduler.name "volcano") }}
- apiGroups: [scheduling.volcano.sh]
  resources: [podgroups]
  verbs: [create, delete, get, list, update, watch]
{{- end }}
{{- /* as in KubeRay, the deprecated batchScheduler.enabled adds this rule too */}}
{{- if or .Values.batchScheduler.enabled (eq .Values.batchScheduler.name "scheduler-plugins") }}
- apiGroups: [scheduling.x-k8s.io]
  resources: [podgroups]
  verbs: [create, get, list, watch]
{{- end }}
{{- end -}}

{{/* ---------------------------------------------------------------- history server */}}

{{/* What the history server's Deployment and Service select on. */}}
{{- define "kuberay-operator.historyServerSelectorLabels" -}}
app.kubernetes.io/name: kuberay-history-server
app.kubernetes.io/component: history-server
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "kuberay-operator.historyServerLabels" -}}
{{ include "kuberay-operator.historyServerSelectorLabels" . }}
app: historyserver
helm.sh/chart: {{ include "kuberay-operator.chart" . }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}
