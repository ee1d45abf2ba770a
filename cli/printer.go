package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/util/jsonpath"
)

// tableAccept asks the server for a meta.k8s.io/v1 Table, as kubectl does.
const tableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"

// outputFormat is a parsed -o value.
type outputFormat struct {
	Table    bool // "" or wide: the server's Table
	Wide     bool
	Printer  string // json, yaml, name, jsonpath, custom-columns
	Template string // for jsonpath and custom-columns
}

// parseOutput reads -o (json|yaml|wide|name|jsonpath=...|custom-columns=...).
func parseOutput(o string) (outputFormat, error) {
	name, tmpl, _ := strings.Cut(o, "=")
	switch name {
	case "":
		return outputFormat{Table: true}, nil
	case "wide":
		return outputFormat{Table: true, Wide: true}, nil
	case "json", "yaml", "name":
		return outputFormat{Printer: name}, nil
	case "jsonpath", "custom-columns":
		if tmpl == "" {
			return outputFormat{}, fmt.Errorf("%s format specified but no template given", name)
		}
		return outputFormat{Printer: name, Template: tmpl}, nil
	}
	return outputFormat{}, fmt.Errorf("unable to match a printer suitable for the output format %q, allowed formats are: custom-columns,json,jsonpath,name,wide,yaml", o)
}

// objectPrinter is the printer for a non-table format.
func (f outputFormat) objectPrinter(noHeaders bool) (printers.ResourcePrinter, error) {
	switch f.Printer {
	case "json":
		return &printers.JSONPrinter{}, nil
	case "yaml":
		return &printers.YAMLPrinter{}, nil
	case "name":
		return &printers.NamePrinter{}, nil
	case "jsonpath":
		p, err := printers.NewJSONPathPrinter(f.Template)
		if err != nil {
			return nil, fmt.Errorf("parse jsonpath %q: %w", f.Template, err)
		}
		p.AllowMissingKeys(true)
		return p, nil
	case "custom-columns":
		cols, err := parseCustomColumns(f.Template)
		if err != nil {
			return nil, err
		}
		return &customColumnsPrinter{Columns: cols, NoHeaders: noHeaders}, nil
	}
	return nil, fmt.Errorf("no object printer for output %q", f.Printer)
}

// decodeTable reads a Table answer and decodes each row's object (the object's
// metadata), which the table printer needs for namespaces and labels.
func decodeTable(raw []byte) (*metav1.Table, error) {
	t := &metav1.Table{}
	if err := json.Unmarshal(raw, t); err != nil {
		return nil, fmt.Errorf("decode table: %w", err)
	}
	if t.Kind != "Table" {
		return nil, fmt.Errorf("server answered %q, not a Table", t.Kind)
	}
	for i := range t.Rows {
		row := &t.Rows[i]
		if len(row.Object.Raw) == 0 {
			continue
		}
		obj, err := runtime.Decode(unstructured.UnstructuredJSONScheme, row.Object.Raw)
		if err != nil {
			return nil, fmt.Errorf("decode table row %d: %w", i, err)
		}
		row.Object.Object = obj
	}
	return t, nil
}

// column is one custom column: its header and the JSONPath of its value.
type column struct {
	Header string
	Path   *jsonpath.JSONPath
}

var relaxedPath = regexp.MustCompile(`^\{?(?:\.?)([^{}]+)\}?$`)

// parseCustomColumns reads "HEADER:.json.path,..." (kubectl's relaxed JSONPath:
// ".metadata.name" means "{.metadata.name}").
func parseCustomColumns(spec string) ([]column, error) {
	var cols []column
	for _, part := range strings.Split(spec, ",") {
		header, path, ok := strings.Cut(part, ":")
		if !ok || header == "" || path == "" {
			return nil, fmt.Errorf("unexpected custom-columns spec: %q, expected <header>:<json-path-expr>", part)
		}
		m := relaxedPath.FindStringSubmatch(path)
		if m == nil {
			return nil, fmt.Errorf("unexpected path string, expected a 'name1.name2' or '.name1.name2' or '{name1.name2}' or '{.name1.name2}': %q", path)
		}
		jp := jsonpath.New(header).AllowMissingKeys(true)
		if err := jp.Parse("{." + m[1] + "}"); err != nil {
			return nil, fmt.Errorf("parse custom column %q: %w", part, err)
		}
		cols = append(cols, column{Header: header, Path: jp})
	}
	return cols, nil
}

// customColumnsPrinter prints -o custom-columns: one row per object, "<none>" for a
// missing value, several values joined by commas.
type customColumnsPrinter struct {
	Columns   []column
	NoHeaders bool
}

var _ printers.ResourcePrinter = &customColumnsPrinter{}

func (p *customColumnsPrinter) PrintObj(obj runtime.Object, out io.Writer) error {
	w := printers.GetNewTabWriter(out)
	defer w.Flush()
	if !p.NoHeaders {
		headers := make([]string, len(p.Columns))
		for i, c := range p.Columns {
			headers[i] = c.Header
		}
		fmt.Fprintln(w, strings.Join(headers, "\t"))
	}
	items := []runtime.Object{obj}
	if meta.IsListType(obj) {
		var err error
		if items, err = meta.ExtractList(obj); err != nil {
			return fmt.Errorf("custom-columns: %w", err)
		}
	}
	for _, item := range items {
		content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(item)
		if err != nil {
			return fmt.Errorf("custom-columns: %w", err)
		}
		cells := make([]string, len(p.Columns))
		for i, c := range p.Columns {
			cells[i], err = columnValue(c.Path, content)
			if err != nil {
				return err
			}
		}
		fmt.Fprintln(w, strings.Join(cells, "\t"))
	}
	return nil
}

func columnValue(path *jsonpath.JSONPath, content map[string]interface{}) (string, error) {
	results, err := path.FindResults(content)
	if err != nil {
		return "", fmt.Errorf("custom-columns: %w", err)
	}
	var values []string
	for _, r := range results {
		for _, v := range r {
			values = append(values, fmt.Sprintf("%v", v.Interface()))
		}
	}
	if len(values) == 0 {
		return "<none>", nil
	}
	return strings.Join(values, ","), nil
}

// emptyTableHeader is the header line of a table without rows, which the book's
// kubectl prints (the table printer prints nothing for no rows).
func emptyTableHeader(t *metav1.Table, o printers.PrintOptions) []string {
	var h []string
	if o.WithNamespace {
		h = append(h, "NAMESPACE")
	}
	for _, c := range t.ColumnDefinitions {
		if c.Priority == 0 || o.Wide {
			h = append(h, strings.ToUpper(c.Name))
		}
	}
	if o.ShowLabels {
		h = append(h, "LABELS")
	}
	return h
}

// printTable prints t with opts through p, or just its header when it has no rows.
func printTable(p printers.ResourcePrinter, t *metav1.Table, o printers.PrintOptions, out io.Writer) error {
	if len(t.Rows) > 0 {
		return p.PrintObj(t, out)
	}
	if o.NoHeaders {
		return nil
	}
	w := printers.GetNewTabWriter(out)
	fmt.Fprintln(w, strings.Join(emptyTableHeader(t, o), "\t"))
	return w.Flush()
}
