package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeactor/kubeactor/gateway"
	"github.com/kubeactor/kubeactor/tracing"
)

// TestTraceAcrossReplicas is issue 15's "trace works against any replica": three
// replicas, RCs of 2 pods on simulated nodes. An RC's actor runs on the replica its
// name places it (its syncs' spans are kept there), the pod creates it asks for run on
// the leader (kept there), so no replica's own store tells the story: `?local=true`
// on a replica that does not run the RC lacks its syncs. `kubeactor trace rc/NAME`
// against a follower and against the leader both answer the merged story: the same
// sync and pod-create span ids, each pod create under a sync of the RC. With a
// replica down, the answer names it as partial and still holds the others' spans.
func TestTraceAcrossReplicas(t *testing.T) {
	rs := StartReplicas(t, 3)
	startProcess(t, Binary(t), "agent", "--server", ReplicaURLs(rs), "--log-format", "json",
		"--simulate", "2", "--name-prefix", "trm", "--node-status-update-frequency", "1s")
	leader := Leader(t, rs)
	cs := replicaClient(t, leader)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	WaitActorCluster(t, rs)
	Eventually(t, 60*time.Second, "2 nodes", func() error {
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		if len(nodes.Items) != 2 {
			return fmt.Errorf("%d nodes", len(nodes.Items))
		}
		return nil
	})

	// Several RCs, so that (almost surely) one is placed on a follower: its story
	// crosses replicas.
	names := []string{"tm-a", "tm-b", "tm-c", "tm-d", "tm-e"}
	two := int32(2)
	for _, name := range names {
		rc := &corev1.ReplicationController{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.ReplicationControllerSpec{Replicas: &two, Selector: map[string]string{"app": name},
				Template: &corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "kubeactor/pause"}}},
				}},
		}
		if _, err := cs.CoreV1().ReplicationControllers("default").Create(ctx, rc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range names {
		Eventually(t, 60*time.Second, "2 pods of "+name+" bound", func() error {
			pods, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=" + name})
			if err != nil {
				return err
			}
			bound := 0
			for _, p := range pods.Items {
				if p.Spec.NodeName != "" {
					bound++
				}
			}
			if bound != 2 {
				return fmt.Errorf("%d of %d pods bound", bound, len(pods.Items))
			}
			return nil
		})
	}

	// The owner of each RC: the one replica whose own spans hold its syncs.
	rcName, owner := "", (*Replica)(nil)
	for _, name := range names {
		var o *Replica
		Eventually(t, 30*time.Second, "the replica that runs "+name, func() error {
			o = nil
			for _, r := range rs {
				h, err := localTraces(r, name)
				if err != nil {
					return err
				}
				if len(spansNamed(h, "replicationcontrollers sync", name)) > 0 {
					if o != nil {
						return fmt.Errorf("both %s and %s hold syncs of %s", o.Name, r.Name, name)
					}
					o = r
				}
			}
			if o == nil {
				return fmt.Errorf("no replica holds a sync of %s", name)
			}
			return nil
		})
		t.Logf("rc %s runs on %s (leader %s)", name, o.Name, leader.Name)
		if rcName == "" || (owner == leader && o != leader) {
			rcName, owner = name, o
		}
	}
	if owner == leader {
		// The placement hashes the names over m1..m3 whoever leads: with these names
		// some RC runs on each of two replicas, so one of them is a follower.
		t.Fatalf("every RC runs on the leader %s: no story crosses replicas (change the RC names)", leader.Name)
	}
	var follower *Replica
	for _, r := range rs {
		if r != leader && (follower == nil || r == owner) {
			follower = r // the owner when it is a follower
		}
	}

	// The owner's own syncs; the replicas that do not run the RC keep none of them.
	ownSyncs := map[string]bool{}
	for _, r := range rs {
		h, err := localTraces(r, rcName)
		if err != nil {
			t.Fatal(err)
		}
		syncs := spansNamed(h, "replicationcontrollers sync", rcName)
		if r == owner {
			for _, n := range syncs {
				ownSyncs[n.SpanID] = true
			}
			continue
		}
		if len(syncs) > 0 {
			t.Errorf("%s does not run %s, yet its own spans hold %d of its syncs", r.Name, rcName, len(syncs))
		}
		if r != leader && len(spansNamed(h, "pods create", rcName)) > 0 {
			t.Errorf("%s neither runs %s nor leads, yet its own spans hold pod creates of it", r.Name, rcName)
		}
	}
	if owner != leader {
		h, err := localTraces(leader, rcName)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(spansNamed(h, "pods create", rcName)); n > 0 {
			t.Errorf("the leader's own history of %s holds %d pod creates: they are under syncs kept on %s", rcName, n, owner.Name)
		}
	}

	// The merged story, from a follower and from the leader: the same span ids, the
	// owner's syncs among them, and both pod creates under a sync.
	var story string
	Eventually(t, 60*time.Second, "the same story of "+rcName+" from "+follower.Name+" and "+leader.Name, func() error {
		var ids [2][]string
		for i, r := range []*Replica{follower, leader} {
			res := r.Kubeactor(t, "", "trace", "rc/"+rcName, "-o", "json")
			if res.Err != nil {
				return fmt.Errorf("trace against %s: %v %s", r.Name, res.Err, res.Stderr)
			}
			var h gateway.TraceHistory
			if err := json.Unmarshal([]byte(res.Stdout), &h); err != nil {
				return fmt.Errorf("trace against %s: %w", r.Name, err)
			}
			if len(h.Partial) > 0 {
				return fmt.Errorf("trace against %s: partial %v", r.Name, h.Partial)
			}
			syncs := spansNamed(h, "replicationcontrollers sync", rcName)
			syncIDs := map[string]bool{}
			for _, n := range syncs {
				syncIDs[n.SpanID] = true
				ids[i] = append(ids[i], "sync "+n.SpanID)
			}
			for id := range ownSyncs {
				if !syncIDs[id] {
					return fmt.Errorf("trace against %s lacks the sync %s kept on %s", r.Name, id, owner.Name)
				}
			}
			pods := map[string]bool{}
			for _, n := range spansNamed(h, "pods create", rcName) {
				ids[i] = append(ids[i], "create "+n.SpanID)
				if syncIDs[n.ParentID] {
					pods[n.Attributes[string(tracing.ObjectKey)]] = true
				}
			}
			if len(pods) < 2 {
				return fmt.Errorf("trace against %s: pod creates under a sync of %s: %v", r.Name, rcName, pods)
			}
			sort.Strings(ids[i])
			story = res.Stdout
		}
		if !slices.Equal(ids[0], ids[1]) {
			return fmt.Errorf("%s answers %v, %s answers %v", follower.Name, ids[0], leader.Name, ids[1])
		}
		return nil
	})
	t.Logf("kubeactor trace rc/%s -o json (merged):\n%s", rcName, story)

	// explain rc/NAME tells the syncs' decisions against every replica; a replica
	// that does not run the RC knows none of them itself.
	for _, r := range rs {
		Eventually(t, 30*time.Second, "explain rc/"+rcName+" against "+r.Name, func() error {
			res := r.Kubeactor(t, "", "explain", "rc/"+rcName, "-o", "json")
			if res.Err != nil {
				return fmt.Errorf("%v %s", res.Err, res.Stderr)
			}
			var x gateway.Explanation
			if err := json.Unmarshal([]byte(res.Stdout), &x); err != nil {
				return err
			}
			if len(x.Syncs) == 0 || len(x.Partial) > 0 {
				return fmt.Errorf("syncs %v, partial %v", x.Syncs, x.Partial)
			}
			if r == owner {
				return nil
			}
			resp, err := http.Get(r.URL + gateway.ExplainPath + "/replicationcontrollers/default/" + rcName + "?local=true")
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			var local gateway.Explanation
			if err := json.NewDecoder(resp.Body).Decode(&local); err != nil {
				return err
			}
			if len(local.Syncs) > 0 {
				t.Errorf("%s does not run %s, yet explains %d syncs from its own spans", r.Name, rcName, len(local.Syncs))
			}
			return nil
		})
	}

	// A replica down: the answer names it and still holds the others' spans.
	var down, asked *Replica
	for _, r := range rs {
		switch {
		case r != leader && r != owner && down == nil:
			down = r
		case r != down && asked == nil && r != leader:
			asked = r
		}
	}
	if asked == nil {
		asked = leader
	}
	down.Kill()
	Eventually(t, 60*time.Second, "a partial story from "+asked.Name+" with "+down.Name+" down", func() error {
		res := asked.Kubeactor(t, "", "trace", "rc/"+rcName, "-o", "json")
		if res.Err != nil {
			return fmt.Errorf("%v %s", res.Err, res.Stderr)
		}
		var h gateway.TraceHistory
		if err := json.Unmarshal([]byte(res.Stdout), &h); err != nil {
			return err
		}
		if !slices.Equal(h.Partial, []string{down.Name}) {
			return fmt.Errorf("partial %v, want [%s]", h.Partial, down.Name)
		}
		if len(spansNamed(h, "replicationcontrollers sync", rcName)) == 0 || len(spansNamed(h, "pods create", rcName)) < 2 {
			return fmt.Errorf("the others' spans missing: %s", res.Stdout)
		}
		return nil
	})
}

