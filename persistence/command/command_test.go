package command

import (
	"errors"
	"testing"
)

func TestPreconditionsCheck(t *testing.T) {
	tests := []struct {
		name string
		pre  Preconditions
		err  error
	}{
		{name: "none", pre: Preconditions{}},
		{name: "both hold", pre: Preconditions{UID: "u1", ResourceVersion: 7}},
		{name: "uid holds", pre: Preconditions{UID: "u1"}},
		{name: "resourceVersion holds", pre: Preconditions{ResourceVersion: 7}},
		{name: "other uid", pre: Preconditions{UID: "u2"}, err: ErrConflict},
		{name: "stale resourceVersion", pre: Preconditions{ResourceVersion: 6}, err: ErrConflict},
		{name: "uid holds, resourceVersion stale", pre: Preconditions{UID: "u1", ResourceVersion: 8}, err: ErrConflict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.pre.Check("u1", 7)
			if !errors.Is(err, tt.err) || (tt.err == nil) != (err == nil) {
				t.Fatalf("Check: %v, want %v", err, tt.err)
			}
		})
	}
}
