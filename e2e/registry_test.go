package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// privateRegistry is Debian's docker-registry serving on loopback with htpasswd
// authentication, holding one image pushed by the test.
type privateRegistry struct {
	addr  string // 127.0.0.1:port
	image string // the image pushed to it, absent from the engine once set up
	users map[string]string
}

// startPrivateRegistry starts the registry with the users given (name to password),
// pushes the busybox test image to it as the first user, and removes the local tag
// so that a node must pull it. The registry and the tag go when the test ends.
func startPrivateRegistry(t *testing.T, users map[string]string) *privateRegistry {
	t.Helper()
	requireDocker(t)
	bin, err := exec.LookPath("docker-registry")
	if err != nil {
		t.Skipf("skipped: the docker-registry binary is not installed (apt-get install docker-registry): %v", err)
	}
	htpasswd, err := exec.LookPath("htpasswd")
	if err != nil {
		t.Skipf("skipped: htpasswd is not installed (apt-get install apache2-utils): %v", err)
	}
	dir := t.TempDir()
	var entries []byte
	for user, pass := range users {
		out, err := exec.Command(htpasswd, "-Bbn", user, pass).Output()
		if err != nil {
			t.Fatalf("htpasswd: %v", err)
		}
		entries = append(entries, bytes.TrimSpace(out)...)
		entries = append(entries, '\n')
	}
	pwfile := writeFile(t, dir, "htpasswd", string(entries))
	r := &privateRegistry{addr: freeLoopbackAddr(t), users: users}
	cfg := writeFile(t, dir, "config.yml", fmt.Sprintf(`version: 0.1
log:
  level: info
storage:
  filesystem:
    rootdirectory: %s
http:
  addr: %s
auth:
  htpasswd:
    realm: kubeactor-test
    path: %s
`, filepath.Join(dir, "data"), r.addr, pwfile))
	var out Background
	cmd := exec.Command(bin, "serve", cfg)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start docker-registry: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("docker-registry log:\n%s", out.Output())
		}
	})
	Eventually(t, 30*time.Second, "registry up", func() error {
		select {
		case <-exited:
			t.Fatalf("docker-registry exited:\n%s", out.Output())
		default:
		}
		resp, err := http.Get("http://" + r.addr + "/v2/")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			return fmt.Errorf("GET /v2/ without credentials: %s, want 401", resp.Status)
		}
		return nil
	})

	// Push the busybox test image as one of the users, with a client config of the
	// test's own, then drop the local tag.
	r.image = r.addr + "/kubeactor-test/busybox:pulltest-" + randHex(4)
	t.Cleanup(func() { _ = exec.Command("docker", "rmi", r.image).Run() })
	dockerCfg := t.TempDir()
	user := firstUser(users)
	docker := func(stdin string, args ...string) {
		t.Helper()
		c := exec.Command("docker", append([]string{"--config", dockerCfg}, args...)...)
		c.Stdin = strings.NewReader(stdin)
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("docker %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	docker("", "tag", imageBusybox, r.image)
	docker(users[user], "login", "--username", user, "--password-stdin", r.addr)
	docker("", "push", r.image)
	r.untag(t)
	return r
}

// untag removes the local tag of the pushed image, so that the next pod pulls it.
func (r *privateRegistry) untag(t *testing.T) {
	t.Helper()
	if out, err := exec.Command("docker", "rmi", r.image).CombinedOutput(); err != nil {
		t.Fatalf("docker rmi %s: %v\n%s", r.image, err, out)
	}
	if err := exec.Command("docker", "image", "inspect", r.image).Run(); err == nil {
		t.Fatalf("%s still present after docker rmi", r.image)
	}
}

func firstUser(users map[string]string) string {
	first := ""
	for u := range users {
		if first == "" || u < first {
			first = u
		}
	}
	return first
}

// dockerConfigJSONSecret is a kubernetes.io/dockerconfigjson secret for one registry.
func dockerConfigJSONSecret(name, registry, user, pass string) *corev1.Secret {
	b, _ := json.Marshal(map[string]any{"auths": map[string]any{registry: map[string]string{
		"auth": base64.StdEncoding.EncodeToString([]byte(user + ":" + pass)),
	}}})
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Type:       corev1.SecretTypeDockerConfigJson,
		Data:       map[string][]byte{corev1.DockerConfigJsonKey: b},
	}
}

// dockercfgSecret is a kubernetes.io/dockercfg secret for one registry.
func dockercfgSecret(name, registry, user, pass string) *corev1.Secret {
	b, _ := json.Marshal(map[string]any{registry: map[string]string{
		"username": user, "password": pass, "email": user + "@example.com",
	}})
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Type:       corev1.SecretTypeDockercfg,
		Data:       map[string][]byte{corev1.DockerConfigKey: b},
	}
}

