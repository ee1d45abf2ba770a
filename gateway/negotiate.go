package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strings"
	"sync"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/labstack/echo/v4"
	"google.golang.org/protobuf/encoding/protowire"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	jsonserializer "k8s.io/apimachinery/pkg/runtime/serializer/json"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/kubeactor/kubeactor/persistence"

	"github.com/kubeactor/kubeactor/actors/kinds"
)

// Media types this server reads and writes.
const (
	mediaJSON     = "application/json"
	mediaYAML     = "application/yaml"
	mediaProtobuf = "application/vnd.kubernetes.protobuf"
)

// output is how a response body is written, chosen from the Accept header.
type output int

const (
	outJSON output = iota
	outYAML
	outProtobuf
	outTable // a meta.k8s.io/v1 Table, in JSON
)

// negotiate picks the first entry of Accept this server can produce; anything it
// cannot produce falls back to JSON, as clients that ask for extras also accept it.
func negotiate(accept string) output {
	for _, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		as := params["as"]
		switch mt {
		case mediaJSON, "application/*", "*/*":
			if as == "" {
				return outJSON
			}
			if as == "Table" && params["g"] == "meta.k8s.io" && params["v"] == "v1" {
				return outTable
			}
		case mediaYAML:
			if as == "" {
				return outYAML
			}
		case mediaProtobuf:
			if as == "" {
				return outProtobuf
			}
		}
	}
	return outJSON
}

// Serializers: the strict one reports unknown and duplicate fields of YAML request
// bodies (JSON has decodeJSON); the codec factory's ones write responses.
var (
	yamlStrict = jsonserializer.NewSerializerWithOptions(jsonserializer.DefaultMetaFactory, kinds.Scheme, kinds.Scheme,
		jsonserializer.SerializerOptions{Yaml: true, Strict: true})
	protobufInfo, _ = runtime.SerializerInfoForMediaType(kinds.Codecs.SupportedMediaTypes(), mediaProtobuf)
	yamlInfo, _     = runtime.SerializerInfoForMediaType(kinds.Codecs.SupportedMediaTypes(), mediaYAML)
	// protobufEncoder is the protobuf serializer, which can encode into a reused
	// allocator (writeProtobuf).
	protobufEncoder = protobufInfo.Serializer.(runtime.EncoderWithAllocator)
)

// setKind fills an object's kind and apiVersion from the scheme when they are empty.
func setKind(obj runtime.Object) {
	if !obj.GetObjectKind().GroupVersionKind().Empty() {
		return
	}
	if kinds, _, err := kinds.Scheme.ObjectKinds(obj); err == nil && len(kinds) > 0 {
		obj.GetObjectKind().SetGroupVersionKind(kinds[0])
	}
}

// writeJSON writes v as JSON with code.
func writeJSON(c echo.Context, code int, v interface{}) error {
	if obj, ok := v.(runtime.Object); ok {
		setKind(obj)
	}
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode response: %w", err)
	}
	return c.Blob(code, mediaJSON, data)
}

// writeObject writes an API object in the negotiated encoding (Table output is the
// callers' concern, so here it is JSON).
func writeObject(c echo.Context, code int, obj runtime.Object) error {
	setKind(obj)
	switch negotiate(c.Request().Header.Get(echo.HeaderAccept)) {
	case outProtobuf:
		return writeProtobuf(c, code, obj)
	case outYAML:
		var buf bytes.Buffer
		if err := yamlInfo.Serializer.Encode(obj, &buf); err != nil {
			return fmt.Errorf("encode yaml response: %w", err)
		}
		return c.Blob(code, mediaYAML, buf.Bytes())
	default:
		return writeJSON(c, code, obj)
	}
}

// protobufBuffers are the buffers of protobuf responses (writeProtobuf): the
// encoder's allocator and the encoded response, reused from one response to the next.
var protobufBuffers = sync.Pool{New: func() any { return &protobufBuffer{} }}

type protobufBuffer struct {
	alloc runtime.Allocator
	out   bytes.Buffer
}

