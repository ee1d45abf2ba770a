//go:build tools

// Package k8sanchor pins the real control plane's commands in this module's build list,
// so build.sh can `go build k8s.io/kubernetes/cmd/...` at the versions go.mod names.
package k8sanchor

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
