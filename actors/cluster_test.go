package actors

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/remote"
	"google.golang.org/protobuf/types/known/anypb"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubeactor/kubeactor/actors/admission"
	"github.com/kubeactor/kubeactor/actors/event"
	"github.com/kubeactor/kubeactor/actors/node"
	"github.com/kubeactor/kubeactor/actors/resourcequota"
	st "github.com/kubeactor/kubeactor/actors/scheduler/schedtest"
	"github.com/kubeactor/kubeactor/persistence"
	"github.com/kubeactor/kubeactor/persistence/command"
)

func TestPlacementOwner(t *testing.T) {
	three, err := newPlacement("a", []Member{{Name: "a", Address: "x:1"}, {Name: "b", Address: "x:2"}, {Name: "c", Address: "x:3"}}, "a")
	if err != nil {
		t.Fatal(err)
	}
	two, err := newPlacement("a", []Member{{Name: "a", Address: "x:1"}, {Name: "c", Address: "x:3"}}, "a")
	if err != nil {
		t.Fatal(err)
	}
	owned := map[string]int{}
	for i := range 300 {
		k := rcKey("default", fmt.Sprintf("rc-%d", i))
		o := three.owner(k)
		owned[o]++
		if again := three.owner(k); again != o {
			t.Fatalf("%v: owner %s then %s", k, o, again)
		}
		// b leaves: only b's objects move.
		if o2 := two.owner(k); o != "b" && o2 != o {
			t.Errorf("%v moved from %s to %s when b left", k, o, o2)
		}
	}
	for _, m := range []string{"a", "b", "c"} {
		if owned[m] < 50 {
			t.Errorf("member %s owns %d of 300 objects: %v", m, owned[m], owned)
		}
	}
	if _, err := newPlacement("a", []Member{{Name: "a", Address: ""}}, ""); err == nil {
		t.Error("a member without an address was accepted")
	}
}

