package kinds

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestValidatePod(t *testing.T) {
	tests := []struct {
		name string
		pod  *corev1.Pod
		want []string
	}{
		{"valid", newPod("web").obj(), nil},
		{"no name", newPod("").obj(), []string{"metadata.name:FieldValueRequired"}},
		{"generateName only", newPod("").with(func(p *corev1.Pod) { p.GenerateName = "web-" }).obj(), []string{"metadata.name:FieldValueRequired"}},
		{"bad name", newPod("Web_1").obj(), []string{"metadata.name:FieldValueInvalid"}},
		{"no namespace", newPod("web").with(func(p *corev1.Pod) { p.Namespace = "" }).obj(), []string{"metadata.namespace:FieldValueRequired"}},
		{"no containers", newPod("web").with(func(p *corev1.Pod) { p.Spec.Containers = nil }).obj(), []string{"spec.containers:FieldValueRequired"}},
		{"no image", newPod("web").ctr(func(c *corev1.Container) { c.Image = "" }).obj(), []string{"spec.containers[0].image:FieldValueRequired"}},
		{"bad container name", newPod("web").ctr(func(c *corev1.Container) { c.Name = "Web" }).obj(), []string{"spec.containers[0].name:FieldValueInvalid"}},
		{"duplicate container", newPod("web").with(func(p *corev1.Pod) {
			p.Spec.Containers = append(p.Spec.Containers, p.Spec.Containers[0])
		}).obj(), []string{"spec.containers[1].name:FieldValueDuplicate"}},
		{"port out of range", newPod("web").ctr(func(c *corev1.Container) {
			c.Ports = []corev1.ContainerPort{{ContainerPort: 70000}, {ContainerPort: 80, HostPort: -1}}
		}).obj(), []string{"spec.containers[0].ports[0].containerPort:FieldValueInvalid", "spec.containers[0].ports[1].hostPort:FieldValueInvalid"}},
		{"duplicate port names", newPod("web").ctr(func(c *corev1.Container) {
			c.Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: 80}, {Name: "http", ContainerPort: 81}}
		}).obj(), []string{"spec.containers[0].ports[1].name:FieldValueDuplicate"}},
		{"bad protocol", newPod("web").ctr(func(c *corev1.Container) {
			c.Ports = []corev1.ContainerPort{{ContainerPort: 80, Protocol: "ICMP"}}
		}).obj(), []string{"spec.containers[0].ports[0].protocol:FieldValueNotSupported"}},
		{"bad restart policy", newPod("web").with(func(p *corev1.Pod) { p.Spec.RestartPolicy = "Sometimes" }).obj(), []string{"spec.restartPolicy:FieldValueNotSupported"}},
		{"volume with two sources", newPod("web").with(func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{
				HostPath: &corev1.HostPathVolumeSource{Path: "/data"}, EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
		}).obj(), []string{"spec.volumes[0].emptyDir:FieldValueForbidden"}},
		{"duplicate volumes", newPod("web").with(func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "v"}, {Name: "v"}}
		}).obj(), []string{"spec.volumes[1].name:FieldValueDuplicate"}},
		{"hostPath without path", newPod("web").with(func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{}}}}
		}).obj(), []string{"spec.volumes[0].hostPath.path:FieldValueRequired"}},
		{"mount of unknown volume", newPod("web").ctr(func(c *corev1.Container) {
			c.VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
		}).obj(), []string{"spec.containers[0].volumeMounts[0].name:FieldValueNotFound"}},
		{"request above limit", newPod("web").ctr(func(c *corev1.Container) {
			c.Resources = corev1.ResourceRequirements{Limits: corev1.ResourceList{"cpu": q("1")}, Requests: corev1.ResourceList{"cpu": q("2")}}
		}).obj(), []string{"spec.containers[0].resources.requests:FieldValueInvalid"}},
		{"unknown resource", newPod("web").ctr(func(c *corev1.Container) {
			c.Resources = corev1.ResourceRequirements{Limits: corev1.ResourceList{"gpus": q("1")}}
		}).obj(), []string{"spec.containers[0].resources.limits[gpus]:FieldValueInvalid", "spec.containers[0].resources.requests[gpus]:FieldValueInvalid"}},
		{"bad env name", newPod("web").ctr(func(c *corev1.Container) {
			c.Env = []corev1.EnvVar{{Name: "1=BAD"}, {Name: ""}}
		}).obj(), []string{"spec.containers[0].env[0].name:FieldValueInvalid", "spec.containers[0].env[1].name:FieldValueRequired"}},
		{"probe without handler", newPod("web").ctr(func(c *corev1.Container) {
			c.ReadinessProbe = &corev1.Probe{}
		}).obj(), []string{"spec.containers[0].readinessProbe:FieldValueRequired"}},
		{"probe with two handlers", newPod("web").ctr(func(c *corev1.Container) {
			c.LivenessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
				Exec:      &corev1.ExecAction{Command: []string{"true"}},
				TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(80)},
			}}
		}).obj(), []string{"spec.containers[0].livenessProbe.tcpSocket:FieldValueForbidden"}},
		{"liveness success threshold", newPod("web").ctr(func(c *corev1.Container) {
			c.LivenessProbe = &corev1.Probe{SuccessThreshold: 2, ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromString("http")}}}
		}).obj(), []string{"spec.containers[0].livenessProbe.successThreshold:FieldValueInvalid"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := errKeys(pods.Validate(tt.pod)); !slices.Equal(got, tt.want) {
				t.Fatalf("errors = %v, want %v", got, tt.want)
			}
		})
	}
}

