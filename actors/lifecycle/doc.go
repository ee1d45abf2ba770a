// Package lifecycle decides, as pure functions of values, what a create, update,
// delete or expired grace period does to one stored object: which write to make and
// what to answer. It does no I/O, reads no clock and logs nothing; the object actor
// in package actors applies its plans.
package lifecycle
