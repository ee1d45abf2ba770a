package replication

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestSlotNames(t *testing.T) {
	for _, uid := range []types.UID{"", "uid-rc-web", "6f1c2a8e-0000-4000-8000-000000000001"} {
		seen := map[string]bool{}
		for _, n := range []int{0, 1, 2, 3, 26, 27, 1000, 99999, slotSpace - 1} {
			s := SlotName(uid, n)
			if len(s) != 5 || seen[s] {
				t.Errorf("uid %q slot %d: suffix %q (len 5, unique)", uid, n, s)
			}
			seen[s] = true
			if back := SlotOf(uid, s); back != n {
				t.Errorf("uid %q: SlotOf(SlotName(%d)) = %d", uid, n, back)
			}
		}
	}
	for _, bad := range []string{"", "abcd", "abcdef", "aaaaa", "WEB01"} {
		if n := SlotOf("u", bad); n != -1 {
			t.Errorf("SlotOf(%q) = %d, want -1", bad, n)
		}
	}
	if SlotName("a", 0) == SlotName("b", 0) && SlotName("a", 1) == SlotName("b", 1) {
		t.Error("two RCs name their slots alike")
	}
}

func TestSlotsHandOut(t *testing.T) {
	rc := &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "u1"}}
	pod := func(name string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
	}
	slot := func(n int) string { return "web-" + SlotName("u1", n) }
	tests := []struct {
		name   string
		pods   []*corev1.Pod
		exp    Expectations
		cursor int
		want   []string
		next   int
	}{
		{"fresh", nil, Expectations{}, 0, []string{slot(0), slot(1)}, 2},
		{"the lowest free slots from the cursor", []*corev1.Pod{pod(slot(0)), pod(slot(2))}, Expectations{}, 0, []string{slot(1), slot(3)}, 4},
		{"a deleted slot is not reused while the cursor is above it", []*corev1.Pod{pod(slot(0))}, Expectations{}, 3, []string{slot(3)}, 4},
		{"expected creates are skipped", nil, Expectations{Creates: []string{slot(0)}}, 0, []string{slot(1)}, 2},
		{"pods named otherwise are ignored", []*corev1.Pod{pod("web-manual"), pod("other-" + SlotName("u1", 7))}, Expectations{}, 0, []string{slot(0)}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewSlots(rc, tt.pods, tt.exp, tt.cursor)
			var got []string
			for range tt.want {
				got = append(got, "web-"+s.Suffix())
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) || s.Next() != tt.next {
				t.Errorf("names %v next %d, want %v next %d", got, s.Next(), tt.want, tt.next)
			}
		})
	}
}
