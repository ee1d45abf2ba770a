package proxy

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeactor/kubeactor/actors/kinds"
	"github.com/kubeactor/kubeactor/internal/poll"
)

func TestAnnouncePatch(t *testing.T) {
	marked := func(mode string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Annotations: map[string]string{kinds.ServiceProxyAnnotation: mode, "other": "x"}}}
	}
	tests := []struct {
		name string
		node *corev1.Node
		mode string
		want string
	}{
		{"unmarked node gets the mark", &corev1.Node{}, "iptables", `{"metadata":{"annotations":{"kubeactor.io/service-proxy":"iptables"}}}`},
		{"marked already: nothing", marked("iptables"), "iptables", ""},
		{"another mode: rewritten", marked("iptables"), "userspace", `{"metadata":{"annotations":{"kubeactor.io/service-proxy":"userspace"}}}`},
		{"stop: the mark goes, nothing else", marked("userspace"), "", `{"metadata":{"annotations":{"kubeactor.io/service-proxy":null}}}`},
		{"stop, unmarked: nothing", &corev1.Node{}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(announcePatch(tt.node, tt.mode)); got != tt.want {
				t.Fatalf("patch %s, want %s", got, tt.want)
			}
		})
	}
}

// TestAnnounce: the proxy marks its node once the node exists (kube-proxy started
// before its kubelet), marks it again after a replace that drops the mark (the
// book's unschedule_node.yaml), and takes the mark away when it stops.
func TestAnnounce(t *testing.T) {
	cs := fakeClientset()
	log := logrus.New()
	log.SetOutput(io.Discard)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); announce(ctx, cs, "n1", "userspace", log) }()
	defer func() { stop(); <-done }()

	mark := func() (string, error) {
		n, err := cs.CoreV1().Nodes().Get(context.Background(), "n1", metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		return n.Annotations[kinds.ServiceProxyAnnotation], nil
	}
	waitMark := func(what, want string) {
		t.Helper()
		poll.Until(t, 10*time.Second, what, func() error {
			got, err := mark()
			if err != nil || got != want {
				return fmt.Errorf("mark %q (%v), want %q", got, err, want)
			}
			return nil
		})
	}
	if _, err := cs.CoreV1().Nodes().Create(context.Background(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitMark("the node registers", "userspace")
	replaced := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Spec: corev1.NodeSpec{Unschedulable: true}}
	if _, err := cs.CoreV1().Nodes().Update(context.Background(), replaced, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitMark("replaced without the mark", "userspace")
	stop()
	<-done
	if got, err := mark(); err != nil || got != "" {
		t.Fatalf("after the stop: mark %q, %v; want none", got, err)
	}
}
