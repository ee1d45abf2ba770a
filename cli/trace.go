package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kubeactor/kubeactor/gateway"
	"github.com/kubeactor/kubeactor/tracing"
)

// traceCmd prints an object's recent spans (GET /kubeactor/v1/traces/...) as trees.
type traceCmd struct {
	clientFlags
	Output string `short:"o" name:"output" enum:"text,json" default:"text" help:"Output format: text or json."`
	Object string `arg:"" name:"object" help:"TYPE/NAME (or TYPE NAME), for example pod/web-1 or rc/web."`
	Name   string `arg:"" optional:"" hidden:""`
}

// explainCmd prints why an object is in its state (GET /kubeactor/v1/explain/...).
type explainCmd struct {
	clientFlags
	Output string `short:"o" name:"output" enum:"text,json" default:"text" help:"Output format: text or json."`
	Object string `arg:"" name:"object" help:"TYPE/NAME (or TYPE NAME): a pod, a replication controller, a node."`
	Name   string `arg:"" optional:"" hidden:""`
}

func (c *traceCmd) Run(g *globals) error {
	body, err := troubleshoot(&c.clientFlags, gateway.TracesPath, c.Object, c.Name)
	if err != nil {
		return report(g.stderr, err)
	}
	if c.Output == "json" {
		_, err := g.stdout.Write(append(body, '\n'))
		return err
	}
	var h gateway.TraceHistory
	if err := json.Unmarshal(body, &h); err != nil {
		return report(g.stderr, fmt.Errorf("decode traces: %w", err))
	}
	printTraces(g.stdout, h)
	return nil
}

func (c *explainCmd) Run(g *globals) error {
	body, err := troubleshoot(&c.clientFlags, gateway.ExplainPath, c.Object, c.Name)
	if err != nil {
		return report(g.stderr, err)
	}
	if c.Output == "json" {
		_, err := g.stdout.Write(append(body, '\n'))
		return err
	}
	var x gateway.Explanation
	if err := json.Unmarshal(body, &x); err != nil {
		return report(g.stderr, fmt.Errorf("decode explanation: %w", err))
	}
	fmt.Fprintln(g.stdout, x.Object)
	if len(x.Partial) > 0 {
		fmt.Fprintf(g.stdout, "  partial: no answer from replica(s) %s: their syncs are missing\n", strings.Join(x.Partial, ", "))
	}
	for _, l := range x.Lines {
		fmt.Fprintln(g.stdout, "  "+l)
	}
	return nil
}

// troubleshoot GETs prefix/resource[/namespace]/name for the TYPE/NAME argument.
func troubleshoot(f *clientFlags, prefix, object, name string) ([]byte, error) {
	typ := object
	if t, n, ok := strings.Cut(object, "/"); ok {
		typ, name = t, n
	}
	if name == "" {
		return nil, fmt.Errorf("give the object as TYPE/NAME, for example pod/web-1")
	}
	c, err := f.connect()
	if err != nil {
		return nil, err
	}
	types, err := c.resourceTypes()
	if err != nil {
		return nil, err
	}
	r, err := types.lookup(typ)
	if err != nil {
		return nil, err
	}
	path := prefix + "/" + r.Name + "/" + name
	if r.Namespaced {
		path = prefix + "/" + r.Name + "/" + c.namespace + "/" + name
	}
	return c.discovery.RESTClient().Get().AbsPath(path).DoRaw(context.Background())
}

// printTraces writes each trace as an indented tree: start offset from the trace's
// first span, duration, name and attributes.
func printTraces(out io.Writer, h gateway.TraceHistory) {
	if len(h.Partial) > 0 {
		fmt.Fprintf(out, "partial: no answer from replica(s) %s: their spans are missing\n", strings.Join(h.Partial, ", "))
	}
	if len(h.Traces) == 0 {
		fmt.Fprintf(out, "no spans kept for %s (sampled out, or older than the store)\n", h.Object)
		return
	}
	for i, t := range h.Traces {
		if i > 0 {
			fmt.Fprintln(out)
		}
		fmt.Fprintf(out, "trace %s  %s  (%s)\n", t.TraceID, t.Start.UTC().Format("2006-01-02 15:04:05.000"), h.Object)
		fmt.Fprintf(out, "%10s %10s  %s\n", "START", "DURATION", "SPAN")
		var walk func(ns []*tracing.Node, depth int)
		walk = func(ns []*tracing.Node, depth int) {
			for _, n := range ns {
				fmt.Fprintf(out, "%s %s  %s%s%s\n", pad("+"+short(n.StartOffset)), pad(short(n.Duration)),
					strings.Repeat("  ", depth), n.Name, attrs(n.Attributes))
				walk(n.Children, depth+1)
			}
		}
		walk(t.Roots, 0)
	}
}

// pad right-aligns s in 10 columns (µ is one column, two bytes).
func pad(s string) string {
	return strings.Repeat(" ", max(10-utf8.RuneCountInString(s), 0)) + s
}

// short prints d with at most 3 significant decimals, as 1.234ms.
func short(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.3gs", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.3gms", float64(d)/float64(time.Millisecond))
	case d >= time.Microsecond:
		return fmt.Sprintf("%.3gµs", float64(d)/float64(time.Microsecond))
	default:
		return d.String()
	}
}

// attrs prints the attributes worth reading (not those the span name already says).
func attrs(m map[string]string) string {
	var keys []string
	for k := range m {
		switch k {
		case "actor.kind", "message", "http.method":
			continue
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return ""
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("  ")
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=%s", k, m[k])
	}
	return b.String()
}
