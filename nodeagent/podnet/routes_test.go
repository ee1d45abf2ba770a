package podnet

import (
	"net/netip"
	"slices"
	"testing"
)

func TestPlanRoutes(t *testing.T) {
	own := netip.MustParsePrefix("10.244.1.0/24")
	h := func(dst, via string) hop {
		return hop{Dst: netip.MustParsePrefix(dst), Via: netip.MustParseAddr(via)}
	}
	tests := []struct {
		name        string
		want        []Route
		installed   []hop
		wantReplace []hop
		wantDelete  []hop
		wantSkipped int
	}{
		{
			name:        "fresh node: one route per other node, own CIDR skipped",
			want:        []Route{{"10.244.1.0/24", "192.168.250.1"}, {"10.244.3.0/24", "192.168.250.3"}, {"10.244.2.0/24", "192.168.250.2"}},
			wantReplace: []hop{h("10.244.2.0/24", "192.168.250.2"), h("10.244.3.0/24", "192.168.250.3")},
		},
		{
			name:      "in sync: nothing to do",
			want:      []Route{{"10.244.2.0/24", "192.168.250.2"}},
			installed: []hop{h("10.244.2.0/24", "192.168.250.2")},
		},
		{
			name:        "a node changed its IP: replace",
			want:        []Route{{"10.244.2.0/24", "192.168.250.20"}},
			installed:   []hop{h("10.244.2.0/24", "192.168.250.2")},
			wantReplace: []hop{h("10.244.2.0/24", "192.168.250.20")},
		},
		{
			name:       "a node is gone: delete its route",
			want:       []Route{{"10.244.2.0/24", "192.168.250.2"}},
			installed:  []hop{h("10.244.2.0/24", "192.168.250.2"), h("10.244.3.0/24", "192.168.250.3")},
			wantDelete: []hop{h("10.244.3.0/24", "192.168.250.3")},
		},
		{
			name:       "no nodes: delete everything we installed",
			installed:  []hop{h("10.244.2.0/24", "192.168.250.2")},
			wantDelete: []hop{h("10.244.2.0/24", "192.168.250.2")},
		},
		{
			name: "nodes without a pod CIDR or an IP yet are skipped silently",
			want: []Route{{"", "192.168.250.2"}, {"10.244.3.0/24", ""}},
		},
		{
			name:        "malformed entries are skipped with a reason",
			want:        []Route{{"10.244.2.0", "192.168.250.2"}, {"10.244.3.0/24", "node-3"}, {"fd00::/64", "192.168.250.4"}, {"10.244.5.0/24", "192.168.250.5"}},
			wantReplace: []hop{h("10.244.5.0/24", "192.168.250.5")},
			wantSkipped: 3,
		},
		{
			name:        "a CIDR overlapping our own is skipped with a reason",
			want:        []Route{{"10.244.0.0/16", "192.168.250.9"}},
			wantSkipped: 1,
		},
		{
			name:        "a CIDR claimed by two nodes is skipped, and its old route removed",
			want:        []Route{{"10.244.2.0/24", "192.168.250.2"}, {"10.244.2.0/24", "192.168.250.3"}},
			installed:   []hop{h("10.244.2.0/24", "192.168.250.2")},
			wantDelete:  []hop{h("10.244.2.0/24", "192.168.250.2")},
			wantSkipped: 1,
		},
		{
			name:        "the same node twice is fine; host bits are masked",
			want:        []Route{{"10.244.2.0/24", "192.168.250.2"}, {"10.244.2.9/24", "192.168.250.2"}},
			wantReplace: []hop{h("10.244.2.0/24", "192.168.250.2")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := planRoutes(own, tt.want, tt.installed)
			if !slices.Equal(plan.Replace, tt.wantReplace) {
				t.Errorf("Replace = %v, want %v", plan.Replace, tt.wantReplace)
			}
			if !slices.Equal(plan.Delete, tt.wantDelete) {
				t.Errorf("Delete = %v, want %v", plan.Delete, tt.wantDelete)
			}
			if len(plan.Skipped) != tt.wantSkipped {
				t.Errorf("Skipped = %q, want %d reasons", plan.Skipped, tt.wantSkipped)
			}
		})
	}
}
