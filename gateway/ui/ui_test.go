package ui

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
)

func server() *echo.Echo {
	e := echo.New()
	Mount(e)
	// The gateway's legacy proxy, which the kube-ui address must win over.
	e.Any("/api/v1/proxy/*", func(c echo.Context) error { return c.String(http.StatusTeapot, "proxied") })
	return e
}

func TestRoutes(t *testing.T) {
	tests := []struct {
		name, method, path string
		code               int
		location           string
		contentType        string
		body               string
	}{
		{name: "the page", method: http.MethodGet, path: "/ui", code: http.StatusOK, contentType: "text/html", body: `<script src="/ui/app.js"`},
		{name: "the page, trailing slash", method: http.MethodGet, path: "/ui/", code: http.StatusMovedPermanently, location: "/ui"},
		{name: "index.html", method: http.MethodGet, path: "/ui/index.html", code: http.StatusMovedPermanently, location: "/ui"},
		{name: "script", method: http.MethodGet, path: "/ui/app.js", code: http.StatusOK, contentType: "javascript", body: "class Collection"},
		{name: "style", method: http.MethodGet, path: "/ui/style.css", code: http.StatusOK, contentType: "text/css", body: "table {"},
		{name: "unknown file", method: http.MethodGet, path: "/ui/nope.js", code: http.StatusNotFound},
		{name: "no escape from the assets", method: http.MethodGet, path: "/ui/../ui.go", code: http.StatusNotFound},
		{name: "the book's kube-ui address", method: http.MethodGet, path: KubeUIPath + "/", code: http.StatusTemporaryRedirect, location: "/ui"},
		{name: "kube-ui without the slash", method: http.MethodGet, path: KubeUIPath, code: http.StatusTemporaryRedirect, location: "/ui"},
		{name: "kube-ui's files", method: http.MethodGet, path: KubeUIPath + "/app/index.html", code: http.StatusTemporaryRedirect, location: "/ui"},
		{name: "kube-ui written to", method: http.MethodPost, path: KubeUIPath + "/", code: http.StatusMethodNotAllowed},
		{name: "another service's proxy is untouched", method: http.MethodGet, path: "/api/v1/proxy/namespaces/kube-system/services/kube-dns/", code: http.StatusTeapot},
	}
	e := server()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			e.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, nil))
			if rec.Code != tc.code {
				t.Fatalf("%s %s: %d, want %d (%s)", tc.method, tc.path, rec.Code, tc.code, rec.Body)
			}
			if got := rec.Header().Get("Location"); got != tc.location {
				t.Errorf("Location %q, want %q", got, tc.location)
			}
			if ct := rec.Header().Get("Content-Type"); !strings.Contains(ct, tc.contentType) {
				t.Errorf("Content-Type %q, want %q in it", ct, tc.contentType)
			}
			if !strings.Contains(rec.Body.String(), tc.body) {
				t.Errorf("body lacks %q", tc.body)
			}
			if tc.code == http.StatusOK && rec.Header().Get("Content-Security-Policy") != contentSecurityPolicy {
				t.Errorf("no content security policy")
			}
		})
	}
}

// TestRevalidation: a browser that has a file gets 304 for its ETag, and the file
// again once the ETag differs (a new binary).
func TestRevalidation(t *testing.T) {
	e := server()
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/ui/app.js", nil))
	etag := rec.Header().Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	for _, tc := range []struct {
		ifNoneMatch string
		code        int
	}{{etag, http.StatusNotModified}, {`"older"`, http.StatusOK}} {
		req := httptest.NewRequest(http.MethodGet, "/ui/app.js", nil)
		req.Header.Set("If-None-Match", tc.ifNoneMatch)
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		if rec.Code != tc.code {
			t.Errorf("If-None-Match %s: %d, want %d", tc.ifNoneMatch, rec.Code, tc.code)
		}
	}
}

// TestNothingExternal: no embedded file names another origin (the policy would block
// it anyway), and every file the page loads is embedded.
func TestNothingExternal(t *testing.T) {
	external := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}|@import|url\(\s*['"]?(https?:|//)`)
	err := fs.WalkDir(embedded, "assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := embedded.ReadFile(p)
		if m := external.Find(b); m != nil {
			t.Errorf("%s refers to %q", p, m)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	index := string(assets["index.html"].body)
	for _, m := range regexp.MustCompile(`(?:src|href)="(/ui/[^"]+)"`).FindAllStringSubmatch(index, -1) {
		if _, ok := assets[strings.TrimPrefix(m[1], "/ui/")]; !ok {
			t.Errorf("index.html loads %s, which is not embedded", m[1])
		}
	}
}
