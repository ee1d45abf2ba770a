package scheduler

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	st "github.com/kubeactor/kubeactor/actors/scheduler/schedtest"
)

func TestParsePolicy(t *testing.T) {
	tests := []struct {
		name       string
		in         string
		predicates []string // Name() of each
		priorities []WeightedPriority
		err        error
		errText    string
	}{
		{name: "empty object is the default", in: `{}`,
			predicates: []string{"VolumeClaimsBound", "PodFitsPorts", "PodFitsResources", "NoDiskConflict", "MatchNodeSelector", "HostName"},
			priorities: DefaultPolicy().Priorities},
		{name: "book example", in: `{"kind":"Policy","apiVersion":"v1",
			"predicates":[{"name":"PodFitsPorts"},{"name":"PodFitsResources"},{"name":"NoDiskConflict"},{"name":"MatchNodeSelector"},{"name":"HostName"},
				{"name":"TestLabelsPresence","argument":{"labelsPresence":{"labels":["foo"],"presence":true}}},
				{"name":"RegionZoneAffinity","argument":{"serviceAffinity":{"labels":["region","zone"]}}}],
			"priorities":[{"name":"LeastRequestedPriority","weight":1},
				{"name":"RackSpread","weight":2,"argument":{"serviceAntiAffinity":{"label":"rack"}}},
				{"name":"ZonePreferred","weight":3,"argument":{"labelPreference":{"label":"zone","presence":true}}},
				{"name":"EqualPriority","weight":0}]}`,
			predicates: []string{"PodFitsPorts", "PodFitsResources", "NoDiskConflict", "MatchNodeSelector", "HostName", "CheckNodeLabelPresence", "CheckServiceAffinity"},
			priorities: []WeightedPriority{
				{Name: "LeastRequestedPriority", Weight: 1, Priority: LeastRequestedPriority{}},
				{Name: "RackSpread", Weight: 2, Priority: ServiceAntiAffinity{Label: "rack"}},
				{Name: "ZonePreferred", Weight: 3, Priority: NodeLabelPriority{Label: "zone", Presence: true}},
				{Name: "EqualPriority", Weight: 0, Priority: EqualPriority{}},
			}},
		{name: "book's version spelling and alias", in: `{"kind":"Policy","version":"v1","predicates":[{"name":"PodFitsHostPorts"}],"priorities":[]}`,
			predicates: []string{"PodFitsPorts"}, priorities: []WeightedPriority{}},
		{name: "unknown predicate", in: `{"predicates":[{"name":"PodFitsGPU"}]}`, err: ErrUnknownPredicate, errText: `predicates[0] "PodFitsGPU"`},
		{name: "unknown priority", in: `{"priorities":[{"name":"MostRequested","weight":1}]}`, err: ErrUnknownPriority},
		{name: "negative weight", in: `{"priorities":[{"name":"EqualPriority","weight":-1}]}`, err: ErrBadWeight},
		{name: "huge weight", in: `{"priorities":[{"name":"EqualPriority","weight":99999999999}]}`, err: ErrBadWeight},
		{name: "fractional weight", in: `{"priorities":[{"name":"EqualPriority","weight":1.5}]}`, err: ErrBadPolicy},
		{name: "unknown field", in: `{"predicates":[{"name":"HostName","args":{}}]}`, err: ErrBadPolicy},
		{name: "wrong kind", in: `{"kind":"Pod"}`, err: ErrBadPolicy},
		{name: "wrong version", in: `{"apiVersion":"v2"}`, err: ErrBadPolicy},
		{name: "not json", in: `predicates: []`, err: ErrBadPolicy},
		{name: "trailing data", in: `{} {}`, err: ErrBadPolicy},
		{name: "duplicate name", in: `{"predicates":[{"name":"HostName"},{"name":"HostName"}]}`, err: ErrBadPolicy},
		{name: "no name", in: `{"priorities":[{"weight":1}]}`, err: ErrBadPolicy},
		{name: "two arguments", in: `{"predicates":[{"name":"X","argument":{"serviceAffinity":{"labels":["a"]},"labelsPresence":{"labels":["a"]}}}]}`, err: ErrBadPolicyArgument},
		{name: "empty argument", in: `{"priorities":[{"name":"X","weight":1,"argument":{}}]}`, err: ErrBadPolicyArgument},
		{name: "no labels", in: `{"predicates":[{"name":"X","argument":{"labelsPresence":{"labels":[]}}}]}`, err: ErrBadPolicyArgument},
		{name: "bad label", in: `{"priorities":[{"name":"X","weight":1,"argument":{"serviceAntiAffinity":{"label":"not a label"}}}]}`, err: ErrBadPolicyArgument},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ParsePolicy([]byte(tc.in))
			if tc.err != nil {
				if !errors.Is(err, tc.err) || !strings.Contains(err.Error(), tc.errText) {
					t.Fatalf("err = %v, want %v containing %q", err, tc.err, tc.errText)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, pr := range p.Predicates {
				names = append(names, pr.Name())
			}
			if !reflect.DeepEqual(names, tc.predicates) {
				t.Errorf("predicates = %v, want %v", names, tc.predicates)
			}
			if !reflect.DeepEqual(p.Priorities, tc.priorities) {
				t.Errorf("priorities = %+v, want %+v", p.Priorities, tc.priorities)
			}
		})
	}
}

func TestLookup(t *testing.T) {
	if p, ok := LookupPredicate("PodFitsPorts"); !ok || p.Name() != "PodFitsPorts" {
		t.Errorf("LookupPredicate(PodFitsPorts) = %v, %v", p, ok)
	}
	if _, ok := LookupPredicate("CheckNodeLabelPresence"); ok {
		t.Error("CheckNodeLabelPresence needs an argument; it must not be registered bare")
	}
	if p, ok := LookupPriority("EqualPriority"); !ok || p.Name() != "EqualPriority" {
		t.Errorf("LookupPriority(EqualPriority) = %v, %v", p, ok)
	}
}

// FuzzParsePolicy: any input either fails cleanly or gives a policy that can bid.
func FuzzParsePolicy(f *testing.F) {
	f.Add([]byte(`{"kind":"Policy","apiVersion":"v1","predicates":[{"name":"PodFitsPorts"}],"priorities":[{"name":"LeastRequestedPriority","weight":1}]}`))
	f.Add([]byte(`{}`))
	c := NewCache()
	c.SetNode(st.NewNode("n1").Labels("zone", "a", "rack", "r1").Obj())
	c.SetNode(st.NewNode("n2").Obj())
	c.SetService(st.NewService("web", "app", "web"))
	c.SetPod(st.NewPod("web-0").Labels("app", "web").CPU("1").HostPort(80).Node("n1").Obj())
	pod := st.NewPod("web-1").Labels("app", "web").CPU("1").HostPort(80).Obj()
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParsePolicy(data)
		if err != nil {
			if p.Predicates != nil || p.Priorities != nil {
				t.Fatalf("error %v with a non-empty policy", err)
			}
			return
		}
		for _, w := range p.Priorities {
			if w.Weight < 0 || w.Weight > MaxWeight {
				t.Fatalf("weight %d accepted", w.Weight)
			}
		}
		d := c.Schedule(pod, &p, func(n int) int { return n - 1 })
		if d.Nodes != 2 || d.Feasible+sum(d.Reasons) != 2 {
			t.Fatalf("decision %+v does not account for 2 nodes", d)
		}
	})
}

func sum(m map[string]int) int {
	s := 0
	for _, v := range m {
		s += v
	}
	return s
}
