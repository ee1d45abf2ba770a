package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestRCDeleteDefaults: a DELETE of an RC that names no propagation policy orphans its
// pods, as the core/v1 API does; kubectl's delete (and kubeactor's, which agrees with
// it) asks for Background, and the pods go with the RC.
func TestRCDeleteDefaults(t *testing.T) {
	s := StartServer(t, "")
	cs := clientset(t, s)
	rc := strings.Replace(mustRead(t, guestbook("frontend-controller.yaml")), "replicas: 3", "replicas: 2", 1)

	s.MustKubectl(t, rc, "create", "-f", "-")
	waitPods(t, s, "name=frontend", 2)
	if err := cs.CoreV1().ReplicationControllers("default").Delete(context.Background(), "frontend", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 30*time.Second, "the RC gone, its 2 pods orphaned", func() error {
		if _, err := cs.CoreV1().ReplicationControllers("default").Get(context.Background(), "frontend", metav1.GetOptions{}); err == nil {
			return fmt.Errorf("rc still there")
		}
		pods, err := cs.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{LabelSelector: "name=frontend"})
		if err != nil || len(pods.Items) != 2 {
			return fmt.Errorf("pods %v, %v", pods, err)
		}
		for _, p := range pods.Items {
			if len(p.OwnerReferences) != 0 || p.DeletionTimestamp != nil {
				return fmt.Errorf("pod %s: owners %v, deleting %v", p.Name, p.OwnerReferences, p.DeletionTimestamp)
			}
		}
		return nil
	})
	s.MustKubectl(t, "", "delete", "pods", "-l", "name=frontend")

	s.MustKubectl(t, rc, "create", "-f", "-")
	waitPods(t, s, "name=frontend", 2)
	if r := s.Kubeactor(t, "", "delete", "rc", "frontend"); r.Err != nil {
		t.Fatalf("kubeactor delete rc: %v %s", r.Err, r.Stderr)
	}
	waitPods(t, s, "name=frontend", 0)
}
