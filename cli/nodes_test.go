package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// actions is the fake clientset's requests, one per line, with the written bodies.
func actions(cs *fake.Clientset) string {
	var b strings.Builder
	for _, a := range cs.Actions() {
		fmt.Fprintf(&b, "%s %s", a.GetVerb(), a.GetResource().Resource)
		if a.GetNamespace() != "" {
			fmt.Fprintf(&b, " ns=%s", a.GetNamespace())
		}
		switch a := a.(type) {
		case k8stesting.DeleteAction:
			fmt.Fprintf(&b, " %s", a.GetName())
			if g := a.GetDeleteOptions().GracePeriodSeconds; g != nil {
				fmt.Fprintf(&b, " grace=%d", *g)
			}
		case k8stesting.PatchAction:
			fmt.Fprintf(&b, " %s %s %s", a.GetName(), a.GetPatchType(), a.GetPatch())
		case k8stesting.ListAction:
			r := a.GetListRestrictions()
			fmt.Fprintf(&b, " labels=%q fields=%q", r.Labels.String(), r.Fields.String())
		case k8stesting.CreateAction:
			body, err := json.Marshal(a.GetObject())
			if err != nil {
				panic(err)
			}
			fmt.Fprintf(&b, " %s", body)
		case k8stesting.GetAction: // last: the others have names too
			fmt.Fprintf(&b, " %s", a.GetName())
		}
		b.WriteString("\n")
	}
	return b.String()
}

func testNode(name string, unschedulable bool) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{Unschedulable: unschedulable}}
}

func testPod(ns, name, node string, owner *corev1.ReplicationController) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + name)}, Spec: corev1.PodSpec{NodeName: node}}
	if owner != nil {
		p.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(owner, corev1.SchemeGroupVersion.WithKind("ReplicationController"))}
	}
	return p
}

var webRC = &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "rc-uid"}}

func TestPlanDrain(t *testing.T) {
	mirror := testPod("kube-system", "static", "n1", nil)
	mirror.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "x"}
	pods := []corev1.Pod{*testPod("default", "a", "n1", webRC), *testPod("default", "bare", "n1", nil), *testPod("default", "elsewhere", "n2", webRC), *mirror}
	tests := []struct {
		name      string
		force     bool
		delete    []string
		unmanaged []string
		wantErr   string
		warning   string
	}{
		{"refuses bare pods", false, []string{"a"}, []string{"default/bare"}, "cannot delete Pods that declare no controller (use --force to override): default/bare", ""},
		{"force deletes them", true, []string{"a", "bare"}, []string{"default/bare"}, "", "Warning: deleting Pods that declare no controller: default/bare\nWarning: ignoring mirror Pods: kube-system/static\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := planDrain(pods, "n1", tt.force)
			var names []string
			for _, d := range p.Delete {
				names = append(names, d.Name)
			}
			if !reflect.DeepEqual(names, tt.delete) || !reflect.DeepEqual(p.Unmanaged, tt.unmanaged) {
				t.Fatalf("plan %v %v, want %v %v", names, p.Unmanaged, tt.delete, tt.unmanaged)
			}
			var w bytes.Buffer
			err := p.check(tt.force, &w)
			if (err == nil) != (tt.wantErr == "") || (err != nil && err.Error() != tt.wantErr) {
				t.Fatalf("check: %v, want %q", err, tt.wantErr)
			}
			if w.String() != tt.warning {
				t.Fatalf("warning %q, want %q", w.String(), tt.warning)
			}
		})
	}
}

func TestUnschedulablePatch(t *testing.T) {
	for _, tt := range []struct {
		want  bool
		patch string
		verb  string
	}{
		{true, `{"spec":{"unschedulable":true}}`, "cordoned"},
		{false, `{"spec":{"unschedulable":null}}`, "uncordoned"},
	} {
		if got := string(unschedulablePatch(tt.want)); got != tt.patch || cordonVerb(tt.want) != tt.verb {
			t.Errorf("unschedulable %t: %s %s, want %s %s", tt.want, got, cordonVerb(tt.want), tt.patch, tt.verb)
		}
	}
}

// runFake runs f against a fake clientset holding objs and returns the golden text:
// what was printed and the requests made.
func runFake(t *testing.T, objs []runtime.Object, f func(ctx context.Context, cs *fake.Clientset, out, errOut *bytes.Buffer) error) string {
	t.Helper()
	cs := fake.NewSimpleClientset(objs...)
	var out, errOut bytes.Buffer
	err := f(context.Background(), cs, &out, &errOut)
	if err != nil {
		errOut.WriteString(kubectlMessage(err) + "\n")
	}
	return "stdout:\n" + out.String() + "stderr:\n" + errOut.String() + "requests:\n" + actions(cs)
}

