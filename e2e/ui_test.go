package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// uiRC is the RC the dashboard tests create: three pods on the simulated node.
const uiRC = `apiVersion: v1
kind: ReplicationController
metadata:
  name: frontend
spec:
  replicas: 3
  selector:
    app: frontend
  template:
    metadata:
      labels:
        app: frontend
    spec:
      containers:
      - name: php-redis
        image: kubeactor/testserver
        ports:
        - containerPort: 80
        resources:
          requests:
            cpu: 100m
            memory: 64Mi
`

// uiService selects uiRC's pods.
const uiService = `apiVersion: v1
kind: Service
metadata:
  name: frontend
spec:
  selector:
    app: frontend
  ports:
  - port: 80
`

// browser starts a headless Debian chromium for the test, or skips it, saying why,
// when chromium is not installed.
func browser(t *testing.T) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Skipf("skipped: chromium is not installed (apt-get install chromium): %v", err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1400, 900),
		chromedp.UserDataDir(t.TempDir()))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// navigate opens url in the browser's tab.
func navigate(t *testing.T, ctx context.Context, url string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("navigate to %s: %v", url, err)
	}
}

// evaluate runs a JavaScript expression in the page and returns its value.
func evaluate[T any](ctx context.Context, expr string) (T, error) {
	c, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return chromedp.Run(c, chromedp.Evaluate[T](expr))
}

// waitDOM polls the page until expr (JavaScript) is true, or fails the test at the
// deadline with what the page shows.
func waitDOM(t *testing.T, ctx context.Context, timeout time.Duration, what, expr string) {
	t.Helper()
	Eventually(t, timeout, what, func() error {
		ok, err := evaluate[bool](ctx, expr)
		if err != nil {
			return err
		}
		if !ok {
			text, err := evaluate[string](ctx, `document.getElementById('view').innerText`)
			return fmt.Errorf("the page shows (%v):\n%s", err, text)
		}
		return nil
	})
}

// rows is a JavaScript expression: the rows of the page's tables whose data-name
// starts with prefix, as an array.
func rows(prefix string) string {
	return fmt.Sprintf(`[...document.querySelectorAll('#content tr[data-name^=%q]')]`, prefix)
}

// uiCluster starts a server and one simulated node.
func uiCluster(t *testing.T) *Server {
	t.Helper()
	s := StartServer(t, "")
	startAgent(t, s, "--simulate", "1", "--name-prefix", "ui", "--node-status-update-frequency", "1s")
	return s
}

