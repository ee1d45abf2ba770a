package cli

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/alecthomas/kong"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// completionCmd prints a completion script. The commands and their flags are read
// from the kong model; everything that depends on the cluster (resource types and
// names) the script asks for at completion time with the hidden __complete command.
type completionCmd struct {
	Shell string `arg:"" enum:"bash,zsh,fish" help:"The shell: bash, zsh or fish."`
}

func (c *completionCmd) Run(g *globals, k *kong.Context) error {
	cmds := visibleCommands(k.Model.Node)
	var script string
	switch c.Shell {
	case "bash":
		script = bashScript(cmds)
	case "zsh":
		script = zshScript(cmds)
	case "fish":
		script = fishScript(cmds)
	}
	_, err := io.WriteString(g.stdout, script)
	return err
}

// completeCmd prints the completions of the last word of a partial command line, one
// per line: `kubeactor __complete -- get pods we` lists the pods starting with "we".
type completeCmd struct {
	clientFlags
	Words []string `arg:"" optional:"" help:"The words of the command line after the program name; the last is the one being completed."`
}

func (c *completeCmd) Run(g *globals, k *kong.Context) error {
	plan := planCompletion(k.Model.Node, c.Words)
	cands := plan.Candidates
	if plan.Query != queryNone {
		cf := plan.clientFlags(c.clientFlags)
		found, err := cf.lookupCompletions(context.Background(), plan)
		if err != nil {
			return nil // completion prints nothing rather than an error
		}
		cands = append(cands, found...)
	}
	for _, s := range filterPrefix(cands, plan.Prefix) {
		fmt.Fprintln(g.stdout, s)
	}
	return nil
}

// completionQuery is what a completion needs from the cluster.
type completionQuery int

const (
	queryNone       completionQuery = iota
	queryTypes                      // resource types
	queryNames                      // names of objects of completionPlan.Resource
	queryTypedNames                 // TYPE/NAME for the type before the slash
	queryContexts                   // kubeconfig contexts
)

// completionPlan is the pure answer to a partial command line: fixed candidates
// and, when the cluster must be asked, the query.
type completionPlan struct {
	Prefix     string
	Candidates []string
	Query      completionQuery
	Resource   string            // a resource type as typed (po, pods, rc)
	FlagValues map[string]string // client flags found on the command line
}

// commands whose first argument is a resource type and the rest its names.
var typedCommands = map[string]bool{
	"get": true, "describe": true, "delete": true, "label": true, "annotate": true,
	"patch": true, "scale": true, "stop": true, "expose": true, "edit": true,
}

// commands whose arguments name objects of one resource.
var namedCommands = map[string]string{
	"logs": "pods", "exec": "pods", "port-forward": "pods", "attach": "pods",
	"cordon": "nodes", "uncordon": "nodes", "drain": "nodes",
	"rolling-update": "replicationcontrollers", "namespace": "namespaces",
}

// flag values completed from the cluster or from fixed lists.
var outputFormats = []string{"json", "yaml", "wide", "name", "jsonpath=", "custom-columns="}

// planCompletion reads words (the last being completed) against the model.
func planCompletion(app *kong.Node, words []string) completionPlan {
	words = joinEquals(normalizeFlags(words))
	plan := completionPlan{FlagValues: map[string]string{}}
	if len(words) == 0 {
		words = []string{""}
	}
	node := app
	var positional []string
	expecting := ""
	for _, w := range words[:len(words)-1] {
		if expecting != "" {
			plan.FlagValues[expecting] = w
			expecting = ""
			continue
		}
		if strings.HasPrefix(w, "-") && len(w) > 1 {
			name, value, has := strings.Cut(w, "=")
			f := findFlag(node, name)
			if f == nil || f.IsBool() || f.IsCounter() {
				continue
			}
			if has {
				plan.FlagValues[f.Name] = value
			} else {
				expecting = f.Name
			}
			continue
		}
		if len(positional) == 0 {
			if child := findChild(node, w); child != nil {
				node = child
				continue
			}
		}
		positional = append(positional, w)
	}
	last := words[len(words)-1]
	if name, value, has := strings.Cut(last, "="); has && strings.HasPrefix(last, "-") {
		if f := findFlag(node, name); f != nil {
			expecting, last = f.Name, value
		}
	}
	plan.Prefix = last
	switch {
	case expecting != "":
		plan.flagValue(expecting)
	case strings.HasPrefix(last, "-"):
		plan.Candidates = flagNames(node)
	case len(positional) == 0 && len(visibleCommands(node)) > 0:
		for _, c := range visibleCommands(node) {
			plan.Candidates = append(plan.Candidates, c.Name)
		}
	default:
		plan.arguments(node, positional)
	}
	return plan
}