func TestNodeCommandsGolden(t *testing.T) {
	tests := []struct {
		name   string
		objs   []runtime.Object
		run    func(ctx context.Context, cs *fake.Clientset, out, errOut *bytes.Buffer) error
		golden string
	}{
		{"cordon", []runtime.Object{testNode("n1", false)}, func(ctx context.Context, cs *fake.Clientset, out, _ *bytes.Buffer) error {
			return setUnschedulable(ctx, cs, "n1", true, out)
		}, "cordon.golden"},
		{"cordon twice", []runtime.Object{testNode("n1", true)}, func(ctx context.Context, cs *fake.Clientset, out, _ *bytes.Buffer) error {
			return setUnschedulable(ctx, cs, "n1", true, out)
		}, "cordon-already.golden"},
		{"uncordon", []runtime.Object{testNode("n1", true)}, func(ctx context.Context, cs *fake.Clientset, out, _ *bytes.Buffer) error {
			return setUnschedulable(ctx, cs, "n1", false, out)
		}, "uncordon.golden"},
		{"drain", []runtime.Object{testNode("n1", false), testPod("default", "web-1", "n1", webRC), testPod("default", "web-2", "n2", webRC)}, func(ctx context.Context, cs *fake.Clientset, out, errOut *bytes.Buffer) error {
			return (&drainCmd{Node: "n1", GracePeriod: 5}).run(ctx, cs, out, errOut, time.Millisecond)
		}, "drain.golden"},
		{"drain refuses a bare pod", []runtime.Object{testNode("n1", false), testPod("default", "bare", "n1", nil)}, func(ctx context.Context, cs *fake.Clientset, out, errOut *bytes.Buffer) error {
			return (&drainCmd{Node: "n1", GracePeriod: -1}).run(ctx, cs, out, errOut, time.Millisecond)
		}, "drain-refused.golden"},
		{"drain --force", []runtime.Object{testNode("n1", false), testPod("default", "bare", "n1", nil)}, func(ctx context.Context, cs *fake.Clientset, out, errOut *bytes.Buffer) error {
			return (&drainCmd{Node: "n1", GracePeriod: -1, Force: true}).run(ctx, cs, out, errOut, time.Millisecond)
		}, "drain-force.golden"},
		{"stop rc", []runtime.Object{&corev1.ReplicationController{ObjectMeta: webRC.ObjectMeta, Spec: corev1.ReplicationControllerSpec{Selector: map[string]string{"run": "web"}}}}, func(ctx context.Context, cs *fake.Clientset, out, _ *bytes.Buffer) error {
			return (&stopCmd{Timeout: time.Minute, Args: []string{"rc/web"}}).run(ctx, cs, "default", out, time.Millisecond)
		}, "stop.golden"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			golden(t, tt.golden, []byte(runFake(t, tt.objs, tt.run)))
		})
	}
}

func TestWorkloadCommandsGolden(t *testing.T) {
	rc := &corev1.ReplicationController{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", Labels: map[string]string{"run": "web"}},
		Spec: corev1.ReplicationControllerSpec{Selector: map[string]string{"run": "web"}, Template: &corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "web", Image: "nginx", Ports: []corev1.ContainerPort{{ContainerPort: 8080}}}},
		}}},
	}
	labeled := testPod("default", "db", "n1", nil)
	labeled.Labels = map[string]string{"app": "db"}
	tests := []struct {
		name   string
		objs   []runtime.Object
		run    func(ctx context.Context, cs *fake.Clientset, out, errOut *bytes.Buffer) error
		golden string
	}{
		{"run rc", nil, func(ctx context.Context, cs *fake.Clientset, out, _ *bytes.Buffer) error {
			c := &runCmd{Name: "web", Image: "nginx:1.7.9", Replicas: 2, Port: 80, Restart: "Always", Env: []string{"B=2", "A=1"}}
			obj, err := c.object()
			if err != nil {
				return err
			}
			return c.create(ctx, cs, "default", obj, out)
		}, "run-rc.golden"},
		{"run pod", nil, func(ctx context.Context, cs *fake.Clientset, out, _ *bytes.Buffer) error {
			c := &runCmd{Name: "once", Image: "busybox", Replicas: 1, Port: -1, Restart: "Never", Labels: "app=x,tier=y", Output: "yaml"}
			obj, err := c.object()
			if err != nil {
				return err
			}
			return c.create(ctx, cs, "default", obj, out)
		}, "run-pod.golden"},
		{"expose rc", []runtime.Object{rc}, func(ctx context.Context, cs *fake.Clientset, out, _ *bytes.Buffer) error {
			return (&exposeCmd{Args: []string{"rc", "web"}, Port: 80, Type: "NodePort", Protocol: "TCP"}).run(ctx, cs, "default", out)
		}, "expose-rc.golden"},
		{"expose pod", []runtime.Object{labeled}, func(ctx context.Context, cs *fake.Clientset, out, _ *bytes.Buffer) error {
			return (&exposeCmd{Args: []string{"pod/db"}, Port: -1, TargetPort: "db", ServiceName: "db-svc", Type: "ClusterIP", Protocol: "TCP"}).run(ctx, cs, "default", out)
		}, "expose-pod-no-port.golden"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			golden(t, tt.golden, []byte(runFake(t, tt.objs, tt.run)))
		})
	}
}

