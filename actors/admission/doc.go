// Package admission is the one admission seam: the attributes of a write, the Plugin
// contract and the Chain that runs plugins in order, and the plugins themselves
// (NamespaceLifecycle, ResourceQuota). It is pure: plugins read the state they need through the
// narrow readers given to their constructors, and do no other I/O.
package admission
