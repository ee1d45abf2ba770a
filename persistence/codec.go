package persistence

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"sync"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// The storage encoding is JSON (see docs/storage-encoding.md): the stored bytes are what a list or
// a watch sends, so Item.JSON costs nothing. Every value starts with a format byte.
const formatJSON byte = 1

// rvPlaceholder is the resourceVersion an object is encoded with before its revision
// is known; the committer splices the real revision in its place.
const rvPlaceholder = "kubeactor.persistence/pending-revision"

var rvField = []byte(`"resourceVersion":"`)

// kinds caches the kind derived from each Go type (*corev1.Pod -> "Pod").
var kinds sync.Map

// setTypeMeta fills apiVersion and kind when the caller left them empty, so that the
// stored JSON is always a valid API object.
func setTypeMeta(obj runtime.Object) {
	ok := obj.GetObjectKind()
	gvk := ok.GroupVersionKind()
	if gvk.Kind != "" && gvk.Version != "" {
		return
	}
	if gvk.Kind == "" {
		gvk.Kind = kindOf(obj)
	}
	if gvk.Version == "" && gvk.Group == "" {
		gvk.Version = "v1"
	}
	ok.SetGroupVersionKind(schema.GroupVersionKind{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind})
}

func kindOf(obj runtime.Object) string {
	t := reflect.TypeOf(obj)
	if k, ok := kinds.Load(t); ok {
		return k.(string)
	}
	et := t
	for et.Kind() == reflect.Pointer {
		et = et.Elem()
	}
	kinds.Store(t, et.Name())
	return et.Name()
}

// marshalJSON encodes obj as the store keeps and serves it. It is encoding/json:
// go-json-experiment with the v1 options gives the same bytes (but for invalid UTF-8)
// and was slower (docs/benchmarks.md, "The store's JSON encoder").
func marshalJSON(obj runtime.Object) ([]byte, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encode %T: %w", obj, err)
	}
	return b, nil
}

// encoded is an object encoded before its revision is known.
type encoded struct {
	json []byte // with rvPlaceholder as resourceVersion
	at   int    // offset of the placeholder in json; -1 to encode again at commit
}

// preEncode encodes obj with the placeholder revision. It runs on the caller's
// goroutine so that concurrent Apply calls encode in parallel.
func preEncode(obj runtime.Object) (encoded, error) {
	acc, err := meta.Accessor(obj)
	if err != nil {
		return encoded{}, fmt.Errorf("%w: %T has no object metadata: %w", ErrInvalid, obj, err)
	}
	setTypeMeta(obj)
	orig := acc.GetResourceVersion()
	acc.SetResourceVersion(rvPlaceholder)
	b, err := marshalJSON(obj)
	acc.SetResourceVersion(orig) // a rejected transaction leaves the object as it was
	if err != nil {
		return encoded{}, err
	}
	return encoded{json: b, at: rvValueAt(b, rvPlaceholder)}, nil
}

// rvValueAt returns the offset of metadata.resourceVersion's value in b when it equals
// want, else -1. The first `"resourceVersion":"` in the encoding of an API object is
// metadata's: TypeMeta and ObjectMeta come first, ObjectMeta's resourceVersion precedes
// its maps, and a quote inside a JSON string is always escaped.
func rvValueAt(b []byte, want string) int {
	i := bytes.Index(b, rvField)
	if i < 0 {
		return -1
	}
	i += len(rvField)
	if len(b) < i+len(want)+1 || string(b[i:i+len(want)]) != want || b[i+len(want)] != '"' {
		return -1
	}
	return i
}

// objectValue builds the stored value of an object: format byte, revision, JSON. It
// returns the value and the JSON inside it. oldRV is the resourceVersion found at
// json[at:] (the placeholder, or a previous revision when re-stamping a deletion).
func objectValue(rev int64, js []byte, at int, oldRV string) (value, jsonPart []byte) {
	var rvs [20]byte
	rv := strconv.AppendInt(rvs[:0], rev, 10)
	value = make([]byte, 0, 1+binary.MaxVarintLen64+len(js)-len(oldRV)+len(rv))
	value = append(value, formatJSON)
	value = binary.AppendUvarint(value, uint64(rev))
	start := len(value)
	value = append(value, js[:at]...)
	value = append(value, rv...)
	value = append(value, js[at+len(oldRV):]...)
	return value, value[start:]
}

// stamp sets obj's resourceVersion to rev and returns its stored value and JSON.
// enc is obj's pre-encoding (at < 0 means it must be encoded now).
func stamp(obj runtime.Object, rev int64, enc encoded) (value, jsonPart []byte, err error) {
	acc, err := meta.Accessor(obj)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %T has no object metadata: %w", ErrInvalid, obj, err)
	}
	acc.SetResourceVersion(strconv.FormatInt(rev, 10))
	if enc.at < 0 {
		js, err := marshalJSON(obj)
		if err != nil {
			return nil, nil, err
		}
		value = make([]byte, 0, 1+binary.MaxVarintLen64+len(js))
		value = append(value, formatJSON)
		value = binary.AppendUvarint(value, uint64(rev))
		start := len(value)
		value = append(value, js...)
		return value, value[start:], nil
	}
	value, jsonPart = objectValue(rev, enc.json, enc.at, rvPlaceholder)
	return value, jsonPart, nil
}

