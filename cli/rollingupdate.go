package cli

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	sigsyaml "sigs.k8s.io/yaml"
)

// The annotations that make a rolling update resumable (kubectl v1.0).
const (
	annotationPrefix       = "kubectl.kubernetes.io/"
	nextControllerAnnot    = annotationPrefix + "next-controller-id" // on the old RC: the new RC's name
	desiredReplicasAnnot   = annotationPrefix + "desired-replicas"   // on the new RC: the target count
	updateSourceIDAnnot    = annotationPrefix + "update-source-id"   // on the new RC: "<old name>:<old uid>"
	addDeploymentKeyTries  = 3                                       // label attempts per old pod
	addDeploymentKeyDelay0 = 3 * time.Second                         // squared after each failure
)

type rollingUpdateCmd struct {
	clientFlags
	Filename           string        `short:"f" name:"filename" help:"Filename or URL to file to use to create the new replication controller."`
	Image              string        `name:"image" help:"Image to use for upgrading the replication controller."`
	DeploymentLabelKey string        `name:"deployment-label-key" default:"deployment" help:"The key to use to differentiate between two different controllers."`
	UpdatePeriod       time.Duration `name:"update-period" default:"1m0s" help:"Time to wait between updating pods."`
	PollInterval       time.Duration `name:"poll-interval" default:"3s" help:"Time delay between polling controller status after update."`
	Timeout            time.Duration `name:"timeout" default:"5m0s" help:"Max time to wait for a controller to update before giving up."`
	Rollback           bool          `name:"rollback" help:"Abort an existing rollout that is partially rolled out."`
	DryRun             bool          `name:"dry-run" help:"Print the old and new controllers, but make no changes."`
	Args               []string      `arg:"" name:"name" help:"OLD_CONTROLLER_NAME [NEW_CONTROLLER_NAME]."`

	// clock is time.Now and a context-aware sleep unless a test injects its own.
	clock clock
}

// clock is the time source of the update loop.
type clock struct {
	now   func() time.Time
	sleep func(context.Context, time.Duration) error
}

func realClock() clock {
	return clock{now: time.Now, sleep: func(ctx context.Context, d time.Duration) error {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			return nil
		}
	}}
}

func (c *rollingUpdateCmd) Run(g *globals) error {
	return report(g.stderr, c.connectAndRun(context.Background(), g.stdout))
}

func (c *rollingUpdateCmd) connectAndRun(ctx context.Context, out io.Writer) error {
	cfg, err := c.restConfig()
	if err != nil {
		return err
	}
	ns, err := c.namespace()
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("create client: %w", err)
	}
	return c.run(ctx, out, client, ns)
}

// cleanupPolicy is what happens to the old RC once the new one has all replicas.
type cleanupPolicy int

const (
	cleanupDelete cleanupPolicy = iota // delete the old RC
	cleanupRename                      // delete the old RC and give its name to the new one
)

