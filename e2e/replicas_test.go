package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/kubeactor/kubeactor/gateway"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Master replicas (issue 13): three `kubeactor server` processes on loopback sharing
// one Raft-replicated store. These tests skip while the store refuses replication.

// replicaClient is a client of one replica, without client-side retries of its own.
func replicaClient(t testing.TB, r *Replica) kubernetes.Interface {
	t.Helper()
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: r.URL, QPS: -1, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// replicaPod is a small pod for the write tests (no node: it stays pending).
func replicaPod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"test": "replicas"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "kubeactor/pause"}}},
	}
}

// podState is what the lists compare: every pod's name, uid and resourceVersion.
func podState(t testing.TB, cs kubernetes.Interface, opts metav1.ListOptions) (map[string]string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	list, err := cs.CoreV1().Pods("default").List(ctx, opts)
	if err != nil {
		return nil, "", err
	}
	out := make(map[string]string, len(list.Items))
	for _, p := range list.Items {
		out[p.Name] = string(p.UID) + "@" + p.ResourceVersion
	}
	return out, list.ResourceVersion, nil
}

func sameState(a, b map[string]string) error {
	if len(a) != len(b) {
		return fmt.Errorf("%d pods vs %d", len(a), len(b))
	}
	for k, v := range a {
		if b[k] != v {
			return fmt.Errorf("pod %s: %q vs %q", k, v, b[k])
		}
	}
	return nil
}