func TestWireRoundTrip(t *testing.T) {
	pod := newPod("default", "web").obj()
	span := envelope{trace: "t1", key: podKey("default", "web"), hops: 2}
	user := write{user: admission.User{Name: "alice", Groups: []string{"dev"}}, sub: "status", dryRun: true}
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "web", errors.New("no"))
	invalid := &InvalidError{Kind: "Pod", Name: "web", Causes: field.ErrorList{field.Required(field.NewPath("spec"), "")}}
	tests := []struct {
		name string
		msg  interface {
			Serialize() (remote.RootSerialized, error)
		}
		check func(t *testing.T, got any)
	}{
		{"create", &createRequest{envelope: span, write: user, object: pod}, func(t *testing.T, got any) {
			m := got.(*createRequest)
			if m.trace != "t1" || m.key != span.key || m.hops != 2 || m.user.Name != "alice" || m.sub != "status" || !m.dryRun {
				t.Errorf("envelope or write lost: %+v", m)
			}
			if p, ok := m.object.(*corev1.Pod); !ok || p.Name != "web" || p.Spec.Containers[0].Image != pod.Spec.Containers[0].Image {
				t.Errorf("object %#v", m.object)
			}
		}},
		{"update", &updateRequest{envelope: span, object: pod, pre: command.Preconditions{UID: "u", ResourceVersion: 7}}, func(t *testing.T, got any) {
			if m := got.(*updateRequest); m.pre.ResourceVersion != 7 || m.pre.UID != "u" {
				t.Errorf("preconditions %+v", m.pre)
			}
		}},
		{"delete", &deleteRequest{envelope: span, opts: DeleteOptions{GracePeriodSeconds: ptr(int64(0)), PropagationPolicy: "Orphan",
			Preconditions: command.Preconditions{ResourceVersion: 3}}}, func(t *testing.T, got any) {
			m := got.(*deleteRequest)
			if m.opts.PropagationPolicy != "Orphan" || m.opts.GracePeriodSeconds == nil || *m.opts.GracePeriodSeconds != 0 || m.opts.Preconditions.ResourceVersion != 3 {
				t.Errorf("options %+v", m.opts)
			}
		}},
		{"reply", &reply{key: span.key, object: pod, gone: true}, func(t *testing.T, got any) {
			m := got.(*reply)
			if !m.gone || m.err != nil || m.object.(*corev1.Pod).Name != "web" {
				t.Errorf("reply %+v", m)
			}
		}},
		{"reply conflict", &reply{key: span.key, err: fmt.Errorf("pods default/web: %w", persistence.ErrConflict)}, func(t *testing.T, got any) {
			if err := got.(*reply).err; !errors.Is(err, persistence.ErrConflict) || err.Error() != "pods default/web: "+persistence.ErrConflict.Error() {
				t.Errorf("error %v", err)
			}
		}},
		{"reply exists", &reply{key: span.key, err: fmt.Errorf("x: %w", command.ErrAlreadyExists)}, func(t *testing.T, got any) {
			if err := got.(*reply).err; !errors.Is(err, command.ErrAlreadyExists) {
				t.Errorf("error %v", err)
			}
		}},
		{"reply forbidden", &reply{key: span.key, err: fmt.Errorf("admit: %w", forbidden)}, func(t *testing.T, got any) {
			if err := got.(*reply).err; !apierrors.IsForbidden(err) || apierrors.ReasonForError(err) != metav1.StatusReasonForbidden {
				t.Errorf("error %v: not Forbidden", err)
			}
		}},
		{"reply invalid", &reply{key: span.key, err: invalid}, func(t *testing.T, got any) {
			if err := got.(*reply).err; !apierrors.IsInvalid(err) {
				t.Errorf("error %v: not Invalid", err)
			}
		}},
		{"event", &kindRequest{envelope: span, payload: event.Record{Reason: "SuccessfulCreate", Message: "m"}}, func(t *testing.T, got any) {
			if r, ok := got.(*kindRequest).payload.(event.Record); !ok || r.Reason != "SuccessfulCreate" {
				t.Errorf("payload %#v", got.(*kindRequest).payload)
			}
		}},
		{"charge", &kindRequest{envelope: span, payload: resourcequota.ChargeRequest{Resource: "pods", Object: pod, DryRun: true}}, func(t *testing.T, got any) {
			c, ok := got.(*kindRequest).payload.(resourcequota.ChargeRequest)
			if !ok || c.Resource != "pods" || !c.DryRun || c.Object.(*corev1.Pod).Name != "web" {
				t.Errorf("payload %#v", got.(*kindRequest).payload)
			}
		}},
		{"eviction", &singletonMsg{payload: &node.EvictRequest{Eviction: node.Eviction{Node: "n1", Trace: "t1",
			Pods: []types.NamespacedName{{Namespace: "default", Name: "web"}}}}}, func(t *testing.T, got any) {
			r, ok := got.(*node.EvictRequest)
			if !ok || r.Node != "n1" || r.Trace != "t1" || len(r.Pods) != 1 || r.Pods[0].Name != "web" {
				t.Errorf("eviction %#v", got)
			}
		}},
		{"eviction cancelled", &singletonMsg{payload: &node.EvictCancel{Node: "n1"}}, func(t *testing.T, got any) {
			if c, ok := got.(*node.EvictCancel); !ok || c.Node != "n1" {
				t.Errorf("cancel %#v", got)
			}
		}},
		{"reply claimed", &reply{key: span.key, err: fmt.Errorf("x: %w", persistence.ErrClaimed)}, func(t *testing.T, got any) {
			if err := got.(*reply).err; !errors.Is(err, persistence.ErrClaimed) || !errors.Is(err, persistence.ErrConflict) {
				t.Errorf("error %v", err)
			}
		}},
		{"kind reply", &kindReply{err: forbidden}, func(t *testing.T, got any) {
			if err := got.(*kindReply).err; !apierrors.IsForbidden(err) {
				t.Errorf("error %v", err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := tt.msg.Serialize()
			if err != nil {
				t.Fatal(err)
			}
			got, err := fromWire(w.(rootAny).Any)
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, got)
		})
	}
}