// run is RunRollingUpdate: resolve the old and new RCs, then update.
func (c *rollingUpdateCmd) run(ctx context.Context, out io.Writer, client kubernetes.Interface, ns string) error {
	if c.clock.now == nil {
		c.clock = realClock()
	}
	if err := c.validateArgs(); err != nil {
		return err
	}
	rcs := client.CoreV1().ReplicationControllers(ns)
	u := &updater{rcs: rcs, pods: client.CoreV1().Pods(ns), out: out, clock: c.clock,
		period: c.UpdatePeriod, interval: c.PollInterval, timeout: c.Timeout}
	oldName := c.Args[0]
	oldRc, err := rcs.Get(ctx, oldName, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("get replication controller %q: %w", oldName, err)
	}

	var newRc *corev1.ReplicationController
	existing := false
	keepOldName := false
	if c.Image != "" {
		keepOldName = len(c.Args) == 1
		newName := findNewName(c.Args, oldRc)
		if newName != "" {
			if newRc, err = u.getIfExists(ctx, newName); err != nil {
				return err
			}
		}
		if newRc != nil {
			existing = true
			fmt.Fprintf(out, "Found existing update in progress (%s), resuming.\n", newRc.Name)
		} else {
			if newRc, err = newControllerFromCurrent(oldRc, newName, c.Image, c.DeploymentLabelKey); err != nil {
				return err
			}
			if c.Rollback {
				return fmt.Errorf("could not find %s to rollback", newRc.Name)
			}
		}
		if !c.DryRun {
			oldHash, err := hashObject(oldRc)
			if err != nil {
				return err
			}
			if oldRc, err = u.updateExisting(ctx, oldRc, newRc.Name, c.DeploymentLabelKey, oldHash); err != nil {
				return err
			}
		}
	} else {
		if newRc, err = readControllerFile(c.Filename); err != nil {
			return err
		}
		if newRc.Namespace != "" && newRc.Namespace != ns {
			return fmt.Errorf("the new replication controller must be in namespace %q, not %q", ns, newRc.Namespace)
		}
		newRc.Namespace = ns
		if err := validateUpdate(oldRc, newRc); err != nil {
			return err
		}
		cur, err := u.getIfExists(ctx, newRc.Name)
		if err != nil {
			return err
		}
		if cur != nil {
			existing = true
			newRc = cur
		} else if c.Rollback {
			return fmt.Errorf("could not find %s to rollback", newRc.Name)
		}
	}
	if oldRc.Name == newRc.Name {
		return fmt.Errorf("%s cannot have the same name as the existing ReplicationController %s", newRc.Name, oldRc.Name)
	}
	if !existing && replicasOf(newRc) == 0 {
		newRc.Spec.Replicas = ptrTo(replicasOf(oldRc))
	}
	if c.DryRun {
		return printDryRun(out, oldRc, newRc)
	}

	policy := cleanupDelete
	if keepOldName {
		policy = cleanupRename
	}
	if c.Rollback {
		if oldRc, newRc, err = u.abort(ctx, oldRc, newRc); err != nil {
			return err
		}
		policy = cleanupDelete
	}
	final, err := u.update(ctx, oldRc, newRc, policy)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, final)
	return nil
}

func (c *rollingUpdateCmd) validateArgs() error {
	switch {
	case len(c.Args) > 2:
		return errors.New("usage: rolling-update OLD_CONTROLLER_NAME ([NEW_CONTROLLER_NAME] --image=NEW_CONTAINER_IMAGE | -f NEW_CONTROLLER_SPEC)")
	case c.Filename == "" && c.Image == "":
		return errors.New("must specify --filename or --image for new controller")
	case c.Filename != "" && c.Image != "":
		return errors.New("--filename and --image can not both be specified")
	case c.Filename != "" && len(c.Args) > 1:
		return errors.New("--filename is not allowed with a NEW_CONTROLLER_NAME")
	case c.UpdatePeriod < 0 || c.PollInterval <= 0 || c.Timeout <= 0:
		return errors.New("--update-period must be >= 0, --poll-interval and --timeout > 0")
	}
	return nil
}

// findNewName is the new RC's name: the second argument, else the old RC's
// next-controller-id annotation (an update in progress), else "" (to be hashed).
func findNewName(args []string, oldRc *corev1.ReplicationController) string {
	if len(args) >= 2 {
		return args[1]
	}
	return oldRc.Annotations[nextControllerAnnot]
}

// hashObject is api.HashObject: the md5 of the object's v1 JSON encoding, in hex.
func hashObject(rc *corev1.ReplicationController) (string, error) {
	obj := rc.DeepCopy()
	obj.TypeMeta = metav1.TypeMeta{Kind: "ReplicationController", APIVersion: "v1"}
	data, err := json.Marshal(obj)
	if err != nil {
		return "", fmt.Errorf("hash replication controller %q: %w", rc.Name, err)
	}
	return fmt.Sprintf("%x", md5.Sum(data)), nil
}

// newControllerFromCurrent is CreateNewControllerFromCurrentController: the old RC
// with the new image, named <old>-<hash> unless newName is given, with the
// deployment key set to the hash in its selector and template.
func newControllerFromCurrent(oldRc *corev1.ReplicationController, newName, image, key string) (*corev1.ReplicationController, error) {
	rc := oldRc.DeepCopy()
	if rc.Spec.Template == nil {
		return nil, fmt.Errorf("replication controller %q has no pod template", oldRc.Name)
	}
	switch n := len(rc.Spec.Template.Spec.Containers); {
	case n > 1:
		//lint:ignore ST1005 kubectl's message
		return nil, errors.New("Image update is not supported for multi-container pods")
	case n == 0:
		//lint:ignore ST1005 kubectl's message
		return nil, errors.New("Pod has no containers!")
	}
	rc.Spec.Template.Spec.Containers[0].Image = image
	hash, err := hashObject(rc)
	if err != nil {
		return nil, err
	}
	if newName == "" {
		newName = oldRc.Name + "-" + hash
	}
	rc.ObjectMeta = metav1.ObjectMeta{Name: newName, Namespace: oldRc.Namespace, Labels: oldRc.Labels,
		Annotations: withoutUpdateAnnotations(oldRc.Annotations)}
	rc.Status = corev1.ReplicationControllerStatus{}
	rc.Spec.Selector = withLabel(rc.Spec.Selector, key, hash)
	rc.Spec.Template.Labels = withLabel(rc.Spec.Template.Labels, key, hash)
	return rc, nil
}

