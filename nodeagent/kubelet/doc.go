// Package kubelet is the Docker node agent: it registers its node, watches the pods
// bound to it, and gives each pod a worker that syncs it (a mailbox of one where the
// latest update wins). A sync observes the engine, asks podsync for a plan and a
// status, carries the plan out through the runtime and posts the status. Probes,
// volumes, images, garbage collection and static pods live beside it.
package kubelet
