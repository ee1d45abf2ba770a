package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
)

type scaleCmd struct {
	clientFlags
	Replicas        int      `name:"replicas" required:"" help:"The new desired number of replicas."`
	CurrentReplicas int      `name:"current-replicas" default:"-1" help:"Precondition for the current size: scale only if it matches."`
	ResourceVersion string   `name:"resource-version" help:"Precondition for the resource version: scale only if it matches."`
	Args            []string `arg:"" name:"type" help:"TYPE NAME or TYPE/NAME."`
}

func (c *scaleCmd) Run(g *globals) error {
	return report(g.stderr, c.run(context.Background(), g.stdout))
}

// run sets spec.replicas through the scale subresource: a merge patch, or, with a
// precondition, a read-check-update of the Scale (a conflict fails the update).
func (c *scaleCmd) run(ctx context.Context, out io.Writer) error {
	if c.Replicas < 0 {
		return errors.New("the --replicas=COUNT flag is required, and COUNT must be greater than or equal to 0")
	}
	cn, err := c.connect()
	if err != nil {
		return err
	}
	objs, err := cn.selectObjects(ctx, c.Args, selectFlags{}, false)
	if err != nil {
		return err
	}
	var errs []error
	for _, o := range objs {
		if err := c.scale(ctx, cn, o.Resource, o.Object.GetName()); err != nil {
			errs = append(errs, err)
			continue
		}
		fmt.Fprintf(out, "%s/%s scaled\n", strings.ToLower(o.Resource.Kind), o.Object.GetName())
	}
	return errors.Join(errs...)
}

func (c *scaleCmd) scale(ctx context.Context, cn *conn, r metav1.APIResource, name string) error {
	req := func(verb string) *rest.Request { return cn.request(verb, r, false, name).SubResource("scale") }
	if c.CurrentReplicas < 0 && c.ResourceVersion == "" {
		body := []byte(fmt.Sprintf(`{"spec":{"replicas":%d}}`, c.Replicas))
		if err := req("PATCH").SetHeader("Content-Type", string(types.MergePatchType)).Body(body).Do(ctx).Error(); err != nil {
			return fmt.Errorf("scale %s %q: %w", r.Name, name, err)
		}
		return nil
	}
	raw, err := doRaw(ctx, req("GET"))
	if err != nil {
		return fmt.Errorf("get scale of %s %q: %w", r.Name, name, err)
	}
	s, err := decodeObject(raw, r.Name+"/scale", name)
	if err != nil {
		return err
	}
	if err := c.checkPreconditions(s); err != nil {
		return err
	}
	if err := unstructured.SetNestedField(s.Object, int64(c.Replicas), "spec", "replicas"); err != nil {
		return fmt.Errorf("set replicas: %w", err)
	}
	body, err := s.MarshalJSON()
	if err != nil {
		return fmt.Errorf("encode scale: %w", err)
	}
	if err := req("PUT").SetHeader("Content-Type", "application/json").Body(body).Do(ctx).Error(); err != nil {
		return fmt.Errorf("scale %s %q: %w", r.Name, name, err)
	}
	return nil
}

// checkPreconditions compares the Scale with --current-replicas and
// --resource-version, with kubectl's messages.
func (c *scaleCmd) checkPreconditions(s *unstructured.Unstructured) error {
	if c.CurrentReplicas >= 0 {
		cur, _, _ := unstructured.NestedInt64(s.Object, "spec", "replicas")
		if cur != int64(c.CurrentReplicas) {
			//lint:ignore ST1005 kubectl's message, capital and all
			return fmt.Errorf("Expected replicas to be %d, was %d", c.CurrentReplicas, cur)
		}
	}
	if c.ResourceVersion != "" && s.GetResourceVersion() != c.ResourceVersion {
		//lint:ignore ST1005 kubectl's message, capital and all
		return fmt.Errorf("Expected resource version to be %s, was %s", c.ResourceVersion, s.GetResourceVersion())
	}
	return nil
}

type patchCmd struct {
	clientFlags
	Patch  string   `short:"p" name:"patch" help:"The patch to apply, as JSON or YAML."`
	Type   string   `name:"type" default:"strategic" help:"The type of patch: json|merge|strategic."`
	Output string   `short:"o" name:"output" help:"Output format: name|json|yaml (default: kind/name patched)."`
	Args   []string `arg:"" name:"type" help:"TYPE NAME or TYPE/NAME."`
}

// patchTypes are the --type values and their content types.
var patchTypes = map[string]types.PatchType{
	"json":      types.JSONPatchType,
	"merge":     types.MergePatchType,
	"strategic": types.StrategicMergePatchType,
}

func (c *patchCmd) Run(g *globals) error {
	return report(g.stderr, c.run(context.Background(), g.stdout))
}

// body checks the flags and turns the patch into JSON.
func (c *patchCmd) body() (types.PatchType, []byte, error) {
	pt, ok := patchTypes[c.Type]
	if !ok {
		return "", nil, fmt.Errorf("--type must be one of [json merge strategic], not %q", c.Type)
	}
	if c.Patch == "" {
		return "", nil, errors.New("must specify --patch or --patch-file containing the contents of the patch")
	}
	body, err := yaml.ToJSON([]byte(c.Patch))
	if err != nil {
		return "", nil, fmt.Errorf("unable to parse %q: %w", c.Patch, err)
	}
	return pt, body, nil
}

func (c *patchCmd) run(ctx context.Context, out io.Writer) error {
	pt, body, err := c.body()
	if err != nil {
		return err
	}
	if _, err := operationPrinter(c.Output, "patched"); err != nil {
		return err
	}
	cn, err := c.connect()
	if err != nil {
		return err
	}
	objs, err := cn.selectObjects(ctx, c.Args, selectFlags{}, false)
	if err != nil {
		return err
	}
	var errs []error
	for _, o := range objs {
		patched, err := cn.patch(ctx, o.Resource, o.Object.GetName(), pt, body)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		done := "patched"
		if reflect.DeepEqual(o.Object.Object, patched.Object) {
			done = "patched (no change)"
		}
		p, err := operationPrinter(c.Output, done)
		if err != nil {
			return err
		}
		if err := p.PrintObj(patched, out); err != nil {
			return fmt.Errorf("print: %w", err)
		}
	}
	return errors.Join(errs...)
}
