package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Linearizability (issue 13): concurrent reads and compare-and-swap updates (PUT with
// resourceVersion; 409 is a failed swap) on a few Secrets, from clients on every
// replica, through a leader kill and a partition, checked with porcupine.

type casInput struct {
	Read  bool
	Key   string
	RV    string // the swap's expected resourceVersion
	Value string // the swap's new value
}

type casOutput struct {
	Unknown bool   // no answer, or a 5xx: the swap may or may not have happened
	OK      bool   // the swap happened (2xx); for a read: always
	Value   string // a read's value
	RV      string // a read's resourceVersion, a swap's new one
}

// casState is one key's value and resourceVersion; RV "?" after a swap whose outcome
// is unknown (its new resourceVersion was never seen).
type casState struct {
	Value, RV string
}

var casModel = porcupine.NondeterministicModel{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[string][]porcupine.Operation{}
		var keys []string
		for _, op := range history {
			k := op.Input.(casInput).Key
			if _, ok := byKey[k]; !ok {
				keys = append(keys, k)
			}
			byKey[k] = append(byKey[k], op)
		}
		out := make([][]porcupine.Operation, 0, len(keys))
		for _, k := range keys {
			out = append(out, byKey[k])
		}
		return out
	},
	Init: func() []any { return []any{casState{Value: "init", RV: "?"}} },
	Step: func(state, input, output any) []any {
		s, in, out := state.(casState), input.(casInput), output.(casOutput)
		rvMatches := s.RV == in.RV || s.RV == "?"
		switch {
		case in.Read:
			if s.Value == out.Value && (s.RV == out.RV || s.RV == "?") {
				return []any{casState{Value: out.Value, RV: out.RV}}
			}
			return nil
		case out.Unknown:
			// Placed last, a swap that never happened costs nothing: here it happened.
			if !rvMatches {
				return []any{s} // it failed
			}
			if s.RV == "?" {
				return []any{s, casState{Value: in.Value, RV: "?"}}
			}
			return []any{casState{Value: in.Value, RV: "?"}}
		case out.OK:
			if rvMatches {
				return []any{casState{Value: in.Value, RV: out.RV}}
			}
			return nil
		default: // 409
			if s.RV != in.RV {
				return []any{s}
			}
			return nil
		}
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(casInput), output.(casOutput)
		if in.Read {
			return fmt.Sprintf("get(%s) -> %s@%s", in.Key, out.Value, out.RV)
		}
		res := "conflict"
		if out.Unknown {
			res = "unknown"
		} else if out.OK {
			res = "ok @" + out.RV
		}
		return fmt.Sprintf("cas(%s, %s, %s) -> %s", in.Key, in.RV, in.Value, res)
	},
	DescribeState: func(state any) string {
		s := state.(casState)
		return s.Value + "@" + s.RV
	},
}

// casHistory records operations with their call and return times.
type casHistory struct {
	start time.Time
	mu    sync.Mutex
	ops   []porcupine.Operation
	stats map[string]int
}

func (h *casHistory) now() int64 { return int64(time.Since(h.start)) }

func (h *casHistory) add(client int, in casInput, call int64, out casOutput) {
	h.mu.Lock()
	defer h.mu.Unlock()
	ret := h.now()
	kind := "read"
	switch {
	case out.Unknown:
		kind = "cas-unknown"
		ret = -1 // set to the end of the history once it is known
	case !in.Read && out.OK:
		kind = "cas-ok"
	case !in.Read:
		kind = "cas-conflict"
	}
	h.stats[kind]++
	h.ops = append(h.ops, porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret})
}

// secretJSON is the register: a Secret (Kubernetes 1.0 has no ConfigMap) whose
// data holds the value.
func secretJSON(name, value, rv string) []byte {
	cm := corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: rv},
		Data:       map[string][]byte{"v": []byte(value)},
	}
	b, _ := json.Marshal(cm)
	return b
}

