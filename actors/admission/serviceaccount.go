package admission

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// ServiceAccountReader reads service accounts and secrets (the actors'
// implementation reads the store).
type ServiceAccountReader interface {
	// ServiceAccount returns the account namespace/name; found is false when there
	// is none.
	ServiceAccount(namespace, name string) (sa *corev1.ServiceAccount, found bool, err error)
	// Secret returns the secret namespace/name; found is false when there is none.
	Secret(namespace, name string) (s *corev1.Secret, found bool, err error)
}

// The service account of pods that name none, and where its token is mounted.
const (
	DefaultServiceAccountName = "default"
	ServiceAccountMountPath   = "/var/run/secrets/kubernetes.io/serviceaccount"
	mirrorPodAnnotation       = "kubernetes.io/config.mirror"
)

// ServiceAccount is v1.0's plugin of that name, on pod creates: a pod that names no
// service account gets "default"; a pod whose account does not exist, or has no
// token secret yet, is refused (403, with v1.0's messages); the account's token
// secret is mounted read-only at ServiceAccountMountPath in every container that
// mounts nothing there; the account's imagePullSecrets are copied onto a pod that
// has none. As in v1.0 (LimitSecretReferences off) a pod may mount secrets its
// account does not list; mirror pods are left alone but may name no account and
// mount no secret.
type ServiceAccount struct{ accounts ServiceAccountReader }

var _ Plugin = (*ServiceAccount)(nil)

// NewServiceAccount returns the plugin.
func NewServiceAccount(accounts ServiceAccountReader) *ServiceAccount {
	return &ServiceAccount{accounts: accounts}
}

// Name is the plugin's name in the --admission-control list.
func (*ServiceAccount) Name() string { return "ServiceAccount" }

// Admit sets up a created pod's service account.
func (p *ServiceAccount) Admit(a *Attributes) error {
	if a.Resource != "pods" || a.Subresource != "" || a.Operation != Create || a.Object == nil {
		return nil
	}
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return apierrors.NewBadRequest("Resource was marked with kind Pod but was unable to be converted")
	}
	if _, mirror := pod.Annotations[mirrorPodAnnotation]; mirror {
		if pod.Spec.ServiceAccountName != "" {
			return refusef(a, "A mirror pod may not reference service accounts")
		}
		for _, v := range pod.Spec.Volumes {
			if v.Secret != nil {
				return refusef(a, "A mirror pod may not reference secrets")
			}
		}
		return nil
	}
	if pod.Spec.ServiceAccountName == "" {
		pod.Spec.ServiceAccountName = DefaultServiceAccountName
	}
	ns, name := a.Namespace, pod.Spec.ServiceAccountName
	sa, found, err := p.accounts.ServiceAccount(ns, name)
	switch {
	case err != nil:
		return refusef(a, "Error looking up service account %s/%s: %v", ns, name, err)
	case !found:
		return refusef(a, "Missing service account %s/%s", ns, name)
	}
	token, err := p.tokenOf(sa)
	switch {
	case err != nil:
		return refusef(a, "Error looking up service account token for %s/%s: %v", ns, name, err)
	case token == "":
		return refusef(a, "no API token found for service account %s/%s, retry after the token is automatically created and added to the service account", ns, name)
	}
	MountToken(pod, token)
	if len(pod.Spec.ImagePullSecrets) == 0 && len(sa.ImagePullSecrets) > 0 {
		pod.Spec.ImagePullSecrets = append([]corev1.LocalObjectReference(nil), sa.ImagePullSecrets...)
	}
	return nil
}

// tokenOf is the first secret sa lists that is one of its token secrets ("" if none).
func (p *ServiceAccount) tokenOf(sa *corev1.ServiceAccount) (string, error) {
	for _, ref := range sa.Secrets {
		s, found, err := p.accounts.Secret(sa.Namespace, ref.Name)
		if err != nil {
			return "", err
		}
		if !found || s.Type != corev1.SecretTypeServiceAccountToken || s.Annotations[corev1.ServiceAccountNameKey] != sa.Name {
			continue
		}
		if uid := s.Annotations[corev1.ServiceAccountUIDKey]; uid != "" && uid != string(sa.UID) {
			continue
		}
		return s.Name, nil
	}
	return "", nil
}

// MountToken mounts the token secret called token read-only at
// ServiceAccountMountPath in every container of pod that mounts nothing there, adding
// its volume (named after the secret) unless the pod has one of that secret already.
func MountToken(pod *corev1.Pod, token string) {
	volume, has := "", false
	names := map[string]bool{}
	for _, v := range pod.Spec.Volumes {
		names[v.Name] = true
		if v.Secret != nil && v.Secret.SecretName == token {
			volume, has = v.Name, true
			break
		}
	}
	if volume == "" {
		volume = token
		for i := 1; names[volume]; i++ {
			volume = fmt.Sprintf("%s-%d", token, i)
		}
	}
	needed := false
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		mounted := false
		for _, m := range c.VolumeMounts {
			if m.MountPath == ServiceAccountMountPath {
				mounted = true
				break
			}
		}
		if !mounted {
			c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: volume, ReadOnly: true, MountPath: ServiceAccountMountPath})
			needed = true
		}
	}
	if needed && !has {
		mode := corev1.SecretVolumeSourceDefaultMode
		pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: volume,
			VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: token, DefaultMode: &mode}}})
	}
}

// refusef is the 403 of a refused pod, worded as v1.0 worded it (capitalised).
func refusef(a *Attributes, format string, args ...any) error {
	return forbidden(a, fmt.Errorf(format, args...))
}
