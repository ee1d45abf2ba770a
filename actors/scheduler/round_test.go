package scheduler

import (
	"maps"
	"reflect"
	"testing"

	st "github.com/kubeactor/kubeactor/actors/scheduler/schedtest"
)

func TestRound(t *testing.T) {
	pod := st.NewPod("web").Obj()
	a := Decision{Pod: "default/web", Node: "a", Score: 5, Ties: 1, Nodes: 2, Feasible: 1, Reasons: map[string]int{"Insufficient cpu": 1}}
	b := Decision{Pod: "default/web", Node: "b", Score: 7, Ties: 1, Nodes: 1, Feasible: 1}
	none := Decision{Pod: "default/web", Nodes: 1, Reasons: map[string]int{"Insufficient cpu": 1}}
	type answer struct {
		seq   uint64
		shard int
		d     Decision
	}
	tests := []struct {
		name    string
		shards  int
		answers []answer
		done    []bool // per answer
		want    Decision
	}{
		{name: "one shard", shards: 1, answers: []answer{{1, 0, a}}, done: []bool{true},
			want: a},
		{name: "best score across shards", shards: 2, answers: []answer{{1, 1, b}, {1, 0, a}}, done: []bool{false, true},
			want: Decision{Pod: "default/web", Node: "b", Score: 7, Ties: 1, Nodes: 3, Feasible: 2, Reasons: map[string]int{"Insufficient cpu": 1}}},
		{name: "no node fits", shards: 2, answers: []answer{{1, 0, none}, {1, 1, none}}, done: []bool{false, true},
			want: Decision{Pod: "default/web", Nodes: 2, Reasons: map[string]int{"Insufficient cpu": 2}}},
		{name: "another round's answer is ignored", shards: 2, answers: []answer{{0, 0, b}, {1, 0, a}, {1, 1, none}}, done: []bool{false, false, true},
			want: Decision{Pod: "default/web", Node: "a", Score: 5, Ties: 1, Nodes: 3, Feasible: 1, Reasons: map[string]int{"Insufficient cpu": 2}}},
		{name: "a shard answers once", shards: 2, answers: []answer{{1, 0, a}, {1, 0, b}, {1, 7, b}, {1, 1, none}}, done: []bool{false, false, false, true},
			want: Decision{Pod: "default/web", Node: "a", Score: 5, Ties: 1, Nodes: 3, Feasible: 1, Reasons: map[string]int{"Insufficient cpu": 2}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRound(1, "default/web", pod, 42, nil, tc.shards)
			for i, ans := range tc.answers {
				// Each answer is a copy: Merge may reuse the first decision's maps.
				d := ans.d
				d.Reasons = maps.Clone(ans.d.Reasons)
				if got := r.Answer(ans.seq, ans.shard, d); got != tc.done[i] {
					t.Fatalf("answer %d: done %v, want %v", i, got, tc.done[i])
				}
			}
			if got := r.Decision(func(int) int { return 0 }); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("decision %+v, want %+v", got, tc.want)
			}
			if r.Answer(1, 0, a) {
				t.Fatal("an answer after the last one ends the round again")
			}
		})
	}
}
