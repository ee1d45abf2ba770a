// Command testserver is the HTTP server the e2e tests run in pods. It exposes
// switches for probes, reads and writes files (to check volumes), reports its
// environment and hostname, allocates memory (to trigger OOM kills) and exits on
// demand. It logs each request to stdout and every error to stderr, so log tests
// see both streams. It listens on $PORT (default 8080).
//
// On SIGTERM it prints "testserver: SIGTERM" and exits 0, unless IGNORE_SIGTERM=1,
// in which case it keeps running (to test the SIGKILL after the grace period).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// notReadyFile, when it exists, makes /ready fail (a test can create it with
// /write or with an exec).
const notReadyFile = "/tmp/notready"

type server struct {
	unhealthy atomic.Bool
	unready   atomic.Bool

	mu    sync.Mutex
	alloc [][]byte // kept so the memory stays in use

	exit func(code int) // stops the server and exits
}

func main() {
	// `testserver -probe URL` is a client for exec probes: exit 0 when GET URL
	// answers 2xx, 1 otherwise (the image has no shell or wget).
	if len(os.Args) == 3 && os.Args[1] == "-probe" {
		os.Exit(probe(os.Args[2]))
	}
	port := os.Getenv("PORT")
	if port == "" {
		port = "8080"
	}
	// A FROM scratch image has no /tmp; the files endpoints and notReadyFile want one.
	if err := os.MkdirAll(os.TempDir(), 0o1777); err != nil {
		fmt.Fprintf(os.Stderr, "testserver: create %s: %v\n", os.TempDir(), err)
	}

	s := &server{}
	srv := &http.Server{Addr: ":" + port, Handler: s.routes(), ReadHeaderTimeout: 10 * time.Second}
	s.exit = func(code int) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		fmt.Printf("testserver: exiting with code %d\n", code)
		os.Exit(code)
	}

	go handleSignals()

	fmt.Printf("testserver listening on :%s\n", port)
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(os.Stderr, "testserver: %v\n", err)
		os.Exit(1)
	}
	// Shutdown was called by /exit, which exits the process itself.
	select {}
}

func handleSignals() {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	for sig := range sigs {
		if sig == syscall.SIGINT {
			fmt.Println("testserver: SIGINT")
			os.Exit(0)
		}
		if os.Getenv("IGNORE_SIGTERM") == "1" {
			fmt.Println("testserver: SIGTERM ignored")
			continue
		}
		fmt.Println("testserver: SIGTERM")
		os.Exit(0)
	}
}

func (s *server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			fail(w, http.StatusNotFound, "no such endpoint "+r.URL.Path)
			return
		}
		text(w, http.StatusOK, "testserver")
	})
	mux.HandleFunc("/healthz", s.healthz)
	mux.HandleFunc("/fail-health", func(w http.ResponseWriter, r *http.Request) {
		s.unhealthy.Store(true)
		text(w, http.StatusOK, "unhealthy")
	})
	mux.HandleFunc("/heal", func(w http.ResponseWriter, r *http.Request) {
		s.unhealthy.Store(false)
		text(w, http.StatusOK, "healthy")
	})
	mux.HandleFunc("/ready", s.ready)
	mux.HandleFunc("/unready", func(w http.ResponseWriter, r *http.Request) {
		s.unready.Store(true)
		text(w, http.StatusOK, "unready")
	})
	mux.HandleFunc("/make-ready", func(w http.ResponseWriter, r *http.Request) {
		s.unready.Store(false)
		if err := os.Remove(notReadyFile); err != nil && !os.IsNotExist(err) {
			fail(w, http.StatusInternalServerError, err.Error())
			return
		}
		text(w, http.StatusOK, "ready")
	})
	mux.HandleFunc("/env", envHandler)
	mux.HandleFunc("/hostname", func(w http.ResponseWriter, r *http.Request) {
		name, err := os.Hostname()
		if err != nil {
			fail(w, http.StatusInternalServerError, err.Error())
			return
		}
		text(w, http.StatusOK, name)
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		text(w, http.StatusOK, r.URL.Query().Get("msg"))
	})
	mux.HandleFunc("/stderr", func(w http.ResponseWriter, r *http.Request) {
		msg := r.URL.Query().Get("msg")
		fmt.Fprintln(os.Stderr, msg)
		text(w, http.StatusOK, msg)
	})
	mux.HandleFunc("/exit", s.exitHandler)
	mux.HandleFunc("/alloc", s.allocHandler)
	mux.HandleFunc("/file", fileHandler)
	mux.HandleFunc("/write", writeHandler)
	mux.HandleFunc("/sleep", sleepHandler)
	return logRequests(mux)
}

