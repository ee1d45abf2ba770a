package replication

import (
	"cmp"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeactor/kubeactor/actors/pod"
)

// BurstReplicas caps the creates, and separately the deletes, of one sync.
const BurstReplicas = 500

// maxNameTries bounds the draws of a fresh pod name before a create is left to the next sync.
const maxNameTries = 16

// Kind is the group-version-kind written in the ownerReferences of an RC's pods.
var Kind = corev1.SchemeGroupVersion.WithKind("ReplicationController")

// Suffix returns a random pod-name suffix (5 characters in Kubernetes); the actor
// passes one backed by its own random source, tests a deterministic one.
type Suffix func() string

// Plan is what one sync of an RC does. Creates, deletes and patches are independent
// writes; Status is written when StatusChanged.
type Plan struct {
	Create  []*corev1.Pod `json:"create,omitempty"`  // from the template, with a controller ref to the RC
	Delete  []string      `json:"delete,omitempty"`  // names, least valuable first
	Adopt   []PodPatch    `json:"adopt,omitempty"`   // orphans the RC takes over
	Release []PodPatch    `json:"release,omitempty"` // owned pods whose labels no longer match
	// Expectations replace the actor's after the plan is applied.
	Expectations  Expectations                       `json:"expectations,omitzero"`
	Status        corev1.ReplicationControllerStatus `json:"status"`
	StatusChanged bool                               `json:"statusChanged,omitempty"`
	// Requeue is when to sync again without any event (expectations expiring, a pod
	// becoming available after minReadySeconds); zero when no timer is needed.
	Requeue time.Time `json:"requeue,omitzero"`
	// Waiting says that creates or deletes were held back by pending expectations.
	Waiting bool `json:"waiting,omitempty"`
}

// PodPatch is a strategic merge patch of one pod's ownerReferences. The patch names
// the pod's UID, so it fails if the pod was replaced by another of the same name.
type PodPatch struct {
	Name  string          `json:"name"`
	UID   types.UID       `json:"uid"`
	Patch json.RawMessage `json:"patch"`
}

// Decide is one level-based sync of rc. pods are the pods the actor knows in rc's
// namespace (others are ignored), or only those that are Relevant to rc: Decide
// reads no other; exp are the expectations left by earlier plans; suffix names new
// pods. It keeps spec.replicas active pods matching the selector.
func Decide(rc *corev1.ReplicationController, pods []*corev1.Pod, exp Expectations, suffix Suffix, now time.Time) Plan {
	sel := labels.ValidatedSetSelector(rc.Spec.Selector) // validated by the API: a plain map match
	deleting := rc.DeletionTimestamp != nil
	var plan Plan
	var owned []*corev1.Pod // matching pods that are (or become by this plan) the RC's
	for _, p := range pods {
		if p.Namespace != rc.Namespace {
			continue
		}
		ref := metav1.GetControllerOfNoCopy(p)
		if ref != nil && ref.UID != rc.UID || ref == nil && (deleting || p.DeletionTimestamp != nil) {
			continue // another controller's, or an orphan this RC may not adopt: selector or not
		}
		matches := len(rc.Spec.Selector) > 0 && sel.Matches(labels.Set(p.Labels))
		switch {
		case ref != nil && ref.UID == rc.UID && matches:
			owned = append(owned, p)
		case ref != nil && ref.UID == rc.UID:
			plan.Release = append(plan.Release, releasePatch(p, rc.UID))
		case ref == nil && matches && !deleting && p.DeletionTimestamp == nil:
			plan.Adopt = append(plan.Adopt, adoptPatch(p, rc))
			owned = append(owned, p)
		}
	}
	active := slices.DeleteFunc(slices.Clone(owned), func(p *corev1.Pod) bool { return !isActive(p) })

	plan.Status = status(rc, active, now)
	plan.StatusChanged = statusChanged(rc.Status, plan.Status)
	plan.Requeue = nextAvailable(rc, active, now)
	plan.Expectations = exp

	if deleting {
		return plan
	}
	if !exp.Satisfied(now) {
		plan.Waiting = true
		plan.Requeue = earliest(plan.Requeue, exp.Expiry())
		return plan
	}
	want := int(ptrOr(rc.Spec.Replicas, 1))
	switch diff := len(active) - want; {
	case diff < 0:
		plan.Create = creates(rc, pods, min(-diff, BurstReplicas), suffix)
	case diff > 0:
		slices.SortStableFunc(active, lessValuable(now))
		for _, p := range active[:min(diff, BurstReplicas)] {
			plan.Delete = append(plan.Delete, p.Name)
		}
	}
	plan.Expectations = expect(plan.Create, plan.Delete, now)
	if plan.Expectations.Pending() > 0 {
		plan.Requeue = earliest(plan.Requeue, plan.Expectations.Expiry())
	}
	return plan
}