func (p *completionPlan) flagValue(flag string) {
	switch flag {
	case "namespace":
		p.Query, p.Resource = queryNames, "namespaces"
	case "output":
		p.Candidates = outputFormats
	case "context":
		p.Query = queryContexts
	}
}

func (p *completionPlan) arguments(node *kong.Node, positional []string) {
	name := node.Name
	switch {
	case name == "completion" && len(positional) == 0:
		p.Candidates = []string{"bash", "zsh", "fish"}
	case (name == "use-context" || name == "delete-context" || name == "set-context") && len(positional) == 0:
		p.Query = queryContexts
	case namedCommands[name] != "":
		if len(positional) == 0 || name == "cordon" || name == "uncordon" || name == "drain" {
			p.Query, p.Resource = queryNames, namedCommands[name]
		}
	case typedCommands[name]:
		switch {
		case strings.Contains(p.Prefix, "/"):
			p.Query = queryTypedNames
			p.Resource, _, _ = strings.Cut(p.Prefix, "/")
		case len(positional) == 0:
			p.Query = queryTypes
		case !strings.Contains(positional[0], "/") && !strings.Contains(positional[0], ","):
			p.Query, p.Resource = queryNames, positional[0]
		}
	}
}

// clientFlags are the command's own client flags with those found in the words.
func (p completionPlan) clientFlags(cf clientFlags) clientFlags {
	set := map[string]*string{
		"server": &cf.Server, "kubeconfig": &cf.Kubeconfig, "context": &cf.Context,
		"cluster": &cf.Cluster, "user": &cf.User, "namespace": &cf.Namespace, "token": &cf.Token,
		"username": &cf.Username, "password": &cf.Password,
		"certificate-authority": &cf.CertificateAuthority,
		"client-certificate":    &cf.ClientCertificate, "client-key": &cf.ClientKey,
	}
	for k, v := range p.FlagValues {
		if dst, ok := set[k]; ok {
			*dst = v
		}
	}
	return cf
}

// lookupCompletions asks the kubeconfig or the server what plan needs.
func (f *clientFlags) lookupCompletions(ctx context.Context, plan completionPlan) ([]string, error) {
	if plan.Query == queryContexts {
		raw, err := f.clientConfig().RawConfig()
		if err != nil {
			return nil, err
		}
		var out []string
		for name := range raw.Contexts {
			out = append(out, name)
		}
		sort.Strings(out)
		return out, nil
	}
	cn, err := f.connect()
	if err != nil {
		return nil, err
	}
	types, err := cn.resourceTypes()
	if err != nil {
		return nil, err
	}
	if plan.Query == queryTypes {
		return typeNames(types), nil
	}
	r, err := types.lookup(plan.Resource)
	if err != nil {
		return nil, err
	}
	names, err := cn.objectNames(ctx, r)
	if err != nil {
		return nil, err
	}
	if plan.Query == queryTypedNames {
		for i := range names {
			names[i] = plan.Resource + "/" + names[i]
		}
	}
	return names, nil
}

// typeNames are the plural names of the resources (not subresources), sorted.
func typeNames(types resourceTypes) []string {
	var out []string
	for _, r := range types {
		if !strings.Contains(r.Name, "/") {
			out = append(out, r.Name)
		}
	}
	sort.Strings(out)
	return out
}

