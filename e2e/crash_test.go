package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestCrashKeepsAcknowledgedWrites kills the server with SIGKILL while clients are
// creating pods, restarts it on the same data, and checks that every create that
// got a 2xx is there, complete, and that the revision counter did not go back.
func TestCrashKeepsAcknowledgedWrites(t *testing.T) {
	dir := t.TempDir()
	s := StartServer(t, dir)

	var (
		mu     sync.Mutex
		acked  = map[string]int64{} // name -> resourceVersion of the 2xx answer
		maxRV  int64
		issued atomic.Int64
	)
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 10 * time.Second}
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				name := fmt.Sprintf("crash-%d-%d", w, i)
				body, _ := json.Marshal(crashPod(name))
				issued.Add(1)
				resp, err := client.Post(s.URL+"/api/v1/namespaces/default/pods", "application/json", bytes.NewReader(body))
				if err != nil {
					return // the server is gone
				}
				var got corev1.Pod
				derr := json.NewDecoder(resp.Body).Decode(&got)
				resp.Body.Close()
				if resp.StatusCode != http.StatusCreated || derr != nil {
					continue
				}
				rv, _ := strconv.ParseInt(got.ResourceVersion, 10, 64)
				mu.Lock()
				acked[name] = rv
				if rv > maxRV {
					maxRV = rv
				}
				mu.Unlock()
			}
		}(w)
	}
	Eventually(t, 60*time.Second, "writes acknowledged before the crash", func() error {
		mu.Lock()
		defer mu.Unlock()
		if len(acked) < 500 {
			return fmt.Errorf("%d acknowledged", len(acked))
		}
		return nil
	})
	s.Kill()
	stop()
	wg.Wait()

	s2 := StartServer(t, dir)
	list, err := clientset(t, s2).CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stored := map[string]corev1.Pod{}
	for _, p := range list.Items {
		stored[p.Name] = p
	}
	mu.Lock()
	defer mu.Unlock()
	t.Logf("issued %d creates, %d acknowledged, %d stored after restart", issued.Load(), len(acked), len(stored))
	for name, rv := range acked {
		p, ok := stored[name]
		if !ok {
			t.Errorf("acknowledged pod %s (resourceVersion %d) lost", name, rv)
			continue
		}
		if p.ResourceVersion != strconv.FormatInt(rv, 10) {
			t.Errorf("pod %s: resourceVersion %s after restart, %d when acknowledged", name, p.ResourceVersion, rv)
		}
	}
	for name, p := range stored {
		if p.UID == "" || len(p.Spec.Containers) != 1 || p.Spec.Containers[0].Image != "busybox:1.36" || p.Labels["crash"] != "test" {
			t.Errorf("pod %s is not whole after restart: %+v", name, p)
		}
	}
	if rv, _ := strconv.ParseInt(list.ResourceVersion, 10, 64); rv < maxRV {
		t.Errorf("list resourceVersion %d after restart is below the highest acknowledged %d", rv, maxRV)
	}
	// New writes continue above every acknowledged revision.
	p, err := clientset(t, s2).CoreV1().Pods("default").Create(context.Background(), crashPod("after-restart"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rv, _ := strconv.ParseInt(p.ResourceVersion, 10, 64); rv <= maxRV {
		t.Errorf("first write after restart got resourceVersion %d, not above %d", rv, maxRV)
	}
}

func crashPod(name string) *corev1.Pod {
	p := testPod(name)
	p.Labels = map[string]string{"crash": "test"}
	return p
}
