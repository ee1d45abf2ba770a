package scheduler

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	st "github.com/kubeactor/kubeactor/actors/scheduler/schedtest"
	"github.com/kubeactor/kubeactor/internal/golden"
)

// scenario is a cluster and a sequence of steps; each schedule step's decision is
// assumed, as the scheduler actor does, so later steps see it.
type scenario struct {
	Seed     int64           `json:"seed"`
	Policy   json.RawMessage `json:"policy"` // a policy file; the default when absent
	Nodes    []nodeSpec      `json:"nodes"`
	Services []serviceSpec   `json:"services"`
	// Controllers are replication controllers: their selectors group pods for
	// SelectorSpreadPriority, as services' do.
	Controllers []serviceSpec `json:"controllers"`
	Pods        []podSpec     `json:"pods"` // bound already
	Steps       []step        `json:"steps"`
}

type step struct {
	Schedule *podSpec `json:"schedule"` // decide and assume
	// Replicas decides and assumes Count copies of Pod, named <name>-<i>, and
	// writes how many pods each node then holds instead of every decision.
	Replicas   *replicas `json:"replicas"`
	Forget     string    `json:"forget"`     // the binding of this pod failed
	Bound      string    `json:"bound"`      // the binding of this assumed pod was observed
	Delete     string    `json:"delete"`     // the pod was deleted
	SetNode    *nodeSpec `json:"setNode"`    // a node was added or changed
	RemoveNode string    `json:"removeNode"` // a node was deleted
}

type replicas struct {
	Count int     `json:"count"`
	Pod   podSpec `json:"pod"`
	// TieBreak "first" always picks the first tied node by name, to show that the
	// spread comes from the scores; the default is the scenario's seeded random.
	TieBreak string `json:"tieBreak"`
}

type nodeSpec struct {
	Name          string            `json:"name"`
	CPU           string            `json:"cpu"`
	Memory        string            `json:"memory"`
	Pods          int64             `json:"pods"`
	Labels        map[string]string `json:"labels"`
	Unschedulable bool              `json:"unschedulable"`
	NotReady      bool              `json:"notReady"`
}

type serviceSpec struct {
	Name     string            `json:"name"`
	Selector map[string]string `json:"selector"`
}

type podSpec struct {
	Name         string            `json:"name"`
	Node         string            `json:"node"`
	CPU          string            `json:"cpu"`
	Memory       string            `json:"memory"`
	Labels       map[string]string `json:"labels"`
	NodeSelector map[string]string `json:"nodeSelector"`
	HostPorts    []int32           `json:"hostPorts"`
	GCEPD        []string          `json:"gcePD"` // name, or name:ro
	EBS          []string          `json:"ebs"`
}

func (s nodeSpec) obj() *corev1.Node {
	b := st.NewNode(s.Name)
	if s.CPU != "" {
		b.CPU(s.CPU)
	}
	if s.Memory != "" {
		b.Mem(s.Memory)
	}
	if s.Pods != 0 {
		b.Pods(s.Pods)
	}
	if s.Unschedulable {
		b.Unschedulable()
	}
	if s.NotReady {
		b.NotReady()
	}
	n := b.Obj()
	n.Labels = s.Labels
	return n
}

func (s podSpec) obj() *corev1.Pod {
	b := st.NewPod(s.Name).Node(s.Node)
	if s.CPU != "" {
		b.CPU(s.CPU)
	}
	if s.Memory != "" {
		b.Mem(s.Memory)
	}
	for _, p := range s.HostPorts {
		b.HostPort(p)
	}
	for _, d := range s.GCEPD {
		name, ro := strings.CutSuffix(d, ":ro")
		b.GCEPD(name, ro)
	}
	for _, v := range s.EBS {
		b.EBS(v, false)
	}
	p := b.Obj()
	p.Labels, p.Spec.NodeSelector = s.Labels, s.NodeSelector
	return p
}

func TestScenarios(t *testing.T) {
	golden.Scenarios(t, "testdata/scenarios", ".golden", func(t *testing.T, sc scenario) []byte {
		return []byte(run(t, sc))
	})
}

