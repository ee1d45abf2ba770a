// Package nodestatus builds, as pure functions of values, the Node object a node agent
// registers and the status it posts through nodes/status: the Ready condition,
// capacity, addresses and version information. It does no I/O and reads no clock.
package nodestatus