func TestRunObject(t *testing.T) {
	tests := []struct {
		name    string
		cmd     runCmd
		kind    string
		wantErr string
	}{
		{"always is an rc", runCmd{Name: "a", Image: "i", Replicas: 3, Restart: "Always", Port: -1}, "ReplicationController", ""},
		{"never is a pod", runCmd{Name: "a", Image: "i", Replicas: 1, Restart: "Never", Port: -1}, "Pod", ""},
		{"bad restart", runCmd{Name: "a", Image: "i", Replicas: 1, Restart: "Sometimes", Port: -1}, "", "invalid restart policy: Sometimes"},
		{"pod with replicas", runCmd{Name: "a", Image: "i", Replicas: 2, Restart: "Never", Port: -1}, "", "--restart=Never creates a single pod: --replicas must be 1"},
		{"bad env", runCmd{Name: "a", Image: "i", Replicas: 1, Restart: "Always", Port: -1, Env: []string{"X"}}, "", `invalid env: "X", expected KEY=VALUE`},
		{"bad name", runCmd{Name: "A_b", Image: "i", Replicas: 1, Restart: "Always", Port: -1}, "", `invalid name "A_b"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj, err := tt.cmd.object()
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || obj.GetObjectKind().GroupVersionKind().Kind != tt.kind {
				t.Fatalf("object %v %v, want a %s", obj, err, tt.kind)
			}
		})
	}
}

func TestDescribeGolden(t *testing.T) {
	ts := metav1.NewTime(time.Date(2015, 8, 21, 14, 45, 37, 0, time.FixedZone("", 8*3600)))
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-x1", UID: "pod-uid", Labels: map[string]string{"run": "web"},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(webRC, corev1.SchemeGroupVersion.WithKind("ReplicationController"))}},
		Spec: corev1.PodSpec{NodeName: "sim-0", Containers: []corev1.Container{{Name: "web", Image: "nginx:1.7.9",
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"cpu": resource.MustParse("250m"), "memory": resource.MustParse("64Mi")}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, HostIP: "10.0.0.1", PodIP: "172.17.0.5",
			Conditions:        []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "web", Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: ts}}}}},
	}
	ev := func(name, kind, objName, uid, reason string) *corev1.Event {
		return &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
			InvolvedObject: corev1.ObjectReference{Kind: kind, Name: objName, Namespace: "default", UID: types.UID(uid)},
			Reason:         reason, Message: reason + " " + objName, Count: 1, FirstTimestamp: ts, LastTimestamp: ts,
			Source: corev1.EventSource{Component: "scheduler"}}
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", Labels: map[string]string{"run": "web"}},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"run": "web"}, Type: corev1.ServiceTypeNodePort, ClusterIP: "10.254.0.9",
			Ports: []corev1.ServicePort{{Port: 80, Protocol: corev1.ProtocolTCP, NodePort: 30080}}}}
	eps := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Subsets: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: "172.17.0.5"}}, Ports: []corev1.EndpointPort{{Port: 80}}}}}
	n := testNode("sim-0", true)
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: ts, Reason: "KubeletReady"}}
	objs := []runtime.Object{p, svc, eps, n, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}},
		&corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}, Spec: corev1.ReplicationControllerSpec{Selector: map[string]string{"run": "web"}}, Status: corev1.ReplicationControllerStatus{Replicas: 1}},
		ev("e1", "Pod", "web-x1", "pod-uid", "Scheduled"), ev("e2", "Pod", "other", "", "Scheduled"), ev("e3", "Pod", "web-x1", "old-uid", "Killing")}
	for _, tt := range []struct {
		args   []string
		golden string
	}{
		{[]string{"pod", "web-x1"}, "describe-pod.golden"},
		{[]string{"svc/web", "rc/web"}, "describe-svc-rc.golden"},
		{[]string{"nodes", "sim-0"}, "describe-node.golden"},
		{[]string{"ns", "default"}, "describe-namespace.golden"},
		{[]string{"secrets", "x"}, "describe-unsupported.golden"},
	} {
		t.Run(tt.golden, func(t *testing.T) {
			golden(t, tt.golden, []byte(runFake(t, objs, func(ctx context.Context, cs *fake.Clientset, out, _ *bytes.Buffer) error {
				return (&describeCmd{Args: tt.args}).run(ctx, cs, "default", out)
			})))
		})
	}
}

func TestEventSelector(t *testing.T) {
	got := eventSelector("Pod", &metav1.ObjectMeta{Name: "x", Namespace: "ns", UID: "u"})
	want := "involvedObject.kind=Pod,involvedObject.name=x,involvedObject.namespace=ns,involvedObject.uid=u"
	if got != want {
		t.Fatalf("eventSelector = %q, want %q", got, want)
	}
}
