{{/*
The text of one file of manifests/ (path relative to it), its namespace the release's.
Called with (list $ "base/rbac.yaml").
*/}}
{{- define "volcano-py.manifest" -}}
{{- $root := index . 0 -}}
{{- $path := index . 1 -}}
{{- $text := $root.Files.Get (printf "files/manifests/%s" $path) -}}
{{- if not $text -}}
{{- fail (printf "files/manifests/%s: missing (is files/manifests the link to manifests/?)" $path) -}}
{{- end -}}
{{- $text | replace "volcano-system" $root.Release.Namespace -}}
{{- end -}}

{{/*
The files of one manifests/ folder, in its kustomization's order.
*/}}
{{- define "volcano-py.resources" -}}
{{- $root := index . 0 -}}
{{- $dir := index . 1 -}}
{{- $kustomization := $root.Files.Get (printf "files/manifests/%s/kustomization.yaml" $dir) | fromYaml -}}
{{- range $kustomization.resources }}
{{ printf "%s/%s" $dir . }}
{{- end -}}
{{- end -}}