func TestWireUndecodable(t *testing.T) {
	for _, a := range []*anypb.Any{
		{TypeUrl: wirePrefix + "from-a-newer-member", Value: []byte("{}")},
		{TypeUrl: "type.googleapis.com/other", Value: nil},
		{TypeUrl: wirePrefix + wireCreate, Value: []byte("{not json")},
		{TypeUrl: wirePrefix + wireCreate, Value: []byte(`{"env":{"key":{"Resource":"nosuchkind"}},"object":{}}`)},
		{TypeUrl: wirePrefix + wireKind, Value: []byte(`{"env":{}}`)},
	} {
		if _, err := fromWire(a); !errors.Is(err, errUndecodable) {
			t.Errorf("%s %q: error %v, want errUndecodable", a.TypeUrl, a.Value, err)
		}
	}
}

// freeAddr is a loopback address with a port free now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := ln.Addr().String()
	_ = ln.Close()
	return a
}

// startMember starts a system as a cluster member on st (both members of a test
// share one store: what the replicated store gives every member).
func startMember(t *testing.T, st *persistence.Store, name, addr string, leader bool, members []Member) *System {
	t.Helper()
	return startMemberWith(t, st, name, addr, leader, members, Options{})
}

// startMemberWith is startMember with options (Nodes, Services) of the test's.
func startMemberWith(t *testing.T, st *persistence.Store, name, addr string, leader bool, members []Member, o Options) *System {
	t.Helper()
	if raceDetector {
		t.Skip("two members in one process race inside protoactor's remote (grpc's global logger): run without -race (make unit does)")
	}
	o.Store, o.Log, o.RequestTimeout, o.Resources = st, quietLog(), 10*time.Second, testResources
	o.Cluster = &ClusterOptions{Name: name, Address: addr, Leader: leader, Members: members, LeaderName: "a"}
	s, err := Start(o)
	if err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	t.Cleanup(s.Stop)
	return s
}

// startTwo starts the members a (the leader) and b on st, each knowing both.
func startTwo(t *testing.T, st *persistence.Store) (a, b *System) {
	t.Helper()
	both := []Member{{Name: "a", Address: freeAddr(t)}, {Name: "b", Address: freeAddr(t)}}
	return startMember(t, st, "a", both[0].Address, true, both), startMember(t, st, "b", both[1].Address, false, both)
}

// TestClusterSpreadsRCs runs a leader and a follower's host: the RCs are spread over
// both, requests for either reach the owner through any member, the RCs on the
// follower create their pods through the leader's pod actors, and when the follower
// leaves the leader takes its RCs over.
func TestClusterSpreadsRCs(t *testing.T) {
	st := openStore(t)
	a, b := startTwo(t, st)
	ctx := context.Background()
	if _, err := a.Create(ctx, persistence.Key{Resource: "namespaces", Name: "default"}, nsObj("default")); err != nil {
		t.Fatal(err)
	}
	var onB []string
	for i := range 8 {
		name := fmt.Sprintf("web-%d", i)
		if a.Owner(rcKey("default", name)) == "b" {
			onB = append(onB, name)
		}
		if _, err := a.Create(ctx, rcKey("default", name), newRC("default", name, 3)); err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
	}
	if len(onB) == 0 || len(onB) == 8 {
		t.Fatalf("placement put %d of 8 RCs on b: the test needs both members to own some", len(onB))
	}
	for i := range 8 {
		waitReplicas(t, st, "default", fmt.Sprintf("web-%d", i), 3)
	}
	// Each RC's actor runs on its owner only.
	for i := range 8 {
		name := fmt.Sprintf("web-%d", i)
		owner, other := a, b
		if a.Owner(rcKey("default", name)) == "b" {
			owner, other = b, a
		}
		if probe(t, owner, rcKey("default", name)) == nil {
			t.Errorf("%s: no actor on its owner", name)
		}
		if n := other.hostedActors("replicationcontrollers", rcKey("default", name)); n != 0 {
			t.Errorf("%s: %d actors on the member that does not own it", name, n)
		}
	}
	// A scale through the follower's system reaches the owner wherever it is.
	scaleRC(t, b, st, "default", onB[0], 5)
	waitReplicas(t, st, "default", onB[0], 5)

	// b leaves: the leader takes b's RCs over and they go on working.
	b.Stop()
	if err := a.SetMembers([]Member{{Name: "a", Address: a.env.cluster.view.Load().addr["a"]}}, "a"); err != nil {
		t.Fatal(err)
	}
	for _, name := range onB {
		scaleRC(t, a, st, "default", name, 4)
		waitReplicas(t, st, "default", name, 4)
	}
}