// maxPooledResponse bounds the buffers kept for the next response: a large list's
// are left to the garbage collector.
const maxPooledResponse = 64 << 10

// writeProtobuf answers obj in protobuf. It encodes into reused buffers, then
// writes: an object that cannot be encoded is still answered with an error status.
func writeProtobuf(c echo.Context, code int, obj runtime.Object) error {
	b := protobufBuffers.Get().(*protobufBuffer)
	defer func() {
		if b.out.Cap() <= maxPooledResponse {
			b.out.Reset()
			protobufBuffers.Put(b)
		}
	}()
	if err := protobufEncoder.EncodeWithAllocator(obj, &b.out, &b.alloc); err != nil {
		return fmt.Errorf("encode protobuf response: %w", err)
	}
	return c.Blob(code, mediaProtobuf, b.out.Bytes())
}

// readBody reads the whole request body, refusing more than max bytes with 413.
func readBody(r *http.Request, max int64) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	if r.ContentLength > max {
		return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", max))
	}
	var data []byte
	var err error
	if n := r.ContentLength; n > 0 {
		// The common case: the size is known, so read into one buffer of that size
		// (io.ReadAll would grow its buffer several times for a typical object).
		data = make([]byte, n)
		if _, err = io.ReadFull(r.Body, data); err == nil {
			var extra [1]byte
			if m, _ := r.Body.Read(extra[:]); m > 0 { // net/http never sends more than Content-Length
				err = fmt.Errorf("body longer than its Content-Length")
			}
		}
	} else {
		data, err = io.ReadAll(io.LimitReader(r.Body, max+1))
	}
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("read request body: %v", err))
	}
	if int64(len(data)) > max {
		return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", max))
	}
	return data, nil
}

// fieldValidation is the request's fieldValidation directive.
type fieldValidation string

const (
	validationStrict fieldValidation = "Strict"
	validationWarn   fieldValidation = "Warn"
	validationIgnore fieldValidation = "Ignore"
)

// fieldValidationOf reads ?fieldValidation=; the real server's default is Warn.
func fieldValidationOf(c echo.Context) (fieldValidation, error) {
	switch v := fieldValidation(c.QueryParam("fieldValidation")); v {
	case "":
		return validationWarn, nil
	case validationStrict, validationWarn, validationIgnore:
		return v, nil
	default:
		return "", apierrors.NewBadRequest(fmt.Sprintf("fieldValidation must be one of Ignore, Warn, Strict; got %q", v))
	}
}

// decodeBody decodes a request body of the given content type into a fresh object of
// kind want. It refuses a body of another kind or version, reports unknown and
// duplicate fields per the fieldValidation directive (as an error for Strict, as
// Warning headers for Warn), and answers malformed input with 400.
func decodeBody(c echo.Context, contentType string, body []byte, want schema.GroupVersionKind, into runtime.Object) (runtime.Object, error) {
	mode, err := fieldValidationOf(c)
	if err != nil {
		return nil, err
	}
	obj, err := decodeAs(contentType, body, want, into)
	if err != nil && runtime.IsStrictDecodingError(err) && obj != nil {
		switch mode {
		case validationStrict:
			return nil, apierrors.NewBadRequest(err.Error())
		case validationWarn:
			if se, ok := err.(interface{ Errors() []error }); ok {
				for _, e := range se.Errors() {
					c.Response().Header().Add("Warning", fmt.Sprintf("299 - %q", e.Error()))
				}
			}
		}
		err = nil
	}
	return obj, err
}

