{{/*
Names
*/}}
{{- define "herald.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "herald.fullname" -}}
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

{{/* "<fullname>-<suffix>", kept within 63 characters (the longest suffix is "-device-registry"). */}}
{{- define "herald.prefixedName" -}}
{{- printf "%s-%s" (include "herald.fullname" .root | trunc 47 | trimSuffix "-") .suffix -}}
{{- end -}}

{{/*
"<fullname>-<suffix>" for a StatefulSet: at most 52 characters, since its pods carry the
label controller-revision-hash=<name>-<10-character hash> (63 at most).
*/}}
{{- define "herald.statefulSetName" -}}
{{- printf "%s-%s" (include "herald.fullname" .root | trunc (int (sub 51 (len .suffix))) | trimSuffix "-") .suffix -}}
{{- end -}}

{{- define "herald.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The version label: the image tag in use (the chart's appVersion by default), as a valid label value. */}}
{{- define "herald.version" -}}
{{- $tag := splitList "@" (default .Chart.AppVersion .Values.image.tag) | first -}}
{{- regexReplaceAll "[^-A-Za-z0-9_.]" $tag "_" | trunc 63 | trimAll "-_." -}}
{{- end -}}

{{- define "herald.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "herald.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "herald.image" -}}
{{- $tag := default .Chart.AppVersion .Values.image.tag | trimSuffix "@" -}}
{{- if .Values.image.digest -}}
{{- printf "%s:%s@%s" .Values.image.repository $tag .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository $tag -}}
{{- end -}}
{{- end -}}

{{/*
Labels. Call with (dict "root" $ "component" "<name>").
Selectors use name + instance + component only.
*/}}
{{- define "herald.selectorLabels" -}}
app.kubernetes.io/name: {{ include "herald.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "herald.labels" -}}
helm.sh/chart: {{ include "herald.chart" .root }}
{{ include "herald.selectorLabels" . }}
app.kubernetes.io/version: {{ include "herald.version" .root | quote }}
app.kubernetes.io/part-of: herald
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
{{- with .root.Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/*
Components, in rendering order, and what the code fixes about each: its role name (the
container argument and the suffix of its resources), its kind (gateway, service or
sender), whom it calls, which infrastructure it uses, for a sender the JetStream
platform subject its durable consumer is named after (packages/sender: "sender-<platform>"),
and for a component KEDA may scale the stream and durable consumer of its backlog, before
the namespace prefix (packages/runtime/src/streams.ts; the webhooks dispatcher's durable:
services/webhooks/src/event-consumer.ts, WEBHOOK_EVENTS_DURABLE).
*/}}
{{- define "herald.componentKeys" -}}
gateway credential deviceRegistry campaign webhooks senderApns senderFcm senderWebpush
{{- end -}}

{{- define "herald.componentFacts" -}}
gateway:
  name: gateway
  kind: gateway
  platform: ""
  urlEnv: ""
  calls: [credential, deviceRegistry, campaign, webhooks]
  infra: [redis]
  webPush: false
  kedaStream: ""
  kedaConsumer: ""
credential:
  name: credential
  kind: service
  platform: ""
  urlEnv: CREDENTIAL_URL
  calls: []
  infra: [postgresql, nats]
  webPush: false
  kedaStream: ""
  kedaConsumer: ""
deviceRegistry:
  name: device-registry
  kind: service
  platform: ""
  urlEnv: DEVICE_REGISTRY_URL
  calls: []
  infra: [postgresql, nats]
  webPush: true
  kedaStream: ""
  kedaConsumer: ""
campaign:
  name: campaign
  kind: service
  platform: ""
  urlEnv: CAMPAIGN_URL
  calls: [deviceRegistry]
  infra: [postgresql, nats]
  webPush: false
  kedaStream: ""
  kedaConsumer: ""
webhooks:
  name: webhooks
  kind: service
  platform: ""
  urlEnv: WEBHOOKS_URL
  calls: []
  infra: [postgresql, nats]
  webPush: false
  kedaStream: WEBHOOKS
  kedaConsumer: webhooks-dispatcher
senderApns:
  name: sender-apns
  kind: sender
  platform: ios
  urlEnv: ""
  calls: [credential]
  infra: [nats]
  webPush: false
  kedaStream: DELIVERY
  kedaConsumer: sender-ios
senderFcm:
  name: sender-fcm
  kind: sender
  platform: android
  urlEnv: ""
  calls: [credential]
  infra: [nats, redis]
  webPush: false
  kedaStream: DELIVERY
  kedaConsumer: sender-android
senderWebpush:
  name: sender-webpush
  kind: sender
  platform: web
  urlEnv: ""
  calls: [credential]
  infra: [nats]
  webPush: true
  kedaStream: DELIVERY
  kedaConsumer: sender-web
{{- end -}}

{{/* components.<key>.config settings → environment variables. */}}
{{- define "herald.senderConfigEnvNames" -}}
concurrentBatches: SENDER_CONCURRENT_BATCHES
maxInFlight: SENDER_MAX_IN_FLIGHT
retryMaxAttempts: SENDER_RETRY_MAX_ATTEMPTS
retryBaseMs: SENDER_RETRY_BASE_MS
retryMaxDelayMs: SENDER_RETRY_MAX_DELAY_MS
retryMaxElapsedMs: SENDER_RETRY_MAX_ELAPSED_MS
ackWaitMs: SENDER_ACK_WAIT_MS
drainMs: SENDER_DRAIN_MS
{{- end -}}

{{- define "herald.configEnvNames" -}}
gateway:
  rateLimitPerMinute: HERALD_RATE_LIMIT_PER_MINUTE
  corsOrigins: HERALD_CORS_ORIGINS
  bodyLimitBytes: HERALD_BODY_LIMIT_BYTES
  authCacheMs: HERALD_AUTH_CACHE_MS
  jwtIssuer: HERALD_JWT_ISSUER
  jwtJwksUrl: HERALD_JWT_JWKS_URL
  jwtAudience: HERALD_JWT_AUDIENCE
  publicUrl: HERALD_PUBLIC_URL
  trustProxy: HERALD_TRUST_PROXY
  accessTokenTtlSeconds: HERALD_ACCESS_TOKEN_TTL_SECONDS
credential:
  dbSchema: DB_SCHEMA
  defaultRateLimit: HERALD_DEFAULT_RATE_LIMIT
  clientKeyRateLimit: HERALD_CLIENT_KEY_RATE_LIMIT
  signingKeyRotationDays: HERALD_SIGNING_KEY_ROTATION_DAYS
  signingKeyRetentionHours: HERALD_SIGNING_KEY_RETENTION_HOURS
deviceRegistry:
  dbSchema: DB_SCHEMA
campaign:
  dbSchema: DB_SCHEMA
  fanoutPageSize: FANOUT_PAGE_SIZE
  fanoutBatchSize: FANOUT_BATCH_SIZE
  fanoutConcurrency: FANOUT_CONCURRENCY
  fanoutLeaseMs: FANOUT_LEASE_MS
  schedulerIntervalMs: SCHEDULER_INTERVAL_MS
  receiptRetentionDays: HERALD_RECEIPT_RETENTION_DAYS
webhooks:
  dbSchema: DB_SCHEMA
  allowPrivate: HERALD_WEBHOOK_ALLOW_PRIVATE
  concurrency: HERALD_WEBHOOK_CONCURRENCY
  timeoutMs: HERALD_WEBHOOK_TIMEOUT_MS
senderApns:
{{ include "herald.senderConfigEnvNames" . | indent 2 }}
  apnsUrl: APNS_URL
  apnsMaxConnections: APNS_MAX_CONNECTIONS
  apnsMaxQueued: APNS_MAX_QUEUED
  apnsTokenRefreshMinutes: APNS_TOKEN_REFRESH_MINUTES
  apnsRequestTimeoutMs: APNS_REQUEST_TIMEOUT_MS
  apnsIdleTimeoutMs: APNS_IDLE_TIMEOUT_MS
senderFcm:
{{ include "herald.senderConfigEnvNames" . | indent 2 }}
  fcmUrl: FCM_URL
  fcmTokenUrl: FCM_TOKEN_URL
  fcmRateLimitPerMinute: FCM_RATE_LIMIT_PER_MINUTE
  fcmRateWindowMs: FCM_RATE_WINDOW_MS
  fcmMaxConnections: FCM_MAX_CONNECTIONS
senderWebpush:
{{ include "herald.senderConfigEnvNames" . | indent 2 }}
  encryptThreads: WEBPUSH_ENCRYPT_THREADS
  webpushMaxConnections: WEBPUSH_MAX_CONNECTIONS
{{- end -}}

{{/*
Merges the map .src into the map .dst (mutated): maps merge recursively, a null in .src
keeps .dst's value, anything else in .src replaces it. Renders nothing.
*/}}
{{- define "herald.mergeInto" -}}
{{- $dst := .dst -}}
{{- range $k, $v := .src -}}
{{- if kindIs "invalid" $v -}}
{{- else if and (kindIs "map" $v) (kindIs "map" (get $dst $k)) -}}
{{- $sub := deepCopy (get $dst $k) -}}
{{- include "herald.mergeInto" (dict "dst" $sub "src" $v) -}}
{{- $_ := set $dst $k $sub -}}
{{- else -}}
{{- $_ := set $dst $k (deepCopy $v) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* "true" when a value is set: not null, not "", not an empty list or map. */}}
{{- define "herald.isSet" -}}
{{- if kindIs "invalid" . -}}
{{- else if kindIs "string" . -}}{{- if ne . "" -}}true{{- end -}}
{{- else if kindIs "slice" . -}}{{- if gt (len .) 0 -}}true{{- end -}}
{{- else if kindIs "map" . -}}{{- if gt (len .) 0 -}}true{{- end -}}
{{- else -}}true
{{- end -}}
{{- end -}}

{{/*
A value as an environment variable string: lists are joined with commas, whole numbers
never come out as 1e+06 (values files give float64 numbers).
*/}}
{{- define "herald.envValue" -}}
{{- $v := . -}}
{{- if kindIs "slice" $v -}}
{{- $parts := list -}}
{{- range $v -}}{{- $parts = append $parts (include "herald.envValue" .) -}}{{- end -}}
{{- join "," $parts -}}
{{- else if kindIs "float64" $v -}}
{{- if eq $v (float64 (int64 $v)) -}}{{- int64 $v -}}{{- else -}}{{- $v -}}{{- end -}}
{{- else if kindIs "float32" $v -}}
{{- $v -}}
{{- else -}}
{{- toString $v -}}
{{- end -}}
{{- end -}}

{{/*
Resolves one component: call with (dict "root" $ "key" "<componentKey>" "out" (dict));
fills .out with the component's values deep-merged over `defaults`, plus the facts above
(name, kind, calls, infra, platform, urlEnv, webPush, kedaStream, kedaConsumer) and computed fields: fullname,
autoscaled, hpaEnabled, kedaEnabled, minReplicas. Fails on inconsistent settings.
Renders nothing.
*/}}
{{- define "herald.resolve" -}}
{{- $root := .root -}}
{{- $key := .key -}}
{{- $out := .out -}}
{{- $facts := get (include "herald.componentFacts" $root | fromYaml) $key -}}
{{- if not $facts -}}
{{- fail (printf "herald: unknown component %q" $key) -}}
{{- end -}}
{{- $comp := get ($root.Values.components | default dict) $key | default dict -}}
{{- include "herald.mergeInto" (dict "dst" $out "src" (deepCopy ($root.Values.defaults | default dict))) -}}
{{- include "herald.mergeInto" (dict "dst" $out "src" $comp) -}}
{{- range $k, $v := $facts -}}
{{- $_ := set $out $k $v -}}
{{- end -}}
{{- $_ := set $out "key" $key -}}
{{- $_ := set $out "enabled" (eq (toString (get $comp "enabled" | default false)) "true") -}}
{{- $_ := set $out "fullname" (include "herald.prefixedName" (dict "root" $root "suffix" $facts.name)) -}}
{{- $_ := set $out "config" (get $out "config" | default dict) -}}
{{- $_ := set $out "env" (get $out "env" | default dict) -}}
{{- $_ := set $out "extraEnv" (get $out "extraEnv" | default list) -}}
{{- $_ := set $out "service" (get $out "service" | default dict) -}}
{{- $_ := set $out "probes" (get $out "probes" | default dict) -}}
{{- $autoscaling := get $out "autoscaling" | default dict -}}
{{- $hpa := get $autoscaling "hpa" | default dict -}}
{{- $keda := get $autoscaling "keda" | default dict -}}
{{- $hpaOn := eq (toString (get $hpa "enabled" | default false)) "true" -}}
{{- $kedaOn := eq (toString (get $keda "enabled" | default false)) "true" -}}
{{- if and $hpaOn $kedaOn -}}
{{- fail (printf "herald: components.%s.autoscaling: enable either hpa or keda, not both" $key) -}}
{{- end -}}
{{- if and $kedaOn (not $facts.kedaStream) -}}
{{- fail (printf "herald: components.%s.autoscaling.keda: KEDA scaling on a JetStream backlog applies to the senders and webhooks only; use autoscaling.hpa" $key) -}}
{{- end -}}
{{- $_ := set $out "hpa" $hpa -}}
{{- $_ := set $out "keda" $keda -}}
{{- $_ := set $out "hpaEnabled" $hpaOn -}}
{{- $_ := set $out "kedaEnabled" $kedaOn -}}
{{- $_ := set $out "autoscaled" (or $hpaOn $kedaOn) -}}
{{- $min := int64 (get $out "replicas" | default 0) -}}
{{- if $hpaOn -}}
{{- $min = int64 (get $hpa "minReplicas" | default 1) -}}
{{- if lt (int64 (get $hpa "maxReplicas" | default 1)) $min -}}
{{- fail (printf "herald: components.%s.autoscaling.hpa: maxReplicas is below minReplicas" $key) -}}
{{- end -}}
{{- else if $kedaOn -}}
{{- $min = int64 (get $keda "minReplicaCount" | default 0) -}}
{{- if lt (int64 (get $keda "maxReplicaCount" | default 1)) $min -}}
{{- fail (printf "herald: components.%s.autoscaling.keda: maxReplicaCount is below minReplicaCount" $key) -}}
{{- end -}}
{{- end -}}
{{- $_ := set $out "minReplicas" $min -}}
{{- $pdb := get $out "pdb" | default dict -}}
{{- $_ := set $out "pdb" $pdb -}}
{{- if le (int64 (get $out "terminationGracePeriodSeconds" | default 30)) (int64 (get $out "preStopSleepSeconds" | default 0)) -}}
{{- fail (printf "herald: components.%s: terminationGracePeriodSeconds must be longer than preStopSleepSeconds" $key) -}}
{{- end -}}
{{- if eq $facts.kind "sender" -}}
{{- $drain := 20000 -}}
{{- if include "herald.isSet" (get $out.config "drainMs") -}}
{{- $drain = int64 (get $out.config "drainMs") -}}
{{- end -}}
{{- $grace := int64 (get $out "terminationGracePeriodSeconds" | default 30) -}}
{{- $preStop := int64 (get $out "preStopSleepSeconds" | default 0) -}}
{{- if le (mul (sub $grace $preStop) 1000) (add $drain 5000) -}}
{{- fail (printf "herald: components.%s: terminationGracePeriodSeconds (%d s, of which preStopSleepSeconds %d s) must be longer than config.drainMs (SENDER_DRAIN_MS, %d ms) + 5 s, or Kubernetes kills the sender before it has handed its batches back" $key $grace $preStop $drain) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Whether the component with key .key is enabled. Call with (dict "root" $ "key" k). */}}
{{- define "herald.componentEnabled" -}}
{{- $comp := get (.root.Values.components | default dict) .key | default dict -}}
{{- if eq (toString (get $comp "enabled" | default false)) "true" -}}true{{- end -}}
{{- end -}}

{{/* The port of a component (its RPC port, or the gateway's HTTP port). */}}
{{- define "herald.componentPort" -}}
{{- $comp := get (.root.Values.components | default dict) .key | default dict -}}
{{- int64 (get $comp "port" | default 0) -}}
{{- end -}}

{{/* http://<service>:<port> of a component. */}}
{{- define "herald.componentUrl" -}}
{{- $facts := get (include "herald.componentFacts" .root | fromYaml) .key -}}
{{- printf "http://%s:%s" (include "herald.prefixedName" (dict "root" .root "suffix" $facts.name)) (include "herald.componentPort" .) -}}
{{- end -}}

{{/*
Infrastructure. .kind is postgresql, nats or redis.
*/}}
{{- define "herald.devInfraOn" -}}
{{- $dev := .root.Values.devInfra | default dict -}}
{{- if $dev.enabled -}}
{{- $piece := get $dev .kind | default dict -}}
{{- if $piece.enabled -}}true{{- end -}}
{{- end -}}
{{- end -}}

{{- define "herald.infraEnvName" -}}
{{- get (dict "postgresql" "DATABASE_URL" "nats" "NATS_URL" "redis" "REDIS_URL") .kind -}}
{{- end -}}

{{- define "herald.infraUrl" -}}
{{- $root := .root -}}
{{- if include "herald.devInfraOn" . -}}
{{- $host := include "herald.prefixedName" (dict "root" $root "suffix" .kind) -}}
{{- if eq .kind "postgresql" -}}
{{- printf "postgres://postgres@%s:5432/%s" $host ($root.Values.devInfra.postgresql.database | default "herald") -}}
{{- else if eq .kind "nats" -}}
{{- printf "nats://%s:4222" $host -}}
{{- else -}}
{{- printf "redis://%s:6379" $host -}}
{{- end -}}
{{- else -}}
{{- $cfg := get $root.Values .kind | default dict -}}
{{- required (printf "herald: %s.url (or %s.existingSecret) is required" .kind .kind) $cfg.url -}}
{{- end -}}
{{- end -}}

{{/* "true" when the URL comes from the user's Secret. */}}
{{- define "herald.infraFromExistingSecret" -}}
{{- if not (include "herald.devInfraOn" .) -}}
{{- $cfg := get .root.Values .kind | default dict -}}
{{- if $cfg.existingSecret -}}true{{- end -}}
{{- end -}}
{{- end -}}

{{/* secretKeyRef body (name, key) of an infrastructure URL. */}}
{{- define "herald.infraSecretRef" -}}
{{- if include "herald.infraFromExistingSecret" . -}}
{{- $cfg := get .root.Values .kind -}}
name: {{ $cfg.existingSecret }}
key: {{ $cfg.existingSecretKey | default (include "herald.infraEnvName" .) }}
{{- else -}}
name: {{ include "herald.fullname" .root }}-connections
key: {{ include "herald.infraEnvName" . }}
{{- end -}}
{{- end -}}

{{/* Whether any enabled component uses infrastructure .kind. */}}
{{- define "herald.infraNeeded" -}}
{{- $root := .root -}}
{{- $kind := .kind -}}
{{- $facts := include "herald.componentFacts" $root | fromYaml -}}
{{- range $key := splitList " " (include "herald.componentKeys" $root) -}}
{{- if and (include "herald.componentEnabled" (dict "root" $root "key" $key)) (has $kind (get $facts $key).infra) -}}true{{- end -}}
{{- end -}}
{{- end -}}

{{/* host:port of the NATS monitoring endpoint (KEDA). */}}
{{- define "herald.natsMonitoringEndpoint" -}}
{{- if include "herald.devInfraOn" (dict "root" . "kind" "nats") -}}
{{- printf "%s.%s.svc:8222" (include "herald.prefixedName" (dict "root" . "suffix" "nats")) .Release.Namespace -}}
{{- else -}}
{{- .Values.nats.monitoringEndpoint | default "" -}}
{{- end -}}
{{- end -}}

{{/* JetStream names exactly as packages/runtime/src/streams.ts builds them. */}}
{{- define "herald.jetstreamName" -}}
{{- $ns := .root.Values.nats.namespace | default "" -}}
{{- if $ns -}}{{- printf "%s_%s" $ns .name -}}{{- else -}}{{- .name -}}{{- end -}}
{{- end -}}

{{/*
Where browsers reach the gateway (HERALD_PUBLIC_URL: the OAuth issuer, the sign-in page and
the console): components.gateway.config.publicUrl when set, else the first ingress host
(https when a tls entry lists it), else http://127.0.0.1:<port> for `kubectl port-forward`.
*/}}
{{- define "herald.publicUrl" -}}
{{- $gw := .Values.components.gateway -}}
{{- if include "herald.isSet" $gw.config.publicUrl -}}
{{- $gw.config.publicUrl -}}
{{- else if and .Values.ingress.enabled .Values.ingress.hosts -}}
{{- $host := (first .Values.ingress.hosts).host -}}
{{- $tls := false -}}
{{- range .Values.ingress.tls -}}{{- if has $host (.hosts | default list) -}}{{- $tls = true -}}{{- end -}}{{- end -}}
{{- printf "%s://%s" (ternary "https" "http" $tls) $host -}}
{{- else -}}
{{- printf "http://127.0.0.1:%v" $gw.port -}}
{{- end -}}
{{- end -}}

{{/*
Secrets of the credential service. .which is masterKey, bootstrapApiKey or bootstrapAdmin;
or .cfg gives the values block itself (masterKey.previous).
*/}}
{{- define "herald.keySecretRef" -}}
{{- $cfg := .cfg | default (get .root.Values (.which | default "")) -}}
{{- if $cfg.existingSecret -}}
name: {{ $cfg.existingSecret }}
key: {{ $cfg.existingSecretKey | default .envName }}
{{- else -}}
name: {{ include "herald.fullname" .root }}-keys
key: {{ .envName }}
{{- end -}}
{{- end -}}

{{/*
A memory quantity in Kubernetes' notation (512Mi, 1Gi, 1G, 1.5Gi, 5e8, 536870912: the
schema's pattern) in whole MiB. Call with (dict "q" <quantity> "where" <values path>).
*/}}
{{- define "herald.quantityMiB" -}}
{{- $q := include "herald.envValue" .q -}}
{{- if not (regexMatch "^[0-9.]+([eE][-+]?[0-9]+|[numkKMGTPE]i?)?$" $q) -}}
{{- fail (printf "herald: %s: %q is not a memory quantity" .where $q) -}}
{{- end -}}
{{- $units := dict "" 1.0 "n" 1e-9 "u" 1e-6 "m" 1e-3 "k" 1e3 "M" 1e6 "G" 1e9 "T" 1e12 "P" 1e15 "E" 1e18 "Ki" 1024.0 "Mi" 1048576.0 "Gi" 1073741824.0 "Ti" 1099511627776.0 "Pi" 1125899906842624.0 "Ei" 1152921504606846976.0 -}}
{{- $unit := regexFind "[numkKMGTPE]i?$" $q -}}
{{- floor (divf (mulf (float64 (trimSuffix $unit $q)) (get $units $unit)) 1048576) | int64 -}}
{{- end -}}

{{/*
NODE_OPTIONS of a component (docs/operations.md, "Memory"): its young generation
(`semiSpaceMiB`) and V8's old generation sized to the pod: the limit less 128 MiB for the
rest of the process (code, young generation, buffers), and never under half the limit.
The image's fixed 384 MB would let a 384 Mi pod's heap grow into an OOM kill, and waste a
2 Gi pod; without a limit it is the image's 384. Otherwise the same options as dev mode's
(scripts/processes.mjs; a chart test keeps them equal).
*/}}
{{- define "herald.nodeOptions" -}}
{{- $limit := "" -}}
{{- with .c.resources -}}{{- with .limits -}}{{- $limit = .memory -}}{{- end -}}{{- end -}}
{{- $old := 384 -}}
{{- if include "herald.isSet" $limit -}}
{{- $mib := include "herald.quantityMiB" (dict "q" $limit "where" (printf "components.%s.resources.limits.memory" .c.key)) | int64 -}}
{{- $old = max (div $mib 2) (sub $mib 128) -}}
{{- end -}}
{{- printf "--max-semi-space-size=%d --max-old-space-size=%d" (int .c.semiSpaceMiB) (int $old) -}}
{{- end -}}

{{/*
The container's command: node, the V8 flags NODE_OPTIONS may not carry, the CLI (its
role is the argument). `initialOldSpaceMiB` above 0 adds --initial-old-space-size
(docs/operations.md, "Memory"). The same as dev mode's (scripts/processes.mjs nodeFlagsOf;
a chart test keeps them equal).
*/}}
{{- define "herald.command" -}}
{{- $command := list "node" -}}
{{- if gt (int (.initialOldSpaceMiB | default 0)) 0 -}}
{{- $command = append $command (printf "--initial-old-space-size=%d" (int .initialOldSpaceMiB)) -}}
{{- end -}}
{{- toJson (append $command "/app/packages/cli/dist/main.js") -}}
{{- end -}}

{{/*
Non-secret environment of a component (its ConfigMap data), as a YAML map of strings.
Call with (dict "root" $ "c" <resolved component>). Precedence, lowest first: what the
chart derives (LOG_LEVEL, NODE_OPTIONS from semiSpaceMiB and the memory limit, service URLs, config
settings), the global env, the component's env. PORT/ADMIN_PORT and the secrets are set
in the container itself.
*/}}
{{- define "herald.configData" -}}
{{- $root := .root -}}
{{- $c := .c -}}
{{- $data := dict -}}
{{- $_ := set $data "LOG_LEVEL" (toString ($c.logLevel | default "info")) -}}
{{- with include "herald.nodeOptions" (dict "c" $c) -}}
{{- $_ := set $data "NODE_OPTIONS" . -}}
{{- end -}}
{{- if has "nats" $c.infra -}}
{{- $_ := set $data "NATS_NAMESPACE" (toString ($root.Values.nats.namespace | default "")) -}}
{{- $_ := set $data "NATS_STREAM_REPLICAS" (include "herald.envValue" ($root.Values.nats.streamReplicas | default 1)) -}}
{{- if include "herald.isSet" $root.Values.nats.placementTags -}}
{{- $_ := set $data "NATS_STREAM_PLACEMENT_TAGS" (include "herald.envValue" $root.Values.nats.placementTags) -}}
{{- end -}}
{{- end -}}
{{- if has "redis" $c.infra -}}
{{- $_ := set $data "REDIS_KEY_PREFIX" (toString ($root.Values.redis.keyPrefix | default "herald:")) -}}
{{- end -}}
{{- $allFacts := include "herald.componentFacts" $root | fromYaml -}}
{{- range $callee := $c.calls -}}
{{- $_ := set $data (get $allFacts $callee).urlEnv (include "herald.componentUrl" (dict "root" $root "key" $callee)) -}}
{{- end -}}
{{- if $c.webPush -}}
{{- $wp := $root.Values.webPush | default dict -}}
{{- $_ := set $data "HERALD_WEBPUSH_ALLOW_PRIVATE" (ternary "true" "false" (eq (toString ($wp.allowPrivate | default false)) "true")) -}}
{{- if include "herald.isSet" $wp.allowedHosts -}}
{{- $_ := set $data "HERALD_WEBPUSH_ALLOWED_HOSTS" (include "herald.envValue" $wp.allowedHosts) -}}
{{- end -}}
{{- end -}}
{{- if eq $c.key "gateway" -}}
{{- $_ := set $data "HERALD_PUBLIC_URL" (include "herald.publicUrl" $root) -}}
{{- $_ := set $data "HERALD_TRUST_PROXY" (ternary "true" "false" (eq (toString $root.Values.ingress.enabled) "true")) -}}
{{- end -}}
{{- if or (eq $c.key "credential") (eq $c.key "webhooks") -}}
{{- $_ := set $data "HERALD_MASTER_KEY_VERSION" (toString (int64 ($root.Values.masterKey.version | default 1))) -}}
{{- end -}}
{{- if and (eq $c.key "credential") $root.Values.bootstrapAdmin.enabled -}}
{{- $_ := set $data "HERALD_BOOTSTRAP_ADMIN_EMAIL" (toString $root.Values.bootstrapAdmin.email) -}}
{{- end -}}
{{- $names := get (include "herald.configEnvNames" $root | fromYaml) $c.key | default dict -}}
{{- range $k, $v := $c.config -}}
{{- $envName := get $names $k -}}
{{- if not $envName -}}
{{- fail (printf "herald: components.%s.config.%s is not a setting of %s" $c.key $k $c.name) -}}
{{- end -}}
{{- if include "herald.isSet" $v -}}
{{- $_ := set $data $envName (include "herald.envValue" $v) -}}
{{- end -}}
{{- end -}}
{{- range $k, $v := ($root.Values.env | default dict) -}}
{{- if not (kindIs "invalid" $v) -}}{{- $_ := set $data $k (include "herald.envValue" $v) -}}{{- end -}}
{{- end -}}
{{- range $k, $v := ($c.env | default dict) -}}
{{- if not (kindIs "invalid" $v) -}}{{- $_ := set $data $k (include "herald.envValue" $v) -}}{{- end -}}
{{- end -}}
{{- toYaml $data -}}
{{- end -}}

{{/* Input of the checksum/secret pod annotation: every value the Secrets are made of. */}}
{{- define "herald.secretChecksumInput" -}}
{{- toJson (dict "postgresql" .Values.postgresql "nats" .Values.nats "redis" .Values.redis "masterKey" .Values.masterKey "bootstrapApiKey" .Values.bootstrapApiKey "bootstrapAdmin" .Values.bootstrapAdmin "devInfra" .Values.devInfra "fullname" (include "herald.fullname" .)) -}}
{{- end -}}

{{/* The name of the port that serves /healthz, /readyz and /metrics. */}}
{{- define "herald.adminPortName" -}}
{{- if eq .kind "gateway" -}}http{{- else -}}admin{{- end -}}
{{- end -}}
