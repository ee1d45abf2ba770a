package authz

import (
	"net/http"
	"net/url"
	"strings"
)

// Attributes are what a decision is made on: v1.0's four (user, read-only, resource,
// namespace), with the groups, the verb, the name and the path for messages.
type Attributes struct {
	User   string
	Groups []string
	// Verb is the API verb: get, list, watch, create, update, patch, delete,
	// deletecollection, or proxy; for a path outside the API, the method in lower case.
	Verb string
	// ReadOnly is v1.0's flag: a GET (get, list, watch). Connecting to a pod (exec,
	// attach, port-forward, proxy) is never read-only, whatever the method.
	ReadOnly    bool
	Resource    string // plural, "" for a path outside the resources (/version, /api)
	Subresource string
	Namespace   string // "" for cluster-scoped resources and all-namespace calls
	Name        string
	Path        string
}

// connectSubresources reach into a pod or a node: never read-only.
var connectSubresources = map[string]bool{"exec": true, "attach": true, "portforward": true, "proxy": true, "log": false}

// FromRequest derives the attributes of a request as v1.0's request-info resolver did:
// /api/v1[/watch|/proxy][/namespaces/{ns}]/{resource}[/{name}[/{subresource}]].
func FromRequest(user string, groups []string, method, path string, query url.Values) Attributes {
	a := Attributes{User: user, Groups: groups, Path: path, Verb: strings.ToLower(method)}
	parts := splitPath(path)
	if len(parts) < 2 || parts[0] != "api" || parts[1] != "v1" || len(parts) == 2 {
		a.ReadOnly = method == http.MethodGet || method == http.MethodHead
		if a.ReadOnly {
			a.Verb = "get"
		}
		return a
	}
	parts = parts[2:]
	special := ""
	if parts[0] == "watch" || parts[0] == "proxy" {
		special, parts = parts[0], parts[1:]
	}
	if len(parts) >= 2 && parts[0] == "namespaces" {
		a.Namespace = parts[1]
		if len(parts) > 2 {
			parts = parts[2:]
		}
	}
	if len(parts) > 0 {
		a.Resource = parts[0]
	}
	if len(parts) > 1 {
		a.Name = parts[1]
	}
	if len(parts) > 2 && special == "" {
		a.Subresource = parts[2]
	}
	switch {
	case special == "watch":
		a.Verb = "watch"
	case special == "proxy":
		a.Verb = "proxy"
	default:
		a.Verb = verbOf(method, a.Name != "", query)
	}
	a.ReadOnly = (a.Verb == "get" || a.Verb == "list" || a.Verb == "watch") && !connectSubresources[a.Subresource]
	return a
}

func verbOf(method string, item bool, query url.Values) string {
	switch method {
	case http.MethodGet, http.MethodHead:
		switch {
		case query.Get("watch") == "true" || query.Get("watch") == "1":
			return "watch"
		case item:
			return "get"
		default:
			return "list"
		}
	case http.MethodPost:
		return "create"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		if item {
			return "delete"
		}
		return "deletecollection"
	default:
		return strings.ToLower(method)
	}
}

func splitPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}
