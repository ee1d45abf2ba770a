package kinds

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestImagePullPolicyDefault(t *testing.T) {
	tests := []struct {
		image string
		want  corev1.PullPolicy
	}{
		{"nginx", corev1.PullAlways},
		{"nginx:latest", corev1.PullAlways},
		{"nginx:1.25", corev1.PullIfNotPresent},
		{"registry.local:5000/team/app", corev1.PullAlways},
		{"registry.local:5000/team/app:v2", corev1.PullIfNotPresent},
		{"localhost/app:latest", corev1.PullAlways},
		{"nginx@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", corev1.PullIfNotPresent},
		{"nginx:latest@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", corev1.PullAlways},
		{"nginx:1.0@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", corev1.PullIfNotPresent},
		{"NotValid:latest", corev1.PullIfNotPresent}, // unparsable: the server assumes a tag
		{"", corev1.PullIfNotPresent},
	}
	for _, tt := range tests {
		t.Run(tt.image, func(t *testing.T) {
			pod := newPod("p").ctr(func(c *corev1.Container) { c.Image = tt.image }).obj()
			if got := pod.Spec.Containers[0].ImagePullPolicy; got != tt.want {
				t.Fatalf("pull policy for %q = %s, want %s", tt.image, got, tt.want)
			}
		})
	}
	// An explicit policy is kept.
	pod := newPod("p").ctr(func(c *corev1.Container) { c.Image = "nginx"; c.ImagePullPolicy = corev1.PullNever }).obj()
	if got := pod.Spec.Containers[0].ImagePullPolicy; got != corev1.PullNever {
		t.Fatalf("explicit policy overwritten: %s", got)
	}
}

func TestPodDefaults(t *testing.T) {
	pod := newPod("web").with(func(p *corev1.Pod) {
		p.Spec.Volumes = []corev1.Volume{
			{Name: "none"},
			{Name: "sec", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s"}}},
		}
	}).ctr(func(c *corev1.Container) {
		c.Ports = []corev1.ContainerPort{{ContainerPort: 80}}
		c.LivenessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromInt32(80)}}}
		c.Resources.Limits = corev1.ResourceList{"cpu": q("500m")}
		c.Env = []corev1.EnvVar{{Name: "NS", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}}}
	}).obj()

	s := pod.Spec
	c := s.Containers[0]
	checks := []struct {
		name      string
		got, want interface{}
	}{
		{"restartPolicy", s.RestartPolicy, corev1.RestartPolicyAlways},
		{"dnsPolicy", s.DNSPolicy, corev1.DNSClusterFirst},
		{"terminationGracePeriodSeconds", *s.TerminationGracePeriodSeconds, int64(30)},
		{"schedulerName", s.SchedulerName, "default-scheduler"},
		{"securityContext", *s.SecurityContext, corev1.PodSecurityContext{}},
		{"enableServiceLinks", *s.EnableServiceLinks, true},
		{"terminationMessagePath", c.TerminationMessagePath, "/dev/termination-log"},
		{"terminationMessagePolicy", c.TerminationMessagePolicy, corev1.TerminationMessageReadFile},
		{"imagePullPolicy", c.ImagePullPolicy, corev1.PullIfNotPresent},
		{"port protocol", c.Ports[0].Protocol, corev1.ProtocolTCP},
		{"probe timeout", c.LivenessProbe.TimeoutSeconds, int32(1)},
		{"probe period", c.LivenessProbe.PeriodSeconds, int32(10)},
		{"probe success", c.LivenessProbe.SuccessThreshold, int32(1)},
		{"probe failure", c.LivenessProbe.FailureThreshold, int32(3)},
		{"httpGet scheme", c.LivenessProbe.HTTPGet.Scheme, corev1.URISchemeHTTP},
		{"httpGet path", c.LivenessProbe.HTTPGet.Path, "/"},
		{"requests from limits", c.Resources.Requests.Cpu().String(), "500m"},
		{"fieldRef apiVersion", c.Env[0].ValueFrom.FieldRef.APIVersion, "v1"},
		{"empty volume source", s.Volumes[0].EmptyDir != nil, true},
		{"secret defaultMode", *s.Volumes[1].Secret.DefaultMode, int32(0o644)},
	}
	for _, ck := range checks {
		t.Run(ck.name, func(t *testing.T) {
			if !equality.Semantic.DeepEqual(ck.got, ck.want) {
				t.Fatalf("%s = %v, want %v", ck.name, ck.got, ck.want)
			}
		})
	}
}

