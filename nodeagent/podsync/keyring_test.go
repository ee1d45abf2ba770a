package podsync

import (
	"encoding/base64"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeactor/kubeactor/nodeagent/runtime"
)

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func TestParseDockerConfigs(t *testing.T) {
	tests := []struct {
		name    string
		parse   func([]byte) (map[string]runtime.RegistryAuth, error)
		data    string
		want    map[string]runtime.RegistryAuth
		wantErr bool
	}{
		{
			name:  "dockercfg auth field",
			parse: ParseDockercfg,
			data:  `{"reg.example.com:5000": {"auth": "` + b64("alice:s3cr:et") + `", "email": "a@example.com"}}`,
			want:  map[string]runtime.RegistryAuth{"reg.example.com:5000": {Username: "alice", Password: "s3cr:et", Email: "a@example.com"}},
		},
		{
			name:  "dockercfg username and password",
			parse: ParseDockercfg,
			data:  `{"https://index.docker.io/v1/": {"username": "bob", "password": "pw"}}`,
			want:  map[string]runtime.RegistryAuth{"https://index.docker.io/v1/": {Username: "bob", Password: "pw"}},
		},
		{
			name:  "auth wins over username and password",
			parse: ParseDockercfg,
			data:  `{"r.io": {"auth": "` + b64("u1:p1") + `", "username": "u2", "password": "p2"}}`,
			want:  map[string]runtime.RegistryAuth{"r.io": {Username: "u1", Password: "p1"}},
		},
		{
			name:  "dockerconfigjson",
			parse: ParseDockerConfigJSON,
			data:  `{"auths": {"127.0.0.1:5000": {"auth": "` + b64("carol:pw") + `"}, "quay.io/team": {"username": "d", "password": "e"}}}`,
			want: map[string]runtime.RegistryAuth{
				"127.0.0.1:5000": {Username: "carol", Password: "pw"},
				"quay.io/team":   {Username: "d", Password: "e"},
			},
		},
		{name: "dockerconfigjson without auths", parse: ParseDockerConfigJSON, data: `{}`, want: map[string]runtime.RegistryAuth{}},
		{name: "not JSON", parse: ParseDockercfg, data: `{"r.io":`, wantErr: true},
		{name: "not base64", parse: ParseDockercfg, data: `{"r.io": {"auth": "%%%"}}`, wantErr: true},
		{name: "no colon in auth", parse: ParseDockerConfigJSON, data: `{"auths": {"r.io": {"auth": "` + b64("alice") + `"}}}`, wantErr: true},
		{name: "dockerconfigjson given to the dockercfg parser", parse: ParseDockercfg, data: `{"auths": {"r.io": {"auth": "` + b64("a:b") + `"}}}`, want: map[string]runtime.RegistryAuth{"auths": {}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.parse([]byte(tt.data))
			if tt.wantErr {
				if !errors.Is(err, ErrPullSecret) {
					t.Fatalf("err = %v, want ErrPullSecret", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func jsonSecret(name string, auths map[string]string) *corev1.Secret {
	var parts []string
	for reg, user := range auths {
		parts = append(parts, fmt.Sprintf("%q: {\"auth\": %q}", reg, b64(user+":pw-"+user)))
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Type:       corev1.SecretTypeDockerConfigJson,
		Data:       map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths": {` + strings.Join(parts, ",") + `}}`)},
	}
}

func cfgSecret(name string, auths map[string]string) *corev1.Secret {
	var parts []string
	for reg, user := range auths {
		parts = append(parts, fmt.Sprintf("%q: {\"username\": %q, \"password\": %q}", reg, user, "pw-"+user))
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Type:       corev1.SecretTypeDockercfg,
		Data:       map[string][]byte{corev1.DockerConfigKey: []byte(`{` + strings.Join(parts, ",") + `}`)},
	}
}

func TestKeyringLookup(t *testing.T) {
	secrets := []*corev1.Secret{
		jsonSecret("local", map[string]string{"127.0.0.1:5000": "local"}),
		cfgSecret("quay", map[string]string{"quay.io": "quay", "https://quay.io/v1/": "quayv1", "quay.io/team": "team"}),
		jsonSecret("hub", map[string]string{"https://index.docker.io/v1/": "hub"}),
		jsonSecret("glob", map[string]string{"*.example.com": "glob"}),
		jsonSecret("scheme", map[string]string{"http://plain.example.org:8080/v2/": "plain"}),
		// Not a pull secret: adds nothing.
		{ObjectMeta: metav1.ObjectMeta{Name: "opaque"}, Type: corev1.SecretTypeOpaque, Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte("{]")}},
		// A pull secret type without its key: adds nothing.
		{ObjectMeta: metav1.ObjectMeta{Name: "empty"}, Type: corev1.SecretTypeDockercfg},
	}
	k, err := PullKeyring(secrets)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		image string
		want  []string // usernames, in the order to try
	}{
		{"127.0.0.1:5000/kubeactor-test/busybox:pulltest", []string{"local"}},
		{"127.0.0.1:5000/busybox@sha256:0123", []string{"local"}},
		{"127.0.0.1:5001/busybox", nil}, // the port must match
		{"127.0.0.1/busybox", nil},      // and be absent when the key has none
		{"quay.io/team/app:v1", []string{"team", "quayv1", "quay"}},
		{"quay.io/teammate/app", []string{"quayv1", "quay"}}, // a path prefix is whole segments
		{"quay.io/team", []string{"team", "quayv1", "quay"}},
		{"busybox", []string{"hub"}},
		{"busybox:1.36", []string{"hub"}},
		{"library/busybox", []string{"hub"}},
		{"docker.io/library/busybox", []string{"hub"}},
		{"index.docker.io/someone/app:latest", []string{"hub"}},
		{"localhost/app", nil}, // localhost is a registry, not a Docker Hub user
		{"reg.example.com/app", []string{"glob"}},
		{"REG.Example.com/app", []string{"glob"}},
		{"a.reg.example.com/app", nil}, // a glob matches one part
		{"plain.example.org:8080/x/y", []string{"plain"}},
		{"gcr.io/project/app", nil},
		{"", nil},
	}
	for _, tt := range tests {
		t.Run(tt.image, func(t *testing.T) {
			var got []string
			for _, a := range k.Lookup(tt.image) {
				got = append(got, a.Username)
				if a.Password != "pw-"+a.Username {
					t.Errorf("%s: password %q", a.Username, a.Password)
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Lookup(%q) = %v, want %v", tt.image, got, tt.want)
			}
		})
	}
}

func TestKeyringOrderAndErrors(t *testing.T) {
	// Two secrets for the same registry: tried in the pod's order.
	k, err := PullKeyring([]*corev1.Secret{
		jsonSecret("first", map[string]string{"r.io": "first"}),
		cfgSecret("second", map[string]string{"https://r.io": "second"}),
	})
	if err != nil {
		t.Fatal(err)
	}
	got := k.Lookup("r.io/app:1")
	if len(got) != 2 || got[0].Username != "first" || got[1].Username != "second" {
		t.Errorf("Lookup = %+v, want first then second", got)
	}
	if got[0].ServerAddress != "r.io" || got[1].ServerAddress != "https://r.io" {
		t.Errorf("server addresses %q, %q", got[0].ServerAddress, got[1].ServerAddress)
	}
	// A nil keyring (no secrets) finds nothing.
	var none *Keyring
	if got := none.Lookup("busybox"); got != nil {
		t.Errorf("nil keyring: %v", got)
	}
	// A malformed pull secret is an error naming it.
	bad := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "broken"}, Type: corev1.SecretTypeDockerConfigJson,
		Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths": 3}`)}}
	if _, err := PullKeyring([]*corev1.Secret{bad}); !errors.Is(err, ErrPullSecret) || !strings.Contains(err.Error(), `"broken"`) {
		t.Errorf("err = %v, want ErrPullSecret naming the secret", err)
	}
}

// FuzzPullSecretParsers: the parsers never panic on any input; what they accept
// builds a keyring that answers lookups.
func FuzzPullSecretParsers(f *testing.F) {
	f.Add([]byte(`{"auths": {"127.0.0.1:5000": {"auth": "`+b64("a:b")+`"}}}`), "127.0.0.1:5000/x:1")
	f.Add([]byte(`{"https://index.docker.io/v1/": {"username": "u", "password": "p"}}`), "busybox")
	f.Add([]byte(`{"*.x.io/a/": {"auth": "!!"}}`), "q.x.io/a/b@sha256:1")
	f.Add([]byte(`{"auths": null}`), "[::1]:5000/x")
	f.Fuzz(func(t *testing.T, data []byte, image string) {
		for _, s := range []*corev1.Secret{
			{Type: corev1.SecretTypeDockercfg, Data: map[string][]byte{corev1.DockerConfigKey: data}},
			{Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{corev1.DockerConfigJsonKey: data}},
		} {
			k, err := PullKeyring([]*corev1.Secret{s})
			if err != nil {
				if !errors.Is(err, ErrPullSecret) {
					t.Fatalf("error %v is not ErrPullSecret", err)
				}
				continue
			}
			_ = k.Lookup(image)
		}
	})
}