// validateUpdate checks a new RC given by file against the old one.
func validateUpdate(oldRc, newRc *corev1.ReplicationController) error {
	if newRc.Name == "" {
		return errors.New("the new replication controller has no name")
	}
	if oldRc.Name == newRc.Name {
		return fmt.Errorf("%s cannot have the same name as the existing ReplicationController %s", newRc.Name, oldRc.Name)
	}
	for k, v := range newRc.Spec.Selector {
		if ov, ok := oldRc.Spec.Selector[k]; ok && ov != v {
			return nil
		}
	}
	return fmt.Errorf("%s must specify a matching key with non-equal value in Selector for %s", newRc.Name, oldRc.Name)
}

// resumeDesired reads an existing new RC's annotations: it must have been created
// from sourceID, and its desired-replicas is the target.
func resumeDesired(rc *corev1.ReplicationController, sourceID string) (int32, error) {
	src, hasSrc := rc.Annotations[updateSourceIDAnnot]
	d, hasDesired := rc.Annotations[desiredReplicasAnnot]
	if !hasSrc || !hasDesired || src != sourceID {
		//lint:ignore ST1005 kubectl's message
		return 0, fmt.Errorf("Missing/unexpected annotations for controller %s, expected %s : %v", rc.Name, sourceID, rc.Annotations)
	}
	n, err := strconv.Atoi(d)
	if err != nil {
		return 0, fmt.Errorf("unable to parse annotation %s=%s for %s: %w", desiredReplicasAnnot, d, rc.Name, err)
	}
	return int32(n), nil
}

// nextStep is one iteration of the one-for-one loop: new up by one, old down by one,
// while the new RC is short of desired and the old one has replicas.
func nextStep(oldReplicas, newReplicas, desired int32) (o, n int32, ok bool) {
	if newReplicas >= desired || oldReplicas == 0 {
		return oldReplicas, newReplicas, false
	}
	return oldReplicas - 1, newReplicas + 1, true
}

// hasDesiredReplicas is ControllerHasDesiredReplicas.
func hasDesiredReplicas(rc *corev1.ReplicationController) bool {
	return rc.Status.ObservedGeneration >= rc.Generation && rc.Status.Replicas == replicasOf(rc)
}

func sourceID(rc *corev1.ReplicationController) string { return fmt.Sprintf("%s:%s", rc.Name, rc.UID) }

func replicasOf(rc *corev1.ReplicationController) int32 {
	if rc.Spec.Replicas == nil {
		return 0
	}
	return *rc.Spec.Replicas
}

func ptrTo[T any](v T) *T { return &v }

func withLabel(m map[string]string, k, v string) map[string]string {
	out := maps.Clone(m)
	if out == nil {
		out = map[string]string{}
	}
	out[k] = v
	return out
}

func withoutUpdateAnnotations(m map[string]string) map[string]string {
	out := maps.Clone(m)
	delete(out, nextControllerAnnot)
	delete(out, desiredReplicasAnnot)
	delete(out, updateSourceIDAnnot)
	if len(out) == 0 {
		return nil
	}
	return out
}

func readControllerFile(name string) (*corev1.ReplicationController, error) {
	var data []byte
	var err error
	if name == "-" {
		data, err = io.ReadAll(os.Stdin)
	} else {
		data, err = os.ReadFile(name)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	var rc corev1.ReplicationController
	if err := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096).Decode(&rc); err != nil {
		return nil, fmt.Errorf("decode %s: %w", name, err)
	}
	if rc.Kind != "ReplicationController" {
		return nil, fmt.Errorf("%s contains a %s, not a ReplicationController", name, rc.Kind)
	}
	return &rc, nil
}

