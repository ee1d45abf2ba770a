package actors

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeactor/kubeactor/actors/admission"
	"github.com/kubeactor/kubeactor/actors/kinds"
	"github.com/kubeactor/kubeactor/actors/node"
	"github.com/kubeactor/kubeactor/actors/serviceaccount"
	"github.com/kubeactor/kubeactor/persistence"
)

// controllerKeys is one object of each kind a member of RoleControllers hosts.
var controllerKeys = []persistence.Key{
	{Resource: "replicationcontrollers", Namespace: "default", Name: "web"},
	{Resource: "namespaces", Name: "default"},
	{Resource: "services", Namespace: "default", Name: "web"},
	{Resource: "nodes", Name: "n1"},
	{Resource: "resourcequotas", Namespace: "default", Name: "q"},
	{Resource: "serviceaccounts", Namespace: "default", Name: "builder"},
	{Resource: "persistentvolumes", Name: "pv1"},
	{Resource: "persistentvolumeclaims", Namespace: "default", Name: "claim"},
}

// TestPlacementControllers: while a member of RoleControllers is live, every
// controller kind and the evictor are its, on every member's view; without one,
// the placed kinds go to the servers by hash and the others to the leader.
func TestPlacementControllers(t *testing.T) {
	servers := []Member{{Name: "a", Address: "x:1"}, {Name: "b", Address: "x:2"}}
	cms := []Member{{Name: "k2", Address: "x:6", Role: RoleControllers}, {Name: "k1", Address: "x:5", Role: RoleControllers}}
	with := append(append([]Member(nil), servers...), cms...)
	tests := []struct {
		name    string
		members []Member
		self    string
		leader  bool
		role    string
		active  string // the live controllers member ("": none)
	}{
		{"leader, a controllers member live", with, "a", true, "", "k2"},
		{"follower, a controllers member live", with, "b", false, "", "k2"},
		{"the active controllers member", with, "k2", false, RoleControllers, "k2"},
		{"the standby", with, "k1", false, RoleControllers, "k2"},
		{"leader, none live", servers, "a", true, "", ""},
		{"follower, none live", servers, "b", false, "", ""},
		{"the standby once the first is gone", append(append([]Member(nil), servers...), cms[1]), "k1", false, RoleControllers, "k1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, p := viewedBy(t, tc.self, tc.leader, tc.role, tc.members)
			for _, r := range controllerKinds {
				for i := range 10 {
					k := persistence.Key{Resource: r, Namespace: "default", Name: fmt.Sprintf("o-%d", i)}
					want := tc.active
					switch {
					case want != "":
					case placed(r):
						want = p.owner(k)
					default:
						want = "a"
					}
					addr, local := e.where(k)
					if local != (want == tc.self) || !local && addr != p.addr[want] {
						t.Errorf("%v: local %v at %q, want it on %s", k, local, addr, want)
					}
					if got := (&System{env: e}).Owner(k); got != want {
						t.Errorf("%v: Owner %s, want %s", k, got, want)
					}
				}
				if tc.role == RoleControllers && !e.hosts(r) {
					t.Errorf("a controllers member's %s manager keeps no actors", r)
				}
			}
			wantEvictor := tc.active == tc.self || tc.active == "" && tc.leader
			if got := e.runs(node.EvictorName); got != wantEvictor {
				t.Errorf("runs the evictor: %v, want %v", got, wantEvictor)
			}
			addr, here := e.singletonAt(node.EvictorName)
			if runsOn := tc.active; runsOn != "" && (here != (runsOn == tc.self) || !here && addr != p.addr[runsOn]) {
				t.Errorf("the evictor at %q (here %v), want on %s", addr, here, runsOn)
			}
			if tc.role == RoleControllers && e.hosts("pods") {
				t.Error("a controllers member hosts pods")
			}
		})
	}
}

