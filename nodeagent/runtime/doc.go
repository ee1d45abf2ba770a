// Package runtime is the node agent's view of a container engine: the operations the
// pod sync needs, with plain value types. It imports no engine: the Docker engine
// implements it in runtime/docker; tests use a fake. Nothing here sees Docker's types.
package runtime