// Relevant reports whether Decide, DependentsToDelete, NewSlots or
// Expectations.ObserveState can read p for rc: a pod that one of its
// ownerReferences ties to rc, an orphan (no controller: rc may adopt it), or a pod
// named like rc's own (its name is taken). An RC's actor lists only these, and so
// skips the selector match of the other controllers' pods of a large namespace.
func Relevant(rc *corev1.ReplicationController, p *corev1.Pod) bool {
	if p.Namespace != rc.Namespace {
		return false
	}
	if ownedBy(p, rc) || metav1.GetControllerOfNoCopy(p) == nil {
		return true
	}
	return len(p.Name) > len(rc.Name) && p.Name[len(rc.Name)] == '-' && strings.HasPrefix(p.Name, rc.Name)
}

// Settled reports whether plan leaves the RC settled: it writes nothing (no pod to
// create, delete, adopt or release, no status to write), expects nothing and needs no
// timer. Decide on the same RC, pods and expectations at any later time returns the
// same plan again, so a sync may skip it while none of them has changed.
func Settled(plan Plan) bool {
	return len(plan.Create)+len(plan.Delete)+len(plan.Adopt)+len(plan.Release) == 0 &&
		!plan.StatusChanged && plan.Expectations.Pending() == 0 && plan.Requeue.IsZero() && !plan.Waiting
}

// isActive reports whether p counts towards the replicas: not terminating and not
// in a terminal phase.
func isActive(p *corev1.Pod) bool {
	return p.DeletionTimestamp == nil && !pod.Terminal(p)
}

// creates builds n pods from rc's template with fresh names.
func creates(rc *corev1.ReplicationController, pods []*corev1.Pod, n int, suffix Suffix) []*corev1.Pod {
	taken := nameSet(rc.Namespace, pods)
	fresh := make(map[string]bool, n)
	var out []*corev1.Pod
	for range n {
		name := ""
		for range maxNameTries {
			if c := rc.Name + "-" + suffix(); !fresh[c] && !taken(c) {
				name = c
				break
			}
		}
		if name == "" {
			break // the next sync tries again
		}
		fresh[name] = true
		out = append(out, NewPod(rc, name))
	}
	return out
}

// nameSet tells whether a pod of namespace ns is named so. Pods listed from the store
// come ordered by namespace and name, and are searched in place; any other order is
// indexed first.
func nameSet(ns string, pods []*corev1.Pod) func(string) bool {
	byKey := func(p *corev1.Pod, key [2]string) int {
		if c := strings.Compare(p.Namespace, key[0]); c != 0 {
			return c
		}
		return strings.Compare(p.Name, key[1])
	}
	sorted := slices.IsSortedFunc(pods, func(a, b *corev1.Pod) int { return byKey(a, [2]string{b.Namespace, b.Name}) })
	if sorted {
		return func(name string) bool {
			_, found := slices.BinarySearchFunc(pods, [2]string{ns, name}, byKey)
			return found
		}
	}
	names := make(map[string]bool, len(pods))
	for _, p := range pods {
		if p.Namespace == ns {
			names[p.Name] = true
		}
	}
	return func(name string) bool { return names[name] }
}

// NewPod builds the pod named name that rc creates from its template.
func NewPod(rc *corev1.ReplicationController, name string) *corev1.Pod {
	p := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name:            name,
			Namespace:       rc.Namespace,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(rc, Kind)},
		},
	}
	if t := rc.Spec.Template; t != nil {
		p.Labels = maps.Clone(t.Labels)
		p.Annotations = maps.Clone(t.Annotations)
		p.Finalizers = slices.Clone(t.Finalizers)
		t.Spec.DeepCopyInto(&p.Spec)
	}
	return p
}

// status is the RC status observed from its active pods.
func status(rc *corev1.ReplicationController, active []*corev1.Pod, now time.Time) corev1.ReplicationControllerStatus {
	st := corev1.ReplicationControllerStatus{
		Replicas:           int32(len(active)),
		ObservedGeneration: rc.Generation,
		Conditions:         rc.Status.Conditions,
	}
	var tmpl labels.ValidatedSetSelector // empty: every pod is fully labelled
	if rc.Spec.Template != nil && !maps.Equal(rc.Spec.Template.Labels, rc.Spec.Selector) {
		// The active pods match the selector; when the template's labels are the
		// selector (the usual RC), they are fully labelled already.
		tmpl = rc.Spec.Template.Labels
	}
	for _, p := range active {
		if tmpl.Matches(labels.Set(p.Labels)) {
			st.FullyLabeledReplicas++
		}
		if c := pod.ReadyCondition(p); c != nil && c.Status == corev1.ConditionTrue {
			st.ReadyReplicas++
			if readyLongEnough(c, rc.Spec.MinReadySeconds, now) {
				st.AvailableReplicas++
			}
		}
	}
	return st
}

