package gateway

import (
	"bytes"
	"context"
	"fmt"
	"mime"
	"net/http"
	"strconv"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubeactor/kubeactor/actors"
	"github.com/kubeactor/kubeactor/actors/kinds"
	"github.com/kubeactor/kubeactor/persistence"
	"github.com/kubeactor/kubeactor/persistence/command"
)

// Patch content types. The book spells merge patch "merge-json-patch"; both work.
const (
	patchJSON           = "application/json-patch+json"
	patchMerge          = "application/merge-patch+json"
	patchMergeBook      = "application/merge-json-patch+json"
	patchStrategicMerge = "application/strategic-merge-patch+json"
	patchApply          = "application/apply-patch+yaml"
)

// maxUpdateAttempts bounds the retries of an update without a client precondition.
const maxUpdateAttempts = 16

// maxGenerateNameAttempts bounds the retries of a create whose generated name was taken.
const maxGenerateNameAttempts = 8

func newUID() string { return uuid.New().String() }

func kindOf(r *kinds.Resource) schema.GroupVersionKind {
	return kinds.GroupVersion.WithKind(r.Kind)
}

// dryRunOf reads ?dryRun=; only All is defined.
func dryRunOf(c echo.Context) (bool, error) {
	values := c.QueryParams()["dryRun"]
	for _, v := range values {
		if v != metav1.DryRunAll {
			return false, apierrors.NewBadRequest(fmt.Sprintf("dryRun: Unsupported value: %q: supported values: \"All\"", v))
		}
	}
	return len(values) > 0, nil
}

// decodeRequest reads and decodes the request body into a new object of kind want.
func (s *Server) decodeRequest(c echo.Context, want schema.GroupVersionKind, into runtime.Object) (runtime.Object, error) {
	body, err := readBody(c.Request(), s.maxBody)
	if err != nil {
		return nil, err
	}
	return decodeBody(c, c.Request().Header.Get(echo.HeaderContentType), body, want, into)
}

