package gateway

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeactor/kubeactor/persistence"
)

// initialEventsEnd is the annotation of the bookmark that ends a WatchList's initial
// events.
const initialEventsEnd = "k8s.io/initial-events-end"

// Event types the store does not produce.
const (
	eventBookmark = "BOOKMARK"
	eventError    = "ERROR"
)

// watchFilter turns store events into the events a selective watch sees: an object
// that starts matching is ADDED, one that stops matching is DELETED, as the real
// watch cache does. visible is nil when the earlier state is unknown; then only
// matching events pass, unchanged.
type watchFilter struct {
	sel     *selection
	visible map[string]bool
}

// classify returns the type to send ev as, or false to drop it.
func (f *watchFilter) classify(ev persistence.Event) (string, bool) {
	if f.sel.everything() {
		return string(ev.Type), true
	}
	match := f.sel.selects(ev.Item)
	if f.visible == nil {
		return string(ev.Type), match
	}
	pos := itemPosition(ev.Item)
	was := f.visible[pos]
	switch {
	case ev.Type == persistence.Deleted:
		delete(f.visible, pos)
		return string(persistence.Deleted), was
	case match && was:
		return string(persistence.Modified), true
	case match:
		f.visible[pos] = true
		return string(persistence.Added), true
	case was:
		delete(f.visible, pos)
		return string(persistence.Deleted), true
	default:
		return "", false
	}
}

// watchStream writes watch events to one client.
type watchStream struct {
	s       *Server
	c       echo.Context
	rq      *request
	w       streamSink
	asTable bool
	proto   bool // length-prefixed protobuf WatchEvents instead of JSON lines
	headers bool // the next Table event carries the column definitions
}

// mediaProtobufWatch is the content type of a protobuf watch: each event is a
// metav1.WatchEvent in raw protobuf after its 4-byte big-endian length, its object
// in the enveloped protobuf that GET answers with.
const mediaProtobufWatch = mediaProtobuf + ";stream=watch"

// encodeProtobuf is an object's protobuf encoding, as a GET in protobuf answers.
func encodeProtobuf(obj runtime.Object) ([]byte, error) {
	var buf bytes.Buffer
	if err := protobufInfo.Serializer.Encode(obj, &buf); err != nil {
		return nil, fmt.Errorf("encode %T as protobuf: %w", obj, err)
	}
	return buf.Bytes(), nil
}

// protoEvents holds the protobuf encodings of the latest watch events, so that the
// protobuf watchers of one event share one encode: a slot per revision modulo its
// size, taken by whichever event was encoded last. Watchers that keep up find the
// event they send there; one far behind, or a watch's first list of current
// objects, encodes again. Bounded on purpose: an encoding kept with every stored
// object would hold the protobuf of every current pod for as long as it lives (about
// 200 MB of 150,000 pods, for one watcher's sake).
type protoEvents struct {
	slots [4096]atomic.Pointer[protoEvent]
}

type protoEvent struct {
	key  persistence.Key
	rev  int64
	data []byte
}

// encoded returns the protobuf of it's object, nil when it cannot be encoded.
func (c *protoEvents) encoded(it *persistence.Item) []byte {
	slot := &c.slots[uint64(it.Revision)%uint64(len(c.slots))]
	if e := slot.Load(); e != nil && e.rev == it.Revision && e.key == it.Key {
		return e.data
	}
	data, err := encodeProtobuf(it.Object())
	if err != nil {
		return nil
	}
	slot.Store(&protoEvent{key: it.Key, rev: it.Revision, data: data})
	return data
}

// event writes one event with the item's shared encoding: its stored JSON, or its
// protobuf made once for the protobuf watchers that keep up (protoEvents).
func (ws *watchStream) event(typ string, it *persistence.Item) error {
	if ws.proto {
		data := ws.s.protoEvents.encoded(it)
		if data == nil {
			return fmt.Errorf("encode %s as protobuf", it.Key)
		}
		return ws.frame(typ, data)
	}
	if ws.asTable {
		t, err := ws.s.table(ws.c, ws.rq.res, []*persistence.Item{it}, metav1.ListMeta{ResourceVersion: strconv.FormatInt(it.Revision, 10)}, ws.headers)
		if err != nil {
			return err
		}
		ws.headers = false
		data, err := json.Marshal(t)
		if err != nil {
			return fmt.Errorf("encode watch table: %w", err)
		}
		return ws.frame(typ, data)
	}
	return ws.frame(typ, it.JSON())
}

