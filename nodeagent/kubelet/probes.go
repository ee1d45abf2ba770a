package kubelet

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubeactor/kubeactor/nodeagent/podsync"
	"github.com/kubeactor/kubeactor/nodeagent/runtime"
)

type probeKind int

const (
	liveness probeKind = iota
	readiness
)

func (k probeKind) String() string {
	if k == liveness {
		return "Liveness"
	}
	return "Readiness"
}

type probeKey struct {
	container string
	kind      probeKind
}

// probeRecord is a probe's state for one container instance.
type probeRecord struct {
	containerID string
	lastRun     time.Time
	state       podsync.ProbeState
}

// probeClient makes the HTTP probes; it never follows a redirect to another host.
var probeClient = &http.Client{
	Transport: &http.Transport{DisableKeepAlives: true},
	CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 || req.URL.Host != via[0].URL.Host {
			return http.ErrUseLastResponse
		}
		return nil
	},
}

// runProbes runs the probes that are due on the pod's running containers and
// returns how long until the next one is due (0 for none).
func (a *Agent) runProbes(ctx context.Context, w *worker, pod *corev1.Pod, obs podsync.Observed) time.Duration {
	st := &w.st
	var next time.Duration
	sandbox, _ := obs.Sandbox()
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		cur, ok := obs.Latest(c.Name)
		for kind, spec := range map[probeKind]*corev1.Probe{liveness: c.LivenessProbe, readiness: c.ReadinessProbe} {
			key := probeKey{c.Name, kind}
			if spec == nil || !ok || !cur.Running() {
				delete(st.probes, key)
				continue
			}
			rec := st.probes[key]
			if rec == nil || rec.containerID != cur.ID {
				rec = &probeRecord{containerID: cur.ID, state: podsync.InitialProbeState(kind == liveness)}
				st.probes[key] = rec
			}
			now := a.now()
			if podsync.ProbeDue(spec, cur.StartedAt, rec.lastRun, now) {
				started := time.Now()
				ok, msg := a.probe(ctx, spec, c, cur, sandbox.IP)
				a.cfg.Metrics.Probed(kind.String(), ok)
				before := rec.state.Result
				rec.state = podsync.NextProbe(spec, rec.state, ok)
				rec.lastRun = now
				if before != rec.state.Result {
					st.trace.probeChanged(ctx, kind, c.Name, started, rec.state.Result, msg) // tracing.go
				}
				if !ok {
					a.rec.Eventf(podsync.ContainerRef(pod, c.Name), corev1.EventTypeWarning, "Unhealthy", "%s probe failed: %s", kind, msg)
				}
				if before != rec.state.Result && kind == liveness && !rec.state.Result {
					next = time.Nanosecond // kill it now
				}
			}
			due := podsync.ProbeNext(spec, cur.StartedAt, rec.lastRun).Sub(a.now())
			if due < time.Millisecond {
				due = time.Millisecond
			}
			if next == 0 || due < next {
				next = due
			}
		}
	}
	return next
}

// livenessFailed names the containers whose liveness probe has failed.
func (a *Agent) livenessFailed(w *worker, obs podsync.Observed) map[string]bool {
	out := map[string]bool{}
	for key, rec := range w.st.probes {
		if key.kind != liveness || rec.state.Result {
			continue
		}
		if cur, ok := obs.Latest(key.container); ok && cur.ID == rec.containerID && cur.Running() {
			out[key.container] = true
		}
	}
	return out
}

// readiness gives each running container's readiness: its probe's result, or true
// without a readiness probe.
func (a *Agent) readiness(w *worker, obs podsync.Observed) map[string]bool {
	pod := w.latest.Load()
	out := map[string]bool{}
	for _, c := range pod.Spec.Containers {
		cur, ok := obs.Latest(c.Name)
		if !ok || !cur.Running() {
			continue
		}
		if c.ReadinessProbe == nil {
			out[c.Name] = true
			continue
		}
		rec := w.st.probes[probeKey{c.Name, readiness}]
		out[c.Name] = rec != nil && rec.containerID == cur.ID && rec.state.Result
	}
	return out
}

// probe runs one probe against a container whose pod has IP podIP.
func (a *Agent) probe(ctx context.Context, spec *corev1.Probe, ctr *corev1.Container, c runtime.Container, podIP string) (bool, string) {
	ctx, cancel := context.WithTimeout(ctx, podsync.ProbeTimeout(spec))
	defer cancel()
	switch {
	case spec.Exec != nil:
		var out limitedBuffer
		code, err := a.rt.Exec(ctx, c.ID, runtime.ExecOptions{Cmd: spec.Exec.Command, Stdout: &out, Stderr: &out})
		if err != nil {
			return false, err.Error()
		}
		if code != 0 {
			return false, fmt.Sprintf("command %q exited with %d: %s", spec.Exec.Command, code, out.String())
		}
		return true, ""
	case spec.HTTPGet != nil:
		g := spec.HTTPGet
		host := g.Host
		if host == "" {
			host = podIP
		}
		port, err := resolvePort(g.Port, ctr)
		if err != nil {
			return false, err.Error()
		}
		scheme := "http"
		if g.Scheme == corev1.URISchemeHTTPS {
			scheme = "https"
		}
		u := url.URL{Scheme: scheme, Host: net.JoinHostPort(host, strconv.Itoa(port)), Path: g.Path}
		if u.Path == "" {
			u.Path = "/"
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
		if err != nil {
			return false, err.Error()
		}
		for _, h := range g.HTTPHeaders {
			req.Header.Add(h.Name, h.Value)
		}
		req.Header.Set("User-Agent", "kube-probe/1.0")
		resp, err := probeClient.Do(req)
		if err != nil {
			return false, err.Error()
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 10<<10))
		_ = resp.Body.Close()
		if resp.StatusCode < 200 || resp.StatusCode >= 400 {
			return false, fmt.Sprintf("HTTP probe failed with statuscode: %d", resp.StatusCode)
		}
		return true, ""
	case spec.TCPSocket != nil:
		host := spec.TCPSocket.Host
		if host == "" {
			host = podIP
		}
		port, err := resolvePort(spec.TCPSocket.Port, ctr)
		if err != nil {
			return false, err.Error()
		}
		conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(port)))
		if err != nil {
			return false, err.Error()
		}
		_ = conn.Close()
		return true, ""
	}
	return false, "probe has no handler"
}

// resolvePort turns a probe's port (a number or a container port's name) into a
// number.
func resolvePort(p intstr.IntOrString, c *corev1.Container) (int, error) {
	if p.Type == intstr.Int {
		return p.IntValue(), nil
	}
	if n, err := strconv.Atoi(p.StrVal); err == nil {
		return n, nil
	}
	for _, cp := range c.Ports {
		if cp.Name == p.StrVal {
			return int(cp.ContainerPort), nil
		}
	}
	return 0, fmt.Errorf("named port %q: not found", p.StrVal)
}

// limitedBuffer keeps the first 4 KiB written to it.
type limitedBuffer struct{ b []byte }

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := 4096 - len(l.b); room > 0 {
		l.b = append(l.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (l *limitedBuffer) String() string { return string(l.b) }
