package e2e

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kubeactor/kubeactor/gateway"
)

// leakCheck is a secret value the test used and must not find again.
type leakCheck struct {
	what, value string
}

// forms are the spellings of a value the test looks for: as is and base64 encoded
// (standard, unpadded and URL alphabets), as secret data and Basic credentials carry it.
func (l leakCheck) forms() map[string]string {
	return map[string]string{
		"plain":         l.value,
		"base64":        base64.StdEncoding.EncodeToString([]byte(l.value)),
		"base64-raw":    base64.RawStdEncoding.EncodeToString([]byte(l.value)),
		"base64-rawurl": base64.RawURLEncoding.EncodeToString([]byte(l.value)),
	}
}

// secureClient talks to the secure port of s, trusting the CA in certDir.
type secureClient struct {
	t      *testing.T
	base   string
	client *http.Client
	// answers collects the bodies of the answers that were errors (401, 403, 409).
	answers strings.Builder
}

// do sends one request with auth ("Bearer TOKEN", "Basic user:password" or "") and
// returns the status and the body.
func (c *secureClient) do(method, path, auth, body string) (int, string) {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+path, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if user, ok := strings.CutPrefix(auth, "Basic "); ok {
		name, password, _ := strings.Cut(user, ":")
		req.SetBasicAuth(name, password)
	} else if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	if resp.StatusCode >= 400 {
		fmt.Fprintf(&c.answers, "%s %s: %d %s\n", method, path, resp.StatusCode, b)
	}
	return resp.StatusCode, string(b)
}

// must is do that fails the test unless the status is want.
func (c *secureClient) must(want int, method, path, auth, body string) string {
	c.t.Helper()
	code, out := c.do(method, path, auth, body)
	if code != want {
		c.t.Fatalf("%s %s: %d, want %d: %s", method, path, code, want, out)
	}
	return out
}