// decodeJSON is decodeAs for JSON, the hot path of every write: one pass straight
// into the typed object (the generic serializer first scans the whole body a second
// time to find its kind). Unknown and duplicate fields come back as a strict decoding
// error alongside the object, as the serializer reports them.
func decodeJSON(body []byte, want schema.GroupVersionKind, into runtime.Object) (runtime.Object, error) {
	var strict []error
	if !decodeFast(body, into) {
		var err error
		if strict, err = kjson.UnmarshalStrict(body, into); err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("the body of the request could not be decoded: %v", err))
		}
	}
	if got := into.GetObjectKind().GroupVersionKind(); (got.Kind != "" && got.Kind != want.Kind) ||
		(got.Version != "" && got.GroupVersion() != want.GroupVersion()) {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the body of the request is a %s, this path takes a %s",
			describeGVK(got), describeGVK(want)))
	}
	into.GetObjectKind().SetGroupVersionKind(want)
	if len(strict) > 0 {
		return into, runtime.NewStrictDecodingError(strict)
	}
	return into, nil
}

// decodeFast decodes body into the fresh object into with encoding/json/v2's decoder
// (github.com/go-json-experiment/json), which takes about half the time and a third of
// the allocations of the strict v1 decoder on a typical pod. It is set to refuse
// everything the strict decoder would report or refuse: unknown fields, duplicate
// names, names in another case (v2 matches case-sensitively by default) and malformed
// JSON; it also refuses some input v1 takes, such as invalid UTF-8. When it refuses,
// into is zeroed and false returned, and the body goes through kjson.UnmarshalStrict,
// whose errors and warnings are the ones a client sees. FuzzDecodeFast checks that
// whatever it accepts, the strict decoder accepts cleanly into an equal object.
func decodeFast(body []byte, into runtime.Object) bool {
	if err := jsonv2.Unmarshal(body, into, jsonv2.RejectUnknownMembers(true)); err != nil {
		reflect.ValueOf(into).Elem().SetZero()
		return false
	}
	return true
}

// decodeAs decodes body (JSON, YAML or protobuf) into into, which must be of kind want.
func decodeAs(contentType string, body []byte, want schema.GroupVersionKind, into runtime.Object) (runtime.Object, error) {
	mt := mediaJSON
	if contentType != "" {
		parsed, _, err := mime.ParseMediaType(contentType)
		if err != nil {
			return nil, unsupportedMediaType(contentType)
		}
		mt = parsed
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, apierrors.NewBadRequest("the request body is empty")
	}
	var dec runtime.Decoder
	switch mt {
	case mediaJSON:
		return decodeJSON(body, want, into)
	case mediaYAML, "application/x-yaml", "text/yaml":
		dec = yamlStrict
	case mediaProtobuf:
		if decodeProtobufFast(body, want, into) {
			into.GetObjectKind().SetGroupVersionKind(want)
			return into, nil
		}
		dec = protobufInfo.Serializer
	default:
		return nil, unsupportedMediaType(contentType)
	}
	obj, gvk, err := dec.Decode(body, &want, into)
	if err != nil && !(runtime.IsStrictDecodingError(err) && obj != nil) {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the body of the request could not be decoded: %v", err))
	}
	if gvk != nil && (gvk.Kind != want.Kind || gvk.GroupVersion() != want.GroupVersion()) {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the body of the request is a %s, this path takes a %s",
			describeGVK(*gvk), describeGVK(want)))
	}
	if obj != into {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the body of the request is not a %s", describeGVK(want)))
	}
	obj.GetObjectKind().SetGroupVersionKind(want)
	return obj, err
}

// protobufPrefix starts every Kubernetes protobuf message (the serializer's magic).
var protobufPrefix = []byte("k8s\x00")

// protobufMessage is what the API types' generated code implements.
type protobufMessage interface {
	Reset()
	Unmarshal(data []byte) error
}

