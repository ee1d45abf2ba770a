package podsync

import (
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func testPod(name, ns, uid string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: typesUID(uid)}}
}

func TestHashContainer(t *testing.T) {
	base := corev1.Container{Name: "web", Image: "nginx:1.9"}
	hex8 := regexp.MustCompile(`^[0-9a-f]{8}$`)
	tests := []struct {
		name   string
		change func(c *corev1.Container)
		same   bool
	}{
		{"identical spec", func(c *corev1.Container) {}, true},
		{"image", func(c *corev1.Container) { c.Image = "nginx:1.10" }, false},
		{"args", func(c *corev1.Container) { c.Args = []string{"-g", "daemon off;"} }, false},
		{"env", func(c *corev1.Container) { c.Env = []corev1.EnvVar{{Name: "A", Value: "1"}} }, false},
		{"port", func(c *corev1.Container) { c.Ports = []corev1.ContainerPort{{ContainerPort: 80}} }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := base
			tt.change(&c)
			h0, h1 := HashContainer(&base), HashContainer(&c)
			if !hex8.MatchString(h1) {
				t.Errorf("hash %q is not 8 hex digits", h1)
			}
			if (h0 == h1) != tt.same {
				t.Errorf("hash %s vs %s: same = %v, want %v", h0, h1, h0 == h1, tt.same)
			}
		})
	}
}

func TestSandboxHash(t *testing.T) {
	pod := testPod("web", "default", "u1")
	pod.Spec.Containers = []corev1.Container{{Name: "web", Image: "nginx"}}
	h := SandboxHash(pod)
	tests := []struct {
		name   string
		change func(p *corev1.Pod)
		same   bool
	}{
		{"image change keeps the sandbox", func(p *corev1.Pod) { p.Spec.Containers[0].Image = "nginx:2" }, true},
		{"host port", func(p *corev1.Pod) {
			p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 8080}}
		}, false},
		{"host network", func(p *corev1.Pod) { p.Spec.HostNetwork = true }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := pod.DeepCopy()
			tt.change(p)
			if got := SandboxHash(p); (got == h) != tt.same {
				t.Errorf("hash %s vs %s: same = %v, want %v", h, got, got == h, tt.same)
			}
		})
	}
}

func TestContainerName(t *testing.T) {
	tests := []struct {
		name                 string
		pod                  *corev1.Pod
		container, hash, sfx string
		want                 string
	}{
		{"book infra", testPod("frontend-4t52y", "development", "813e3870-8149-11e5-823b-000c2921ba71"),
			"POD", "855eeb3d", "2b66f05e",
			"k8s_POD.855eeb3d_frontend-4t52y_development_813e3870-8149-11e5-823b-000c2921ba71_2b66f05e"},
		{"book app", testPod("frontend-n9nlm", "development", "813e2dd9-8149-11e5-823b-000c2921ba71"),
			"php-redis", "6ad3289e", "af6dd859",
			"k8s_php-redis.6ad3289e_frontend-n9nlm_development_813e2dd9-8149-11e5-823b-000c2921ba71_af6dd859"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ContainerName(tt.pod, tt.container, tt.hash, tt.sfx)
			if got != tt.want {
				t.Fatalf("ContainerName = %q, want %q", got, tt.want)
			}
			n, ok := ParseContainerName("/" + got)
			want := Name{tt.container, tt.hash, tt.pod.Name, tt.pod.Namespace, string(tt.pod.UID), tt.sfx}
			if !ok || n != want {
				t.Errorf("ParseContainerName = %+v, %v; want %+v", n, ok, want)
			}
		})
	}
}

func TestParseContainerNameRejects(t *testing.T) {
	for _, name := range []string{
		"", "nginx", "/k8s_web_pod_ns_uid_sfx", "k8s_web.1234_pod_ns_uid", "k9_web.1234_pod_ns_uid_sfx",
		"k8s_web.1234_pod_ns_uid_sfx_extra", "k8s_.1234_pod_ns_uid_sfx", "k8s_web._pod_ns_uid_sfx",
		"k8s_web.1234__ns_uid_sfx",
	} {
		t.Run(name, func(t *testing.T) {
			if n, ok := ParseContainerName(name); ok {
				t.Errorf("ParseContainerName(%q) = %+v, want no match", name, n)
			}
		})
	}
}

func FuzzContainerName(f *testing.F) {
	f.Add("web", "6ad3289e", "frontend-n9nlm", "development", "813e2dd9-8149-11e5-823b-000c2921ba71", "af6dd859")
	f.Add("POD", "855eeb3d", "a.b.c", "ns", "u", "00000000")
	f.Fuzz(func(t *testing.T, container, hash, pod, ns, uid, sfx string) {
		for _, s := range []string{container, hash, pod, ns, uid, sfx} {
			if s == "" || strings.Contains(s, "_") {
				return // not a valid Kubernetes name or uid
			}
		}
		if strings.Contains(hash, ".") {
			return // hashes are hex
		}
		p := testPod(pod, ns, uid)
		name := ContainerName(p, container, hash, sfx)
		got, ok := ParseContainerName(name)
		want := Name{container, hash, pod, ns, uid, sfx}
		if !ok || got != want {
			t.Errorf("ParseContainerName(%q) = %+v, %v; want %+v", name, got, ok, want)
		}
	})
}

func TestLabels(t *testing.T) {
	grace := int64(5)
	tests := []struct {
		name  string
		grace *int64
		want  string
	}{
		{"default grace period", nil, "30"},
		{"pod grace period", &grace, "5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := testPod("web", "prod", "u1")
			p.Spec.TerminationGracePeriodSeconds = tt.grace
			l := Labels(p, "node-1", "app", "0000abcd", 3)
			want := map[string]string{
				LabelPodName: "web", LabelPodNamespace: "prod", LabelPodUID: "u1", LabelContainer: "app",
				LabelHash: "0000abcd", LabelRestartCount: "3", LabelGracePeriod: tt.want, LabelNode: "node-1",
			}
			if len(l) != len(want) {
				t.Errorf("labels %v, want %v", l, want)
			}
			for k, v := range want {
				if l[k] != v {
					t.Errorf("label %s = %q, want %q", k, l[k], v)
				}
			}
		})
	}
}

func TestFullName(t *testing.T) {
	if got := FullName(testPod("web", "prod", "u")); got != "web_prod" {
		t.Errorf("FullName = %q", got)
	}
}

func typesUID(s string) types.UID { return types.UID(s) }
