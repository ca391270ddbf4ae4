{{/* Chart name, truncated to 63 characters (DNS label). */}}
{{- define "gte.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Release full name: <release> if it already contains the chart name, else <release>-<chart>. */}}
{{- define "gte.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "gte.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels common to every object. */}}
{{- define "gte.commonLabels" -}}
helm.sh/chart: {{ include "gte.chart" . }}
app.kubernetes.io/part-of: {{ include "gte.name" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* The extender's objects. */}}
{{- define "gte.labels" -}}
{{ include "gte.commonLabels" . }}
{{ include "gte.selectorLabels" . }}
{{- end }}

{{- define "gte.selectorLabels" -}}
app.kubernetes.io/name: {{ include "gte.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: extender
{{- end }}

{{/* The secondary kube-scheduler's objects. */}}
{{- define "gte.scheduler.labels" -}}
{{ include "gte.commonLabels" . }}
{{ include "gte.scheduler.selectorLabels" . }}
{{- end }}

{{- define "gte.scheduler.selectorLabels" -}}
app.kubernetes.io/name: {{ include "gte.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: scheduler
{{- end }}

{{- define "gte.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "gte.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* Name of the secondary scheduler's objects (Deployment, ServiceAccount, ConfigMap). */}}
{{- define "gte.scheduler.fullname" -}}
{{- printf "%s-scheduler" (include "gte.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "gte.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* kube-scheduler image: the tag value, else vX.Y.Z of the cluster (suffixes like -eks-… cut). */}}
{{- define "gte.scheduler.image" -}}
{{- $tag := .Values.scheduler.image.tag }}
{{- if not $tag }}
{{- $tag = regexFind "^v[0-9]+\\.[0-9]+\\.[0-9]+" .Capabilities.KubeVersion.Version }}
{{- end }}
{{- if not $tag }}
{{- fail "scheduler.image.tag is empty and the cluster version is unknown: set scheduler.image.tag to the control plane's version (e.g. v1.37.2)" }}
{{- end }}
{{- printf "%s:%s" .Values.scheduler.image.repository $tag }}
{{- end }}

{{- define "gte.policyConfigMapName" -}}
{{- default (printf "%s-policy" (include "gte.fullname" .)) .Values.existingPolicyConfigMap }}
{{- end }}

{{/* The server certificate's Secret: tls.secretName, else the chart's generated one
(tls.generate). */}}
{{- define "gte.tlsSecretName" -}}
{{- if .Values.tls.secretName }}
{{- .Values.tls.secretName }}
{{- else if .Values.tls.generate }}
{{- printf "%s-tls" (include "gte.fullname" .) }}
{{- else }}
{{- fail "tls.secretName is required when tls.enabled is true and tls.generate is false" }}
{{- end }}
{{- end }}

{{/* kube-scheduler's client certificate Secret: tls.clientAuth.clientSecret, else the chart's
generated one (tls.generate). */}}
{{- define "gte.clientSecretName" -}}
{{- if .Values.tls.clientAuth.clientSecret }}
{{- .Values.tls.clientAuth.clientSecret }}
{{- else if .Values.tls.generate }}
{{- printf "%s-scheduler-client-tls" (include "gte.fullname" .) }}
{{- else }}
{{- fail "tls.clientAuth.clientSecret is required when tls.clientAuth.enabled is true and tls.generate is false" }}
{{- end }}
{{- end }}

{{- define "gte.caSecretName" -}}
{{- default (include "gte.tlsSecretName" .) .Values.tls.caSecret.name }}
{{- end }}

{{/* Host of the extender's Service as kube-scheduler (and the certificate) name it. */}}
{{- define "gte.serviceHost" -}}
{{- printf "%s.%s.svc" (include "gte.fullname" .) .Release.Namespace }}
{{- end }}

{{/* kube-scheduler's urlPrefix for the extender: the extender beside it in the same pod (layout
sidecar; with TLS the certificate still names the Service, tlsConfig.serverName), else the
Service, which routes to the leading replica (layout standalone). */}}
{{- define "gte.urlPrefix" -}}
{{- $scheme := ternary "https" "http" .Values.tls.enabled }}
{{- if eq .Values.layout "sidecar" }}
{{- printf "%s://127.0.0.1:%d%s" $scheme (int .Values.extender.port) .Values.extender.pathPrefix }}
{{- else }}
{{- printf "%s://%s:%d%s" $scheme (include "gte.serviceHost" .) (int .Values.service.port) .Values.extender.pathPrefix }}
{{- end }}
{{- end }}

{{/* The replicas Service's own labels (the ServiceMonitor selects them). */}}
{{- define "gte.replicasServiceLabels" -}}
app.kubernetes.io/name: {{ include "gte.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: extender-replicas
{{- end }}

{{/* Labels of the pods that run the extender: the kube-scheduler pods (layout sidecar) or the
extender's own. */}}
{{- define "gte.extenderPodLabels" -}}
{{- if eq .Values.layout "sidecar" }}
{{- include "gte.scheduler.selectorLabels" . }}
{{- else }}
{{- include "gte.selectorLabels" . }}
{{- end }}
{{- end }}

{{/* A probe from values. On the metrics port (plain HTTP) as given; on the main port with scheme
HTTPS when the extender serves TLS. Without a metrics port, probes go to the main port. A main
port that requires client certificates cannot be probed by kubelet. Argument: (list $ probe). */}}
{{- define "gte.probe" -}}
{{- $root := index . 0 }}
{{- $probe := deepCopy (index . 1) }}
{{- if hasKey $probe "httpGet" }}
{{- if and (eq (toString $probe.httpGet.port) "metrics") (not $root.Values.extender.metricsPort) }}
{{- $_ := set $probe.httpGet "port" "http" }}
{{- end }}
{{- if and $root.Values.tls.enabled (eq (toString $probe.httpGet.port) "http") }}
{{- if $root.Values.tls.clientAuth.enabled }}
{{- fail "tls.clientAuth.enabled needs extender.metricsPort: kubelet probes carry no client certificate" }}
{{- end }}
{{- $_ := set $probe.httpGet "scheme" "HTTPS" }}
{{- end }}
{{- end }}
{{- toYaml $probe }}
{{- end }}

{{/* Half of kube-scheduler's httpTimeout ("3s", "500ms", "1m") in seconds, unless
metrics.alerts.latencySeconds sets the threshold. */}}
{{- define "gte.alertLatencySeconds" -}}
{{- if .Values.metrics.alerts.latencySeconds }}
{{- .Values.metrics.alerts.latencySeconds }}
{{- else }}
{{- $t := toString .Values.scheduler.extender.httpTimeout }}
{{- $secs := 0.0 }}
{{- if hasSuffix "ms" $t }}
{{- $secs = divf (trimSuffix "ms" $t) 1000 }}
{{- else if hasSuffix "m" $t }}
{{- $secs = mulf (trimSuffix "m" $t) 60 }}
{{- else if hasSuffix "s" $t }}
{{- $secs = float64 (trimSuffix "s" $t) }}
{{- else }}
{{- fail (printf "scheduler.extender.httpTimeout %q: use a duration such as 3s or 500ms" $t) }}
{{- end }}
{{- divf $secs 2 }}
{{- end }}
{{- end }}

{{/* --bind-deadline: extender.bindDeadline, else five sixths of kube-scheduler's httpTimeout in
milliseconds (3s: 2500ms), so a bind sent at the last moment is answered before the scheduler gives
up. */}}
{{- define "gte.bindDeadline" -}}
{{- if .Values.extender.bindDeadline }}
{{- .Values.extender.bindDeadline }}
{{- else }}
{{- $t := toString .Values.scheduler.extender.httpTimeout }}
{{- $ms := 0.0 }}
{{- if hasSuffix "ms" $t }}
{{- $ms = float64 (trimSuffix "ms" $t) }}
{{- else if hasSuffix "m" $t }}
{{- $ms = mulf (trimSuffix "m" $t) 60000 }}
{{- else if hasSuffix "s" $t }}
{{- $ms = mulf (trimSuffix "s" $t) 1000 }}
{{- else }}
{{- fail (printf "scheduler.extender.httpTimeout %q: use a duration such as 3s or 500ms" $t) }}
{{- end }}
{{- printf "%dms" (int64 (divf (mulf $ms 5) 6)) }}
{{- end }}
{{- end }}

{{/* The node agent's objects. */}}
{{- define "gte.agent.fullname" -}}
{{- printf "%s-agent" (include "gte.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "gte.agent.labels" -}}
{{ include "gte.commonLabels" . }}
{{ include "gte.agent.selectorLabels" . }}
{{- end }}

{{- define "gte.agent.selectorLabels" -}}
app.kubernetes.io/name: {{ include "gte.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: agent
{{- end }}

{{/* Time between SIGTERM's predecessor (preStop) and SIGKILL: the preStop sleep, the drain period,
the shutdown grace, and 5 s to spare. An explicit value not above the first three is an error. */}}
{{- define "gte.terminationGracePeriodSeconds" -}}
{{- $needed := add (int64 .Values.lifecycle.preStopSleepSeconds) (int64 .Values.extender.drainPeriodSeconds) (int64 .Values.extender.shutdownGraceSeconds) }}
{{- if .Values.terminationGracePeriodSeconds }}
{{- if lt (int64 .Values.terminationGracePeriodSeconds) (int64 (add $needed 1)) }}
{{- fail (printf "terminationGracePeriodSeconds must exceed lifecycle.preStopSleepSeconds + extender.drainPeriodSeconds + extender.shutdownGraceSeconds (%d)" $needed) }}
{{- end }}
{{- .Values.terminationGracePeriodSeconds | int64 }}
{{- else }}
{{- add $needed 5 }}
{{- end }}
{{- end }}

{{/* The CA that signs kube-scheduler's client certificate: tls.clientAuth.caSecret.name, else the
CA Secret of the server certificate. */}}
{{- define "gte.clientCaSecretName" -}}
{{- default (include "gte.caSecretName" .) .Values.tls.clientAuth.caSecret.name }}
{{- end }}

{{/* The ServiceMonitor's relabeling: the job label stays the release's full name, which the alerts
and the dashboard select, although the Service scraped is the -replicas one. */}}
{{- define "gte.serviceMonitor.job" -}}
- targetLabel: job
  replacement: {{ include "gte.fullname" . }}
{{- end }}