// TestSecretsStaySecret (issue 14): a server at --v=4 with every request traced, a
// token file, a basic-auth file, ABAC, the book's admission chain (service accounts
// on) and a simulated node agent at --v=4 on the secure port are given distinctive
// random tokens, passwords and secret data, right and wrong; then the logs of both
// processes, the events, the traces of the objects, the metrics and the error answers
// are collected, checked to be the right material (they name the objects), and
// searched for every value in plain and base64 form: none may appear.
func TestSecretsStaySecret(t *testing.T) {
	dir := t.TempDir()
	var (
		adminToken   = randomSecret(t, "tokadmin")
		kubeletToken = randomSecret(t, "tokkubelet")
		wrongToken   = randomSecret(t, "tokwrong")
		password     = randomSecret(t, "pass")
		wrongPass    = randomSecret(t, "wrongpass")
		dataA        = randomSecret(t, "dataa")
		dataB        = randomSecret(t, "datab")
		dataC        = randomSecret(t, "datac")
		dockerPass   = randomSecret(t, "dockerpass")
		badData      = randomSecret(t, "baddata") + "*" // not base64
		suffix       = randHex(4)
		secretName   = "leak-generic-" + suffix
		dockerName   = "leak-docker-" + suffix
		podName      = "leak-pod-" + suffix
		pendingName  = "leak-pending-" + suffix
		basicUser    = "basic-" + suffix
	)
	for what, v := range map[string]string{"the admin's token": adminToken, "the kubelet's token": kubeletToken, "a wrong token": wrongToken,
		"the password": password, "a wrong password": wrongPass, "secret data (first)": dataA, "secret data (second)": dataB,
		"secret data (updated)": dataC, "the dockercfg password": dockerPass, "secret data that is no base64": badData} {
		RegisterSecret(t, what, v)
	}
	policy := `{"user":"admin"}` + "\n" + `{"user":"kubelet"}` + "\n" + `{"user":"` + basicUser + `"}` + "\n" +
		`{"user":"system:serviceaccount:default:default","readonly":true}` + "\n"
	s := StartServer(t, "", "--v=4", "--tracing", "--trace-sampling", "1",
		"--token-auth-file", writeFile(t, dir, "tokens.csv", adminToken+",admin,1\n"+kubeletToken+",kubelet,2\n"),
		"--basic-auth-file", writeFile(t, dir, "basic.csv", password+","+basicUser+",3\n"),
		"--authorization-mode", "ABAC", "--authorization-policy-file", writeFile(t, dir, "policy.jsonl", policy),
		"--admission-control", bookAdmission)
	if s.SecureURL == "" {
		t.Fatal("no secure address in the startup log")
	}
	s.RegisterKeys(t)
	pem, err := os.ReadFile(s.caFile())
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pem)
	c := &secureClient{t: t, base: s.SecureURL, client: &http.Client{Timeout: 30 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}}}

	// The node agent, on the secure port with the kubelet's token, logging at --v=4.
	nodePrefix := "leak" + suffix
	kubeconfig := writeFile(t, dir, "kubelet.kubeconfig", `apiVersion: v1
kind: Config
clusters:
- name: local
  cluster: {server: "`+s.SecureURL+`", certificate-authority: "`+s.caFile()+`"}
users:
- name: kubelet
  user: {token: `+kubeletToken+`}
contexts:
- name: local
  context: {cluster: local, user: kubelet}
current-context: local
`)
	agent := startProcess(t, Binary(t), "agent", "--kubeconfig", kubeconfig, "--simulate", "1", "--name-prefix", nodePrefix,
		"--node-status-update-frequency", "1s", "--port", "0", "--read-only-port", "0", "--healthz-port", "0", "--log-format", "json", "--v=4")

	bearer := func(tok string) string { return "Bearer " + tok }
	const pods = "/api/v1/namespaces/default/pods"
	const secrets = "/api/v1/namespaces/default/secrets"

	// Right and wrong credentials.
	c.must(http.StatusOK, http.MethodGet, pods, bearer(adminToken), "")
	c.must(http.StatusUnauthorized, http.MethodGet, pods, bearer(wrongToken), "")
	c.must(http.StatusOK, http.MethodGet, pods, "Basic "+basicUser+":"+password, "")
	c.must(http.StatusUnauthorized, http.MethodGet, pods, "Basic "+basicUser+":"+wrongPass, "")
	c.must(http.StatusUnauthorized, http.MethodGet, pods, "Basic "+basicUser+":"+adminToken, "")
	if r := s.secureKubectl(t, "--certificate-authority="+s.caFile(), "--token", wrongToken, "get", "secrets"); r.Err == nil {
		t.Fatalf("kubectl with a wrong token succeeded: %s", r.Stdout)
	}

	// A generic secret: create, read, update, a stale update and a second create.
	b64 := func(v string) string { return base64.StdEncoding.EncodeToString([]byte(v)) }
	secret := func(name, typ string, data map[string]string, rv string) string {
		enc := map[string]string{}
		for k, v := range data {
			enc[k] = b64(v)
		}
		obj := map[string]any{"apiVersion": "v1", "kind": "Secret", "type": typ, "data": enc,
			"metadata": map[string]any{"name": name, "resourceVersion": rv}}
		b, _ := json.Marshal(obj)
		return string(b)
	}
	admin := bearer(adminToken)
	created := c.must(http.StatusCreated, http.MethodPost, secrets, admin, secret(secretName, "Opaque", map[string]string{"password": dataA, "api-key": dataB}, ""))
	var meta struct {
		Metadata struct{ ResourceVersion string } `json:"metadata"`
	}
	if err := json.Unmarshal([]byte(created), &meta); err != nil {
		t.Fatal(err)
	}
	// The control: the API answers the data in the base64 form searched for below.
	if got := c.must(http.StatusOK, http.MethodGet, secrets+"/"+secretName, "Basic "+basicUser+":"+password, ""); !strings.Contains(got, b64(dataA)) {
		t.Fatalf("GET secret lacks the base64 of its data: %s", got)
	}
	c.must(http.StatusOK, http.MethodPut, secrets+"/"+secretName, admin, secret(secretName, "Opaque", map[string]string{"password": dataC, "api-key": dataB}, meta.Metadata.ResourceVersion))
	c.must(http.StatusConflict, http.MethodPut, secrets+"/"+secretName, admin, secret(secretName, "Opaque", map[string]string{"password": dataA}, meta.Metadata.ResourceVersion))
	c.must(http.StatusConflict, http.MethodPost, secrets, admin, secret(secretName, "Opaque", map[string]string{"password": dataA}, ""))
	c.must(http.StatusOK, http.MethodGet, secrets+"/"+secretName, admin, "")
	// Data that is no base64: refused, without quoting it.
	bad := fmt.Sprintf(`{"apiVersion":"v1","kind":"Secret","type":"Opaque","metadata":{"name":"bad-%s"},"data":{"password":%q}}`, secretName, badData)
	if code, out := c.do(http.MethodPost, secrets, admin, bad); code != http.StatusBadRequest && code != http.StatusUnprocessableEntity {
		t.Fatalf("POST a secret whose data is no base64: %d %s", code, out)
	}

	// A dockercfg secret.
	dockerAuth := "leakuser:" + dockerPass
	dockercfg := fmt.Sprintf(`{"registry.leak.example":{"username":"leakuser","password":%q,"email":"leak@example.com","auth":%q}}`, dockerPass, b64(dockerAuth))
	c.must(http.StatusCreated, http.MethodPost, secrets, admin, secret(dockerName, "kubernetes.io/dockercfg", map[string]string{".dockercfg": dockercfg}, ""))
	c.must(http.StatusOK, http.MethodGet, secrets+"/"+dockerName, admin, "")

	// The default service account's token: read it, use it (allowed and denied), and
	// a forged one.
	var tokenSecret string
	Eventually(t, 30*time.Second, "default/default lists its token secret", func() error {
		r := s.Kubectl("", "get", "serviceaccount", "default", "-o", "jsonpath={.secrets[0].name}")
		if r.Err != nil || r.Stdout == "" {
			return fmt.Errorf("no token secret yet: %v %s", r.Err, r.Stderr)
		}
		tokenSecret = r.Stdout
		return nil
	})
	var tokSecret struct {
		Data map[string]string `json:"data"`
	}
	if err := json.Unmarshal([]byte(c.must(http.StatusOK, http.MethodGet, secrets+"/"+tokenSecret, admin, "")), &tokSecret); err != nil {
		t.Fatal(err)
	}
	jwtBytes, err := base64.StdEncoding.DecodeString(tokSecret.Data["token"])
	if err != nil || strings.Count(string(jwtBytes), ".") != 2 {
		t.Fatalf("token secret %s: no JWT (%v)", tokenSecret, err)
	}
	jwt := string(jwtBytes)
	RegisterSecret(t, "the service-account JWT", jwt)
	jwtSig := jwt[strings.LastIndex(jwt, ".")+1:]
	c.must(http.StatusOK, http.MethodGet, pods, bearer(jwt), "")
	c.must(http.StatusForbidden, http.MethodPost, secrets, bearer(jwt), secret("y"+secretName, "Opaque", map[string]string{"password": dataA}, ""))
	forged := jwt[:strings.LastIndex(jwt, ".")+1] + randomSecret(t, "forged")
	RegisterSecret(t, "a forged JWT", forged)
	c.must(http.StatusUnauthorized, http.MethodGet, pods, bearer(forged), "")

	// A pod that mounts the generic secret, run by the simulated node, and one that
	// mounts the dockercfg secret and fits no node (a FailedScheduling event).
	podJSON := func(name, secretName string, selector string) string {
		return fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":%q},
"spec":{"nodeSelector":%s,"containers":[{"name":"app","image":"nginx","volumeMounts":[{"name":"creds","mountPath":"/creds"}]}],
"volumes":[{"name":"creds","secret":{"secretName":%q}}]}}`, name, selector, secretName)
	}
	c.must(http.StatusCreated, http.MethodPost, pods, admin, podJSON(podName, secretName, "{}"))
	c.must(http.StatusCreated, http.MethodPost, pods, admin, podJSON(pendingName, dockerName, `{"leak":"nowhere"}`))
	Eventually(t, 60*time.Second, "the pod runs and the events are recorded", func() error {
		r := s.Kubectl("", "get", "pod", podName, "-o", "jsonpath={.status.phase}")
		if r.Stdout != "Running" {
			return fmt.Errorf("phase %q %v %s", r.Stdout, r.Err, r.Stderr)
		}
		ev := s.Kubectl("", "get", "events", "--all-namespaces", "-o", "json")
		for _, name := range []string{nodePrefix, pendingName} {
			if !strings.Contains(ev.Stdout, name) {
				return fmt.Errorf("no event of %s yet", name)
			}
		}
		return nil
	})

	// Everything the cluster said, by source.
	get := func(path string) string {
		t.Helper()
		resp, err := http.Get(s.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %v", path, resp.StatusCode, err)
		}
		return string(b)
	}
	var traces strings.Builder
	for _, key := range []string{"secrets/default/" + secretName, "secrets/default/" + dockerName, "secrets/default/" + tokenSecret,
		"serviceaccounts/default/default", "pods/default/" + podName, "pods/default/" + pendingName} {
		traces.WriteString(get(gateway.TracesPath + "/" + key))
	}
	for _, obj := range []string{"secret/" + secretName, "secret/" + dockerName, "pod/" + podName} {
		for _, format := range [][]string{{"-o", "json"}, nil} {
			r := s.Kubeactor(t, "", append([]string{"trace", obj}, format...)...)
			if r.Err != nil {
				t.Fatalf("kubeactor trace %s: %v %s", obj, r.Err, r.Stderr)
			}
			traces.WriteString(r.Stdout + r.Stderr)
		}
	}
	// The agent's last line counts what it did (the pod it started).
	agent.Stop(t)
	sources := []struct {
		name, text string
		mustName   []string // what shows the text is the right material
	}{
		{"server log", s.Logs(), []string{secretName, dockerName, tokenSecret, podName}},
		{"agent log", agent.Logs(), []string{"nodes registered", `"pods-started":1`}},
		{"events", s.MustKubectl(t, "", "get", "events", "--all-namespaces", "-o", "json"), []string{nodePrefix, pendingName}},
		{"traces", traces.String(), []string{"secrets/default/" + secretName, "secrets/default/" + dockerName, "pods/default/" + podName, "PUT /api/v1/namespaces/:namespace/secrets/:name"}},
		{"metrics", get("/metrics"), []string{"secrets"}},
		{"error answers", c.answers.String(), []string{"Unauthorized", "Forbidden", "AlreadyExists", secretName}},
	}
	checks := []leakCheck{
		{"the admin's token", adminToken}, {"the kubelet's token", kubeletToken}, {"a wrong token", wrongToken},
		{"the password", password}, {"a wrong password", wrongPass},
		{"basic credentials", basicUser + ":" + password}, {"wrong basic credentials", basicUser + ":" + wrongPass},
		{"secret data (first)", dataA}, {"secret data that is no base64", badData}, {"secret data (second)", dataB}, {"secret data (updated)", dataC},
		{"the dockercfg password", dockerPass}, {"the dockercfg auth", dockerAuth}, {"the dockercfg", dockercfg},
		{"the service-account JWT", jwt}, {"the JWT's signature", jwtSig}, {"a forged JWT", forged},
	}
	for _, chk := range checks {
		RegisterSecret(t, chk.what, chk.value)
	}
	for _, src := range sources {
		t.Run(src.name, func(t *testing.T) {
			if strings.TrimSpace(src.text) == "" {
				t.Fatal("collected nothing")
			}
			for _, n := range src.mustName {
				if !strings.Contains(src.text, n) {
					t.Errorf("the %s does not mention %q: not the material to search", src.name, n)
				}
			}
			for _, chk := range checks {
				for form, v := range chk.forms() {
					if i := strings.Index(src.text, v); i >= 0 {
						t.Errorf("the %s holds %s (%s) in: %s", src.name, chk.what, form, around(src.text, i, len(v)))
					}
				}
			}
			t.Logf("searched %d bytes", len(src.text))
		})
	}
}

// around is the line of text holding text[i:i+n], every occurrence of that value
// replaced by <the value>: a failure shows where a secret leaked, not the secret.
func around(text string, i, n int) string {
	start := strings.LastIndexByte(text[:i], '\n') + 1
	end := strings.IndexByte(text[i+n:], '\n')
	if end < 0 {
		end = len(text)
	} else {
		end += i + n
	}
	if end-start > 600 {
		start, end = max(start, i-300), min(end, i+n+300)
	}
	return strings.ReplaceAll(text[start:end], text[i:i+n], "<the value>")
}
