package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/jsonmergepatch"
	"k8s.io/apimachinery/pkg/util/mergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// applyCmd is kubectl's client-side apply: create what is absent, else patch the
// object with the three-way merge of the last applied configuration (kept in the
// kubectl.kubernetes.io/last-applied-configuration annotation, in kubectl's format),
// the file and the live object.
type applyCmd struct {
	clientFlags
	fileFlags
	Recursive bool   `short:"R" name:"recursive" help:"Process the directories of -f recursively."`
	Output    string `short:"o" name:"output" help:"Output format: name|json|yaml (default: kind/name created|configured|unchanged)."`
	DryRun    string `name:"dry-run" default:"none" enum:"none,client,server" help:"none, client (only print what would be sent) or server (the server checks the write but does not persist it)."`
	Overwrite bool   `name:"overwrite" default:"true" negatable:"" help:"Overwrite fields changed by others with the file's values."`
}

func (c *applyCmd) Run(g *globals) error {
	return report(g.stderr, c.run(context.Background(), os.Stdin, g.stdout))
}

func (c *applyCmd) run(ctx context.Context, stdin io.Reader, out io.Writer) error {
	if len(c.Filename) == 0 {
		return errors.New("must specify -f")
	}
	files, err := expandFiles(c.Filename, c.Recursive)
	if err != nil {
		return err
	}
	objs, err := fileFlags{Filename: files}.readObjects(stdin)
	if err != nil {
		return err
	}
	cn, err := c.connect()
	if err != nil {
		return err
	}
	rtypes, err := cn.resourceTypes()
	if err != nil {
		return err
	}
	var errs []error
	for _, fo := range objs {
		r, err := cn.target(rtypes, fo.Unstructured)
		if err != nil {
			errs = append(errs, sourceError(err, "applying", fo.Source))
			continue
		}
		done, obj, err := c.applyOne(ctx, cn, r, fo.Unstructured)
		if err != nil {
			errs = append(errs, sourceError(err, done, fo.Source))
			continue
		}
		p, err := operationPrinter(c.Output, done+dryRunSuffix(c.DryRun))
		if err != nil {
			return err
		}
		if err := p.PrintObj(obj, out); err != nil {
			return fmt.Errorf("print: %w", err)
		}
	}
	return errors.Join(errs...)
}

func dryRunSuffix(mode string) string {
	switch mode {
	case "client":
		return " (dry run)"
	case "server":
		return " (server dry run)"
	}
	return ""
}

// applyOne creates or patches one object and says what it did ("created",
// "configured", "unchanged"; on error, what it was doing) with the resulting object.
func (c *applyCmd) applyOne(ctx context.Context, cn *conn, r metav1.APIResource, obj *unstructured.Unstructured) (string, *unstructured.Unstructured, error) {
	raw, err := doRaw(ctx, cn.request("GET", r, false, obj.GetName()))
	if apierrors.IsNotFound(err) {
		if err := setLastApplied(obj); err != nil {
			return "creating", nil, err
		}
		if c.DryRun == "client" {
			return "created", obj, nil
		}
		body, err := obj.MarshalJSON()
		if err != nil {
			return "creating", nil, fmt.Errorf("encode %s: %w", obj.GetName(), err)
		}
		stored, err := c.write(ctx, cn.request("POST", r, false, "").SetHeader("Content-Type", "application/json"), body, r, obj.GetName())
		return "created", stored, err
	}
	if err != nil {
		return "retrieving current configuration of", nil, fmt.Errorf("get %s %q: %w", r.Name, obj.GetName(), err)
	}
	current := &unstructured.Unstructured{}
	if err := current.UnmarshalJSON(raw); err != nil {
		return "applying", nil, fmt.Errorf("decode %s %q: %w", r.Name, obj.GetName(), err)
	}
	pt, patch, err := applyPatch(obj, current, c.Overwrite)
	if err != nil {
		return "applying patch to", nil, err
	}
	if string(patch) == "{}" {
		return "unchanged", current, nil
	}
	if c.DryRun == "client" {
		return "configured", obj, nil
	}
	req := cn.request("PATCH", r, false, obj.GetName()).SetHeader("Content-Type", string(pt))
	stored, err := c.write(ctx, req, patch, r, obj.GetName())
	return "configured", stored, err
}

// write sends body (an object or a patch) with req, adding dryRun=All for
// --dry-run=server, and returns what the server answered.
func (c *applyCmd) write(ctx context.Context, req *rest.Request, body []byte, r metav1.APIResource, name string) (*unstructured.Unstructured, error) {
	if c.DryRun == "server" {
		req = req.Param("dryRun", metav1.DryRunAll)
	}
	raw, err := doRaw(ctx, req.Body(body))
	if err != nil {
		return nil, err
	}
	return decodeObject(raw, r.Name, name)
}

// lastAppliedAnnotation is kubectl's annotation holding the applied configuration.
const lastAppliedAnnotation = corev1.LastAppliedConfigAnnotation

