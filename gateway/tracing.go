package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeactor/kubeactor/actors"
	"github.com/kubeactor/kubeactor/actors/admission"
	"github.com/kubeactor/kubeactor/actors/kinds"
	"github.com/kubeactor/kubeactor/persistence"
	"github.com/kubeactor/kubeactor/tracing"
)

// Tracing: each request is a span, continuing the trace of a W3C traceparent header
// and returning its own traceparent; the actors continue it (actors/tracing.go).
// GET /kubeactor/v1/traces/{resource}[/{namespace}]/{name} answers the object's
// recent spans (tracing.Store.History) as JSON.

// The node agents' side (docs/architecture.md, tracing): GET
// /kubeactor/v1/lastwrite/{resource}[/{namespace}]/{name} answers the traceparent of
// the object's last write (tracing.Tracer.Recall), so an agent woken by the write
// continues its trace; POST /kubeactor/v1/spans takes an agent's finished spans
// (OTLP over HTTP, protobuf) into the store, so the traces path shows them.

// TracesPath and ExplainPath prefix the troubleshooting paths; LastWritePath and
// SpansPath are the agents'.
const (
	TracesPath    = "/kubeactor/v1/traces"
	ExplainPath   = "/kubeactor/v1/explain"
	LastWritePath = "/kubeactor/v1/lastwrite"
	SpansPath     = "/kubeactor/v1/spans"
)

// maxSpansBody bounds the body of a POST to SpansPath.
const maxSpansBody = 4 << 20

// startRequest starts the span of request c: it returns the request's context
// carrying it, and the span, nil when tracing is off.
func (s *Server) startRequest(c echo.Context) (context.Context, trace.Span) {
	req := c.Request()
	if s.tracer == nil {
		return req.Context(), nil
	}
	if p := req.URL.Path; p == SpansPath || strings.HasPrefix(p, LastWritePath+"/") {
		return req.Context(), nil // the agents' tracing plumbing is not traced itself
	}
	ctx := tracing.Propagator.Extract(req.Context(), propagation.HeaderCarrier(req.Header))
	ctx, sp := s.tracer.Start(ctx, s.spanNames.of(req.Method, c.Path(), req.URL.Path), trace.WithSpanKind(trace.SpanKindServer))
	tracing.Propagator.Inject(ctx, propagation.HeaderCarrier(c.Response().Header()))
	return ctx, sp
}

// endRequest ends the span of request req, with its attributes set in one call.
func endRequest(sp trace.Span, req *http.Request, status int) {
	if sp == nil {
		return
	}
	if sp.IsRecording() {
		sp.SetAttributes(attribute.String("http.method", req.Method), attribute.String("http.target", req.URL.RequestURI()),
			attribute.Int("http.status_code", status))
	}
	sp.End()
}

// spanNames are the names of the request spans, "METHOD route", made once per route.
type spanNames struct {
	mu    sync.RWMutex
	names map[[2]string]string
}

// maxSpanNames bounds the names kept: a request that matched no route is named by
// its path, which the client chooses.
const maxSpanNames = 1024

// of is the span name of a request of method on route (c.Path()), or on path when it
// matched no route.
func (n *spanNames) of(method, route, path string) string {
	if route == "" {
		return method + " " + path
	}
	k := [2]string{method, route}
	n.mu.RLock()
	name, ok := n.names[k]
	n.mu.RUnlock()
	if ok {
		return name
	}
	name = method + " " + route
	n.mu.Lock()
	if n.names == nil {
		n.names = map[[2]string]string{}
	}
	if len(n.names) < maxSpanNames {
		n.names[k] = name
	}
	n.mu.Unlock()
	return name
}

// mountTroubleshooting serves the traces and explain paths.
func (s *Server) mountTroubleshooting(e *echo.Echo) {
	for _, p := range []string{"/:resource/:namespace/:name", "/:resource/:name"} {
		e.GET(TracesPath+p, s.traces)
		e.GET(ExplainPath+p, s.explain)
		e.GET(LastWritePath+p, s.lastWrite)
	}
	e.POST(SpansPath, s.ingestSpans)
}

