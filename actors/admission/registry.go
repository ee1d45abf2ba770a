package admission

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Env is what plugins are built over: readers of the cluster's state and the one
// action a plugin may take on it (creating a namespace). A plugin uses only the
// fields it needs; the others may be nil.
type Env struct {
	Namespaces       NamespaceReader
	NamespaceCreator NamespaceCreator
	Pods             PodReader
	LimitRanges      LimitRangeReader
	Quotas           QuotaCharger
	ServiceAccounts  ServiceAccountReader
	// Immortal names the namespaces that may not be deleted (NamespaceLifecycle).
	Immortal []string
}

// DefaultPlugins is the server's chain when --admission-control is not given (its
// default in config names the same list; a test keeps them equal).
var DefaultPlugins = []string{"NamespaceLifecycle", "ResourceQuota"}

// Constructor builds a plugin over env.
type Constructor func(env Env) Plugin

// constructors are the plugins by the names Kubernetes 1.0's --admission-control
// spells them.
var constructors = map[string]Constructor{
	"AlwaysAdmit":            func(Env) Plugin { return AlwaysAdmit{} },
	"AlwaysDeny":             func(Env) Plugin { return AlwaysDeny{} },
	"NamespaceLifecycle":     func(e Env) Plugin { return NewNamespaceLifecycle(e.Namespaces, e.Immortal) },
	"NamespaceExists":        func(e Env) Plugin { return NewNamespaceExists(e.Namespaces) },
	"NamespaceAutoProvision": func(e Env) Plugin { return NewNamespaceAutoProvision(e.Namespaces, e.NamespaceCreator) },
	"SecurityContextDeny":    func(Env) Plugin { return SecurityContextDeny{} },
	"DenyExecOnPrivileged":   func(e Env) Plugin { return NewDenyExecOnPrivileged(e.Pods) },
	"LimitRanger":            func(e Env) Plugin { return NewLimitRanger(e.LimitRanges) },
	"ResourceQuota":          func(e Env) Plugin { return NewResourceQuota(e.Quotas) },
	"ServiceAccount":         func(e Env) Plugin { return NewServiceAccount(e.ServiceAccounts) },
}

// Names returns the known plugin names, sorted.
func Names() []string {
	return slices.Sorted(maps.Keys(constructors))
}

// Check reports the first name in names that is no known plugin.
func Check(names []string) error {
	_, err := New(names, Env{})
	return err
}

// New builds the chain of the plugins named by names, in that order (the
// --admission-control list); blank names are skipped. An unknown name is an error
// listing the known ones.
func New(names []string, env Env) (Chain, error) {
	var c Chain
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		build, ok := constructors[n]
		if !ok {
			return nil, fmt.Errorf("admission: unknown plugin %q (known: %s)", n, strings.Join(Names(), ", "))
		}
		c = append(c, build(env))
	}
	return c, nil
}
