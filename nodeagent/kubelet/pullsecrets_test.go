package kubelet

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestAgentImagePullSecrets: the agent gives the pull the credentials of the pod's
// pull secrets that match the image's registry, in turn until one works, leaving
// out a secret that does not exist; without a working one the container waits with
// ErrImagePull (then ImagePullBackOff) and the registry's reason.
func TestAgentImagePullSecrets(t *testing.T) {
	const image = "reg.example.com:5000/team/app:1"
	eng, cs := runAgent(t)
	eng.mu.Lock()
	eng.registry = map[string]string{image: "right:pw"}
	eng.mu.Unlock()
	ctx := context.Background()
	auth := func(user, pass string) string {
		return base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))
	}
	for _, s := range []*corev1.Secret{
		{ObjectMeta: metav1.ObjectMeta{Name: "wrong", Namespace: "default"}, Type: corev1.SecretTypeDockerConfigJson,
			Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths": {"reg.example.com:5000": {"auth": "` + auth("wrong", "nope") + `"}}}`)}},
		{ObjectMeta: metav1.ObjectMeta{Name: "right", Namespace: "default"}, Type: corev1.SecretTypeDockercfg,
			Data: map[string][]byte{corev1.DockerConfigKey: []byte(`{"https://reg.example.com:5000/v1/": {"username": "right", "password": "pw"}}`)}},
		{ObjectMeta: metav1.ObjectMeta{Name: "elsewhere", Namespace: "default"}, Type: corev1.SecretTypeDockerConfigJson,
			Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths": {"reg.example.com": {"auth": "` + auth("elsewhere", "pw") + `"}}}`)}},
	} {
		if _, err := cs.CoreV1().Secrets("default").Create(ctx, s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pods := cs.CoreV1().Pods("default")
	tests := []struct {
		name    string
		secrets []string
		pulls   []string // the users tried, in order
		reason  string   // "" when the pod runs
	}{
		{name: "in-turn", secrets: []string{"absent", "elsewhere", "wrong", "right"}, pulls: []string{"wrong", "right"}},
		{name: "none", pulls: []string{""}, reason: "no basic auth credentials"},
		{name: "only-wrong", secrets: []string{"wrong"}, pulls: []string{"wrong"}, reason: "unauthorized: authentication required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eng.mu.Lock()
			eng.pulls = nil
			delete(eng.images, image)
			eng.mu.Unlock()
			p := testPod(tt.name, corev1.RestartPolicyAlways)
			p.Spec.Containers[0].Image = image
			for _, s := range tt.secrets {
				p.Spec.ImagePullSecrets = append(p.Spec.ImagePullSecrets, corev1.LocalObjectReference{Name: s})
			}
			if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			eventually(t, "pod status", func() error {
				p, err := pods.Get(ctx, tt.name, metav1.GetOptions{})
				if err != nil {
					return err
				}
				for _, c := range p.Status.ContainerStatuses {
					if tt.reason == "" && c.State.Running != nil {
						return nil
					}
					if w := c.State.Waiting; tt.reason != "" && w != nil && (w.Reason == "ErrImagePull" || w.Reason == "ImagePullBackOff") && strings.Contains(w.Message, tt.reason) {
						return nil
					}
				}
				return fmt.Errorf("status %+v", p.Status.ContainerStatuses)
			})
			if err := pods.Delete(ctx, tt.name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			eng.mu.Lock()
			got := slices.Clone(eng.pulls)
			eng.mu.Unlock()
			var want []string
			for _, u := range tt.pulls {
				want = append(want, image+" "+u)
			}
			// A refused pull is retried only after its back-off (10 s): one round.
			if !slices.Equal(got, want) {
				t.Errorf("pulls tried %q, want %q", got, want)
			}
		})
	}
}
