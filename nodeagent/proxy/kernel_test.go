package proxy

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/coreos/go-iptables/iptables"
	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// appliers are the two ways of writing chains: one go-iptables call per rule, and
// one iptables-restore per table.
func appliers(t *testing.T) map[string]func() *Applier {
	ipt, err := iptables.New()
	if err != nil {
		t.Fatal(err)
	}
	restore, err := exec.LookPath("iptables-restore")
	if err != nil {
		t.Fatal(err)
	}
	return map[string]func() *Applier{
		"go-iptables":      func() *Applier { return NewApplier(ipt, "") },
		"iptables-restore": func() *Applier { return NewApplier(ipt, restore) },
	}
}

func TestApplyKernel(t *testing.T) {
	needNetns(t)
	node := NodeInfo{Name: "node-1", IP: testNodeIP, ClusterCIDR: "10.1.0.0/16"}
	web := newSvc("default", "web", "10.254.0.10").port("http", 80).nodePort(30080).obj()
	sticky := newSvc("default", "sticky", "10.254.0.11").port("", 80).affinity(0).obj()
	dns := newSvc("kube-system", "dns", "10.254.0.53").udp("dns", 53).port("dns-tcp", 53).obj()
	empty := newSvc("default", "empty", "10.254.0.12").port("", 80).obj()
	eps := []corev1.Endpoints{
		newEps("default", "web", []string{testEp1, testEp2}, map[string]int32{"http": testEpPort}),
		newEps("default", "sticky", []string{testEp1, testEp2, testEpDead}, map[string]int32{"": testEpPort}),
		newEps("kube-system", "dns", []string{testEp1}, map[string]int32{"dns": 53, "dns-tcp": 53}),
	}
	all := IPTablesRules([]corev1.Service{web, sticky, dns, empty}, eps, node)
	noSticky := IPTablesRules([]corev1.Service{web, dns, empty}, eps, node)
	pn := func(ns, name, port string) ServicePortName {
		return ServicePortName{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}, Port: port}
	}
	userspace := UserspaceRules([]corev1.Service{web, sticky}, map[ServicePortName]int{
		pn("default", "web", "http"): 40001, pn("default", "sticky", ""): 40002,
	}, node)
	stickySvc := svcChain(pn("default", "sticky", ""), corev1.ProtocolTCP)

	for name, newApplier := range appliers(t) {
		t.Run(name, func(t *testing.T) {
			resetTables(t)
			foreign := []string{"-p", "tcp", "--dport", "9999", "-j", "ACCEPT"}
			a := newApplier()
			steps := []struct {
				name    string
				applier *Applier
				rs      Ruleset
				before  func(t *testing.T)
				changed bool
				absent  []string // substrings that must not be in iptables-save -t nat
			}{
				{name: "first apply", applier: a, rs: all, changed: true},
				{name: "again is a no-op", applier: a, rs: all, changed: false},
				{name: "restarted applier rewrites nothing", applier: newApplier(), rs: all, changed: false},
				{name: "foreign rule survives, service removed", applier: a, rs: noSticky, changed: true,
					before: func(t *testing.T) {
						ipt, _ := iptables.New()
						if err := ipt.Insert("nat", "PREROUTING", 1, foreign...); err != nil {
							t.Fatal(err)
						}
					},
					absent: []string{stickySvc, `"default/sticky:"`}},
				{name: "chain flushed behind our back is rewritten after forget", applier: a, rs: noSticky, changed: true,
					before: func(t *testing.T) {
						ipt, _ := iptables.New()
						if err := ipt.ClearChain("nat", chainServices); err != nil {
							t.Fatal(err)
						}
						a.Forget()
					}},
				{name: "switch to userspace mode", applier: a, rs: userspace, changed: true,
					absent: []string{"KUBE-SERVICES", "KUBE-SVC-", "KUBE-SEP-", "KUBE-POSTROUTING"}},
				{name: "userspace again is a no-op", applier: newApplier(), rs: userspace, changed: false},
			}
			for _, s := range steps {
				if s.before != nil {
					s.before(t)
				}
				st, err := s.applier.Apply(s.rs)
				if err != nil {
					t.Fatalf("%s: %v", s.name, err)
				}
				if st.Changed() != s.changed {
					t.Errorf("%s: changed = %v (%+v), want %v", s.name, st.Changed(), st, s.changed)
				}
				checkKernel(t, s.name, s.rs)
				nat := iptablesSave(t, "nat")
				for _, x := range s.absent {
					if strings.Contains(nat, x) {
						t.Errorf("%s: %q still in the nat table:\n%s", s.name, x, nat)
					}
				}
				if s.before != nil || strings.Contains(s.name, "mode") {
					if !strings.Contains(nat, "-A PREROUTING -p tcp -m tcp --dport 9999 -j ACCEPT") {
						t.Errorf("%s: the foreign rule is gone:\n%s", s.name, nat)
					}
				}
			}
		})
	}
}