// checkNamespace defaults the object's namespace from the path and refuses a
// different one, as the real server does.
func checkNamespace(rq *request, m metav1.Object) error {
	if !rq.res.Namespaced {
		m.SetNamespace("")
		return nil
	}
	if m.GetNamespace() == "" {
		m.SetNamespace(rq.namespace)
	}
	if m.GetNamespace() != rq.namespace {
		return apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	return nil
}

// decodeWrite reads a write's dryRun option and its body, as the resource's kind.
func (s *Server) decodeWrite(c echo.Context, rq *request) (runtime.Object, bool, error) {
	dry, err := dryRunOf(c)
	if err != nil {
		return nil, false, err
	}
	obj, err := s.decodeRequest(c, kindOf(rq.res), rq.res.New())
	return obj, dry, err
}

// create answers POST on a collection.
func (s *Server) create(c echo.Context, rq *request) error {
	if rq.res.Kind == "Binding" {
		return s.createBinding(c, rq)
	}
	obj, dry, err := s.decodeWrite(c, rq)
	if err != nil {
		return err
	}
	m, err := metaOf(obj)
	if err != nil {
		return err
	}
	if rq.res.Namespaced && rq.namespace == "" { // POST /api/v1/{res}
		rq.namespace = m.GetNamespace()
		if rq.namespace == "" {
			rq.namespace = metav1.NamespaceDefault
		}
	}
	if err := checkNamespace(rq, m); err != nil {
		return err
	}
	stored, err := s.createObject(c.Request().Context(), rq, obj, dry)
	if err != nil {
		return err
	}
	return s.writeStored(c, rq, http.StatusCreated, stored)
}

// createObject prepares a decoded object for create (kinds.PrepareCreate: system
// fields, defaults, validation), then asks its actor to admit and create it (a dry
// run: to admit it and answer what it would store).
func (s *Server) createObject(ctx context.Context, rq *request, obj runtime.Object, dry bool) (runtime.Object, error) {
	r := rq.res
	m, err := metaOf(obj)
	if err != nil {
		return nil, err
	}
	ctx = writeContext(ctx, rq, dry)
	generated := m.GetName() == "" && m.GetGenerateName() != ""
	for attempt := 1; ; attempt++ {
		if generated {
			m.SetName(m.GetGenerateName() + rand.String(5))
		}
		rq.name = m.GetName()
		if err := kinds.PrepareCreate(r, obj, types.UID(newUID()), s.now()); err != nil {
			return nil, err
		}
		setKind(obj)
		sys, err := s.system()
		if err != nil {
			return nil, err
		}
		stored, err := sys.Create(ctx, rq.key(), obj)
		if err == nil {
			return stored, nil
		}
		if generated && isAlreadyExists(err) && attempt < maxGenerateNameAttempts {
			continue
		}
		return nil, fmt.Errorf("create %s %s: %w", r.SingularName, rq.name, err)
	}
}

// writeContext is ctx for the actors' write on behalf of rq: its subresource, and
// whether it is a dry run (the request's user is set for every request, server.go).
func writeContext(ctx context.Context, rq *request, dry bool) context.Context {
	if rq.sub != "" {
		ctx = actors.WithSubresource(ctx, rq.sub)
	}
	if dry {
		ctx = actors.WithDryRun(ctx)
	}
	return ctx
}

// updateMode says how an update is prepared and validated (kinds.PrepareUpdate).
type updateMode = kinds.UpdateMode

const (
	modeMain   = kinds.UpdateMain   // the resource itself
	modeStatus = kinds.UpdateStatus // the status subresource
	modeRaw    = kinds.UpdateRaw    // a subresource that changed exactly what it may (binding, finalize)
)

// tryUpdate computes the new object from the current item (whose Object is shared:
// copy before changing it) and returns the client's precondition (0 for none).
type tryUpdate func(cur *persistence.Item) (obj runtime.Object, precondition int64, err error)

// guaranteedUpdate reads the current object, computes the new one, prepares and
// validates it, and asks the owning actor to admit and store it (a dry run: to admit
// it and answer what it would store) with the read revision as the precondition.
// Without a client precondition it retries on conflict.
func (s *Server) guaranteedUpdate(ctx context.Context, rq *request, mode updateMode, dry bool, try tryUpdate) (runtime.Object, error) {
	ctx = writeContext(ctx, rq, dry)
	for attempt := 1; ; attempt++ {
		cur, err := s.store.Get(rq.key())
		if err != nil {
			return nil, fmt.Errorf("update %s %s: %w", rq.res.SingularName, rq.name, err)
		}
		obj, pre, err := try(cur)
		if err != nil {
			return nil, err
		}
		unconditional := pre == 0
		if unconditional {
			pre = cur.Revision
		} else if pre != cur.Revision {
			return nil, apierrors.NewConflict(schema.GroupResource{Resource: rq.res.Name}, rq.name, errModified)
		}
		// cur.Object is the stored object, shared: PrepareUpdate only reads it and
		// copies what obj takes of it.
		if err := kinds.PrepareUpdate(rq.res, mode, obj, cur.Object(), pre); err != nil {
			return nil, err
		}
		setKind(obj)
		sys, err := s.system()
		if err != nil {
			return nil, err
		}
		stored, err := sys.Update(ctx, rq.key(), obj, command.Preconditions{ResourceVersion: pre})
		if err == nil {
			return stored, nil
		}
		if unconditional && isConflict(err) && attempt < maxUpdateAttempts {
			continue
		}
		return nil, fmt.Errorf("update %s %s: %w", rq.res.SingularName, rq.name, err)
	}
}

// modeOf is the update mode of a route.
func modeOf(rq *request) updateMode {
	if rq.sub == "status" {
		return modeStatus
	}
	return modeMain
}

// update answers PUT on an object or its status.
func (s *Server) update(c echo.Context, rq *request) error {
	obj, dry, err := s.decodeWrite(c, rq)
	if err != nil {
		return err
	}
	m, err := metaOf(obj)
	if err != nil {
		return err
	}
	if m.GetName() != rq.name {
		return apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", m.GetName(), rq.name))
	}
	if err := checkNamespace(rq, m); err != nil {
		return err
	}
	pre, err := parseRevision(m.GetResourceVersion())
	if err != nil {
		return err
	}
	if rq.res.Default != nil {
		rq.res.Default(obj)
	}
	stored, err := s.guaranteedUpdate(c.Request().Context(), rq, modeOf(rq), dry, func(*persistence.Item) (runtime.Object, int64, error) {
		if pre != 0 {
			return obj, pre, nil // a conditional update is tried once: no retry needs the body again
		}
		return obj.DeepCopyObject(), pre, nil
	})
	if err != nil {
		return err
	}
	return s.writeStored(c, rq, http.StatusOK, stored)
}

// patchType reads and checks the patch's content type.
func patchType(c echo.Context) (string, error) {
	ct := c.Request().Header.Get(echo.HeaderContentType)
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return "", unsupportedMediaType(ct)
	}
	switch mt {
	case patchJSON, patchMerge, patchMergeBook, patchStrategicMerge:
		return mt, nil
	default:
		return "", unsupportedMediaType(ct)
	}
}

