package kubelet

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubeactor/kubeactor/nodeagent/podsync"
	"github.com/kubeactor/kubeactor/nodeagent/runtime"
)

// pullState is the image pull back-off of one container.
type pullState struct {
	delay   time.Duration
	until   time.Time
	lastErr string // why the last pull failed: the back-off's message repeats it
}

const (
	pullBackoffInitial = 10 * time.Second
	pullBackoffMax     = 5 * time.Minute
)

// ensureImage makes c's image available as its pull policy asks. It returns nil when
// the container can be created, else its waiting state and when to try again.
//
// There is no registry on a machine without one: with policy Always, a failed pull
// falls back to the local image when there is one, so locally built images work
// with the defaults of the book's files.
func (a *Agent) ensureImage(ctx context.Context, w *worker, pod *corev1.Pod, c *corev1.Container) (*corev1.ContainerStateWaiting, time.Duration) {
	st := &w.st
	_, err := a.rt.InspectImage(ctx, c.Image)
	present := err == nil
	if err != nil && !runtime.IsNotFound(err) {
		return &corev1.ContainerStateWaiting{Reason: "ErrImageInspect", Message: err.Error()}, retrySoon
	}
	policy := c.ImagePullPolicy
	switch {
	case policy == corev1.PullNever && !present:
		msg := fmt.Sprintf("Container image %q is not present with pull policy of Never", c.Image)
		a.rec.Eventf(podsync.ContainerRef(pod, c.Name), corev1.EventTypeWarning, "ErrImageNeverPull", "%s", msg)
		return &corev1.ContainerStateWaiting{Reason: "ErrImageNeverPull", Message: msg}, 10 * time.Second
	case present && policy != corev1.PullAlways:
		a.rec.Eventf(podsync.ContainerRef(pod, c.Name), corev1.EventTypeNormal, "Pulled", "Container image %q already present on machine", c.Image)
		return nil, 0
	}
	now := a.now()
	if b, ok := st.pullBackoff[c.Name]; ok && now.Before(b.until) && !present {
		msg := fmt.Sprintf("Back-off pulling image %q", c.Image)
		a.rec.Eventf(podsync.ContainerRef(pod, c.Name), corev1.EventTypeNormal, "BackOff", "%s", msg)
		// As the kubelet does, the waiting message keeps the last pull's reason.
		return &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: msg + ": ErrImagePull: " + b.lastErr}, b.until.Sub(now)
	}
	a.rec.Eventf(podsync.ContainerRef(pod, c.Name), corev1.EventTypeNormal, "Pulling", "Pulling image %q", c.Image)
	pullStart := time.Now()
	err = a.pullImage(ctx, pod, c.Image)
	a.cfg.Metrics.ImagePulled(time.Since(pullStart), err)
	if err != nil {
		if present {
			a.rec.Eventf(podsync.ContainerRef(pod, c.Name), corev1.EventTypeNormal, "Pulled", "Container image %q already present on machine (pulling it failed: %v)", c.Image, err)
			return nil, 0
		}
		b := st.pullBackoff[c.Name]
		b.delay = min(max(2*b.delay, pullBackoffInitial), pullBackoffMax)
		b.until = now.Add(b.delay)
		b.lastErr = err.Error()
		st.pullBackoff[c.Name] = b
		msg := fmt.Sprintf("Failed to pull image %q: %v", c.Image, err)
		a.rec.Eventf(podsync.ContainerRef(pod, c.Name), corev1.EventTypeWarning, "Failed", "%s", msg)
		a.rec.Eventf(podsync.ContainerRef(pod, c.Name), corev1.EventTypeWarning, "Failed", "Error: ErrImagePull")
		return &corev1.ContainerStateWaiting{Reason: "ErrImagePull", Message: msg}, b.delay
	}
	delete(st.pullBackoff, c.Name)
	a.rec.Eventf(podsync.ContainerRef(pod, c.Name), corev1.EventTypeNormal, "Pulled", "Successfully pulled image %q", c.Image)
	return nil, 0
}

// pullImage pulls image with the credentials of the pod's image pull secrets that
// match its registry, trying each until one works, as the kubelet does; with none,
// it pulls without credentials. A secret that cannot be read is left out with a
// warning: the registry's refusal is then the pull's reason.
func (a *Agent) pullImage(ctx context.Context, pod *corev1.Pod, image string) error {
	var secrets []*corev1.Secret
	var missing []string
	for _, ref := range pod.Spec.ImagePullSecrets {
		if ref.Name == "" {
			continue
		}
		s, err := a.cs.CoreV1().Secrets(pod.Namespace).Get(ctx, ref.Name, getOpts)
		if err != nil {
			if !apierrors.IsNotFound(err) {
				a.log.WithError(err).WithField("pod", pod.Namespace+"/"+pod.Name).Warnf("get image pull secret %q", ref.Name)
			}
			missing = append(missing, ref.Name)
			continue
		}
		secrets = append(secrets, s)
	}
	if len(missing) > 0 {
		msg := fmt.Sprintf("Unable to retrieve some image pull secrets (%s); attempting to pull the image may not succeed.", strings.Join(missing, ", "))
		a.log.WithField("pod", pod.Namespace+"/"+pod.Name).Warn(msg)
		a.rec.Eventf(pod, corev1.EventTypeWarning, "FailedToRetrieveImagePullSecret", "%s", msg)
	}
	keyring, err := podsync.PullKeyring(secrets)
	if err != nil {
		return fmt.Errorf("image pull secrets: %w", err)
	}
	creds := keyring.Lookup(image)
	if len(creds) == 0 {
		return a.rt.PullImage(ctx, image, nil)
	}
	var msgs []string
	for i := range creds {
		err := a.rt.PullImage(ctx, image, &creds[i])
		if err == nil {
			return nil
		}
		if len(creds) == 1 {
			return err
		}
		msgs = append(msgs, err.Error())
	}
	return fmt.Errorf("each of %d matching credentials failed: %s", len(creds), strings.Join(msgs, "; "))
}
