package persistence

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// ownerKey names a set of the current objects of one resource in one namespace: those
// with an owner reference to uid, or with uid "" those that have no controller.
type ownerKey struct {
	resource, namespace string
	uid                 types.UID
}

// owners indexes the current objects by their owner references, so that a
// controller reads the objects it may own (Related) without scanning its namespace:
// an RC of 5,000 pods in a namespace of 30,000 read all 30,000 at each of its syncs.
// It is kept under Store.mu with latest and the trees.
type owners map[ownerKey]map[string]*Item

// ownerKeys calls fn with the key of each set it holds.
func ownerKeys(it *Item, fn func(ownerKey)) {
	obj := it.Peek()
	if obj == nil {
		return
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	refs := m.GetOwnerReferences()
	controlled := false
	for i := range refs {
		controlled = controlled || (refs[i].Controller != nil && *refs[i].Controller)
		if i > 0 && slices.ContainsFunc(refs[:i], func(r metav1.OwnerReference) bool { return r.UID == refs[i].UID }) {
			continue
		}
		fn(ownerKey{it.Key.Resource, it.Key.Namespace, refs[i].UID})
	}
	if !controlled {
		fn(ownerKey{it.Key.Resource, it.Key.Namespace, ""})
	}
}

// replace indexes cur in place of old (either may be nil).
func (o owners) replace(old, cur *Item) {
	if old != nil {
		ownerKeys(old, func(k ownerKey) {
			set := o[k]
			delete(set, old.Key.Name)
			if len(set) == 0 {
				delete(o, k)
			}
		})
	}
	if cur != nil {
		ownerKeys(cur, func(k ownerKey) {
			set := o[k]
			if set == nil {
				set = make(map[string]*Item)
				o[k] = set
			}
			set[cur.Key.Name] = cur
		})
	}
}

// indexOwners builds the index of the current objects.
func indexOwners(latest map[Key]*Item) owners {
	o := make(owners)
	for _, it := range latest {
		o.replace(nil, it)
	}
	return o
}

// Related returns, each once and in name order, the current objects of resource in
// namespace that a controller with uid may own or whose names it may take: those with
// an owner reference to uid (controller or not), those with no controller, and those
// whose name begins with prefix (none when it is empty). They are read at one
// moment: the index's sets under the store's lock, with the snapshot of that moment,
// whose range of names is then walked outside the lock, as Snapshot's readers do.
// The range comes in order; of the sets, only the objects it does not hold (an
// adopted pod named otherwise, an orphan) are added and sorted in.
func (s *Store) Related(resource, namespace string, uid types.UID, prefix string) []*Item {
	var extra []*Item
	add := func(set map[string]*Item) {
		for name, it := range set {
			if prefix == "" || !strings.HasPrefix(name, prefix) {
				extra = append(extra, it)
			}
		}
	}
	s.mu.Lock()
	sn := s.snapshotLocked(resource, s.rev.Load(), false)
	add(s.owners[ownerKey{resource, namespace, uid}])
	if uid != "" {
		add(s.owners[ownerKey{resource, namespace, ""}])
	}
	s.mu.Unlock()
	var out []*Item
	if sn.tree != nil && prefix != "" {
		sn.tree.AscendGreaterOrEqual(&Item{Key: Key{Namespace: namespace, Name: prefix}}, func(it *Item) bool {
			if it.Key.Namespace != namespace || !strings.HasPrefix(it.Key.Name, prefix) {
				return false
			}
			out = append(out, it)
			return true
		})
	}
	if len(extra) == 0 {
		return out
	}
	out = append(out, extra...)
	slices.SortFunc(out, func(a, b *Item) int { return strings.Compare(a.Key.Name, b.Key.Name) })
	return slices.CompactFunc(out, func(a, b *Item) bool { return a == b })
}