// TestClusterServicesAndNodes: services and nodes are placed over the members like
// RCs, each member allocating cluster IPs, node ports and pod CIDRs for the objects it
// hosts; the store's claims keep two members from giving out one value twice (a
// user's choice gets 422, an allocated value is allocated again), and when a member
// leaves, the other takes its services and nodes over with what they hold.
func TestClusterServicesAndNodes(t *testing.T) {
	nodes := cidrNodeOptions(true)
	claims, err := Claims(nodes)
	if err != nil {
		t.Fatal(err)
	}
	st, err := persistence.Open(persistence.Options{InMemory: true, NewObject: newObject, Claims: claims, ClaimResources: ClaimResources})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	both := []Member{{Name: "a", Address: freeAddr(t)}, {Name: "b", Address: freeAddr(t)}}
	a := startMemberWith(t, st, "a", both[0].Address, true, both, Options{Nodes: nodes})
	b := startMemberWith(t, st, "b", both[1].Address, false, both, Options{Nodes: nodes})
	members := map[string]*System{"a": a, "b": b}
	ctx := context.Background()
	if _, err := a.Create(ctx, persistence.Key{Resource: "namespaces", Name: "default"}, nsObj("default")); err != nil {
		t.Fatal(err)
	}
	svcKey := func(name string) persistence.Key {
		return persistence.Key{Resource: "services", Namespace: "default", Name: name}
	}
	newSvc := func(name, ip string) *corev1.Service {
		svc := &corev1.Service{Spec: corev1.ServiceSpec{ClusterIP: ip, Type: corev1.ServiceTypeNodePort,
			Ports: []corev1.ServicePort{{Port: 80, Protocol: corev1.ProtocolTCP}}}}
		svc.Name, svc.Namespace, svc.UID = name, "default", types.UID("uid-svc-"+name)
		return svc
	}

	// Services through both members: each member hosts some, all values differ.
	owners := map[string]int{}
	var names []string
	for i := range 16 {
		name := fmt.Sprintf("svc-%d", i)
		names = append(names, name)
		owners[a.Owner(svcKey(name))]++
		via := []*System{a, b}[i%2]
		if _, err := via.Create(ctx, svcKey(name), newSvc(name, "")); err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
	}
	if owners["a"] == 0 || owners["b"] == 0 {
		t.Fatalf("placement %v: the test needs services on both members", owners)
	}
	for _, name := range names {
		owner := members[a.Owner(svcKey(name))]
		if probe(t, owner, svcKey(name)) == nil {
			t.Errorf("%s: no actor on its owner", name)
		}
	}
	checkDistinct := func(when string) {
		t.Helper()
		seen := map[string]string{}
		st.Snapshot("services").Ascend("", "", func(it *persistence.Item) bool {
			svc := it.Object().(*corev1.Service)
			vals := []string{"ip " + svc.Spec.ClusterIP}
			for _, p := range svc.Spec.Ports {
				vals = append(vals, fmt.Sprintf("port %d", p.NodePort))
			}
			for _, v := range vals {
				if other, dup := seen[v]; dup {
					t.Errorf("%s: %s held by %s and %s", when, v, other, svc.Name)
				}
				seen[v] = svc.Name
			}
			return true
		})
	}
	checkDistinct("created")

	// The same chosen cluster IP asked through both members at once, for two services
	// owned by different members: exactly one gets it, the other a 422.
	var onA, onB string
	for i := 0; (onA == "" || onB == "") && i < 100; i++ {
		n := fmt.Sprintf("pick-%d", i)
		if a.Owner(svcKey(n)) == "a" && onA == "" {
			onA = n
		} else if a.Owner(svcKey(n)) == "b" && onB == "" {
			onB = n
		}
	}
	errs := make(chan error, 2)
	for _, n := range []string{onA, onB} {
		go func() {
			_, err := a.Create(ctx, svcKey(n), newSvc(n, "10.254.7.7"))
			errs <- err
		}()
	}
	var ok, invalid int
	for range 2 {
		switch err := <-errs; {
		case err == nil:
			ok++
		case isInvalid(err):
			invalid++
		default:
			t.Errorf("create with a chosen IP: %v", err)
		}
	}
	if ok != 1 || invalid != 1 {
		t.Fatalf("two services asking for one IP: %d created, %d refused; want 1 and 1", ok, invalid)
	}

	// Nodes registering through both members at once, with no pod CIDR: each member
	// allocates the lowest subnet it knows to be free, so they pick the same ones;
	// the store takes one of each pair and the other is allocated again.
	var nodeNames []string
	errs = make(chan error, 12)
	for i := range 12 {
		name := fmt.Sprintf("node-%d", i)
		nodeNames = append(nodeNames, name)
		via := []*System{a, b}[i%2]
		go func() {
			_, err := via.Create(ctx, nodeKey(name), newNode(name, time.Now(), nil))
			errs <- err
		}()
	}
	for range 12 {
		if err := <-errs; err != nil {
			t.Fatalf("register node: %v", err)
		}
	}
	cidrs := podCIDRs(t, a, nodeNames)
	seen := map[string]string{}
	for n, c := range cidrs {
		if c == "" {
			t.Errorf("node %s has no pod CIDR", n)
		}
		if other, dup := seen[c]; dup {
			t.Errorf("pod CIDR %s given to %s and %s", c, other, n)
		}
		seen[c] = n
	}
	if len(cidrs) != 12 {
		t.Fatalf("%d nodes stored, want 12", len(cidrs))
	}

	// b leaves: a takes b's services and nodes over; an update that omits the pod
	// CIDR (the book's node isolation) keeps it, a service on b gets a new node port.
	b.Stop()
	if err := a.SetMembers([]Member{{Name: "a", Address: both[0].Address}}, "a"); err != nil {
		t.Fatal(err)
	}
	var nodeOfB string
	for _, n := range nodeNames {
		if (&placement{members: []string{"a", "b"}}).owner(nodeKey(n)) == "b" {
			nodeOfB = n
			break
		}
	}
	if nodeOfB == "" {
		t.Fatal("no node was b's")
	}
	it, err := st.Get(nodeKey(nodeOfB))
	if err != nil {
		t.Fatal(err)
	}
	upd := it.Object().DeepCopyObject().(*corev1.Node)
	upd.Spec.PodCIDR, upd.Spec.PodCIDRs, upd.Spec.Unschedulable = "", nil, true
	if _, err := a.Update(ctx, nodeKey(nodeOfB), upd, command.Preconditions{}); err != nil {
		t.Fatalf("update node %s on its new owner: %v", nodeOfB, err)
	}
	if got := podCIDRs(t, a, []string{nodeOfB})[nodeOfB]; got != cidrs[nodeOfB] {
		t.Fatalf("node %s pod CIDR %q after the update, want %q", nodeOfB, got, cidrs[nodeOfB])
	}
	for _, name := range names {
		if (&placement{members: []string{"a", "b"}}).owner(svcKey(name)) != "b" {
			continue
		}
		it, err := st.Get(svcKey(name))
		if err != nil {
			t.Fatal(err)
		}
		svc := it.Object().DeepCopyObject().(*corev1.Service)
		svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Name: "b", Port: 81, Protocol: corev1.ProtocolTCP})
		svc.Spec.Ports[0].Name = "a"
		if _, err := a.Update(ctx, svcKey(name), svc, command.Preconditions{}); err != nil {
			t.Fatalf("update service %s on its new owner: %v", name, err)
		}
	}
	checkDistinct("after the takeover")
}

