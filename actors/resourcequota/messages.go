package resourcequota

import "k8s.io/apimachinery/pkg/runtime"

// ChargeRequest asks a quota's actor to charge the create of Object (of Resource,
// in the quota's namespace): the actor answers nil once the new usage is durable in
// status.used, or the refusal. A dry run is decided and never charged.
type ChargeRequest struct {
	Resource string
	Object   runtime.Object
	DryRun   bool
}