func printDryRun(out io.Writer, oldRc, newRc *corev1.ReplicationController) error {
	fmt.Fprintln(out, "Rolling from:")
	for i, rc := range []*corev1.ReplicationController{oldRc, newRc} {
		if i == 1 {
			fmt.Fprintln(out, "To:")
		}
		obj := rc.DeepCopy()
		obj.TypeMeta = metav1.TypeMeta{Kind: "ReplicationController", APIVersion: "v1"}
		obj.ManagedFields = nil
		b, err := sigsyaml.Marshal(obj)
		if err != nil {
			return fmt.Errorf("encode %s: %w", rc.Name, err)
		}
		out.Write(b) //nolint:errcheck // the command's stdout
	}
	return nil
}

// updater is the RollingUpdater: it talks to the RCs of one namespace.
type updater struct {
	rcs      typedcorev1.ReplicationControllerInterface
	pods     typedcorev1.PodInterface
	out      io.Writer
	clock    clock
	period   time.Duration
	interval time.Duration
	timeout  time.Duration
}

func (u *updater) getIfExists(ctx context.Context, name string) (*corev1.ReplicationController, error) {
	rc, err := u.rcs.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get replication controller %q: %w", name, err)
	}
	return rc, nil
}

// updateExisting is UpdateExistingReplicationController: link the old RC to the new
// one and, if needed, give it the deployment key.
func (u *updater) updateExisting(ctx context.Context, oldRc *corev1.ReplicationController, newName, key, oldHash string) (*corev1.ReplicationController, error) {
	rc, err := u.modify(ctx, oldRc.Name, func(rc *corev1.ReplicationController) {
		if rc.Annotations == nil {
			rc.Annotations = map[string]string{}
		}
		rc.Annotations[nextControllerAnnot] = newName
	})
	if err != nil {
		return nil, err
	}
	if _, ok := rc.Spec.Selector[key]; ok {
		return rc, nil
	}
	return u.addDeploymentKey(ctx, rc, key, oldHash)
}

// addDeploymentKey is AddDeploymentKeyToReplicationController: template, then the
// existing pods, then the selector, then the pods created in between are deleted.
func (u *updater) addDeploymentKey(ctx context.Context, rc *corev1.ReplicationController, key, hash string) (*corev1.ReplicationController, error) {
	if rc.Spec.Template == nil {
		return nil, fmt.Errorf("replication controller %q has no pod template", rc.Name)
	}
	rc, err := u.modify(ctx, rc.Name, func(rc *corev1.ReplicationController) {
		rc.Spec.Template.Labels = withLabel(rc.Spec.Template.Labels, key, hash)
	})
	if err != nil {
		return nil, err
	}
	oldSelector := labels.SelectorFromSet(rc.Spec.Selector).String()
	pods, err := u.pods.List(ctx, metav1.ListOptions{LabelSelector: oldSelector})
	if err != nil {
		return nil, fmt.Errorf("list pods of %q: %w", rc.Name, err)
	}
	for i := range pods.Items {
		if err := u.labelPod(ctx, &pods.Items[i], key, hash); err != nil {
			return nil, err
		}
	}
	if rc, err = u.modify(ctx, rc.Name, func(rc *corev1.ReplicationController) {
		rc.Spec.Selector = withLabel(rc.Spec.Selector, key, hash)
	}); err != nil {
		return nil, err
	}
	pods, err = u.pods.List(ctx, metav1.ListOptions{LabelSelector: oldSelector})
	if err != nil {
		return nil, fmt.Errorf("list pods of %q: %w", rc.Name, err)
	}
	for _, p := range pods.Items {
		if p.Labels[key] == hash {
			continue
		}
		if err := u.pods.Delete(ctx, p.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("delete orphan pod %q: %w", p.Name, err)
		}
	}
	return rc, nil
}

// labelPod adds key=value to a pod, with up to 3 attempts (3s, 9s, 81s apart).
func (u *updater) labelPod(ctx context.Context, pod *corev1.Pod, key, value string) error {
	delay := addDeploymentKeyDelay0
	var err error
	for try := 0; try < addDeploymentKeyTries; try++ {
		if try > 0 {
			if err := u.clock.sleep(ctx, delay); err != nil {
				return err
			}
			delay = time.Duration(delay.Seconds()*delay.Seconds()) * time.Second
			if pod, err = u.pods.Get(ctx, pod.Name, metav1.GetOptions{}); err != nil {
				return fmt.Errorf("get pod %q: %w", pod.Name, err)
			}
		}
		if pod.Labels[key] == value {
			return nil
		}
		p := pod.DeepCopy()
		p.Labels = withLabel(p.Labels, key, value)
		if _, err = u.pods.Update(ctx, p, metav1.UpdateOptions{}); err == nil {
			return nil
		}
	}
	return fmt.Errorf("label pod %q with %s=%s: %w", pod.Name, key, value, err)
}

