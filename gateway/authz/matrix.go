package authz

import "fmt"

// Case is one row of a decision table: who asks what, and whether it is allowed.
type Case struct {
	User      string
	Groups    []string
	Method    string
	Resource  string
	Namespace string // "" for a cluster-scoped resource or an all-namespace list
	Allowed   bool
}

// Path is the request path of the case's collection.
func (c Case) Path() string {
	if c.Namespace == "" {
		return "/api/v1/" + c.Resource
	}
	return "/api/v1/namespaces/" + c.Namespace + "/" + c.Resource
}

func (c Case) String() string {
	return fmt.Sprintf("%s%v %s %s in %q", c.User, c.Groups, c.Method, c.Resource, c.Namespace)
}

// BookPolicy is the book's ABAC example, verbatim (comments, and "ns" for bob's
// namespace), with one group rule added.
const BookPolicy = `{ "user": "alice" }                                            # alice can do anything
{ "user": "kubelet", "resource": "pods", "readonly": true}     # kubelet may read pods
{ "user": "kubelet", "resource": "events" }                    # kubelet may read+write events
{ "user": "bob", "resource": "pods", "readonly": true, "ns": "myNamespace" }  # bob: read pods in myNamespace only
{ "group": "ops", "resource": "nodes" }
`

// BookMatrix is the decision table of BookPolicy: the unit tests and the e2e tests
// check the same rows.
var BookMatrix = []Case{
	{User: "alice", Method: "GET", Resource: "pods", Namespace: "default", Allowed: true},
	{User: "alice", Method: "POST", Resource: "services", Namespace: "myNamespace", Allowed: true},
	{User: "alice", Method: "GET", Resource: "nodes", Allowed: true},
	{User: "kubelet", Method: "GET", Resource: "pods", Namespace: "default", Allowed: true},
	{User: "kubelet", Method: "GET", Resource: "pods", Allowed: true},
	{User: "kubelet", Method: "POST", Resource: "pods", Namespace: "default", Allowed: false},
	{User: "kubelet", Method: "POST", Resource: "events", Namespace: "default", Allowed: true},
	{User: "kubelet", Method: "GET", Resource: "services", Namespace: "default", Allowed: false},
	{User: "bob", Method: "GET", Resource: "pods", Namespace: "myNamespace", Allowed: true},
	{User: "bob", Method: "GET", Resource: "pods", Namespace: "default", Allowed: false},
	{User: "bob", Method: "GET", Resource: "pods", Allowed: false},
	{User: "bob", Method: "POST", Resource: "pods", Namespace: "myNamespace", Allowed: false},
	{User: "bob", Method: "GET", Resource: "services", Namespace: "myNamespace", Allowed: false},
	{User: "carol", Groups: []string{"ops"}, Method: "GET", Resource: "nodes", Allowed: true},
	{User: "carol", Groups: []string{"ops"}, Method: "POST", Resource: "nodes", Allowed: true},
	{User: "carol", Groups: []string{"dev"}, Method: "GET", Resource: "nodes", Allowed: false},
	{User: "carol", Method: "GET", Resource: "pods", Namespace: "default", Allowed: false},
}