// isInvalid: a 422, as this member's error or as another member's on the wire.
func isInvalid(err error) bool {
	var inv *InvalidError
	return errors.As(err, &inv) || apierrors.IsInvalid(err)
}

// TestClusterNamespaceOnFollower deletes a namespace whose actor runs on the follower:
// it deletes the namespace's contents through their actors on the leader (pods,
// services) and on either member (RCs), waits until they are gone, and removes
// itself; a namespace of the leader's is left alone.
func TestClusterNamespaceOnFollower(t *testing.T) {
	st := openStore(t)
	a, b := startTwo(t, st)
	ctx := context.Background()
	owned := map[string]string{} // a name each member owns
	for i := 0; len(owned) < 2 && i < 100; i++ {
		n := fmt.Sprintf("team-%d", i)
		if o := a.Owner(persistence.Key{Resource: "namespaces", Name: n}); owned[o] == "" {
			owned[o] = n
		}
	}
	onB, onA := owned["b"], owned["a"]
	if onB == "" || onA == "" {
		t.Fatalf("no namespace name owned by each member: %v", owned)
	}
	var contents []persistence.Key
	for _, ns := range []string{onB, onA} {
		if _, err := b.Create(ctx, persistence.Key{Resource: "namespaces", Name: ns}, nsObj(ns)); err != nil {
			t.Fatalf("create namespace %s through the follower: %v", ns, err)
		}
		if _, err := a.Create(ctx, rcKey(ns, "web"), newRC(ns, "web", 2)); err != nil {
			t.Fatal(err)
		}
		waitReplicas(t, st, ns, "web", 2)
		svc := &corev1.Service{}
		svc.Name, svc.Namespace, svc.UID = "web", ns, types.UID("uid-svc-"+ns)
		svcKey := persistence.Key{Resource: "services", Namespace: ns, Name: "web"}
		if _, err := a.Create(ctx, svcKey, svc); err != nil {
			t.Fatal(err)
		}
		if ns == onB {
			contents = append(contents, rcKey(ns, "web"), svcKey)
		}
	}
	if b.hostedActors("namespaces", persistence.Key{Resource: "namespaces", Name: onB}) != 1 ||
		a.hostedActors("namespaces", persistence.Key{Resource: "namespaces", Name: onB}) != 0 {
		t.Fatalf("namespace %s: its actor does not run on b alone", onB)
	}
	obj, isGone, err := a.Delete(ctx, persistence.Key{Resource: "namespaces", Name: onB}, DeleteOptions{})
	if err != nil || isGone {
		t.Fatalf("delete namespace: gone %v, %v", isGone, err)
	}
	if ns := obj.(*corev1.Namespace); ns.Status.Phase != corev1.NamespaceTerminating {
		t.Fatalf("namespace not terminating: %+v", ns.Status)
	}
	for _, k := range contents {
		eventually(t, 10*time.Second, "content removed", func() bool { return gone(st, k) })
	}
	eventually(t, 10*time.Second, "the RC's pods removed", func() bool {
		_, all := rcPods(st, onB, "web")
		return len(all) == 0
	})
	eventually(t, 10*time.Second, "namespace removed", func() bool {
		return gone(st, persistence.Key{Resource: "namespaces", Name: onB})
	})
	if gone(st, persistence.Key{Resource: "namespaces", Name: onA}) || gone(st, rcKey(onA, "web")) {
		t.Fatal("the other namespace or its RC was removed")
	}
	if _, all := rcPods(st, onA, "web"); len(all) != 2 {
		t.Fatalf("the other namespace's RC has %d pods, want 2", len(all))
	}
}