// abort is AbortRollingUpdate: the update runs backwards, from the new RC to the
// old one, with the old RC's target taken from the new one.
func (u *updater) abort(ctx context.Context, oldRc, newRc *corev1.ReplicationController) (*corev1.ReplicationController, *corev1.ReplicationController, error) {
	desired, ok := newRc.Annotations[desiredReplicasAnnot]
	if !ok {
		desired = strconv.Itoa(int(replicasOf(oldRc) + replicasOf(newRc)))
	}
	target, err := u.modify(ctx, oldRc.Name, func(rc *corev1.ReplicationController) {
		if rc.Annotations == nil {
			rc.Annotations = map[string]string{}
		}
		rc.Annotations[desiredReplicasAnnot] = desired
		rc.Annotations[updateSourceIDAnnot] = sourceID(newRc)
	})
	if err != nil {
		return nil, nil, err
	}
	return newRc, target, nil
}

// update is RollingUpdater.Update: it returns the name the updated RC ends with.
func (u *updater) update(ctx context.Context, oldRc, newRc *corev1.ReplicationController, policy cleanupPolicy) (string, error) {
	desired := replicasOf(newRc)
	src := sourceID(oldRc)
	cur, err := u.getIfExists(ctx, newRc.Name)
	if err != nil {
		return "", err
	}
	if cur != nil {
		if desired, err = resumeDesired(cur, src); err != nil {
			return "", err
		}
		fmt.Fprintf(u.out, "Found desired replicas. Continuing update with existing controller %s.\n", cur.Name)
		newRc = cur
	} else {
		if desired <= 0 {
			return "", fmt.Errorf("invalid controller spec for %s; required: > 0 replicas, actual: %d", newRc.Name, desired)
		}
		fmt.Fprintf(u.out, "Creating %s\n", newRc.Name)
		rc := newRc.DeepCopy()
		if rc.Annotations == nil {
			rc.Annotations = map[string]string{}
		}
		rc.Annotations[desiredReplicasAnnot] = strconv.Itoa(int(desired))
		rc.Annotations[updateSourceIDAnnot] = src
		rc.Spec.Replicas = ptrTo(int32(0))
		if newRc, err = u.rcs.Create(ctx, rc, metav1.CreateOptions{}); err != nil {
			return "", fmt.Errorf("create replication controller %q: %w", rc.Name, err)
		}
	}

	for {
		o, n, ok := nextStep(replicasOf(oldRc), replicasOf(newRc), desired)
		if !ok {
			break
		}
		fmt.Fprintf(u.out, "At beginning of loop: %s replicas: %d, %s replicas: %d\n", oldRc.Name, o, newRc.Name, n)
		fmt.Fprintf(u.out, "Updating %s replicas: %d, %s replicas: %d\n", oldRc.Name, o, newRc.Name, n)
		if newRc, err = u.scaleAndWait(ctx, newRc.Name, n); err != nil {
			return "", err
		}
		if err := u.clock.sleep(ctx, u.period); err != nil {
			return "", err
		}
		if oldRc, err = u.scaleAndWait(ctx, oldRc.Name, o); err != nil {
			return "", err
		}
		fmt.Fprintf(u.out, "At end of loop: %s replicas: %d, %s replicas: %d\n", oldRc.Name, replicasOf(oldRc), newRc.Name, replicasOf(newRc))
	}
	if r := replicasOf(oldRc); r != 0 {
		fmt.Fprintf(u.out, "Stopping %s replicas: %d -> %d\n", oldRc.Name, r, 0)
		if oldRc, err = u.scaleAndWait(ctx, oldRc.Name, 0); err != nil {
			return "", err
		}
	}
	if r := replicasOf(newRc); r != desired {
		fmt.Fprintf(u.out, "Scaling %s replicas: %d -> %d\n", newRc.Name, r, desired)
		if newRc, err = u.scaleAndWait(ctx, newRc.Name, desired); err != nil {
			return "", err
		}
	}
	if newRc, err = u.modify(ctx, newRc.Name, func(rc *corev1.ReplicationController) {
		rc.Annotations = withoutUpdateAnnotations(rc.Annotations)
	}); err != nil {
		return "", err
	}

	switch policy {
	case cleanupRename:
		fmt.Fprintf(u.out, "Update succeeded. Deleting old controller: %s\n", oldRc.Name)
		if err := u.deleteAndWait(ctx, oldRc.Name, metav1.DeletePropagationBackground); err != nil {
			return "", err
		}
		fmt.Fprintf(u.out, "Renaming %s to %s\n", newRc.Name, oldRc.Name)
		if err := u.rename(ctx, newRc, oldRc.Name); err != nil {
			return "", err
		}
		return oldRc.Name, nil
	default:
		fmt.Fprintf(u.out, "Update succeeded. Deleting %s\n", oldRc.Name)
		if err := u.deleteAndWait(ctx, oldRc.Name, metav1.DeletePropagationBackground); err != nil {
			return "", err
		}
		return newRc.Name, nil
	}
}

