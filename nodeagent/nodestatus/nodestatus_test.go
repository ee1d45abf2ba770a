package nodestatus

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var (
	t0   = time.Date(2015, 7, 13, 10, 0, 0, 0, time.UTC)
	info = Info{
		Name: "sim-7", InternalIP: "172.16.0.8", Hostname: "sim-7", PodCIDR: "10.100.7.0/24",
		Capacity: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse("4"),
			corev1.ResourceMemory: resource.MustParse("16Gi"),
			corev1.ResourcePods:   resource.MustParse("110"),
		},
		System: corev1.NodeSystemInfo{KubeletVersion: "v1.0.0-kubeactor", ContainerRuntimeVersion: "sim://1"},
	}
)

func ready(status corev1.ConditionStatus, transition time.Time) corev1.NodeCondition {
	return corev1.NodeCondition{Type: corev1.NodeReady, Status: status, LastTransitionTime: metav1.NewTime(transition)}
}

func TestStatusReadyCondition(t *testing.T) {
	now := t0.Add(time.Hour + 500*time.Millisecond)
	other := corev1.NodeCondition{Type: "NetworkUnavailable", Status: corev1.ConditionFalse}
	tests := []struct {
		name           string
		prev           []corev1.NodeCondition
		wantTransition time.Time
		wantConds      int
	}{
		{"first status", nil, now.Truncate(time.Second), 1},
		{"still ready keeps the transition", []corev1.NodeCondition{ready(corev1.ConditionTrue, t0)}, t0, 1},
		{"back from unknown", []corev1.NodeCondition{ready(corev1.ConditionUnknown, t0)}, now.Truncate(time.Second), 1},
		{"back from false", []corev1.NodeCondition{ready(corev1.ConditionFalse, t0)}, now.Truncate(time.Second), 1},
		{"other conditions kept", []corev1.NodeCondition{other, ready(corev1.ConditionTrue, t0)}, t0, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := Status(corev1.NodeStatus{Conditions: tt.prev}, info, now)
			if len(st.Conditions) != tt.wantConds {
				t.Fatalf("conditions %+v, want %d", st.Conditions, tt.wantConds)
			}
			c := st.Conditions[len(st.Conditions)-1]
			if c.Type != corev1.NodeReady || c.Status != corev1.ConditionTrue || c.Reason != ReasonReady || c.Message != MessageReady {
				t.Errorf("ready condition %+v", c)
			}
			if !c.LastHeartbeatTime.Time.Equal(now.Truncate(time.Second)) {
				t.Errorf("heartbeat %s, want %s", c.LastHeartbeatTime, now.Truncate(time.Second))
			}
			if !c.LastTransitionTime.Time.Equal(tt.wantTransition) {
				t.Errorf("transition %s, want %s", c.LastTransitionTime, tt.wantTransition)
			}
		})
	}
}

func TestStatusReportsNode(t *testing.T) {
	st := Status(corev1.NodeStatus{}, info, t0)
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourcePods} {
		c, a := st.Capacity[r], st.Allocatable[r]
		want := info.Capacity[r]
		if c.Cmp(want) != 0 || a.Cmp(want) != 0 {
			t.Errorf("%s: capacity %s allocatable %s, want %s", r, c.String(), a.String(), want.String())
		}
	}
	wantAddrs := []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "172.16.0.8"}, {Type: corev1.NodeHostName, Address: "sim-7"}}
	if len(st.Addresses) != 2 || st.Addresses[0] != wantAddrs[0] || st.Addresses[1] != wantAddrs[1] {
		t.Errorf("addresses %+v, want %+v", st.Addresses, wantAddrs)
	}
	if st.NodeInfo.KubeletVersion != "v1.0.0-kubeactor" || st.NodeInfo.ContainerRuntimeVersion != "sim://1" {
		t.Errorf("node info %+v", st.NodeInfo)
	}
	// The status must not share the capacity map with info.
	st.Capacity[corev1.ResourceCPU] = resource.MustParse("1")
	if q := info.Capacity[corev1.ResourceCPU]; q.String() != "4" {
		t.Errorf("info capacity changed to %s", q.String())
	}
}

func TestRegistration(t *testing.T) {
	tests := []struct {
		name     string
		cidr     string
		wantCIDR []string
	}{
		{"with a pod CIDR", "10.100.7.0/24", []string{"10.100.7.0/24"}},
		{"left to the server", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := info
			in.PodCIDR = tt.cidr
			n := Registration(in, t0)
			if n.Name != "sim-7" || n.Labels[HostnameLabel] != "sim-7" {
				t.Errorf("meta %+v", n.ObjectMeta)
			}
			if n.Spec.PodCIDR != tt.cidr || len(n.Spec.PodCIDRs) != len(tt.wantCIDR) {
				t.Errorf("spec %+v, want podCIDR %q", n.Spec, tt.cidr)
			}
			if len(n.Status.Conditions) != 1 || n.Status.Conditions[0].Status != corev1.ConditionTrue {
				t.Errorf("status conditions %+v", n.Status.Conditions)
			}
		})
	}
}
