package proxy

import (
	"bytes"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"

	"github.com/coreos/go-iptables/iptables"
)

// ApplyStats counts what an apply changed; an apply of an unchanged ruleset counts 0.
type ApplyStats struct {
	ChainsWritten int // chains created or flushed and refilled
	RulesWritten  int
	ChainsDeleted int
	JumpsAdded    int
	JumpsDeleted  int
}

// Changed reports whether the apply changed anything in the kernel.
func (s ApplyStats) Changed() bool { return s != ApplyStats{} }

// Applier makes the kernel's owned chains equal a Ruleset. It remembers what it wrote,
// so an unchanged chain costs nothing; the first apply (and the first after Forget)
// compares with what the kernel holds, so a restarted agent rewrites nothing that is
// already right (and keeps the -m recent affinity state). Every apply lists the
// built-in chains again, to put back a jump someone removed. It never touches a rule
// in a built-in chain other than its jumps, nor a chain it does not own, nor conntrack.
type Applier struct {
	ipt *iptables.IPTables
	// restore, when set, is an iptables-restore binary: each apply is then one
	// atomic iptables-restore --noflush transaction per changed table, and save,
	// its iptables-save, reads the kernel on a first apply in one call.
	restore string
	save    string
	state   map[string]tableState // by table; nil: read the kernel on the next apply
}

// NewApplier returns an applier over ipt. restorePath may be empty (rules are then
// written one go-iptables call at a time).
func NewApplier(ipt *iptables.IPTables, restorePath string) *Applier {
	a := &Applier{ipt: ipt, restore: restorePath}
	if name := saveCommand(restorePath); restorePath != "" && name != "" {
		if p, err := exec.LookPath(name); err == nil {
			a.save = p
		}
	}
	return a
}

// Forget drops what the applier remembers: the next apply compares with the kernel.
func (a *Applier) Forget() { a.state = nil }

var applyTables = []string{TableNAT, TableFilter}

// Apply makes the kernel match rs. After an error the applier reads the kernel again
// on the next apply.
func (a *Applier) Apply(rs Ruleset) (ApplyStats, error) {
	var st ApplyStats
	if err := a.refresh(); err != nil {
		a.state = nil
		return st, err
	}
	for _, table := range applyTables {
		p := planTable(table, rs, a.state[table])
		if p.empty() {
			continue
		}
		if err := a.execute(p); err != nil {
			a.state = nil
			return st, err
		}
		owned := a.state[table].owned
		for i, c := range p.Write {
			owned[c.Name] = p.Lines[i]
			st.ChainsWritten++
			st.RulesWritten += len(c.Rules)
		}
		for _, c := range p.Delete {
			delete(owned, c)
		}
		st.ChainsDeleted += len(p.Delete)
		st.JumpsAdded += len(p.JumpsAdded)
		st.JumpsDeleted += len(p.JumpsDeleted)
	}
	return st, nil
}

// refresh reads the whole kernel state on a first apply, else the built-in chains.
func (a *Applier) refresh() error {
	if a.state == nil {
		states, err := a.readKernel()
		if err != nil {
			return err
		}
		a.state = states
		return nil
	}
	for _, table := range applyTables {
		builtins, err := a.listBuiltins(table)
		if err != nil {
			return err
		}
		st := a.state[table]
		st.builtins = builtins
		a.state[table] = st
	}
	return nil
}

// readKernel reads the owned and built-in chains of both tables: one iptables-save
// when there is one, else a go-iptables listing per chain.
func (a *Applier) readKernel() (map[string]tableState, error) {
	if a.save != "" {
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(a.save)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("iptables-save: %w: %s", err, strings.TrimSpace(stderr.String()))
		}
		states := parseSave(stdout.String(), applyTables...)
		for _, table := range applyTables {
			if _, ok := states[table]; !ok { // a table nothing has used yet
				states[table] = tableState{owned: map[string][]string{}, builtins: map[string][]string{}}
			}
		}
		return states, nil
	}
	states := map[string]tableState{}
	for _, table := range applyTables {
		chains, err := a.ipt.ListChains(table)
		if err != nil {
			return nil, fmt.Errorf("list %s chains: %w", table, err)
		}
		st := tableState{owned: map[string][]string{}}
		for _, c := range chains {
			if !owned(c) {
				continue
			}
			rules, err := a.list(table, c)
			if err != nil {
				return nil, err
			}
			st.owned[c] = rules
		}
		if st.builtins, err = a.listBuiltins(table); err != nil {
			return nil, err
		}
		states[table] = st
	}
	return states, nil
}

