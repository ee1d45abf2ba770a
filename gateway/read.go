package gateway

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeactor/kubeactor/actors/kinds"
	"github.com/kubeactor/kubeactor/persistence"
)

// get answers GET on one object (and on its status subresource).
func (s *Server) get(c echo.Context, rq *request) error {
	it, err := s.store.Get(rq.key())
	if err != nil {
		return fmt.Errorf("get %s: %w", rq.name, err)
	}
	switch negotiate(c.Request().Header.Get(echo.HeaderAccept)) {
	case outTable:
		t, err := s.table(c, rq.res, []*persistence.Item{it}, metav1.ListMeta{ResourceVersion: strconv.FormatInt(it.Revision, 10)}, true)
		if err != nil {
			return err
		}
		return writeJSON(c, http.StatusOK, t)
	case outJSON:
		return c.Blob(http.StatusOK, mediaJSON, it.JSON())
	default:
		return writeObject(c, http.StatusOK, it.Object().DeepCopyObject())
	}
}

// paramCodec decodes query parameters into option types (the scheme has the
// url.Values conversions registered under v1).
var paramCodec = runtime.NewParameterCodec(kinds.Scheme)

// listOptions decodes the query's list options (labelSelector, fieldSelector, watch,
// resourceVersion, limit, continue, ...).
func listOptions(c echo.Context) (*metav1.ListOptions, error) {
	opts := &metav1.ListOptions{}
	if err := paramCodec.DecodeParameters(c.QueryParams(), kinds.GroupVersion, opts); err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid list options: %v", err))
	}
	if opts.Limit < 0 {
		return nil, apierrors.NewBadRequest("limit must not be negative")
	}
	return opts, nil
}

// selection is a request's label and field selectors, bound to its kinds.
type selection struct {
	res    *kinds.Resource
	labels labels.Selector
	fields fields.Selector
	all    bool // neither selector restricts: asked per event of every watch
}

// parseSelection parses and checks the selectors of a list or watch; name, when not
// empty, restricts it to one object (the /watch/.../{name} paths).
func parseSelection(r *kinds.Resource, labelSelector, fieldSelector, name string) (*selection, error) {
	ls, err := labels.Parse(labelSelector)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	fs, err := fields.ParseSelector(fieldSelector)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if name != "" {
		fs = fields.AndSelectors(fs, fields.OneTermEqualSelector("metadata.name", name))
	}
	supported := map[string]bool{"metadata.name": true, "metadata.namespace": true}
	for _, l := range r.FieldLabels() {
		supported[l] = true
	}
	for _, req := range fs.Requirements() {
		if !supported[req.Field] {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("field label not supported: %s", req.Field))
		}
	}
	return &selection{res: r, labels: ls, fields: fs, all: ls.Empty() && fs.Empty()}, nil
}

// everything reports whether the selection matches every object.
func (sel *selection) everything() bool { return sel.all }

// selects reports whether a stored item is selected: without selectors, without
// decoding it (a lean item, persistence's Item.Object, stays lean for a list).
func (sel *selection) selects(it *persistence.Item) bool {
	return sel.everything() || sel.matches(it.Peek())
}

// matches reports whether obj is selected.
func (sel *selection) matches(obj runtime.Object) bool {
	if sel.everything() {
		return true
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return false
	}
	if !sel.labels.Empty() && !sel.labels.Matches(labels.Set(m.GetLabels())) {
		return false
	}
	if sel.fields.Empty() {
		return true
	}
	var set fields.Set
	if sel.res.Fields != nil {
		set = sel.res.Fields(obj)
	} else {
		set = fields.Set{"metadata.name": m.GetName(), "metadata.namespace": m.GetNamespace()}
	}
	return sel.fields.Matches(set)
}

// continueToken is the list position a client passes back as ?continue= (the real
// server's format: base64 of {"v","rv","start"}); start is the last key returned.
type continueToken struct {
	APIVersion string `json:"v"`
	Revision   int64  `json:"rv"`
	Start      string `json:"start"`
}

func encodeContinue(rev int64, after string) string {
	data, _ := json.Marshal(continueToken{APIVersion: "meta.k8s.io/v1", Revision: rev, Start: after})
	return base64.RawURLEncoding.EncodeToString(data)
}

func decodeContinue(s string) (continueToken, error) {
	var tok continueToken
	data, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		data, err = base64.StdEncoding.DecodeString(s)
	}
	if err == nil {
		err = json.Unmarshal(data, &tok)
	}
	if err != nil || tok.Revision <= 0 {
		return tok, apierrors.NewBadRequest(fmt.Sprintf("continue key is not valid: %q", s))
	}
	return tok, nil
}

// itemPosition is an item's place in snapshot order, as Ascend's after takes it.
func itemPosition(it *persistence.Item) string { return it.Key.Namespace + "/" + it.Key.Name }

// parseRevision reads a resourceVersion; "" and "0" mean "any" and give 0.
func parseRevision(rv string) (int64, error) {
	if rv == "" || rv == "0" {
		return 0, nil
	}
	n, err := strconv.ParseInt(rv, 10, 64)
	if err != nil || n < 0 {
		return 0, apierrors.NewBadRequest(fmt.Sprintf("invalid resource version: %q", rv))
	}
	return n, nil
}

