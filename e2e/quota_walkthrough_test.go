package e2e

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// The book's files of the quota and limits walkthrough (ch3-5 §5.8, ch1-2 §1.13), as
// printed there.
const (
	bookLimitRangeYAML = `apiVersion: v1
kind: LimitRange
metadata:
  name: limit-range-1
spec:
  limits:
    - type: "Pod"
      max:
        cpu: "2"
        memory: 1Gi
      min:
        cpu: 250m
        memory: 32Mi
    - type: "Container"
      max:
        cpu: "2"
        memory: 1Gi
      min:
        cpu: 250m
        memory: 32Mi
      default:
        cpu: 250m
        memory: 64Mi
`
	bookRedisPodYAML = `apiVersion: v1
kind: Pod
metadata:
  name: redis-master-pod
  labels:
    name: redis-master-pod
spec:
  containers:
  - name: master-pod
    image: kubeguide/redis-master
    ports:
    - containerPort: 6379
`
	bookNamespaceYAML = `apiVersion: v1
kind: Namespace
metadata:
  name: development
`
	bookQuotaYAML = `apiVersion: v1
kind: ResourceQuota
metadata:
  name: quota-development
  namespace: development
spec:
  hard:
    cpu: "32"
    memory: 256Gi
    persistentvolumeclaims: "10"
    pods: "100"
    replicationcontrollers: "50"
    resourcequotas: "1"
    secrets: "20"
    services: "50"
`
	bookDevLimitsYAML = `apiVersion: v1
kind: LimitRange
metadata:
  name: limits
  namespace: development
spec:
  limits:
  - type: "Container"
    default:
      cpu: 250m
      memory: 64Mi
`
	bookRedisMasterYAML = `apiVersion: v1
kind: Pod
metadata:
  name: redis-master
spec:
  containers:
  - name: master
    image: kubeguide/redis-master
    ports:
    - containerPort: 6379
`
	bookQuotaJSON = `{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"quota"},
 "spec":{"hard":{"memory":"1Gi","cpu":"20","pods":"10","services":"5",
                 "replicationcontrollers":"20","resourcequotas":"1"}}}
`
)

// hasRow tells whether some line of out starts with the fields want (spaces between
// columns do not matter).
func hasRow(out string, want ...string) bool {
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) >= len(want) && strings.Join(f[:len(want)], " ") == strings.Join(want, " ") {
			return true
		}
	}
	return false
}

// section is the lines of out after the first line that is exactly head (trimmed),
// up to the next line indented no deeper than head.
func section(out, head string) string {
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) != head {
			continue
		}
		indent := len(l) - len(strings.TrimLeft(l, " "))
		var b strings.Builder
		for _, m := range lines[i+1:] {
			if strings.TrimSpace(m) == "" || len(m)-len(strings.TrimLeft(m, " ")) <= indent {
				break
			}
			b.WriteString(m + "\n")
		}
		return b.String()
	}
	return ""
}

// waitToken waits until the default service account of ns has its token secret: the
// ServiceAccount admission plugin refuses pods until then.
func waitToken(t *testing.T, s *Server, ns string) {
	t.Helper()
	Eventually(t, 30*time.Second, ns+"/default has its token", func() error {
		r := s.Kubectl("", "get", "serviceaccount", "default", "-n", ns, "-o", "jsonpath={.secrets[0].name}")
		if r.Err != nil || r.Stdout == "" {
			return fmt.Errorf("no token secret yet: %v %s", r.Err, r.Stderr)
		}
		return nil
	})
}