// TestClusterDoubleActivation makes both members believe they own an RC at once (as
// during a change of the members, when their views differ): both activate its actor
// from the store and sync at the same moment, and still no pod is ever created twice:
// the RC ends with exactly its replicas after exactly that many creates.
func TestClusterDoubleActivation(t *testing.T) {
	st := openStore(t)
	a, b := startTwo(t, st)
	ctx := context.Background()
	if _, err := a.Create(ctx, persistence.Key{Resource: "namespaces", Name: "default"}, nsObj("default")); err != nil {
		t.Fatal(err)
	}
	// An RC that b owns, written to the store directly: no actor runs it yet.
	name := ""
	for i := range 50 {
		if n := fmt.Sprintf("db-%d", i); a.Owner(rcKey("default", n)) == "b" {
			name = n
			break
		}
	}
	if name == "" {
		t.Fatal("no RC name owned by b")
	}
	rc := newRC("default", name, 60)
	if _, _, err := st.Apply(ctx, persistence.Command{Op: persistence.OpCreate, Key: rcKey("default", name), Object: rc}); err != nil {
		t.Fatal(err)
	}
	from := st.Revision()
	// a's view loses b, so a activates the RC's actor; at the same moment a request
	// for the RC activates it on b, which still owns it in its own view.
	if err := a.SetMembers([]Member{{Name: "a", Address: a.env.cluster.view.Load().addr["a"]}}, "a"); err != nil {
		t.Fatal(err)
	}
	if probe(t, b, rcKey("default", name)) == nil {
		t.Fatal("no RC actor on b")
	}
	waitReplicas(t, st, "default", name, 60)
	if a.hostedActors("replicationcontrollers", rcKey("default", name)) != 1 || b.hostedActors("replicationcontrollers", rcKey("default", name)) != 1 {
		t.Fatal("the RC's actor does not run on both members")
	}
	// Every pod write since the RC was stored is in the change log: count the creates.
	w, err := st.Watch(ctx, "pods", "", from)
	if err != nil {
		t.Fatal(err)
	}
	created := 0
	for {
		dctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond) // drains what is logged
		batch, err := w.Next(dctx)
		cancel()
		if errors.Is(err, context.DeadlineExceeded) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range batch {
			if ev.Type == persistence.Added {
				created++
			}
		}
	}
	if _, all := rcPods(st, "default", name); len(all) != 60 || created != 60 {
		t.Errorf("%d pods after %d creates, want 60 and 60: a second activation made extra pods", len(all), created)
	}
}

