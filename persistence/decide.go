package persistence

import (
	"fmt"

	"k8s.io/apimachinery/pkg/types"
)

// objState is what a transaction's preconditions are checked against.
type objState struct {
	exists bool
	rev    int64
	uid    types.UID
}

// decide is the pure core of the apply path: given the state before the transaction
// (state), the transaction's revision, the commands and the uid of each command's new
// object, it returns the event type of each command or the error that rejects the
// whole transaction. It does no I/O; the same inputs give the same answer on every
// replica.
func decide(state func(Key) objState, rev int64, cmds []Command, uids []types.UID) ([]EventType, error) {
	if len(cmds) == 0 {
		return nil, fmt.Errorf("%w: empty transaction", ErrInvalid)
	}
	var local map[Key]objState // effects of this transaction's earlier commands
	lookup := func(k Key) objState {
		if st, ok := local[k]; ok {
			return st
		}
		return state(k)
	}
	out := make([]EventType, len(cmds))
	for i, c := range cmds {
		if why := validKey(c.Key); why != "" {
			return nil, fmt.Errorf("%w: command %d key %v: %s", ErrInvalid, i, c.Key, why)
		}
		cur := lookup(c.Key)
		var next objState
		switch c.Op {
		case OpCreate:
			if cur.exists {
				return nil, fmt.Errorf("create %s: %w", keyString(c.Key), ErrAlreadyExists)
			}
			out[i], next = Added, objState{exists: true, rev: rev, uid: uids[i]}
		case OpUpdate, OpDelete:
			if !cur.exists {
				return nil, fmt.Errorf("%s %s: %w", opName(c.Op), keyString(c.Key), ErrNotFound)
			}
			if err := c.Pre.Check(cur.uid, cur.rev); err != nil {
				return nil, fmt.Errorf("%s %s: %w", opName(c.Op), keyString(c.Key), err)
			}
			if c.Op == OpUpdate {
				out[i], next = Modified, objState{exists: true, rev: rev, uid: uids[i]}
			} else {
				out[i] = Deleted
			}
		default:
			return nil, fmt.Errorf("%w: command %d has unknown op %d", ErrInvalid, i, c.Op)
		}
		if len(cmds) > 1 {
			if local == nil {
				local = make(map[Key]objState, len(cmds))
			}
			local[c.Key] = next
		}
	}
	return out, nil
}

func keyString(k Key) string {
	if k.Namespace == "" {
		return k.Resource + "/" + k.Name
	}
	return k.Resource + "/" + k.Namespace + "/" + k.Name
}

func opName(op Op) string {
	switch op {
	case OpCreate:
		return "create"
	case OpUpdate:
		return "update"
	case OpDelete:
		return "delete"
	}
	return fmt.Sprintf("op(%d)", op)
}
