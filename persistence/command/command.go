package command

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
)

// Op is the kind of change a write makes.
type Op uint8

// The three operations of the apply path.
const (
	OpCreate Op = iota + 1
	OpUpdate
	OpDelete
)

// Sentinel errors of a decision about a write; wrapped errors say which object and why.
// The texts name the store, whose answers these are (package persistence returns the
// same values under the same names).
var (
	ErrNotFound      = errors.New("persistence: not found")
	ErrAlreadyExists = errors.New("persistence: already exists")
	ErrConflict      = errors.New("persistence: conflict")
)

// Preconditions of a write, checked against the stored object. A zero field checks
// nothing.
type Preconditions struct {
	UID             types.UID // when non-empty, must equal the stored object's uid
	ResourceVersion int64     // when non-zero, must equal the stored object's revision
}

// Check returns an error wrapping ErrConflict when p does not hold for an object with
// uid stored at revision rev.
func (p Preconditions) Check(uid types.UID, rev int64) error {
	if p.UID != "" && p.UID != uid {
		return fmt.Errorf("precondition uid %s, stored %s: %w", p.UID, uid, ErrConflict)
	}
	if p.ResourceVersion != 0 && p.ResourceVersion != rev {
		return fmt.Errorf("precondition resourceVersion %d, stored %d: %w", p.ResourceVersion, rev, ErrConflict)
	}
	return nil
}
