package gateway

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/kubeactor/kubeactor/persistence"
)

// nextEvent reads the next event of w or fails after a deadline.
func nextEvent(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatalf("watch closed")
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatalf("no watch event")
	}
	return watch.Event{}
}

func describe(ev watch.Event) string {
	switch o := ev.Object.(type) {
	case *corev1.Pod:
		return string(ev.Type) + " " + o.Name
	case *metav1.Status:
		return string(ev.Type) + " " + string(o.Reason)
	}
	return string(ev.Type)
}

// eachWatchEncoding runs a watch test once with a JSON client and once with a
// protobuf one (as the Kubernetes components and the node agent use), each against
// a fresh server.
func eachWatchEncoding(t *testing.T, o harnessOptions, test func(t *testing.T, h *harness)) {
	for _, enc := range []string{"json", "protobuf"} {
		t.Run(enc, func(t *testing.T) {
			h := newHarness(t, o)
			if enc == "protobuf" {
				h.useProtobuf()
			}
			test(t, h)
		})
	}
}

func TestWatch(t *testing.T) {
	eachWatchEncoding(t, harnessOptions{}, func(t *testing.T, h *harness) {
		ctx := testCtx(t)
		pods := h.client.CoreV1().Pods("default")
		a, err := pods.Create(ctx, newPod("a").label("app", "web").obj(), metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create: %v", err)
		}

		t.Run("initial events then changes", func(t *testing.T) {
			w, err := pods.Watch(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatalf("watch: %v", err)
			}
			defer w.Stop()
			if got := describe(nextEvent(t, w)); got != "ADDED a" {
				t.Fatalf("first event %s", got)
			}
			if _, err := pods.Create(ctx, newPod("b").obj(), metav1.CreateOptions{}); err != nil {
				t.Fatalf("create: %v", err)
			}
			if got := describe(nextEvent(t, w)); got != "ADDED b" {
				t.Fatalf("event %s", got)
			}
			if err := pods.Delete(ctx, "b", metav1.DeleteOptions{}); err != nil {
				t.Fatalf("delete: %v", err)
			}
			if got := describe(nextEvent(t, w)); got != "DELETED b" {
				t.Fatalf("event %s", got)
			}
		})

		t.Run("resume from a resourceVersion", func(t *testing.T) {
			w, err := pods.Watch(ctx, metav1.ListOptions{ResourceVersion: a.ResourceVersion})
			if err != nil {
				t.Fatalf("watch: %v", err)
			}
			defer w.Stop()
			// b was created and deleted after a.
			for _, want := range []string{"ADDED b", "DELETED b"} {
				if got := describe(nextEvent(t, w)); got != want {
					t.Fatalf("event %s, want %s", got, want)
				}
			}
		})

		t.Run("selector turns changes into ADDED and DELETED", func(t *testing.T) {
			w, err := pods.Watch(ctx, metav1.ListOptions{LabelSelector: "app=web", ResourceVersion: "0"})
			if err != nil {
				t.Fatalf("watch: %v", err)
			}
			defer w.Stop()
			if got := describe(nextEvent(t, w)); got != "ADDED a" {
				t.Fatalf("event %s", got)
			}
			c, err := pods.Create(ctx, newPod("c").label("app", "db").obj(), metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("create: %v", err)
			}
			c = c.DeepCopy()
			c.Labels["app"] = "web"
			if c, err = pods.Update(ctx, c, metav1.UpdateOptions{}); err != nil {
				t.Fatalf("update: %v", err)
			}
			if got := describe(nextEvent(t, w)); got != "ADDED c" {
				t.Fatalf("event %s", got)
			}
			c = c.DeepCopy()
			c.Labels["app"] = "cache"
			if _, err = pods.Update(ctx, c, metav1.UpdateOptions{}); err != nil {
				t.Fatalf("update: %v", err)
			}
			if got := describe(nextEvent(t, w)); got != "DELETED c" {
				t.Fatalf("event %s", got)
			}
		})

		t.Run("single name by path", func(t *testing.T) {
			resp, err := http.Get(h.http.URL + "/api/v1/watch/namespaces/default/pods/a?timeoutSeconds=1")
			if err != nil {
				t.Fatalf("watch: %v", err)
			}
			defer resp.Body.Close()
			sc := bufio.NewScanner(resp.Body)
			var lines []string
			for sc.Scan() {
				lines = append(lines, sc.Text())
			}
			if len(lines) != 1 || !strings.HasPrefix(lines[0], `{"type":"ADDED","object":{"kind":"Pod"`) {
				t.Fatalf("lines %v", lines)
			}
		})

		t.Run("watch list ends initial events with a bookmark", func(t *testing.T) {
			w, err := pods.Watch(ctx, metav1.ListOptions{SendInitialEvents: ptr.To(true), AllowWatchBookmarks: true,
				ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, FieldSelector: "metadata.name=a"})
			if err != nil {
				t.Fatalf("watch: %v", err)
			}
			defer w.Stop()
			if got := describe(nextEvent(t, w)); got != "ADDED a" {
				t.Fatalf("event %s", got)
			}
			ev := nextEvent(t, w)
			p, ok := ev.Object.(*corev1.Pod)
			if ev.Type != watch.Bookmark || !ok || p.Annotations[initialEventsEnd] != "true" || p.ResourceVersion == "" {
				t.Fatalf("bookmark %v %+v", ev.Type, ev.Object)
			}
		})
	})
}