// TestDockerImagePullSecrets: a node pulls from a private registry (Debian's
// docker-registry with htpasswd, on loopback) with the credentials of a pod's
// kubernetes.io/dockerconfigjson or kubernetes.io/dockercfg secret, trying each
// matching credential in turn and going on without a secret that does not exist;
// without credentials, or with wrong ones, the container waits with ErrImagePull
// (then ImagePullBackOff) and the registry's reason, and a Failed event says so.
func TestDockerImagePullSecrets(t *testing.T) {
	users := map[string]string{"json-user": "pw-" + randHex(8), "cfg-user": "pw-" + randHex(8)}
	for u, pw := range users {
		RegisterSecret(t, u+"'s password", pw)
		RegisterSecret(t, u+"'s credentials", u+":"+pw)
	}
	RegisterSecret(t, "the wrong credentials", "json-user:not-the-password")
	reg := startPrivateRegistry(t, users)
	// The node's other ports stay off: another agent on the machine may hold them.
	// Both processes log at --v=4: the passwords must not be in their logs.
	requireDocker(t)
	n := startDockerNodeOn(t, StartServer(t, "", "--v=4"), "--read-only-port=0", "--healthz-port=0", "--v=4")
	ctx := context.Background()
	for _, s := range []*corev1.Secret{
		dockerConfigJSONSecret("reg-json", reg.addr, "json-user", users["json-user"]),
		dockercfgSecret("reg-cfg", "http://"+reg.addr, "cfg-user", users["cfg-user"]),
		dockerConfigJSONSecret("reg-wrong", reg.addr, "json-user", "not-the-password"),
	} {
		if _, err := n.cs.CoreV1().Secrets("default").Create(ctx, s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	createPod := func(name string, secrets ...string) {
		t.Helper()
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{
				Name: "app", Image: reg.image, Command: []string{"sleep", "3600"},
			}}},
		}
		for _, s := range secrets {
			pod.Spec.ImagePullSecrets = append(pod.Spec.ImagePullSecrets, corev1.LocalObjectReference{Name: s})
		}
		if _, err := n.cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pulled := func(name string) {
		t.Helper()
		n.waitPod(name, 90*time.Second, "Running", running)
		Eventually(t, 30*time.Second, name+": pulled event", func() error {
			if ev := n.events(name); !strings.Contains(ev, "Successfully pulled image") {
				return fmt.Errorf("events:\n%s", ev)
			}
			return nil
		})
		reg.untag(t)
	}

	t.Run("dockerconfigjson", func(t *testing.T) {
		createPod("pull-json", "reg-json")
		pulled("pull-json")
	})
	t.Run("dockercfg", func(t *testing.T) {
		createPod("pull-cfg", "reg-cfg")
		pulled("pull-cfg")
	})
	t.Run("each matching credential in turn, a missing secret left out", func(t *testing.T) {
		createPod("pull-turn", "absent", "reg-wrong", "reg-cfg")
		pulled("pull-turn")
		Eventually(t, 30*time.Second, "missing secret event", func() error {
			if ev := n.events("pull-turn"); !strings.Contains(ev, "FailedToRetrieveImagePullSecret") || !strings.Contains(ev, "absent") {
				return fmt.Errorf("events:\n%s", ev)
			}
			return nil
		})
	})

	refused := []struct {
		name    string
		secrets []string
		reason  string // the registry's, as the engine reports it
	}{
		{name: "pull-none", reason: "no basic auth credentials"},
		{name: "pull-wrong", secrets: []string{"reg-wrong"}, reason: "unauthorized"},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			createPod(tt.name, tt.secrets...)
			// ErrImagePull, then ImagePullBackOff until the next try: both carry the
			// registry's reason.
			n.waitPod(tt.name, 90*time.Second, "ErrImagePull or ImagePullBackOff with the registry's reason", func(p *corev1.Pod) error {
				for _, c := range p.Status.ContainerStatuses {
					w := c.State.Waiting
					if w != nil && (w.Reason == "ErrImagePull" || w.Reason == "ImagePullBackOff") &&
						strings.Contains(w.Message, tt.reason) && strings.Contains(w.Message, reg.image) {
						t.Logf("waiting %s: %s", w.Reason, w.Message)
						return nil
					}
				}
				return fmt.Errorf("no container waiting on its pull with %q (events:\n%s)", tt.reason, n.events(tt.name))
			})
			n.waitPod(tt.name, 90*time.Second, "ImagePullBackOff", waitingReason("ImagePullBackOff"))
			Eventually(t, 30*time.Second, "Failed event", func() error {
				list, err := n.cs.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + tt.name})
				if err != nil {
					return err
				}
				for _, e := range list.Items {
					if e.Type == corev1.EventTypeWarning && e.Reason == "Failed" && strings.Contains(e.Message, tt.reason) {
						return nil
					}
				}
				return fmt.Errorf("no Warning Failed event with %q:\n%s", tt.reason, n.events(tt.name))
			})
			if err := exec.Command("docker", "image", "inspect", reg.image).Run(); err == nil {
				t.Errorf("%s is present: it was pulled without the right credentials", reg.image)
			}
		})
	}

	// Secrets are secret: neither the registry's passwords (right and wrong) nor
	// the credentials built from them are in the logs of the server and the node
	// agent or in the events, in plain or base64 form.
	var checks []leakCheck
	for _, u := range []string{"json-user", "cfg-user"} {
		checks = append(checks, leakCheck{u + "'s password", users[u]}, leakCheck{u + "'s credentials", u + ":" + users[u]})
	}
	checks = append(checks, leakCheck{"the wrong credentials", "json-user:not-the-password"})
	n.agent.Stop(t)
	for _, src := range []struct{ name, text, mustName string }{
		{"server log", n.s.Logs(), "reg-json"},
		{"agent log", n.agent.Logs(), "pull-turn"},
		{"events", n.s.MustKubectl(t, "", "get", "events", "-o", "json"), "pull-wrong"},
	} {
		if !strings.Contains(src.text, src.mustName) {
			t.Errorf("the %s does not mention %q: not the material to search", src.name, src.mustName)
		}
		for _, chk := range checks {
			for form, v := range chk.forms() {
				if i := strings.Index(src.text, v); i >= 0 {
					t.Errorf("the %s holds %s (%s) in: %s", src.name, chk.what, form, around(src.text, i, len(v)))
				}
			}
		}
	}
}
