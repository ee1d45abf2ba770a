// Package serviceaccount decides what service accounts need: a "default" account in
// every active namespace, and a token secret per account (a signed JWT, the cluster
// CA and the namespace). It links no actor runtime, no store and no crypto library:
// tokens come from a TokenGenerator the server gives it.
package serviceaccount