func TestPodPrepareForCreate(t *testing.T) {
	tests := []struct {
		name string
		res  corev1.ResourceRequirements
		want corev1.PodQOSClass
	}{
		{"nothing set", corev1.ResourceRequirements{}, corev1.PodQOSBestEffort},
		{"limits only become requests", corev1.ResourceRequirements{Limits: corev1.ResourceList{"cpu": q("1"), "memory": q("1Gi")}}, corev1.PodQOSGuaranteed},
		{"requests below limits", corev1.ResourceRequirements{Limits: corev1.ResourceList{"cpu": q("1"), "memory": q("1Gi")}, Requests: corev1.ResourceList{"cpu": q("500m")}}, corev1.PodQOSBurstable},
		{"cpu only", corev1.ResourceRequirements{Requests: corev1.ResourceList{"cpu": q("100m")}}, corev1.PodQOSBurstable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := newPod("p").ctr(func(c *corev1.Container) { c.Resources = tt.res }).with(func(p *corev1.Pod) {
				p.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "1.2.3.4"}
			}).obj()
			pods.PrepareForCreate(pod)
			want := corev1.PodStatus{Phase: corev1.PodPending, QOSClass: tt.want}
			if !equality.Semantic.DeepEqual(pod.Status, want) || pod.Generation != 1 {
				t.Fatalf("status = %+v generation = %d, want %+v and 1", pod.Status, pod.Generation, want)
			}
		})
	}
}

func TestRCDefaults(t *testing.T) {
	tmpl := &corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
	}
	tests := []struct {
		name         string
		rc           corev1.ReplicationController
		wantSelector map[string]string
		wantLabels   map[string]string
	}{
		{
			name:         "selector and labels from template",
			rc:           corev1.ReplicationController{Spec: corev1.ReplicationControllerSpec{Template: tmpl.DeepCopy()}},
			wantSelector: map[string]string{"app": "web"},
			wantLabels:   map[string]string{"app": "web"},
		},
		{
			name: "own selector and labels kept",
			rc: corev1.ReplicationController{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"tier": "front"}},
				Spec:       corev1.ReplicationControllerSpec{Selector: map[string]string{"app": "web"}, Template: tmpl.DeepCopy()},
			},
			wantSelector: map[string]string{"app": "web"},
			wantLabels:   map[string]string{"tier": "front"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := tt.rc.DeepCopy()
			replicationControllers.Default(rc)
			if *rc.Spec.Replicas != 1 {
				t.Fatalf("replicas = %d, want 1", *rc.Spec.Replicas)
			}
			if !equality.Semantic.DeepEqual(rc.Spec.Selector, tt.wantSelector) || !equality.Semantic.DeepEqual(rc.Labels, tt.wantLabels) {
				t.Fatalf("selector=%v labels=%v", rc.Spec.Selector, rc.Labels)
			}
			if rc.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyAlways || rc.Spec.Template.Spec.Containers[0].ImagePullPolicy != corev1.PullAlways {
				t.Fatal("template spec not defaulted")
			}
		})
	}
}