// hostedActors counts this system's actors of key (0 or 1), asking its manager.
func (s *System) hostedActors(resource string, key persistence.Key) int {
	res, err := s.system.Root.RequestFuture(s.env.managers[resource], &childrenRequest{}, 5*time.Second).Result()
	if err != nil {
		return -1
	}
	n := 0
	for _, k := range res.(*childrenReply).keys {
		if k == (objKey{key.Namespace, key.Name}) {
			n++
		}
	}
	return n
}

// viewedBy is the env of the member self (leading or not, of role) whose view is
// members with the leader a, and that view.
func viewedBy(t *testing.T, self string, leader bool, role string, members []Member) (*env, *placement) {
	t.Helper()
	p, err := newPlacement(self, members, "a")
	if err != nil {
		t.Fatal(err)
	}
	e := &env{cluster: &cluster{self: self, leader: leader, role: role}}
	e.cluster.view.Store(p)
	return e, p
}

// TestPlacementRoles: a member of a role hosts its role's actors while it is the
// first live one of the role; the others of the role are standbys; without one the
// servers host them as before.
func TestPlacementRoles(t *testing.T) {
	servers := []Member{{Name: "a", Address: "x:1"}, {Name: "b", Address: "x:2"}}
	sched := []Member{{Name: "s2", Address: "x:4", Role: RoleScheduler}, {Name: "s1", Address: "x:3", Role: RoleScheduler}}
	cm := []Member{{Name: "k1", Address: "x:5", Role: RoleControllers}}
	all := append(append(append([]Member(nil), servers...), sched...), cm...)
	tests := []struct {
		name    string
		members []Member
		self    string
		leader  bool
		role    string
		// want: the singletons and RC placement as seen from self
		scheduler, podgc bool
		rcOwner          string // "" : one of the servers by hash
	}{
		{"leader, both roles live", all, "a", true, "", false, false, "k1"},
		{"the first scheduler member (in join order, not by name)", all, "s2", false, RoleScheduler, true, false, "k1"},
		{"the second scheduler member is a standby", all, "s1", false, RoleScheduler, false, false, "k1"},
		{"the controllers member", all, "k1", false, RoleControllers, false, true, "k1"},
		{"leader, no role member", servers, "a", true, "", true, true, ""},
		{"follower, no role member", servers, "b", false, "", false, false, ""},
		{"the standby once the first is gone", append(append([]Member(nil), servers...), sched[1]), "s1", false, RoleScheduler, true, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, p := viewedBy(t, tc.self, tc.leader, tc.role, tc.members)
			if got := e.runs(schedulerName); got != tc.scheduler {
				t.Errorf("runs the scheduler: %v, want %v", got, tc.scheduler)
			}
			if got := e.runs(podGCName); got != tc.podgc {
				t.Errorf("runs the pod GC: %v, want %v", got, tc.podgc)
			}
			for i := range 20 {
				k := rcKey("default", fmt.Sprintf("rc-%d", i))
				_, local := e.where(k)
				owner := p.owner(k)
				if tc.rcOwner != "" {
					owner = tc.rcOwner
				}
				if owner == "s1" || owner == "s2" || owner == "k1" && tc.rcOwner == "" {
					t.Fatalf("%v: a member with a role in the servers' hash: %s", k, owner)
				}
				if local != (owner == tc.self) {
					t.Errorf("%v: local %v, owner %s", k, local, owner)
				}
			}
			if e.hosts("replicationcontrollers") != (tc.role != RoleScheduler) {
				t.Errorf("hosts RCs: %v with role %q", e.hosts("replicationcontrollers"), tc.role)
			}
		})
	}
	if _, err := newPlacement("a", []Member{{Name: "a", Address: "x:1", Role: "etcd"}}, "a"); err == nil {
		t.Error("an unknown role was accepted")
	}
}

