// Package servertest has fakes of the agent server's Host and of the container
// runtime, for tests of the server and of what sits in front of it (the gateway, the
// CLI). It runs nothing real.
package servertest