// applyPatch applies a patch of type pt to the JSON document orig; schema is an
// object of the document's Go type (for strategic merge patch).
func applyPatch(pt string, orig, patch []byte, schemaObj interface{}) ([]byte, error) {
	switch pt {
	case patchJSON:
		p, err := jsonpatch.DecodePatch(patch)
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid JSON patch: %v", err))
		}
		out, err := p.Apply(orig)
		if err != nil {
			return nil, apierrors.NewInvalid(schema.GroupKind{}, "", field.ErrorList{field.Invalid(field.NewPath("patch"), string(patch), err.Error())})
		}
		return out, nil
	case patchMerge, patchMergeBook:
		out, err := jsonpatch.MergePatch(orig, patch)
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid merge patch: %v", err))
		}
		return out, nil
	case patchStrategicMerge:
		out, err := strategicpatch.StrategicMergePatch(orig, patch, schemaObj)
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid strategic merge patch: %v", err))
		}
		return out, nil
	default:
		return nil, unsupportedMediaType(pt)
	}
}

// patch answers PATCH on an object or its status: the patch is applied to the
// current object, retried on conflict.
func (s *Server) patch(c echo.Context, rq *request) error {
	pt, err := patchType(c)
	if err != nil {
		return err
	}
	dry, err := dryRunOf(c)
	if err != nil {
		return err
	}
	body, err := readBody(c.Request(), s.maxBody)
	if err != nil {
		return err
	}
	want := kindOf(rq.res)
	stored, err := s.guaranteedUpdate(c.Request().Context(), rq, modeOf(rq), dry, func(cur *persistence.Item) (runtime.Object, int64, error) {
		patched, err := applyPatch(pt, cur.JSON(), body, rq.res.New())
		if err != nil {
			return nil, 0, err
		}
		obj, err := decodeBody(c, mediaJSON, patched, want, rq.res.New())
		if err != nil {
			return nil, 0, err
		}
		m, err := metaOf(obj)
		if err != nil {
			return nil, 0, err
		}
		var pre int64
		if rv := m.GetResourceVersion(); rv != strconv.FormatInt(cur.Revision, 10) {
			if pre, err = parseRevision(rv); err != nil {
				return nil, 0, err
			}
		}
		if rq.res.Default != nil {
			rq.res.Default(obj)
		}
		return obj, pre, nil
	})
	if err != nil {
		return err
	}
	return s.writeStored(c, rq, http.StatusOK, stored)
}

