package scheduler

import (
	"encoding/json"
	"fmt"
)

// DecisionAnnotation is the pod annotation, written with the binding, that explains
// the decision: the winner, its score and per-priority breakdown, how many nodes were
// feasible, the rejections by reason and the best candidates.
const DecisionAnnotation = "scheduler.kubeactor.io/decision"

// Record is a decision as the pod's DecisionAnnotation keeps it.
type Record struct {
	Node       string          `json:"node"`
	Score      float64         `json:"score"`
	Ties       int             `json:"ties,omitempty"`
	Feasible   int             `json:"feasible"`
	Nodes      int             `json:"nodes"`
	Priorities []PriorityScore `json:"priorities,omitempty"` // the winner's scores
	Rejected   map[string]int  `json:"rejected,omitempty"`   // reason -> nodes
	Top        []ScoredNode    `json:"top,omitempty"`        // best candidates
}

// ScoredNode is a candidate node and its total score.
type ScoredNode struct {
	Node  string  `json:"node"`
	Score float64 `json:"score"`
}

// EncodeDecision returns the DecisionAnnotation value of d, whose winner scored
// winnerScores (Policy.Explain's Scores).
func EncodeDecision(d Decision, winnerScores []PriorityScore) string {
	rec := Record{Node: d.Node, Score: d.Score, Ties: d.Ties, Feasible: d.Feasible, Nodes: d.Nodes,
		Priorities: winnerScores, Rejected: d.Reasons, Top: make([]ScoredNode, len(d.Top))}
	for i, b := range d.Top {
		rec.Top[i] = ScoredNode{Node: b.Node, Score: b.Score}
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return "" // cannot happen: plain values
	}
	return string(data)
}

// DecodeDecision reads a DecisionAnnotation value.
func DecodeDecision(s string) (Record, error) {
	var rec Record
	if err := json.Unmarshal([]byte(s), &rec); err != nil {
		return Record{}, fmt.Errorf("scheduler: decode decision: %w", err)
	}
	return rec, nil
}