// The gateway's Invalid status prints like kubectl expects.
func TestInvalidMessage(t *testing.T) {
	pod := newPod("x").ctr(func(c *corev1.Container) { c.Image = "" }).obj()
	err := apierrors.NewInvalid(schema.GroupKind{Kind: pods.Kind}, pod.Name, pods.Validate(pod))
	want := `Pod "x" is invalid: spec.containers[0].image: Required value`
	if err.Error() != want {
		t.Fatalf("message = %q, want %q", err.Error(), want)
	}
}

func newRC(selector, tmplLabels map[string]string) *corev1.ReplicationController {
	rc := &corev1.ReplicationController{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: corev1.ReplicationControllerSpec{
			Selector: selector,
			Template: &corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: tmplLabels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
			},
		},
	}
	replicationControllers.Default(rc)
	return rc
}

func TestValidateRC(t *testing.T) {
	web := map[string]string{"app": "web"}
	tests := []struct {
		name string
		rc   *corev1.ReplicationController
		want []string
	}{
		{"valid", newRC(web, web), nil},
		{"selector defaults from template", newRC(nil, web), nil},
		{"selector subset of labels", newRC(web, map[string]string{"app": "web", "v": "1"}), nil},
		{"mismatch", newRC(map[string]string{"app": "db"}, web), []string{"spec.template.metadata.labels:FieldValueInvalid"}},
		{"no selector, no labels", newRC(nil, nil), []string{"spec.selector:FieldValueRequired"}},
		{"negative replicas", func() *corev1.ReplicationController {
			rc := newRC(web, web)
			rc.Spec.Replicas = int32p(-1)
			return rc
		}(), []string{"spec.replicas:FieldValueInvalid"}},
		{"no template", func() *corev1.ReplicationController {
			rc := newRC(web, web)
			rc.Spec.Template = nil
			return rc
		}(), []string{"spec.template:FieldValueRequired"}},
		{"template restartPolicy", func() *corev1.ReplicationController {
			rc := newRC(web, web)
			rc.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
			return rc
		}(), []string{"spec.template.spec.restartPolicy:FieldValueNotSupported"}},
		{"template container errors", func() *corev1.ReplicationController {
			rc := newRC(web, web)
			rc.Spec.Template.Spec.Containers[0].Image = ""
			return rc
		}(), []string{"spec.template.spec.containers[0].image:FieldValueRequired"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := errKeys(replicationControllers.Validate(tt.rc)); !slices.Equal(got, tt.want) {
				t.Fatalf("errors = %v, want %v", got, tt.want)
			}
		})
	}
	errs := replicationControllers.Validate(newRC(map[string]string{"app": "db"}, web))
	want := "spec.template.metadata.labels: Invalid value: {\"app\":\"web\"}: `selector` does not match template `labels`"
	if errs[0].Error() != want {
		t.Fatalf("message = %q, want %q", errs[0].Error(), want)
	}
}