// decodeProtobufFast is decodeAs for protobuf, the agents' heartbeats' encoding: it
// reads the envelope (runtime.Unknown: the type meta, the raw object, its content
// encoding and type) in place, where the serializer copies the raw object out of it
// first, then unmarshals the object into into as the serializer does. It takes only a
// clean envelope of kind want (the kind and version, where given, are want's; each
// field once; no content encoding; the object in protobuf); for anything else it
// returns false with into reset, and the body goes through the serializer, whose
// errors are the ones a client sees. FuzzDecodeProtobufFast checks that whatever it
// accepts, the serializer decodes into an equal object.
func decodeProtobufFast(body []byte, want schema.GroupVersionKind, into runtime.Object) bool {
	pb, ok := into.(protobufMessage)
	if !ok || len(body) == len(protobufPrefix) || !bytes.HasPrefix(body, protobufPrefix) {
		return false // the serializer's "empty body", or not protobuf
	}
	var seen [5]bool
	var apiVersion, kind, raw []byte
	for data := body[len(protobufPrefix):]; len(data) > 0; {
		num, v, rest, ok := protobufField(data)
		if !ok || num < 1 || num > 4 || seen[num] {
			return false
		}
		seen[num], data = true, rest
		switch num {
		case 1: // typeMeta
			if apiVersion, kind, ok = protobufTypeMeta(v); !ok {
				return false
			}
		case 2: // raw
			raw = v
		case 3: // contentEncoding
			if len(v) > 0 {
				return false
			}
		case 4: // contentType
			if len(v) > 0 && string(v) != runtime.ContentTypeProtobuf {
				return false
			}
		}
	}
	if (len(kind) > 0 && string(kind) != want.Kind) || (len(apiVersion) > 0 && string(apiVersion) != want.GroupVersion().String()) {
		return false
	}
	pb.Reset()
	if err := pb.Unmarshal(raw); err != nil {
		pb.Reset()
		return false
	}
	return true
}

// protobufTypeMeta reads runtime.TypeMeta (apiVersion = 1, kind = 2), each at most once.
func protobufTypeMeta(data []byte) (apiVersion, kind []byte, ok bool) {
	var seen [3]bool
	for len(data) > 0 {
		num, v, rest, ok := protobufField(data)
		if !ok || num < 1 || num > 2 || seen[num] {
			return nil, nil, false
		}
		seen[num], data = true, rest
		if num == 1 {
			apiVersion = v
		} else {
			kind = v
		}
	}
	return apiVersion, kind, true
}

// protobufField reads one length-delimited field off data: its number, its value and
// the rest; not ok for a field of another wire type or a malformed one.
func protobufField(data []byte) (num protowire.Number, v, rest []byte, ok bool) {
	num, typ, n := protowire.ConsumeTag(data)
	if n < 0 || typ != protowire.BytesType {
		return 0, nil, nil, false
	}
	v, m := protowire.ConsumeBytes(data[n:])
	if m < 0 {
		return 0, nil, nil, false
	}
	return num, v, data[n+m:], true
}

func describeGVK(gvk schema.GroupVersionKind) string {
	return gvk.Kind + " (" + gvk.GroupVersion().String() + ")"
}

// metaOf is meta.Accessor for objects the scheme knows, which always have metadata.
func metaOf(obj runtime.Object) (metav1.Object, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, fmt.Errorf("object metadata: %w", err)
	}
	return m, nil
}

// decodeOptions decodes an options body (such as DeleteOptions) whatever group its
// apiVersion names: JSON or YAML by plain unmarshalling, protobuf by the scheme.
func decodeOptions(contentType string, body []byte, into runtime.Object) error {
	mt, _, _ := mime.ParseMediaType(contentType)
	if mt == mediaProtobuf {
		_, _, err := protobufInfo.Serializer.Decode(body, nil, into)
		return err
	}
	return yaml.Unmarshal(body, into)
}

// writeStored answers with an object a write just stored. When the answer is plain
// JSON and the object is still the store's current one, its stored encoding is the
// answer, so a write is encoded once, not twice.
func (s *Server) writeStored(c echo.Context, rq *request, code int, obj runtime.Object) error {
	if negotiate(c.Request().Header.Get(echo.HeaderAccept)) == outJSON {
		if m, err := metaOf(obj); err == nil {
			key := persistence.Key{Resource: rq.res.Name, Namespace: m.GetNamespace(), Name: m.GetName()}
			if it, err := s.store.Get(key); err == nil && it.Object() == obj {
				return c.Blob(code, mediaJSON, it.JSON())
			}
		}
	}
	return writeObject(c, code, obj)
}