func TestReplicas(t *testing.T) {
	rs := StartReplicas(t, 3)
	clients := make([]kubernetes.Interface, len(rs))
	for i, r := range rs {
		clients[i] = replicaClient(t, r)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	t.Run("create through each, list from each", func(t *testing.T) {
		for i, cs := range clients {
			for j := range 5 {
				if _, err := cs.CoreV1().Pods("default").Create(ctx, replicaPod(fmt.Sprintf("via-%s-%d", rs[i].Name, j)), metav1.CreateOptions{}); err != nil {
					t.Fatalf("create through %s: %v", rs[i].Name, err)
				}
			}
		}
		// Linearizable reads: every replica lists every acknowledged write at once.
		var first map[string]string
		for i, cs := range clients {
			got, _, err := podState(t, cs, metav1.ListOptions{})
			if err != nil {
				t.Fatalf("list from %s: %v", rs[i].Name, err)
			}
			if len(got) != 15 {
				t.Errorf("%s lists %d pods, want 15", rs[i].Name, len(got))
			}
			if first == nil {
				first = got
			} else if err := sameState(first, got); err != nil {
				t.Errorf("%s lists differently: %v", rs[i].Name, err)
			}
		}
	})

	t.Run("services through every replica at once get distinct addresses", func(t *testing.T) {
		// The services are spread over the replicas, each allocating for its own;
		// the store's claims keep any two from holding one IP or node port.
		svc := func(name, ip string) *corev1.Service {
			return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.ServiceSpec{
				Type: corev1.ServiceTypeNodePort, ClusterIP: ip, Selector: map[string]string{"app": name},
				Ports: []corev1.ServicePort{{Port: 80}}}}
		}
		var wg sync.WaitGroup
		errs := make(chan error, 12)
		for i := range 12 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := clients[i%3].CoreV1().Services("default").Create(ctx, svc(fmt.Sprintf("spread-%d", i), ""), metav1.CreateOptions{})
				errs <- err
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("create service: %v", err)
			}
		}
		seen := map[string]string{}
		for i, cs := range clients {
			list, err := cs.CoreV1().Services("default").List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatalf("list services from %s: %v", rs[i].Name, err)
			}
			for _, s := range list.Items {
				for _, v := range []string{"ip " + s.Spec.ClusterIP, fmt.Sprintf("port %d", s.Spec.Ports[0].NodePort)} {
					if other, dup := seen[v]; dup && other != s.Name {
						t.Errorf("%s held by %s and %s", v, other, s.Name)
					}
					seen[v] = s.Name
				}
			}
		}
		// One chosen cluster IP asked for through two replicas at once: one 201, one 422.
		results := make(chan error, 2)
		for i := range 2 {
			go func() {
				_, err := clients[i].CoreV1().Services("default").Create(ctx, svc(fmt.Sprintf("chosen-%d", i), "10.254.99.99"), metav1.CreateOptions{})
				results <- err
			}()
		}
		var created, invalid int
		for range 2 {
			switch err := <-results; {
			case err == nil:
				created++
			case apierrors.IsInvalid(err):
				invalid++
			default:
				t.Errorf("create with a chosen IP: %v", err)
			}
		}
		if created != 1 || invalid != 1 {
			t.Fatalf("one IP asked for twice: %d created, %d refused with 422; want 1 and 1", created, invalid)
		}
	})

	t.Run("a watch resumes on another replica", func(t *testing.T) {
		_, rv, err := podState(t, clients[0], metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		const n = 20
		names := make([]string, n)
		for i := range n {
			names[i] = fmt.Sprintf("watched-%02d", i)
			if _, err := clients[i%3].CoreV1().Pods("default").Create(ctx, replicaPod(names[i]), metav1.CreateOptions{}); err != nil {
				t.Fatalf("create %s: %v", names[i], err)
			}
		}
		var seen []string
		last := rv
		// Half the events on m1, then the rest on m2 from the last resourceVersion seen.
		for _, part := range []struct {
			cs   kubernetes.Interface
			take int
		}{{clients[0], n / 2}, {clients[1], n - n/2}} {
			w, err := part.cs.CoreV1().Pods("default").Watch(ctx, metav1.ListOptions{ResourceVersion: last, LabelSelector: "test=replicas"})
			if err != nil {
				t.Fatalf("watch from %s: %v", last, err)
			}
			for got := 0; got < part.take; {
				select {
				case ev, ok := <-w.ResultChan():
					if !ok {
						t.Fatalf("watch ended after %v", seen)
					}
					p, isPod := ev.Object.(*corev1.Pod)
					if !isPod || ev.Type != watch.Added {
						t.Fatalf("unexpected event %s %T", ev.Type, ev.Object)
					}
					seen, last = append(seen, p.Name), p.ResourceVersion
					got++
				case <-time.After(30 * time.Second):
					t.Fatalf("no event within 30s; seen %v", seen)
				}
			}
			w.Stop()
		}
		if strings.Join(seen, ",") != strings.Join(names, ",") {
			t.Errorf("events %v, want each creation once, in order: %v", seen, names)
		}
	})

	t.Run("kill -9 the leader under write load", func(t *testing.T) {
		leader := Leader(t, rs)
		var (
			mu    sync.Mutex
			acked = map[string]string{} // name -> resourceVersion of the 2xx answer
			rvs   = map[string]string{} // resourceVersion -> name
			dupRV []string
		)
		var count atomic.Int64
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for w := range 64 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				target := w % len(rs)
				for i := 0; ; i++ {
					name := fmt.Sprintf("load-%02d-%05d", w, i)
					for {
						select {
						case <-stop:
							return
						default:
						}
						p, err := clients[target].CoreV1().Pods("default").Create(ctx, replicaPod(name), metav1.CreateOptions{})
						if err == nil {
							mu.Lock()
							acked[name] = p.ResourceVersion
							if other, dup := rvs[p.ResourceVersion]; dup {
								dupRV = append(dupRV, other+"/"+name)
							}
							rvs[p.ResourceVersion] = name
							mu.Unlock()
							count.Add(1)
							break
						}
						if apierrors.IsAlreadyExists(err) {
							break // an earlier attempt was applied after all, its answer lost: not a 2xx
						}
						target = (target + 1) % len(rs) // retry elsewhere (the killed one refuses)
					}
				}
			}()
		}
		Eventually(t, 60*time.Second, "writes before the kill", func() error {
			if n := count.Load(); n < 300 {
				return fmt.Errorf("%d acknowledged", n)
			}
			return nil
		})
		leader.Kill()
		atKill := count.Load()
		Eventually(t, 90*time.Second, "writes after the kill", func() error {
			if n := count.Load() - atKill; n < 300 {
				return fmt.Errorf("%d acknowledged since the kill", n)
			}
			return nil
		})
		close(stop)
		wg.Wait()

		var survivors []kubernetes.Interface
		var names []string
		for i, r := range rs {
			if r != leader {
				survivors, names = append(survivors, clients[i]), append(names, r.Name)
			}
		}
		var a, b map[string]string
		Eventually(t, 60*time.Second, "survivors agree", func() error {
			var err error
			if a, _, err = podState(t, survivors[0], metav1.ListOptions{}); err != nil {
				return err
			}
			if b, _, err = podState(t, survivors[1], metav1.ListOptions{}); err != nil {
				return err
			}
			return sameState(a, b)
		})
		mu.Lock()
		defer mu.Unlock()
		if len(dupRV) > 0 {
			t.Errorf("resourceVersions answered twice: %v", dupRV)
		}
		missing := 0
		for name, rv := range acked {
			for i, state := range []map[string]string{a, b} {
				got, ok := state[name]
				if !ok || !strings.HasSuffix(got, "@"+rv) {
					missing++
					if missing < 10 {
						t.Errorf("acknowledged %s at %s is %q on %s", name, rv, got, names[i])
					}
				}
			}
		}
		if missing > 0 {
			t.Errorf("%d acknowledged writes missing or changed", missing)
		}
		seen := map[string]string{}
		for name, v := range a {
			rv := v[strings.IndexByte(v, '@')+1:]
			if other, dup := seen[rv]; dup {
				t.Errorf("resourceVersion %s on both %s and %s", rv, other, name)
			}
			seen[rv] = name
		}
		t.Logf("%d writes acknowledged (%d after the kill of %s); survivors list %d pods", len(acked), int64(len(acked))-atKill, leader.Name, len(a))
	})
}

