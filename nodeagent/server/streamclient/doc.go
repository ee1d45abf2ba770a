// Package streamclient is the client side of exec and port-forward over SPDY, the
// protocols the agent server (and the gateway in front of it) speak. It opens
// streams and copies bytes; it knows nothing of pods or of the API's objects.
package streamclient
