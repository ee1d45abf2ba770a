package persistence

import (
	"strings"
	"testing"
)

// The committer writes keys and change-log entries into space it reserves in the
// batch, so the lengths it computes must be exact and the entries must parse back.
func TestKeyAndLogEntryLengths(t *testing.T) {
	tests := []struct {
		name string
		key  Key
		typ  EventType
		json string
		rev  int64
	}{
		{name: "namespaced", key: Key{Resource: "pods", Namespace: "default", Name: "web-0"}, typ: Added, json: `{"kind":"Pod"}`, rev: 1},
		{name: "cluster scoped", key: Key{Resource: "nodes", Name: "n1"}, typ: Modified, json: `{"kind":"Node"}`, rev: 1 << 40},
		{name: "long name needs a two-byte length", key: Key{Resource: "pods", Namespace: "ns", Name: strings.Repeat("a", 200)}, typ: Deleted, json: "{}", rev: 7},
		{name: "empty json", key: Key{Resource: "events", Namespace: "default", Name: "e"}, typ: Added, rev: 9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok := objKey(tt.key)
			if len(ok) != objKeyLen(tt.key) {
				t.Errorf("object key is %d bytes, objKeyLen says %d", len(ok), objKeyLen(tt.key))
			}
			if got, err := parseObjKey(ok); err != nil || got != tt.key {
				t.Errorf("parseObjKey = %+v, %v; want %+v", got, err, tt.key)
			}
			lk := logKey(tt.rev, 3)
			if len(lk) != logKeyLen {
				t.Errorf("log key is %d bytes, logKeyLen is %d", len(lk), logKeyLen)
			}
			if rev, err := parseLogKey(lk); err != nil || rev != tt.rev {
				t.Errorf("parseLogKey = %d, %v; want %d", rev, err, tt.rev)
			}
			v := appendLogValue(nil, tt.typ, tt.key, []byte(tt.json))
			if len(v) != logValueLen(tt.key, []byte(tt.json)) {
				t.Errorf("log entry is %d bytes, logValueLen says %d", len(v), logValueLen(tt.key, []byte(tt.json)))
			}
			typ, key, js, err := parseLogValue(v)
			if err != nil || typ != tt.typ || key != tt.key || string(js) != tt.json {
				t.Errorf("parseLogValue = %s %+v %q %v; want %s %+v %q", typ, key, js, err, tt.typ, tt.key, tt.json)
			}
		})
	}
}
