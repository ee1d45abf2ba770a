package podsync

import (
	"bytes"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubeactor/kubeactor/internal/golden"
	"github.com/kubeactor/kubeactor/nodeagent/runtime"
)

// scenario is one testdata file: a pod, what the engine holds for it, and the
// agent's inputs at a time.
type scenario struct {
	Now            time.Time                               `json:"now"`
	Pod            *corev1.Pod                             `json:"pod"`
	Containers     []engineContainer                       `json:"containers,omitempty"`
	LivenessFailed []string                                `json:"livenessFailed,omitempty"`
	Backoff        Backoff                                 `json:"backoff,omitempty"` // by container name
	HostIP         string                                  `json:"hostIP,omitempty"`
	Ready          map[string]bool                         `json:"ready,omitempty"`
	Waiting        map[string]corev1.ContainerStateWaiting `json:"waiting,omitempty"`
}

// engineContainer is a compact runtime.Container of the scenario's pod.
type engineContainer struct {
	Name         string        `json:"name"` // pod-level name, "POD" for the sandbox
	ID           string        `json:"id"`
	State        runtime.State `json:"state"`
	Created      time.Time     `json:"created"`
	Started      time.Time     `json:"started,omitzero"`
	Finished     time.Time     `json:"finished,omitzero"`
	ExitCode     int           `json:"exitCode,omitempty"`
	OOMKilled    bool          `json:"oomKilled,omitempty"`
	Error        string        `json:"error,omitempty"`
	RestartCount int           `json:"restartCount,omitempty"`
	IP           string        `json:"ip,omitempty"`
	// Hash is "" for the current spec's hash, else the hash it was created with.
	Hash string `json:"hash,omitempty"`
}

func (e engineContainer) container(pod *corev1.Pod) runtime.Container {
	hash, image := e.Hash, "pause"
	if e.Name == InfraName && hash == "" {
		hash = SandboxHash(pod)
	}
	for i := range pod.Spec.Containers {
		if c := &pod.Spec.Containers[i]; c.Name == e.Name {
			image = c.Image
			if hash == "" {
				hash = HashContainer(c)
			}
		}
	}
	return runtime.Container{
		ID:         e.ID,
		Name:       ContainerName(pod, e.Name, hash, "0000000"+strconv.Itoa(e.RestartCount%10)),
		Image:      image,
		ImageID:    "sha256:" + image,
		Labels:     Labels(pod, "node-1", e.Name, hash, e.RestartCount),
		State:      e.State,
		CreatedAt:  e.Created,
		StartedAt:  e.Started,
		FinishedAt: e.Finished,
		ExitCode:   e.ExitCode,
		OOMKilled:  e.OOMKilled,
		Error:      e.Error,
		IP:         e.IP,
	}
}

// result is what a scenario's golden file holds.
type result struct {
	Plan   Plan             `json:"plan"`
	Status corev1.PodStatus `json:"status"`
}

// TestScenarios runs testdata/NAME.yaml through ComputePlan, then ComputeStatus with
// the plan's waiting reasons added to the scenario's, and compares both with
// testdata/NAME.golden.yaml (rewritten with -rewrite).
func TestScenarios(t *testing.T) {
	golden.Scenarios(t, "testdata", ".golden.yaml", func(t *testing.T, sc scenario) []byte {
		return golden.YAML(t, run(t, sc))
	})
}

func run(t *testing.T, sc scenario) result {
	obs := Observed{}
	for _, e := range sc.Containers {
		obs.Containers = append(obs.Containers, e.container(sc.Pod))
	}
	failed := map[string]bool{}
	for _, n := range sc.LivenessFailed {
		failed[n] = true
	}
	backoff := Backoff{}
	for name, e := range sc.Backoff {
		for i := range sc.Pod.Spec.Containers {
			if c := &sc.Pod.Spec.Containers[i]; c.Name == name {
				backoff[BackoffKey(name, HashContainer(c))] = e
			}
		}
	}
	before := sc.Pod.DeepCopy()
	plan := ComputePlan(sc.Pod, obs, failed, backoff, sc.Now)
	checkPlan(t, sc.Pod, plan)
	in := StatusInput{HostIP: sc.HostIP, Ready: sc.Ready, Waiting: map[string]corev1.ContainerStateWaiting{}}
	for k, w := range sc.Waiting {
		in.Waiting[k] = w
	}
	for k, w := range plan.Waiting {
		in.Waiting[k] = w
	}
	st := ComputeStatus(sc.Pod, obs, in, sc.Now)
	if !equalYAML(before, sc.Pod) {
		t.Error("ComputePlan or ComputeStatus modified the pod")
	}
	return result{Plan: plan, Status: st}
}

func equalYAML(a, b any) bool {
	x, _ := yaml.Marshal(a)
	y, _ := yaml.Marshal(b)
	return bytes.Equal(x, y)
}

// checkPlan asserts what holds for every plan.
func checkPlan(t *testing.T, pod *corev1.Pod, p Plan) {
	t.Helper()
	if p.CreateSandbox && !p.KillPod {
		t.Error("CreateSandbox without KillPod")
	}
	if p.KillPod && len(p.Kill) > 0 {
		t.Error("Kill entries beside KillPod")
	}
	if len(p.Start) > 0 && p.KillPod && !p.CreateSandbox {
		t.Error("starts without a sandbox")
	}
	for _, s := range p.Start {
		if s.Index < 0 || s.Index >= len(pod.Spec.Containers) || pod.Spec.Containers[s.Index].Name != s.Name {
			t.Errorf("start %+v does not match the spec", s)
		}
		if _, ok := p.Waiting[s.Name]; ok {
			t.Errorf("%s both started and waiting", s.Name)
		}
	}
	if (p.RequeueAfter > 0) != (len(p.Waiting) > 0) {
		t.Errorf("requeue %v with %d waiting", p.RequeueAfter, len(p.Waiting))
	}
}