func TestWatchBookmarks(t *testing.T) {
	eachWatchEncoding(t, harnessOptions{bookmarkInterval: 20 * time.Millisecond}, func(t *testing.T, h *harness) {
		ctx := testCtx(t)
		pods := h.client.CoreV1().Pods("default")
		if _, err := pods.Create(ctx, newPod("a").obj(), metav1.CreateOptions{}); err != nil {
			t.Fatalf("create: %v", err)
		}
		w, err := pods.Watch(ctx, metav1.ListOptions{AllowWatchBookmarks: true})
		if err != nil {
			t.Fatalf("watch: %v", err)
		}
		defer w.Stop()
		if got := describe(nextEvent(t, w)); got != "ADDED a" {
			t.Fatalf("event %s", got)
		}
		if ev := nextEvent(t, w); ev.Type != watch.Bookmark {
			t.Fatalf("event %s, want a bookmark", describe(ev))
		}
	})
}

func TestWatchCompacted(t *testing.T) {
	eachWatchEncoding(t, harnessOptions{changeLogWindow: 5}, func(t *testing.T, h *harness) {
		ctx := testCtx(t)
		pods := h.client.CoreV1().Pods("default")
		first, err := pods.Create(ctx, newPod("first").obj(), metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		for i := 0; i < 20; i++ {
			if _, err := pods.Create(ctx, newPod(fmt.Sprintf("p%d", i)).obj(), metav1.CreateOptions{}); err != nil {
				t.Fatalf("create: %v", err)
			}
		}
		code, body, _ := h.do(http.MethodGet, "/api/v1/namespaces/default/pods?watch=1&resourceVersion="+first.ResourceVersion, "", "")
		var st metav1.Status
		if err := json.Unmarshal([]byte(body), &st); err != nil {
			t.Fatalf("decode %s: %v", body, err)
		}
		if code != http.StatusGone || st.Reason != metav1.StatusReasonExpired || !strings.HasPrefix(st.Message, "too old resource version: "+first.ResourceVersion) {
			t.Fatalf("code %d status %+v", code, st)
		}
		_, err = pods.Watch(ctx, metav1.ListOptions{ResourceVersion: first.ResourceVersion})
		if !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
			t.Fatalf("client-go watch: %v", err)
		}
	})
}

func TestInformer(t *testing.T) {
	eachWatchEncoding(t, harnessOptions{}, func(t *testing.T, h *harness) {
		ctx := testCtx(t)
		pods := h.client.CoreV1().Pods("default")
		if _, err := pods.Create(ctx, newPod("before").obj(), metav1.CreateOptions{}); err != nil {
			t.Fatalf("create: %v", err)
		}
		var mu sync.Mutex
		var seen []string
		record := func(s string) {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, s)
		}
		factory := informers.NewSharedInformerFactory(h.client, 0)
		inf := factory.Core().V1().Pods().Informer()
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: func(obj interface{}) { record("add " + obj.(*corev1.Pod).Name) },
			UpdateFunc: func(_, obj interface{}) {
				record("update " + obj.(*corev1.Pod).Name + " " + obj.(*corev1.Pod).Labels["v"])
			},
			DeleteFunc: func(obj interface{}) {
				if p, ok := obj.(*corev1.Pod); ok {
					record("delete " + p.Name)
				}
			},
		}); err != nil {
			t.Fatalf("handler: %v", err)
		}
		stop := make(chan struct{})
		defer close(stop)
		factory.Start(stop)
		if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
			t.Fatalf("informer did not sync")
		}
		p, err := pods.Create(ctx, newPod("x").obj(), metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		p = p.DeepCopy()
		p.Labels = map[string]string{"v": "2"}
		if _, err := pods.Update(ctx, p, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("update: %v", err)
		}
		if err := pods.Delete(ctx, "x", metav1.DeleteOptions{}); err != nil {
			t.Fatalf("delete: %v", err)
		}
		want := "add before,add x,update x 2,delete x"
		eventually(t, "informer events", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return strings.Join(seen, ",") == want
		})
	})
}

