package persistence

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// Key layout in Pebble:
//
//	o/<resource>/<namespace>/<name> -> object value (format, revision, JSON)
//	l/<rev: 8 bytes BE><index: 4 bytes BE> -> change-log entry (format, type, key, JSON)
//	m/rev -> last committed revision (8 bytes BE)
//	m/compact -> revision up to which the change log was dropped (8 bytes BE)
//
// A replicated store adds (raft_log.go): r/l/<index> (its Raft log), r/s/<key> (Raft's
// stable store), m/applied (the last Raft index applied) and m/sync.
var (
	objPrefix     = []byte("o/")
	logPrefix     = []byte("l/")
	revKey        = []byte("m/rev")
	compactRevKey = []byte("m/compact")
)

func objKey(k Key) []byte { return appendObjKey(make([]byte, 0, objKeyLen(k)), k) }

func objKeyLen(k Key) int {
	return len(objPrefix) + len(k.Resource) + len(k.Namespace) + len(k.Name) + 2
}

func appendObjKey(b []byte, k Key) []byte {
	b = append(b, objPrefix...)
	b = append(b, k.Resource...)
	b = append(b, '/')
	b = append(b, k.Namespace...)
	b = append(b, '/')
	return append(b, k.Name...)
}

func parseObjKey(b []byte) (Key, error) {
	parts := strings.SplitN(string(b[len(objPrefix):]), "/", 3)
	if len(parts) != 3 {
		return Key{}, fmt.Errorf("bad object key %q", b)
	}
	return Key{Resource: parts[0], Namespace: parts[1], Name: parts[2]}, nil
}

func logKey(rev int64, index int) []byte {
	return appendLogKey(make([]byte, 0, logKeyLen), rev, index)
}

const logKeyLen = 2 + 12 // len(logPrefix) + revision + index

func appendLogKey(b []byte, rev int64, index int) []byte {
	b = append(b, logPrefix...)
	b = binary.BigEndian.AppendUint64(b, uint64(rev))
	return binary.BigEndian.AppendUint32(b, uint32(index))
}

func parseLogKey(b []byte) (int64, error) {
	if len(b) != len(logPrefix)+12 {
		return 0, fmt.Errorf("bad log key %q", b)
	}
	return int64(binary.BigEndian.Uint64(b[len(logPrefix):])), nil
}

// prefixEnd is the smallest key greater than every key with prefix p.
func prefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	end[len(end)-1]++
	return end
}

func encodeRev(rev int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(rev)) }

func decodeRev(b []byte) (int64, error) {
	if len(b) != 8 {
		return 0, fmt.Errorf("bad revision value of %d bytes", len(b))
	}
	return int64(binary.BigEndian.Uint64(b)), nil
}

var eventCodes = map[EventType]byte{Added: 'A', Modified: 'M', Deleted: 'D'}

// logValueLen is the exact length of appendLogValue's entry for k and js.
func logValueLen(k Key, js []byte) int {
	n := 2 + len(js)
	for _, s := range [3]string{k.Resource, k.Namespace, k.Name} {
		n += uvarintLen(uint64(len(s))) + len(s)
	}
	return n
}

func uvarintLen(x uint64) int {
	n := 1
	for ; x >= 0x80; x >>= 7 {
		n++
	}
	return n
}

// appendLogValue appends one change-log entry: format, event type, key, JSON.
func appendLogValue(b []byte, t EventType, k Key, js []byte) []byte {
	b = append(b, formatJSON, eventCodes[t])
	for _, s := range [3]string{k.Resource, k.Namespace, k.Name} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return append(b, js...)
}

func parseLogValue(b []byte) (EventType, Key, []byte, error) {
	if len(b) < 2 || b[0] != formatJSON {
		return "", Key{}, nil, fmt.Errorf("unknown log entry format")
	}
	var t EventType
	switch b[1] {
	case 'A':
		t = Added
	case 'M':
		t = Modified
	case 'D':
		t = Deleted
	default:
		return "", Key{}, nil, fmt.Errorf("unknown log entry type %q", b[1])
	}
	b = b[2:]
	var parts [3]string
	for i := range parts {
		n, w := binary.Uvarint(b)
		if w <= 0 || uint64(len(b)-w) < n {
			return "", Key{}, nil, fmt.Errorf("truncated log entry key")
		}
		parts[i] = string(b[w : w+int(n)])
		b = b[w+int(n):]
	}
	return t, Key{Resource: parts[0], Namespace: parts[1], Name: parts[2]}, b, nil
}

// validKey reports why k cannot be stored, or "" when it can.
func validKey(k Key) string {
	switch {
	case k.Resource == "" || strings.Contains(k.Resource, "/"):
		return "resource must be non-empty without '/'"
	case strings.Contains(k.Namespace, "/"):
		return "namespace must not contain '/'"
	case k.Name == "":
		return "name must be non-empty"
	}
	return ""
}
