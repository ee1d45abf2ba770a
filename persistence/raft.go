package persistence

import (
	"context"
	"errors"
)

// replica is the Raft side of a replicated store (issue 13). Until it is built,
// Open refuses Options.Replication, so none of these is ever reached.
type replica struct{}

var errNoReplication = errors.New("persistence: replication is not built yet")

func (r *replica) isLeader() bool                            { return false }
func (r *replica) leadership() <-chan bool                   { return nil }
func (r *replica) leader() (Member, bool)                    { return Member{}, false }
func (r *replica) members(context.Context) ([]Member, error) { return nil, errNoReplication }
func (r *replica) remove(context.Context, string) error      { return errNoReplication }
func (r *replica) readBarrier(context.Context) error         { return errNoReplication }
func (r *replica) ready() bool                               { return false }
