package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
)

// metaFlags are what label and annotate share.
type metaFlags struct {
	clientFlags
	Overwrite       bool     `name:"overwrite" help:"Allow existing keys to be overwritten."`
	All             bool     `name:"all" help:"Select all resources of the types in the namespace."`
	Selector        string   `short:"l" name:"selector" help:"Label selector to filter on."`
	ResourceVersion string   `name:"resource-version" help:"Update only if the object's resource version is unchanged."`
	Output          string   `short:"o" name:"output" help:"Output format: name|json|yaml (default: kind/name labeled)."`
	Args            []string `arg:"" name:"args" help:"TYPE NAME KEY_1=VAL_1 ... KEY_N=VAL_N [KEY-] or TYPE/NAME ..."`
}

type labelCmd struct{ metaFlags }

func (c *labelCmd) Run(g *globals) error {
	return report(g.stderr, c.run(context.Background(), "labels", g.stdout, g.stderr))
}

type annotateCmd struct{ metaFlags }

func (c *annotateCmd) Run(g *globals) error {
	return report(g.stderr, c.run(context.Background(), "annotations", g.stdout, g.stderr))
}

// metaChange is the parsed KEY=VALUE and KEY- arguments.
type metaChange struct {
	Set    map[string]string
	Remove []string
}

// parseMetaArgs splits the arguments into resources and changes: an argument with
// "=" sets a key, one ending in "-" removes it, any other names a resource.
func parseMetaArgs(args []string, field string) ([]string, metaChange, error) {
	var resources []string
	ch := metaChange{Set: map[string]string{}}
	for _, a := range args {
		switch {
		case strings.Contains(a, "="):
			k, v, _ := strings.Cut(a, "=")
			if err := validateMeta(field, k, v); err != nil {
				return nil, ch, err
			}
			ch.Set[k] = v
		case strings.HasSuffix(a, "-"):
			k := strings.TrimSuffix(a, "-")
			if err := validateMeta(field, k, ""); err != nil {
				return nil, ch, err
			}
			ch.Remove = append(ch.Remove, k)
		default:
			resources = append(resources, a)
		}
	}
	if len(ch.Set) == 0 && len(ch.Remove) == 0 {
		return nil, ch, fmt.Errorf("at least one %s update is required", singular(field))
	}
	for _, k := range ch.Remove {
		if _, ok := ch.Set[k]; ok {
			return nil, ch, fmt.Errorf("can not both modify and remove the following %s(s) in the same command: %s", singular(field), k)
		}
	}
	if len(resources) == 0 {
		return nil, ch, errors.New("one or more resources must be specified as <resource> <name> or <resource>/<name>")
	}
	return resources, ch, nil
}

func singular(field string) string { return strings.TrimSuffix(field, "s") }

// validateMeta checks a key (and a label's value) as the API server would.
func validateMeta(field, key, value string) error {
	errs := validation.IsQualifiedName(key)
	if field == "labels" {
		errs = append(errs, validation.IsValidLabelValue(value)...)
	}
	if len(errs) > 0 {
		return fmt.Errorf("invalid %s spec: %s", singular(field), strings.Join(errs, "; "))
	}
	return nil
}

// patch is the merge patch that applies ch to current (null removes a key); it is
// nil when nothing would change. Without overwrite, changing a key fails.
func (ch metaChange) patch(field string, current map[string]string, overwrite bool) (map[string]interface{}, error) {
	if !overwrite {
		if err := ch.noOverwrites(field, current); err != nil {
			return nil, err
		}
	}
	p := map[string]interface{}{}
	for k, v := range ch.Set {
		if cur, ok := current[k]; !ok || cur != v {
			p[k] = v
		}
	}
	for _, k := range ch.Remove {
		if _, ok := current[k]; ok {
			p[k] = nil
		}
	}
	if len(p) == 0 {
		return nil, nil
	}
	return p, nil
}

func (c *metaFlags) run(ctx context.Context, field string, out, stderr io.Writer) error {
	done := map[string]string{"labels": "labeled", "annotations": "annotated"}[field]
	resources, ch, err := parseMetaArgs(c.Args, field)
	if err != nil {
		return err
	}
	if c.All && c.Selector != "" {
		return errors.New("cannot set --all and --selector at the same time")
	}
	p, err := operationPrinter(c.Output, done)
	if err != nil {
		return err
	}
	cn, err := c.connect()
	if err != nil {
		return err
	}
	objs, err := cn.selectObjects(ctx, resources, selectFlags{Selector: c.Selector}, c.All)
	if err != nil {
		return err
	}
	var errs []error
	for _, o := range objs {
		current := o.Object.GetLabels()
		if field == "annotations" {
			current = o.Object.GetAnnotations()
		}
		for _, k := range ch.Remove {
			if _, ok := current[k]; !ok {
				fmt.Fprintf(stderr, "%s %q not found.\n", singular(field), k)
			}
		}
		changes, err := ch.patch(field, current, c.Overwrite)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		result := o.Object
		if changes != nil || c.ResourceVersion != "" {
			meta := map[string]interface{}{field: changes}
			if c.ResourceVersion != "" {
				meta["resourceVersion"] = c.ResourceVersion
			}
			result, err = cn.patch(ctx, o.Resource, o.Object.GetName(), types.MergePatchType, map[string]interface{}{"metadata": meta})
			if err != nil {
				errs = append(errs, err)
				continue
			}
		}
		op := p
		if changes == nil && field == "labels" && c.Output == "" {
			op, _ = operationPrinter("", "not labeled")
		}
		if err := op.PrintObj(result, out); err != nil {
			return fmt.Errorf("print: %w", err)
		}
	}
	return errors.Join(errs...)
}