// modifiedConfiguration is what kubectl's apply records and compares: obj encoded as
// JSON without the last-applied annotation, and (when annotate is set) obj encoded
// again with that encoding as its annotation. obj's annotations are left as they were.
// The encoding matches kubectl's byte for byte (sorted keys, a trailing newline, an
// empty annotations map kept), so the two tools see each other's annotation as equal.
func modifiedConfiguration(obj *unstructured.Unstructured, annotate bool) ([]byte, error) {
	annots := obj.GetAnnotations()
	if annots == nil {
		annots = map[string]string{}
	}
	original, had := annots[lastAppliedAnnotation]
	delete(annots, lastAppliedAnnotation)
	obj.SetAnnotations(annots)
	defer func() {
		if had {
			annots[lastAppliedAnnotation] = original
		}
		obj.SetAnnotations(annots)
	}()
	modified, err := runtime.Encode(unstructured.UnstructuredJSONScheme, obj)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", obj.GetName(), err)
	}
	if !annotate {
		return modified, nil
	}
	annots[lastAppliedAnnotation] = string(modified)
	obj.SetAnnotations(annots)
	modified, err = runtime.Encode(unstructured.UnstructuredJSONScheme, obj)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", obj.GetName(), err)
	}
	delete(annots, lastAppliedAnnotation)
	return modified, nil
}

// setLastApplied records obj's own configuration in its last-applied annotation, as
// apply does before it creates an object.
func setLastApplied(obj *unstructured.Unstructured) error {
	modified, err := modifiedConfiguration(obj, false)
	if err != nil {
		return err
	}
	annots := obj.GetAnnotations()
	if annots == nil {
		annots = map[string]string{}
	}
	annots[lastAppliedAnnotation] = string(modified)
	obj.SetAnnotations(annots)
	return nil
}

// applyPatch is the patch that takes current to the file's obj: a three-way merge of
// the last applied configuration (current's annotation), obj with its new annotation,
// and current. Kinds with a Go type in client-go's scheme get a strategic merge patch
// with that type's patch metadata; other kinds a JSON merge patch. "{}" means there
// is nothing to change.
func applyPatch(obj, current *unstructured.Unstructured, overwrite bool) (types.PatchType, []byte, error) {
	modified, err := modifiedConfiguration(obj, true)
	if err != nil {
		return "", nil, err
	}
	original := []byte(current.GetAnnotations()[lastAppliedAnnotation])
	cur, err := runtime.Encode(unstructured.UnstructuredJSONScheme, current)
	if err != nil {
		return "", nil, fmt.Errorf("encode current %s: %w", current.GetName(), err)
	}
	pre := []mergepatch.PreconditionFunc{
		mergepatch.RequireKeyUnchanged("apiVersion"),
		mergepatch.RequireKeyUnchanged("kind"),
		mergepatch.RequireMetadataKeyUnchanged("name"),
	}
	typed, err := scheme.Scheme.New(obj.GroupVersionKind())
	if err != nil {
		patch, err := jsonmergepatch.CreateThreeWayJSONMergePatch(original, modified, cur, pre...)
		if err != nil {
			return "", nil, patchError(err, obj)
		}
		return types.MergePatchType, patch, nil
	}
	meta, err := strategicpatch.NewPatchMetaFromStruct(typed)
	if err != nil {
		return "", nil, fmt.Errorf("patch metadata of %s: %w", obj.GetKind(), err)
	}
	patch, err := strategicpatch.CreateThreeWayMergePatch(original, modified, cur, meta, overwrite, pre...)
	if err != nil {
		return "", nil, patchError(err, obj)
	}
	return types.StrategicMergePatchType, patch, nil
}

func patchError(err error, obj *unstructured.Unstructured) error {
	if mergepatch.IsPreconditionFailed(err) {
		return fmt.Errorf("at least one of apiVersion, kind and name was changed in %s %q", obj.GetKind(), obj.GetName())
	}
	return fmt.Errorf("create patch for %s %q: %w", obj.GetKind(), obj.GetName(), err)
}

// expandFiles replaces each directory of names by the .json, .yaml and .yml files in
// it (and, when recursive, in its subdirectories), in lexical order, as kubectl does.
func expandFiles(names []string, recursive bool) ([]string, error) {
	var out []string
	for _, name := range names {
		if name == "-" {
			out = append(out, name)
			continue
		}
		st, err := os.Stat(name)
		if err != nil {
			return nil, fmt.Errorf("the path %q does not exist", name)
		}
		if !st.IsDir() {
			out = append(out, name)
			continue
		}
		var found []string
		err = filepath.WalkDir(name, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if path != name && !recursive {
					return filepath.SkipDir
				}
				return nil
			}
			switch strings.ToLower(filepath.Ext(path)) {
			case ".json", ".yaml", ".yml":
				found = append(found, path)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", name, err)
		}
		sort.Strings(found)
		out = append(out, found...)
	}
	return out, nil
}
