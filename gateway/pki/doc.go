// Package pki makes the secure port's certificates: a CA, a serving certificate
// signed by it and client certificates, kept as PEM files in --cert-dir and reused
// after. It never logs and never writes a key anywhere but its own files (0600).
package pki
