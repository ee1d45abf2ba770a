package scheduler

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Policy is the algorithm: the predicates a node must all pass and the weighted
// priorities whose sum ranks the nodes that do.
type Policy struct {
	Predicates []Predicate
	// Priorities with weight 0 are skipped; no priorities at all means EqualPriority.
	Priorities []WeightedPriority
}

// WeightedPriority is a priority as a policy names and weighs it.
type WeightedPriority struct {
	Name     string
	Weight   int64
	Priority Priority
}

// MaxWeight bounds a priority's weight so that sums of scores cannot overflow.
const MaxWeight int64 = 1 << 32

// Errors ParsePolicy wraps, with the entry at fault.
var (
	ErrBadPolicy         = errors.New("scheduler: bad policy")
	ErrUnknownPredicate  = errors.New("scheduler: unknown predicate")
	ErrUnknownPriority   = errors.New("scheduler: unknown priority")
	ErrBadWeight         = errors.New("scheduler: bad priority weight")
	ErrBadPolicyArgument = errors.New("scheduler: bad policy argument")
)

// The registry: plugins a policy may name without an argument (v1.0 RegisterFitPredicate
// and RegisterPriorityFunction). Plugins with arguments are built from the argument.
var (
	predicateRegistry = map[string]Predicate{
		"PodFitsPorts":      PodFitsHostPorts{},
		"PodFitsHostPorts":  PodFitsHostPorts{},
		"PodFitsResources":  PodFitsResources{},
		"NoDiskConflict":    NoDiskConflict{},
		"MatchNodeSelector": MatchNodeSelector{},
		"HostName":          HostName{},
		"VolumeClaimsBound": VolumeClaimsBound{},
	}
	priorityRegistry = map[string]Priority{
		"LeastRequestedPriority":     LeastRequestedPriority{},
		"BalancedResourceAllocation": BalancedResourceAllocation{},
		"ServiceSpreadingPriority":   ServiceSpreadingPriority{},
		"SelectorSpreadPriority":     SelectorSpreadPriority{},
		"EqualPriority":              EqualPriority{},
	}
)

// LookupPredicate returns the predicate registered under name.
func LookupPredicate(name string) (Predicate, bool) {
	p, ok := predicateRegistry[name]
	return p, ok
}

// LookupPriority returns the priority registered under name.
func LookupPriority(name string) (Priority, bool) {
	p, ok := priorityRegistry[name]
	return p, ok
}

// DefaultPolicy is the DefaultProvider: v1.0's five predicates and three priorities
// of weight 1, with v1.1's SelectorSpreadPriority (the pods of a service or of a
// replication controller) in place of v1.0's ServiceSpreadingPriority (the pods of
// the first service only), which a policy file may still name; VolumeClaimsBound
// comes first (a pod waits for its claims).
func DefaultPolicy() Policy {
	return Policy{
		Predicates: []Predicate{VolumeClaimsBound{}, PodFitsHostPorts{}, PodFitsResources{}, NoDiskConflict{}, MatchNodeSelector{}, HostName{}},
		Priorities: []WeightedPriority{
			{Name: "LeastRequestedPriority", Weight: 1, Priority: LeastRequestedPriority{}},
			{Name: "BalancedResourceAllocation", Weight: 1, Priority: BalancedResourceAllocation{}},
			{Name: "SelectorSpreadPriority", Weight: 1, Priority: SelectorSpreadPriority{}},
		},
	}
}

// policyFile is the --policy-config-file format of v1.0 (schedulerapi.Policy).
type policyFile struct {
	Kind       string            `json:"kind"`
	APIVersion string            `json:"apiVersion"`
	Version    string            `json:"version"` // the book's spelling of apiVersion
	Predicates []predicatePolicy `json:"predicates"`
	Priorities []priorityPolicy  `json:"priorities"`
}

type predicatePolicy struct {
	Name     string `json:"name"`
	Argument *struct {
		ServiceAffinity *struct {
			Labels []string `json:"labels"`
		} `json:"serviceAffinity"`
		LabelsPresence *struct {
			Labels   []string `json:"labels"`
			Presence bool     `json:"presence"`
		} `json:"labelsPresence"`
	} `json:"argument"`
}

type priorityPolicy struct {
	Name     string `json:"name"`
	Weight   int64  `json:"weight"`
	Argument *struct {
		ServiceAntiAffinity *struct {
			Label string `json:"label"`
		} `json:"serviceAntiAffinity"`
		LabelPreference *struct {
			Label    string `json:"label"`
			Presence bool   `json:"presence"`
		} `json:"labelPreference"`
	} `json:"argument"`
}

