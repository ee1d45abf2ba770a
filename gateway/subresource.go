package gateway

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubeactor/kubeactor/actors/kinds"
	podpkg "github.com/kubeactor/kubeactor/actors/pod"
	"github.com/kubeactor/kubeactor/persistence"
)

var (
	bindingKind = corev1.SchemeGroupVersion.WithKind("Binding")
	scaleKind   = autoscalingv1.SchemeGroupVersion.WithKind("Scale")
)

// createBinding answers POST pods/{name}/binding and POST namespaces/{ns}/bindings:
// it assigns the pod to the binding's node, once.
func (s *Server) createBinding(c echo.Context, rq *request) error {
	dry, err := dryRunOf(c)
	if err != nil {
		return err
	}
	obj, err := s.decodeRequest(c, bindingKind, &corev1.Binding{})
	if err != nil {
		return err
	}
	b := obj.(*corev1.Binding)
	if b.Namespace == "" {
		b.Namespace = rq.namespace
	}
	if rq.namespace == "" {
		rq.namespace = b.Namespace
	}
	if b.Namespace != rq.namespace {
		return apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	if rq.name != "" && b.Name != rq.name {
		return apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", b.Name, rq.name))
	}
	var errs field.ErrorList
	if b.Name == "" {
		errs = append(errs, field.Required(field.NewPath("metadata", "name"), "name or generateName is required"))
	}
	if b.Target.Name == "" {
		errs = append(errs, field.Required(field.NewPath("target", "name"), ""))
	}
	if b.Target.Kind != "" && b.Target.Kind != "Node" {
		errs = append(errs, field.NotSupported(field.NewPath("target", "kind"), b.Target.Kind, []string{"Node"}))
	}
	if len(errs) > 0 {
		return apierrors.NewInvalid(bindingKind.GroupKind(), b.Name, errs)
	}
	pods, ok := kinds.Lookup("pods")
	if !ok {
		return fmt.Errorf("bind pod %s: no pods resource", b.Name)
	}
	prq := &request{res: pods, namespace: b.Namespace, name: b.Name, sub: "binding"}
	c.Set(requestKey, prq)
	_, err = s.guaranteedUpdate(c.Request().Context(), prq, modeRaw, dry, func(cur *persistence.Item) (runtime.Object, int64, error) {
		pod, ok := cur.Object().(*corev1.Pod)
		if !ok {
			return nil, 0, fmt.Errorf("bind pod %s: stored object is a %T", b.Name, cur.Object())
		}
		next, err := podpkg.Bind(pod, b, s.now())
		if err != nil {
			return nil, 0, fmt.Errorf("bind pod %s: %w", b.Name, err)
		}
		pre, err := parseRevision(b.ResourceVersion)
		if err != nil {
			return nil, 0, err
		}
		return next, pre, nil
	})
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusCreated, &metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusSuccess, Code: http.StatusCreated,
	})
}

// finalize answers PUT namespaces/{name}/finalize: it replaces spec.finalizers only.
func (s *Server) finalize(c echo.Context, rq *request) error {
	obj, dry, err := s.decodeWrite(c, rq)
	if err != nil {
		return err
	}
	in, ok := obj.(*corev1.Namespace)
	if !ok {
		return apierrors.NewBadRequest("finalize takes a Namespace")
	}
	if in.Name != rq.name {
		return apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", in.Name, rq.name))
	}
	pre, err := parseRevision(in.ResourceVersion)
	if err != nil {
		return err
	}
	stored, err := s.guaranteedUpdate(c.Request().Context(), rq, modeRaw, dry, func(cur *persistence.Item) (runtime.Object, int64, error) {
		ns := cur.Object().DeepCopyObject().(*corev1.Namespace)
		ns.Spec.Finalizers = in.Spec.Finalizers
		return ns, pre, nil
	})
	if err != nil {
		return err
	}
	return s.writeStored(c, rq, http.StatusOK, stored)
}

// scaleOf is the autoscaling/v1 Scale view of a replication controller.
func scaleOf(rc *corev1.ReplicationController) *autoscalingv1.Scale {
	sc := &autoscalingv1.Scale{
		TypeMeta: metav1.TypeMeta{Kind: "Scale", APIVersion: "autoscaling/v1"},
		ObjectMeta: metav1.ObjectMeta{
			Name: rc.Name, Namespace: rc.Namespace, UID: rc.UID,
			ResourceVersion: rc.ResourceVersion, CreationTimestamp: rc.CreationTimestamp,
		},
		Status: autoscalingv1.ScaleStatus{Replicas: rc.Status.Replicas},
	}
	if rc.Spec.Replicas != nil {
		sc.Spec.Replicas = *rc.Spec.Replicas
	} else {
		sc.Spec.Replicas = 1
	}
	if len(rc.Spec.Selector) > 0 {
		sc.Status.Selector = labels.SelectorFromSet(rc.Spec.Selector).String()
	}
	return sc
}

