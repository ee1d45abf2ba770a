package service

import (
	"net/netip"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

type podB struct{ p *corev1.Pod }

func newPod(name, ip string) *podB {
	return &podB{&corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name), ResourceVersion: "7", Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "c", Ports: []corev1.ContainerPort{
			{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP},
		}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
	}}
}
func (b *podB) notReady() *podB                        { b.p.Status.Conditions[0].Status = corev1.ConditionFalse; return b }
func (b *podB) ports(ps ...corev1.ContainerPort) *podB { b.p.Spec.Containers[0].Ports = ps; return b }
func (b *podB) labels(l map[string]string) *podB       { b.p.Labels = l; return b }
func (b *podB) ns(ns string) *podB                     { b.p.Namespace = ns; return b }
func (b *podB) phase(ph corev1.PodPhase) *podB         { b.p.Status.Phase = ph; return b }
func (b *podB) terminating() *podB {
	ts := metav1.Now()
	b.p.DeletionTimestamp = &ts
	return b
}
func (b *podB) obj() *corev1.Pod { return b.p }

func service(ports ...corev1.ServicePort) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", Labels: map[string]string{"name": "web"}},
		Spec:       corev1.ServiceSpec{Selector: map[string]string{"app": "web"}, Ports: ports},
	}
}

func port(name string, p int32, target intstr.IntOrString) corev1.ServicePort {
	return corev1.ServicePort{Name: name, Port: p, TargetPort: target, Protocol: corev1.ProtocolTCP}
}

func TestSubsets(t *testing.T) {
	http := port("http", 80, intstr.FromString("http"))
	tests := []struct {
		name string
		svc  *corev1.Service
		pods []*corev1.Pod
		want string // the subsets as YAML (addresses abbreviated by ip/name)
	}{
		{
			name: "ready and not ready",
			svc:  service(port("", 6379, intstr.IntOrString{})),
			pods: []*corev1.Pod{newPod("b", "10.1.0.2").obj(), newPod("a", "10.1.0.10").obj(), newPod("c", "10.1.0.3").notReady().obj()},
			want: `
- addresses: [10.1.0.2/b, 10.1.0.10/a]
  notReadyAddresses: [10.1.0.3/c]
  ports: [/6379/TCP]`,
		},
		{
			name: "skipped: no IP, terminating, finished, other namespace, not selected",
			svc:  service(port("", 80, intstr.FromInt32(8080))),
			pods: []*corev1.Pod{
				newPod("ok", "10.1.0.1").obj(), newPod("noip", "").obj(), newPod("term", "10.1.0.2").terminating().obj(),
				newPod("done", "10.1.0.3").phase(corev1.PodSucceeded).obj(), newPod("failed", "10.1.0.4").phase(corev1.PodFailed).obj(),
				newPod("elsewhere", "10.1.0.5").ns("other").obj(), newPod("other-app", "10.1.0.6").labels(map[string]string{"app": "db"}).obj(),
			},
			want: `
- addresses: [10.1.0.1/ok]
  ports: [/8080/TCP]`,
		},
		{
			name: "named target port resolved per pod; pods lacking it are skipped for that port",
			svc:  service(http, port("metrics", 9090, intstr.FromInt32(9090))),
			pods: []*corev1.Pod{
				newPod("a", "10.1.0.1").obj(),
				newPod("b", "10.1.0.2").ports(corev1.ContainerPort{Name: "http", ContainerPort: 8081}).obj(),
				newPod("c", "10.1.0.3").ports().obj(),
				newPod("udp", "10.1.0.4").ports(corev1.ContainerPort{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolUDP}).obj(),
			},
			want: `
- addresses: [10.1.0.1/a]
  ports: [http/8080/TCP, metrics/9090/TCP]
- addresses: [10.1.0.2/b]
  ports: [http/8081/TCP, metrics/9090/TCP]
- addresses: [10.1.0.3/c, 10.1.0.4/udp]
  ports: [metrics/9090/TCP]`,
		},
		{
			name: "the book's multi-port service",
			svc:  service(port("http", 80, intstr.FromInt32(9376)), port("https", 443, intstr.FromInt32(9377))),
			pods: []*corev1.Pod{newPod("a", "10.10.2.2").obj(), newPod("b", "10.10.1.1").obj()},
			want: `
- addresses: [10.10.1.1/b, 10.10.2.2/a]
  ports: [http/9376/TCP, https/9377/TCP]`,
		},
		{
			name: "publishNotReadyAddresses",
			svc: func() *corev1.Service {
				s := service(port("", 80, intstr.IntOrString{}))
				s.Spec.PublishNotReadyAddresses = true
				return s
			}(),
			pods: []*corev1.Pod{newPod("a", "10.1.0.1").notReady().obj()},
			want: `
- addresses: [10.1.0.1/a]
  ports: [/80/TCP]`,
		},
		{
			name: "headless without ports",
			svc:  service(),
			pods: []*corev1.Pod{newPod("a", "10.1.0.1").obj(), newPod("b", "10.1.0.2").notReady().obj()},
			want: `
- addresses: [10.1.0.1/a]
  notReadyAddresses: [10.1.0.2/b]`,
		},
		{
			name: "no pods",
			svc:  service(http),
			want: `[]`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Subsets(tc.svc, tc.pods)
			if g, w := brief(t, got), brief(t, wantSubsets(t, tc.want)); g != w {
				t.Fatalf("got\n%s\nwant\n%s", g, w)
			}
			for _, ss := range got {
				for _, a := range append(ss.Addresses, ss.NotReadyAddresses...) {
					r := a.TargetRef
					if r == nil || r.Kind != "Pod" || r.Namespace != "default" || r.UID != types.UID("uid-"+r.Name) || r.ResourceVersion != "7" || a.Hostname != "" || a.NodeName == nil || *a.NodeName != "node-1" {
						t.Fatalf("address %+v", a)
					}
				}
			}
		})
	}
}