func newService(f func(s *corev1.ServiceSpec)) *corev1.Service {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec:       corev1.ServiceSpec{Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{{Port: 80}}},
	}
	f(&svc.Spec)
	services.Default(svc)
	return svc
}

func TestValidateService(t *testing.T) {
	tests := []struct {
		name string
		svc  *corev1.Service
		want []string
	}{
		{"valid", newService(func(*corev1.ServiceSpec) {}), nil},
		{"headless without ports", newService(func(s *corev1.ServiceSpec) { s.ClusterIP = "None"; s.Ports = nil }), nil},
		{"no ports", newService(func(s *corev1.ServiceSpec) { s.Ports = nil }), []string{"spec.ports:FieldValueRequired"}},
		{"port range", newService(func(s *corev1.ServiceSpec) { s.Ports[0].Port = 70000; s.Ports[0].TargetPort = intstr.FromInt32(80) }), []string{"spec.ports[0].port:FieldValueInvalid"}},
		{"port zero defaults targetPort to zero too", newService(func(s *corev1.ServiceSpec) { s.Ports[0].Port = 0 }), []string{"spec.ports[0].port:FieldValueInvalid", "spec.ports[0].targetPort:FieldValueInvalid"}},
		{"names required with two ports", newService(func(s *corev1.ServiceSpec) {
			s.Ports = []corev1.ServicePort{{Port: 80}, {Port: 443}}
		}), []string{"spec.ports[0].name:FieldValueRequired", "spec.ports[1].name:FieldValueRequired"}},
		{"duplicate names", newService(func(s *corev1.ServiceSpec) {
			s.Ports = []corev1.ServicePort{{Name: "a", Port: 80}, {Name: "a", Port: 443}}
		}), []string{"spec.ports[1].name:FieldValueDuplicate"}},
		{"bad protocol", newService(func(s *corev1.ServiceSpec) { s.Ports[0].Protocol = "HTTP" }), []string{"spec.ports[0].protocol:FieldValueNotSupported"}},
		{"nodePort on ClusterIP", newService(func(s *corev1.ServiceSpec) { s.Ports[0].NodePort = 30001 }), []string{"spec.ports[0].nodePort:FieldValueForbidden"}},
		{"nodePort on NodePort", newService(func(s *corev1.ServiceSpec) { s.Type = corev1.ServiceTypeNodePort; s.Ports[0].NodePort = 30001 }), nil},
		{"bad type", newService(func(s *corev1.ServiceSpec) { s.Type = "Magic" }), []string{"spec.type:FieldValueNotSupported"}},
		{"bad affinity", newService(func(s *corev1.ServiceSpec) { s.SessionAffinity = "Sticky" }), []string{"spec.sessionAffinity:FieldValueNotSupported"}},
		{"bad clusterIP", newService(func(s *corev1.ServiceSpec) { s.ClusterIP = "10.0.0.300" }), []string{"spec.clusterIP:FieldValueInvalid"}},
		{"headless NodePort", newService(func(s *corev1.ServiceSpec) { s.ClusterIP = "None"; s.Type = corev1.ServiceTypeNodePort }), []string{"spec.clusterIP:FieldValueInvalid"}},
		{"bad selector key", newService(func(s *corev1.ServiceSpec) { s.Selector = map[string]string{"bad key": "x"} }), []string{"spec.selector:FieldValueInvalid"}},
		{"name must be DNS-1035", func() *corev1.Service {
			s := newService(func(*corev1.ServiceSpec) {})
			s.Name = "1web"
			return s
		}(), []string{"metadata.name:FieldValueInvalid"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := errKeys(services.Validate(tt.svc)); !slices.Equal(got, tt.want) {
				t.Fatalf("errors = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestValidateOtherKinds(t *testing.T) {
	meta := metav1.ObjectMeta{Name: "x", Namespace: "default"}
	cluster := metav1.ObjectMeta{Name: "x"}
	tests := []struct {
		name string
		res  *Resource
		obj  runtime.Object
		want []string
	}{
		{"namespace ok", namespaces, &corev1.Namespace{ObjectMeta: cluster}, nil},
		{"namespace name is a DNS label", namespaces, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "a.b"}}, []string{"metadata.name:FieldValueInvalid"}},
		{"namespace on cluster kind", nodes, &corev1.Node{ObjectMeta: meta}, []string{"metadata.namespace:FieldValueForbidden"}},
		{"node taint effect", nodes, &corev1.Node{ObjectMeta: cluster, Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: "k", Effect: "Never"}}}}, []string{"spec.taints[0].effect:FieldValueNotSupported"}},
		{"secret ok", secrets, &corev1.Secret{ObjectMeta: meta, Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"a.b-c_d": nil}}, nil},
		{"secret bad key", secrets, &corev1.Secret{ObjectMeta: meta, Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"a/b": nil}}, []string{"data[a/b]:FieldValueInvalid"}},
		{"secret too large", secrets, &corev1.Secret{ObjectMeta: meta, Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"a": make([]byte, 1<<20+1)}}, []string{"data:FieldValueTooLong"}},
		{"tls secret keys", secrets, &corev1.Secret{ObjectMeta: meta, Type: corev1.SecretTypeTLS}, []string{"data[tls.crt]:FieldValueRequired", "data[tls.key]:FieldValueRequired"}},
		{"sa token secret", secrets, &corev1.Secret{ObjectMeta: meta, Type: corev1.SecretTypeServiceAccountToken}, []string{"metadata.annotations[kubernetes.io/service-account.name]:FieldValueRequired"}},
		{"event namespace mismatch", events, &corev1.Event{ObjectMeta: meta, InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "p", Namespace: "other"}}, []string{"involvedObject.namespace:FieldValueInvalid"}},
		{"event ok", events, &corev1.Event{ObjectMeta: meta, Type: "Normal", InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "p", Namespace: "default"}}, nil},
		{"endpoints bad ip", endpoints, &corev1.Endpoints{ObjectMeta: meta, Subsets: []corev1.EndpointSubset{{
			Addresses: []corev1.EndpointAddress{{IP: "nope"}}, Ports: []corev1.EndpointPort{{Port: 80, Protocol: "TCP"}}}}}, []string{"subsets[0].addresses[0].ip:FieldValueInvalid"}},
		{"quota negative", resourceQuotas, &corev1.ResourceQuota{ObjectMeta: meta, Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"pods": q("-1")}}}, []string{"spec.hard[pods]:FieldValueInvalid"}},
		{"limitrange min above max", limitRanges, &corev1.LimitRange{ObjectMeta: meta, Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
			Type: corev1.LimitTypePod, Min: corev1.ResourceList{"cpu": q("2")}, Max: corev1.ResourceList{"cpu": q("1")}}}}}, []string{"spec.limits[0].min[cpu]:FieldValueInvalid"}},
		{"limitrange bad type", limitRanges, &corev1.LimitRange{ObjectMeta: meta, Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{Type: "Node"}}}}, []string{"spec.limits[0].type:FieldValueNotSupported"}},
		{"podtemplate", podTemplates, &corev1.PodTemplate{ObjectMeta: meta}, []string{"template.spec.containers:FieldValueRequired", "template.spec.dnsPolicy:FieldValueRequired", "template.spec.restartPolicy:FieldValueRequired"}},
		{"pv missing", persistentVolumes, &corev1.PersistentVolume{ObjectMeta: cluster}, []string{"spec.accessModes:FieldValueRequired", "spec.capacity:FieldValueRequired", "spec.persistentVolumeReclaimPolicy:FieldValueRequired", "spec:FieldValueRequired"}},
		{"pvc missing", persistentVolumeClaims, &corev1.PersistentVolumeClaim{ObjectMeta: meta}, []string{"spec.accessModes:FieldValueRequired", "spec.resources[storage]:FieldValueRequired"}},
		{"binding", bindings, &corev1.Binding{ObjectMeta: meta, Target: corev1.ObjectReference{Kind: "Pod"}}, []string{"target.kind:FieldValueNotSupported", "target.name:FieldValueRequired"}},
		{"binding ok", bindings, &corev1.Binding{ObjectMeta: meta, Target: corev1.ObjectReference{Kind: "Node", Name: "n1"}}, nil},
		{"serviceaccount", serviceAccounts, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "default"}}, []string{"metadata.name:FieldValueRequired"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := errKeys(tt.res.Validate(tt.obj)); !slices.Equal(got, tt.want) {
				t.Fatalf("errors = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestValidatePodUpdate(t *testing.T) {
	old := newPod("web").with(func(p *corev1.Pod) {
		p.ResourceVersion = "5"
		p.UID = "u1"
		p.Spec.ActiveDeadlineSeconds = int64p(100)
		p.Spec.Tolerations = []corev1.Toleration{{Key: "a", Operator: corev1.TolerationOpExists}}
	}).obj()
	tests := []struct {
		name    string
		mutate  func(p *corev1.Pod)
		want    []string
		wantMsg string
	}{
		{"image change", func(p *corev1.Pod) { p.Spec.Containers[0].Image = "nginx:1.26" }, nil, ""},
		{"labels change", func(p *corev1.Pod) { p.Labels = map[string]string{"a": "b"} }, nil, ""},
		{"deadline decrease", func(p *corev1.Pod) { p.Spec.ActiveDeadlineSeconds = int64p(50) }, nil, ""},
		{"deadline increase", func(p *corev1.Pod) { p.Spec.ActiveDeadlineSeconds = int64p(500) }, []string{"spec.activeDeadlineSeconds:FieldValueInvalid"}, ""},
		{"deadline removed", func(p *corev1.Pod) { p.Spec.ActiveDeadlineSeconds = nil }, []string{"spec.activeDeadlineSeconds:FieldValueInvalid"}, ""},
		{"toleration added", func(p *corev1.Pod) {
			p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Key: "b", Operator: corev1.TolerationOpExists})
		}, nil, ""},
		{"toleration removed", func(p *corev1.Pod) { p.Spec.Tolerations = nil }, []string{"spec:FieldValueForbidden"}, "spec.tolerations"},
		{"restart policy", func(p *corev1.Pod) { p.Spec.RestartPolicy = corev1.RestartPolicyNever }, []string{"spec:FieldValueForbidden"}, "spec.restartPolicy"},
		{"container added", func(p *corev1.Pod) {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "d", Image: "x", ImagePullPolicy: "Always", TerminationMessagePolicy: "File"})
		}, []string{"spec:FieldValueForbidden"}, "spec.containers"},
		{"name change", func(p *corev1.Pod) { p.Name = "other" }, []string{"metadata.name:FieldValueInvalid"}, ""},
		{"uid change", func(p *corev1.Pod) { p.UID = "u2" }, []string{"metadata.uid:FieldValueInvalid"}, ""},
		{"no resourceVersion", func(p *corev1.Pod) { p.ResourceVersion = "" }, []string{"metadata.resourceVersion:FieldValueInvalid"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := old.DeepCopy()
			tt.mutate(pod)
			errs := pods.ValidateUpdate(pod, old)
			if got := errKeys(errs); !slices.Equal(got, tt.want) {
				t.Fatalf("errors = %v, want %v", got, tt.want)
			}
			if tt.wantMsg != "" {
				msg := errs[0].Detail
				if !strings.HasPrefix(msg, "pod updates may not change fields other than `spec.containers[*].image`") || !strings.Contains(msg, tt.wantMsg) {
					t.Fatalf("detail = %q, want the real message naming %s", msg, tt.wantMsg)
				}
			}
		})
	}
}

