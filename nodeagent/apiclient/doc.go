// Package apiclient is the node agents' side of the API: it connects to the server with
// client-go, registers nodes, posts node and pod status through the status subresources
// (re-reading and reapplying on conflict) and watches pods bound to nodes. It decides
// nothing about what status to post; callers pass that in as functions of the object.
package apiclient