// TestUIShowsPodsLive opens the dashboard in headless chromium, creates an RC with
// kubectl, and sees its three pods appear and go Running without a reload; then the
// nodes, RCs and pod pages show the node, the RC and the pod, and the book's kube-ui
// address lands on the dashboard.
func TestUIShowsPodsLive(t *testing.T) {
	ctx := browser(t)
	s := uiCluster(t)

	navigate(t, ctx, s.URL+"/ui#/pods")
	waitDOM(t, ctx, 30*time.Second, "the pods page lists no pods yet", `document.querySelector('#content .note')?.textContent === 'No pods.'`)
	// A mark that a reload would erase.
	if _, err := evaluate[bool](ctx, `window.notReloaded = true`); err != nil {
		t.Fatal(err)
	}

	s.MustKubectl(t, uiRC, "create", "-f", "-")
	waitDOM(t, ctx, 60*time.Second, "three frontend pods Running on the pods page",
		rows("frontend-")+`.filter(r => r.dataset.status === 'Running' && r.dataset.namespace === 'default').length === 3`)
	if still, err := evaluate[bool](ctx, `window.notReloaded === true`); err != nil || !still {
		t.Fatalf("the page was reloaded (mark %v, %v)", still, err)
	}
	if live, _ := evaluate[string](ctx, `document.getElementById('live').textContent`); live != "live" {
		t.Errorf("the live badge says %q", live)
	}

	pod, err := evaluate[string](ctx, rows("frontend-")+`[0].dataset.name`)
	if err != nil {
		t.Fatal(err)
	}

	// The other pages, reached by the page's own links (no reload either).
	if err := chromedp.Do(ctx, chromedp.Click(`nav a[data-page="nodes"]`)); err != nil {
		t.Fatal(err)
	}
	waitDOM(t, ctx, 30*time.Second, "the nodes page shows ui-0 Ready with its capacity",
		rows("ui-0")+`.some(r => r.innerText.includes('Ready') && r.innerText.includes('16 GiB'))`)
	if err := chromedp.Do(ctx, chromedp.Click(`nav a[data-page="rcs"]`)); err != nil {
		t.Fatal(err)
	}
	waitDOM(t, ctx, 30*time.Second, "the RCs page shows frontend with 3 desired and 3 current",
		rows("frontend")+`.some(r => [...r.cells].map(c => c.innerText).join('|').startsWith('default|frontend|3|3|'))`)
	if still, _ := evaluate[bool](ctx, `window.notReloaded === true`); !still {
		t.Fatal("the page was reloaded")
	}

	// A pod's page: its status, node and container.
	if _, err := evaluate[string](ctx, fmt.Sprintf(`location.hash = '#/pods/default/%s'`, pod)); err != nil {
		t.Fatal(err)
	}
	waitDOM(t, ctx, 30*time.Second, "the pod's page shows it Running on ui-0 with its container",
		`document.getElementById('pod-summary')?.dataset.status === 'Running' && document.getElementById('pod-summary').innerText.includes('on ui-0') && `+
			rows("php-redis")+`.some(r => r.innerText.includes('kubeactor/testserver'))`)
	// An event about the pod appears on its page, live.
	now := time.Now().UTC().Format(time.RFC3339)
	s.MustKubectl(t, fmt.Sprintf(`apiVersion: v1
kind: Event
metadata:
  name: %[1]s.ui
involvedObject:
  kind: Pod
  namespace: default
  name: %[1]s
reason: Inspected
message: seen by the dashboard test
type: Normal
count: 2
source:
  component: e2e
firstTimestamp: %[2]s
lastTimestamp: %[2]s
`, pod, now), "create", "-f", "-")
	waitDOM(t, ctx, 30*time.Second, "the pod's event on its page",
		`[...document.querySelectorAll('#content tr')].some(r => r.innerText.includes('Inspected') && r.innerText.includes('seen by the dashboard test'))`)
	// The trace link is there exactly when the server answers the trace path.
	resp, err := http.Get(s.URL + "/kubeactor/v1/traces/pods/default/" + pod)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	wantLink := resp.StatusCode == http.StatusOK
	waitDOM(t, ctx, 30*time.Second, fmt.Sprintf("the trace link shown=%v (the path answers %d)", wantLink, resp.StatusCode),
		fmt.Sprintf(`(document.getElementById('trace-link') !== null) === %v`, wantLink))
	// Its explanation (the explain path's lines) and its trace as a tree: the pod's
	// story from the RC's sync to the binding, each span indented below its cause.
	waitDOM(t, ctx, 30*time.Second, "the pod's page shows its explanation",
		`(document.getElementById('pod-explain')?.innerText || '').includes('node: ui-0') && document.getElementById('pod-explain').innerText.includes('scheduled on ui-0')`)
	if wantLink {
		waitDOM(t, ctx, 30*time.Second, "the pod's page shows its trace from the RC's sync to the binding",
			`(() => { const rows = [...document.querySelectorAll('#pod-trace tr[data-span]')];
			  const at = (n) => rows.findIndex(r => r.dataset.span === n);
			  const indent = (n) => Number(rows[at(n)].cells[3].firstChild.dataset.depth);
			  return at('replicationcontrollers sync') >= 0 && at('scheduler round') > at('replicationcontrollers sync') &&
			    at('pods binding') > at('scheduler round') && indent('pods binding') > indent('scheduler round') &&
			    indent('scheduler round') > indent('replicationcontrollers sync'); })()`)
	}

	// The events page lists it, with a link to the pod.
	if err := chromedp.Do(ctx, chromedp.Click(`nav a[data-page="events"]`)); err != nil {
		t.Fatal(err)
	}
	waitDOM(t, ctx, 30*time.Second, "the events page lists the event",
		fmt.Sprintf(`[...document.querySelectorAll('#content tr')].some(r => r.innerText.includes('Inspected') && r.querySelector('a[href="#/pods/default/%s"]'))`, pod))

	// The book's address: /api/v1/proxy/namespaces/kube-system/services/kube-ui/#/dashboard/.
	navigate(t, ctx, s.URL+"/api/v1/proxy/namespaces/kube-system/services/kube-ui/#/dashboard/")
	waitDOM(t, ctx, 30*time.Second, "the kube-ui address lands on the dashboard's nodes page",
		`location.pathname === '/ui' && document.querySelector('nav a.current')?.dataset.page === 'nodes' && `+rows("ui-0")+`.length === 1`)
}