// roleView is the view of the members names at their addresses: "a" is the server
// (the leader), every other one a member of role.
func roleView(addr map[string]string, role string, names ...string) []Member {
	var ms []Member
	for _, n := range names {
		r := role
		if n == "a" {
			r = ""
		}
		ms = append(ms, Member{Name: n, Address: addr[n], Role: r})
	}
	return ms
}

// startRoleMember starts the member name of role ("" for the leader a) with
// o's store and options, in the view members.
func startRoleMember(t *testing.T, name, role string, addr map[string]string, members []Member, o Options) *System {
	t.Helper()
	if raceDetector {
		t.Skip("two members in one process race inside protoactor's remote (grpc's global logger): run without -race (make unit does)")
	}
	o.Log, o.RequestTimeout = quietLog(), 10*time.Second
	o.Cluster = &ClusterOptions{Name: name, Address: addr[name], Leader: name == "a", Role: role, Members: members, LeaderName: "a"}
	s, err := Start(o)
	if err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	t.Cleanup(s.Stop)
	return s
}

// TestClusterSchedulerMember: a member of RoleScheduler runs the scheduler and the
// leader does not; the pods it binds go through the leader's pod actors; when it
// leaves, the standby takes over, and when that one leaves, the leader does.
func TestClusterSchedulerMember(t *testing.T) {
	store := openStore(t)
	addr := map[string]string{"a": freeAddr(t), "s1": freeAddr(t), "s2": freeAddr(t)}
	view := func(names ...string) []Member { return roleView(addr, RoleScheduler, names...) }
	start := func(name, role string) *System {
		return startRoleMember(t, name, role, addr, view("a", "s1", "s2"), Options{Store: store, Resources: testResources,
			Scheduler: true, SchedulerShards: 1, SchedulerSeed: 1})
	}
	a, s1, s2 := start("a", ""), start("s1", RoleScheduler), start("s2", RoleScheduler)
	if a.Runs(schedulerName) || !s1.Runs(schedulerName) || s2.Runs(schedulerName) {
		t.Fatalf("scheduler runs on a %v, s1 %v, s2 %v; want s1 only", a.Runs(schedulerName), s1.Runs(schedulerName), s2.Runs(schedulerName))
	}
	create(t, a, st.NewNode("n1").CPU("4").Obj())
	scheduledBy := func(pod, host string) {
		t.Helper()
		create(t, a, st.NewPod(pod).CPU("100m").Obj())
		eventually(t, 20*time.Second, pod+" bound, Scheduled by "+host, func() bool {
			found := false
			store.Snapshot("events").Ascend("default", "", func(it *persistence.Item) bool {
				ev := it.Object().(*corev1.Event)
				found = found || ev.Reason == "Scheduled" && ev.InvolvedObject.Name == pod && ev.Source.Host == host
				return true
			})
			return found && boundTo(t, store, pod) == "n1"
		})
	}
	scheduledBy("p1", "s1")

	s1.Stop() // the standby takes over
	for _, s := range []*System{a, s2} {
		if err := s.SetMembers(view("a", "s2"), "a"); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 10*time.Second, "s2 runs the scheduler", func() bool { return s2.Runs(schedulerName) && !a.Runs(schedulerName) })
	scheduledBy("p2", "s2")

	s2.Stop() // the leader takes the scheduler back
	if err := a.SetMembers(view("a"), "a"); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "a runs the scheduler", func() bool { return a.Runs(schedulerName) })
	scheduledBy("p3", "a")
}
