{{/* The extender's container and volumes, the same in both layouts (docs/operations.md, "High
availability"): in the sidecar layout they go into each kube-scheduler pod, in the standalone layout
into the extender's own Deployment. Only the leader-election flags differ. */}}

{{- define "gte.sidecar" -}}
{{- eq .Values.layout "sidecar" }}
{{- end }}

{{/* The Lease the standalone replicas compete for. */}}
{{- define "gte.leaseName" -}}
{{- default (include "gte.fullname" .) .Values.extender.leaderElection.leaseName }}
{{- end }}

{{/* The EndpointSlice the standalone leader writes itself into (--publish-endpoint SERVICE gives
SERVICE-leader). */}}
{{- define "gte.leaderSliceName" -}}
{{- printf "%s-leader" (include "gte.fullname" .) }}
{{- end }}

{{/* Flags that choose the replica's role. Sidecar: bind only while the kube-scheduler of this pod
holds its lease, and stop binding at that scheduler's own renew deadline after its last renew seen
here. Standalone: compete for the extender's own Lease; the leader publishes itself as the
Service's endpoint. */}}
{{- define "gte.extender.leaderElectionArgs" -}}
{{- if eq (include "gte.sidecar" .) "true" }}
{{- $s := .Values.scheduler }}
{{- if $s.leaderElection.enabled }}
- --follow-lease={{ default .Release.Namespace $s.leaderElection.namespace }}/{{ $s.leaderElection.leaseName }}
- --leader-elect-renew-deadline={{ $s.leaderElection.renewDeadline }}
- --leader-elect-retry-period={{ .Values.extender.leaderElection.retryPeriod }}
{{- end }}
{{- else }}
{{- $le := .Values.extender.leaderElection }}
- --leader-elect
- --leader-elect-lease={{ .Release.Namespace }}/{{ include "gte.leaseName" . }}
- --leader-elect-lease-duration={{ $le.leaseDuration }}
- --leader-elect-renew-deadline={{ $le.renewDeadline }}
- --leader-elect-retry-period={{ $le.retryPeriod }}
- --publish-endpoint={{ .Release.Namespace }}/{{ include "gte.fullname" . }}
{{- end }}
{{- end }}