// goneFetch wraps the page's fetch: the first watch of pods is answered 410 Gone, the
// second with a 200 stream whose first event is an ERROR with code 410 (both ways a
// server says a resourceVersion is too old); the page's requests are counted.
const goneFetch = `
window.uiRequests = {lists: 0, watches: 0};
const realFetch = window.fetch;
window.fetch = (url, opts) => {
  const u = String(url);
  if (u.startsWith('/api/v1/pods')) {
    const gone = {kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Expired', code: 410, message: 'too old resource version'};
    if (!u.includes('watch=true')) {
      window.uiRequests.lists++;
    } else if (++window.uiRequests.watches === 1) {
      return Promise.resolve(new Response(JSON.stringify(gone), {status: 410, headers: {'Content-Type': 'application/json'}}));
    } else if (window.uiRequests.watches === 2) {
      return Promise.resolve(new Response(JSON.stringify({type: 'ERROR', object: gone}) + '\n', {status: 200}));
    }
  }
  return realFetch(url, opts);
};`

// TestUIRelistsOnGone: when a watch's resourceVersion is too old (410, as a status or
// as an ERROR event), the page lists again and watches from the new list, and stays
// live: a pod created afterwards appears without a reload.
func TestUIRelistsOnGone(t *testing.T) {
	ctx := browser(t)
	s := StartServer(t, "")
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: goneFetch}); err != nil {
		t.Fatal(err)
	}
	navigate(t, ctx, s.URL+"/ui#/pods")
	waitDOM(t, ctx, 30*time.Second, "three lists and a third watch", `uiRequests.lists === 3 && uiRequests.watches === 3`)
	s.MustKubectl(t, "", "run", "late", "--image", "kubeactor/testserver", "--restart", "Never")
	waitDOM(t, ctx, 30*time.Second, "the pod created after the re-lists is shown", rows("late")+`.length === 1`)
	if lists, _ := evaluate[int](ctx, `uiRequests.lists`); lists != 3 {
		t.Errorf("%d lists, want 3 (one, and one for each 410)", lists)
	}
}

// fakeMetrics wraps the page's fetch so that metrics.k8s.io answers with the usage of
// node ui-0: half a core and 4Gi.
const fakeMetrics = `
const realFetch = window.fetch;
window.fetch = (url, opts) => {
  if (String(url) === '/apis/metrics.k8s.io/v1beta1/nodes') {
    const usage = {kind: 'NodeMetricsList', apiVersion: 'metrics.k8s.io/v1beta1', metadata: {},
      items: [{metadata: {name: 'ui-0'}, timestamp: new Date().toISOString(), window: '10s', usage: {cpu: '500m', memory: '4Gi'}}]};
    return Promise.resolve(new Response(JSON.stringify(usage), {status: 200, headers: {'Content-Type': 'application/json'}}));
  }
  return realFetch(url, opts);
};`

// TestUINodeUsage: the nodes page shows CPU and memory used against capacity when the
// metrics API answers, and says why they are missing when it does not.
func TestUINodeUsage(t *testing.T) {
	ctx := browser(t)
	s := uiCluster(t)
	resp, err := http.Get(s.URL + "/apis/metrics.k8s.io/v1beta1/nodes")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		navigate(t, ctx, s.URL+"/ui#/nodes")
		waitDOM(t, ctx, 30*time.Second, "without metrics.k8s.io, the node without usage and a note saying why",
			rows("ui-0")+`.length === 1 && ![...document.querySelectorAll('#content th')].some(th => /used/i.test(th.textContent)) && document.querySelector('#content .note')?.innerText.includes('metrics.k8s.io')`)
	}
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: fakeMetrics}); err != nil {
		t.Fatal(err)
	}
	navigate(t, ctx, "about:blank") // the same URL again would only move to its fragment
	navigate(t, ctx, s.URL+"/ui#/nodes")
	waitDOM(t, ctx, 30*time.Second, "ui-0 using 500m of 4 CPUs and 4 GiB of 16",
		rows("ui-0")+`.some(r => r.innerText.includes('500m (13%)') && r.innerText.includes('4.0 GiB (25%)'))`)
}

