// Package kinds is the table of the API's kinds: names, scope, verbs, and the pure
// functions each kind needs (defaulting, validation, preparation for create and update,
// field selectors, table rows). It does no I/O and knows nothing of HTTP or actors.
package kinds
