package config

import (
	"strings"
	"testing"
	"time"
)

func TestReplicaFlags(t *testing.T) {
	tests := []struct {
		name     string
		replica  Replica
		wantErr  string
		peer     string
		clusterN int
	}{
		{name: "store of one", replica: Replica{Name: "m1"}},
		{name: "store of one, odd host name is fine", replica: Replica{Name: "Host_Name"}},
		{name: "peer address alone", replica: Replica{Name: "m1", PeerAddress: "127.0.0.1:2380"}, wantErr: "--peer-address needs"},
		{name: "new cluster", replica: Replica{Name: "m2", InitialCluster: "m1=127.0.0.1:2380, m2=127.0.0.1:2381,m3=127.0.0.1:2382"},
			peer: "127.0.0.1:2381", clusterN: 3},
		{name: "new cluster, matching peer address", replica: Replica{Name: "m1", PeerAddress: "10.0.0.1:2380", InitialCluster: "m1=10.0.0.1:2380"},
			peer: "10.0.0.1:2380", clusterN: 1},
		{name: "peer address differs", replica: Replica{Name: "m1", PeerAddress: "10.0.0.1:2390", InitialCluster: "m1=10.0.0.1:2380"}, wantErr: "differs"},
		{name: "not named", replica: Replica{Name: "m9", InitialCluster: "m1=127.0.0.1:2380"}, wantErr: "does not name this replica"},
		{name: "no equals", replica: Replica{Name: "m1", InitialCluster: "m1=127.0.0.1:2380,m2"}, wantErr: "want name=host:port"},
		{name: "no port", replica: Replica{Name: "m1", InitialCluster: "m1=127.0.0.1"}, wantErr: "host:port"},
		{name: "bad port", replica: Replica{Name: "m1", InitialCluster: "m1=127.0.0.1:99999"}, wantErr: "port"},
		{name: "bad name", replica: Replica{Name: "m1", InitialCluster: "m1=127.0.0.1:1,M_2=127.0.0.1:2"}, wantErr: "name \"M_2\""},
		{name: "name twice", replica: Replica{Name: "m1", InitialCluster: "m1=127.0.0.1:1,m1=127.0.0.1:2"}, wantErr: "named twice"},
		{name: "address twice", replica: Replica{Name: "m1", InitialCluster: "m1=127.0.0.1:1,m2=127.0.0.1:1"}, wantErr: "same address"},
		{name: "empty list", replica: Replica{Name: "m1", InitialCluster: " , "}, wantErr: "names no member"},
		{name: "bad replica name when clustering", replica: Replica{Name: "Host_Name", Join: "http://127.0.0.1:2380"}, wantErr: "--name"},
		{name: "join", replica: Replica{Name: "m4", Join: "http://127.0.0.1:2380"}, peer: DefaultPeerAddress},
		{name: "join with peer address", replica: Replica{Name: "m4", Join: "http://127.0.0.1:2380", PeerAddress: "127.0.0.1:2384"}, peer: "127.0.0.1:2384"},
		{name: "join not a URL", replica: Replica{Name: "m4", Join: "127.0.0.1:2380"}, wantErr: "--join"},
		{name: "join and initial cluster", replica: Replica{Name: "m1", Join: "http://127.0.0.1:2380", InitialCluster: "m1=127.0.0.1:2381"}, wantErr: "one of them"},
		{name: "snapshot flags", replica: Replica{Name: "m1", InitialCluster: "m1=127.0.0.1:2380", SnapshotCount: 100, TrailingLogs: 10, SnapshotInterval: time.Second},
			peer: "127.0.0.1:2380", clusterN: 1},
		{name: "negative snapshot interval", replica: Replica{Name: "m1", InitialCluster: "m1=127.0.0.1:2380", SnapshotInterval: -time.Second}, wantErr: "--snapshot-interval"},
		{name: "state", replica: Replica{Name: "m1", InitialClusterState: "old"}, wantErr: "--initial-cluster-state"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := validServer()
			s.Replica = tc.replica
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
			if s.PeerAddress != tc.peer || len(s.Cluster) != tc.clusterN {
				t.Errorf("peer %q cluster %v, want %q and %d members", s.PeerAddress, s.Cluster, tc.peer, tc.clusterN)
			}
		})
	}
}

func TestReplicaNameDefaultsToHostName(t *testing.T) {
	s := validServer()
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	if s.Name == "" {
		t.Errorf("--name has no default")
	}
}
