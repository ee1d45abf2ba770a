package openapi

// Regenerate zz_generated.openapi.go (needs openapi-gen from k8s.io/kube-openapi at the
// version in go.mod: go install k8s.io/kube-openapi/cmd/openapi-gen). API rule
// violations of the upstream types are reported to a temporary file instead of failing.
//go:generate ./generate.sh