func TestServiceDefaults(t *testing.T) {
	svc := &corev1.Service{Spec: corev1.ServiceSpec{
		ClusterIP: "10.0.0.10",
		Ports: []corev1.ServicePort{
			{Name: "http", Port: 80},
			{Name: "named", Port: 81, TargetPort: intstr.FromString("web")},
			{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP, TargetPort: intstr.FromInt32(5353)},
		},
	}}
	services.Default(svc)
	s := svc.Spec
	if s.Type != corev1.ServiceTypeClusterIP || s.SessionAffinity != corev1.ServiceAffinityNone {
		t.Fatalf("type=%s affinity=%s", s.Type, s.SessionAffinity)
	}
	if *s.InternalTrafficPolicy != corev1.ServiceInternalTrafficPolicyCluster || s.ExternalTrafficPolicy != "" {
		t.Fatalf("traffic policies %v %q", *s.InternalTrafficPolicy, s.ExternalTrafficPolicy)
	}
	wantTargets := []intstr.IntOrString{intstr.FromInt32(80), intstr.FromString("web"), intstr.FromInt32(5353)}
	wantProtocols := []corev1.Protocol{corev1.ProtocolTCP, corev1.ProtocolTCP, corev1.ProtocolUDP}
	for i, p := range s.Ports {
		if p.TargetPort != wantTargets[i] || p.Protocol != wantProtocols[i] {
			t.Errorf("port %d: target=%v protocol=%s", i, p.TargetPort, p.Protocol)
		}
	}
	if len(s.ClusterIPs) != 1 || s.ClusterIPs[0] != "10.0.0.10" {
		t.Errorf("clusterIPs = %v", s.ClusterIPs)
	}

	lb := &corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, SessionAffinity: corev1.ServiceAffinityClientIP}}
	services.Default(lb)
	if lb.Spec.ExternalTrafficPolicy != corev1.ServiceExternalTrafficPolicyCluster || !*lb.Spec.AllocateLoadBalancerNodePorts ||
		*lb.Spec.SessionAffinityConfig.ClientIP.TimeoutSeconds != 10800 {
		t.Fatalf("load balancer defaults: %+v", lb.Spec)
	}
}

func TestOtherDefaults(t *testing.T) {
	t.Run("namespace", func(t *testing.T) {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "dev"}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating}}
		defaulted(namespaces, ns)
		if ns.Status.Phase != corev1.NamespaceActive || len(ns.Spec.Finalizers) != 1 || ns.Spec.Finalizers[0] != "kubernetes" {
			t.Fatalf("namespace: %+v", ns)
		}
		if ns.Labels["kubernetes.io/metadata.name"] != "dev" {
			t.Fatalf("labels = %v", ns.Labels)
		}
	})
	t.Run("secret", func(t *testing.T) {
		s := &corev1.Secret{Data: map[string][]byte{"a": []byte("1"), "b": []byte("old")}, StringData: map[string]string{"b": "new"}}
		secrets.Default(s)
		if s.Type != corev1.SecretTypeOpaque || string(s.Data["b"]) != "new" || string(s.Data["a"]) != "1" || s.StringData != nil {
			t.Fatalf("secret: %+v", s)
		}
	})
	t.Run("endpoints", func(t *testing.T) {
		e := &corev1.Endpoints{Subsets: []corev1.EndpointSubset{{Ports: []corev1.EndpointPort{{Port: 80}}}}}
		endpoints.Default(e)
		if e.Subsets[0].Ports[0].Protocol != corev1.ProtocolTCP {
			t.Fatal("endpoint port protocol not defaulted")
		}
	})
	t.Run("persistentvolume", func(t *testing.T) {
		pv := &corev1.PersistentVolume{}
		defaulted(persistentVolumes, pv)
		if pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimRetain || pv.Status.Phase != corev1.VolumePending ||
			*pv.Spec.VolumeMode != corev1.PersistentVolumeFilesystem {
			t.Fatalf("pv: %+v", pv)
		}
	})
	t.Run("limitrange", func(t *testing.T) {
		lr := &corev1.LimitRange{Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
			Type: corev1.LimitTypeContainer,
			Max:  corev1.ResourceList{"cpu": q("2")},
			Min:  corev1.ResourceList{"memory": q("64Mi")},
		}}}}
		limitRanges.Default(lr)
		it := lr.Spec.Limits[0]
		if it.Default.Cpu().String() != "2" || it.DefaultRequest.Cpu().String() != "2" || it.DefaultRequest.Memory().String() != "64Mi" {
			t.Fatalf("limit range item: %+v", it)
		}
	})
	t.Run("node allocatable", func(t *testing.T) {
		n := &corev1.Node{Status: corev1.NodeStatus{Capacity: corev1.ResourceList{"cpu": q("4")}}}
		nodes.Default(n)
		if n.Status.Allocatable.Cpu().String() != "4" {
			t.Fatalf("allocatable = %v", n.Status.Allocatable)
		}
	})
}
