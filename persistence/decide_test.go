package persistence

import (
	"errors"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeactor/kubeactor/persistence/command"
)

func TestDecide(t *testing.T) {
	a, b := podKey("ns", "a"), podKey("ns", "b")
	stored := map[Key]objState{a: {exists: true, rev: 7, uid: "uid-a"}}
	state := func(k Key) objState { return stored[k] }
	tests := []struct {
		name string
		cmds []Command
		want []EventType
		err  error
	}{
		{"create new", []Command{{Op: OpCreate, Key: b}}, []EventType{Added}, nil},
		{"create existing", []Command{{Op: OpCreate, Key: a}}, nil, ErrAlreadyExists},
		{"update existing", []Command{{Op: OpUpdate, Key: a}}, []EventType{Modified}, nil},
		{"update absent", []Command{{Op: OpUpdate, Key: b}}, nil, ErrNotFound},
		{"update matching rv and uid", []Command{{Op: OpUpdate, Key: a, Pre: command.Preconditions{ResourceVersion: 7, UID: "uid-a"}}}, []EventType{Modified}, nil},
		{"update stale rv", []Command{{Op: OpUpdate, Key: a, Pre: command.Preconditions{ResourceVersion: 6}}}, nil, ErrConflict},
		{"update other uid", []Command{{Op: OpUpdate, Key: a, Pre: command.Preconditions{UID: "uid-x"}}}, nil, ErrConflict},
		{"delete existing", []Command{{Op: OpDelete, Key: a}}, []EventType{Deleted}, nil},
		{"delete absent", []Command{{Op: OpDelete, Key: b}}, nil, ErrNotFound},
		{"delete stale rv", []Command{{Op: OpDelete, Key: a, Pre: command.Preconditions{ResourceVersion: 3}}}, nil, ErrConflict},
		{"delete other uid", []Command{{Op: OpDelete, Key: a, Pre: command.Preconditions{UID: "uid-x"}}}, nil, ErrConflict},
		{"create then update in one txn", []Command{{Op: OpCreate, Key: b}, {Op: OpUpdate, Key: b, Pre: command.Preconditions{ResourceVersion: 8}}}, []EventType{Added, Modified}, nil},
		{"delete then create in one txn", []Command{{Op: OpDelete, Key: a}, {Op: OpCreate, Key: a}}, []EventType{Deleted, Added}, nil},
		{"delete twice in one txn", []Command{{Op: OpDelete, Key: a}, {Op: OpDelete, Key: a}}, nil, ErrNotFound},
		{"second command fails the txn", []Command{{Op: OpCreate, Key: b}, {Op: OpCreate, Key: a}}, nil, ErrAlreadyExists},
		{"empty txn", nil, nil, ErrInvalid},
		{"unknown op", []Command{{Op: 9, Key: a}}, nil, ErrInvalid},
		{"missing name", []Command{{Op: OpCreate, Key: Key{Resource: "pods", Namespace: "ns"}}}, nil, ErrInvalid},
		{"slash in namespace", []Command{{Op: OpCreate, Key: Key{Resource: "pods", Namespace: "a/b", Name: "x"}}}, nil, ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			uids := make([]types.UID, len(tt.cmds))
			got, err := decide(state, 8, tt.cmds, uids)
			if !errors.Is(err, tt.err) || (tt.err == nil) != (err == nil) {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("types = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestDecideIsDeterministic(t *testing.T) {
	state := func(Key) objState { return objState{exists: true, rev: 3, uid: "u"} }
	cmds := []Command{{Op: OpUpdate, Key: podKey("ns", "a"), Pre: command.Preconditions{ResourceVersion: 3}}, {Op: OpDelete, Key: podKey("ns", "b"), Pre: command.Preconditions{UID: "u"}}}
	first, err1 := decide(state, 4, cmds, make([]types.UID, 2))
	for i := range 100 {
		got, err := decide(state, 4, cmds, make([]types.UID, 2))
		if !reflect.DeepEqual(got, first) || (err == nil) != (err1 == nil) {
			t.Fatalf("run %d: %v %v, first %v %v", i, got, err, first, err1)
		}
	}
}
