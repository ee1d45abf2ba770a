// Package schedtest builds pods, nodes and services for the scheduler's tests:
// schedtest.NewPod("web").CPU("250m").Mem("64Mi").HostPort(80).Obj(). It is for
// tests only and does nothing but build objects.
package schedtest
