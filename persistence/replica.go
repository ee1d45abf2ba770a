package persistence

import (
	"context"
	"errors"
	"net/http"
	"time"
)

// Replication makes a store one replica of a Raft-replicated store (issue 13).
// A store opened without it is a cluster of one, as before: no Raft, no peer port.
type Replication struct {
	Name        string // this replica's name: its Raft server ID (etcd's --name)
	PeerAddress string // host:port the peer port binds and advertises (Raft and peer HTTP)
	// InitialCluster names every member of a new cluster, this one included:
	// name -> peer address (etcd's --initial-cluster). Empty with Join set: join a
	// running cluster. Ignored once the data directory holds Raft state.
	InitialCluster map[string]string
	// Join is the peer URL (http://host:port) of any member of a running cluster;
	// the replica asks it to be added as a voter (as a non-voter with NonVoter).
	Join string
	// NonVoter joins as a non-voter (hashicorp/raft's AddNonvoter): the replica
	// receives every committed entry and forwards its writes like a follower, but it
	// does not count for the quorum and never campaigns, so never leads. A member
	// that only hosts actors (kube-scheduler, kube-controller-manager) joins so.
	// It needs Join.
	NonVoter bool
	// Meta is served to peers and listed by Members: the replica's API addresses.
	Meta map[string]string
	// PeerHandler serves the peer port's HTTP paths that are not the store's own
	// (which all begin with /raft/): the server's forwarded API requests.
	PeerHandler http.Handler
	// Raft timing; zero values take the store's LAN defaults.
	HeartbeatTimeout   time.Duration
	ElectionTimeout    time.Duration
	LeaderLeaseTimeout time.Duration
	// CommitTimeout is how long the leader waits, without new entries, before it
	// sends the followers the commit index (0: the default, 10 ms).
	CommitTimeout time.Duration
	// SnapshotThreshold is how many Raft entries pass between snapshots (0: default).
	SnapshotThreshold uint64
	// TrailingLogs is how many Raft entries a snapshot leaves in the log (0: default).
	TrailingLogs uint64
	// SnapshotInterval is how often the threshold is checked (0: default).
	SnapshotInterval time.Duration
}

// Member is one replica as the Raft configuration and its last report know it.
type Member struct {
	Name        string            `json:"name"`
	PeerAddress string            `json:"peerAddress"`
	Meta        map[string]string `json:"meta,omitempty"`
	Leader      bool              `json:"leader"`
	Voter       bool              `json:"voter"`
	// Revision is the store revision the replica has applied, as last reported.
	Revision int64 `json:"revision"`
	// LastContact is when the leader last heard from it (zero: unknown or itself).
	LastContact time.Time `json:"lastContact,omitzero"`
	Reachable   bool      `json:"reachable"`
}

// ErrNotLeader is returned by Apply when no leader is known, or when the one asked
// is no longer the leader (a follower's Apply forwards the transaction to the
// leader): the transaction was not applied, and may be tried again.
var ErrNotLeader = errors.New("persistence: not the leader")

// Replicated reports whether the store is a replica of a Raft cluster.
func (s *Store) Replicated() bool { return s.replica != nil }

// IsLeader reports whether this replica is the leader (always true for a store of one).
func (s *Store) IsLeader() bool {
	if s.replica == nil {
		return true
	}
	return s.replica.isLeader()
}

// Leadership returns a channel that receives true each time this replica becomes
// the leader and false each time it stops being it. A store of one sends true once.
// A replica's channel starts with true when it leads at the call. No transition is
// lost: the ones not yet received are queued, so the consumer must keep reading it
// for as long as the store is open (each call makes a new channel).
func (s *Store) Leadership() <-chan bool {
	if s.replica == nil {
		ch := make(chan bool, 1)
		ch <- true
		return ch
	}
	return s.replica.leadership()
}

// Leader returns the current leader as a Member, or false when there is none known.
func (s *Store) Leader() (Member, bool) {
	if s.replica == nil {
		return Member{Name: "", Leader: true, Voter: true, Revision: s.Revision(), Reachable: true}, true
	}
	return s.replica.leader()
}

// Members lists the replicas of the Raft configuration.
func (s *Store) Members(ctx context.Context) ([]Member, error) {
	if s.replica == nil {
		m, _ := s.Leader()
		return []Member{m}, nil
	}
	return s.replica.members(ctx)
}

// RemoveMember removes a replica from the Raft configuration (through the leader).
func (s *Store) RemoveMember(ctx context.Context, name string) error {
	if s.replica == nil {
		return errors.New("persistence: not replicated: there is no other member to remove")
	}
	return s.replica.remove(ctx, name)
}

// ReadBarrier returns once this replica has applied every write committed before
// the call (a linearizable read may then be served from the local state).
func (s *Store) ReadBarrier(ctx context.Context) error {
	if s.replica == nil {
		return nil
	}
	return s.replica.readBarrier(ctx)
}

// Ready reports whether the replica has a leader and has applied up to the commit
// index it learned (/readyz).
func (s *Store) Ready() bool {
	if s.replica == nil {
		return true
	}
	return s.replica.ready()
}
