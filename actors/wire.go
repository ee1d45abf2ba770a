package actors

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/remote"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/types/known/anypb"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeactor/kubeactor/actors/admission"
	"github.com/kubeactor/kubeactor/actors/event"
	"github.com/kubeactor/kubeactor/actors/kinds"
	"github.com/kubeactor/kubeactor/actors/node"
	"github.com/kubeactor/kubeactor/actors/resourcequota"
	"github.com/kubeactor/kubeactor/persistence"
	"github.com/kubeactor/kubeactor/persistence/command"
)

// The messages that cross between the members of a replicated control plane
// (cluster.go) travel over protoactor's remote transport, which serialises only
// protobuf messages and panics on a type the receiver does not know. So every
// message that may cross is sent as a google.protobuf.Any, which every member knows:
// its type URL names one of the wire types below and its value is that type's JSON.
// The receiver turns it back into the message (receiveWire, decodeAnswer); one it
// cannot decode (a newer member's type, a damaged value) is logged and dropped, never
// a crash. The wire types are the registration: the same table on every member.

// wirePrefix begins the type URL of every wire message.
const wirePrefix = "kubeactor.io/wire/"

// Wire type names.
const (
	wireCreate = "create"
	wireUpdate = "update"
	wireDelete = "delete"
	wireReply  = "reply"
	wireKind   = "kind"
	wireKindOK = "kindreply"
	// The evictor's requests from node actors on other members.
	wireEvict       = "evict"
	wireEvictCancel = "evictcancel"
)

// errUndecodable: a wire message whose type or value this member does not know.
var errUndecodable = errors.New("actors: undecodable wire message")

// rootAny is what a wire message becomes on its way out: remote marshals the Any
// it embeds. Its Deserialize is never called (the receiver gets the Any itself).
type rootAny struct{ *anypb.Any }

func (rootAny) Deserialize() (remote.RootSerializable, error) {
	return nil, errors.New("actors: a wire message is decoded by its receiver")
}

func toAny(name string, v any) (remote.RootSerialized, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", name, err)
	}
	return rootAny{&anypb.Any{TypeUrl: wirePrefix + name, Value: b}}, nil
}

// wireEnvelope is envelope on the wire; Span is the sender's span as a traceparent.
type wireEnvelope struct {
	Trace string          `json:"trace,omitempty"`
	Key   persistence.Key `json:"key"`
	Hops  int             `json:"hops,omitempty"`
	Span  string          `json:"span,omitempty"`
}

func (e envelope) wire() wireEnvelope {
	w := wireEnvelope{Trace: e.trace, Key: e.key, Hops: e.hops}
	if e.span.IsValid() {
		w.Span = fmt.Sprintf("00-%s-%s-%s", e.span.TraceID(), e.span.SpanID(), e.span.TraceFlags())
	}
	return w
}

func (w wireEnvelope) envelope() envelope {
	e := envelope{trace: w.Trace, key: w.Key, hops: w.Hops}
	if p := strings.Split(w.Span, "-"); len(p) == 4 {
		tid, err1 := trace.TraceIDFromHex(p[1])
		sid, err2 := trace.SpanIDFromHex(p[2])
		if err1 == nil && err2 == nil {
			flags := trace.TraceFlags(0)
			if p[3] == "01" {
				flags = trace.FlagsSampled
			}
			e.span = trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: flags, Remote: true})
		}
	}
	return e
}

type wireWrite struct {
	User      string   `json:"user,omitempty"`
	Groups    []string `json:"groups,omitempty"`
	Sub       string   `json:"sub,omitempty"`
	DryRun    bool     `json:"dryRun,omitempty"`
	Bootstrap bool     `json:"bootstrap,omitempty"`
}

func (w write) wire() wireWrite {
	return wireWrite{User: w.user.Name, Groups: w.user.Groups, Sub: w.sub, DryRun: w.dryRun, Bootstrap: w.bootstrap}
}

func (w wireWrite) write() write {
	return write{user: admission.User{Name: w.User, Groups: w.Groups}, sub: w.Sub, dryRun: w.DryRun, bootstrap: w.Bootstrap}
}

// wireRequest is a create, update or delete request on the wire.
type wireRequest struct {
	Env    wireEnvelope          `json:"env"`
	Write  wireWrite             `json:"write"`
	Object json.RawMessage       `json:"object,omitempty"`
	Pre    command.Preconditions `json:"pre,omitzero"`
	Delete *DeleteOptions        `json:"delete,omitempty"`
}

// Serialize makes the request a wire message when it crosses to another member.
func (m *createRequest) Serialize() (remote.RootSerialized, error) {
	obj, err := json.Marshal(m.object)
	if err != nil {
		return nil, err
	}
	return toAny(wireCreate, wireRequest{Env: m.envelope.wire(), Write: m.write.wire(), Object: obj})
}

// Serialize makes the request a wire message when it crosses to another member.
func (m *updateRequest) Serialize() (remote.RootSerialized, error) {
	obj, err := json.Marshal(m.object)
	if err != nil {
		return nil, err
	}
	return toAny(wireUpdate, wireRequest{Env: m.envelope.wire(), Write: m.write.wire(), Object: obj, Pre: m.pre})
}

