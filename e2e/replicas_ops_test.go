package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The operations of master replicas (issue 13): a replica far behind rejoins by
// snapshot install; members join and leave; `up --masters 3`.

// createN creates n pods (no scheduler takes them) named prefix-<i> from `clients`
// goroutines spread over the targets, retrying a name elsewhere until it exists.
func createN(t testing.TB, targets []*Replica, n, clients int, prefix string) {
	t.Helper()
	hc := rawHTTP(30 * time.Second)
	var next atomic.Int64
	var failed atomic.Int64
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > int64(n) {
					return
				}
				p := replicaPod(fmt.Sprintf("%s-%05d", prefix, i))
				p.Spec.SchedulerName = "none"
				body, _ := json.Marshal(p)
				for attempt := 0; ; attempt++ {
					err := doJSON(hc, http.MethodPost, targets[(c+attempt)%len(targets)].URL+"/api/v1/namespaces/default/pods", body, nil)
					if err == nil || isStatus(err, http.StatusConflict) {
						break
					}
					if attempt > 50 {
						failed.Add(1)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	if f := failed.Load(); f > 0 {
		t.Fatalf("%d clients gave up creating pods", f)
	}
}

// countLocal counts the pods named prefix-* in the replica's own state.
func countLocal(hc *http.Client, r *Replica, prefix string) (int, error) {
	s, err := localPodState(hc, r)
	if err != nil {
		return 0, err
	}
	n := 0
	for name := range s {
		if strings.HasPrefix(name, prefix+"-") {
			n++
		}
	}
	return n, nil
}

// TestReplicasSnapshotRejoin stops a follower while 30,000 pods are written with
// frequent snapshots and a short log: restarted, it catches up by snapshot install
// and serves every pod from its own state.
func TestReplicasSnapshotRejoin(t *testing.T) {
	rs := StartReplicas(t, 3, "--snapshot-count", "256", "--trailing-logs", "64", "--snapshot-interval", "1s")
	leader := Leader(t, rs)
	var victim *Replica
	var others []*Replica
	for _, r := range rs {
		if r != leader && victim == nil {
			victim = r
		} else {
			others = append(others, r)
		}
	}
	victim.Kill()
	const n = 30000
	createN(t, others, n, 64, "snap")
	victim.Restart(t)
	victim.WaitReady(t, 3*time.Minute)
	hc := rawHTTP(60 * time.Second)
	Eventually(t, 3*time.Minute, victim.Name+" serves every pod", func() error {
		got, err := countLocal(hc, victim, "snap")
		if err != nil {
			return err
		}
		if got != n {
			return fmt.Errorf("%d pods of %d", got, n)
		}
		return nil
	})
	if !strings.Contains(victim.Logs(), "restored from a raft snapshot") {
		t.Errorf("%s caught up without a snapshot install", victim.Name)
	}
}

// memberRows runs `kubeactor members -o wide` and returns name -> role.
func memberRows(t testing.TB, via *Replica, servers string) (map[string]string, error) {
	t.Helper()
	out := via.runClient(Binary(t), "", []string{"members", "--server", servers, "-o", "wide"})
	if out.Err != nil {
		return nil, fmt.Errorf("members: %v: %s", out.Err, out.Stderr)
	}
	rows := map[string]string{}
	lines := strings.Split(strings.TrimSpace(out.Stdout), "\n")
	for _, line := range lines[1:] {
		if f := strings.Fields(line); len(f) > 3 {
			rows[f[0]] = f[3]
		}
	}
	return rows, nil
}

// TestReplicasJoinAndRemove adds a fourth replica with --join and removes one with
// `kubeactor members remove`; the cluster keeps accepting writes.
func TestReplicasJoinAndRemove(t *testing.T) {
	rs := StartReplicas(t, 3)
	m4 := &Replica{Name: "m4", PeerAddress: freeLoopbackAddr(t)}
	m4.args = []string{"--name", m4.Name, "--peer-address", m4.PeerAddress, "--join", "http://" + rs[0].PeerAddress, "--dns-port", "0"}
	m4.Restart(t)
	m4.WaitReady(t, 2*time.Minute)
	all := append(append([]*Replica{}, rs...), m4)

	Eventually(t, 60*time.Second, "m4 among the members", func() error {
		rows, err := memberRows(t, rs[1], ReplicaURLs(all))
		if err != nil {
			return err
		}
		if len(rows) != 4 || rows["m4"] != "follower" {
			return fmt.Errorf("members %v", rows)
		}
		return nil
	})
	cs := replicaClient(t, m4)
	list, err := cs.CoreV1().ComponentStatuses().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range list.Items {
		names = append(names, c.Name)
	}
	if !strings.Contains(strings.Join(names, ","), "replica-m4") {
		t.Errorf("componentstatuses %v: no replica-m4", names)
	}
	if out := rs[0].Kubectl("", "get", "componentstatuses"); out.Err != nil || !strings.Contains(out.Stdout, "replica-m4") {
		t.Errorf("kubectl get componentstatuses: %v\n%s%s", out.Err, out.Stdout, out.Stderr)
	}
	// Writes through the new replica.
	createN(t, []*Replica{m4}, 20, 4, "joined")

	// Remove a follower other than m4.
	leader := Leader(t, all)
	var gone *Replica
	for _, r := range rs {
		if r != leader {
			gone = r
			break
		}
	}
	out := m4.runClient(Binary(t), "", []string{"members", "remove", gone.Name, "--server", ReplicaURLs(all)})
	if out.Err != nil {
		t.Fatalf("members remove %s: %v\n%s%s", gone.Name, out.Err, out.Stdout, out.Stderr)
	}
	var rest []*Replica
	for _, r := range all {
		if r != gone {
			rest = append(rest, r)
		}
	}
	Eventually(t, 60*time.Second, gone.Name+" gone from the members", func() error {
		rows, err := memberRows(t, rest[0], ReplicaURLs(rest))
		if err != nil {
			return err
		}
		if _, there := rows[gone.Name]; there || len(rows) != 3 {
			return fmt.Errorf("members %v", rows)
		}
		return nil
	})
	createN(t, rest, 30, 6, "after-remove")
	hc := rawHTTP(30 * time.Second)
	for _, r := range rest {
		Eventually(t, 60*time.Second, r.Name+" lists the writes", func() error {
			n, err := countLocal(hc, r, "after-remove")
			if err != nil {
				return err
			}
			if n != 30 {
				return fmt.Errorf("%d of 30", n)
			}
			return nil
		})
	}
}

// TestUpMasters runs `kubeactor up --masters 3 --simulate 1`: it prints three API
// addresses, and each lists the simulated node.
func TestUpMasters(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, Binary(t), "up", "--masters", "3", "--simulate", "1", "--data-dir", t.TempDir(),
		"--insecure-port", "0", "--secure-port", "0", "--bind-address", "127.0.0.1", "--dns-port", "0", "--log-format", "json")
	out := &Background{}
	logs := &Background{}
	cmd.Stdout, cmd.Stderr = out, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("stdout:\n%s\nlog:\n%s", out.Output(), logs.Output())
		}
	})
	api := regexp.MustCompile(`(?m)^\s+(m\d): API at (http://\S+),`)
	var urls []string
	Eventually(t, 2*time.Minute, "three addresses printed", func() error {
		m := api.FindAllStringSubmatch(out.Output(), -1)
		if len(m) != 3 {
			return fmt.Errorf("%d addresses printed", len(m))
		}
		urls = urls[:0]
		for _, s := range m {
			urls = append(urls, s[2])
		}
		return nil
	})
	for _, u := range urls {
		cs := replicaClient(t, &Replica{Server: &Server{URL: u}})
		Eventually(t, 2*time.Minute, "the node listed by "+u, func() error {
			nodes, err := cs.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
			if err != nil {
				return err
			}
			if len(nodes.Items) != 1 {
				return fmt.Errorf("%d nodes", len(nodes.Items))
			}
			for _, c := range nodes.Items[0].Status.Conditions {
				if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
					return nil
				}
			}
			return errors.New("the node is not ready")
		})
	}
}
