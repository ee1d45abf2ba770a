// Package gateway is the API server: an Echo HTTP server that speaks the Kubernetes
// core/v1 REST API. It decodes, defaults, validates and admits requests, sends writes
// to the owning actor through actors.System and serves reads and watches from the
// store's cache. It holds no state of its own and never writes to the store directly.
package gateway