// openKindsStore is an in-memory store that knows every kind of the table.
func openKindsStore(t *testing.T) *persistence.Store {
	t.Helper()
	st, err := persistence.Open(persistence.Options{InMemory: true, NewObject: func(res string) (kruntime.Object, error) {
		r, ok := kinds.Lookup(res)
		if !ok {
			return nil, fmt.Errorf("no type for %q", res)
		}
		return r.New(), nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// TestClusterControllersMember runs a leader and a member of RoleControllers on one
// store: the member hosts one actor of every controller kind and the leader none;
// the member's service allocator gives the service an address of the range it was
// given, its token controller makes the account's token, and its node controller
// and evictor evict the pods of a node whose heartbeats stopped (the NodeNotReady
// event names the member). When the member leaves, the leader hosts them all and
// evicts the pods of the next node that fails.
func TestClusterControllersMember(t *testing.T) {
	store := openKindsStore(t)
	clock := newFakeClock()
	addr := map[string]string{"a": freeAddr(t), "k1": freeAddr(t)}
	view := func(names ...string) []Member { return roleView(addr, RoleControllers, names...) }
	nodes := NodeOptions{Config: node.Config{MonitorGracePeriod: 2 * time.Second, StartupGracePeriod: 3 * time.Second,
		PodEvictionTimeout: 2 * time.Second, DeletingPodsQPS: 100, DeletingPodsBurst: 100}, MonitorPeriod: time.Second}
	services := ServiceOptions{ClusterIPRange: netip.MustParsePrefix("10.9.0.0/24")}
	start := func(name, role string) *System {
		return startRoleMember(t, name, role, addr, view("a", "k1"), Options{Store: store, Clock: clock, SyncPacing: -1,
			Resources: append(append([]string(nil), testResources...), "endpoints", "resourcequotas", "serviceaccounts", "secrets",
				"persistentvolumes", "persistentvolumeclaims"),
			Nodes: nodes, Services: services, ServiceAccounts: &serviceaccount.Options{Tokens: fakeTokens{}},
			Admission: admission.Chain{NewResourceQuota()}})
	}
	a, k1 := start("a", ""), start("k1", RoleControllers)
	if !k1.Runs(node.EvictorName) || a.Runs(node.EvictorName) {
		t.Fatalf("the evictor runs on a %v, k1 %v; want k1 only", a.Runs(node.EvictorName), k1.Runs(node.EvictorName))
	}
	createStorage(t, a, "namespaces", nsObj("default"))
	objects := func(nodeName, sa string) {
		now := clock.Now()
		n := newNode(nodeName, now, &now)
		n.UID = ""
		createStorage(t, a, "nodes", n)
		createStorage(t, a, "pods", newPod("default", "on-"+nodeName).node(nodeName).raw())
		acct := &corev1.ServiceAccount{TypeMeta: metav1.TypeMeta{Kind: "ServiceAccount", APIVersion: "v1"},
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: sa}}
		createStorage(t, a, "serviceaccounts", acct)
	}
	objects("n1", "builder")
	rc := newRC("default", "web", 1)
	createStorage(t, a, "replicationcontrollers", rc)
	svc := newSvc("web").obj()
	svc.UID = ""
	createStorage(t, a, "services", svc)
	createStorage(t, a, "resourcequotas", &corev1.ResourceQuota{TypeMeta: metav1.TypeMeta{Kind: "ResourceQuota", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "q"},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("10")}}})
	createStorage(t, a, "persistentvolumes", testVolume("pv1", "1Gi", corev1.PersistentVolumeReclaimRetain))
	createStorage(t, a, "persistentvolumeclaims", testClaim("default", "claim", "1Gi"))
	if t.Failed() {
		t.FailNow()
	}

	// quotaRefuses: a pod created through the leader is charged to the quota of its
	// namespace by the quota's actor on host (the leader hosts none while k1
	// lives): the first fits the quota of one pod, the second is refused with 403.
	createStorage(t, a, "namespaces", nsObj("limited"))
	createStorage(t, a, "resourcequotas", &corev1.ResourceQuota{TypeMeta: metav1.TypeMeta{Kind: "ResourceQuota", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "limited", Name: "one-pod"},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("1")}}})
	quotaRefuses := func(pod string) {
		t.Helper()
		_, err := a.Create(context.Background(), podKey("limited", pod), newPod("limited", pod).obj())
		if !apierrors.IsForbidden(err) || !strings.HasSuffix(err.Error(), "is forbidden: Limited to 1 pods") {
			t.Fatalf("create %s beyond the quota: %v, want 403 Limited to 1 pods", pod, err)
		}
	}
	if _, err := a.Create(context.Background(), podKey("limited", "fits"), newPod("limited", "fits").obj()); err != nil {
		t.Fatalf("create the pod the quota has room for: %v", err)
	}
	quotaRefuses("beyond")

	hostedOn := func(want, other *System, name string) {
		t.Helper()
		for _, k := range controllerKeys {
			eventually(t, 10*time.Second, fmt.Sprintf("%v hosted on %s only", k, name), func() bool {
				return want.hostedActors(k.Resource, k) == 1 && (other == nil || other.hostedActors(k.Resource, k) == 0)
			})
		}
	}
	hostedOn(k1, a, "k1")
	it, err := store.Get(controllerKeys[2])
	if err != nil {
		t.Fatal(err)
	}
	if ip := netip.MustParseAddr(it.Object().(*corev1.Service).Spec.ClusterIP); !services.ClusterIPRange.Contains(ip) {
		t.Errorf("cluster IP %s not of the member's range %s", ip, services.ClusterIPRange)
	}
	eventually(t, 10*time.Second, "builder's token, by k1's token controller", func() bool {
		return tokenOf(store, getAccount(store, "default", "builder")) != nil
	})

	// evicted: the node's heartbeats stop; the clock passes its grace period and
	// eviction timeout, and the node's actor on host syncs until its pod is evicted
	// and the NodeNotReady event names host.
	evicted := func(host *System, name, nodeName string) {
		t.Helper()
		eventually(t, 20*time.Second, "the pod of "+nodeName+" evicted by "+name, func() bool {
			clock.Advance(3 * time.Second)
			forceSync(t, host, nodeKey(nodeName))
			it, err := store.Get(podKey("default", "on-"+nodeName))
			return err != nil || it.Object().(*corev1.Pod).DeletionTimestamp != nil
		})
		eventually(t, 10*time.Second, "NodeNotReady of "+nodeName+" from "+name, func() bool {
			found := false
			store.Snapshot("events").Ascend("", "", func(it *persistence.Item) bool {
				ev := it.Object().(*corev1.Event)
				found = found || ev.Reason == node.EventNodeNotReady && ev.InvolvedObject.Name == nodeName && ev.Source.Host == name
				return true
			})
			return found
		})
	}
	evicted(k1, "k1", "n1")

	k1.Stop() // the leader takes every controller back
	if err := a.SetMembers(view("a"), "a"); err != nil {
		t.Fatal(err)
	}
	hostedOn(a, nil, "a")
	eventually(t, 10*time.Second, "the evictor on a", func() bool { return a.Runs(node.EvictorName) })
	quotaRefuses("beyond-again") // charged by a's quota actor now
	objects("n2", "deployer")
	eventually(t, 10*time.Second, "deployer's token, by a's token controller", func() bool {
		return tokenOf(store, getAccount(store, "default", "deployer")) != nil
	})
	evicted(a, "a", "n2")
}
