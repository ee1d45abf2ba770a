// Package docker implements the node agent's container runtime (runtime.Runtime)
// with the local Docker engine: the only package that imports the Docker SDK. It
// maps plain runtime values to Docker's requests and back; it knows nothing of pods.
package docker
