// Package dns is the control plane's second front door: cluster DNS answered from
// the server's own state (services and endpoints, followed through the store's change
// feed), over UDP and TCP. Answer is the pure decision; Server is the thin listener
// that forwards names outside the cluster domain upstream. It must not write to the
// store.
package dns
