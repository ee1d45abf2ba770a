// Package authz decides whether an authenticated user may make a request:
// AlwaysAllow, AlwaysDeny or the book's ABAC policy file. It is pure: attributes
// in, a decision out; it does no I/O and never logs.
package authz
