// Package pod holds the pure decisions specific to pods (graceful deletion). It does
// no I/O and reads no clock: the object actor in package actors applies them.
package pod
