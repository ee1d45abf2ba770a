// Package cli is the kubeactor command line, built with kong: the server, the node
// agent and the client commands. It assembles components from config; it holds no
// control-plane logic of its own.
package cli
