package scheduler

import (
	"reflect"
	"testing"
)

func TestDecisionRecord(t *testing.T) {
	scores := []PriorityScore{{Name: "LeastRequestedPriority", Weight: 1, Score: 7}}
	tests := []struct {
		name   string
		d      Decision
		scores []PriorityScore
		want   string
		rec    Record
	}{
		{
			name:   "winner with candidates and rejections",
			d:      Decision{Pod: "default/web", Node: "n1", Score: 7, Ties: 2, Nodes: 3, Feasible: 2, Reasons: map[string]int{"Insufficient cpu": 1}, Top: []Bid{{Node: "n1", Fits: true, Score: 7}, {Node: "n2", Fits: true, Score: 7}}},
			scores: scores,
			want:   `{"node":"n1","score":7,"ties":2,"feasible":2,"nodes":3,"priorities":[{"name":"LeastRequestedPriority","weight":1,"score":7}],"rejected":{"Insufficient cpu":1},"top":[{"node":"n1","score":7},{"node":"n2","score":7}]}`,
			rec:    Record{Node: "n1", Score: 7, Ties: 2, Feasible: 2, Nodes: 3, Priorities: scores, Rejected: map[string]int{"Insufficient cpu": 1}, Top: []ScoredNode{{"n1", 7}, {"n2", 7}}},
		},
		{
			name: "bare",
			d:    Decision{Node: "n1", Nodes: 1, Feasible: 1},
			want: `{"node":"n1","score":0,"feasible":1,"nodes":1}`,
			rec:  Record{Node: "n1", Nodes: 1, Feasible: 1, Top: []ScoredNode{}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := EncodeDecision(tc.d, tc.scores)
			if got != tc.want {
				t.Fatalf("EncodeDecision = %s, want %s", got, tc.want)
			}
			rec, err := DecodeDecision(got)
			if err != nil {
				t.Fatalf("DecodeDecision: %v", err)
			}
			if len(rec.Top) == 0 {
				rec.Top = []ScoredNode{}
			}
			if !reflect.DeepEqual(rec, tc.rec) {
				t.Fatalf("decoded %+v, want %+v", rec, tc.rec)
			}
		})
	}
	if _, err := DecodeDecision("{"); err == nil {
		t.Fatal("DecodeDecision of bad JSON: no error")
	}
}