// objectNames lists the names of r's objects in the command's namespace.
func (cn *conn) objectNames(ctx context.Context, r metav1.APIResource) ([]string, error) {
	raw, err := doRaw(ctx, cn.request("GET", r, false, ""))
	if err != nil {
		return nil, err
	}
	list := &unstructured.UnstructuredList{}
	if err := list.UnmarshalJSON(raw); err != nil {
		return nil, fmt.Errorf("decode %s: %w", r.Name, err)
	}
	names := make([]string, 0, len(list.Items))
	for _, it := range list.Items {
		names = append(names, it.GetName())
	}
	sort.Strings(names)
	return names, nil
}

// joinEquals undoes bash's split of "--flag=value" into "--flag", "=", "value".
func joinEquals(words []string) []string {
	out := make([]string, 0, len(words))
	for i := 0; i < len(words); i++ {
		w := words[i]
		if w == "=" && len(out) > 0 && strings.HasPrefix(out[len(out)-1], "-") {
			out[len(out)-1] += "="
			if i+1 < len(words) {
				i++
				out[len(out)-1] += words[i]
			}
			continue
		}
		out = append(out, w)
	}
	return out
}

func filterPrefix(cands []string, prefix string) []string {
	var out []string
	for _, c := range cands {
		if strings.HasPrefix(c, prefix) {
			out = append(out, c)
		}
	}
	return out
}

// visibleCommands are node's subcommands that help lists.
func visibleCommands(node *kong.Node) []*kong.Node {
	var out []*kong.Node
	for _, c := range node.Children {
		if c.Type == kong.CommandNode && !c.Hidden {
			out = append(out, c)
		}
	}
	return out
}

func findChild(node *kong.Node, name string) *kong.Node {
	for _, c := range node.Children {
		if c.Type != kong.CommandNode {
			continue
		}
		if c.Name == name {
			return c
		}
		for _, a := range c.Aliases {
			if a == name {
				return c
			}
		}
	}
	return nil
}

// findFlag finds the flag spelled name (--long, an alias or -x) on node or above.
func findFlag(node *kong.Node, name string) *kong.Flag {
	for _, group := range node.AllFlags(false) {
		for _, f := range group {
			if "--"+f.Name == name || (f.Short != 0 && "-"+string(f.Short) == name) {
				return f
			}
			for _, a := range f.Aliases {
				if "--"+a == name {
					return f
				}
			}
		}
	}
	return nil
}

// flagNames are the long flags of node and its parents, as --name.
func flagNames(node *kong.Node) []string {
	var out []string
	for _, group := range node.AllFlags(true) {
		for _, f := range group {
			out = append(out, "--"+f.Name)
		}
	}
	sort.Strings(out)
	return out
}

// commandInfo is one command of a script: its path, help and flags.
type commandInfo struct {
	Path  string // "get", "config view"
	Help  string
	Flags []*kong.Flag
}

// commandTree lists every visible command under the given nodes, depth first.
func commandTree(nodes []*kong.Node) []commandInfo {
	var out []commandInfo
	var walk func(n *kong.Node, parent string)
	walk = func(n *kong.Node, parent string) {
		var flags []*kong.Flag
		for _, group := range n.AllFlags(true) {
			flags = append(flags, group...)
		}
		path := strings.TrimSpace(parent + " " + n.Name)
		out = append(out, commandInfo{Path: path, Help: n.Help, Flags: flags})
		for _, c := range visibleCommands(n) {
			walk(c, path)
		}
	}
	for _, n := range nodes {
		walk(n, "")
	}
	return out
}