// checkKernel checks that every chain of rs holds exactly its rules and every jump is
// there exactly once.
func checkKernel(t *testing.T, step string, rs Ruleset) {
	t.Helper()
	saved := map[string]string{TableNAT: iptablesSave(t, TableNAT), TableFilter: iptablesSave(t, TableFilter)}
	for _, c := range rs.Chains {
		var got []string
		for _, l := range strings.Split(saved[c.Table], "\n") {
			if strings.HasPrefix(l, "-A "+c.Name+" ") {
				got = append(got, l)
			}
		}
		var want []string
		for _, r := range c.Rules {
			want = append(want, renderRule(c.Name, r))
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: chain %s/%s:\n got %s\nwant %s", step, c.Table, c.Name, strings.Join(got, "\n     "), strings.Join(want, "\n     "))
		}
	}
	for _, j := range rs.Jumps {
		if n := strings.Count(saved[j.Table], renderRule(j.Chain, j.Rule)+"\n"); n != 1 {
			t.Errorf("%s: jump %q present %d times", step, renderRule(j.Chain, j.Rule), n)
		}
	}
}

func TestIPTablesTraffic(t *testing.T) {
	needNetns(t)
	tests := []struct {
		name     string
		affinity bool
	}{
		{name: "spread", affinity: false},
		{name: "client-ip-affinity", affinity: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resetTables(t)
			vip := nextVIP()
			b := newSvc("default", "web", vip).port("http", 80)
			if tt.affinity {
				b = b.affinity(0)
			}
			rs := IPTablesRules([]corev1.Service{b.obj()},
				[]corev1.Endpoints{newEps("default", "web", []string{testEp1, testEp2}, map[string]int32{"http": testEpPort})},
				NodeInfo{Name: "node-1", IP: testNodeIP})
			ipt, err := iptables.New()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := NewApplier(ipt, "").Apply(rs); err != nil {
				t.Fatal(err)
			}
			checkSpread(t, askMany(t, vip+":80", 40), tt.affinity)
		})
	}
}

// TestIPTablesLoadBalancerTraffic: a LoadBalancer service whose ingress is the
// node's own address answers there at the service port, for traffic from the node
// itself (caught in OUTPUT).
func TestIPTablesLoadBalancerTraffic(t *testing.T) {
	needNetns(t)
	resetTables(t)
	svc := newSvc("default", "lb", nextVIP()).port("http", 81).loadBalancer(testNodeIP).obj()
	rs := IPTablesRules([]corev1.Service{svc},
		[]corev1.Endpoints{newEps("default", "lb", []string{testEp1, testEp2}, map[string]int32{"http": testEpPort})},
		NodeInfo{Name: "node-1", IP: testNodeIP})
	ipt, err := iptables.New()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewApplier(ipt, "").Apply(rs); err != nil {
		t.Fatal(err)
	}
	checkSpread(t, askMany(t, testNodeIP+":81", 40), false)
}

// checkSpread: without affinity both endpoints answer; with it, only one.
func checkSpread(t *testing.T, got map[string]int, affinity bool) {
	t.Helper()
	switch {
	case affinity && len(got) != 1:
		t.Errorf("with ClientIP affinity the answers came from %v, want one endpoint", got)
	case !affinity && (got[testEp1] == 0 || got[testEp2] == 0):
		t.Errorf("answers %v, want both endpoints", got)
	}
	for name := range got {
		if name != testEp1 && name != testEp2 {
			t.Errorf("unexpected answer %q", name)
		}
	}
}