func (s *server) healthz(w http.ResponseWriter, r *http.Request) {
	if s.unhealthy.Load() {
		fail(w, http.StatusInternalServerError, "unhealthy")
		return
	}
	text(w, http.StatusOK, "ok")
}

func (s *server) ready(w http.ResponseWriter, r *http.Request) {
	if s.unready.Load() {
		fail(w, http.StatusServiceUnavailable, "not ready")
		return
	}
	if _, err := os.Stat(notReadyFile); err == nil {
		fail(w, http.StatusServiceUnavailable, "not ready: "+notReadyFile+" exists")
		return
	}
	text(w, http.StatusOK, "ready")
}

func envHandler(w http.ResponseWriter, r *http.Request) {
	env := map[string]string{}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(env); err != nil {
		fmt.Fprintf(os.Stderr, "testserver: write /env: %v\n", err)
	}
}

func (s *server) exitHandler(w http.ResponseWriter, r *http.Request) {
	code, err := intParam(r, "code", 0)
	if err != nil {
		fail(w, http.StatusBadRequest, err.Error())
		return
	}
	w.Header().Set("Connection", "close")
	text(w, http.StatusOK, fmt.Sprintf("exiting with code %d", code))
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	// Shutdown waits for this handler to return, so exit from another goroutine.
	go s.exit(code)
}

func (s *server) allocHandler(w http.ResponseWriter, r *http.Request) {
	mb, err := intParam(r, "mb", 0)
	if err != nil || mb < 0 {
		fail(w, http.StatusBadRequest, fmt.Sprintf("bad mb: %v", err))
		return
	}
	const page = 4096
	total := 0
	for i := 0; i < mb; i++ {
		chunk := make([]byte, 1<<20)
		for j := 0; j < len(chunk); j += page {
			chunk[j] = 1 // touch every page so it is really resident
		}
		s.mu.Lock()
		s.alloc = append(s.alloc, chunk)
		total = len(s.alloc)
		s.mu.Unlock()
	}
	text(w, http.StatusOK, fmt.Sprintf("allocated %d MiB, holding %d MiB", mb, total))
}

func fileHandler(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Query().Get("path")
	if path == "" {
		fail(w, http.StatusBadRequest, "missing path")
		return
	}
	data, err := os.ReadFile(path)
	if err != nil {
		status := http.StatusInternalServerError
		if os.IsNotExist(err) {
			status = http.StatusNotFound
		}
		fail(w, status, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	_, _ = w.Write(data)
}

func writeHandler(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	path := q.Get("path")
	if path == "" {
		fail(w, http.StatusBadRequest, "missing path")
		return
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		fail(w, http.StatusInternalServerError, err.Error())
		return
	}
	if err := os.WriteFile(path, []byte(q.Get("data")), 0o644); err != nil {
		fail(w, http.StatusInternalServerError, err.Error())
		return
	}
	text(w, http.StatusOK, "wrote "+path)
}

func sleepHandler(w http.ResponseWriter, r *http.Request) {
	ms, err := intParam(r, "ms", 0)
	if err != nil {
		fail(w, http.StatusBadRequest, err.Error())
		return
	}
	select {
	case <-time.After(time.Duration(ms) * time.Millisecond):
		text(w, http.StatusOK, fmt.Sprintf("slept %d ms", ms))
	case <-r.Context().Done():
	}
}

func intParam(r *http.Request, name string, def int) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("parameter %s: %w", name, err)
	}
	return n, nil
}

func text(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body + "\n"))
}

// fail answers with an error status and reports it on stderr.
func fail(w http.ResponseWriter, status int, msg string) {
	fmt.Fprintf(os.Stderr, "testserver: error %d: %s\n", status, msg)
	text(w, status, msg)
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r)
		fmt.Printf("testserver: %s %s %s -> %d\n", r.RemoteAddr, r.Method, r.URL.RequestURI(), rec.status)
	})
}

// probe GETs url and returns the exit code of an exec probe.
func probe(url string) int {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		fmt.Fprintf(os.Stderr, "probe: %v\n", err)
		return 1
	}
	_ = resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		fmt.Fprintf(os.Stderr, "probe: %s\n", resp.Status)
		return 1
	}
	return 0
}