// deleteOptionsOf reads DeleteOptions from the query and then the body (which wins).
func deleteOptionsOf(c echo.Context, max int64) (*metav1.DeleteOptions, actors.DeleteOptions, error) {
	opts := &metav1.DeleteOptions{}
	var out actors.DeleteOptions
	if err := paramCodec.DecodeParameters(c.QueryParams(), kinds.GroupVersion, opts); err != nil {
		return nil, out, apierrors.NewBadRequest(fmt.Sprintf("invalid delete options: %v", err))
	}
	body, err := readBody(c.Request(), max)
	if err != nil {
		return nil, out, err
	}
	if len(bytes.TrimSpace(body)) > 0 {
		if err := decodeOptions(c.Request().Header.Get(echo.HeaderContentType), body, opts); err != nil {
			return nil, out, apierrors.NewBadRequest(fmt.Sprintf("invalid delete options: %v", err))
		}
	}
	if opts.OrphanDependents != nil && opts.PropagationPolicy != nil {
		return nil, out, apierrors.NewBadRequest("orphanDependents and propagationPolicy cannot both be set")
	}
	if opts.GracePeriodSeconds != nil && *opts.GracePeriodSeconds < 0 {
		zero := int64(0)
		opts.GracePeriodSeconds = &zero
	}
	out.GracePeriodSeconds = opts.GracePeriodSeconds
	switch {
	case opts.PropagationPolicy != nil:
		out.PropagationPolicy = string(*opts.PropagationPolicy)
	case opts.OrphanDependents != nil && *opts.OrphanDependents:
		out.PropagationPolicy = string(metav1.DeletePropagationOrphan)
	case opts.OrphanDependents != nil:
		out.PropagationPolicy = string(metav1.DeletePropagationBackground)
	}
	if p := opts.Preconditions; p != nil {
		if p.UID != nil {
			out.Preconditions.UID = *p.UID
		}
		if p.ResourceVersion != nil {
			rv, err := parseRevision(*p.ResourceVersion)
			if err != nil {
				return nil, out, err
			}
			out.Preconditions.ResourceVersion = rv
		}
	}
	return opts, out, nil
}

// delete answers DELETE on one object.
func (s *Server) delete(c echo.Context, rq *request) error {
	dry, err := dryRunOf(c)
	if err != nil {
		return err
	}
	_, opts, err := deleteOptionsOf(c, s.maxBody)
	if err != nil {
		return err
	}
	sys, err := s.system()
	if err != nil {
		return err
	}
	obj, gone, err := sys.Delete(writeContext(c.Request().Context(), rq, dry), rq.key(), opts)
	if err != nil {
		return fmt.Errorf("delete %s %s: %w", rq.res.SingularName, rq.name, err)
	}
	if !gone || rq.res.DeleteReturnsObject {
		return writeObject(c, http.StatusOK, obj)
	}
	details := &metav1.StatusDetails{Name: rq.name, Kind: rq.res.Name}
	if m, err := meta.Accessor(obj); err == nil {
		details.UID = m.GetUID()
	}
	return writeJSON(c, http.StatusOK, &metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusSuccess, Details: details,
	})
}

// deleteCollection answers DELETE on a collection: every selected object is deleted
// and the list of them is returned.
func (s *Server) deleteCollection(c echo.Context, rq *request) error {
	dry, err := dryRunOf(c)
	if err != nil {
		return err
	}
	lopts, err := listOptions(c)
	if err != nil {
		return err
	}
	_, opts, err := deleteOptionsOf(c, s.maxBody)
	if err != nil {
		return err
	}
	sel, err := parseSelection(rq.res, lopts.LabelSelector, lopts.FieldSelector, "")
	if err != nil {
		return err
	}
	snap := s.store.Snapshot(rq.res.Name)
	var keys []persistence.Key
	snap.Ascend(rq.namespace, "", func(it *persistence.Item) bool {
		if sel.selects(it) {
			keys = append(keys, it.Key)
		}
		return true
	})
	var deleted []runtime.Object
	ctx := writeContext(c.Request().Context(), rq, dry)
	sys, err := s.system()
	if err != nil {
		return err
	}
	for _, k := range keys {
		obj, _, err := sys.Delete(ctx, k, opts)
		if isNotFound(err) {
			continue
		}
		if err != nil {
			item := &request{res: rq.res, namespace: k.Namespace, name: k.Name}
			c.Set(requestKey, item)
			return fmt.Errorf("delete collection %s: %w", rq.res.Name, err)
		}
		deleted = append(deleted, obj)
	}
	list := rq.res.NewList()
	if err := meta.SetList(list, deleted); err != nil {
		return fmt.Errorf("delete collection %s: %w", rq.res.Name, err)
	}
	if lm, err := meta.ListAccessor(list); err == nil {
		lm.SetResourceVersion(strconv.FormatInt(s.store.Revision(), 10))
	}
	return writeObject(c, http.StatusOK, list)
}
