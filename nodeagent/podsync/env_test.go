package podsync

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func svc(ns, name, ip string, ports ...corev1.ServicePort) corev1.Service {
	return corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       corev1.ServiceSpec{ClusterIP: ip, Ports: ports},
	}
}

func envStrings(vs []corev1.EnvVar) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.Name+"="+v.Value)
	}
	return out
}

func TestServiceEnv(t *testing.T) {
	no := false
	redis := svc("default", "redis-master", "10.0.0.11", corev1.ServicePort{Port: 6379, Protocol: corev1.ProtocolTCP})
	tests := []struct {
		name     string
		ns       string
		links    *bool
		services []corev1.Service
		want     []string
	}{
		{"book example", "default", nil, []corev1.Service{redis}, []string{
			"REDIS_MASTER_SERVICE_HOST=10.0.0.11",
			"REDIS_MASTER_SERVICE_PORT=6379",
			"REDIS_MASTER_PORT=tcp://10.0.0.11:6379",
			"REDIS_MASTER_PORT_6379_TCP=tcp://10.0.0.11:6379",
			"REDIS_MASTER_PORT_6379_TCP_PROTO=tcp",
			"REDIS_MASTER_PORT_6379_TCP_PORT=6379",
			"REDIS_MASTER_PORT_6379_TCP_ADDR=10.0.0.11",
		}},
		{"named ports, udp, sorted, other namespaces and headless skipped", "prod", nil, []corev1.Service{
			svc("prod", "web", "10.0.0.20", corev1.ServicePort{Name: "http", Port: 80}, corev1.ServicePort{Name: "dns-udp", Port: 53, Protocol: corev1.ProtocolUDP}),
			svc("prod", "headless", corev1.ClusterIPNone, corev1.ServicePort{Port: 80}),
			svc("prod", "pending", "", corev1.ServicePort{Port: 80}),
			svc("other", "db", "10.0.0.30", corev1.ServicePort{Port: 5432}),
			svc("default", "kubernetes", "10.0.0.1", corev1.ServicePort{Name: "https", Port: 443}),
		}, []string{
			"KUBERNETES_SERVICE_HOST=10.0.0.1",
			"KUBERNETES_SERVICE_PORT=443",
			"KUBERNETES_SERVICE_PORT_HTTPS=443",
			"KUBERNETES_PORT=tcp://10.0.0.1:443",
			"KUBERNETES_PORT_443_TCP=tcp://10.0.0.1:443",
			"KUBERNETES_PORT_443_TCP_PROTO=tcp",
			"KUBERNETES_PORT_443_TCP_PORT=443",
			"KUBERNETES_PORT_443_TCP_ADDR=10.0.0.1",
			"WEB_SERVICE_HOST=10.0.0.20",
			"WEB_SERVICE_PORT=80",
			"WEB_SERVICE_PORT_HTTP=80",
			"WEB_SERVICE_PORT_DNS_UDP=53",
			"WEB_PORT=tcp://10.0.0.20:80",
			"WEB_PORT_80_TCP=tcp://10.0.0.20:80",
			"WEB_PORT_80_TCP_PROTO=tcp",
			"WEB_PORT_80_TCP_PORT=80",
			"WEB_PORT_80_TCP_ADDR=10.0.0.20",
			"WEB_PORT_53_UDP=udp://10.0.0.20:53",
			"WEB_PORT_53_UDP_PROTO=udp",
			"WEB_PORT_53_UDP_PORT=53",
			"WEB_PORT_53_UDP_ADDR=10.0.0.20",
		}},
		{"service links off: master only", "prod", &no, []corev1.Service{
			svc("prod", "web", "10.0.0.20", corev1.ServicePort{Port: 80}),
			svc("default", "kubernetes", "10.0.0.1", corev1.ServicePort{Port: 443}),
		}, []string{
			"KUBERNETES_SERVICE_HOST=10.0.0.1",
			"KUBERNETES_SERVICE_PORT=443",
			"KUBERNETES_PORT=tcp://10.0.0.1:443",
			"KUBERNETES_PORT_443_TCP=tcp://10.0.0.1:443",
			"KUBERNETES_PORT_443_TCP_PROTO=tcp",
			"KUBERNETES_PORT_443_TCP_PORT=443",
			"KUBERNETES_PORT_443_TCP_ADDR=10.0.0.1",
		}},
		{"ipv6", "default", nil, []corev1.Service{svc("default", "v6", "fd00::1", corev1.ServicePort{Port: 80})}, []string{
			"V6_SERVICE_HOST=fd00::1",
			"V6_SERVICE_PORT=80",
			"V6_PORT=tcp://[fd00::1]:80",
			"V6_PORT_80_TCP=tcp://[fd00::1]:80",
			"V6_PORT_80_TCP_PROTO=tcp",
			"V6_PORT_80_TCP_PORT=80",
			"V6_PORT_80_TCP_ADDR=fd00::1",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := testPod("p", tt.ns, "u")
			pod.Spec.EnableServiceLinks = tt.links
			if got := envStrings(ServiceEnv(pod, tt.services)); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ServiceEnv =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestContainerEnv(t *testing.T) {
	pod := testPod("web-1", "prod", "uid-9")
	pod.Labels = map[string]string{"app": "web"}
	pod.Annotations = map[string]string{"team": "blue"}
	pod.Spec.NodeName, pod.Spec.ServiceAccountName = "node-1", "builder"
	services := []corev1.Service{svc("prod", "db", "10.0.0.30", corev1.ServicePort{Port: 5432})}
	field := func(p string) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: p}}
	}
	secret := func(name, key string, optional bool) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key, Optional: &optional}}
	}
	lookup := func(kind, name, key string) (string, bool, error) {
		switch {
		case kind == LookupSecret && name == "creds" && key == "password":
			return "s3cret", true, nil
		case kind == LookupConfigMap && name == "settings" && key == "mode":
			return "fast", true, nil
		case kind == LookupAllocatable && key == "memory":
			return "8Gi", true, nil
		case name == "broken":
			return "", false, errors.New("api server unreachable")
		}
		return "", false, nil
	}
	tests := []struct {
		name    string
		env     []corev1.EnvVar
		res     corev1.ResourceRequirements
		lookup  EnvLookup
		want    []string // after the service variables
		wantErr string
	}{
		{"expansion against earlier and service vars", []corev1.EnvVar{
			{Name: "HOST", Value: "$(DB_SERVICE_HOST)"},
			{Name: "URL", Value: "pg://$(HOST):$(DB_SERVICE_PORT)/$(LATER)"},
			{Name: "LATER", Value: "x"},
			{Name: "ESC", Value: "$$(HOST)"},
		}, corev1.ResourceRequirements{}, nil, []string{
			"HOST=10.0.0.30", "URL=pg://10.0.0.30:5432/$(LATER)", "LATER=x", "ESC=$(HOST)",
		}, ""},
		{"fieldRefs", []corev1.EnvVar{
			{Name: "NAME", ValueFrom: field("metadata.name")},
			{Name: "NS", ValueFrom: field("metadata.namespace")},
			{Name: "UID", ValueFrom: field("metadata.uid")},
			{Name: "APP", ValueFrom: field("metadata.labels['app']")},
			{Name: "TEAM", ValueFrom: field("metadata.annotations['team']")},
			{Name: "NODE", ValueFrom: field("spec.nodeName")},
			{Name: "SA", ValueFrom: field("spec.serviceAccountName")},
			{Name: "POD_IP", ValueFrom: field("status.podIP")},
			{Name: "POD_IPS", ValueFrom: field("status.podIPs")},
			{Name: "HOST_IP", ValueFrom: field("status.hostIP")},
			{Name: "ME", Value: "$(NAME).$(NS)"},
		}, corev1.ResourceRequirements{}, nil, []string{
			"NAME=web-1", "NS=prod", "UID=uid-9", "APP=web", "TEAM=blue", "NODE=node-1", "SA=builder",
			"POD_IP=10.1.0.5", "POD_IPS=10.1.0.5", "HOST_IP=192.168.0.10", "ME=web-1.prod",
		}, ""},
		{"secret, config map, optional missing", []corev1.EnvVar{
			{Name: "PW", ValueFrom: secret("creds", "password", false)},
			{Name: "MODE", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}, Key: "mode"}}},
			{Name: "OPT", ValueFrom: secret("creds", "nothing", true)},
		}, corev1.ResourceRequirements{}, lookup, []string{"PW=s3cret", "MODE=fast"}, ""},
		{"resources", []corev1.EnvVar{
			{Name: "CPU", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.cpu"}}},
			{Name: "CPU_M", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "requests.cpu", Divisor: resource.MustParse("1m")}}},
			{Name: "MEM_MI", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.memory", Divisor: resource.MustParse("1Mi")}}},
		}, corev1.ResourceRequirements{
			Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m")},
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")},
		}, lookup, []string{"CPU=2", "CPU_M=250", "MEM_MI=8192"}, ""},
		{"redefinition replaces in place", []corev1.EnvVar{
			{Name: "A", Value: "1"}, {Name: "B", Value: "2"}, {Name: "A", Value: "$(A)$(B)"},
		}, corev1.ResourceRequirements{}, nil, []string{"A=12", "B=2"}, ""},
		{"missing secret key", []corev1.EnvVar{{Name: "PW", ValueFrom: secret("creds", "nope", false)}},
			corev1.ResourceRequirements{}, lookup, nil, "env PW"},
		{"lookup error", []corev1.EnvVar{{Name: "PW", ValueFrom: secret("broken", "k", false)}},
			corev1.ResourceRequirements{}, lookup, nil, "api server unreachable"},
		{"no lookup", []corev1.EnvVar{{Name: "PW", ValueFrom: secret("creds", "password", false)}},
			corev1.ResourceRequirements{}, nil, nil, "env PW"},
		{"bad fieldRef", []corev1.EnvVar{{Name: "X", ValueFrom: field("spec.nothing")}},
			corev1.ResourceRequirements{}, nil, nil, "env X"},
		{"limit without allocatable", []corev1.EnvVar{{Name: "C", ValueFrom: &corev1.EnvVarSource{
			ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.cpu"}}}},
			corev1.ResourceRequirements{}, nil, nil, "env C"},
	}
	svcVars := envStrings(ServiceEnv(pod, services))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &corev1.Container{Name: "web", Env: tt.env, Resources: tt.res}
			got, err := ContainerEnv(pod, c, "10.1.0.5", "192.168.0.10", services, tt.lookup)
			if tt.wantErr != "" {
				if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want ErrConfig mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := append(append([]string{}, svcVars...), tt.want...)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("ContainerEnv =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

func TestContainerEnvOverridesServiceVar(t *testing.T) {
	pod := testPod("p", "prod", "u")
	services := []corev1.Service{svc("prod", "db", "10.0.0.30", corev1.ServicePort{Port: 5432})}
	c := &corev1.Container{Name: "c", Env: []corev1.EnvVar{{Name: "DB_SERVICE_HOST", Value: "override"}}}
	got, err := ContainerEnv(pod, c, "", "", services, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got[0] != "DB_SERVICE_HOST=override" || strings.Count(strings.Join(got, "\n"), "DB_SERVICE_HOST=") != 1 {
		t.Errorf("env %v: want one DB_SERVICE_HOST, the container's", got)
	}
}
