// Package command holds what the pure decision packages need of the store: the kinds
// of change (Op), the preconditions of a write and the errors a decision returns. It
// is plain values and pure functions: it imports no Pebble and does no I/O, so that a
// decision package can use it without linking the store.
package command