{{- define "gte.extender.container" -}}
- name: extender
  image: {{ include "gte.image" . | quote }}
  imagePullPolicy: {{ .Values.image.pullPolicy }}
  args:
    - serve
    - --listen=0.0.0.0:{{ .Values.extender.port }}
    - --path-prefix={{ .Values.extender.pathPrefix }}
    - --policy=/etc/gpu-topology-extender/scheduler-policy.yaml
    - --in-cluster
    - --log-level={{ .Values.extender.logLevel }}
    {{- with .Values.extender.threads }}
    - --threads={{ . | int64 }}
    {{- end }}
    {{- with .Values.extender.maxBodyBytes }}
    {{- /* int64: Helm reads numbers as float64, which would print as 6.7108864e+07 */}}
    - --max-body-bytes={{ . | int64 }}
    {{- end }}
    {{- with .Values.extender.metricsPort }}
    - --metrics-listen=0.0.0.0:{{ . | int64 }}
    {{- end }}
    - --drain-period={{ .Values.extender.drainPeriodSeconds | int64 }}s
    - --shutdown-grace={{ .Values.extender.shutdownGraceSeconds | int64 }}s
    {{- with .Values.extender.maxConnections }}
    - --max-connections={{ . | int64 }}
    {{- end }}
    {{- with .Values.extender.maxNodesPerRequest }}
    - --max-nodes-per-request={{ . | int64 }}
    {{- end }}
    {{- if not .Values.extender.explain }}
    - --disable-explain
    {{- end }}
    {{- if not .Values.extender.whatif }}
    - --disable-whatif
    {{- end }}
    {{- if not .Values.extender.nodes }}
    - --disable-nodes
    {{- end }}
    - --whatif-max-pods={{ .Values.extender.whatifMaxPods | int64 }}
    - --whatif-deadline={{ .Values.extender.whatifDeadline }}
    {{- with .Values.extender.healthPoolLabel }}
    - --health-pool-label={{ . }}
    {{- end }}
    {{- if .Values.extender.dra }}
    - --dra
    {{- end }}
    - --bind-concurrency={{ .Values.extender.bindConcurrency | int64 }}
    - --bind-deadline={{ include "gte.bindDeadline" . }}
    - --api-warm-connections={{ .Values.extender.apiWarmConnections | int64 }}
    {{- with include "gte.extender.leaderElectionArgs" . | trim }}
    {{- . | nindent 4 }}
    {{- end }}
    {{- if .Values.tls.enabled }}
    - --tls-cert=/var/run/gpu-topology-extender/tls/tls.crt
    - --tls-key=/var/run/gpu-topology-extender/tls/tls.key
    {{- if .Values.tls.clientAuth.enabled }}
    - --tls-client-ca=/var/run/gpu-topology-extender/client-ca/ca.crt
    {{- end }}
    {{- end }}
    {{- range .Values.extender.extraArgs }}
    - {{ . | quote }}
    {{- end }}
  {{- if or .Values.extender.env (ne (include "gte.sidecar" .) "true") }}
  env:
    {{- if ne (include "gte.sidecar" .) "true" }}
    # The address the leader publishes in the Service's EndpointSlice, and the Pod it names.
    - name: POD_IP
      valueFrom:
        fieldRef:
          fieldPath: status.podIP
    - name: POD_NAME
      valueFrom:
        fieldRef:
          fieldPath: metadata.name
    - name: NODE_NAME
      valueFrom:
        fieldRef:
          fieldPath: spec.nodeName
    {{- end }}
    {{- with .Values.extender.env }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- end }}
  ports:
    - name: http
      containerPort: {{ .Values.extender.port }}
      protocol: TCP
    {{- with .Values.extender.metricsPort }}
    - name: metrics
      containerPort: {{ . | int64 }}
      protocol: TCP
    {{- end }}
  # Pod deletion: the sleep lets a Service drop this pod before SIGTERM; the extender then steps
  # down (a held lease is released, so a standby takes over at once), fails /readyz and answers
  # every request with Connection: close for extender.drainPeriodSeconds, then closes idle
  # connections and answers what is in flight (extender.shutdownGraceSeconds).
  # terminationGracePeriodSeconds covers all three.
  lifecycle:
    preStop:
      exec:
        command: ["sleep", "{{ .Values.lifecycle.preStopSleepSeconds | int64 }}"]
  {{- with .Values.livenessProbe }}
  livenessProbe:
    {{- include "gte.probe" (list $ .) | nindent 4 }}
  {{- end }}
  {{- with .Values.readinessProbe }}
  readinessProbe:
    {{- include "gte.probe" (list $ .) | nindent 4 }}
  {{- end }}
  {{- with .Values.resources }}
  resources:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.securityContext }}
  securityContext:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  volumeMounts:
    # A directory mount, not subPath: subPath mounts never see ConfigMap updates.
    - name: policy
      mountPath: /etc/gpu-topology-extender
      readOnly: true
    {{- if .Values.tls.enabled }}
    - name: tls
      mountPath: /var/run/gpu-topology-extender/tls
      readOnly: true
    {{- if .Values.tls.clientAuth.enabled }}
    - name: client-ca
      mountPath: /var/run/gpu-topology-extender/client-ca
      readOnly: true
    {{- end }}
    {{- end }}
    - name: extender-tmp
      mountPath: /tmp
{{- end }}

{{- define "gte.extender.volumes" -}}
- name: policy
  configMap:
    name: {{ include "gte.policyConfigMapName" . }}
{{- if .Values.tls.enabled }}
- name: tls
  secret:
    secretName: {{ include "gte.tlsSecretName" . }}
    items:
      - key: tls.crt
        path: tls.crt
      - key: tls.key
        path: tls.key
{{- if .Values.tls.clientAuth.enabled }}
- name: client-ca
  secret:
    secretName: {{ include "gte.clientCaSecretName" . }}
    items:
      - key: {{ .Values.tls.clientAuth.caSecret.key }}
        path: ca.crt
{{- end }}
{{- end }}
- name: extender-tmp
  emptyDir:
    sizeLimit: 16Mi
{{- end }}

{{/* Refusals shared by every template that renders the extender. */}}
{{- define "gte.layout.check" -}}
{{- if not (has .Values.layout (list "sidecar" "standalone")) }}
{{- fail (printf "layout %q: sidecar or standalone" .Values.layout) }}
{{- end }}
{{- if and (eq (include "gte.sidecar" .) "true") (not .Values.scheduler.enabled) }}
{{- fail "layout sidecar runs the extender inside the chart's kube-scheduler pods: it needs scheduler.enabled (for a kube-scheduler of your own use layout=standalone)" }}
{{- end }}
{{- if and (eq (include "gte.sidecar" .) "true") (gt (int .Values.scheduler.replicaCount) 1) (not .Values.scheduler.leaderElection.enabled) }}
{{- fail "scheduler.replicaCount > 1 needs scheduler.leaderElection.enabled: without it every replica schedules and every sidecar extender binds" }}
{{- end }}
{{- end }}
