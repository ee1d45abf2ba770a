package podnet

import (
	"net/netip"
	"strings"
	"testing"
)

func TestFirewallRules(t *testing.T) {
	pod := netip.MustParsePrefix("10.244.1.0/24")
	tests := []struct {
		name       string
		cluster    string
		wantNAT    string // the one nat rule, joined; "" for none
		wantFilter int
	}{
		{name: "masquerade only what leaves the cluster", cluster: "10.244.0.0/16", wantNAT: "-s 10.244.1.0/24 ! -d 10.244.0.0/16", wantFilter: 2},
		{name: "no cluster CIDR: no masquerade", wantFilter: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var cluster netip.Prefix
			if tt.cluster != "" {
				cluster = netip.MustParsePrefix(tt.cluster)
			}
			got := firewallRules(pod, cluster)
			if len(got) != 2 || got[0].Table != "filter" || got[0].From != "FORWARD" || got[1].Table != "nat" || got[1].From != "POSTROUTING" {
				t.Fatalf("chains = %+v", got)
			}
			if len(got[0].Rules) != tt.wantFilter {
				t.Fatalf("filter rules = %q, want %d", got[0].Rules, tt.wantFilter)
			}
			switch {
			case tt.wantNAT == "" && len(got[1].Rules) != 0:
				t.Fatalf("nat rules = %q, want none", got[1].Rules)
			case tt.wantNAT != "" && (len(got[1].Rules) != 1 || !strings.HasPrefix(strings.Join(got[1].Rules[0], " "), tt.wantNAT)):
				t.Fatalf("nat rules = %q, want one starting %q", got[1].Rules, tt.wantNAT)
			}
		})
	}
}
