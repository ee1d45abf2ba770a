package proxy

import (
	"slices"
	"strings"
)

// ownedChains are the fixed chains of both modes; KUBE-SVC-* and KUBE-SEP-* chains
// are owned too. Chains the proxy owns but does not want are deleted.
var ownedChains = map[string]bool{
	chainServices: true, chainNodePorts: true, chainMarkMasq: true, chainPostrouting: true,
	chainPortalsContainer: true, chainPortalsHost: true, chainNodePortContainer: true, chainNodePortHost: true,
}

func owned(chain string) bool {
	return ownedChains[chain] || strings.HasPrefix(chain, "KUBE-SVC-") || strings.HasPrefix(chain, "KUBE-SEP-")
}

// tableState is one table as the applier knows it: every owned chain in the kernel
// with its rules as iptables-save prints them ("-A chain args"), and the rules of the
// built-in chains the proxy jumps from.
type tableState struct {
	owned    map[string][]string
	builtins map[string][]string
}

// tablePlan is what one apply changes in one table, in the order it must happen:
// Write chains are created or flushed, JumpsDeleted and JumpsAdded fix the built-in
// chains (one entry per rule to delete or add), then Write chains are refilled and
// Delete chains (owned, unwanted) are flushed and deleted.
type tablePlan struct {
	Table        string
	Write        []Chain
	Lines        [][]string // the rendered rules of each Write chain
	JumpsDeleted []Jump
	JumpsAdded   []Jump
	Delete       []string
}

func (p tablePlan) empty() bool {
	return len(p.Write) == 0 && len(p.JumpsDeleted) == 0 && len(p.JumpsAdded) == 0 && len(p.Delete) == 0
}

// planTable compares the wanted ruleset with the table's state. Pure.
func planTable(table string, rs Ruleset, st tableState) tablePlan {
	p := tablePlan{Table: table}
	want := map[string]bool{}
	for _, c := range rs.Chains {
		if c.Table != table {
			continue
		}
		want[c.Name] = true
		lines := renderChain(c)
		if cur, ok := st.owned[c.Name]; ok && slices.Equal(cur, lines) {
			continue
		}
		p.Write = append(p.Write, c)
		p.Lines = append(p.Lines, lines)
	}
	// Jumps of both modes: ours that target a wanted chain exist exactly once.
	for _, j := range allJumps() {
		if j.Table != table {
			continue
		}
		line := renderRule(j.Chain, j.Rule)
		count := 0
		for _, l := range st.builtins[j.Chain] {
			if l == line {
				count++
			}
		}
		keep := 0
		if want[j.Rule[len(j.Rule)-1]] && wantsJump(rs, j) {
			keep = 1
		}
		for ; count > keep; count-- {
			p.JumpsDeleted = append(p.JumpsDeleted, j)
		}
		if count < keep {
			p.JumpsAdded = append(p.JumpsAdded, j)
		}
	}
	for name := range st.owned {
		if !want[name] {
			p.Delete = append(p.Delete, name)
		}
	}
	slices.Sort(p.Delete)
	return p
}

// renderChain is the chain's rules as iptables-save prints them.
func renderChain(c Chain) []string {
	out := make([]string, len(c.Rules))
	for i, r := range c.Rules {
		out[i] = renderRule(c.Name, r)
	}
	return out
}

// bigTransaction is the number of chains from which a restore input lists the
// table first (see restoreInputs).
const bigTransaction = 64

// restoreInputs renders a plan as iptables-restore --noflush transactions: a chain
// declaration creates or flushes the chain and moves nothing else. With keepStale,
// the unwanted chains are flushed but not deleted (for when something else still
// jumps to one of them).
//
// A big plan starts with "-S": iptables-nft 1.8 keeps every chain a transaction
// names in a sorted list, at a cost per rule that grows with the number of chains
// (10 s for 11,000 chains and 33,000 rules), unless one command names no chain, when
// it reads the whole table once instead. "-S" is the only such command that changes
// nothing; the caller discards what it prints. As iptables-nft then does not create
// a built-in chain that is not in the kernel yet, the jumps a big plan adds go in a
// second transaction, after the chains they lead to are complete.
func restoreInputs(p tablePlan, keepStale bool) [][]byte {
	big := len(p.Write)+len(p.Delete) >= bigTransaction
	if !big || len(p.JumpsAdded) == 0 {
		return [][]byte{restoreInput(p, keepStale, big)}
	}
	hooks := tablePlan{Table: p.Table, JumpsAdded: p.JumpsAdded}
	p.JumpsAdded = nil
	return [][]byte{restoreInput(p, keepStale, true), restoreInput(hooks, false, false)}
}

func restoreInput(p tablePlan, keepStale, listFirst bool) []byte {
	var b strings.Builder
	b.WriteString("*" + p.Table + "\n")
	if listFirst {
		b.WriteString("-S\n")
	}
	for _, c := range p.Write {
		b.WriteString(":" + c.Name + " - [0:0]\n")
	}
	for _, c := range p.Delete {
		b.WriteString(":" + c + " - [0:0]\n")
	}
	for _, j := range p.JumpsDeleted {
		b.WriteString("-D" + renderRule(j.Chain, j.Rule)[2:] + "\n")
	}
	for _, j := range p.JumpsAdded {
		if j.First {
			b.WriteString("-I " + j.Chain + " 1" + renderRule(j.Chain, j.Rule)[3+len(j.Chain):] + "\n")
		} else {
			b.WriteString(renderRule(j.Chain, j.Rule) + "\n")
		}
	}
	for _, lines := range p.Lines {
		for _, l := range lines {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	if !keepStale {
		for _, c := range p.Delete {
			b.WriteString("-X " + c + "\n")
		}
	}
	b.WriteString("COMMIT\n")
	return []byte(b.String())
}

// parseSave reads iptables-save output into the state of the named tables: owned
// chains with their rules, and the rules of the built-in chains of allJumps.
func parseSave(out string, tables ...string) map[string]tableState {
	states := map[string]tableState{}
	builtin := map[string]bool{}
	for _, j := range allJumps() {
		builtin[j.Table+"/"+j.Chain] = true
	}
	var cur *tableState
	var table string
	for line := range strings.Lines(out) {
		line = strings.TrimRight(line, "\r\n")
		switch {
		case strings.HasPrefix(line, "*"):
			table = line[1:]
			cur = nil
			if slices.Contains(tables, table) {
				st := tableState{owned: map[string][]string{}, builtins: map[string][]string{}}
				states[table] = st
				cur = &st
			}
		case cur == nil:
		case strings.HasPrefix(line, ":"):
			name, _, _ := strings.Cut(line[1:], " ")
			if owned(name) {
				cur.owned[name] = []string{}
			}
		case strings.HasPrefix(line, "-A "):
			name, _, _ := strings.Cut(line[3:], " ")
			if _, ok := cur.owned[name]; ok {
				cur.owned[name] = append(cur.owned[name], line)
			} else if builtin[table+"/"+name] {
				cur.builtins[name] = append(cur.builtins[name], line)
			}
		}
	}
	return states
}

// saveCommand names the iptables-save next to an iptables-restore binary.
func saveCommand(restore string) string {
	dir, base := "", restore
	if i := strings.LastIndexByte(restore, '/'); i >= 0 {
		dir, base = restore[:i+1], restore[i+1:]
	}
	if i := strings.LastIndex(base, "restore"); i >= 0 {
		return dir + base[:i] + "save" + base[i+len("restore"):]
	}
	return ""
}