// TestReplicasRCSurvivesLeaderKill is issue 13's "controllers survive": an RC scaled
// from 0 to 300 on simulated nodes while the leader is killed ends with exactly 300
// pods, all bound, and no pod was created on the way beyond those 300 (a watch on a
// surviving replica sees every create). The RC's actor runs on whichever replica its
// name places it (actors/cluster.go): on the leader it is activated again elsewhere,
// on a follower it goes on and reaches the new leader's pod actors; the scheduler
// moves with the leadership and keeps binding.
func TestReplicasRCSurvivesLeaderKill(t *testing.T) {
	rs := StartReplicas(t, 3)
	WaitActorCluster(t, rs)
	startProcess(t, Binary(t), "agent", "--server", ReplicaURLs(rs), "--log-format", "json",
		"--simulate", "3", "--name-prefix", "rep", "--node-status-update-frequency", "1s")
	cs := replicaClient(t, rs[0])
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	Eventually(t, 60*time.Second, "3 nodes", func() error {
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		if len(nodes.Items) != 3 {
			return fmt.Errorf("%d nodes", len(nodes.Items))
		}
		return nil
	})
	zero := int32(0)
	rc := &corev1.ReplicationController{
		ObjectMeta: metav1.ObjectMeta{Name: "survivor"},
		Spec: corev1.ReplicationControllerSpec{Replicas: &zero, Selector: map[string]string{"app": "survivor"},
			Template: &corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "survivor"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "kubeactor/pause"}}},
			}},
	}
	created, err := cs.CoreV1().ReplicationControllers("default").Create(ctx, rc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	leader := Leader(t, rs)
	var other *Replica
	for _, r := range rs {
		if r != leader {
			other = r
			break
		}
	}
	cs = replicaClient(t, other)
	// Every pod create from now on, seen by a replica that survives: a watch from the
	// RC's creation, resumed from the last event seen when the server ends it.
	watchFrom := func(rv string) watch.Interface {
		w, err := cs.CoreV1().Pods("default").Watch(ctx, metav1.ListOptions{LabelSelector: "app=survivor", ResourceVersion: rv})
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	w := watchFrom(created.ResourceVersion)
	defer func() { w.Stop() }()
	Eventually(t, 30*time.Second, "scale to 300", func() error {
		scale, err := cs.CoreV1().ReplicationControllers("default").GetScale(ctx, "survivor", metav1.GetOptions{})
		if err != nil {
			return err
		}
		scale.Spec.Replicas = 300
		_, err = cs.CoreV1().ReplicationControllers("default").UpdateScale(ctx, "survivor", scale, metav1.UpdateOptions{})
		return err
	})
	leader.Kill()
	var last string
	Eventually(t, 180*time.Second, "300 pods, bound, the RC's status saying so", func() error {
		pods, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=survivor"})
		if err != nil {
			return err
		}
		n, bound := 0, 0
		for _, p := range pods.Items {
			if p.DeletionTimestamp == nil {
				n++
				if p.Spec.NodeName != "" {
					bound++
				}
			}
		}
		got, err := cs.CoreV1().ReplicationControllers("default").Get(ctx, "survivor", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if n != 300 || bound != 300 || got.Status.Replicas != 300 {
			return fmt.Errorf("%d pods, %d bound, status.replicas %d", n, bound, got.Status.Replicas)
		}
		// The newest pod write the list shows: the watch has seen every create once it
		// got there (the list's own revision may be a later write of another kind).
		last = "0"
		for _, p := range pods.Items {
			if a, _ := strconv.ParseInt(p.ResourceVersion, 10, 64); a > mustInt(last) {
				last = p.ResourceVersion
			}
		}
		return nil
	})
	// Drain the watch up to the list's revision and count the creates.
	adds := map[string]int{}
	rv, _ := strconv.ParseInt(last, 10, 64)
	seenRV := created.ResourceVersion
	for seen := int64(0); seen < rv; {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				w = watchFrom(seenRV)
				continue
			}
			p, isPod := ev.Object.(*corev1.Pod)
			if !isPod {
				t.Fatalf("watch event %s: %v", ev.Type, ev.Object)
			}
			seenRV = p.ResourceVersion
			seen, _ = strconv.ParseInt(p.ResourceVersion, 10, 64)
			if ev.Type == watch.Added {
				adds[p.Name]++
			}
		case <-ctx.Done():
			t.Fatalf("watch: %v", ctx.Err())
		}
	}
	total := 0
	for _, n := range adds {
		total += n
	}
	if total != 300 || len(adds) != 300 {
		t.Errorf("%d pod creates (%d names) for an RC of 300: pods were created beyond its replicas", total, len(adds))
	}
}

