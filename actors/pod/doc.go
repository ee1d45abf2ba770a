// Package pod holds the pure decisions specific to pods (graceful deletion, binding
// to a node, conditions). It does no I/O and reads no clock: the object actor and the
// scheduler in package actors and the gateway's pods/binding apply them.
package pod
