package proxy

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kubeactor/kubeactor/internal/poll"
)

func fakeClientset() *fake.Clientset { return fake.NewClientset() }

func createObjects(t *testing.T, cs kubernetes.Interface, svc corev1.Service, ep corev1.Endpoints) {
	t.Helper()
	ctx := context.Background()
	if _, err := cs.CoreV1().Services(svc.Namespace).Create(ctx, &svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Endpoints(ep.Namespace).Create(ctx, &ep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func deleteService(t *testing.T, cs kubernetes.Interface, ns, name string) {
	t.Helper()
	ctx := context.Background()
	if err := cs.CoreV1().Services(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().Endpoints(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond until it holds or a deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	poll.UntilTrue(t, 20*time.Second, what, cond)
}

func TestConfigDefaults(t *testing.T) {
	tests := []struct {
		name string
		in   Config
		want Config
	}{
		{name: "zero", in: Config{}, want: Config{Mode: ModeIPTables, SyncPeriod: 5 * time.Second, MinSyncInterval: 200 * time.Millisecond}},
		{name: "kept", in: Config{Mode: ModeUserspace, SyncPeriod: time.Second, MinSyncInterval: time.Millisecond},
			want: Config{Mode: ModeUserspace, SyncPeriod: time.Second, MinSyncInterval: time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.in.withDefaults(); got != tt.want {
				t.Errorf("withDefaults() = %+v, want %+v", got, tt.want)
			}
		})
	}
}