func (a *Applier) listBuiltins(table string) (map[string][]string, error) {
	out := map[string][]string{}
	for _, j := range allJumps() {
		if _, done := out[j.Chain]; done || j.Table != table {
			continue
		}
		rules, err := a.list(table, j.Chain)
		if err != nil {
			return nil, err
		}
		out[j.Chain] = rules
	}
	return out, nil
}

// list is a chain's "-A" lines.
func (a *Applier) list(table, chain string) ([]string, error) {
	lines, err := a.ipt.List(table, chain)
	if err != nil {
		return nil, fmt.Errorf("list %s %s: %w", table, chain, err)
	}
	rules := []string{}
	for _, l := range lines {
		if strings.HasPrefix(l, "-A ") {
			rules = append(rules, l)
		}
	}
	return rules, nil
}

// execute carries out a plan: one iptables-restore transaction, or go-iptables calls.
func (a *Applier) execute(p tablePlan) error {
	if a.restore == "" {
		return a.executeEach(p)
	}
	err := a.runRestore(restoreInputs(p, false))
	if err == nil || len(p.Delete) == 0 {
		return err
	}
	// Something else may still jump to a chain that is going: apply the rest.
	if err2 := a.runRestore(restoreInputs(p, true)); err2 != nil {
		return err2
	}
	return fmt.Errorf("delete %s chains %v: %w", p.Table, p.Delete, err)
}

// runRestore runs each transaction; a failed one is rolled back whole.
func (a *Applier) runRestore(inputs [][]byte) error {
	for _, in := range inputs {
		if err := a.restoreOne(in); err != nil {
			return err
		}
	}
	return nil
}

func (a *Applier) restoreOne(in []byte) error {
	var stderr bytes.Buffer
	cmd := exec.Command(a.restore, "-w", "--noflush")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(in), io.Discard, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("iptables-restore: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// executeEach carries out a plan one go-iptables call at a time.
func (a *Applier) executeEach(p tablePlan) error {
	t := p.Table
	// Create or flush every chain first: a refilled chain may jump to a new one.
	for _, c := range p.Write {
		if err := a.ipt.ClearChain(t, c.Name); err != nil {
			return fmt.Errorf("flush %s %s: %w", t, c.Name, err)
		}
	}
	for _, c := range p.Write {
		for _, r := range c.Rules {
			if err := a.ipt.Append(t, c.Name, r...); err != nil {
				return fmt.Errorf("append %s %s: %w", t, c.Name, err)
			}
		}
	}
	for _, j := range p.JumpsDeleted {
		if err := a.ipt.Delete(t, j.Chain, j.Rule...); err != nil {
			return fmt.Errorf("delete jump %s %s: %w", t, j.Chain, err)
		}
	}
	for _, j := range p.JumpsAdded {
		var err error
		if j.First {
			err = a.ipt.Insert(t, j.Chain, 1, j.Rule...)
		} else {
			err = a.ipt.Append(t, j.Chain, j.Rule...)
		}
		if err != nil {
			return fmt.Errorf("add jump %s %s: %w", t, j.Chain, err)
		}
	}
	// Flush the unwanted chains first (they may jump to each other), then delete.
	for _, c := range p.Delete {
		if err := a.ipt.ClearChain(t, c); err != nil {
			return fmt.Errorf("flush %s %s: %w", t, c, err)
		}
	}
	for _, c := range p.Delete {
		if err := a.ipt.DeleteChain(t, c); err != nil {
			return fmt.Errorf("delete %s %s: %w", t, c, err)
		}
	}
	return nil
}

// allJumps are the jumps of both modes: the ones not in the ruleset are removed.
func allJumps() []Jump {
	return append(append([]Jump(nil), iptablesJumps...), userspaceJumps...)
}

func wantsJump(rs Ruleset, j Jump) bool {
	for _, w := range rs.Jumps {
		if w.Table == j.Table && w.Chain == j.Chain && slices.Equal(w.Rule, j.Rule) {
			return true
		}
	}
	return false
}