// LastWrite is the answer of the last-write path.
type LastWrite struct {
	Object      string `json:"object"`
	Traceparent string `json:"traceparent,omitempty"` // "" when no write of it is remembered
}

func (s *Server) lastWrite(c echo.Context) error {
	_, _, key, err := troubleshootKey(c)
	if err != nil {
		return err
	}
	lw := LastWrite{Object: key}
	if sc := s.tracer.Recall(key); sc.IsValid() {
		h := http.Header{}
		tracing.Propagator.Inject(trace.ContextWithSpanContext(context.Background(), sc), propagation.HeaderCarrier(h))
		lw.Traceparent = h.Get("traceparent")
	}
	return writeJSON(c, http.StatusOK, lw)
}

// ingestSpans keeps a node agent's finished spans (an OTLP ExportTraceServiceRequest
// in protobuf); a server without tracing takes them and keeps nothing. It answers an
// empty ExportTraceServiceResponse.
func (s *Server) ingestSpans(c echo.Context) error {
	req := c.Request()
	if ct, _, _ := mime.ParseMediaType(req.Header.Get("Content-Type")); ct != "application/x-protobuf" {
		return apierrors.NewGenericServerResponse(http.StatusUnsupportedMediaType, "create", schema.GroupResource{}, "",
			fmt.Sprintf("spans: content type %q: want application/x-protobuf (OTLP)", ct), 0, false)
	}
	if req.Header.Get("Content-Encoding") != "" {
		return apierrors.NewBadRequest("spans: content encoding " + req.Header.Get("Content-Encoding") + " not accepted")
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.Response(), req.Body, maxSpansBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("spans: more than %d bytes", maxSpansBody))
		}
		return apierrors.NewBadRequest("spans: " + err.Error())
	}
	spans, err := tracing.Decode(body)
	if err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	if st := s.tracer.Store(); st != nil {
		for _, sp := range spans {
			st.Add(sp)
		}
	}
	return c.Blob(http.StatusOK, "application/x-protobuf", nil)
}

// TraceHistory is the answer of the traces path.
type TraceHistory struct {
	Object string          `json:"object"`
	Traces []tracing.Trace `json:"traces"`
	// Partial names the master replicas whose spans are missing from the answer
	// (they did not answer in time); empty when every replica answered.
	Partial []string `json:"partial,omitempty"`
}

// troubleshootKey resolves the path's object to its tracing key.
func troubleshootKey(c echo.Context) (*kinds.Resource, string, string, error) {
	r, ok := kinds.Lookup(c.Param("resource"))
	if !ok {
		return nil, "", "", apierrors.NewNotFound(schema.GroupResource{Resource: c.Param("resource")}, "")
	}
	ns := c.Param("namespace")
	if r.Namespaced && ns == "" {
		return nil, "", "", apierrors.NewBadRequest(r.Name + " is namespaced: give a namespace")
	}
	if !r.Namespaced && ns != "" {
		return nil, "", "", apierrors.NewBadRequest(r.Name + " is not namespaced")
	}
	key := r.Name + "/" + c.Param("name")
	if ns != "" {
		key = r.Name + "/" + ns + "/" + c.Param("name")
	}
	return r, ns, key, nil
}

func (s *Server) traces(c echo.Context) error {
	_, _, key, err := troubleshootKey(c)
	if err != nil {
		return err
	}
	h := TraceHistory{Object: key, Traces: []tracing.Trace{}}
	st := s.tracer.Store()
	if st != nil {
		h.Traces = append(h.Traces, st.History(key)...)
	}
	req := c.Request()
	if _, peer := peerOf(req); peer || !s.replica.Replicated() || c.QueryParam("local") == "true" {
		// The whole traces are the second round's question, asked by another
		// replica on the peer port; on the API ports the path answers the object's
		// history only (a trace may hold spans about objects the caller may not read).
		if ids := c.QueryParam("traces"); ids != "" && peer && st != nil {
			h.Traces = append(h.Traces, wholeTraces(st, strings.Split(ids, ","))...)
		}
		return writeJSON(c, http.StatusOK, h)
	}
	return writeJSON(c, http.StatusOK, s.gatherHistories(c, req.URL.Path, key, h, true))
}

