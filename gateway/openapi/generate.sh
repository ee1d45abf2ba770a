#!/bin/sh
# Regenerates zz_generated.openapi.go from the Kubernetes API types the gateway serves.
# Run from anywhere: ./gateway/openapi/generate.sh (or go generate ./gateway/openapi/).
set -eu
cd "$(dirname "$0")/../.."
OPENAPI_GEN="${OPENAPI_GEN:-$(go env GOPATH)/bin/openapi-gen}"
report="$(mktemp)"
trap 'rm -f "$report"' EXIT
"$OPENAPI_GEN" \
	--go-header-file gateway/openapi/boilerplate.go.txt \
	--output-pkg github.com/kubeactor/kubeactor/gateway/openapi \
	--output-dir gateway/openapi \
	--output-file zz_generated.openapi.go \
	--report-filename "$report" \
	k8s.io/api/core/v1 \
	k8s.io/api/autoscaling/v1 \
	k8s.io/apimachinery/pkg/apis/meta/v1 \
	k8s.io/apimachinery/pkg/runtime \
	k8s.io/apimachinery/pkg/util/intstr \
	k8s.io/apimachinery/pkg/api/resource \
	k8s.io/apimachinery/pkg/version