func TestValidateUpdateImmutability(t *testing.T) {
	t.Run("service clusterIP", func(t *testing.T) {
		old := newService(func(s *corev1.ServiceSpec) { s.ClusterIP = "10.0.0.10" })
		old.ResourceVersion = "1"
		svc := old.DeepCopy()
		svc.Spec.ClusterIP, svc.Spec.ClusterIPs = "10.0.0.11", []string{"10.0.0.11"}
		if got := errKeys(services.ValidateUpdate(svc, old)); !slices.Equal(got, []string{"spec.clusterIPs[0]:FieldValueInvalid"}) {
			t.Fatalf("errors = %v", got)
		}
		// An update that leaves the IP out keeps the allocated one.
		svc = old.DeepCopy()
		svc.Spec.ClusterIP, svc.Spec.ClusterIPs = "", nil
		services.PrepareForUpdate(svc, old)
		if errs := services.ValidateUpdate(svc, old); len(errs) != 0 || svc.Spec.ClusterIP != "10.0.0.10" {
			t.Fatalf("errors = %v clusterIP = %q", errs, svc.Spec.ClusterIP)
		}
	})
	t.Run("pvc spec", func(t *testing.T) {
		old := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "default", ResourceVersion: "1"},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{"storage": q("1Gi")}},
			},
		}
		persistentVolumeClaims.Default(old)
		bind := old.DeepCopy()
		bind.Spec.VolumeName = "pv1"
		if errs := persistentVolumeClaims.ValidateUpdate(bind, old); len(errs) != 0 {
			t.Fatalf("binding the volume: %v", errs)
		}
		change := old.DeepCopy()
		change.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}
		if got := errKeys(persistentVolumeClaims.ValidateUpdate(change, old)); !slices.Equal(got, []string{"spec:FieldValueForbidden"}) {
			t.Fatalf("errors = %v", got)
		}
	})
	t.Run("secret type", func(t *testing.T) {
		old := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "default", ResourceVersion: "1"}, Type: corev1.SecretTypeOpaque}
		s := old.DeepCopy()
		s.Type = "custom/kind"
		if got := errKeys(secrets.ValidateUpdate(s, old)); !slices.Equal(got, []string{"type:FieldValueInvalid"}) {
			t.Fatalf("errors = %v", got)
		}
	})
}

