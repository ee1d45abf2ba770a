package kinds

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var tableNow = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func ago(d time.Duration) metav1.Time { return metav1.NewTime(tableNow.Add(-d)) }

func running(ready bool, restarts int32) corev1.ContainerStatus {
	return corev1.ContainerStatus{Ready: ready, RestartCount: restarts, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
}

func TestPodRow(t *testing.T) {
	base := func(f func(p *corev1.Pod)) *corev1.Pod {
		return newPod("web").with(func(p *corev1.Pod) {
			p.CreationTimestamp = ago(5 * time.Minute)
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "side", Image: "busybox"})
			p.Status.Phase = corev1.PodRunning
			f(p)
		}).raw()
	}
	tests := []struct {
		name string
		pod  *corev1.Pod
		want []interface{} // NAME READY STATUS RESTARTS AGE IP NODE NOMINATED GATES
	}{
		{"pending, unscheduled", base(func(p *corev1.Pod) { p.Status.Phase = corev1.PodPending }),
			[]interface{}{"web", "0/2", "Pending", "0", "5m", "<none>", "<none>", "<none>", "<none>"}},
		{"running and ready", base(func(p *corev1.Pod) {
			p.Spec.NodeName = "node-1"
			p.Status.PodIPs = []corev1.PodIP{{IP: "10.1.0.7"}}
			p.Status.ContainerStatuses = []corev1.ContainerStatus{running(true, 0), running(true, 0)}
		}), []interface{}{"web", "2/2", "Running", "0", "5m", "10.1.0.7", "node-1", "<none>", "<none>"}},
		{"waiting reason wins", base(func(p *corev1.Pod) {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{running(true, 0), {State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff"}}}}
		}), []interface{}{"web", "1/2", "ImagePullBackOff", "0", "5m", "<none>", "<none>", "<none>", "<none>"}},
		{"crash loop with restarts", base(func(p *corev1.Pod) {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{running(true, 1), {
				RestartCount: 3,
				State:        corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
					ExitCode: 1, FinishedAt: ago(30 * time.Second)}},
			}}
		}), []interface{}{"web", "1/2", "CrashLoopBackOff", "4 (30s ago)", "5m", "<none>", "<none>", "<none>", "<none>"}},
		{"terminated without reason", base(func(p *corev1.Pod) {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137}}}}
		}), []interface{}{"web", "0/2", "ExitCode:137", "0", "5m", "<none>", "<none>", "<none>", "<none>"}},
		{"signal", base(func(p *corev1.Pod) {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Signal: 9}}}}
		}), []interface{}{"web", "0/2", "Signal:9", "0", "5m", "<none>", "<none>", "<none>", "<none>"}},
		{"completed next to running", base(func(p *corev1.Pod) {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}
			p.Status.ContainerStatuses = []corev1.ContainerStatus{running(true, 0), {State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed"}}}}
		}), []interface{}{"web", "1/2", "NotReady", "0", "5m", "<none>", "<none>", "<none>", "<none>"}},
		{"terminating", base(func(p *corev1.Pod) {
			p.DeletionTimestamp = &metav1.Time{Time: tableNow}
			p.Status.ContainerStatuses = []corev1.ContainerStatus{running(true, 0), running(true, 0)}
		}), []interface{}{"web", "2/2", "Terminating", "0", "5m", "<none>", "<none>", "<none>", "<none>"}},
		{"evicted", base(func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed; p.Status.Reason = "Evicted" }),
			[]interface{}{"web", "0/2", "Evicted", "0", "5m", "<none>", "<none>", "<none>", "<none>"}},
		{"init container running", base(func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodPending
			p.Spec.InitContainers = []corev1.Container{{Name: "i1"}, {Name: "i2"}}
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{
				{State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}}},
				{State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}},
			}
		}), []interface{}{"web", "0/2", "Init:1/2", "0", "5m", "<none>", "<none>", "<none>", "<none>"}},
		{"init container failed", base(func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{Name: "i1"}}
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{{State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 2}}}}
		}), []interface{}{"web", "0/2", "Init:ExitCode:2", "0", "5m", "<none>", "<none>", "<none>", "<none>"}},
		{"readiness gates", base(func(p *corev1.Pod) {
			p.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "lb"}, {ConditionType: "dns"}}
			p.Status.Conditions = []corev1.PodCondition{{Type: "lb", Status: corev1.ConditionTrue}}
			p.Status.NominatedNodeName = "node-2"
		}), []interface{}{"web", "0/2", "Running", "0", "5m", "<none>", "<none>", "node-2", "1/2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := pods.RowAt(tt.pod, tableNow); !slices.Equal(got, tt.want) {
				t.Fatalf("row = %#v\nwant  %#v", got, tt.want)
			}
		})
	}
}