func TestWatchTable(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	if code, body, _ := h.do(http.MethodPost, "/api/v1/namespaces/default/pods", "application/json", podJSON("a")); code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, body)
	}
	req, err := http.NewRequest(http.MethodGet, h.http.URL+"/api/v1/namespaces/default/pods?watch=true&timeoutSeconds=1", nil)
	if err != nil {
		t.Fatalf("request: %v", err)
	}
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	if !sc.Scan() {
		t.Fatalf("no event: %v", sc.Err())
	}
	var ev struct {
		Type   string
		Object metav1.Table
	}
	if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
		t.Fatalf("decode %s: %v", sc.Text(), err)
	}
	if ev.Type != "ADDED" || ev.Object.Kind != "Table" || len(ev.Object.Rows) != 1 || len(ev.Object.ColumnDefinitions) == 0 {
		t.Fatalf("event %s", sc.Text())
	}
}

// TestWatchProtobufStream reads a protobuf watch off the wire: its content type, and
// frames of a 4-byte length and a WatchEvent whose object decodes as GET's protobuf,
// resourceVersion included.
func TestWatchProtobufStream(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	a, err := h.client.CoreV1().Pods("default").Create(testCtx(t), newPod("a").obj(), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	req, _ := http.NewRequest(http.MethodGet, h.http.URL+"/api/v1/namespaces/default/pods?watch=1&resourceVersion=0&timeoutSeconds=1", nil)
	req.Header.Set("Accept", "application/vnd.kubernetes.protobuf")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "application/vnd.kubernetes.protobuf;stream=watch" {
		t.Fatalf("content type %q", ct)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	var got []string
	for len(body) > 0 {
		if len(body) < 4 || len(body) < 4+int(binary.BigEndian.Uint32(body)) {
			t.Fatalf("truncated frame: %d bytes left", len(body))
		}
		n := binary.BigEndian.Uint32(body)
		var ev metav1.WatchEvent
		if err := ev.Unmarshal(body[4 : 4+n]); err != nil {
			t.Fatalf("watch event: %v", err)
		}
		body = body[4+n:]
		obj, _, err := protobufInfo.Serializer.Decode(ev.Object.Raw, nil, nil)
		if err != nil {
			t.Fatalf("object: %v", err)
		}
		p, ok := obj.(*corev1.Pod)
		if !ok {
			t.Fatalf("object %T", obj)
		}
		got = append(got, ev.Type+" "+p.Name+" "+p.ResourceVersion)
	}
	if want := "ADDED a " + a.ResourceVersion; strings.Join(got, ",") != want {
		t.Fatalf("events %v, want %s", got, want)
	}
}

// TestProtoEvents: the protobuf watchers of one event share one encoding, which
// decodes to the event's object; an event that took the slot of another (a
// revision 4,096 later, or another key at the same revision) is encoded afresh.
func TestProtoEvents(t *testing.T) {
	item := func(name string, rev int64) *persistence.Item {
		return persistence.NewItem(persistence.Key{Resource: "pods", Namespace: "ns", Name: name}, rev,
			&corev1.Pod{TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: fmt.Sprint(rev)}})
	}
	var c protoEvents
	tests := []struct {
		name   string
		it     *persistence.Item
		shared bool // the same bytes as the last encode of "a" at revision 7
	}{
		{name: "first encode", it: item("a", 7)},
		{name: "the same event again", it: item("a", 7), shared: true},
		{name: "another key, same revision", it: item("b", 7)},
		{name: "a revision in the same slot", it: item("a", 7+int64(len(c.slots)))},
		{name: "the first event, evicted", it: item("a", 7)},
		{name: "and shared again", it: item("a", 7), shared: true},
	}
	var last []byte
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := c.encoded(tt.it)
			obj, _, err := protobufInfo.Serializer.Decode(data, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if p := obj.(*corev1.Pod); p.Name != tt.it.Key.Name || p.ResourceVersion != fmt.Sprint(tt.it.Revision) {
				t.Fatalf("decoded %s at %s, want %s at %d", p.Name, p.ResourceVersion, tt.it.Key.Name, tt.it.Revision)
			}
			if shared := last != nil && &data[0] == &last[0]; shared != tt.shared {
				t.Fatalf("shared the last encoding: %v, want %v", shared, tt.shared)
			}
			if tt.it.Key.Name == "a" && tt.it.Revision == 7 {
				last = data
			}
		})
	}
}
