package proxy

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// manyServices builds n services of one port with perService endpoints each.
func manyServices(n, perService int) ([]corev1.Service, []corev1.Endpoints) {
	svcs := make([]corev1.Service, n)
	eps := make([]corev1.Endpoints, n)
	for i := range n {
		name := fmt.Sprintf("svc-%04d", i)
		svcs[i] = newSvc("bench", name, fmt.Sprintf("10.254.%d.%d", i/250, i%250+1)).port("http", 80).obj()
		ips := make([]string, perService)
		for k := range ips {
			ips[k] = fmt.Sprintf("10.%d.%d.%d", 10+k, i/250, i%250+1)
		}
		eps[i] = newEps("bench", name, ips, map[string]int32{"http": 8080})
	}
	return svcs, eps
}

// BenchmarkSync1000Services10Endpoints measures the rule computation for 1,000
// services of 10 endpoints each (1,000 KUBE-SVC chains of 20 rules each, no KUBE-SEP
// chain as no service has ClientIP affinity), and, in
// the test's network namespace with Run's default applier (iptables-restore from
// PATH), a sync (computation and apply): the first into empty tables, again with
// nothing changed, and after one service's endpoints changed. Run it with
// -benchtime 1x: each iteration starts from empty tables.
func BenchmarkSync1000Services10Endpoints(b *testing.B) {
	svcs, eps := manyServices(1000, 10)
	node := NodeInfo{Name: "node-1", IP: testNodeIP, ClusterCIDR: "10.1.0.0/16"}
	b.Run("compute", func(b *testing.B) {
		rules, chains := 0, 0
		for b.Loop() {
			rs := IPTablesRules(svcs, eps, node)
			rules, chains = 0, len(rs.Chains)
			for _, c := range rs.Chains {
				rules += len(c.Rules)
			}
		}
		b.ReportMetric(float64(rules), "rules")
		b.ReportMetric(float64(chains), "chains")
	})
	b.Run("apply", func(b *testing.B) {
		needNetns(b)
		changedEps := append([]corev1.Endpoints(nil), eps...)
		changedEps[500] = newEps("bench", "svc-0500", []string{"10.9.9.9", "10.9.9.10"}, map[string]int32{"http": 8080})
		var first, noop, one, restart time.Duration
		for b.Loop() {
			b.StopTimer()
			resetTables(b)
			b.StartTimer()
			a, err := NewIPTablesApplier(Config{})
			if err != nil {
				b.Fatal(err)
			}
			if a.restore == "" {
				b.Fatal("no iptables-restore in PATH")
			}
			sync := func(a *Applier, eps []corev1.Endpoints, wantChanged bool) time.Duration {
				t0 := time.Now()
				st, err := a.Apply(IPTablesRules(svcs, eps, node))
				d := time.Since(t0)
				if err != nil {
					b.Fatal(err)
				}
				if st.Changed() != wantChanged {
					b.Fatalf("changed = %v (%+v), want %v", st.Changed(), st, wantChanged)
				}
				return d
			}
			first = sync(a, eps, true)
			noop = sync(a, eps, false)
			one = sync(a, changedEps, true)
			// A restarted agent: reads the kernel once and writes nothing.
			b2, err := NewIPTablesApplier(Config{})
			if err != nil {
				b.Fatal(err)
			}
			restart = sync(b2, changedEps, false)
		}
		b.ReportMetric(float64(first.Milliseconds()), "ms-first-sync")
		b.ReportMetric(float64(noop.Milliseconds()), "ms-noop-sync")
		b.ReportMetric(float64(one.Milliseconds()), "ms-one-change")
		b.ReportMetric(float64(restart.Milliseconds()), "ms-restart-noop-sync")
	})
}