// rcOf reads a stored replication controller.
func rcOf(it *persistence.Item) (*corev1.ReplicationController, error) {
	rc, ok := it.Object().(*corev1.ReplicationController)
	if !ok {
		return nil, fmt.Errorf("scale: %s is a %T, not a replication controller", it.Key.Name, it.Object())
	}
	return rc, nil
}

// getScale answers GET replicationcontrollers/{name}/scale.
func (s *Server) getScale(c echo.Context, rq *request) error {
	it, err := s.store.Get(rq.key())
	if err != nil {
		return fmt.Errorf("get scale %s: %w", rq.name, err)
	}
	rc, err := rcOf(it)
	if err != nil {
		return err
	}
	return writeObject(c, http.StatusOK, scaleOf(rc))
}

// updateScale answers PUT replicationcontrollers/{name}/scale.
func (s *Server) updateScale(c echo.Context, rq *request) error {
	obj, err := s.decodeRequest(c, scaleKind, &autoscalingv1.Scale{})
	if err != nil {
		return err
	}
	sc := obj.(*autoscalingv1.Scale)
	if sc.Name != rq.name {
		return apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", sc.Name, rq.name))
	}
	return s.scaleTo(c, rq, func(*persistence.Item) (*autoscalingv1.Scale, error) { return sc, nil })
}

// patchScale answers PATCH replicationcontrollers/{name}/scale: the patch applies to
// the Scale view.
func (s *Server) patchScale(c echo.Context, rq *request) error {
	pt, err := patchType(c)
	if err != nil {
		return err
	}
	body, err := readBody(c.Request(), s.maxBody)
	if err != nil {
		return err
	}
	return s.scaleTo(c, rq, func(cur *persistence.Item) (*autoscalingv1.Scale, error) {
		rc, err := rcOf(cur)
		if err != nil {
			return nil, err
		}
		orig, err := json.Marshal(scaleOf(rc))
		if err != nil {
			return nil, fmt.Errorf("encode scale: %w", err)
		}
		patched, err := applyPatch(pt, orig, body, &autoscalingv1.Scale{})
		if err != nil {
			return nil, err
		}
		obj, err := decodeBody(c, mediaJSON, patched, scaleKind, &autoscalingv1.Scale{})
		if err != nil {
			return nil, err
		}
		return obj.(*autoscalingv1.Scale), nil
	})
}

// scaleTo sets the replication controller's spec.replicas from the Scale that want
// computes from the current state, and answers the new Scale.
func (s *Server) scaleTo(c echo.Context, rq *request, want func(*persistence.Item) (*autoscalingv1.Scale, error)) error {
	dry, err := dryRunOf(c)
	if err != nil {
		return err
	}
	stored, err := s.guaranteedUpdate(c.Request().Context(), rq, modeMain, dry, func(cur *persistence.Item) (runtime.Object, int64, error) {
		sc, err := want(cur)
		if err != nil {
			return nil, 0, err
		}
		if sc.Spec.Replicas < 0 {
			return nil, 0, apierrors.NewInvalid(scaleKind.GroupKind(), rq.name, field.ErrorList{
				field.Invalid(field.NewPath("spec", "replicas"), sc.Spec.Replicas, "must be greater than or equal to 0")})
		}
		var pre int64
		if rv := sc.ResourceVersion; rv != "" && rv != strconv.FormatInt(cur.Revision, 10) {
			if pre, err = parseRevision(rv); err != nil {
				return nil, 0, err
			}
		}
		rc, err := rcOf(cur)
		if err != nil {
			return nil, 0, err
		}
		rc = rc.DeepCopy()
		replicas := sc.Spec.Replicas
		rc.Spec.Replicas = &replicas
		return rc, pre, nil
	})
	if err != nil {
		return err
	}
	rc, ok := stored.(*corev1.ReplicationController)
	if !ok {
		return fmt.Errorf("scale %s: stored a %T", rq.name, stored)
	}
	return writeObject(c, http.StatusOK, scaleOf(rc))
}
