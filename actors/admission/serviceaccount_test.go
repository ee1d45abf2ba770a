package admission

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// accountsFake serves accounts and secrets from maps keyed namespace/name.
type accountsFake struct {
	sas     map[string]*corev1.ServiceAccount
	secrets map[string]*corev1.Secret
}

func (f accountsFake) ServiceAccount(ns, name string) (*corev1.ServiceAccount, bool, error) {
	sa, ok := f.sas[ns+"/"+name]
	return sa, ok, nil
}

func (f accountsFake) Secret(ns, name string) (*corev1.Secret, bool, error) {
	s, ok := f.secrets[ns+"/"+name]
	return s, ok, nil
}

func tokenSecret(name, sa, uid string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "dev", Annotations: map[string]string{
		corev1.ServiceAccountNameKey: sa, corev1.ServiceAccountUIDKey: uid}}, Type: corev1.SecretTypeServiceAccountToken}
}

func TestServiceAccount(t *testing.T) {
	mode := corev1.SecretVolumeSourceDefaultMode
	tokenVolume := func(name, secret string) corev1.Volume {
		return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secret, DefaultMode: &mode}}}
	}
	mount := func(name string) corev1.VolumeMount {
		return corev1.VolumeMount{Name: name, ReadOnly: true, MountPath: ServiceAccountMountPath}
	}
	env := accountsFake{
		sas: map[string]*corev1.ServiceAccount{
			"dev/default": {ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: "dev", UID: "d1"},
				Secrets: []corev1.ObjectReference{{Name: "missing"}, {Name: "opaque"}, {Name: "default-token-aaaaa"}}},
			"dev/builder": {ObjectMeta: metav1.ObjectMeta{Name: "builder", Namespace: "dev", UID: "b1"},
				Secrets: []corev1.ObjectReference{{Name: "builder-token-bbbbb"}}, ImagePullSecrets: []corev1.LocalObjectReference{{Name: "registry"}}},
			"dev/fresh":  {ObjectMeta: metav1.ObjectMeta{Name: "fresh", Namespace: "dev", UID: "f1"}},
			"dev/reborn": {ObjectMeta: metav1.ObjectMeta{Name: "reborn", Namespace: "dev", UID: "r2"}, Secrets: []corev1.ObjectReference{{Name: "reborn-token-old"}}},
		},
		secrets: map[string]*corev1.Secret{
			"dev/opaque":              {ObjectMeta: metav1.ObjectMeta{Name: "opaque", Namespace: "dev"}, Type: corev1.SecretTypeOpaque},
			"dev/default-token-aaaaa": tokenSecret("default-token-aaaaa", "default", "d1"),
			"dev/builder-token-bbbbb": tokenSecret("builder-token-bbbbb", "builder", "b1"),
			"dev/reborn-token-old":    tokenSecret("reborn-token-old", "reborn", "r1"),
		},
	}
	pod := func(sa string, containers int) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "dev"}, Spec: corev1.PodSpec{ServiceAccountName: sa}}
		for i := 0; i < containers; i++ {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: string(rune('a' + i)), Image: "busybox"})
		}
		return p
	}
	withDefault := func() *corev1.Pod {
		p := pod("default", 2)
		p.Spec.Volumes = []corev1.Volume{tokenVolume("default-token-aaaaa", "default-token-aaaaa")}
		p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{mount("default-token-aaaaa")}
		p.Spec.Containers[1].VolumeMounts = []corev1.VolumeMount{mount("default-token-aaaaa")}
		return p
	}
	tests := []struct {
		name    string
		op      Operation
		sub     string
		in      *corev1.Pod
		want    *corev1.Pod // nil: unchanged
		code    int32
		message string
	}{
		{name: "default account and its token in every container", op: Create, in: pod("", 2), want: withDefault()},
		{name: "named account, its pull secrets copied", op: Create, in: pod("builder", 1), want: func() *corev1.Pod {
			p := pod("builder", 1)
			p.Spec.Volumes = []corev1.Volume{tokenVolume("builder-token-bbbbb", "builder-token-bbbbb")}
			p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{mount("builder-token-bbbbb")}
			p.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "registry"}}
			return p
		}()},
		{name: "pod's own pull secrets kept", op: Create, in: func() *corev1.Pod {
			p := pod("builder", 1)
			p.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "mine"}}
			return p
		}(), want: func() *corev1.Pod {
			p := pod("builder", 1)
			p.Spec.Volumes = []corev1.Volume{tokenVolume("builder-token-bbbbb", "builder-token-bbbbb")}
			p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{mount("builder-token-bbbbb")}
			p.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "mine"}}
			return p
		}()},
		{name: "a container mounting the path keeps its mount, the volume name is taken", op: Create, in: func() *corev1.Pod {
			p := pod("default", 2)
			p.Spec.Volumes = []corev1.Volume{{Name: "default-token-aaaaa", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
			p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "default-token-aaaaa", MountPath: ServiceAccountMountPath}}
			return p
		}(), want: func() *corev1.Pod {
			p := pod("default", 2)
			p.Spec.Volumes = []corev1.Volume{{Name: "default-token-aaaaa", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				tokenVolume("default-token-aaaaa-1", "default-token-aaaaa")}
			p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "default-token-aaaaa", MountPath: ServiceAccountMountPath}}
			p.Spec.Containers[1].VolumeMounts = []corev1.VolumeMount{mount("default-token-aaaaa-1")}
			return p
		}()},
		{name: "missing account", op: Create, in: pod("ghost", 1), code: 403,
			message: `Pod "web" is forbidden: Missing service account dev/ghost`},
		{name: "no token yet", op: Create, in: pod("fresh", 1), code: 403,
			message: `Pod "web" is forbidden: no API token found for service account dev/fresh, retry after the token is automatically created and added to the service account`},
		{name: "a token of an earlier account of that name is no token", op: Create, in: pod("reborn", 1), code: 403,
			message: `Pod "web" is forbidden: no API token found for service account dev/reborn, retry after the token is automatically created and added to the service account`},
		{name: "mounting an unlisted secret is allowed, as in v1.0", op: Create, in: func() *corev1.Pod {
			p := pod("fresh", 0)
			p.Spec.ServiceAccountName = "builder"
			p.Spec.Volumes = []corev1.Volume{{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "opaque"}}}}
			return p
		}(), want: func() *corev1.Pod {
			p := pod("builder", 0)
			p.Spec.Volumes = []corev1.Volume{{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "opaque"}}}}
			p.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "registry"}}
			return p
		}()},
		{name: "mirror pod left alone", op: Create, in: func() *corev1.Pod {
			p := pod("", 1)
			p.Annotations = map[string]string{mirrorPodAnnotation: "x"}
			return p
		}()},
		{name: "mirror pod naming an account", op: Create, in: func() *corev1.Pod {
			p := pod("default", 1)
			p.Annotations = map[string]string{mirrorPodAnnotation: "x"}
			return p
		}(), code: 403, message: `Pod "web" is forbidden: A mirror pod may not reference service accounts`},
		{name: "updates are not looked at", op: Update, in: pod("ghost", 1)},
		{name: "subresources are not looked at", op: Create, sub: "binding", in: pod("ghost", 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.in.DeepCopy()
			a := &Attributes{Operation: tt.op, Resource: "pods", Subresource: tt.sub, Namespace: "dev", Name: "web", Object: tt.in}
			err := NewServiceAccount(env).Admit(a)
			wantStatus(t, err, tt.code, tt.message)
			want := tt.want
			if want == nil {
				want = before
			}
			if tt.code == 0 && !reflect.DeepEqual(a.Object, want) {
				t.Fatalf("pod\n%+v\nwant\n%+v", a.Object.(*corev1.Pod).Spec, want.Spec)
			}
		})
	}
}
