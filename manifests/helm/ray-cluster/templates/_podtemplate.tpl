{{/* The pod template of the head or of a worker group, as KubeRay's chart writes it.
Argument: dict
  root       the chart's top context
  g          the group's values (.Values.head, .Values.worker or one additionalWorkerGroups entry)
  container  ray-head or ray-worker
  fallbackResources  give the Ray container 1 CPU / 1Gi when g.resources is empty (additional
             worker groups only, as in KubeRay) */}}
{{- define "ray-cluster.podTemplate" -}}
{{- $root := .root -}}
{{- $g := .g -}}
metadata:
  labels:
    {{- include "ray-cluster.labels" (dict "root" $root "extra" $g.labels) | nindent 4 }}
  {{- with $g.annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
spec:
  {{- with $g.initContainers }}
  initContainers:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  containers:
  - name: {{ .container }}
    {{- $image := $g.image | default $root.Values.image }}
    image: {{ $image.repository }}:{{ $image.tag }}
    imagePullPolicy: {{ $image.pullPolicy }}
    {{- with $g.command }}
    command:
      {{- toYaml . | nindent 6 }}
    {{- end }}
    {{- with $g.args }}
    args:
      {{- toYaml . | nindent 6 }}
    {{- end }}
    {{- with concat ($root.Values.common.containerEnv | default list) ($g.containerEnv | default list) }}
    env:
      {{- toYaml . | nindent 6 }}
    {{- end }}
    {{- with $g.envFrom }}
    envFrom:
      {{- toYaml . | nindent 6 }}
    {{- end }}
    {{- with $g.volumeMounts }}
    volumeMounts:
      {{- toYaml . | nindent 6 }}
    {{- end }}
    {{- with $g.ports }}
    ports:
      {{- toYaml . | nindent 6 }}
    {{- end }}
    {{- if $g.resources }}
    resources:
      {{- toYaml $g.resources | nindent 6 }}
    {{- else if .fallbackResources }}
    resources:
      limits:
        cpu: "1"
        memory: "1Gi"
      requests:
        cpu: "1"
        memory: "1Gi"
    {{- end }}
    {{- with $g.lifecycle }}
    lifecycle:
      {{- toYaml . | nindent 6 }}
    {{- end }}
    {{- with $g.securityContext }}
    securityContext:
      {{- toYaml . | nindent 6 }}
    {{- end }}
  {{- with $g.sidecarContainers }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
  {{- with $root.Values.imagePullSecrets }}
  imagePullSecrets:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $g.volumes }}
  volumes:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $g.dnsConfig }}
  dnsConfig:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $g.nodeSelector }}
  nodeSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $g.affinity }}
  affinity:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $g.tolerations }}
  tolerations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $g.priorityClassName }}
  priorityClassName: {{ . }}
  {{- end }}
  {{- with $g.priority }}
  priority: {{ . }}
  {{- end }}
  {{- with $g.topologySpreadConstraints }}
  topologySpreadConstraints:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $g.restartPolicy }}
  restartPolicy: {{ . }}
  {{- end }}
  {{- with $g.runtimeClassName }}
  runtimeClassName: {{ . }}
  {{- end }}
  {{- with $g.serviceAccountName }}
  serviceAccountName: {{ . }}
  {{- end }}
  {{- with $g.podSecurityContext }}
  securityContext:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $g.resourceClaims }}
  resourceClaims:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end -}}

{{/* One entry of workerGroupSpecs. Argument: dict root g name fallbackResources. */}}
{{- define "ray-cluster.workerGroup" -}}
- groupName: {{ .name }}
  replicas: {{ .g.replicas }}
  minReplicas: {{ .g.minReplicas | default 0 }}
  maxReplicas: {{ .g.maxReplicas | default 2147483647 }}
  numOfHosts: {{ .g.numOfHosts | default 1 }}
  {{- with include "ray-cluster.rayStartParams" .g }}
  {{- . | nindent 2 }}
  {{- end }}
  template:
    {{- include "ray-cluster.podTemplate" (dict "root" .root "g" .g "container" "ray-worker" "fallbackResources" .fallbackResources) | nindent 4 }}
{{- end -}}
