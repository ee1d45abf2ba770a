package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/rest"
)

// selectFlags choose objects by label and field, in one or all namespaces.
type selectFlags struct {
	AllNamespaces bool   `short:"A" name:"all-namespaces" help:"List the requested objects across all namespaces."`
	Selector      string `short:"l" name:"selector" help:"Label selector to filter on (e.g. name=redis-master)."`
	FieldSelector string `name:"field-selector" help:"Field selector to filter on (e.g. metadata.name=x)."`
}

type getCmd struct {
	clientFlags
	selectFlags
	Output     string   `short:"o" name:"output" help:"Output format: json|yaml|wide|name|jsonpath=...|custom-columns=..."`
	Watch      bool     `short:"w" name:"watch" help:"After listing, watch for changes."`
	WatchOnly  bool     `name:"watch-only" help:"Watch for changes without listing first."`
	NoHeaders  bool     `name:"no-headers" help:"Do not print table headers."`
	ShowLabels bool     `name:"show-labels" help:"Show all labels as the last column."`
	Args       []string `arg:"" name:"type" help:"TYPE[,TYPE...] [NAME...] or TYPE/NAME..."`
}

func (c *getCmd) Run(g *globals) error {
	return report(g.stderr, c.run(context.Background(), g.stdout))
}

func (c *getCmd) run(ctx context.Context, out io.Writer) error {
	format, err := parseOutput(c.Output)
	if err != nil {
		return err
	}
	reqs, err := parseTypeArgs(c.Args)
	if err != nil {
		return err
	}
	cn, err := c.connect()
	if err != nil {
		return err
	}
	types, err := cn.resourceTypes()
	if err != nil {
		return err
	}
	res, err := types.resolve(reqs)
	if err != nil {
		return err
	}
	if c.Watch || c.WatchOnly {
		if len(res) != 1 || len(res[0].Names) > 1 {
			return errors.New("watch is only supported on individual resources and resource collections")
		}
		ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		defer stop()
		return c.watch(ctx, cn, res[0], format, out)
	}
	if format.Table {
		return c.printTables(ctx, cn, res, format, out)
	}
	return c.printObjects(ctx, cn, res, format, out)
}

// get fetches r (one object when name is set, else the selected list) with accept.
func (c *getCmd) get(ctx context.Context, cn *conn, r metav1.APIResource, name, accept string) ([]byte, error) {
	req := cn.request("GET", r, c.AllNamespaces, name).SetHeader("Accept", accept)
	if name == "" {
		req = c.selectFlags.apply(req)
	}
	raw, err := doRaw(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("get %s %s: %w", r.Name, name, err)
	}
	return raw, nil
}

func (s selectFlags) apply(req *rest.Request) *rest.Request {
	if s.Selector != "" {
		req = req.Param("labelSelector", s.Selector)
	}
	if s.FieldSelector != "" {
		req = req.Param("fieldSelector", s.FieldSelector)
	}
	return req
}

// printTables prints one server Table per type; with several types each name is
// prefixed by its kind and the tables are separated by a blank line, as kubectl does.
func (c *getCmd) printTables(ctx context.Context, cn *conn, res []resolved, format outputFormat, out io.Writer) error {
	var errs []error
	for i, r := range res {
		table, err := c.table(ctx, cn, r, &errs)
		if err != nil {
			return errors.Join(append(errs, err)...)
		}
		if table == nil {
			continue
		}
		if i > 0 {
			fmt.Fprintln(out)
		}
		opts := printers.PrintOptions{
			NoHeaders: c.NoHeaders, Wide: format.Wide, ShowLabels: c.ShowLabels,
			WithNamespace: c.AllNamespaces, WithKind: len(res) > 1,
			Kind: schema.GroupKind{Kind: r.Resource.Kind},
		}
		if err := printTable(printers.NewTablePrinter(opts), table, opts, out); err != nil {
			return fmt.Errorf("print %s: %w", r.Resource.Name, err)
		}
	}
	return errors.Join(errs...)
}

// table is the Table of r: the list, or the named objects' rows joined. Errors for
// single names are collected in errs, as kubectl reports them after what it found.
func (c *getCmd) table(ctx context.Context, cn *conn, r resolved, errs *[]error) (*metav1.Table, error) {
	if len(r.Names) == 0 {
		raw, err := c.get(ctx, cn, r.Resource, "", tableAccept)
		if err != nil {
			return nil, err
		}
		return decodeTable(raw)
	}
	var joined *metav1.Table
	for _, name := range r.Names {
		raw, err := c.get(ctx, cn, r.Resource, name, tableAccept)
		if err != nil {
			*errs = append(*errs, err)
			continue
		}
		t, err := decodeTable(raw)
		if err != nil {
			return nil, err
		}
		if joined == nil {
			joined = t
			continue
		}
		joined.Rows = append(joined.Rows, t.Rows...)
	}
	return joined, nil
}

// printObjects prints the objects with a json/yaml/name/jsonpath/custom-columns
// printer: a single named object as itself, anything else as a kind List.
func (c *getCmd) printObjects(ctx context.Context, cn *conn, res []resolved, format outputFormat, out io.Writer) error {
	p, err := format.objectPrinter(c.NoHeaders)
	if err != nil {
		return err
	}
	var items []unstructured.Unstructured
	var errs []error
	for _, r := range res {
		names := r.Names
		if len(names) == 0 {
			names = []string{""}
		}
		for _, name := range names {
			raw, err := c.get(ctx, cn, r.Resource, name, "application/json")
			if err != nil {
				errs = append(errs, err)
				continue
			}
			obj, err := runtime.Decode(unstructured.UnstructuredJSONScheme, raw)
			if err != nil {
				return fmt.Errorf("decode %s: %w", r.Resource.Name, err)
			}
			switch o := obj.(type) {
			case *unstructured.UnstructuredList:
				items = append(items, o.Items...)
			case *unstructured.Unstructured:
				items = append(items, *o)
			}
		}
	}
	if len(res) == 1 && len(res[0].Names) == 1 && len(items) == 1 {
		if err := p.PrintObj(&items[0], out); err != nil {
			return fmt.Errorf("print: %w", err)
		}
		return errors.Join(errs...)
	}
	if len(items) > 0 || len(errs) == 0 {
		if err := p.PrintObj(asList(items), out); err != nil {
			return fmt.Errorf("print: %w", err)
		}
	}
	return errors.Join(errs...)
}

