// Package namespace holds the pure decisions of namespace termination: mark it
// Terminating, delete its contents, then remove it. It does no I/O and reads no
// clock: the object actor in package actors applies them.
package namespace
