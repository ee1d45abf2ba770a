package persistence

import (
	"fmt"
	"strings"
	"time"

	"github.com/google/btree"
)

// Snapshot retention for list continuation: the last snapshots handed out are kept
// this long, and at most this many.
const (
	snapshotTTL      = 5 * time.Minute
	snapshotRetained = 64
)

// Snapshot is an immutable view of one resource at one revision.
type Snapshot struct {
	tree *btree.BTreeG[*Item] // a copy-on-write clone nobody writes; nil when empty
	rev  int64
}

// retainedSnapshot is a clone valid for every revision in [minRev, maxRev]: the
// resource did not change in between.
type retainedSnapshot struct {
	resource       string
	tree           *btree.BTreeG[*Item]
	minRev, maxRev int64
	at             time.Time
}

// snapshotCache holds the recent snapshots, oldest first.
type snapshotCache []*retainedSnapshot

// Changed is a revision after which no object of resource has changed (been
// created, updated or deleted): the revision of its last change when that is known,
// otherwise the revision the store was loaded or restored at. A reader that noted it
// before reading the resource knows, while it stays the same, that what it read is
// still current, without reading it again.
func (s *Store) Changed(resource string) int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return max(s.modRev[resource], s.modFloor)
}

// Snapshot returns the current state of one resource, for a reader that is done with
// it when it has read it (a controller's scan): it is not retained for SnapshotAt.
func (s *Store) Snapshot(resource string) *Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snapshotLocked(resource, s.rev.Load(), false)
}

// ListSnapshot returns the current state of one resource and retains it (for
// snapshotTTL, at most snapshotRetained of them), so that a list's continuation, an
// exact list at its revision or a watch from it reads the same state (SnapshotAt).
// A retained snapshot keeps the versions it holds in memory until it expires, so
// only what a client may come back to takes one.
func (s *Store) ListSnapshot(resource string) *Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snapshotLocked(resource, s.rev.Load(), true)
}

// AscendCurrent calls fn for each current object of resource in namespace (every
// one when namespace is empty), in order, until fn returns false. It reads under the
// read lock, so fn must be quick and must not call the store: for the few objects of
// a namespace it is far cheaper than a Snapshot, which takes the write lock.
func (s *Store) AscendCurrent(resource, namespace string, fn func(*Item) bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	(&Snapshot{tree: s.trees[resource]}).Ascend(namespace, "", fn)
}

// snapshotLocked returns the current state of resource labelled with revision rev
// (which the caller knows to be equivalent), retained for SnapshotAt or not. It
// reuses the newest clone when the resource has not changed since, so repeated
// reads do not clone: the newest retained one, or the last one not retained (kept
// until the resource changes and the next snapshot replaces it; it pins nothing but
// the versions superseded since).
func (s *Store) snapshotLocked(resource string, rev int64, retain bool) *Snapshot {
	t := s.trees[resource]
	if t == nil {
		return &Snapshot{rev: rev}
	}
	mod, at := s.modRev[resource], now()
	s.snaps.expire(at)
	for i := len(s.snaps) - 1; i >= 0; i-- {
		if e := s.snaps[i]; e.resource == resource {
			if e.minRev == mod {
				e.maxRev, e.at = max(e.maxRev, s.rev.Load()), at
				return &Snapshot{tree: e.tree, rev: rev}
			}
			break
		}
	}
	e := s.clones[resource]
	if e == nil || e.minRev != mod {
		e = &retainedSnapshot{resource: resource, tree: t.Clone(), minRev: mod}
		s.clones[resource] = e
	}
	e.maxRev, e.at = max(e.maxRev, s.rev.Load()), at
	if retain {
		delete(s.clones, resource)
		s.snaps = append(s.snaps, e)
		if len(s.snaps) > snapshotRetained {
			s.snaps[0] = nil
			s.snaps = s.snaps[1:]
		}
	}
	return &Snapshot{tree: e.tree, rev: rev}
}

// expire drops snapshots older than the TTL.
func (c *snapshotCache) expire(at time.Time) {
	n := 0
	for n < len(*c) && at.Sub((*c)[n].at) > snapshotTTL {
		(*c)[n] = nil
		n++
	}
	*c = (*c)[n:]
}

// SnapshotAt returns the state of one resource at an earlier revision, if still
// retained (for list continuation); otherwise an error wrapping ErrCompacted.
func (s *Store) SnapshotAt(resource string, rev int64) (*Snapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := s.rev.Load()
	if rev > cur {
		return nil, fmt.Errorf("snapshot %s at %d: %w: newer than revision %d", resource, rev, ErrInvalid, cur)
	}
	if rev >= s.modFloor && s.modRev[resource] <= rev {
		return s.snapshotLocked(resource, rev, true), nil // unchanged since rev
	}
	s.snaps.expire(now())
	for i := len(s.snaps) - 1; i >= 0; i-- {
		if e := s.snaps[i]; e.resource == resource && e.minRev <= rev && rev <= e.maxRev {
			return &Snapshot{tree: e.tree, rev: rev}, nil
		}
	}
	return nil, fmt.Errorf("snapshot %s at %d: %w", resource, rev, ErrCompacted)
}

// Revision of the snapshot.
func (sn *Snapshot) Revision() int64 { return sn.rev }

// Len is the number of items in the snapshot.
func (sn *Snapshot) Len() int {
	if sn.tree == nil {
		return 0
	}
	return sn.tree.Len()
}

// Ascend calls fn for each item in (namespace, name) order, restricted to namespace
// when it is not empty, starting after the "namespace/name" position after (exclusive;
// empty means from the start), until fn returns false. For cluster-scoped resources
// after is "/name" or just "name"; within a namespace a bare name is in that namespace.
func (sn *Snapshot) Ascend(namespace, after string, fn func(*Item) bool) {
	if sn.tree == nil {
		return
	}
	pivot := &Item{Key: Key{Namespace: namespace}}
	exclusive := false
	if after != "" {
		ns, name, ok := strings.Cut(after, "/")
		if !ok {
			ns, name = namespace, after
		}
		if namespace != "" && ns != namespace {
			if ns > namespace {
				return
			}
		} else {
			pivot.Key.Namespace, pivot.Key.Name, exclusive = ns, name, true
		}
	}
	sn.tree.AscendGreaterOrEqual(pivot, func(it *Item) bool {
		if exclusive && it.Key.Namespace == pivot.Key.Namespace && it.Key.Name == pivot.Key.Name {
			return true
		}
		if namespace != "" && it.Key.Namespace != namespace {
			return false
		}
		return fn(it)
	})
}
