package persistence

import (
	"fmt"
	"slices"

	"github.com/google/btree"
	kruntime "k8s.io/apimachinery/pkg/runtime"
)

// Claims are values that at most one stored object may hold at a time: a service's
// cluster IP and node ports, a node's pod CIDR. Which values an object claims is
// Options.Claims's answer, a pure function of the object (and of the server's fixed
// configuration). The store checks them in the apply path, which every replica runs
// on the same log, so two writers that chose the same value on different replicas
// (or one on a leader that has since been replaced) cannot both succeed: the
// transaction that claims a value another object holds fails with ErrClaimed.
// The allocators that choose the values (in the actors) keep no state that must be
// shared: they ask the store what is held (ClaimHolder) and retry on ErrClaimed.
//
// A value an object already holds is not checked again when it is rewritten, so
// stored data from before a claim was checked stays writable.

// ErrClaimed reports a create or update whose object claims a value another stored
// object holds. It wraps ErrConflict: the write was refused because of a concurrent
// one, and may succeed with another value.
var ErrClaimed = fmt.Errorf("%w: a value the object claims is held by another object", ErrConflict)

// claimHolder is who holds a claim in the group being written: held is false when
// the group released it.
type claimHolder struct {
	key  Key
	held bool
}

// claimsOf returns the claims of an item's object (none without a Claims function
// or an object, or for a resource that claims nothing).
func (s *Store) claimsOf(key Key, obj kruntime.Object) []string {
	if !s.mayClaim(key.Resource) || obj == nil {
		return nil
	}
	return s.claims(key.Resource, obj)
}

// itemClaims returns the claims of a stored item, decoding it only if its resource
// may claim anything.
func (s *Store) itemClaims(it *Item) []string {
	if !s.mayClaim(it.Key.Resource) {
		return nil
	}
	return s.claimsOf(it.Key, it.Peek())
}

func (s *Store) mayClaim(resource string) bool {
	return s.claims != nil && (s.claimed == nil || s.claimed[resource])
}

// claimResources makes Options.ClaimResources a set (nil when it is empty).
func claimResources(rs []string) map[string]bool {
	if len(rs) == 0 {
		return nil
	}
	m := make(map[string]bool, len(rs))
	for _, r := range rs {
		m[r] = true
	}
	return m
}

// checkClaims decides whether the commands of one transaction, whose items before
// and after are given in order, may take the values they claim; it returns the
// changes to record when the transaction is accepted. holder says who holds a claim
// in the state before the transaction.
func checkClaims(before, after []claimItem, holder func(string) (Key, bool)) ([]claimChange, error) {
	var changes []claimChange
	local := map[string]claimHolder{} // this transaction's earlier commands
	owner := func(c string) (Key, bool) {
		if h, ok := local[c]; ok {
			return h.key, h.held
		}
		return holder(c)
	}
	for i := range before {
		old, next := before[i].claims, after[i].claims
		key := after[i].key
		for _, c := range old {
			if !slices.Contains(next, c) {
				if k, ok := owner(c); ok && k == key {
					local[c] = claimHolder{key: key}
					changes = append(changes, claimChange{claim: c, key: key})
				}
			}
		}
		for _, c := range next {
			if slices.Contains(old, c) {
				continue
			}
			if k, ok := owner(c); ok && k != key {
				return nil, fmt.Errorf("%s: %w: %s is held by %s", keyString(key), ErrClaimed, c, keyString(k))
			}
			local[c] = claimHolder{key: key, held: true}
			changes = append(changes, claimChange{claim: c, key: key, held: true})
		}
	}
	return changes, nil
}

// anyClaims tells whether any of items holds a claim.
func anyClaims(items []claimItem) bool {
	for _, it := range items {
		if len(it.claims) > 0 {
			return true
		}
	}
	return false
}

// claimItem is one command's object as claims: its key and the values it holds.
type claimItem struct {
	key    Key
	claims []string
}

// claimChange is one claim taken (held) or given back by key.
type claimChange struct {
	claim string
	key   Key
	held  bool
}

// groupHolder says who holds claim in the state the group sees: its own changes
// first, then the published state. Committer goroutine only.
func (s *Store) groupHolder(claim string) (Key, bool) {
	if h, ok := s.claimOverlay[claim]; ok {
		return h.key, h.held
	}
	k, ok := s.claimOwner[claim]
	return k, ok
}

// publishClaims applies a published group's claims: events are in order, and
// latest still holds each key's item before its event. Caller holds mu.
func (s *Store) publishClaims(ev Event) {
	if s.claims == nil {
		return
	}
	var old, next []string
	if prev := s.latest[ev.Item.Key]; prev != nil {
		old = s.itemClaims(prev)
	}
	if ev.Type != Deleted {
		next = s.itemClaims(ev.Item)
	}
	for _, c := range old {
		if !slices.Contains(next, c) && s.claimOwner[c] == ev.Item.Key {
			delete(s.claimOwner, c)
		}
	}
	for _, c := range next {
		if _, held := s.claimOwner[c]; !held {
			s.claimOwner[c] = ev.Item.Key
		}
	}
}

// rebuildClaims makes the claims index from the state, in key order so that every
// replica picks the same holder if old data has a value twice. Caller holds mu or
// owns the store alone.
func (s *Store) rebuildClaims(trees map[string]*btree.BTreeG[*Item]) map[string]Key {
	owners := map[string]Key{}
	if s.claims == nil {
		return owners
	}
	resources := make([]string, 0, len(trees))
	for r := range trees {
		resources = append(resources, r)
	}
	slices.Sort(resources)
	for _, r := range resources {
		trees[r].Ascend(func(it *Item) bool {
			for _, c := range s.itemClaims(it) {
				if _, held := owners[c]; !held {
					owners[c] = it.Key
				}
			}
			return true
		})
	}
	return owners
}

// ClaimHolder names the stored object that holds claim, as of the last published
// revision.
func (s *Store) ClaimHolder(claim string) (Key, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	k, ok := s.claimOwner[claim]
	return k, ok
}