// WaitActorCluster waits until every replica's view of the actor cluster holds all of
// them (the members API's "actors"): until then a replica places the controllers on
// the members it has heard of, and they move when the others appear.
func WaitActorCluster(t testing.TB, rs []*Replica) {
	t.Helper()
	Eventually(t, 30*time.Second, "every replica's actor cluster holds every replica", func() error {
		for _, r := range rs {
			resp, err := http.Get(r.URL + "/kubeactor/v1/members")
			if err != nil {
				return err
			}
			var ml gateway.MemberList
			err = json.NewDecoder(resp.Body).Decode(&ml)
			resp.Body.Close()
			if err != nil {
				return err
			}
			for _, m := range ml.Items {
				if !m.Actors {
					return fmt.Errorf("%s does not count %s in its actor cluster", r.Name, m.Name)
				}
			}
		}
		return nil
	})
}

func mustInt(s string) int64 {
	v, _ := strconv.ParseInt(s, 10, 64)
	return v
}

// TestReplicasMembers lists the replicas with `kubeactor members` through any of them.
func TestReplicasMembers(t *testing.T) {
	rs := StartReplicas(t, 3)
	leader := Leader(t, rs)
	out := rs[1].runClient(Binary(t), "", []string{"members", "--server", ReplicaURLs(rs), "-o", "wide"})
	if out.Err != nil {
		t.Fatalf("members: %v\n%s", out.Err, out.Stderr)
	}
	var rows []string
	for _, line := range strings.Split(strings.TrimSpace(out.Stdout), "\n")[1:] {
		rows = append(rows, strings.Fields(line)[0]+" "+strings.Fields(line)[3])
	}
	sort.Strings(rows)
	want := []string{}
	for _, r := range rs {
		role := "follower"
		if r == leader {
			role = "leader"
		}
		want = append(want, r.Name+" "+role)
	}
	if strings.Join(rows, ",") != strings.Join(want, ",") {
		t.Errorf("members:\n%s\nwant rows %v", out.Stdout, want)
	}
	// componentstatuses: one entry per replica.
	cs := replicaClient(t, rs[2])
	list, err := cs.CoreV1().ComponentStatuses().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range list.Items {
		if strings.HasPrefix(c.Name, "replica-") {
			n++
		}
	}
	if n != 3 {
		t.Errorf("%d replica entries in componentstatuses, want 3", n)
	}
}