func bashScript(cmds []*kong.Node) string {
	var b strings.Builder
	b.WriteString("# bash completion for kubeactor; load with: source <(kubeactor completion bash)\n")
	b.WriteString("_kubeactor_flags() {\n    case \"$1\" in\n")
	for _, c := range commandTree(cmds) {
		var names []string
		for _, f := range c.Flags {
			names = append(names, "--"+f.Name)
		}
		fmt.Fprintf(&b, "    %s) echo %s ;;\n", shellQuote(c.Path), shellQuote(strings.Join(names, " ")))
	}
	b.WriteString("    esac\n}\n\n")
	b.WriteString("_kubeactor() {\n")
	b.WriteString("    local cur=\"${COMP_WORDS[COMP_CWORD]}\"\n")
	b.WriteString("    local IFS=$'\\n'\n")
	var names []string
	for _, c := range cmds {
		names = append(names, c.Name)
	}
	fmt.Fprintf(&b, "    local commands=%s\n", shellQuote(strings.Join(names, "\n")))
	b.WriteString(`    if [[ ${COMP_CWORD} -eq 1 && "${cur}" != -* ]]; then
        COMPREPLY=($(compgen -W "${commands}" -- "${cur}"))
        return 0
    fi
    if [[ "${cur}" == -* && ${COMP_CWORD} -gt 1 ]]; then
        local IFS=$' \t\n'
        COMPREPLY=($(compgen -W "$(_kubeactor_flags "${COMP_WORDS[1]}")" -- "${cur}"))
        [[ ${#COMPREPLY[@]} -gt 0 ]] && return 0
        local IFS=$'\n'
    fi
    local out
    out="$(kubeactor __complete -- "${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null)"
    COMPREPLY=($(compgen -W "${out}" -- "${cur}"))
    return 0
}
complete -o default -F _kubeactor kubeactor
`)
	return b.String()
}

func zshScript(cmds []*kong.Node) string {
	var b strings.Builder
	b.WriteString("#compdef kubeactor\n# zsh completion for kubeactor; load with: source <(kubeactor completion zsh)\n\n")
	b.WriteString("_kubeactor() {\n    local -a commands candidates\n    commands=(\n")
	for _, c := range cmds {
		fmt.Fprintf(&b, "        %s\n", shellQuote(strings.ReplaceAll(c.Name, ":", `\:`)+":"+c.Help))
	}
	b.WriteString(`    )
    if (( CURRENT == 2 )) && [[ "${words[CURRENT]}" != -* ]]; then
        _describe -t commands 'kubeactor command' commands
        return
    fi
    candidates=("${(@f)$(kubeactor __complete -- "${(@)words[2,CURRENT]}" 2>/dev/null)}")
    if (( ${#candidates} )) && [[ -n "${candidates[1]}" ]]; then
        compadd -Q -- "${candidates[@]}"
    else
        _files
    fi
}

if [[ "${funcstack[1]}" == "_kubeactor" ]]; then
    _kubeactor "$@"
else
    compdef _kubeactor kubeactor
fi
`)
	return b.String()
}

func fishScript(cmds []*kong.Node) string {
	var b strings.Builder
	b.WriteString("# fish completion for kubeactor; load with: kubeactor completion fish | source\n\n")
	b.WriteString(`function __kubeactor_complete
    set -l words (commandline -opc)
    set -e words[1]
    kubeactor __complete -- $words (commandline -ct) 2>/dev/null
end

complete -c kubeactor -f
`)
	for _, c := range cmds {
		fmt.Fprintf(&b, "complete -c kubeactor -n '__fish_use_subcommand' -a %s -d %s\n", shellQuote(c.Name), shellQuote(c.Help))
	}
	for _, c := range commandTree(cmds) {
		top, sub, nested := strings.Cut(c.Path, " ")
		if nested && !strings.Contains(sub, " ") {
			fmt.Fprintf(&b, "complete -c kubeactor -n '__fish_seen_subcommand_from %s' -a %s -d %s\n", top, shellQuote(sub), shellQuote(c.Help))
		}
		for _, f := range c.Flags {
			line := fmt.Sprintf("complete -c kubeactor -n '__fish_seen_subcommand_from %s' -l %s", top, f.Name)
			if f.Short != 0 {
				line += " -s " + string(f.Short)
			}
			if !f.IsBool() && !f.IsCounter() {
				line += " -r"
				if f.Name == "filename" || f.Name == "kubeconfig" || strings.Contains(f.Name, "certificate") || f.Name == "client-key" || f.Name == "www" {
					line += " -F"
				}
			}
			fmt.Fprintf(&b, "%s -d %s\n", line, shellQuote(f.Help))
		}
	}
	fmt.Fprintf(&b, "complete -c kubeactor -n 'not __fish_use_subcommand' -a '(__kubeactor_complete)'\n")
	return b.String()
}

// shellQuote quotes s for sh, zsh and fish: in single quotes, each ' closed, escaped and reopened.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