// frame writes {"type":typ,"object":obj} and a newline; obj is shared, not copied.
// A protobuf stream gets the event's length and its WatchEvent instead.
func (ws *watchStream) frame(typ string, obj []byte) error {
	if ws.proto {
		ev := metav1.WatchEvent{Type: typ, Object: runtime.RawExtension{Raw: obj}}
		data, err := ev.Marshal()
		if err != nil {
			return fmt.Errorf("encode watch event: %w", err)
		}
		var n [4]byte
		binary.BigEndian.PutUint32(n[:], uint32(len(data)))
		ws.w.Write(n[:])
		_, err = ws.w.Write(data)
		return err
	}
	ws.w.WriteString(`{"type":"`)
	ws.w.WriteString(typ)
	ws.w.WriteString(`","object":`)
	ws.w.Write(bytes.TrimRight(obj, "\n"))
	_, err := ws.w.WriteString("}\n")
	return err
}

// bookmark writes a BOOKMARK event at rev; end marks the end of the initial events.
func (ws *watchStream) bookmark(rev int64, end bool) error {
	obj := ws.rq.res.New()
	setKind(obj)
	m, err := metaOf(obj)
	if err != nil {
		return err
	}
	m.SetResourceVersion(strconv.FormatInt(rev, 10))
	if end {
		m.SetAnnotations(map[string]string{initialEventsEnd: "true"})
	}
	data, err := ws.encode(obj)
	if err != nil {
		return fmt.Errorf("encode bookmark: %w", err)
	}
	return ws.frame(eventBookmark, data)
}

// encode is obj in the stream's encoding, for the events made here.
func (ws *watchStream) encode(obj runtime.Object) ([]byte, error) {
	if ws.proto {
		setKind(obj)
		return encodeProtobuf(obj)
	}
	return json.Marshal(obj)
}

// errTooFarBehind ends a watch whose client lags so far that the events it has not
// been sent left the change log.
var errTooFarBehind = errors.New("watch client too far behind")