// ParsePolicy reads a policy file. Without a "predicates" (or "priorities") key the
// defaults apply; an empty list means none. Unknown fields, names and bad weights are
// errors naming the entry at fault.
func ParsePolicy(data []byte) (Policy, error) {
	var f policyFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return Policy{}, fmt.Errorf("%w: %w", ErrBadPolicy, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Policy{}, fmt.Errorf("%w: data after the policy object", ErrBadPolicy)
	}
	if f.Kind != "" && f.Kind != "Policy" {
		return Policy{}, fmt.Errorf("%w: kind %q, want Policy", ErrBadPolicy, f.Kind)
	}
	for _, v := range []string{f.APIVersion, f.Version} {
		if v != "" && v != "v1" {
			return Policy{}, fmt.Errorf("%w: apiVersion %q, want v1", ErrBadPolicy, v)
		}
	}
	p := DefaultPolicy()
	if f.Predicates != nil {
		p.Predicates = make([]Predicate, 0, len(f.Predicates))
		seen := map[string]bool{}
		for i, e := range f.Predicates {
			if seen[e.Name] {
				return Policy{}, fmt.Errorf("%w: predicates[%d]: %q named twice", ErrBadPolicy, i, e.Name)
			}
			seen[e.Name] = true
			pr, err := buildPredicate(e)
			if err != nil {
				return Policy{}, fmt.Errorf("predicates[%d] %q: %w", i, e.Name, err)
			}
			p.Predicates = append(p.Predicates, pr)
		}
	}
	if f.Priorities != nil {
		p.Priorities = make([]WeightedPriority, 0, len(f.Priorities))
		seen := map[string]bool{}
		for i, e := range f.Priorities {
			if seen[e.Name] {
				return Policy{}, fmt.Errorf("%w: priorities[%d]: %q named twice", ErrBadPolicy, i, e.Name)
			}
			seen[e.Name] = true
			pr, err := buildPriority(e)
			if err != nil {
				return Policy{}, fmt.Errorf("priorities[%d] %q: %w", i, e.Name, err)
			}
			if e.Weight < 0 || e.Weight > MaxWeight {
				return Policy{}, fmt.Errorf("priorities[%d] %q: %w: %d is outside 0..%d", i, e.Name, ErrBadWeight, e.Weight, MaxWeight)
			}
			p.Priorities = append(p.Priorities, WeightedPriority{Name: e.Name, Weight: e.Weight, Priority: pr})
		}
	}
	return p, nil
}

func buildPredicate(e predicatePolicy) (Predicate, error) {
	if e.Name == "" {
		return nil, fmt.Errorf("%w: no name", ErrBadPolicy)
	}
	if e.Argument == nil {
		if p, ok := predicateRegistry[e.Name]; ok {
			return p, nil
		}
		return nil, fmt.Errorf("%w (known: %s; others need an argument)", ErrUnknownPredicate, known(predicateRegistry))
	}
	a := e.Argument
	switch {
	case a.ServiceAffinity != nil && a.LabelsPresence != nil:
		return nil, fmt.Errorf("%w: give serviceAffinity or labelsPresence, not both", ErrBadPolicyArgument)
	case a.ServiceAffinity != nil:
		if err := checkLabels(a.ServiceAffinity.Labels); err != nil {
			return nil, fmt.Errorf("serviceAffinity: %w", err)
		}
		return CheckServiceAffinity{Labels: a.ServiceAffinity.Labels}, nil
	case a.LabelsPresence != nil:
		if err := checkLabels(a.LabelsPresence.Labels); err != nil {
			return nil, fmt.Errorf("labelsPresence: %w", err)
		}
		return CheckNodeLabelPresence{Labels: a.LabelsPresence.Labels, Presence: a.LabelsPresence.Presence}, nil
	}
	return nil, fmt.Errorf("%w: the argument needs serviceAffinity or labelsPresence", ErrBadPolicyArgument)
}

func buildPriority(e priorityPolicy) (Priority, error) {
	if e.Name == "" {
		return nil, fmt.Errorf("%w: no name", ErrBadPolicy)
	}
	if e.Argument == nil {
		if p, ok := priorityRegistry[e.Name]; ok {
			return p, nil
		}
		return nil, fmt.Errorf("%w (known: %s; others need an argument)", ErrUnknownPriority, known(priorityRegistry))
	}
	a := e.Argument
	switch {
	case a.ServiceAntiAffinity != nil && a.LabelPreference != nil:
		return nil, fmt.Errorf("%w: give serviceAntiAffinity or labelPreference, not both", ErrBadPolicyArgument)
	case a.ServiceAntiAffinity != nil:
		if err := checkLabels([]string{a.ServiceAntiAffinity.Label}); err != nil {
			return nil, fmt.Errorf("serviceAntiAffinity: %w", err)
		}
		return ServiceAntiAffinity{Label: a.ServiceAntiAffinity.Label}, nil
	case a.LabelPreference != nil:
		if err := checkLabels([]string{a.LabelPreference.Label}); err != nil {
			return nil, fmt.Errorf("labelPreference: %w", err)
		}
		return NodeLabelPriority{Label: a.LabelPreference.Label, Presence: a.LabelPreference.Presence}, nil
	}
	return nil, fmt.Errorf("%w: the argument needs serviceAntiAffinity or labelPreference", ErrBadPolicyArgument)
}

func checkLabels(ls []string) error {
	if len(ls) == 0 {
		return fmt.Errorf("%w: no labels", ErrBadPolicyArgument)
	}
	for _, l := range ls {
		if errs := validation.IsQualifiedName(l); len(errs) > 0 {
			return fmt.Errorf("%w: label %q: %s", ErrBadPolicyArgument, l, strings.Join(errs, "; "))
		}
	}
	return nil
}

func known[T any](m map[string]T) string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