func statusChanged(a, b corev1.ReplicationControllerStatus) bool {
	return a.Replicas != b.Replicas || a.FullyLabeledReplicas != b.FullyLabeledReplicas ||
		a.ReadyReplicas != b.ReadyReplicas || a.AvailableReplicas != b.AvailableReplicas ||
		a.ObservedGeneration != b.ObservedGeneration
}

// isAvailable: ready for at least minReady seconds.
func isAvailable(p *corev1.Pod, minReady int32, now time.Time) bool {
	return pod.Ready(p) && readyLongEnough(pod.ReadyCondition(p), minReady, now)
}

// readyLongEnough: the Ready condition c (true) has held for minReady seconds.
func readyLongEnough(c *corev1.PodCondition, minReady int32, now time.Time) bool {
	if minReady == 0 {
		return true
	}
	since := c.LastTransitionTime
	return !since.IsZero() && !now.Before(since.Add(time.Duration(minReady)*time.Second))
}

// nextAvailable is when the next ready pod becomes available; zero when none waits.
func nextAvailable(rc *corev1.ReplicationController, active []*corev1.Pod, now time.Time) time.Time {
	var next time.Time
	if rc.Spec.MinReadySeconds == 0 {
		return next
	}
	for _, p := range active {
		if pod.Ready(p) && !isAvailable(p, rc.Spec.MinReadySeconds, now) {
			if since := pod.ReadyCondition(p).LastTransitionTime; !since.IsZero() {
				next = earliest(next, since.Add(time.Duration(rc.Spec.MinReadySeconds)*time.Second))
			}
		}
	}
	return next
}

// earliest of two times, zero meaning none.
func earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}

func ptrOr[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

// lessValuable orders pods so that the one to delete first comes first, as
// Kubernetes' ActivePods: unscheduled before scheduled; Pending before Unknown before
// Running; not ready before ready; ready for less time before longer; more restarts
// before fewer; newer before older; then by name so that the order is total.
func lessValuable(now time.Time) func(a, b *corev1.Pod) int {
	return func(a, b *corev1.Pod) int {
		if c := cmpBool(a.Spec.NodeName != "", b.Spec.NodeName != ""); c != 0 {
			return c
		}
		if c := cmp.Compare(phaseRank(a.Status.Phase), phaseRank(b.Status.Phase)); c != 0 {
			return c
		}
		ra, rb := pod.Ready(a), pod.Ready(b)
		if c := cmpBool(ra, rb); c != 0 {
			return c
		}
		if ra && rb { // ready more recently goes first
			ta, tb := pod.ReadyCondition(a).LastTransitionTime, pod.ReadyCondition(b).LastTransitionTime
			if !ta.Equal(&tb) {
				return -ta.Compare(tb.Time)
			}
		}
		if c := cmp.Compare(restarts(b), restarts(a)); c != 0 {
			return c
		}
		ca, cb := a.CreationTimestamp, b.CreationTimestamp
		switch {
		case ca.IsZero() != cb.IsZero():
			return cmpBool(!ca.IsZero(), !cb.IsZero()) // no timestamp first
		case !ca.Equal(&cb):
			return -ca.Compare(cb.Time) // newer first
		}
		return cmp.Compare(a.Name, b.Name)
	}
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	default:
		return 1
	}
}

func phaseRank(p corev1.PodPhase) int {
	switch p {
	case corev1.PodPending, "":
		return 0
	case corev1.PodUnknown:
		return 1
	default: // Running
		return 2
	}
}

// restarts is the highest restart count of p's containers.
func restarts(p *corev1.Pod) int32 {
	var n int32
	for _, s := range p.Status.ContainerStatuses {
		n = max(n, s.RestartCount)
	}
	return n
}

// adoptPatch adds rc as controller of p.
func adoptPatch(p *corev1.Pod, rc *corev1.ReplicationController) PodPatch {
	return patch(p, []any{metav1.NewControllerRef(rc, Kind)})
}

// releasePatch removes the ownerReference of uid from p.
func releasePatch(p *corev1.Pod, uid types.UID) PodPatch {
	return patch(p, []any{map[string]any{"$patch": "delete", "uid": uid}})
}

func patch(p *corev1.Pod, refs []any) PodPatch {
	body := map[string]any{"metadata": map[string]any{"ownerReferences": refs, "uid": p.UID}}
	b, err := json.Marshal(body)
	if err != nil {
		panic(err) // maps of strings and owner references always marshal
	}
	return PodPatch{Name: p.Name, UID: p.UID, Patch: b}
}

// RetryAfter is how long an RC waits before it syncs again after n pod writes were
// refused in a row: 1s, doubling, at most ResyncPeriod.
func RetryAfter(n int) time.Duration {
	if n <= 0 {
		return 0
	}
	return min(time.Second<<min(n-1, 10), ResyncPeriod)
}