// rename creates a copy of rc named name and deletes rc, leaving its pods (which
// the copy's identical selector takes over).
func (u *updater) rename(ctx context.Context, rc *corev1.ReplicationController, name string) error {
	cp := rc.DeepCopy()
	cp.ObjectMeta = metav1.ObjectMeta{Name: name, Namespace: rc.Namespace, Labels: rc.Labels, Annotations: rc.Annotations}
	cp.Status = corev1.ReplicationControllerStatus{}
	// The RC under the old name is created after the hashed one is gone: its pods are
	// released by then (orphaned), so the new RC adopts them instead of starting
	// others while the hashed RC still controls them. The pods run on meanwhile.
	if err := u.deleteAndWait(ctx, rc.Name, metav1.DeletePropagationOrphan); err != nil {
		return err
	}
	if _, err := u.rcs.Create(ctx, cp, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create replication controller %q: %w", name, err)
	}
	return nil
}

// deleteAndWait deletes an RC and polls until it is gone (an orphaning delete is
// held until the pods are released).
func (u *updater) deleteAndWait(ctx context.Context, name string, policy metav1.DeletionPropagation) error {
	err := u.rcs.Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &policy})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete replication controller %q: %w", name, err)
	}
	return u.poll(ctx, fmt.Sprintf("replication controller %q to be deleted", name), func() (bool, error) {
		rc, err := u.getIfExists(ctx, name)
		return rc == nil, err
	})
}

// modify applies f to the current RC and updates it, retrying conflicts.
func (u *updater) modify(ctx context.Context, name string, f func(*corev1.ReplicationController)) (*corev1.ReplicationController, error) {
	var out *corev1.ReplicationController
	err := u.poll(ctx, fmt.Sprintf("update of replication controller %q", name), func() (bool, error) {
		rc, err := u.rcs.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, fmt.Errorf("get replication controller %q: %w", name, err)
		}
		f(rc)
		out, err = u.rcs.Update(ctx, rc, metav1.UpdateOptions{})
		if apierrors.IsConflict(err) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("update replication controller %q: %w", name, err)
		}
		return true, nil
	})
	return out, err
}

// scaleAndWait sets spec.replicas and polls until status.replicas matches it.
func (u *updater) scaleAndWait(ctx context.Context, name string, replicas int32) (*corev1.ReplicationController, error) {
	if _, err := u.modify(ctx, name, func(rc *corev1.ReplicationController) { rc.Spec.Replicas = ptrTo(replicas) }); err != nil {
		return nil, err
	}
	var out *corev1.ReplicationController
	err := u.poll(ctx, fmt.Sprintf("%s to have %d replicas", name, replicas), func() (bool, error) {
		rc, err := u.rcs.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, fmt.Errorf("get replication controller %q: %w", name, err)
		}
		out = rc
		return hasDesiredReplicas(rc), nil
	})
	return out, err
}

// errTimeout is returned when a poll reaches --timeout.
var errTimeout = errors.New("timed out")

// poll calls cond every interval until it is done, fails, or timeout passes.
func (u *updater) poll(ctx context.Context, what string, cond func() (bool, error)) error {
	deadline := u.clock.now().Add(u.timeout)
	for {
		done, err := cond()
		if err != nil || done {
			return err
		}
		if !u.clock.now().Before(deadline) {
			return fmt.Errorf("%w waiting for %s", errTimeout, what)
		}
		if err := u.clock.sleep(ctx, u.interval); err != nil {
			return err
		}
	}
}
