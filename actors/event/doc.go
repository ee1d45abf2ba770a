// Package event decides what an Event object becomes: its deterministic name, the
// combining of similar events, a create or a bump (count, timestamps) from the
// occurrences that arrived since the last write, and when it expires.
// It is pure: values and the time come in, objects go out; no clock, I/O or logging.
package event