func TestPrepareForUpdate(t *testing.T) {
	old := newPod("web").with(func(p *corev1.Pod) {
		p.Generation = 1
		p.ResourceVersion = "7"
		p.Labels = map[string]string{"v": "1"}
		p.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.5"}
	}).obj()

	t.Run("main resource keeps status, bumps generation on spec change", func(t *testing.T) {
		pod := old.DeepCopy()
		pod.Status = corev1.PodStatus{Phase: corev1.PodFailed}
		pod.Spec.Containers[0].Image = "nginx:2"
		pods.PrepareForUpdate(pod, old)
		if pod.Status.Phase != corev1.PodRunning || pod.Generation != 2 {
			t.Fatalf("status=%s generation=%d", pod.Status.Phase, pod.Generation)
		}
		same := old.DeepCopy()
		same.Labels = map[string]string{"v": "2"}
		pods.PrepareForUpdate(same, old)
		if same.Generation != 1 {
			t.Fatalf("generation bumped without spec change: %d", same.Generation)
		}
	})
	t.Run("status update keeps spec and metadata", func(t *testing.T) {
		pod := old.DeepCopy()
		pod.ResourceVersion = "8"
		pod.Labels = map[string]string{"v": "hacked"}
		pod.Spec.NodeName = "elsewhere"
		pod.Status.Phase = corev1.PodSucceeded
		pods.PrepareForStatusUpdate(pod, old)
		if pod.Status.Phase != corev1.PodSucceeded || pod.Spec.NodeName != "" || pod.Labels["v"] != "1" || pod.ResourceVersion != "8" {
			t.Fatalf("got %+v", pod)
		}
	})
	t.Run("namespace finalize", func(t *testing.T) {
		oldNS := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "dev", ResourceVersion: "3"},
			Spec: corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{"kubernetes"}}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating}}
		ns := oldNS.DeepCopy()
		ns.Spec.Finalizers = nil
		ns.Status.Phase = corev1.NamespaceActive
		PrepareForFinalize(ns, oldNS)
		if len(ns.Spec.Finalizers) != 0 || ns.Status.Phase != corev1.NamespaceTerminating {
			t.Fatalf("got %+v", ns)
		}
		// The main resource cannot drop finalizers.
		ns = oldNS.DeepCopy()
		ns.Spec.Finalizers = nil
		namespaces.PrepareForUpdate(ns, oldNS)
		if len(ns.Spec.Finalizers) != 1 {
			t.Fatalf("finalizers dropped through the main resource")
		}
	})
	t.Run("node update without a pod CIDR keeps the allocated one", func(t *testing.T) {
		tests := []struct {
			name      string
			oldCIDR   string
			newCIDR   string
			wantCIDR  string
			wantError bool
		}{
			{name: "omitted: kept", oldCIDR: "10.1.3.0/24", wantCIDR: "10.1.3.0/24"},
			{name: "same: kept", oldCIDR: "10.1.3.0/24", newCIDR: "10.1.3.0/24", wantCIDR: "10.1.3.0/24"},
			{name: "changed: forbidden", oldCIDR: "10.1.3.0/24", newCIDR: "10.1.4.0/24", wantCIDR: "10.1.4.0/24", wantError: true},
			{name: "none allocated yet: set", newCIDR: "10.1.4.0/24", wantCIDR: "10.1.4.0/24"},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				oldNode := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "kubernetes-minion1", ResourceVersion: "3"}, Spec: corev1.NodeSpec{PodCIDR: tc.oldCIDR}}
				if tc.oldCIDR != "" {
					oldNode.Spec.PodCIDRs = []string{tc.oldCIDR}
				}
				n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "kubernetes-minion1", ResourceVersion: "3"},
					Spec: corev1.NodeSpec{PodCIDR: tc.newCIDR, Unschedulable: true}}
				if tc.newCIDR != "" {
					n.Spec.PodCIDRs = []string{tc.newCIDR}
				}
				nodes.PrepareForUpdate(n, oldNode)
				errs := nodes.ValidateUpdate(n, oldNode)
				if n.Spec.PodCIDR != tc.wantCIDR || (len(errs) > 0) != tc.wantError {
					t.Fatalf("podCIDR %q (want %q), errors %v (want some: %v)", n.Spec.PodCIDR, tc.wantCIDR, errs, tc.wantError)
				}
			})
		}
	})
	t.Run("node keeps status on main update", func(t *testing.T) {
		oldNode := &corev1.Node{Status: corev1.NodeStatus{Phase: corev1.NodeRunning}}
		n := &corev1.Node{}
		nodes.PrepareForUpdate(n, oldNode)
		if n.Status.Phase != corev1.NodeRunning {
			t.Fatal("node status lost")
		}
	})
}