// objectSpans returns the spans about the object key of request c (the explain
// path's), oldest first: this replica's, and on a replicated server every replica's
// (their histories, the first round of gatherHistories), with the replicas that did
// not answer. related are all the spans kept of the same traces (the children of
// the spans about the object among them).
func (s *Server) objectSpans(c echo.Context, key string) (about, related []tracing.Span, partial []string) {
	st := s.tracer.Store()
	req := c.Request()
	if _, peer := peerOf(req); peer || !s.replica.Replicated() || c.QueryParam("local") == "true" {
		if st == nil {
			return nil, nil, nil
		}
		about = st.Object(key)
		seen := map[trace.TraceID]bool{}
		for _, sp := range about {
			if !seen[sp.TraceID] {
				seen[sp.TraceID] = true
				related = append(related, st.Trace(sp.TraceID)...)
			}
		}
		return about, related, nil
	}
	h := TraceHistory{Object: key, Traces: []tracing.Trace{}}
	if st != nil {
		h.Traces = st.History(key)
	}
	path := TracesPath + strings.TrimPrefix(req.URL.Path, ExplainPath)
	merged := s.gatherHistories(c, path, key, h, false)
	related = tracing.SpansOf(merged.Traces)
	for _, sp := range related {
		if sp.Object == key {
			about = append(about, sp)
		}
	}
	sort.SliceStable(about, func(i, j int) bool { return about[i].Start.Before(about[j].Start) })
	return about, related, merged.Partial
}

// wholeTraces returns every span this replica keeps of the traces ids (hex).
func wholeTraces(st *tracing.Store, ids []string) []tracing.Trace {
	var out []tracing.Trace
	for _, id := range ids {
		tid, err := trace.TraceIDFromHex(id)
		if err != nil {
			continue
		}
		if spans := st.Trace(tid); len(spans) > 0 {
			out = append(out, tracing.Whole(spans))
		}
	}
	return out
}

// Traces across replicas (docs/replication.md, tracing). Each replica keeps the
// spans of its own actors and of the node agents that talk to it, and one trace
// crosses replicas: an RC's sync runs on the replica that owns the RC, the pod
// creates it makes run on the leader, a request may come in on a third. So the
// traces path of a replicated server asks the other members in two rounds, each in
// parallel with a short timeout:
//
//  1. GET the same path with ?local=true: each member's own history of the object,
//     which names the traces that touch it;
//  2. GET it with ?local=true&traces=ID,...: the same history plus every span the
//     member keeps of those traces (the ancestors and descendants of the object's
//     spans that ran there, which its own history cannot tell are related).
//
// and builds the history of the object from all the spans, each (trace id, span id)
// once. A member that does not answer in time is named in the answer's Partial list.
//
// The questions go to the members' peer ports, the path forward.go uses for the
// writes a follower forwards: the peer port is trusted, and the request carries the
// caller's user in the peer headers. This replica has authenticated and authorized
// the caller for the traces path already (as a follower does before it forwards a
// write), so the member answers as the insecure port would: nothing bypasses
// authorization, and a member never fans out a request that came in on its peer port.

// traceFanOutTimeout bounds the wait for the other replicas' answers, per round.
const traceFanOutTimeout = 2 * time.Second

// memberHistory is one replica's local history of the object, or why it is missing.
type memberHistory struct {
	name string
	h    *TraceHistory
	err  error
}