func TestServiceRow(t *testing.T) {
	tests := []struct {
		name string
		svc  *corev1.Service
		want []interface{}
	}{
		{"cluster IP", newService(func(s *corev1.ServiceSpec) {
			s.ClusterIP = "10.0.0.10"
			s.Ports = []corev1.ServicePort{{Name: "http", Port: 80}, {Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP}}
		}), []interface{}{"web", "ClusterIP", "10.0.0.10", "<none>", "80/TCP,53/UDP", "<unknown>", "app=web"}},
		{"node port", newService(func(s *corev1.ServiceSpec) {
			s.Type = corev1.ServiceTypeNodePort
			s.ClusterIP = "10.0.0.11"
			s.Ports[0].NodePort = 30001
			s.ExternalIPs = []string{"1.2.3.4"}
		}), []interface{}{"web", "NodePort", "10.0.0.11", "1.2.3.4", "80:30001/TCP", "<unknown>", "app=web"}},
		{"pending load balancer", newService(func(s *corev1.ServiceSpec) {
			s.Type = corev1.ServiceTypeLoadBalancer
			s.Selector = nil
		}), []interface{}{"web", "LoadBalancer", "<none>", "<pending>", "80/TCP", "<unknown>", "<none>"}},
		{"headless", newService(func(s *corev1.ServiceSpec) { s.ClusterIP = "None"; s.Ports = nil }),
			[]interface{}{"web", "ClusterIP", "None", "<none>", "<none>", "<unknown>", "app=web"}},
		{"external name", newService(func(s *corev1.ServiceSpec) {
			s.Type = corev1.ServiceTypeExternalName
			s.ExternalName = "db.example.com"
			s.Ports = nil
		}), []interface{}{"web", "ExternalName", "<none>", "db.example.com", "<none>", "<unknown>", "app=web"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := services.RowAt(tt.svc, tableNow); !slices.Equal(got, tt.want) {
				t.Fatalf("row = %#v\nwant  %#v", got, tt.want)
			}
		})
	}
}

func TestEndpointsCell(t *testing.T) {
	addrs := func(ips ...string) []corev1.EndpointAddress {
		var out []corev1.EndpointAddress
		for _, ip := range ips {
			out = append(out, corev1.EndpointAddress{IP: ip})
		}
		return out
	}
	tests := []struct {
		name    string
		subsets []corev1.EndpointSubset
		want    string
	}{
		{"none", nil, "<none>"},
		{"two", []corev1.EndpointSubset{{Addresses: addrs("10.0.0.1", "10.0.0.2"), Ports: []corev1.EndpointPort{{Port: 80}}}}, "10.0.0.1:80,10.0.0.2:80"},
		{"more", []corev1.EndpointSubset{{Addresses: addrs("10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"), Ports: []corev1.EndpointPort{{Port: 80}}}}, "10.0.0.1:80,10.0.0.2:80,10.0.0.3:80 + 1 more..."},
		{"no ports", []corev1.EndpointSubset{{Addresses: addrs("10.0.0.1")}}, "10.0.0.1"},
		{"ipv6", []corev1.EndpointSubset{{Addresses: addrs("fd00::1"), Ports: []corev1.EndpointPort{{Port: 80}}}}, "[fd00::1]:80"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			row := endpoints.RowAt(&corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "e"}, Subsets: tt.subsets}, tableNow)
			if row[1] != tt.want {
				t.Fatalf("ENDPOINTS = %q, want %q", row[1], tt.want)
			}
		})
	}
}

func TestNodeRow(t *testing.T) {
	ready := func(s corev1.ConditionStatus) []corev1.NodeCondition {
		return []corev1.NodeCondition{{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse}, {Type: corev1.NodeReady, Status: s}}
	}
	tests := []struct {
		name          string
		node          corev1.Node
		status, roles string
	}{
		{"ready", corev1.Node{Status: corev1.NodeStatus{Conditions: ready(corev1.ConditionTrue)}}, "Ready", "<none>"},
		{"not ready", corev1.Node{Status: corev1.NodeStatus{Conditions: ready(corev1.ConditionFalse)}}, "NotReady", "<none>"},
		{"unknown", corev1.Node{}, "Unknown", "<none>"},
		{"cordoned", corev1.Node{Spec: corev1.NodeSpec{Unschedulable: true}, Status: corev1.NodeStatus{Conditions: ready(corev1.ConditionTrue)}}, "Ready,SchedulingDisabled", "<none>"},
		{"roles", corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{
			"node-role.kubernetes.io/worker": "", "node-role.kubernetes.io/control-plane": "", "kubernetes.io/role": "edge"}}}, "Unknown", "control-plane,edge,worker"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := tt.node
			n.Name = "n1"
			n.CreationTimestamp = ago(3 * 24 * time.Hour)
			n.Status.NodeInfo.KubeletVersion = "v1.0.0"
			n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "192.168.1.10"}}
			want := []interface{}{"n1", tt.status, tt.roles, "3d", "v1.0.0", "192.168.1.10", "<none>", "<unknown>", "<unknown>", "<unknown>"}
			if got := nodes.RowAt(&n, tableNow); !slices.Equal(got, want) {
				t.Fatalf("row = %#v\nwant  %#v", got, want)
			}
		})
	}
}