// localTraces is replica r's own history of the RC name (?local=true).
func localTraces(r *Replica, name string) (gateway.TraceHistory, error) {
	var h gateway.TraceHistory
	resp, err := http.Get(r.URL + gateway.TracesPath + "/replicationcontrollers/default/" + name + "?local=true")
	if err != nil {
		return h, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return h, err
	}
	if resp.StatusCode != http.StatusOK {
		return h, fmt.Errorf("%s local traces: %s %s", r.Name, resp.Status, body)
	}
	return h, json.Unmarshal(body, &h)
}

// spansNamed is the spans of h called name about the RC rc: a sync of it, or a
// create of one of its pods (named after it).
func spansNamed(h gateway.TraceHistory, name, rc string) []*tracing.Node {
	var out []*tracing.Node
	var walk func(ns []*tracing.Node)
	walk = func(ns []*tracing.Node) {
		for _, n := range ns {
			obj := n.Attributes[string(tracing.ObjectKey)]
			if n.Name == name && (obj == "replicationcontrollers/default/"+rc || strings.HasPrefix(obj, "pods/default/"+rc+"-")) {
				out = append(out, n)
			}
			walk(n.Children)
		}
	}
	for _, tr := range h.Traces {
		walk(tr.Roots)
	}
	return out
}