// TestBookQuotaLimitsWalkthrough (issue 14): the book's quota and limits walkthrough
// (ch3-5 §5.8, with ch1-2 §1.13's quota of 10 pods), every command through the
// installed kubectl on the secure port with a token, against a server started with
// the book's spelling of the book's admission chain
// (--admission_control=NamespaceLifecycle,LimitRanger,SecurityContextDeny,ServiceAccount,ResourceQuota):
// describe shows the LimitRange and the defaulted limits, the book's refusals come
// back with the book's messages, describe quota shows the usage, and 50 concurrent
// creates against the quota of 10 pods admit exactly 10.
func TestBookQuotaLimitsWalkthrough(t *testing.T) {
	dir := t.TempDir()
	token := randomSecret(t, "walk")
	RegisterSecret(t, "the admin's token", token)
	s := StartServer(t, "",
		"--token_auth_file="+writeFile(t, dir, "token_auth_file", token+",admin,1\n"),
		"--authorization_mode=ABAC", "--authorization_policy_file="+writeFile(t, dir, "policy", `{"user":"admin"}`+"\n"),
		"--admission_control="+bookAdmission, "--resource_quota_sync_period=1s")
	if s.SecureURL == "" {
		t.Fatal("no secure address in the startup log")
	}
	file := func(name, content string) string { return writeFile(t, dir, name, content) }
	kubectl := func(args ...string) Result {
		t.Helper()
		return s.secureKubectl(t, append([]string{"--certificate-authority=" + s.caFile(), "--token", token}, args...)...)
	}
	must := func(args ...string) string {
		t.Helper()
		r := kubectl(args...)
		if r.Err != nil {
			t.Fatalf("kubectl %v: %v\n%s%s", args, r.Err, r.Stdout, r.Stderr)
		}
		return r.Stdout
	}
	refused := func(want string, args ...string) {
		t.Helper()
		r := kubectl(args...)
		if r.Err == nil || !strings.Contains(r.Stderr, "Error from server (Forbidden)") || !strings.Contains(r.Stderr, want) {
			t.Fatalf("kubectl %v: %v, want a 403 with %q:\n%s%s", args, r.Err, want, r.Stdout, r.Stderr)
		}
	}
	describeQuota := func(ns, name string, rows ...[]string) {
		t.Helper()
		Eventually(t, 30*time.Second, "kubectl describe quota "+name, func() error {
			out := must("describe", "quota", name, "--namespace="+ns)
			for _, row := range rows {
				if !hasRow(out, row...) {
					return fmt.Errorf("no row %v in\n%s", row, out)
				}
			}
			return nil
		})
	}
	waitToken(t, s, "default")

	t.Run("LimitRange defaults (4.4.2)", func(t *testing.T) {
		limits := file("pod-container-limits.yaml", bookLimitRangeYAML)
		if out := must("create", "-f", limits); !strings.Contains(out, "limitrange/limit-range-1 created") {
			t.Fatalf("create: %s", out)
		}
		out := must("describe", "limits", "limit-range-1")
		for _, row := range [][]string{
			{"Pod", "memory", "32Mi", "1Gi"}, {"Pod", "cpu", "250m", "2"},
			{"Container", "cpu", "250m", "2", "250m"}, {"Container", "memory", "32Mi", "1Gi", "64Mi"},
		} {
			if !hasRow(out, row...) {
				t.Errorf("describe limits: no row %v in\n%s", row, out)
			}
		}
		pod := file("redis-master-pod.yaml", bookRedisPodYAML)
		if out := must("create", "-f", pod); !strings.Contains(out, "pod/redis-master-pod created") {
			t.Fatalf("create: %s", out)
		}
		desc := must("describe", "pod", "redis-master-pod")
		got := section(desc, "Limits:")
		if !hasRow(got, "cpu:", "250m") || !hasRow(got, "memory:", "64Mi") {
			t.Fatalf("describe pod: Limits %q, want cpu 250m and memory 64Mi:\n%s", got, desc)
		}
		must("delete", "-f", pod, "--grace-period=0", "--force")
		Eventually(t, 30*time.Second, "redis-master-pod gone", func() error {
			if r := kubectl("get", "pod", "redis-master-pod"); r.Err == nil {
				return fmt.Errorf("still there")
			}
			return nil
		})
		big := file("redis-master-pod.yaml", strings.Replace(bookRedisPodYAML, "    - containerPort: 6379\n",
			"    - containerPort: 6379\n    resources:\n      limits:\n        memory: 1.5Gi\n", 1))
		refused(`error when creating "`+big+`": Pod "redis-master-pod" is forbidden: Maximum memory usage per pod is 1Gi`, "create", "-f", big)
	})

	t.Run("ResourceQuota per tenant (4.4.3)", func(t *testing.T) {
		must("create", "-f", file("namespace-development.yaml", bookNamespaceYAML))
		must("create", "-f", file("resourcequota-development.yaml", bookQuotaYAML))
		describeQuota("development", "quota-development",
			[]string{"cpu", "0", "32"}, []string{"memory", "0", "256Gi"}, []string{"persistentvolumeclaims", "0", "10"},
			[]string{"pods", "0", "100"}, []string{"replicationcontrollers", "0", "50"}, []string{"resourcequotas", "1", "1"},
			[]string{"services", "0", "50"})
		waitToken(t, s, "development")
		redis := file("redis-master.yaml", bookRedisMasterYAML)
		refused(`error when creating "`+redis+`": Pod "redis-master" is forbidden: Limited to 256Gi memory, but pod has no specified memory limit`,
			"create", "-f", redis, "--namespace=development")
		// The book's development LimitRange gives the pod its defaults, which the quota charges.
		must("create", "-f", file("limits-development.yaml", bookDevLimitsYAML))
		must("create", "-f", redis, "--namespace=development")
		// The book prints the memory as 67108864; today's kubectl prints the same quantity as 64Mi.
		describeQuota("development", "quota-development",
			[]string{"cpu", "250m", "32"}, []string{"memory", "64Mi", "256Gi"}, []string{"pods", "1", "100"}, []string{"resourcequotas", "1", "1"})
		ns := must("describe", "namespace", "development")
		for _, want := range []string{"Resource Quotas", "Resource Limits"} {
			if !strings.Contains(ns, want) {
				t.Errorf("describe namespace: no %q in\n%s", want, ns)
			}
		}
		if !hasRow(ns, "pods", "1", "100") || !hasRow(ns, "Container", "cpu", "-", "-", "250m") {
			t.Errorf("describe namespace: usage or limits missing:\n%s", ns)
		}
	})

	t.Run("a quota of 10 pods admits exactly 10 of 50 concurrent creates (1.13)", func(t *testing.T) {
		must("create", "namespace", "myspace")
		must("create", "-f", file("quota.json", bookQuotaJSON), "--namespace=myspace")
		describeQuota("myspace", "quota", []string{"pods", "0", "10"})
		waitToken(t, s, "myspace")

		pem, err := os.ReadFile(s.caFile())
		if err != nil {
			t.Fatal(err)
		}
		roots := x509.NewCertPool()
		roots.AppendCertsFromPEM(pem)
		client := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}, MaxIdleConnsPerHost: 50}}
		type answer struct {
			code int
			body string
			err  error
		}
		answers := make([]answer, 50)
		var wg sync.WaitGroup
		for i := range answers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				body := fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-%02d"},"spec":{"containers":[
{"name":"web","image":"nginx","resources":{"limits":{"cpu":"100m","memory":"64Mi"}}}]}}`, i)
				req, err := http.NewRequest(http.MethodPost, s.SecureURL+"/api/v1/namespaces/myspace/pods", strings.NewReader(body))
				if err != nil {
					answers[i].err = err
					return
				}
				req.Header.Set("Authorization", "Bearer "+token)
				req.Header.Set("Content-Type", "application/json")
				resp, err := client.Do(req)
				if err != nil {
					answers[i].err = err
					return
				}
				defer resp.Body.Close()
				b, err := io.ReadAll(resp.Body)
				answers[i] = answer{code: resp.StatusCode, body: string(b), err: err}
			}()
		}
		wg.Wait()
		created := 0
		for i, a := range answers {
			switch {
			case a.err != nil:
				t.Fatalf("create web-%02d: %v", i, a.err)
			case a.code == http.StatusCreated:
				created++
			case a.code != http.StatusForbidden || !strings.Contains(a.body, fmt.Sprintf(`Pod \"web-%02d\" is forbidden: Limited to 10 pods`, i)):
				t.Fatalf("create web-%02d: %d %s, want 201 or 403 Limited to 10 pods", i, a.code, a.body)
			}
		}
		if created != 10 {
			t.Fatalf("%d of 50 concurrent creates admitted, want exactly 10", created)
		}
		if n := len(strings.Fields(must("get", "pods", "--namespace=myspace", "-o", "name"))); n != 10 {
			t.Fatalf("%d pods stored in myspace, want 10", n)
		}
		describeQuota("myspace", "quota", []string{"pods", "10", "10"}, []string{"cpu", "1", "20"}, []string{"memory", "640Mi", "1Gi"})
		eleventh := file("web-11.yaml", `apiVersion: v1
kind: Pod
metadata:
  name: web-11th
spec:
  containers:
  - name: web
    image: nginx
    resources:
      limits: {cpu: 100m, memory: 64Mi}
`)
		refused(`Pod "web-11th" is forbidden: Limited to 10 pods`, "create", "-f", eleventh, "--namespace=myspace")
	})
}
