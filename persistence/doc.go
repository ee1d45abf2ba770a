// Package persistence is the durable store: Kubernetes objects in Pebble keyed by
// resource/namespace/name, one global revision, a change log for watches and one
// deterministic apply path. It is the only package that imports Pebble; it knows
// nothing of actors or HTTP.
package persistence