// gatherHistories asks every other member for its spans of the object key at its
// traces path (path) and merges them with this replica's history local; the second
// round (the whole traces) only if whole.
func (s *Server) gatherHistories(c echo.Context, path, key string, local TraceHistory, whole bool) TraceHistory {
	req := c.Request()
	ctx, cancel := context.WithTimeout(req.Context(), traceFanOutTimeout)
	defer cancel()
	ms, err := s.replica.Members(ctx)
	if err != nil {
		return mergeHistories(key, []memberHistory{{name: s.name, h: &local}, {name: "members: " + err.Error(), err: err}})
	}
	var others []persistence.Member
	for _, m := range ms {
		if m.Name != s.name {
			others = append(others, m)
		}
	}
	u := actors.UserOf(req.Context())
	uid, _ := c.Get(uidKey).(string)
	q := req.URL.Query()
	q.Set("local", "true")
	first := s.askMembers(ctx, others, path+"?"+q.Encode(), u, uid)
	ids := map[string]bool{}
	for _, p := range append(first, memberHistory{name: s.name, h: &local}) {
		if p.h != nil {
			for _, t := range p.h.Traces {
				ids[t.TraceID] = true
			}
		}
	}
	parts := []memberHistory{{name: s.name, h: &local}}
	if len(ids) == 0 || !whole {
		return mergeHistories(key, append(parts, first...))
	}
	list := make([]string, 0, len(ids))
	for id := range ids {
		list = append(list, id)
	}
	sort.Strings(list)
	if st := s.tracer.Store(); st != nil {
		whole := TraceHistory{Object: key, Traces: wholeTraces(st, list)}
		parts = append(parts, memberHistory{name: s.name, h: &whole})
	}
	q.Set("traces", strings.Join(list, ","))
	ctx2, cancel2 := context.WithTimeout(req.Context(), traceFanOutTimeout)
	defer cancel2()
	second := s.askMembers(ctx2, others, path+"?"+q.Encode(), u, uid)
	for i, p := range second {
		if p.err != nil && first[i].err == nil {
			// The member answered the first round: keep what it told then, and say
			// its answer is partial.
			parts = append(parts, first[i])
		}
	}
	return mergeHistories(key, append(parts, second...))
}

// askMembers GETs uri from every member ms in parallel; the answers in the order of ms.
func (s *Server) askMembers(ctx context.Context, ms []persistence.Member, uri string, u admission.User, uid string) []memberHistory {
	out := make([]memberHistory, len(ms))
	done := make(chan struct{}, len(ms))
	for i, m := range ms {
		go func() {
			defer func() { done <- struct{}{} }()
			out[i].name = m.Name
			if m.PeerAddress == "" {
				out[i].err = errors.New("no peer address")
				return
			}
			out[i].h, out[i].err = s.memberHistory(ctx, m.PeerAddress, uri, u, uid)
			if out[i].err != nil {
				s.log.WithError(out[i].err).WithField("member", m.Name).Debug("traces: member did not answer")
			}
		}()
	}
	for range ms {
		<-done
	}
	return out
}

// memberHistory GETs uri from the peer port addr as user u.
func (s *Server) memberHistory(ctx context.Context, addr, uri string, u admission.User, uid string) (*TraceHistory, error) {
	r, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+uri, nil)
	if err != nil {
		return nil, fmt.Errorf("traces request: %w", err)
	}
	r.Header.Set(HeaderPeerUser, u.Name)
	if uid != "" {
		r.Header.Set(HeaderPeerUID, uid)
	}
	for _, g := range u.Groups {
		r.Header.Add(HeaderPeerGroup, g)
	}
	r.Header.Set(HeaderPeerFrom, s.name)
	r.Header.Set("Accept", "application/json")
	resp, err := s.peer.transport.RoundTrip(r)
	if err != nil {
		return nil, fmt.Errorf("traces from %s: %w", addr, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("traces from %s: %w", addr, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("traces from %s: %s: %s", addr, resp.Status, strings.TrimSpace(string(body)))
	}
	var h TraceHistory
	if err := json.Unmarshal(body, &h); err != nil {
		return nil, fmt.Errorf("traces from %s: decode: %w", addr, err)
	}
	return &h, nil
}

// mergeHistories merges the replicas' local histories of the object key: their
// spans, each (trace id, span id) once, built into one history; the replicas whose
// history is missing are named in Partial (sorted).
func mergeHistories(key string, parts []memberHistory) TraceHistory {
	out := TraceHistory{Object: key, Traces: []tracing.Trace{}}
	var spans []tracing.Span
	for _, p := range parts {
		if p.err != nil || p.h == nil {
			out.Partial = append(out.Partial, p.name)
			continue
		}
		spans = append(spans, tracing.SpansOf(p.h.Traces)...)
		out.Partial = append(out.Partial, p.h.Partial...)
	}
	sort.Strings(out.Partial)
	out.Partial = slices.Compact(out.Partial)
	out.Traces = append(out.Traces, tracing.BuildHistory(tracing.Dedupe(spans), key)...)
	return out
}