func TestUserspaceTraffic(t *testing.T) {
	needNetns(t)
	tests := []struct {
		name     string
		affinity bool
		eps      []string
	}{
		{name: "round-robin", eps: []string{testEp1, testEp2}},
		{name: "client-ip-affinity", affinity: true, eps: []string{testEp1, testEp2}},
		{name: "dead-endpoint-retried", eps: []string{testEp1, testEp2, testEpDead}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resetTables(t)
			vip := nextVIP()
			b := newSvc("default", "web", vip).port("http", 80).nodePort(30080)
			if tt.affinity {
				b = b.affinity(0)
			}
			svcs := []corev1.Service{b.obj()}
			eps := []corev1.Endpoints{newEps("default", "web", tt.eps, map[string]int32{"http": testEpPort})}
			log := logrus.New()
			log.SetLevel(logrus.ErrorLevel)
			us := NewUserspace("", log)
			defer us.Close()
			ports, err := us.Update(svcs, eps)
			if err != nil {
				t.Fatal(err)
			}
			ipt, err := iptables.New()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := NewApplier(ipt, "").Apply(UserspaceRules(svcs, ports, NodeInfo{IP: testNodeIP})); err != nil {
				t.Fatal(err)
			}
			for _, addr := range []string{vip + ":80", testNodeIP + ":30080"} {
				got := askMany(t, addr, 12)
				checkSpread(t, got, tt.affinity)
				if !tt.affinity && got[testEp1] != got[testEp2] {
					t.Errorf("%s: round robin answered %v, want an even split", addr, got)
				}
			}
		})
	}
}

func TestRunKernel(t *testing.T) {
	needNetns(t)
	resetTables(t)
	ctx, cancel := context.WithCancel(context.Background())
	cs := fakeClientset()
	done := make(chan error, 1)
	log := logrus.New()
	log.SetLevel(logrus.WarnLevel)
	go func() {
		done <- Run(ctx, Config{NodeName: "node-1", NodeIP: testNodeIP}, cs, log)
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	vip := nextVIP()
	svc := newSvc("default", "web", vip).port("http", 80).obj()
	ep := newEps("default", "web", []string{testEp1, testEp2}, map[string]int32{"http": testEpPort})
	createObjects(t, cs, svc, ep)
	// Every rule must be in place before the first connection: a SYN that meets
	// the service chain before its DNAT rules is tracked untranslated, and its
	// retransmissions stay so. Without affinity both DNATs are in the KUBE-SVC chain.
	svcName := svcChain(ServicePortName{NamespacedName: types.NamespacedName{Namespace: "default", Name: "web"}, Port: "http"}, corev1.ProtocolTCP)
	waitFor(t, "rules of default/web", func() bool {
		nat := iptablesSave(t, "nat")
		return strings.Contains(nat, `-A `+svcName+` -p tcp -m comment --comment "default/web:http" -m statistic --mode random --probability 0.50000000000 -j DNAT --to-destination `+testEp1+":") &&
			strings.Contains(nat, `-A `+svcName+` -p tcp -m comment --comment "default/web:http" -j DNAT --to-destination `+testEp2+":") &&
			strings.Contains(nat, `-A KUBE-SERVICES -d `+vip+`/32`)
	})
	if nat := iptablesSave(t, "nat"); strings.Contains(nat, "KUBE-SEP-") {
		t.Errorf("a service without affinity has KUBE-SEP chains:\n%s", nat)
	}
	checkSpread(t, askMany(t, vip+":80", 30), false)
	deleteService(t, cs, "default", "web")
	waitFor(t, "rules of default/web removed", func() bool {
		return !strings.Contains(iptablesSave(t, "nat"), "default/web:http")
	})
	if nat := iptablesSave(t, "nat"); !strings.Contains(nat, "-A OUTPUT -m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES") {
		t.Errorf("jump gone:\n%s", nat)
	}
}

var vipCount atomic.Int32

// nextVIP is a cluster IP no earlier test used: no conntrack or TIME_WAIT entry of an
// earlier connection to the same address can meet a new one.
func nextVIP() string {
	n := vipCount.Add(1)
	return fmt.Sprintf("10.254.%d.%d", 100+n/200, n%200+1)
}
