package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/printers"

	goldenfile "github.com/kubeactor/kubeactor/internal/golden"
)

// golden compares got with testdata/name, or rewrites it under -rewrite.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", name), got)
}

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestTablePrinterGolden(t *testing.T) {
	tests := []struct {
		name, table, golden string
		opts                printers.PrintOptions
	}{
		{"pods", "pods-table.json", "pods-table.golden", printers.PrintOptions{}},
		{"pods wide", "pods-table.json", "pods-wide.golden", printers.PrintOptions{Wide: true}},
		{"pods all namespaces", "pods-table.json", "pods-all-namespaces.golden", printers.PrintOptions{WithNamespace: true}},
		{"pods with kind", "pods-table.json", "pods-with-kind.golden", printers.PrintOptions{WithKind: true, Kind: schema.GroupKind{Kind: "Pod"}}},
		{"pods show labels", "pods-table.json", "pods-show-labels.golden", printers.PrintOptions{ShowLabels: true}},
		{"no nodes: header only", "nodes-table.json", "nodes-empty.golden", printers.PrintOptions{}},
		{"no nodes, no headers", "nodes-table.json", "nodes-empty-no-headers.golden", printers.PrintOptions{NoHeaders: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table, err := decodeTable(readTestdata(t, tt.table))
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := printTable(printers.NewTablePrinter(tt.opts), table, tt.opts, &out); err != nil {
				t.Fatal(err)
			}
			golden(t, tt.golden, out.Bytes())
		})
	}
}

func TestObjectPrintersGolden(t *testing.T) {
	tests := []struct{ name, output, golden string }{
		{"name", "name", "pods-name.golden"},
		{"json", "json", "pods-json.golden"},
		{"yaml", "yaml", "pods-yaml.golden"},
		{"jsonpath", "jsonpath={.items[*].metadata.name}", "pods-jsonpath.golden"},
		{"jsonpath missing key", "jsonpath={.items[*].metadata.nothing}", "pods-jsonpath-missing.golden"},
		{"custom-columns", "custom-columns=NAME:.metadata.name,IMAGE:.spec.containers[*].image,NODE:spec.nodeName,X:{.metadata.nope}", "pods-custom-columns.golden"},
	}
	obj, err := runtime.Decode(unstructured.UnstructuredJSONScheme, readTestdata(t, "pods-list.json"))
	if err != nil {
		t.Fatal(err)
	}
	list := asList(obj.(*unstructured.UnstructuredList).Items)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := parseOutput(tt.output)
			if err != nil {
				t.Fatal(err)
			}
			p, err := f.objectPrinter(false)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := p.PrintObj(list, &out); err != nil {
				t.Fatal(err)
			}
			golden(t, tt.golden, out.Bytes())
		})
	}
}

func TestParseOutput(t *testing.T) {
	tests := []struct {
		in      string
		want    outputFormat
		wantErr bool
	}{
		{"", outputFormat{Table: true}, false},
		{"wide", outputFormat{Table: true, Wide: true}, false},
		{"json", outputFormat{Printer: "json"}, false},
		{"name", outputFormat{Printer: "name"}, false},
		{"jsonpath={.a}", outputFormat{Printer: "jsonpath", Template: "{.a}"}, false},
		{"custom-columns=A:.a,B:.b", outputFormat{Printer: "custom-columns", Template: "A:.a,B:.b"}, false},
		{"jsonpath", outputFormat{}, true},
		{"xml", outputFormat{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseOutput(tt.in)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Fatalf("parseOutput(%q) = %+v, %v; want %+v, error %v", tt.in, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestParseCustomColumnsRejects(t *testing.T) {
	for _, spec := range []string{"NAME", "NAME:", ":.a", "A:.a,B"} {
		if _, err := parseCustomColumns(spec); err == nil {
			t.Errorf("parseCustomColumns(%q) accepted a bad spec", spec)
		}
	}
}
