package sim

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var t0 = time.Date(2015, 7, 13, 10, 0, 0, 0, time.UTC)

// podBuilder builds test pods: newPod("web").phase(...).obj().
type podBuilder struct{ p *corev1.Pod }

func newPod(name string) podBuilder {
	return podBuilder{&corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: "uid-" + "1"},
		Spec: corev1.PodSpec{NodeName: "sim-1", Containers: []corev1.Container{
			{Name: "web", Image: "nginx:1.7.9"}, {Name: "log", Image: "busybox"},
		}},
	}}
}

func (b podBuilder) phase(p corev1.PodPhase) podBuilder { b.p.Status.Phase = p; return b }
func (b podBuilder) deleting() podBuilder {
	at := metav1.NewTime(t0)
	b.p.DeletionTimestamp = &at
	return b
}
func (b podBuilder) init(name, image string) podBuilder {
	b.p.Spec.InitContainers = append(b.p.Spec.InitContainers, corev1.Container{Name: name, Image: image})
	return b
}
func (b podBuilder) status(f func(*corev1.PodStatus)) podBuilder { f(&b.p.Status); return b }
func (b podBuilder) obj() *corev1.Pod                            { return b.p }

func TestDecide(t *testing.T) {
	tests := []struct {
		name string
		pod  *corev1.Pod
		want Action
	}{
		{"new pod", newPod("a").obj(), Start},
		{"pending", newPod("a").phase(corev1.PodPending).obj(), Start},
		{"running", newPod("a").phase(corev1.PodRunning).obj(), Leave},
		{"failed", newPod("a").phase(corev1.PodFailed).obj(), Leave},
		{"succeeded", newPod("a").phase(corev1.PodSucceeded).obj(), Leave},
		{"deleting while pending", newPod("a").deleting().obj(), Remove},
		{"deleting while running", newPod("a").phase(corev1.PodRunning).deleting().obj(), Remove},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Decide(tt.pod); got != tt.want {
				t.Errorf("Decide = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestRunningStatus(t *testing.T) {
	earlier := metav1.NewTime(t0.Add(-time.Minute))
	now := t0.Add(1500 * time.Millisecond)
	at := metav1.NewTime(now.Truncate(time.Second))
	tests := []struct {
		name          string
		pod           *corev1.Pod
		wantStart     metav1.Time
		wantScheduled metav1.Time
		wantInit      int
		wantQOS       corev1.PodQOSClass
	}{
		{"fresh pod", newPod("a").obj(), at, at, 0, ""},
		{"keeps what the server set", newPod("a").phase(corev1.PodPending).status(func(s *corev1.PodStatus) {
			s.QOSClass = corev1.PodQOSBestEffort
			s.StartTime = &earlier
			s.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: earlier}}
		}).obj(), earlier, earlier, 0, corev1.PodQOSBestEffort},
		{"init containers completed", newPod("a").init("setup", "busybox").obj(), at, at, 1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.pod.DeepCopy()
			st := RunningStatus(tt.pod, "127.16.0.2", "10.100.1.2", now)
			if st.Phase != corev1.PodRunning || st.HostIP != "127.16.0.2" || st.PodIP != "10.100.1.2" {
				t.Errorf("phase %s hostIP %s podIP %s", st.Phase, st.HostIP, st.PodIP)
			}
			if len(st.PodIPs) != 1 || st.PodIPs[0].IP != "10.100.1.2" || len(st.HostIPs) != 1 || st.HostIPs[0].IP != "127.16.0.2" {
				t.Errorf("podIPs %+v hostIPs %+v", st.PodIPs, st.HostIPs)
			}
			if !st.StartTime.Equal(&tt.wantStart) {
				t.Errorf("startTime %s, want %s", st.StartTime, tt.wantStart)
			}
			if st.QOSClass != tt.wantQOS {
				t.Errorf("qosClass %q, want %q", st.QOSClass, tt.wantQOS)
			}
			want := map[corev1.PodConditionType]bool{corev1.PodScheduled: true, corev1.PodInitialized: true, corev1.ContainersReady: true, corev1.PodReady: true}
			for _, c := range st.Conditions {
				if !want[c.Type] || c.Status != corev1.ConditionTrue {
					t.Errorf("condition %+v", c)
				}
				delete(want, c.Type)
				if c.Type == corev1.PodScheduled && !c.LastTransitionTime.Equal(&tt.wantScheduled) {
					t.Errorf("PodScheduled transition %s, want %s", c.LastTransitionTime, tt.wantScheduled)
				}
			}
			if len(want) > 0 {
				t.Errorf("missing conditions %v", want)
			}
			if len(st.ContainerStatuses) != 2 {
				t.Fatalf("containerStatuses %+v", st.ContainerStatuses)
			}
			for i, cs := range st.ContainerStatuses {
				c := tt.pod.Spec.Containers[i]
				if cs.Name != c.Name || cs.Image != c.Image || cs.ImageID != "sim://"+c.Image ||
					cs.ContainerID != "sim://uid-1-"+c.Name || !cs.Ready || cs.RestartCount != 0 ||
					cs.State.Running == nil || !cs.State.Running.StartedAt.Equal(&at) {
					t.Errorf("container status %d: %+v", i, cs)
				}
			}
			if len(st.InitContainerStatuses) != tt.wantInit {
				t.Fatalf("initContainerStatuses %+v", st.InitContainerStatuses)
			}
			for _, cs := range st.InitContainerStatuses {
				if cs.State.Terminated == nil || cs.State.Terminated.ExitCode != 0 || cs.State.Terminated.Reason != "Completed" {
					t.Errorf("init container status %+v", cs)
				}
			}
			if !apiequality.Semantic.DeepEqual(in, tt.pod) {
				t.Errorf("RunningStatus changed its input")
			}
		})
	}
}

func TestRejectedStatus(t *testing.T) {
	st := RejectedStatus(newPod("a").obj(), "OutOfpods", "Pod cannot be started due to exceeded capacity", t0)
	if st.Phase != corev1.PodFailed || st.Reason != "OutOfpods" || st.PodIP != "" || st.StartTime == nil {
		t.Errorf("status %+v", st)
	}
}