// Serialize makes the request a wire message when it crosses to another member.
func (m *deleteRequest) Serialize() (remote.RootSerialized, error) {
	opts := m.opts
	return toAny(wireDelete, wireRequest{Env: m.envelope.wire(), Write: m.write.wire(), Delete: &opts})
}

// wireError keeps what the receiver of an error needs: its text, the store's or the
// actors' sentinel it wraps, and its Kubernetes Status when it has one.
type wireError struct {
	Message string         `json:"message"`
	Is      string         `json:"is,omitempty"`
	Status  *metav1.Status `json:"status,omitempty"`
}

// sentinels are the errors whose identity crosses the wire (errors.Is holds after).
var sentinels = map[string]error{
	"notfound":       persistence.ErrNotFound,
	"alreadyexists":  persistence.ErrAlreadyExists,
	"conflict":       persistence.ErrConflict,
	"invalid":        persistence.ErrInvalid,
	"notleader":      persistence.ErrNotLeader,
	"unknownoutcome": persistence.ErrUnknownOutcome,
	"closed":         persistence.ErrClosed,
	"timeout":        ErrTimeout,
	"unknownkind":    ErrUnknownResource,
	"claimed":        persistence.ErrClaimed,
}

func toWireError(err error) *wireError {
	if err == nil {
		return nil
	}
	w := &wireError{Message: err.Error()}
	for name, s := range sentinels {
		// ErrClaimed wraps ErrConflict: the narrower one is kept.
		if errors.Is(err, s) && (w.Is == "" || s == persistence.ErrClaimed) {
			w.Is = name
		}
	}
	var st apierrors.APIStatus
	var inv *InvalidError
	switch {
	case errors.As(err, &st):
		s := st.Status()
		w.Status = &s
	case errors.As(err, &inv):
		s := apierrors.NewInvalid(schema.GroupKind{Kind: inv.Kind}, inv.Name, inv.Causes).Status()
		w.Status = &s
	}
	return w
}

// remoteError is an error decoded from the wire.
type remoteError struct {
	msg    string
	is     error
	status *metav1.Status
}

func (e *remoteError) Error() string { return e.msg }

func (e *remoteError) Unwrap() error { return e.is }

func (e *remoteError) fromWire() error {
	if e.status != nil {
		return &wireStatusError{remoteError: e, StatusError: &apierrors.StatusError{ErrStatus: *e.status}}
	}
	return e
}

// wireStatusError is a decoded error with a Status: errors.As finds the Status, and
// errors.Is the sentinel.
type wireStatusError struct {
	*remoteError
	*apierrors.StatusError
}

func (e *wireStatusError) Error() string         { return e.remoteError.msg }
func (e *wireStatusError) Unwrap() []error       { return []error{e.remoteError.is, e.StatusError} }
func (e *wireStatusError) Status() metav1.Status { return e.StatusError.ErrStatus }

func (w *wireError) err() error {
	if w == nil {
		return nil
	}
	return (&remoteError{msg: w.Message, is: sentinels[w.Is], status: w.Status}).fromWire()
}

type wireReplyMsg struct {
	Key    persistence.Key `json:"key"`
	Object json.RawMessage `json:"object,omitempty"`
	Gone   bool            `json:"gone,omitempty"`
	Err    *wireError      `json:"err,omitempty"`
}

// Serialize makes the reply a wire message when it goes back to another member.
func (m *reply) Serialize() (remote.RootSerialized, error) {
	w := wireReplyMsg{Key: m.key, Gone: m.gone, Err: toWireError(m.err)}
	if m.object != nil {
		b, err := json.Marshal(m.object)
		if err != nil {
			return nil, err
		}
		w.Object = b
	}
	return toAny(wireReply, w)
}

// wireKindMsg is a kindRequest: its payload is an event's occurrence or a quota's
// charge (the payloads that may cross).
type wireKindMsg struct {
	Env    wireEnvelope    `json:"env"`
	Event  *event.Record   `json:"event,omitempty"`
	Charge *wireCharge     `json:"charge,omitempty"`
	Other  json.RawMessage `json:"other,omitempty"`
}

type wireCharge struct {
	Resource string          `json:"resource"`
	Object   json.RawMessage `json:"object"`
	DryRun   bool            `json:"dryRun,omitempty"`
}

// Serialize makes the request a wire message when it crosses to another member.
func (m *kindRequest) Serialize() (remote.RootSerialized, error) {
	w := wireKindMsg{Env: m.envelope.wire()}
	switch p := m.payload.(type) {
	case event.Record:
		w.Event = &p
	case resourcequota.ChargeRequest:
		b, err := json.Marshal(p.Object)
		if err != nil {
			return nil, err
		}
		w.Charge = &wireCharge{Resource: p.Resource, Object: b, DryRun: p.DryRun}
	default:
		return nil, fmt.Errorf("encode %T: not a wire payload", m.payload)
	}
	return toAny(wireKind, w)
}

