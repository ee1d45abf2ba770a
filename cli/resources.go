package cli

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// resourceTypes are the resources the server's discovery (/api/v1) reports.
type resourceTypes []metav1.APIResource

func (c *conn) resourceTypes() (resourceTypes, error) {
	list, err := c.discovery.ServerResourcesForGroupVersion("v1")
	if err != nil {
		return nil, fmt.Errorf("discover /api/v1: %w", err)
	}
	return resourceTypes(list.APIResources), nil
}

// lookup finds a resource by its plural, singular, short name or kind, ignoring case,
// as kubectl does ("po", "pod", "pods", "Pod", "rc").
func (rt resourceTypes) lookup(name string) (metav1.APIResource, error) {
	want := strings.ToLower(name)
	for _, r := range rt {
		if strings.Contains(r.Name, "/") {
			continue // a subresource
		}
		if r.Name == want || r.SingularName == want || strings.ToLower(r.Kind) == want {
			return r, nil
		}
		for _, s := range r.ShortNames {
			if s == want {
				return r, nil
			}
		}
	}
	return metav1.APIResource{}, fmt.Errorf("the server doesn't have a resource type %q", name)
}

// byKind finds the resource that holds objects of kind.
func (rt resourceTypes) byKind(kind string) (metav1.APIResource, error) {
	for _, r := range rt {
		if !strings.Contains(r.Name, "/") && r.Kind == kind {
			return r, nil
		}
	}
	return metav1.APIResource{}, fmt.Errorf("no matches for kind %q in version \"v1\"", kind)
}

// parseTypeArgs splits kubectl's TYPE[,TYPE...] [NAME...] or TYPE/NAME... arguments
// into the requested types, each with its names (none meaning all).
func parseTypeArgs(args []string) ([]typeRequest, error) {
	if len(args) == 0 {
		return nil, fmt.Errorf("you must specify the type of resource to get")
	}
	if strings.Contains(args[0], "/") {
		var out []typeRequest
		for _, a := range args {
			typ, name, ok := strings.Cut(a, "/")
			if !ok || typ == "" || name == "" {
				return nil, fmt.Errorf("there is no need to specify a resource type as a separate argument when passing arguments in resource/name form (got %q)", a)
			}
			if n := len(out); n > 0 && out[n-1].Type == typ {
				out[n-1].Names = append(out[n-1].Names, name)
				continue
			}
			out = append(out, typeRequest{Type: typ, Names: []string{name}})
		}
		return out, nil
	}
	var out []typeRequest
	for _, typ := range strings.Split(args[0], ",") {
		if typ == "" {
			return nil, fmt.Errorf("empty resource type in %q", args[0])
		}
		out = append(out, typeRequest{Type: typ, Names: args[1:]})
	}
	return out, nil
}

// typeRequest is one TYPE of a command line with the NAMEs asked for.
type typeRequest struct {
	Type  string
	Names []string
}

// resolve looks every request's type up in discovery.
func (rt resourceTypes) resolve(reqs []typeRequest) ([]resolved, error) {
	out := make([]resolved, 0, len(reqs))
	for _, r := range reqs {
		res, err := rt.lookup(r.Type)
		if err != nil {
			return nil, err
		}
		out = append(out, resolved{Resource: res, Names: r.Names})
	}
	return out, nil
}

// resolved is a typeRequest whose type discovery knows.
type resolved struct {
	Resource metav1.APIResource
	Names    []string
}
