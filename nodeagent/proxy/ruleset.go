package proxy

import (
	"strings"
)

// Tables the proxy writes to.
const (
	TableNAT    = "nat"
	TableFilter = "filter"
)

// Rule is the argument list of one rule after "-A <chain>", written in the order
// iptables-save prints it, so that it compares equal to what the kernel lists.
type Rule []string

// Chain is a chain the proxy owns and all its rules, in order.
type Chain struct {
	Table string
	Name  string
	Rules []Rule
}

// Jump is the proxy's one rule in a built-in chain. First rules are inserted at
// position 1; the others are appended.
type Jump struct {
	Table string
	Chain string
	Rule  Rule
	First bool
}

// Ruleset is everything the proxy wants in the kernel: its chains (the apply deletes
// owned chains not listed) and its jumps from the built-in chains.
type Ruleset struct {
	Chains []Chain
	Jumps  []Jump
}

// Save renders the ruleset like iptables-save: per table, the chain declarations,
// then the rules. Used by golden tests and for iptables-restore.
func (rs Ruleset) Save() string {
	var b strings.Builder
	for _, table := range []string{TableNAT, TableFilter} {
		var chains []Chain
		for _, c := range rs.Chains {
			if c.Table == table {
				chains = append(chains, c)
			}
		}
		var jumps []Jump
		for _, j := range rs.Jumps {
			if j.Table == table {
				jumps = append(jumps, j)
			}
		}
		if len(chains) == 0 && len(jumps) == 0 {
			continue
		}
		b.WriteString("*" + table + "\n")
		for _, c := range chains {
			b.WriteString(":" + c.Name + " - [0:0]\n")
		}
		for _, j := range jumps {
			pos := "last"
			if j.First {
				pos = "first"
			}
			b.WriteString("# " + pos + "\n" + renderRule(j.Chain, j.Rule) + "\n")
		}
		for _, c := range chains {
			for _, r := range c.Rules {
				b.WriteString(renderRule(c.Name, r) + "\n")
			}
		}
		b.WriteString("COMMIT\n")
	}
	return b.String()
}

// renderRule is the rule as "iptables -S" prints it: "-A chain args", with comment
// strings quoted the way iptables quotes them.
func renderRule(chain string, r Rule) string {
	var b strings.Builder
	b.WriteString("-A ")
	b.WriteString(chain)
	for i, a := range r {
		b.WriteByte(' ')
		if i > 0 && r[i-1] == "--comment" {
			b.WriteString(quoteSave(a))
			continue
		}
		b.WriteString(a)
	}
	return b.String()
}

// quoteSave quotes a string as iptables-save does: bare when it is only letters,
// digits, '_' and '-', else in double quotes with '"', '\' and '\” escaped.
func quoteSave(s string) string {
	bare := s != ""
	for _, c := range s {
		if !(c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			bare = false
			break
		}
	}
	if bare {
		return s
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '"' || c == '\\' || c == '\'' {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	b.WriteByte('"')
	return b.String()
}
