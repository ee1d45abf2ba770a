package replication

import (
	"hash/fnv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Pod names from slots. An RC names its new pods <rc>-<suffix>, where the suffix
// is Kubernetes' 5 characters but not drawn at random: it encodes a slot number,
// scrambled by the RC's uid so that the names look as usual. A sync hands out the
// lowest free slots from its actor's cursor, which starts at 0 and moves past every
// slot handed out, so a replacement pod gets a new name. Two actors of one RC
// (activated on two master replicas at once, while their views of the members
// differ) both start at 0: whatever part of the other's creates each one sees, the
// free slots it picks are the other's, so the second create of a name fails with
// AlreadyExists instead of making an extra pod. (Starting above the highest slot in
// use would not do: creates land out of order, and an actor that saw slot 45 but not
// slot 20 would name new pods from 46.)

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

// Slots hands out the suffixes of an RC's new pods: the lowest slots from cursor
// whose names no pod has and no create expects. Next returns the cursor after the
// last suffix handed out.
type Slots struct {
	uid    types.UID
	prefix string
	next   int
	taken  map[string]bool
}

// NewSlots starts handing out slots of rc at cursor.
func NewSlots(rc *corev1.ReplicationController, pods []*corev1.Pod, exp Expectations, cursor int) *Slots {
	s := &Slots{uid: rc.UID, prefix: rc.Name + "-", next: cursor, taken: make(map[string]bool)}
	for _, p := range pods {
		if p.Namespace == rc.Namespace && strings.HasPrefix(p.Name, s.prefix) { // no other name can be taken
			s.taken[p.Name] = true
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