// TestUISecurePort: on the secure port the dashboard is authorized like any
// non-resource path.
func TestUISecurePort(t *testing.T) {
	s := startSecured(t)
	if s.SecureURL == "" {
		t.Skip("no secure port")
	}
	pem, err := os.ReadFile(s.caFile())
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pem)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}}
	tests := []struct {
		name, token string
		code        int
	}{
		{"a user the policy allows", "thomas", http.StatusOK},
		{"an unknown token", "nope", http.StatusUnauthorized},
		{"a user allowed only one namespace's objects", "bob", http.StatusForbidden},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodGet, s.SecureURL+"/ui", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+tc.token)
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.code {
				t.Fatalf("GET /ui as %s: %d, want %d: %s", tc.token, resp.StatusCode, tc.code, body)
			}
			if tc.code == http.StatusOK && !strings.Contains(string(body), "/ui/app.js") {
				t.Fatalf("not the dashboard: %s", body)
			}
		})
	}
}

// TestUIScreenshots writes screenshots of the main pages into docs/screenshots/ when
// KUBEACTOR_UI_SCREENSHOTS=1 (CI leaves docs alone):
//
//	make build && KUBEACTOR_BIN=$PWD/bin/kubeactor KUBEACTOR_UI_SCREENSHOTS=1 go test -count=1 -run TestUIScreenshots ./e2e/
func TestUIScreenshots(t *testing.T) {
	if os.Getenv("KUBEACTOR_UI_SCREENSHOTS") != "1" {
		t.Skip("skipped: set KUBEACTOR_UI_SCREENSHOTS=1 to rewrite docs/screenshots/")
	}
	ctx := browser(t)
	s := uiCluster(t)
	s.MustKubectl(t, uiRC, "create", "-f", "-")
	s.MustKubectl(t, uiService, "create", "-f", "-")
	Eventually(t, 60*time.Second, "frontend's pods running", func() error {
		out := s.MustKubectl(t, "", "get", "pods", "-l", "app=frontend", "--no-headers")
		if n := strings.Count(out, "Running"); n != 3 {
			return fmt.Errorf("%d running:\n%s", n, out)
		}
		return nil
	})
	pod := strings.Fields(s.MustKubectl(t, "", "get", "pods", "-l", "app=frontend", "--no-headers"))[0]

	dir := filepath.Join("..", "docs", "screenshots")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	shots := []struct{ file, hash, ready string }{
		{"nodes.png", "#/nodes", rows("ui-0") + `.length === 1`},
		{"pods.png", "#/pods", rows("frontend-") + `.filter(r => r.dataset.status === 'Running').length === 3`},
		{"pod.png", "#/pods/default/" + pod, `document.getElementById('pod-summary')?.dataset.status === 'Running' && ` +
			`document.getElementById('pod-explain') !== null && document.querySelector('#pod-trace tr[data-span="pods binding"]') !== null`},
		{"rcs.png", "#/rcs", rows("frontend") + `.length === 1`},
		{"services.png", "#/services", rows("frontend") + `.some(r => r.innerText.split(':').length > 3)`},
		{"events.png", "#/events", `document.querySelectorAll('#content tbody tr').length > 0`},
	}
	navigate(t, ctx, s.URL+"/ui")
	for _, sh := range shots {
		if _, err := evaluate[string](ctx, fmt.Sprintf("location.hash = %q", sh.hash)); err != nil {
			t.Fatal(err)
		}
		waitDOM(t, ctx, 60*time.Second, sh.file, sh.ready)
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, sh.file), png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s (%d bytes)", sh.file, len(png))
	}
}
