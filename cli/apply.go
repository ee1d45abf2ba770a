package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/cli-runtime/pkg/printers"
)

// fileFlags name the manifests a command reads: -f FILE, or -f - for stdin.
type fileFlags struct {
	Filename []string `short:"f" name:"filename" help:"File with the resources (YAML or JSON, several documents allowed); - is stdin."`
}

// fileObject is an object read from a file, with the file's name ("STDIN" for -).
type fileObject struct {
	*unstructured.Unstructured
	Source string
}

// readObjects reads every object of the -f files, in order.
func (f fileFlags) readObjects(stdin io.Reader) ([]fileObject, error) {
	var objs []fileObject
	for _, name := range f.Filename {
		var data []byte
		var err error
		if name == "-" {
			data, err = io.ReadAll(stdin)
		} else {
			data, err = os.ReadFile(name)
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", name, err)
		}
		more, err := decodeObjects(data)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", name, err)
		}
		source := name
		if name == "-" {
			source = "STDIN"
		}
		for _, o := range more {
			objs = append(objs, fileObject{Unstructured: o, Source: source})
		}
	}
	return objs, nil
}

// decodeObjects splits YAML documents (or JSON objects) into objects; empty
// documents are skipped and a v1 List is flattened.
func decodeObjects(data []byte) ([]*unstructured.Unstructured, error) {
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objs []*unstructured.Unstructured
	for {
		var m map[string]interface{}
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return objs, nil
			}
			return nil, fmt.Errorf("decode document %d: %w", len(objs)+1, err)
		}
		if len(m) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: m}
		if u.GetKind() == "" {
			return nil, fmt.Errorf("document %d: object has no kind", len(objs)+1)
		}
		if u.IsList() {
			list, err := u.ToList()
			if err != nil {
				return nil, fmt.Errorf("document %d: %w", len(objs)+1, err)
			}
			for i := range list.Items {
				objs = append(objs, &list.Items[i])
			}
			continue
		}
		objs = append(objs, u)
	}
}

// target is where an object from a file goes: its resource and namespace.
func (cn *conn) target(types resourceTypes, obj *unstructured.Unstructured) (metav1.APIResource, error) {
	r, err := types.byKind(obj.GetKind())
	if err != nil {
		return r, err
	}
	if r.Namespaced {
		switch ns := obj.GetNamespace(); {
		case ns == "":
			obj.SetNamespace(cn.namespace)
		case ns != cn.namespace:
			return r, fmt.Errorf("the namespace from the provided object %q does not match the namespace %q. You must pass '--namespace=%s' to perform this operation", ns, cn.namespace, ns)
		}
	}
	return r, nil
}

// send writes obj with verb (POST or PUT) and returns what the server stored.
func (cn *conn) send(ctx context.Context, verb string, r metav1.APIResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	body, err := obj.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", obj.GetName(), err)
	}
	name := ""
	if verb == "PUT" {
		name = obj.GetName()
	}
	raw, err := doRaw(ctx, cn.request(verb, r, false, name).SetHeader("Content-Type", "application/json").Body(body))
	if err != nil {
		return nil, fmt.Errorf("%s %s %q: %w", verb, r.Name, obj.GetName(), err)
	}
	out, err := runtime.Decode(unstructured.UnstructuredJSONScheme, raw)
	if err != nil {
		return nil, fmt.Errorf("decode %s %q: %w", r.Name, obj.GetName(), err)
	}
	u, ok := out.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("server answered %T for %s %q", out, r.Name, obj.GetName())
	}
	return u, nil
}

type createCmd struct {
	clientFlags
	fileFlags
	Output string `short:"o" name:"output" help:"Output format: name|json|yaml (default: kind/name created)."`
}

func (c *createCmd) Run(g *globals) error {
	return report(g.stderr, writeFiles(context.Background(), &c.clientFlags, c.fileFlags, c.Output, "POST", "created", os.Stdin, g.stdout))
}

type replaceCmd struct {
	clientFlags
	fileFlags
	Output string `short:"o" name:"output" help:"Output format: name|json|yaml (default: kind/name replaced)."`
}

func (c *replaceCmd) Run(g *globals) error {
	return report(g.stderr, writeFiles(context.Background(), &c.clientFlags, c.fileFlags, c.Output, "PUT", "replaced", os.Stdin, g.stdout))
}

// writeFiles creates (POST) or replaces (PUT) every object of the files, printing
// "kind/name <done>" for each; errors for single objects are reported after the rest.
func writeFiles(ctx context.Context, cf *clientFlags, ff fileFlags, output, verb, done string, stdin io.Reader, out io.Writer) error {
	if len(ff.Filename) == 0 {
		return errors.New("must specify one of -f and -k")
	}
	doing := map[string]string{"POST": "creating", "PUT": "replacing"}[verb]
	p, err := operationPrinter(output, done)
	if err != nil {
		return err
	}
	objs, err := ff.readObjects(stdin)
	if err != nil {
		return err
	}
	cn, err := cf.connect()
	if err != nil {
		return err
	}
	types, err := cn.resourceTypes()
	if err != nil {
		return err
	}
	var errs []error
	for _, fo := range objs {
		obj := fo.Unstructured
		r, err := cn.target(types, obj)
		if err != nil {
			errs = append(errs, sourceError(err, doing, fo.Source))
			continue
		}
		if verb == "PUT" && obj.GetResourceVersion() == "" {
			if err := cn.copyResourceVersion(ctx, r, obj); err != nil {
				errs = append(errs, sourceError(err, doing, fo.Source))
				continue
			}
		}
		stored, err := cn.send(ctx, verb, r, obj)
		if err != nil {
			errs = append(errs, sourceError(err, doing, fo.Source))
			continue
		}
		if err := p.PrintObj(stored, out); err != nil {
			return fmt.Errorf("print: %w", err)
		}
	}
	return errors.Join(errs...)
}

// copyResourceVersion makes a replace of obj unconditional, as kubectl replace is:
// it takes the stored object's resourceVersion.
func (cn *conn) copyResourceVersion(ctx context.Context, r metav1.APIResource, obj *unstructured.Unstructured) error {
	raw, err := doRaw(ctx, cn.request("GET", r, false, obj.GetName()))
	if err != nil {
		return fmt.Errorf("get %s %q: %w", r.Name, obj.GetName(), err)
	}
	cur := &unstructured.Unstructured{}
	if err := cur.UnmarshalJSON(raw); err != nil {
		return fmt.Errorf("decode %s %q: %w", r.Name, obj.GetName(), err)
	}
	obj.SetResourceVersion(cur.GetResourceVersion())
	return nil
}

// operationPrinter prints what a write did: "kind/name created", or the object in
// the -o format.
func operationPrinter(output, done string) (printers.ResourcePrinter, error) {
	if output == "" {
		return &printers.NamePrinter{Operation: done}, nil
	}
	f, err := parseOutput(output)
	if err != nil {
		return nil, err
	}
	if f.Table {
		return nil, fmt.Errorf("output %q is not supported here", output)
	}
	return f.objectPrinter(false)
}

// sourceError says which file an error came from, as kubectl does: a server Status
// keeps its reason and gets `error when creating "file": ` before its message.
func sourceError(err error, doing, source string) error {
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		s := st.Status()
		s.Message = fmt.Sprintf("error when %s %q: %s", doing, source, s.Message)
		return &apierrors.StatusError{ErrStatus: s}
	}
	return fmt.Errorf("error when %s %q: %w", doing, source, err)
}