func TestReplicasLinearizable(t *testing.T) {
	rs, pn := StartFaultyReplicas(t, 3)
	hc := rawHTTP(5 * time.Second)
	keys := []string{"lin-a", "lin-b", "lin-c"}
	// The clients read the replicas' URLs here: a restart changes one.
	urls := make([]atomic.Value, len(rs))
	for i, r := range rs {
		urls[i].Store(r.URL)
	}
	base := func(r *Replica) string {
		return urls[indexOf(rs, r)].Load().(string) + "/api/v1/namespaces/default/secrets"
	}
	for _, k := range keys {
		Eventually(t, 30*time.Second, "create "+k, func() error {
			err := doJSON(hc, http.MethodPost, base(rs[0]), secretJSON(k, "init", ""), nil)
			if isStatus(err, http.StatusConflict) {
				return nil // an earlier attempt made it
			}
			return err
		})
	}

	h := &casHistory{start: time.Now(), stats: map[string]int{}}
	var stop atomic.Bool
	var wg sync.WaitGroup
	var done atomic.Int64
	const clients = 6
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(c), 13))
			lastRV := map[string]string{}
			for i := 0; !stop.Load(); i++ {
				r := rs[(c+i)%len(rs)] // only its URL, through base
				k := keys[rng.IntN(len(keys))]
				var got corev1.Secret
				if rv, ok := lastRV[k]; !ok || rng.IntN(2) == 0 {
					in := casInput{Read: true, Key: k}
					call := h.now()
					if err := doJSON(hc, http.MethodGet, base(r)+"/"+k, nil, &got); err != nil {
						continue // a read that failed tells nothing: left out
					}
					lastRV[k] = got.ResourceVersion
					h.add(c, in, call, casOutput{OK: true, Value: string(got.Data["v"]), RV: got.ResourceVersion})
				} else {
					in := casInput{Key: k, RV: rv, Value: fmt.Sprintf("c%d-%d", c, i)}
					call := h.now()
					err := doJSON(hc, http.MethodPut, base(r)+"/"+k, secretJSON(k, in.Value, rv), &got)
					switch {
					case err == nil:
						lastRV[k] = got.ResourceVersion
						h.add(c, in, call, casOutput{OK: true, RV: got.ResourceVersion})
					case isStatus(err, http.StatusConflict):
						delete(lastRV, k)
						h.add(c, in, call, casOutput{})
					case errors.Is(err, errUnknown):
						delete(lastRV, k)
						h.add(c, in, call, casOutput{Unknown: true})
					default:
						t.Errorf("cas %s on %s: %v", k, r.Name, err)
						return
					}
				}
				done.Add(1)
			}
		}()
	}
	defer func() { stop.Store(true); wg.Wait() }()
	progress := func(what string, n int64) {
		t.Helper()
		at := done.Load()
		Eventually(t, 120*time.Second, what, func() error {
			if d := done.Load() - at; d < n {
				return fmt.Errorf("%d operations", d)
			}
			return nil
		})
	}

	progress("operations before the faults", 150)
	// A kill -9 of the leader, then its restart.
	leader := Leader(t, rs)
	leader.Kill()
	progress("operations after the kill", 150)
	leader.Restart(t)
	urls[indexOf(rs, leader)].Store(leader.URL)
	leader.WaitReady(t, 90*time.Second)
	progress("operations after the restart", 100)
	// A partition of the (new) leader, then healing.
	leader = Leader(t, rs)
	pn.isolate(indexOf(rs, leader))
	progress("operations during the partition", 150)
	pn.heal()
	leader.WaitReady(t, 90*time.Second)
	progress("operations after healing", 100)
	stop.Store(true)
	wg.Wait()

	end := h.now() + 1
	for i := range h.ops {
		if h.ops[i].Return < 0 {
			h.ops[i].Return = end
		}
	}
	t.Logf("%d operations: %v", len(h.ops), h.stats)
	if h.stats["cas-ok"] == 0 || h.stats["read"] == 0 {
		t.Fatalf("a history without successful swaps or reads proves nothing: %v", h.stats)
	}
	model := casModel.ToModel()
	res, info := porcupine.CheckOperationsVerbose(model, h.ops, 3*time.Minute)
	switch res {
	case porcupine.Ok:
	case porcupine.Unknown:
		t.Errorf("porcupine did not decide within 3 minutes")
	default:
		// Not t.TempDir(): the file must outlive the test to be looked at.
		dir, err := os.MkdirTemp("", "kubeactor-linearizability-")
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "linearizability.html")
		if err := porcupine.VisualizePath(model, info, path); err != nil {
			t.Errorf("visualize: %v", err)
		}
		t.Errorf("the history is not linearizable; visualization: %s", path)
	}
}

// TestCasModel checks the model itself: it accepts a linearizable history and refuses
// a stale read and a lost swap, whatever the unknown swaps did.
func TestCasModel(t *testing.T) {
	op := func(client int, call, ret int64, in casInput, out casOutput) porcupine.Operation {
		return porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret}
	}
	const inf = 1000
	read := func(v, rv string) (casInput, casOutput) {
		return casInput{Read: true, Key: "k"}, casOutput{OK: true, Value: v, RV: rv}
	}
	r1i, r1o := read("init", "1")
	r2i, r2o := read("a", "2")
	stalei, staleo := read("init", "1")
	r3i, r3o := read("b", "7")
	tests := []struct {
		name string
		ops  []porcupine.Operation
		want bool
	}{
		{"swap then read", []porcupine.Operation{
			op(0, 0, 1, r1i, r1o),
			op(0, 2, 3, casInput{Key: "k", RV: "1", Value: "a"}, casOutput{OK: true, RV: "2"}),
			op(1, 4, 5, r2i, r2o),
		}, true},
		{"a stale read after the swap", []porcupine.Operation{
			op(0, 0, 1, r1i, r1o),
			op(0, 2, 3, casInput{Key: "k", RV: "1", Value: "a"}, casOutput{OK: true, RV: "2"}),
			op(1, 4, 5, stalei, staleo),
		}, false},
		{"two swaps from the same version", []porcupine.Operation{
			op(0, 0, 1, r1i, r1o),
			op(0, 2, 3, casInput{Key: "k", RV: "1", Value: "a"}, casOutput{OK: true, RV: "2"}),
			op(1, 4, 5, casInput{Key: "k", RV: "1", Value: "b"}, casOutput{OK: true, RV: "3"}),
		}, false},
		{"an unknown swap seen later", []porcupine.Operation{
			op(0, 0, 1, r1i, r1o),
			op(0, 2, inf, casInput{Key: "k", RV: "1", Value: "b"}, casOutput{Unknown: true}),
			op(1, 4, 5, r3i, r3o),
		}, true},
		{"an unknown swap never seen", []porcupine.Operation{
			op(0, 0, 1, r1i, r1o),
			op(0, 2, inf, casInput{Key: "k", RV: "1", Value: "b"}, casOutput{Unknown: true}),
			op(1, 4, 5, stalei, staleo),
		}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := porcupine.CheckOperations(casModel.ToModel(), tc.ops); got != tc.want {
				t.Errorf("linearizable %v, want %v", got, tc.want)
			}
		})
	}
}