// listSnapshot picks the snapshot a list reads and where it starts: the continue
// token's revision and position, an exact resourceVersion, or the current state.
func (s *Server) listSnapshot(rq *request, opts *metav1.ListOptions) (*persistence.Snapshot, string, error) {
	if opts.Continue != "" {
		tok, err := decodeContinue(opts.Continue)
		if err != nil {
			return nil, "", err
		}
		snap, err := s.store.SnapshotAt(rq.res.Name, tok.Revision)
		if errors.Is(err, persistence.ErrCompacted) {
			return nil, "", apierrors.NewResourceExpired("The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.")
		}
		if err != nil {
			return nil, "", fmt.Errorf("list snapshot at %d: %w", tok.Revision, err)
		}
		return snap, tok.Start, nil
	}
	rev, err := parseRevision(opts.ResourceVersion)
	if err != nil {
		return nil, "", err
	}
	if rev > 0 && opts.ResourceVersionMatch == metav1.ResourceVersionMatchExact {
		snap, err := s.store.SnapshotAt(rq.res.Name, rev)
		if errors.Is(err, persistence.ErrCompacted) {
			return nil, "", apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", rev, s.store.Revision()))
		}
		if err != nil {
			return nil, "", fmt.Errorf("list snapshot at %d: %w", rev, err)
		}
		return snap, "", nil
	}
	return s.store.ListSnapshot(rq.res.Name), "", nil
}

// page is one list answer: the selected items and the list metadata.
type page struct {
	items []*persistence.Item
	meta  metav1.ListMeta
}

// collect reads one page of selected items from the snapshot.
func (s *Server) collect(rq *request, sel *selection, opts *metav1.ListOptions) (*page, error) {
	snap, after, err := s.listSnapshot(rq, opts)
	if err != nil {
		return nil, err
	}
	limit := int(opts.Limit)
	size := snap.Len()
	if limit > 0 && limit < size {
		size = limit
	}
	p := &page{items: make([]*persistence.Item, 0, size)}
	more, remaining := false, int64(0)
	snap.Ascend(rq.namespace, after, func(it *persistence.Item) bool {
		if !sel.selects(it) {
			return true
		}
		if limit > 0 && len(p.items) == limit {
			more = true
			if sel.everything() { // the real server counts the rest only without selectors
				remaining++
				return true
			}
			return false
		}
		p.items = append(p.items, it)
		return true
	})
	p.meta.ResourceVersion = strconv.FormatInt(snap.Revision(), 10)
	if more && len(p.items) > 0 {
		p.meta.Continue = encodeContinue(snap.Revision(), itemPosition(p.items[len(p.items)-1]))
		if sel.everything() {
			p.meta.RemainingItemCount = &remaining
		}
	}
	return p, nil
}

// list answers GET on a collection, or starts a watch when asked to.
func (s *Server) list(c echo.Context, rq *request) error {
	opts, err := listOptions(c)
	if err != nil {
		return err
	}
	if opts.Watch || rq.watchPath {
		return s.watch(c, rq, opts)
	}
	sel, err := parseSelection(rq.res, opts.LabelSelector, opts.FieldSelector, "")
	if err != nil {
		return err
	}
	p, err := s.collect(rq, sel, opts)
	if err != nil {
		return err
	}
	return s.writePage(c, rq, p)
}

// writePage answers a list with one page, in the negotiated encoding.
func (s *Server) writePage(c echo.Context, rq *request, p *page) error {
	switch negotiate(c.Request().Header.Get(echo.HeaderAccept)) {
	case outTable:
		t, err := s.table(c, rq.res, p.items, p.meta, true)
		if err != nil {
			return err
		}
		return writeJSON(c, http.StatusOK, t)
	case outJSON:
		return writeListJSON(c, rq.res.Kind+"List", p)
	default:
		list, err := typedList(rq.res, p)
		if err != nil {
			return err
		}
		return writeObject(c, http.StatusOK, list)
	}
}

// writeListJSON is the list fast path: the cached JSON of each item, concatenated.
func writeListJSON(c echo.Context, kind string, p *page) error {
	lm, err := json.Marshal(&p.meta)
	if err != nil {
		return fmt.Errorf("encode list metadata: %w", err)
	}
	w := c.Response()
	w.Header().Set(echo.HeaderContentType, mediaJSON)
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.WriteString(`{"kind":"`)
	bw.WriteString(kind)
	bw.WriteString(`","apiVersion":"v1","metadata":`)
	bw.Write(lm)
	bw.WriteString(`,"items":[`)
	for i, it := range p.items {
		if i > 0 {
			bw.WriteByte(',')
		}
		bw.Write(bytes.TrimRight(it.JSON(), "\n"))
	}
	bw.WriteString("]}\n")
	return bw.Flush()
}

// typedList builds the resource's list type from a page, for encodings other than JSON.
func typedList(r *kinds.Resource, p *page) (runtime.Object, error) {
	list := r.NewList()
	objs := make([]runtime.Object, len(p.items))
	for i, it := range p.items {
		objs[i] = it.Peek()
	}
	if err := meta.SetList(list, objs); err != nil {
		return nil, fmt.Errorf("build %s list: %w", r.Kind, err)
	}
	lm, err := meta.ListAccessor(list)
	if err != nil {
		return nil, fmt.Errorf("build %s list: %w", r.Kind, err)
	}
	lm.SetResourceVersion(p.meta.ResourceVersion)
	lm.SetContinue(p.meta.Continue)
	lm.SetRemainingItemCount(p.meta.RemainingItemCount)
	return list, nil
}
