package replication

import (
	"hash/fnv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Pod names from slots. An RC names its new pods <rc>-<suffix>, where the suffix
// is Kubernetes' 5 characters but not drawn at random: it encodes a slot number,
// scrambled by the RC's uid so that the names look as usual. Slots are handed out
// from a cursor above every slot in use, so a replacement pod gets a new name, and
// two syncs that see the same pods (one RC's actor activated on two master replicas
// at once, while their views of the members differ) name their creates alike: the
// second create of a name fails with AlreadyExists instead of making an extra pod.

// nameAlphabet is the alphabet of Kubernetes' generated name suffixes (no vowels,
// no look-alike digits).
const nameAlphabet = "bcdfghjklmnpqrstvwxz2456789"

// slotSpace is the number of 5-character suffixes: slots are taken modulo it.
const slotSpace = 27 * 27 * 27 * 27 * 27

// slotMul scrambles consecutive slots (coprime with slotSpace, a power of 3);
// slotMulInv is its inverse modulo slotSpace.
const (
	slotMul    = 5_000_011
	slotMulInv = 4_838_260
)

func slotKey(uid types.UID) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(uid))
	return h.Sum64() % slotSpace
}

// SlotName is the suffix of slot n of the RC with uid.
func SlotName(uid types.UID, n int) string {
	v := (uint64(n)%slotSpace*slotMul + slotKey(uid)) % slotSpace
	b := make([]byte, 5)
	for i := range b {
		b[i] = nameAlphabet[v%27]
		v /= 27
	}
	return string(b)
}

// SlotOf is the slot whose suffix is suffix for the RC with uid, or -1 when suffix
// is not one (another length or alphabet: a pod named by hand, or adopted).
func SlotOf(uid types.UID, suffix string) int {
	if len(suffix) != 5 {
		return -1
	}
	v, mul := uint64(0), uint64(1)
	for i := range 5 {
		d := strings.IndexByte(nameAlphabet, suffix[i])
		if d < 0 {
			return -1
		}
		v += uint64(d) * mul
		mul *= 27
	}
	return int((v + slotSpace - slotKey(uid)) % slotSpace * slotMulInv % slotSpace)
}

// Slots hands out the suffixes of an RC's new pods: from cursor, or from above the
// highest slot of the RC's pods if that is higher, skipping the names of pods that
// exist or are expected. Next returns the cursor after the last suffix handed out.
type Slots struct {
	uid    types.UID
	prefix string
	next   int
	taken  map[string]bool
}

// NewSlots starts handing out slots of rc at cursor or above its pods' slots.
func NewSlots(rc *corev1.ReplicationController, pods []*corev1.Pod, exp Expectations, cursor int) *Slots {
	s := &Slots{uid: rc.UID, prefix: rc.Name + "-", next: cursor, taken: make(map[string]bool, len(pods)+len(exp.Creates))}
	for _, p := range pods {
		if p.Namespace != rc.Namespace {
			continue
		}
		s.taken[p.Name] = true
		if suffix, ok := strings.CutPrefix(p.Name, s.prefix); ok {
			if n := SlotOf(rc.UID, suffix); n >= s.next {
				s.next = n + 1
			}
		}
	}
	for _, n := range exp.Creates {
		s.taken[n] = true
	}
	return s
}

// Suffix is the next free suffix (a Suffix for Decide).
func (s *Slots) Suffix() string {
	for {
		suffix := SlotName(s.uid, s.next)
		s.next++
		if !s.taken[s.prefix+suffix] {
			s.taken[s.prefix+suffix] = true
			return suffix
		}
	}
}

// Next is the cursor after the last slot handed out.
func (s *Slots) Next() int { return s.next }