// expired ends the stream with the ERROR event a client recovers from by relisting:
// a Status 410 Gone, reason Expired, after the last revision it was sent.
func (ws *watchStream) expired(last int64) {
	ws.s.metrics.expired.WithLabelValues(ws.rq.res.Name).Inc()
	st := toStatus(apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", last, ws.s.store.Revision())), ws.rq)
	if data, err := ws.encode(st); err == nil && ws.frame(eventError, data) == nil {
		_ = ws.flush()
	}
}

// flush sends what is buffered to the client now.
func (ws *watchStream) flush() error { return ws.w.Flush() }

// watch streams the changes of a collection (or of one object) as JSON lines.
func (s *Server) watch(c echo.Context, rq *request, opts *metav1.ListOptions) error {
	name := ""
	if rq.watchPath {
		name = rq.name
	}
	sel, err := parseSelection(rq.res, opts.LabelSelector, opts.FieldSelector, name)
	if err != nil {
		return err
	}
	rev, err := parseRevision(opts.ResourceVersion)
	if err != nil {
		return err
	}
	defer s.watchStarted(rq.res.Name)() // metrics.go
	sendInitial := rev == 0
	if opts.SendInitialEvents != nil {
		sendInitial = *opts.SendInitialEvents
	}
	markInitialEnd := opts.SendInitialEvents != nil && *opts.SendInitialEvents
	timeout := s.minWatch + rand.N(s.minWatch)
	if opts.TimeoutSeconds != nil && *opts.TimeoutSeconds > 0 {
		timeout = time.Duration(*opts.TimeoutSeconds) * time.Second
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), timeout)
	defer cancel()

	filter := &watchFilter{sel: sel}
	var initial []*persistence.Item
	from := rev
	switch {
	case sendInitial:
		snap := s.store.ListSnapshot(rq.res.Name)
		from = snap.Revision()
		filter.visible = map[string]bool{}
		snap.Ascend(rq.namespace, "", func(it *persistence.Item) bool {
			if sel.selects(it) {
				initial = append(initial, it)
				if !sel.everything() {
					filter.visible[itemPosition(it)] = true
				}
			}
			return true
		})
	case rev == 0:
		from = s.store.Revision()
		filter.visible = map[string]bool{}
	case !sel.everything():
		if snap, err := s.store.SnapshotAt(rq.res.Name, rev); err == nil {
			filter.visible = map[string]bool{}
			snap.Ascend(rq.namespace, "", func(it *persistence.Item) bool {
				if sel.selects(it) {
					filter.visible[itemPosition(it)] = true
				}
				return true
			})
		}
	}
	watcher, err := s.store.Watch(ctx, rq.res.Name, rq.namespace, from)
	if errors.Is(err, persistence.ErrCompacted) {
		return apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", rev, s.store.Revision()))
	}
	if err != nil {
		return fmt.Errorf("watch %s: %w", rq.res.Name, err)
	}

	out := negotiate(c.Request().Header.Get(echo.HeaderAccept))
	resp := c.Response()
	if out == outProtobuf {
		resp.Header().Set(echo.HeaderContentType, mediaProtobufWatch)
	} else {
		resp.Header().Set(echo.HeaderContentType, mediaJSON)
	}
	resp.Header().Set("Cache-Control", "no-cache, private")
	sink := openStream(c, cancel)
	defer sink.Close()
	ws := &watchStream{s: s, c: c, rq: rq, w: sink, asTable: out == outTable, proto: out == outProtobuf, headers: true}
	last := from
	// A client that stops reading is waited for while the events it has not been sent
	// are still in the change log; once they are dropped it is too far behind and gets
	// a 410 Gone, after the bytes already queued for it (see chunkedConn).
	if st, ok := sink.(interface{ setStall(func() error) }); ok {
		st.setStall(func() error {
			if err := ctx.Err(); err != nil {
				return err
			}
			if watcher.Expired() {
				return errTooFarBehind
			}
			return nil
		})
	}
	// end ends the stream after err: with a 410 when the watcher fell too far behind.
	end := func(err error) error {
		if errors.Is(err, errTooFarBehind) {
			if st, ok := sink.(interface{ setStall(func() error) }); ok {
				st.setStall(func() error { return ctx.Err() })
			}
			ws.expired(last)
		}
		return nil
	}
	for _, it := range initial {
		if err := ws.event(string(persistence.Added), it); err != nil {
			return end(err)
		}
	}
	if markInitialEnd && !ws.asTable {
		if err := ws.bookmark(from, true); err != nil {
			return end(err)
		}
	}
	if err := ws.flush(); err != nil {
		return end(err)
	}
	initial = nil

	bookmarks := opts.AllowWatchBookmarks && !ws.asTable
	// Coalescing: after a write the stream pauses watchCoalesce before it looks for
	// more events, so that under load one write carries many events (a thousand
	// watchers each writing per commit would spend the CPU on syscalls). An event
	// after a quiet spell goes out at once.
	pause := time.NewTimer(0)
	defer pause.Stop()
	lastWrite := time.Now()
	for {
		wait, stopWait := ctx, context.CancelFunc(func() {})
		if bookmarks {
			wait, stopWait = context.WithDeadline(ctx, lastWrite.Add(s.bookmarkEvery))
		}
		evs, err := watcher.Next(wait)
		stopWait()
		switch {
		case err == nil:
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, context.DeadlineExceeded): // idle: a bookmark is due
			if last != 0 {
				if err := ws.bookmark(last, false); err != nil {
					return end(err)
				}
				if err := ws.flush(); err != nil {
					return end(err)
				}
			}
			lastWrite = time.Now()
			continue
		case errors.Is(err, persistence.ErrCompacted):
			ws.expired(last)
			return nil
		default:
			return nil
		}
		wrote := false
		for _, ev := range evs {
			last = ev.Item.Revision
			typ, ok := filter.classify(ev)
			if !ok {
				continue
			}
			if err := ws.event(typ, ev.Item); err != nil {
				return end(err)
			}
			wrote = true
		}
		if !wrote {
			continue
		}
		if err := ws.flush(); err != nil {
			return end(err)
		}
		lastWrite = time.Now()
		pause.Reset(s.watchCoalesce)
		select {
		case <-pause.C:
		case <-ctx.Done():
			return nil
		}
	}
}