// tombstone returns the last state of prev re-stamped with the deletion revision rev,
// as a new item (prev is shared and stays untouched).
func tombstone(prev *Item, rev int64) (*Item, error) {
	obj := prev.Peek().DeepCopyObject()
	old := strconv.FormatInt(prev.Revision, 10)
	enc := encoded{json: prev.JSON(), at: rvValueAt(prev.JSON(), old)}
	var js []byte
	if enc.at < 0 {
		_, j, err := stamp(obj, rev, encoded{at: -1})
		if err != nil {
			return nil, err
		}
		js = j
	} else {
		acc, err := meta.Accessor(obj)
		if err != nil {
			return nil, fmt.Errorf("%w: %T has no object metadata: %w", ErrInvalid, obj, err)
		}
		acc.SetResourceVersion(strconv.FormatInt(rev, 10))
		_, js = objectValue(rev, enc.json, enc.at, old)
	}
	it := &Item{Key: prev.Key, Revision: rev, newObject: prev.newObject, uid: prev.uid, json: js}
	it.setObject(obj)
	return it, nil
}

// decodeObjectValue splits a stored object value into its revision and JSON.
func decodeObjectValue(v []byte) (int64, []byte, error) {
	if len(v) == 0 || v[0] != formatJSON {
		return 0, nil, fmt.Errorf("unknown value format")
	}
	rev, n := binary.Uvarint(v[1:])
	if n <= 0 {
		return 0, nil, fmt.Errorf("bad revision in value")
	}
	return int64(rev), v[1+n:], nil
}

// unmarshalObject decodes stored JSON into obj, a fresh object: with
// go-json-experiment's decoder (about twice as fast as encoding/json on a pod), and
// with encoding/json when it refuses the bytes (JSON it is stricter about: duplicate
// names, invalid UTF-8, and names it does not know, which encoding/json matches in
// another case or ignores). The stored JSON is encoding/json's
// encoding of the same Go types, which both decode alike (gateway's
// TestDecodeFastAgreesWithStrict checks every served kind); every replica decodes
// with the same code, so they agree.
func unmarshalObject(js []byte, obj runtime.Object) error {
	if jsonv2.Unmarshal(js, obj, jsonv2.RejectUnknownMembers(true), fastTimes) == nil {
		return nil
	}
	reflect.ValueOf(obj).Elem().SetZero()
	return json.Unmarshal(js, obj)
}

// fastTimes decodes metav1.Time as its UnmarshalJSON does (null is the zero time, a
// string is parsed as RFC 3339 and made local) without its detour through
// encoding/json to read the string, which was a fifth of decoding a stored pod: a
// pod carries half a dozen timestamps. Anything else is an error, and the object is
// then decoded by encoding/json, which calls UnmarshalJSON itself.
var fastTimes = jsonv2.WithUnmarshalers(jsonv2.UnmarshalFromFunc(func(dec *jsontext.Decoder, t *metav1.Time) error {
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	switch tok.Kind() {
	case 'n':
		t.Time = time.Time{}
		return nil
	case '"':
		pt, err := time.Parse(time.RFC3339, tok.String())
		if err != nil {
			return err
		}
		t.Time = pt.Local()
		return nil
	}
	return fmt.Errorf("time: want a string or null, got %v", tok.Kind())
}))

// decodeObject decodes an object and its uid from its stored JSON, using newObject
// for the Go type.
func decodeObject(key Key, js []byte, newObject func(string) (runtime.Object, error)) (runtime.Object, types.UID, error) {
	if newObject == nil {
		return nil, "", fmt.Errorf("decode %s: Options.NewObject is nil", key.Resource)
	}
	obj, err := newObject(key.Resource)
	if err != nil {
		return nil, "", fmt.Errorf("decode %s/%s/%s: %w", key.Resource, key.Namespace, key.Name, err)
	}
	if err := unmarshalObject(js, obj); err != nil {
		return nil, "", fmt.Errorf("decode %s/%s/%s: %w", key.Resource, key.Namespace, key.Name, err)
	}
	acc, err := meta.Accessor(obj)
	if err != nil {
		return nil, "", fmt.Errorf("decode %s: %w", key.Resource, err)
	}
	return obj, acc.GetUID(), nil
}

// decode sets a loaded item's object and uid from its JSON.
func (it *Item) decode() error {
	obj, uid, err := decodeObject(it.Key, it.json, it.newObject)
	if err != nil {
		return err
	}
	it.setObject(obj)
	it.uid = uid
	return nil
}
