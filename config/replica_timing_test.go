package config

import (
	"strings"
	"testing"
	"time"
)

func TestReplicaTimingFlags(t *testing.T) {
	tests := []struct {
		name                string
		heartbeat, election int
		wantErr             string
		want                time.Duration
	}{
		{name: "defaults", want: 0},
		{name: "election timeout", election: 300, want: 300 * time.Millisecond},
		{name: "heartbeat alone: ten of them", heartbeat: 50, want: 500 * time.Millisecond},
		{name: "both", heartbeat: 100, election: 1000, want: time.Second},
		{name: "election under five heartbeats", heartbeat: 100, election: 400, wantErr: "five"},
		{name: "negative", election: -1, wantErr: "not negative"},
		{name: "too low", election: 5, wantErr: "at least 10"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := validServer()
			s.Replica = Replica{Name: "m1", InitialCluster: "m1=127.0.0.1:2380", HeartbeatInterval: tc.heartbeat, ElectionTimeout: tc.election}
			err := s.Validate()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := s.RaftElectionTimeout(); got != tc.want {
				t.Errorf("election timeout %v, want %v", got, tc.want)
			}
		})
	}
}