// asList wraps items in the v1 List kubectl prints for several objects.
func asList(items []unstructured.Unstructured) *unstructured.UnstructuredList {
	if items == nil {
		items = []unstructured.Unstructured{}
	}
	return &unstructured.UnstructuredList{
		Object: map[string]interface{}{"apiVersion": "v1", "kind": "List", "metadata": map[string]interface{}{"resourceVersion": ""}},
		Items:  items,
	}
}

// watch prints the current objects (unless --watch-only), then every change until
// ctx ends, in the -o format: table rows (wide too), or each object on its own with
// an object printer (yaml separated by ---, as kubectl prints a watch).
func (c *getCmd) watch(ctx context.Context, cn *conn, r resolved, format outputFormat, out io.Writer) error {
	if len(r.Names) == 1 {
		c.FieldSelector = "metadata.name=" + r.Names[0]
		r.Names = nil
	}
	var p printers.ResourcePrinter
	var rv string
	accept := "application/json"
	if format.Table {
		accept = tableAccept
		var errs []error
		table, err := c.table(ctx, cn, r, &errs)
		if err != nil {
			return err
		}
		opts := printers.PrintOptions{
			NoHeaders: c.NoHeaders, Wide: format.Wide, ShowLabels: c.ShowLabels, WithNamespace: c.AllNamespaces,
		}
		p = printers.NewTablePrinter(opts)
		if !c.WatchOnly {
			if err := printTable(p, table, opts, out); err != nil {
				return fmt.Errorf("print %s: %w", r.Resource.Name, err)
			}
		}
		rv = table.ResourceVersion
	} else {
		op, err := format.objectPrinter(c.NoHeaders)
		if err != nil {
			return err
		}
		p = &onceHeaderPrinter{p: op}
		raw, err := c.get(ctx, cn, r.Resource, "", accept)
		if err != nil {
			return err
		}
		list := &unstructured.UnstructuredList{}
		if err := list.UnmarshalJSON(raw); err != nil {
			return fmt.Errorf("decode %s: %w", r.Resource.Name, err)
		}
		if !c.WatchOnly {
			for i := range list.Items {
				if err := p.PrintObj(&list.Items[i], out); err != nil {
					return fmt.Errorf("print %s: %w", r.Resource.Name, err)
				}
			}
		}
		rv = list.GetResourceVersion()
	}
	req := cn.request("GET", r.Resource, c.AllNamespaces, "").SetHeader("Accept", accept).
		Param("watch", "true").Param("resourceVersion", rv)
	stream, err := c.selectFlags.apply(req).Stream(ctx)
	if err != nil {
		return fmt.Errorf("watch %s: %w", r.Resource.Name, err)
	}
	defer stream.Close()
	err = printEvents(stream, format.Table, p, out)
	if ctx.Err() != nil {
		return nil
	}
	if err != nil {
		return fmt.Errorf("watch %s: %w", r.Resource.Name, err)
	}
	return nil
}

// printEvents prints the object of every watch event read from r with p until the
// stream ends: as a Table when table is set, else as the object itself.
func printEvents(r io.Reader, table bool, p printers.ResourcePrinter, out io.Writer) error {
	dec := json.NewDecoder(r)
	for {
		var ev struct {
			Type   string          `json:"type"`
			Object json.RawMessage `json:"object"`
		}
		if err := dec.Decode(&ev); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("read event: %w", err)
		}
		switch ev.Type {
		case "BOOKMARK":
			continue
		case "ERROR":
			return fmt.Errorf("%s", ev.Object)
		}
		var obj runtime.Object
		if table {
			t, err := decodeTable(ev.Object)
			if err != nil {
				return err
			}
			obj = t
		} else {
			u := &unstructured.Unstructured{}
			if err := u.UnmarshalJSON(ev.Object); err != nil {
				return fmt.Errorf("decode event object: %w", err)
			}
			obj = u
		}
		if err := p.PrintObj(obj, out); err != nil {
			return fmt.Errorf("print: %w", err)
		}
	}
}

// onceHeaderPrinter prints custom columns' header only before the first object, as
// kubectl does for a watch; other printers are used as they are.
type onceHeaderPrinter struct {
	p       printers.ResourcePrinter
	printed bool
}

var _ printers.ResourcePrinter = &onceHeaderPrinter{}

func (o *onceHeaderPrinter) PrintObj(obj runtime.Object, out io.Writer) error {
	if cc, ok := o.p.(*customColumnsPrinter); ok && o.printed {
		cc.NoHeaders = true
	}
	o.printed = true
	return o.p.PrintObj(obj, out)
}

// request starts a request for r in the namespace of the command (all namespaces
// when all is set and r is namespaced).
func (cn *conn) request(verb string, r metav1.APIResource, all bool, name string) *rest.Request {
	req := cn.rest.Verb(verb).Resource(r.Name)
	if r.Namespaced && !all {
		req = req.Namespace(cn.namespace)
	}
	if name != "" {
		req = req.Name(name)
	}
	return req
}