func run(t *testing.T, sc scenario) string {
	policy := DefaultPolicy()
	if len(sc.Policy) > 0 {
		var err error
		if policy, err = ParsePolicy(sc.Policy); err != nil {
			t.Fatal(err)
		}
	}
	c := NewCache()
	for _, n := range sc.Nodes {
		c.SetNode(n.obj())
	}
	for _, s := range sc.Services {
		c.SetService(st.NewService(s.Name, flatten(s.Selector)...))
	}
	for _, s := range sc.Controllers {
		rc := &corev1.ReplicationController{}
		rc.Name, rc.Namespace, rc.Spec.Selector = s.Name, "default", s.Selector
		c.SetController(rc)
	}
	for _, p := range sc.Pods {
		c.SetPod(p.obj())
	}
	r := rand.New(rand.NewSource(sc.Seed))
	specs := map[string]podSpec{}
	var out bytes.Buffer
	for _, s := range sc.Steps {
		switch {
		case s.Schedule != nil:
			pod := s.Schedule.obj()
			d := c.Schedule(pod, &policy, r.Intn)
			writeDecision(&out, d)
			if d.Node != "" {
				if err := c.Assume(pod, d.Node, t0); err != nil {
					t.Fatal(err)
				}
				bound := *s.Schedule
				bound.Node = d.Node
				specs[bound.Name] = bound
			}
		case s.Replicas != nil:
			tieBreak := r.Intn
			if s.Replicas.TieBreak == "first" {
				tieBreak = func(int) int { return 0 }
			}
			for i := 0; i < s.Replicas.Count; i++ {
				spec := s.Replicas.Pod
				spec.Name = fmt.Sprintf("%s-%d", spec.Name, i)
				pod := spec.obj()
				d := c.Schedule(pod, &policy, tieBreak)
				if d.Node == "" {
					fmt.Fprintf(&out, "schedule %s -> none: %s\n", d.Pod, FailedSchedulingMessage(d))
					continue
				}
				if err := c.Assume(pod, d.Node, t0); err != nil {
					t.Fatal(err)
				}
			}
			writeSpread(&out, c, s.Replicas)
		case s.Forget != "":
			c.Forget("default/" + s.Forget)
			fmt.Fprintf(&out, "forget default/%s\n", s.Forget)
		case s.Bound != "":
			c.SetPod(specs[s.Bound].obj())
			fmt.Fprintf(&out, "bound default/%s to %s\n", s.Bound, specs[s.Bound].Node)
		case s.Delete != "":
			c.DeletePod("default/" + s.Delete)
			fmt.Fprintf(&out, "delete default/%s\n", s.Delete)
		case s.SetNode != nil:
			c.SetNode(s.SetNode.obj())
			fmt.Fprintf(&out, "set node %s\n", s.SetNode.Name)
		case s.RemoveNode != "":
			c.RemoveNode(s.RemoveNode)
			fmt.Fprintf(&out, "remove node %s\n", s.RemoveNode)
		default:
			t.Fatalf("empty step")
		}
	}
	return out.String()
}

// writeSpread writes the pods per node after a replicas step, and max - min.
func writeSpread(out *bytes.Buffer, c *Cache, rs *replicas) {
	lo, hi := -1, 0
	fmt.Fprintf(out, "replicas %s x%d:", rs.Pod.Name, rs.Count)
	for _, n := range c.Nodes() {
		k := n.NumPods()
		fmt.Fprintf(out, " %s=%d", n.Name(), k)
		if lo < 0 || k < lo {
			lo = k
		}
		hi = max(hi, k)
	}
	fmt.Fprintf(out, "\n  pods per node %d..%d, max - min = %d\n", lo, hi, hi-lo)
}

// score prints a score with at most three decimals.
func score(f float64) string { return strconv.FormatFloat(math.Round(f*1000)/1000, 'f', -1, 64) }

func writeDecision(out *bytes.Buffer, d Decision) {
	if d.Node == "" {
		fmt.Fprintf(out, "schedule %s -> none: %s\n", d.Pod, FailedSchedulingMessage(d))
		return
	}
	fmt.Fprintf(out, "schedule %s -> %s (score %s, %d tied, %d/%d feasible)\n", d.Pod, d.Node, score(d.Score), d.Ties, d.Feasible, d.Nodes)
	for _, b := range d.Top {
		parts := make([]string, len(b.Scores))
		for i, s := range b.Scores {
			parts[i] = fmt.Sprintf("%s %dx%s", s.Name, s.Weight, score(s.Score))
		}
		fmt.Fprintf(out, "  %s %s: %s\n", b.Node, score(b.Score), strings.Join(parts, ", "))
	}
	if len(d.Reasons) > 0 {
		fmt.Fprintf(out, "  rejected: %s\n", strings.TrimPrefix(FailedSchedulingMessage(d), fmt.Sprintf("%d/%d nodes are available: ", d.Feasible, d.Nodes)))
	}
}

func flatten(m map[string]string) []string {
	var kv []string
	for k, v := range m {
		kv = append(kv, k, v)
	}
	return kv
}
