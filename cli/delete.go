package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

type deleteCmd struct {
	clientFlags
	fileFlags
	selectFlags
	All  bool     `name:"all" help:"Delete every object of the types in the namespace."`
	Args []string `arg:"" optional:"" name:"type" help:"TYPE[,TYPE...] NAME... or TYPE/NAME..."`
}

// deletion is one object to delete.
type deletion struct {
	Resource metav1.APIResource
	Name     string
}

func (c *deleteCmd) Run(g *globals) error {
	return report(g.stderr, c.run(context.Background(), os.Stdin, g.stdout, g.stderr))
}

func (c *deleteCmd) run(ctx context.Context, stdin io.Reader, out, stderr io.Writer) error {
	if err := c.validate(); err != nil {
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
	targets, err := c.targets(ctx, cn, types, stdin)
	if err != nil {
		return err
	}
	if len(targets) == 0 {
		fmt.Fprintln(stderr, "No resources found")
		return nil
	}
	var errs []error
	for _, d := range targets {
		if err := cn.request("DELETE", d.Resource, false, d.Name).Body(background).Do(ctx).Error(); err != nil {
			errs = append(errs, fmt.Errorf("delete %s %q: %w", d.Resource.Name, d.Name, err))
			continue
		}
		fmt.Fprintln(out, deletedMessage(d.Resource.Kind, d.Name))
	}
	return errors.Join(errs...)
}

// background is the body of every delete: kubectl's default --cascade=background
// (an RC's pods go with it; the API alone would orphan them).
var background = func() *metav1.DeleteOptions {
	p := metav1.DeletePropagationBackground
	return &metav1.DeleteOptions{TypeMeta: metav1.TypeMeta{Kind: "DeleteOptions", APIVersion: "v1"}, PropagationPolicy: &p}
}()

// deletedMessage is kubectl's line for a deleted object: `pod "x" deleted`.
func deletedMessage(kind, name string) string {
	return fmt.Sprintf("%s %q deleted", strings.ToLower(kind), name)
}

// validate checks that exactly one way of choosing objects was given.
func (c *deleteCmd) validate() error {
	byFile := len(c.Filename) > 0
	switch {
	case byFile && len(c.Args) > 0:
		return errors.New("resources can not be specified with -f")
	case !byFile && len(c.Args) == 0:
		return errors.New("you must provide one or more resources by argument or filename")
	case c.All && c.Selector != "":
		return errors.New("cannot set --all and --selector at the same time")
	}
	return nil
}

// targets lists what to delete: the file's objects, the named objects, or every
// object of the types that the selector (or --all) chooses.
func (c *deleteCmd) targets(ctx context.Context, cn *conn, types resourceTypes, stdin io.Reader) ([]deletion, error) {
	if len(c.Filename) > 0 {
		objs, err := c.readObjects(stdin)
		if err != nil {
			return nil, err
		}
		out := make([]deletion, 0, len(objs))
		for _, obj := range objs {
			r, err := cn.target(types, obj.Unstructured)
			if err != nil {
				return nil, err
			}
			out = append(out, deletion{Resource: r, Name: obj.GetName()})
		}
		return out, nil
	}
	reqs, err := parseTypeArgs(c.Args)
	if err != nil {
		return nil, err
	}
	res, err := types.resolve(reqs)
	if err != nil {
		return nil, err
	}
	var out []deletion
	for _, r := range res {
		if len(r.Names) > 0 {
			for _, n := range r.Names {
				out = append(out, deletion{Resource: r.Resource, Name: n})
			}
			continue
		}
		if !c.All && c.Selector == "" && c.FieldSelector == "" {
			return nil, errors.New("resource(s) were provided, but no name was specified")
		}
		raw, err := doRaw(ctx, c.selectFlags.apply(cn.request("GET", r.Resource, false, "")))
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", r.Resource.Name, err)
		}
		list := &unstructured.UnstructuredList{}
		if err := list.UnmarshalJSON(raw); err != nil {
			return nil, fmt.Errorf("decode %s: %w", r.Resource.Name, err)
		}
		for _, it := range list.Items {
			out = append(out, deletion{Resource: r.Resource, Name: it.GetName()})
		}
	}
	return out, nil
}
