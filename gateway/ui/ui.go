package ui

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
)

// Path is where the dashboard is served.
const Path = "/ui"

// KubeUIPath is the book's address of kube-ui, the v1.0 dashboard add-on, reached
// through the service proxy; it redirects to Path.
const KubeUIPath = "/api/v1/proxy/namespaces/kube-system/services/kube-ui"

// contentSecurityPolicy lets the page load and call only its own origin.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

//go:embed assets
var embedded embed.FS

// asset is one embedded file, ready to serve.
type asset struct {
	body        []byte
	contentType string
	etag        string
}

// assets are the embedded files by name ("index.html", "app.js", ...).
var assets = load()

func load() map[string]asset {
	out := map[string]asset{}
	err := fs.WalkDir(embedded, "assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := embedded.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		ct := mime.TypeByExtension(path.Ext(p))
		if ct == "" {
			ct = "application/octet-stream"
		}
		out[strings.TrimPrefix(p, "assets/")] = asset{body: b, contentType: ct, etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
		return nil
	})
	if err != nil {
		panic("ui: embedded assets: " + err.Error()) // the build embeds them; this cannot fail
	}
	return out
}

// Mount registers the dashboard's routes on e: the page at Path, its files under
// Path/, and redirects to it from Path/ and from the book's kube-ui address.
func Mount(e *echo.Echo) {
	e.GET(Path, func(c echo.Context) error { return serve(c, "index.html") })
	e.GET(Path+"/*", func(c echo.Context) error {
		name := c.Param("*")
		if name == "" || name == "index.html" {
			return c.Redirect(http.StatusMovedPermanently, Path)
		}
		return serve(c, name)
	})
	toUI := func(c echo.Context) error {
		if m := c.Request().Method; m != http.MethodGet && m != http.MethodHead {
			return echo.ErrMethodNotAllowed
		}
		return c.Redirect(http.StatusTemporaryRedirect, Path)
	}
	e.Any(KubeUIPath, toUI)
	e.Any(KubeUIPath+"/*", toUI)
}

// serve writes the embedded file name, or 404.
func serve(c echo.Context, name string) error {
	a, ok := assets[name]
	if !ok {
		return echo.ErrNotFound
	}
	h := c.Response().Header()
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-cache") // revalidated by ETag: a new binary serves new files
	h.Set("ETag", a.etag)
	h.Set("Content-Type", a.contentType)
	http.ServeContent(c.Response(), c.Request(), name, time.Time{}, bytes.NewReader(a.body))
	return nil
}
