// Package actors is the control plane's actor system: a root supervisor, one manager
// per kind and one supervised actor per object, which is that object's only writer.
// It is the only package that imports protoactor; callers use the System's methods.
package actors
