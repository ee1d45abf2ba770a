package openapi

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The media types clients ask for (kubectl sends the "@" form) and the ones kube-openapi
// answers with.
const (
	protoV2       = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
	protoV3       = "application/com.github.proto-openapi.spec.v3@v1.0+protobuf"
	protoV2Answer = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
	protoV3Answer = "application/com.github.proto-openapi.spec.v3.v1.0+protobuf"
)

func newTestServer(t *testing.T) *httptest.Server {
	t.Helper()
	h, err := Handler()
	if err != nil {
		t.Fatalf("Handler: %v", err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func get(t *testing.T, url, accept, ifNoneMatch string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatalf("request: %v", err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	if ifNoneMatch != "" {
		req.Header.Set("If-None-Match", ifNoneMatch)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read %s: %v", url, err)
	}
	return resp, body
}

// v3GroupURL reads the v3 discovery document and returns the api/v1 serverRelativeURL.
func v3GroupURL(t *testing.T, srv *httptest.Server) string {
	t.Helper()
	resp, body := get(t, srv.URL+"/openapi/v3", "application/json", "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/openapi/v3: status %d", resp.StatusCode)
	}
	var discovery struct {
		Paths map[string]struct {
			ServerRelativeURL string `json:"serverRelativeURL"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(body, &discovery); err != nil {
		t.Fatalf("decode discovery %s: %v", body, err)
	}
	u := discovery.Paths["api/v1"].ServerRelativeURL
	if !strings.HasPrefix(u, "/openapi/v3/api/v1?hash=") {
		t.Fatalf("discovery %s: api/v1 serverRelativeURL = %q", body, u)
	}
	return u
}

func TestHandlerContentNegotiation(t *testing.T) {
	srv := newTestServer(t)
	groupURL := v3GroupURL(t, srv)
	tests := []struct {
		name        string
		path        string
		accept      string
		wantStatus  int
		wantType    string
		wantContain string
	}{
		{"v2 json", "/openapi/v2", "application/json", http.StatusOK, "application/json", `"io.k8s.api.core.v1.Pod"`},
		{"v2 default accept", "/openapi/v2", "", http.StatusOK, "application/json", `"swagger":"2.0"`},
		{"v2 protobuf", "/openapi/v2", protoV2 + ", application/json", http.StatusOK, protoV2Answer, "io.k8s.api.core.v1.Pod"},
		{"v2 unacceptable", "/openapi/v2", "text/html", http.StatusNotAcceptable, "", ""},
		{"v3 group json", groupURL, "application/json", http.StatusOK, "application/json", `"openapi":"3.0.0"`},
		{"v3 group without hash", "/openapi/v3/api/v1", "application/json", http.StatusOK, "application/json", `"io.k8s.api.core.v1.Pod"`},
		{"v3 group protobuf", groupURL, protoV3, http.StatusOK, protoV3Answer, "io.k8s.api.core.v1.Pod"},
		{"v3 unknown group", "/openapi/v3/apis/apps/v1", "application/json", http.StatusNotFound, "", ""},
		{"v3 empty group", "/openapi/v3/", "application/json", http.StatusNotFound, "", ""},
		{"unknown path", "/openapi/v4", "application/json", http.StatusNotFound, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := get(t, srv.URL+tt.path, tt.accept, "")
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status = %d, want %d (%s)", resp.StatusCode, tt.wantStatus, body)
			}
			if tt.wantType != "" && resp.Header.Get("Content-Type") != tt.wantType {
				t.Errorf("Content-Type = %q, want %q", resp.Header.Get("Content-Type"), tt.wantType)
			}
			if !strings.Contains(string(body), tt.wantContain) {
				t.Errorf("body does not contain %q", tt.wantContain)
			}
			if tt.wantStatus != http.StatusOK {
				return
			}
			etag := resp.Header.Get("Etag")
			if etag == "" {
				t.Fatal("no Etag")
			}
			again, _ := get(t, srv.URL+tt.path, tt.accept, etag)
			if again.StatusCode != http.StatusNotModified {
				t.Errorf("with If-None-Match: status = %d, want 304", again.StatusCode)
			}
		})
	}
}