// selected is one object a command chose, with its resource.
type selected struct {
	Resource metav1.APIResource
	Object   *unstructured.Unstructured
}

// selectObjects fetches the objects that TYPE NAME... or TYPE/NAME... names, or for
// a bare TYPE every object that sel (or all) chooses.
func (cn *conn) selectObjects(ctx context.Context, args []string, sel selectFlags, all bool) ([]selected, error) {
	reqs, err := parseTypeArgs(args)
	if err != nil {
		return nil, err
	}
	types, err := cn.resourceTypes()
	if err != nil {
		return nil, err
	}
	res, err := types.resolve(reqs)
	if err != nil {
		return nil, err
	}
	var out []selected
	for _, r := range res {
		if len(r.Names) > 0 {
			if sel.Selector != "" || all {
				return nil, errors.New("a resource cannot be retrieved by name across all namespaces or with a selector")
			}
			for _, n := range r.Names {
				obj, err := cn.getObject(ctx, r.Resource, n)
				if err != nil {
					return nil, err
				}
				out = append(out, selected{Resource: r.Resource, Object: obj})
			}
			continue
		}
		if sel.Selector == "" && !all {
			return nil, errors.New("resource(s) were provided, but no name was specified")
		}
		raw, err := doRaw(ctx, sel.apply(cn.request("GET", r.Resource, false, "")))
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", r.Resource.Name, err)
		}
		list := &unstructured.UnstructuredList{}
		if err := list.UnmarshalJSON(raw); err != nil {
			return nil, fmt.Errorf("decode %s: %w", r.Resource.Name, err)
		}
		for i := range list.Items {
			it := &list.Items[i]
			it.SetAPIVersion("v1")
			it.SetKind(r.Resource.Kind)
			out = append(out, selected{Resource: r.Resource, Object: it})
		}
	}
	return out, nil
}

// getObject reads one object of r.
func (cn *conn) getObject(ctx context.Context, r metav1.APIResource, name string) (*unstructured.Unstructured, error) {
	raw, err := doRaw(ctx, cn.request("GET", r, false, name))
	if err != nil {
		return nil, fmt.Errorf("get %s %q: %w", r.Name, name, err)
	}
	return decodeObject(raw, r.Name, name)
}

// patch sends a patch of type pt (body is JSON, or a value encoded as JSON) and
// returns the patched object.
func (cn *conn) patch(ctx context.Context, r metav1.APIResource, name string, pt types.PatchType, body interface{}) (*unstructured.Unstructured, error) {
	data, ok := body.([]byte)
	if !ok {
		var err error
		if data, err = json.Marshal(body); err != nil {
			return nil, fmt.Errorf("encode patch: %w", err)
		}
	}
	raw, err := doRaw(ctx, cn.request("PATCH", r, false, name).SetHeader("Content-Type", string(pt)).Body(data))
	if err != nil {
		return nil, fmt.Errorf("patch %s %q: %w", r.Name, name, err)
	}
	return decodeObject(raw, r.Name, name)
}

func decodeObject(raw []byte, resource, name string) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(raw); err != nil {
		return nil, fmt.Errorf("decode %s %q: %w", resource, name, err)
	}
	return u, nil
}

// noOverwrites fails, with kubectl's message for labels or annotations, when ch
// would change the value of a key current has.
func (ch metaChange) noOverwrites(field string, current map[string]string) error {
	keys := make([]string, 0, len(ch.Set))
	for k := range ch.Set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var found []string
	for _, k := range keys {
		if cur, ok := current[k]; ok && cur != ch.Set[k] {
			found = append(found, fmt.Sprintf("'%s' already has a value (%s)", k, cur))
		}
	}
	switch {
	case len(found) == 0:
		return nil
	case field == "annotations":
		return fmt.Errorf("--overwrite is false but found the following declared annotation(s): %s", strings.Join(found, "; "))
	}
	errs := make([]error, len(found))
	for i, f := range found {
		errs[i] = fmt.Errorf("%s, and --overwrite is false", f)
	}
	return errors.Join(errs...)
}