type wireKindReplyMsg struct {
	Err *wireError `json:"err,omitempty"`
}

// Serialize makes the reply a wire message when it goes back to another member; the
// answers that cross (a quota's charge) carry only their error.
func (m *kindReply) Serialize() (remote.RootSerialized, error) {
	return toAny(wireKindOK, wireKindReplyMsg{Err: toWireError(m.err)})
}

// singletonMsg is a message to a singleton on another member, sent to that member's
// supervisor, which passes it on (the node actors' eviction requests).
type singletonMsg struct{ payload any }

// Serialize makes the message a wire message.
func (m *singletonMsg) Serialize() (remote.RootSerialized, error) {
	switch p := m.payload.(type) {
	case *node.EvictRequest:
		return toAny(wireEvict, p.Eviction)
	case *node.EvictCancel:
		return toAny(wireEvictCancel, p)
	}
	return nil, fmt.Errorf("encode %T: not a wire message", m.payload)
}

// decodeObject decodes the JSON of an object of resource.
func decodeObject(resource string, b []byte) (runtime.Object, error) {
	if len(b) == 0 || string(b) == "null" {
		return nil, nil
	}
	r, ok := kinds.Lookup(resource)
	if !ok {
		return nil, fmt.Errorf("%w: resource %q", errUndecodable, resource)
	}
	obj := r.New()
	if err := json.Unmarshal(b, obj); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", errUndecodable, resource, err)
	}
	return obj, nil
}

// fromWire decodes a wire message; other messages are returned as they are.
func fromWire(msg any) (any, error) {
	a, ok := msg.(*anypb.Any)
	if !ok {
		return msg, nil
	}
	name, ok := strings.CutPrefix(a.TypeUrl, wirePrefix)
	if !ok {
		return nil, fmt.Errorf("%w: type %q", errUndecodable, a.TypeUrl)
	}
	switch name {
	case wireCreate, wireUpdate, wireDelete:
		var w wireRequest
		if err := json.Unmarshal(a.Value, &w); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", errUndecodable, name, err)
		}
		env, wr := w.Env.envelope(), w.Write.write()
		switch name {
		case wireDelete:
			m := &deleteRequest{envelope: env, write: wr}
			if w.Delete != nil {
				m.opts = *w.Delete
			}
			return m, nil
		default:
			obj, err := decodeObject(env.key.Resource, w.Object)
			if err != nil {
				return nil, err
			}
			if name == wireCreate {
				return &createRequest{envelope: env, write: wr, object: obj}, nil
			}
			return &updateRequest{envelope: env, write: wr, object: obj, pre: w.Pre}, nil
		}
	case wireReply:
		var w wireReplyMsg
		if err := json.Unmarshal(a.Value, &w); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", errUndecodable, name, err)
		}
		obj, err := decodeObject(w.Key.Resource, w.Object)
		if err != nil {
			return nil, err
		}
		return &reply{key: w.Key, object: obj, gone: w.Gone, err: w.Err.err()}, nil
	case wireKind:
		var w wireKindMsg
		if err := json.Unmarshal(a.Value, &w); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", errUndecodable, name, err)
		}
		m := &kindRequest{envelope: w.Env.envelope()}
		switch {
		case w.Event != nil:
			m.payload = *w.Event
		case w.Charge != nil:
			obj, err := decodeObject(w.Charge.Resource, w.Charge.Object)
			if err != nil {
				return nil, err
			}
			m.payload = resourcequota.ChargeRequest{Resource: w.Charge.Resource, Object: obj, DryRun: w.Charge.DryRun}
		default:
			return nil, fmt.Errorf("%w: kind request without a known payload", errUndecodable)
		}
		return m, nil
	case wireEvict:
		var w node.Eviction
		if err := json.Unmarshal(a.Value, &w); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", errUndecodable, name, err)
		}
		return &node.EvictRequest{Eviction: w}, nil
	case wireEvictCancel:
		var w node.EvictCancel
		if err := json.Unmarshal(a.Value, &w); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", errUndecodable, name, err)
		}
		return &w, nil
	case wireKindOK:
		var w wireKindReplyMsg
		if err := json.Unmarshal(a.Value, &w); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", errUndecodable, name, err)
		}
		return &kindReply{err: w.Err.err()}, nil
	}
	return nil, fmt.Errorf("%w: type %q", errUndecodable, a.TypeUrl)
}

// receiveWire is the receiver middleware of every actor that may get a message from
// another member: it decodes wire messages, and drops (with a log line) those it
// cannot decode.
func (e *env) receiveWire(next actor.ReceiverFunc) actor.ReceiverFunc {
	return func(c actor.ReceiverContext, env *actor.MessageEnvelope) {
		if _, ok := env.Message.(*anypb.Any); ok {
			msg, err := fromWire(env.Message)
			if err != nil {
				e.log.WithField("error", err).Warn("dropped a message from another member")
				return
			}
			env.Message = msg
		}
		next(c, env)
	}
}