func TestOtherRows(t *testing.T) {
	meta := metav1.ObjectMeta{Name: "x", Namespace: "default", CreationTimestamp: ago(2 * time.Minute)}
	rc := newRC(map[string]string{"app": "web"}, map[string]string{"app": "web"})
	rc.ObjectMeta.CreationTimestamp = meta.CreationTimestamp
	rc.Spec.Replicas = int32p(3)
	rc.Status = corev1.ReplicationControllerStatus{Replicas: 2, ReadyReplicas: 1}
	cases := []struct {
		name string
		res  *Resource
		row  []interface{}
		want []interface{}
	}{
		{"rc", replicationControllers, replicationControllers.RowAt(rc, tableNow),
			[]interface{}{"web", int64(3), int64(2), int64(1), "2m", "c", "nginx", "app=web"}},
		{"namespace", namespaces, namespaces.RowAt(&corev1.Namespace{ObjectMeta: meta, Status: corev1.NamespaceStatus{Phase: "Active"}}, tableNow),
			[]interface{}{"x", "Active", "2m"}},
		{"secret", secrets, secrets.RowAt(&corev1.Secret{ObjectMeta: meta, Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"a": nil, "b": nil}}, tableNow),
			[]interface{}{"x", "Opaque", int64(2), "2m"}},
		{"serviceaccount", serviceAccounts, serviceAccounts.RowAt(&corev1.ServiceAccount{ObjectMeta: meta, Secrets: []corev1.ObjectReference{{Name: "t"}}}, tableNow),
			[]interface{}{"x", int64(1), "2m"}},
		{"event", events, events.RowAt(&corev1.Event{ObjectMeta: meta, Type: "Warning", Reason: "BackOff", Message: " restarting \n",
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "web", FieldPath: "spec.containers{c}"},
			Source:         corev1.EventSource{Component: "kubelet", Host: "n1"},
			FirstTimestamp: ago(10 * time.Minute), LastTimestamp: ago(time.Minute), Count: 4}, tableNow),
			[]interface{}{"60s", "Warning", "BackOff", "pod/web", "spec.containers{c}", "kubelet, n1", "restarting", "10m", int64(4), "x"}},
		{"quota", resourceQuotas, resourceQuotas.RowAt(&corev1.ResourceQuota{ObjectMeta: meta, Status: corev1.ResourceQuotaStatus{
			Hard: corev1.ResourceList{"pods": q("10"), "limits.cpu": q("4"), "requests.cpu": q("2")},
			Used: corev1.ResourceList{"pods": q("3"), "limits.cpu": q("1")}}}, tableNow),
			[]interface{}{"x", "2m", "pods: 3/10, requests.cpu: 0/2", "limits.cpu: 1/4"}},
		{"limitrange", limitRanges, limitRanges.RowAt(&corev1.LimitRange{ObjectMeta: meta}, tableNow),
			[]interface{}{"x", "2025-06-01T11:58:00Z"}},
		{"podtemplate", podTemplates, podTemplates.RowAt(&corev1.PodTemplate{ObjectMeta: meta, Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "a", Image: "i1"}, {Name: "b", Image: "i2"}}}}}, tableNow),
			[]interface{}{"x", "a,b", "i1,i2", "app=web"}},
		{"componentstatus", componentStatuses, componentStatuses.RowAt(&corev1.ComponentStatus{ObjectMeta: meta, Conditions: []corev1.ComponentCondition{
			{Type: corev1.ComponentHealthy, Status: corev1.ConditionTrue, Message: "ok"}}}, tableNow),
			[]interface{}{"x", "Healthy", "ok", ""}},
		{"pv", persistentVolumes, persistentVolumes.RowAt(&corev1.PersistentVolume{ObjectMeta: meta, Spec: corev1.PersistentVolumeSpec{
			Capacity: corev1.ResourceList{"storage": q("5Gi")}, AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany, corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain, ClaimRef: &corev1.ObjectReference{Namespace: "default", Name: "c"}, StorageClassName: "fast"},
			Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeBound}}, tableNow),
			[]interface{}{"x", "5Gi", "RWO,RWX", "Retain", "Bound", "default/c", "fast", "<unset>", "", "2m", "<unset>"}},
		{"pvc", persistentVolumeClaims, persistentVolumeClaims.RowAt(&corev1.PersistentVolumeClaim{ObjectMeta: meta,
			Spec:   corev1.PersistentVolumeClaimSpec{VolumeName: "pv1"},
			Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, Capacity: corev1.ResourceList{"storage": q("5Gi")}, AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}}}, tableNow),
			[]interface{}{"x", "Bound", "pv1", "5Gi", "RWO", "", "<unset>", "2m", "<unset>"}},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			if !slices.Equal(tt.row, tt.want) {
				t.Fatalf("row = %#v\nwant  %#v", tt.row, tt.want)
			}
			if len(tt.row) != len(tt.res.Columns) {
				t.Fatalf("%d cells for %d columns", len(tt.row), len(tt.res.Columns))
			}
		})
	}
}
