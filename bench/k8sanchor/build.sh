#!/usr/bin/env bash
# build.sh: builds the real control plane of the anchor (kube-apiserver and kube-scheduler
# of k8s.io/kubernetes v1.32.13, staging modules at the published v0.32.13) and the driver
# into bench/k8sanchor/bin. A binary already there is kept; FORCE=1 rebuilds. The first
# build takes 10+ minutes on two shared cores.
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p bin
export CGO_ENABLED=0
for cmd in kube-apiserver kube-scheduler; do
  if [ -x "bin/$cmd" ] && [ -z "${FORCE:-}" ]; then echo "bin/$cmd kept"; continue; fi
  echo "building $cmd"
  go build -trimpath -o "bin/$cmd" "k8s.io/kubernetes/cmd/$cmd"
done
go build -o bin/anchor ./cmd/anchor
echo "built: $(ls bin | tr '\n' ' ')"