// short is the abbreviated form of subsets used by the table above.
type short struct {
	Addresses         []string `json:"addresses,omitempty"`
	NotReadyAddresses []string `json:"notReadyAddresses,omitempty"`
	Ports             []string `json:"ports,omitempty"`
}

func brief(t *testing.T, subsets []corev1.EndpointSubset) string {
	t.Helper()
	out := []short{}
	for _, ss := range subsets {
		var s short
		for _, a := range ss.Addresses {
			s.Addresses = append(s.Addresses, a.IP+"/"+a.TargetRef.Name)
		}
		for _, a := range ss.NotReadyAddresses {
			s.NotReadyAddresses = append(s.NotReadyAddresses, a.IP+"/"+a.TargetRef.Name)
		}
		for _, p := range ss.Ports {
			s.Ports = append(s.Ports, p.Name+"/"+strconv.Itoa(int(p.Port))+"/"+string(p.Protocol))
		}
		out = append(out, s)
	}
	b, err := yaml.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func wantSubsets(t *testing.T, s string) []corev1.EndpointSubset {
	t.Helper()
	var shorts []short
	if err := yaml.Unmarshal([]byte(s), &shorts); err != nil {
		t.Fatal(err)
	}
	var out []corev1.EndpointSubset
	for _, sh := range shorts {
		var ss corev1.EndpointSubset
		addr := func(v string) corev1.EndpointAddress {
			ip, name, _ := strings.Cut(v, "/")
			return corev1.EndpointAddress{IP: ip, TargetRef: &corev1.ObjectReference{Name: name}}
		}
		for _, a := range sh.Addresses {
			ss.Addresses = append(ss.Addresses, addr(a))
		}
		for _, a := range sh.NotReadyAddresses {
			ss.NotReadyAddresses = append(ss.NotReadyAddresses, addr(a))
		}
		for _, p := range sh.Ports {
			name, rest, _ := strings.Cut(p, "/")
			num, proto, _ := strings.Cut(rest, "/")
			ss.Ports = append(ss.Ports, corev1.EndpointPort{Name: name, Port: intstr.Parse(num).IntVal, Protocol: corev1.Protocol(proto)})
		}
		out = append(out, ss)
	}
	return out
}

func TestEndpoints(t *testing.T) {
	s := service(port("", 80, intstr.IntOrString{}))
	ep := Endpoints(s, []*corev1.Pod{newPod("a", "10.1.0.1").obj()})
	if ep.Name != "web" || ep.Namespace != "default" || ep.Labels["name"] != "web" || len(ep.Subsets) != 1 {
		t.Fatalf("endpoints %+v", ep)
	}
	s.Labels["name"] = "changed"
	if ep.Labels["name"] != "web" {
		t.Fatal("endpoints share the service's labels")
	}
	s.Spec.Selector = nil
	if ep := Endpoints(s, []*corev1.Pod{newPod("a", "10.1.0.1").obj()}); ep != nil {
		t.Fatalf("a service without a selector got endpoints %+v", ep)
	}
}

func TestRepackSubsets(t *testing.T) {
	addr := func(ip string) corev1.EndpointAddress { return corev1.EndpointAddress{IP: ip} }
	p80 := corev1.EndpointPort{Name: "a", Port: 80, Protocol: corev1.ProtocolTCP}
	p81 := corev1.EndpointPort{Name: "b", Port: 81, Protocol: corev1.ProtocolTCP}
	tests := []struct {
		name string
		in   []corev1.EndpointSubset
		want []corev1.EndpointSubset
	}{
		{name: "empty"},
		{
			name: "merges addresses with the same ports and deduplicates",
			in: []corev1.EndpointSubset{
				{Addresses: []corev1.EndpointAddress{addr("1.1.1.2")}, Ports: []corev1.EndpointPort{p80}},
				{Addresses: []corev1.EndpointAddress{addr("1.1.1.1"), addr("1.1.1.2")}, Ports: []corev1.EndpointPort{p80}},
			},
			want: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{addr("1.1.1.1"), addr("1.1.1.2")}, Ports: []corev1.EndpointPort{p80}}},
		},
		{
			name: "merges ports of the same address",
			in: []corev1.EndpointSubset{
				{Addresses: []corev1.EndpointAddress{addr("1.1.1.1")}, Ports: []corev1.EndpointPort{p81}},
				{Addresses: []corev1.EndpointAddress{addr("1.1.1.1")}, Ports: []corev1.EndpointPort{p80}},
			},
			want: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{addr("1.1.1.1")}, Ports: []corev1.EndpointPort{p80, p81}}},
		},
		{
			name: "ready wins over not ready for the same port",
			in: []corev1.EndpointSubset{
				{NotReadyAddresses: []corev1.EndpointAddress{addr("1.1.1.1")}, Ports: []corev1.EndpointPort{p80}},
				{Addresses: []corev1.EndpointAddress{addr("1.1.1.1")}, Ports: []corev1.EndpointPort{p80}},
			},
			want: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{addr("1.1.1.1")}, Ports: []corev1.EndpointPort{p80}}},
		},
		{
			name: "different port sets stay apart, ordered by first address",
			in: []corev1.EndpointSubset{
				{Addresses: []corev1.EndpointAddress{addr("10.0.0.9")}, Ports: []corev1.EndpointPort{p80, p81}},
				{Addresses: []corev1.EndpointAddress{addr("10.0.0.10")}, Ports: []corev1.EndpointPort{p80}},
			},
			want: []corev1.EndpointSubset{
				{Addresses: []corev1.EndpointAddress{addr("10.0.0.9")}, Ports: []corev1.EndpointPort{p80, p81}},
				{Addresses: []corev1.EndpointAddress{addr("10.0.0.10")}, Ports: []corev1.EndpointPort{p80}},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := RepackSubsets(tc.in)
			if !equality.Semantic.DeepEqual(got, tc.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tc.want)
			}
			// Repacking is idempotent.
			if again := RepackSubsets(got); !equality.Semantic.DeepEqual(again, got) {
				t.Fatalf("repacking again gave %+v", again)
			}
		})
	}
}

