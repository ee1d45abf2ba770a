package proxy

import (
	"strings"
	"testing"
)

func TestPlanAndRestoreInput(t *testing.T) {
	svc := Chain{Table: TableNAT, Name: chainServices, Rules: []Rule{{"-j", "KUBE-SVC-A"}}}
	sep := Chain{Table: TableNAT, Name: "KUBE-SVC-A", Rules: []Rule{{"-j", "ACCEPT"}}}
	rs := Ruleset{Chains: []Chain{svc, sep}, Jumps: iptablesJumps[:1]}
	jump := renderRule("PREROUTING", iptablesJumps[0].Rule)
	portal := renderRule("PREROUTING", userspaceJumps[0].Rule)
	tests := []struct {
		name  string
		save  string
		want  []string // the transactions, lines joined by "|"
		empty bool
	}{
		{name: "empty kernel", save: "*nat\n:PREROUTING ACCEPT [0:0]\nCOMMIT\n",
			want: []string{"*nat|:KUBE-SERVICES - [0:0]|:KUBE-SVC-A - [0:0]|-I PREROUTING 1 -m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES|-A KUBE-SERVICES -j KUBE-SVC-A|-A KUBE-SVC-A -j ACCEPT|COMMIT|"}},
		{name: "up to date", empty: true,
			save: "*nat\n:KUBE-SERVICES - [0:0]\n:KUBE-SVC-A - [0:0]\n" + jump + "\n-A KUBE-SERVICES -j KUBE-SVC-A\n-A KUBE-SVC-A -j ACCEPT\nCOMMIT\n"},
		{name: "stale chain, duplicate jump, other mode's jump, foreign chain kept",
			save: "*nat\n:FOREIGN - [0:0]\n:KUBE-SERVICES - [0:0]\n:KUBE-SVC-A - [0:0]\n:KUBE-SEP-OLD - [0:0]\n:KUBE-PORTALS-CONTAINER - [0:0]\n" +
				jump + "\n" + jump + "\n" + portal + "\n-A KUBE-SERVICES -j KUBE-SVC-A\n-A KUBE-SVC-A -j ACCEPT\n-A KUBE-SEP-OLD -j ACCEPT\nCOMMIT\n",
			want: []string{"*nat|:KUBE-PORTALS-CONTAINER - [0:0]|:KUBE-SEP-OLD - [0:0]|-D" + jump[2:] + "|-D" + portal[2:] + "|-X KUBE-PORTALS-CONTAINER|-X KUBE-SEP-OLD|COMMIT|"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := planTable(TableNAT, rs, parseSave(tt.save, TableNAT)[TableNAT])
			if p.empty() != tt.empty {
				t.Fatalf("empty = %v, want %v: %+v", p.empty(), tt.empty, p)
			}
			var got []string
			for _, in := range restoreInputs(p, false) {
				got = append(got, strings.ReplaceAll(string(in), "\n", "|"))
			}
			if !tt.empty && strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("restore input:\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(tt.want, "\n     "))
			}
		})
	}
}

func TestRestoreInputsBigPlan(t *testing.T) {
	p := tablePlan{Table: TableNAT, JumpsAdded: iptablesJumps[:1]}
	for range bigTransaction {
		p.Write = append(p.Write, Chain{Table: TableNAT, Name: "KUBE-SEP-X"})
		p.Lines = append(p.Lines, nil)
	}
	ins := restoreInputs(p, false)
	if len(ins) != 2 || !strings.HasPrefix(string(ins[0]), "*nat\n-S\n") || strings.Contains(string(ins[0]), "-I ") ||
		!strings.Contains(string(ins[1]), "-I PREROUTING 1 ") || strings.Contains(string(ins[1]), "-S\n") {
		t.Errorf("want a listed transaction of chains then one of jumps, got %q", ins)
	}
}

func TestSaveCommand(t *testing.T) {
	tests := []struct{ restore, want string }{
		{"/usr/sbin/iptables-restore", "/usr/sbin/iptables-save"},
		{"iptables-nft-restore", "iptables-nft-save"},
		{"/opt/bin/ipt", ""},
	}
	for _, tt := range tests {
		t.Run(tt.restore, func(t *testing.T) {
			if got := saveCommand(tt.restore); got != tt.want {
				t.Errorf("saveCommand(%q) = %q, want %q", tt.restore, got, tt.want)
			}
		})
	}
}
