// Package memory is the server's garbage-collection policy: how far the Go heap may
// grow past what the last collection found live, and an optional soft limit. It
// tunes the runtime only; it allocates, holds and frees nothing of the server's.
package memory