func TestChanged(t *testing.T) {
	s := service(port("", 80, intstr.IntOrString{}))
	pods := []*corev1.Pod{newPod("a", "10.1.0.1").obj(), newPod("b", "10.1.0.2").obj()}
	cur := Endpoints(s, pods)
	reordered := Endpoints(s, []*corev1.Pod{pods[1], pods[0]})
	tests := []struct {
		name string
		cur  *corev1.Endpoints
		next *corev1.Endpoints
		want bool
	}{
		{"none yet", nil, cur, true},
		{"same pods in another order", cur, reordered, false},
		{"a pod went", cur, Endpoints(s, pods[:1]), true},
		{"a pod became unready", cur, Endpoints(s, []*corev1.Pod{pods[0], newPod("b", "10.1.0.2").notReady().obj()}), true},
		{"empty vs nil subsets", &corev1.Endpoints{Subsets: []corev1.EndpointSubset{}}, &corev1.Endpoints{}, false},
		{"labels changed", cur, func() *corev1.Endpoints { e := cur.DeepCopy(); e.Labels = nil; return e }(), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Changed(tc.cur, tc.next); got != tc.want {
				t.Fatalf("Changed = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestKubernetes(t *testing.T) {
	ips := mustIPs(t, "20.1.0.0/16")
	s := KubernetesService(ips.Kubernetes(), 6443)
	if s.Spec.ClusterIP != "20.1.0.1" || s.Spec.Ports[0].Port != 443 || s.Spec.Ports[0].TargetPort.IntVal != 6443 || s.Spec.Selector != nil || s.Labels["component"] != "apiserver" {
		t.Fatalf("service %+v", s)
	}
	if err := ips.Allocate(netip.MustParseAddr(s.Spec.ClusterIP)); err != nil {
		t.Fatal(err)
	}
	ep := KubernetesEndpoints(netip.MustParseAddr("192.168.1.128"), 6443)
	if ep.Name != "kubernetes" || ep.Namespace != "default" || ep.Subsets[0].Addresses[0].IP != "192.168.1.128" || ep.Subsets[0].Ports[0] != (corev1.EndpointPort{Name: "https", Port: 6443, Protocol: corev1.ProtocolTCP}) {
		t.Fatalf("endpoints %+v", ep)
	}
}
